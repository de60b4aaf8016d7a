// streamlike/unique_stream.hpp: the move-only owning stream, one pointer in size.
//
// For code that needs no sharing; the canonical stream_owner (CCCL 3.0, in CUDA 13.0, has no
// owning stream; cuda::stream arrives in 3.1). export_stream(std::move(u)) moves it into a
// shared_stream without creating a new stream. One pointer leaves no room to remember the
// stream's context, so a unique_stream must not outlive a cudaDeviceReset of its device (the
// handle is dead, as any raw handle is); a shared_stream is reset-safe.
#ifndef STREAMLIKE_UNIQUE_STREAM_HPP
#define STREAMLIKE_UNIQUE_STREAM_HPP

#include <streamlike/detail/export.hpp>
#include <streamlike/detail/owner_operations.hpp>
#include <streamlike/enable_stream_owner.hpp>
#include <streamlike/stream_options.hpp>
#include <streamlike/stream_view.hpp>

#include <optional>
#include <utility>

namespace streamlike {

/// Owns one stream alone and destroys it (on its own device, never throwing) when destroyed.
class STREAMLIKE_API unique_stream : public detail::owner_operations<unique_stream> {
public:
  // view(), get(), get_stream(), the conversions to the view types, is_capturing(), capture_info(),
  // is_done(), sync(), wait(), record() and `== view` come from detail::owner_operations (errors
  // name "unique_stream::<operation>").

  /// Empty: owns nothing.
  constexpr unique_stream() noexcept = default;
  unique_stream(const unique_stream&) = delete;
  unique_stream& operator=(const unique_stream&) = delete;
  unique_stream(unique_stream&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  unique_stream& operator=(unique_stream&& other) noexcept {
    unique_stream(std::move(other)).swap(*this);
    return *this;
  }
  ~unique_stream() {
    if (handle_ != nullptr) destroy(handle_);
  }

  /// A new stream (see stream_options). Throws as shared_stream::create does; takes the options
  /// by value as it does.
  [[nodiscard]] static unique_stream create(stream_options options = {});
  /// Takes ownership of a stream created elsewhere; the default streams cannot be owned.
  [[nodiscard]] static unique_stream adopt(cudaStream_t handle);

  /// Gives up ownership: the caller must destroy the returned handle. Empties *this.
  [[nodiscard]] cudaStream_t release() noexcept { return std::exchange(handle_, nullptr); }

  /// False when empty (default-constructed, moved-from or released).
  [[nodiscard]] explicit operator bool() const noexcept { return handle_ != nullptr; }

  void swap(unique_stream& other) noexcept { std::swap(handle_, other.handle_); }
  friend void swap(unique_stream& a, unique_stream& b) noexcept { a.swap(b); }

private:
  friend class detail::owner_operations<unique_stream>;
  static constexpr const char type_name[] = "unique_stream";
  explicit unique_stream(cudaStream_t handle) noexcept : handle_(handle) {}
  // Destroys the stream on its own device; never throws (errors, including a runtime that is
  // unloading, are ignored: there is nothing left to release).
  static void destroy(cudaStream_t handle) noexcept;
  [[noreturn]] static void throw_empty(const char* what);
  // One pointer in size: the owner remembers nothing but the handle.
  [[nodiscard]] static std::optional<int> known_device() noexcept { return std::nullopt; }

  cudaStream_t handle_ = nullptr;
};

template <>
inline constexpr bool enable_stream_owner<unique_stream> = true;

static_assert(sizeof(unique_stream) == sizeof(cudaStream_t), "unique_stream is one pointer, its base takes no room");

} // namespace streamlike

#endif // STREAMLIKE_UNIQUE_STREAM_HPP

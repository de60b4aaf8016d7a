// streamlike/unique_stream.hpp: the move-only owning stream, one pointer in size.
//
// For code that needs no sharing; the canonical stream_owner. One pointer leaves no room to
// remember the stream's context, so a unique_stream must not outlive a cudaDeviceReset of its
// device (the handle is dead, as any raw handle is); export_stream(std::move(u)) moves it into a
// shared_stream, which is reset-safe. CCCL 3.0 (CUDA 13.0) has no owning
// stream at all (cuda::stream arrives in 3.1). export_stream(std::move(u)) turns it into a
// shared_stream without creating a new stream.
#ifndef STREAMLIKE_UNIQUE_STREAM_HPP
#define STREAMLIKE_UNIQUE_STREAM_HPP

#include <streamlike/detail/export.hpp>
#include <streamlike/enable_stream_owner.hpp>
#include <streamlike/stream_options.hpp>
#include <streamlike/stream_view.hpp>

#include <utility>

namespace streamlike {

namespace detail {
/// Destroys a stream on its own device; never throws (errors, including a runtime that is
/// unloading or a device that was reset, are ignored: there is nothing left to release).
STREAMLIKE_API void destroy_stream(cudaStream_t handle) noexcept;
} // namespace detail

class STREAMLIKE_API unique_stream {
public:
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
    if (handle_ != nullptr) detail::destroy_stream(handle_);
  }

  /// A new stream (see stream_options). Throws as shared_stream::create does.
  [[nodiscard]] static unique_stream create(const stream_options& options = {});
  /// Takes ownership of a stream created elsewhere; the default streams cannot be owned.
  [[nodiscard]] static unique_stream adopt(cudaStream_t handle);

  /// Gives up ownership: the caller must destroy the returned handle. Empties *this.
  [[nodiscard]] cudaStream_t release() noexcept { return std::exchange(handle_, nullptr); }

  [[nodiscard]] explicit operator bool() const noexcept { return handle_ != nullptr; }

  /// The view; throws streamlike::error on an empty unique_stream (never the default stream by accident).
  [[nodiscard]] stream_view view() const {
    if (handle_ == nullptr) [[unlikely]] throw_empty("view");
    return stream_view{handle_};
  }
  [[nodiscard]] cudaStream_t get() const {
    if (handle_ == nullptr) [[unlikely]] throw_empty("get");
    return handle_;
  }
  /// The get_stream member route, on lvalues only: a temporary's view would dangle.
  /// (CCCL's cuda::get_stream takes its argument as const& and so still accepts a temporary.)
  [[nodiscard]] stream_view get_stream() const& { return view(); }
  void get_stream() && = delete;
  void get_stream() const&& = delete;

  void swap(unique_stream& other) noexcept { std::swap(handle_, other.handle_); }
  friend void swap(unique_stream& a, unique_stream& b) noexcept { a.swap(b); }

private:
  explicit unique_stream(cudaStream_t handle) noexcept : handle_(handle) {}
  [[noreturn]] static void throw_empty(const char* what);

  cudaStream_t handle_ = nullptr;
};

template <>
inline constexpr bool enable_stream_owner<unique_stream> = true;

} // namespace streamlike

#endif // STREAMLIKE_UNIQUE_STREAM_HPP

// streamlike/unique_stream.hpp: the move-only owning stream, one pointer in size.
//
// For code that needs no sharing; the canonical stream_owner (CCCL 3.0, in CUDA 13.0, has no
// owning stream; cuda::stream arrives in 3.1). export_stream(std::move(u)) moves it into a
// shared_stream without creating a new stream. One pointer leaves no room to remember the
// stream's context, so a unique_stream must not outlive a cudaDeviceReset of its device (the
// handle is dead, as any raw handle is); a shared_stream is reset-safe.
#ifndef STREAMLIKE_UNIQUE_STREAM_HPP
#define STREAMLIKE_UNIQUE_STREAM_HPP

#include <streamlike/capture_state.hpp>
#include <streamlike/detail/export.hpp>
#include <streamlike/enable_stream_owner.hpp>
#include <streamlike/event.hpp>
#include <streamlike/get_stream.hpp>
#include <streamlike/stream_like.hpp>
#include <streamlike/stream_options.hpp>
#include <streamlike/stream_view.hpp>

#include <concepts>
#include <cstddef>
#include <utility>

namespace streamlike {

/// Owns one stream alone and destroys it (on its own device, never throwing) when destroyed.
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
    if (handle_ != nullptr) destroy(handle_);
  }

  /// A new stream (see stream_options). Throws as shared_stream::create does.
  [[nodiscard]] static unique_stream create(const stream_options& options = {});
  /// Takes ownership of a stream created elsewhere; the default streams cannot be owned.
  [[nodiscard]] static unique_stream adopt(cudaStream_t handle);

  /// Gives up ownership: the caller must destroy the returned handle. Empties *this.
  [[nodiscard]] cudaStream_t release() noexcept { return std::exchange(handle_, nullptr); }

  /// False when empty (default-constructed, moved-from or released).
  [[nodiscard]] explicit operator bool() const noexcept { return handle_ != nullptr; }

  /// The view; throws streamlike::error on an empty unique_stream (never the default stream by accident).
  [[nodiscard]] stream_view view() const {
    if (handle_ == nullptr) [[unlikely]]
      throw_empty("view");
    return stream_view{handle_};
  }
  /// The raw handle, still owned; throws streamlike::error on an empty unique_stream.
  [[nodiscard]] cudaStream_t get() const {
    if (handle_ == nullptr) [[unlikely]]
      throw_empty("get");
    return handle_;
  }
  /// The get_stream member route, on lvalues only: a temporary's view would dangle.
  /// (CCCL's cuda::get_stream takes its argument as const& and so still accepts a temporary.)
  [[nodiscard]] stream_view get_stream() const& { return view(); }
  void get_stream() && = delete;
  void get_stream() const&& = delete;

  // Conversions, as rmm::cuda_stream has them: implicit to the view types on lvalues, so an owner
  // passes wherever CCCL (cuda::launch, a cuda::stream_ref parameter) or streamlike takes a view;
  // refused on rvalues, as get_stream refuses them (a temporary's view would dangle). Each throws
  // the "empty" error of view() on an empty unique_stream. Through them get_stream reaches an lvalue
  // owner by its handle route (route 2), which gives the same view as the member get_stream()
  // and, like it, is not noexcept.

  /// The view (implicit, lvalues only).
  operator stream_view() const& { return view(); }
  /// A cuda::stream_ref of the stream (implicit, lvalues only): cuda::launch(owner, ...) compiles.
  operator cuda::stream_ref() const& { return cuda::stream_ref{view().get()}; }
  /// The raw handle, still owned (explicit, as rmm::cuda_stream's: an implicit one would hand the
  /// handle to any cudaStream_t or void* parameter unnoticed).
  explicit operator cudaStream_t() const& { return get(); }
  operator stream_view() && = delete;
  operator stream_view() const&& = delete;
  operator cuda::stream_ref() && = delete;
  operator cuda::stream_ref() const&& = delete;
  explicit operator cudaStream_t() && = delete;
  explicit operator cudaStream_t() const&& = delete;

  // No query(cuda::get_stream_t): CCCL's cuda::get_stream finds get_stream() and query() side by
  // side (a type with both is an ambiguous call there) and requires query to be noexcept, which an
  // owner that may be empty cannot be (README, "Owning streams").

  // The stream's operations, with stream_view's semantics (this type's view().sync() and so on,
  // except that errors name this type). Each throws streamlike::error naming
  // "unique_stream::<operation>" on an empty unique_stream or a failed CUDA call.

  /// True while the stream is in a CUDA graph capture, active or invalidated (cudaStreamIsCapturing).
  [[nodiscard]] bool is_capturing() const;
  /// The stream's capture status, capture id and the graph being built (cudaStreamGetCaptureInfo).
  [[nodiscard]] capture_state capture_info() const;
  /// True once all work queued so far has completed (cudaStreamQuery). Refused while capturing.
  [[nodiscard]] bool is_done() const;
  /// Blocks the calling thread until all work queued so far has completed (cudaStreamSynchronize).
  /// Refused while capturing.
  void sync() const;
  /// Work queued on this stream from now on waits for `event` (cudaStreamWaitEvent).
  void wait(cudaEvent_t event) const;
  /// Work queued on this stream from now on waits for the work already queued on `producer`, any
  /// stream_like object (an owner as an lvalue), also across devices; a no-op when both are the
  /// same stream. No event is created per call (see ordering.hpp).
  template <class Producer>
    requires stream_like<Producer>
  void wait(Producer&& producer) const {
    if (handle_ == nullptr) [[unlikely]]
      throw_empty("wait");
    wait_for(streamlike::get_stream(std::forward<Producer>(producer)));
  }
  // Neither 0 nor nullptr is an event or a stream.
  template <class Integer>
    requires std::integral<Integer>
  void wait(Integer) const = delete;
  void wait(std::nullptr_t) const = delete;
  /// A new event holding the work queued on this stream so far: as streamlike::record(*this,
  /// options) (event.hpp), created on the stream's device unless options.device says otherwise.
  [[nodiscard]] event record(const event_options& options = {}) const;

  /// An owner equals a view (stream_view, cuda::stream_ref, cudaStream_t) of the stream it holds;
  /// an empty one equals none. Declared here, for exactly those types, so that `owner == view`
  /// and `view == owner` are never ambiguous between the view types' own comparisons.
  template <class View>
    requires(std::same_as<View, stream_view> || std::same_as<View, cuda::stream_ref> ||
             std::same_as<View, cudaStream_t>)
  [[nodiscard]] friend bool operator==(const unique_stream& owner, const View& view) noexcept {
    return owner.handle_ != nullptr && owner.handle_ == stream_view{view}.get();
  }

  void swap(unique_stream& other) noexcept { std::swap(handle_, other.handle_); }
  friend void swap(unique_stream& a, unique_stream& b) noexcept { a.swap(b); }

private:
  explicit unique_stream(cudaStream_t handle) noexcept : handle_(handle) {}
  // Destroys the stream on its own device; never throws (errors, including a runtime that is
  // unloading, are ignored: there is nothing left to release).
  static void destroy(cudaStream_t handle) noexcept;
  [[noreturn]] static void throw_empty(const char* what);
  void wait_for(stream_view producer) const;

  cudaStream_t handle_ = nullptr;
};

template <>
inline constexpr bool enable_stream_owner<unique_stream> = true;

} // namespace streamlike

#endif // STREAMLIKE_UNIQUE_STREAM_HPP

// streamlike/detail/owner_operations.hpp: what shared_stream and unique_stream offer alike, written
// once: the view, the handle, the get_stream member route, the conversions to the view types (and
// their refusal on rvalues), the stream's operations and the comparison with a view.
//
// A CRTP base with no data, so an owner keeps its layout (an empty base takes no room). Each owner
// keeps what differs: how it is made (create, adopt), what it knows (cached facts), how it ends
// (destruction, release, reset). It gives this base, as a friend:
//   static constexpr const char type_name[]   its name, for errors ("unique_stream")
//   explicit operator bool() const noexcept   false when empty
//   cudaStream_t handle_                      the handle it holds
//   static void throw_empty(const char*)      [[noreturn]]: the "empty" error naming the operation
//   std::optional<int> known_device() const noexcept   the stream's device if known without a CUDA call
#ifndef STREAMLIKE_DETAIL_OWNER_OPERATIONS_HPP
#define STREAMLIKE_DETAIL_OWNER_OPERATIONS_HPP

#include <streamlike/capture_state.hpp>
#include <streamlike/detail/export.hpp>
#include <streamlike/detail/stream_operations.hpp>
#include <streamlike/event.hpp>
#include <streamlike/get_stream.hpp>
#include <streamlike/stream_like.hpp>
#include <streamlike/stream_view.hpp>

#include <concepts>
#include <cstddef>
#include <optional>
#include <utility>

namespace streamlike::detail {

/// The refused conversions of a temporary owner, in a class whose name says what to write instead:
/// a deleted function is reported by its qualified name (g++: "use of deleted function", nvcc:
/// "cannot be referenced -- it is a deleted function"), and deleted, not failing a static_assert,
/// they keep std::is_convertible false. owner_operations brings them in with using-declarations.
struct temporary_owner_has_no_view_name_it_or_call_export_stream_std_move_owner {
  // Each line says it again, for compilers that show the declaration (clang++ names no class).
  operator stream_view() && = delete;                // would dangle: name the owner, or export_stream(std::move(owner))
  operator stream_view() const&& = delete;           // would dangle: name the owner, or export_stream(std::move(owner))
  operator cuda::stream_ref() && = delete;           // would dangle: name the owner, or export_stream(std::move(owner))
  operator cuda::stream_ref() const&& = delete;      // would dangle: name the owner, or export_stream(std::move(owner))
  explicit operator cudaStream_t() && = delete;      // would dangle: name the owner, or export_stream(std::move(owner))
  explicit operator cudaStream_t() const&& = delete; // would dangle: name the owner, or export_stream(std::move(owner))
};

/// The operations an owning stream shares with stream_view (see the file comment).
template <class Derived>
class STREAMLIKE_API owner_operations
    : private temporary_owner_has_no_view_name_it_or_call_export_stream_std_move_owner {
  using refusals = temporary_owner_has_no_view_name_it_or_call_export_stream_std_move_owner;

public:
  /// The view; throws streamlike::error on an empty owner (never the default stream by accident).
  [[nodiscard]] stream_view view() const { return stream_view{checked_handle("view")}; }
  /// The raw handle, still owned; throws streamlike::error on an empty owner.
  [[nodiscard]] cudaStream_t get() const { return checked_handle("get"); }

  /// The get_stream member route (also how CCCL's cuda::get_stream accepts an owner), on lvalues
  /// only: a temporary's view would dangle (for a shared_stream, a temporary may hold the last
  /// reference). CCCL's cuda::get_stream takes its argument as const& and so still accepts one.
  [[nodiscard]] stream_view get_stream() const& { return view(); }
  void get_stream() && = delete;
  void get_stream() const&& = delete;

  // Conversions, as rmm::cuda_stream has them: implicit to the view types on lvalues, so an owner
  // passes wherever CCCL (cuda::launch, a cuda::stream_ref parameter) or streamlike takes a view;
  // refused on rvalues, as get_stream refuses them (a temporary's view would dangle). Each throws
  // the "empty" error of view() on an empty owner. Through them get_stream reaches an lvalue owner
  // by its handle route (route 2), which gives the same view as the member get_stream() and, like
  // it, is not noexcept.

  /// The view (implicit, lvalues only).
  operator stream_view() const& { return view(); }
  /// A cuda::stream_ref of the stream (implicit, lvalues only): cuda::launch(owner, ...) compiles.
  operator cuda::stream_ref() const& { return cuda::stream_ref{checked_handle("view")}; }
  /// The raw handle, still owned (explicit, as rmm::cuda_stream's: an implicit one would hand the
  /// handle to any cudaStream_t or void* parameter unnoticed).
  explicit operator cudaStream_t() const& { return get(); }
  // On rvalues: refused, by the name of the class that declares them.
  using refusals::operator stream_view;
  using refusals::operator cuda::stream_ref;
  using refusals::operator cudaStream_t;

  // No query(cuda::get_stream_t): CCCL's cuda::get_stream finds get_stream() and query() side by
  // side (a type with both is an ambiguous call there) and requires query to be noexcept, which an
  // owner that may be empty cannot be (docs/owners.md).

  // The stream's operations, with stream_view's semantics (this type's view().sync() and so on,
  // except that errors name the owner's type). Each throws streamlike::error naming
  // "<owner>::<operation>" on an empty owner or a failed CUDA call.

  /// True while the stream is in a CUDA graph capture, active or invalidated (cudaStreamIsCapturing).
  [[nodiscard]] bool is_capturing() const {
    return stream_operations::is_capturing(checked_handle("is_capturing"), Derived::type_name);
  }
  /// The stream's capture status, capture id and the graph being built (cudaStreamGetCaptureInfo).
  [[nodiscard]] capture_state capture_info() const {
    return stream_operations::capture_info(checked_handle("capture_info"), Derived::type_name);
  }
  /// True once all work queued so far has completed (cudaStreamQuery). Refused while capturing.
  [[nodiscard]] bool is_done() const {
    return stream_operations::is_done(checked_handle("is_done"), Derived::type_name);
  }
  /// Blocks the calling thread until all work queued so far has completed (cudaStreamSynchronize).
  /// Refused while capturing.
  void sync() const { stream_operations::sync(checked_handle("sync"), Derived::type_name); }
  /// Work queued on this stream from now on waits for `event` (cudaStreamWaitEvent).
  void wait(cudaEvent_t event) const { stream_operations::wait(checked_handle("wait"), event, Derived::type_name); }
  /// Work queued on this stream from now on waits for the work already queued on `producer`, any
  /// stream_like object (an owner as an lvalue), also across devices; a no-op when both are the
  /// same stream. No event is created per call (see ordering.hpp).
  template <class Producer>
    requires stream_like<Producer>
  void wait(Producer&& producer) const {
    const cudaStream_t consumer = checked_handle("wait");
    const unsigned long long context = stream_operations::known_context_id_of(producer);
    stream_operations::wait_known_context(consumer, streamlike::get_stream(std::forward<Producer>(producer)).get(),
                                          context, Derived::type_name);
  }
  // Neither 0 nor nullptr is an event or a stream.
  template <class Integer>
    requires std::integral<Integer>
  void wait(Integer) const = delete;
  void wait(std::nullptr_t) const = delete;
  /// A new event holding the work queued on this stream so far: as streamlike::record(*this,
  /// options) (event.hpp), created on the stream's device unless options.device says otherwise.
  [[nodiscard]] event record(const event_options& options = {}) const {
    const cudaStream_t handle = checked_handle("record");
    event_options on_device = options;
    // A device the owner knows spares a CUDA call; otherwise the record asks.
    if (!on_device.device) on_device.device = self().known_device();
    return stream_operations::record(handle, on_device, Derived::type_name);
  }

  /// An owner equals a view (stream_view, cuda::stream_ref, cudaStream_t) of the stream it holds;
  /// an empty one equals none. Declared here, for exactly those types, so that `owner == view`
  /// and `view == owner` are never ambiguous between the view types' own comparisons.
  template <class View>
    requires(std::same_as<View, stream_view> || std::same_as<View, cuda::stream_ref> ||
             std::same_as<View, cudaStream_t>)
  [[nodiscard]] friend bool operator==(const Derived& owner, const View& view) noexcept {
    return static_cast<bool>(owner) && handle_of(owner) == stream_view{view}.get();
  }

protected:
  owner_operations() = default;

private:
  [[nodiscard]] const Derived& self() const noexcept { return static_cast<const Derived&>(*this); }
  [[nodiscard]] static cudaStream_t handle_of(const Derived& owner) noexcept { return owner.handle_; }
  [[nodiscard]] cudaStream_t checked_handle(const char* operation) const {
    if (!static_cast<bool>(self())) [[unlikely]]
      Derived::throw_empty(operation);
    return self().handle_;
  }
};

} // namespace streamlike::detail

#endif // STREAMLIKE_DETAIL_OWNER_OPERATIONS_HPP

// streamlike/retain_until_done.hpp: keep any object alive until the GPU is done with it.
//
// What torch's Tensor.record_stream does for tensors, for any object: a buffer the stream's
// queued kernels read, a std::shared_ptr, a shared_stream, a Python object (through the bridge).
//
//   streamlike::retain_until_done(stream, std::move(staging_buffer));  // freed once the work ran
//
// On a stream that runs work, the object is destroyed after the work queued on the stream so far
// has finished: a host function queued on the stream hands it to a streamlike thread, which
// destroys it (never CUDA's callback thread: CUDA forbids CUDA calls there, and destructors make
// them). On a stream that is capturing a CUDA graph, the object becomes a CUDA user object
// retained by the graph being built: it is destroyed after the graph and every executable graph
// instantiated from it have been destroyed and their launches have finished.
#ifndef STREAMLIKE_RETAIN_UNTIL_DONE_HPP
#define STREAMLIKE_RETAIN_UNTIL_DONE_HPP

#include <streamlike/detail/export.hpp>
#include <streamlike/get_stream.hpp>
#include <streamlike/stream_like.hpp>
#include <streamlike/stream_view.hpp>

#include <memory>
#include <type_traits>
#include <utility>

namespace streamlike {

namespace detail {

/// What retain_until_done holds: any object, destroyed through a virtual destructor by the
/// library's release thread.
class retained_object {
public:
  retained_object() = default;
  retained_object(const retained_object&) = delete;
  retained_object& operator=(const retained_object&) = delete;
  virtual ~retained_object() = default;
};

template <class T>
class retained_value final : public retained_object {
public:
  template <class U>
  explicit retained_value(U&& value) : value_(std::forward<U>(value)) {}

private:
  T value_;
};

/// Queues the release of `object` on `stream` (src/retain_until_done.cpp).
STREAMLIKE_API void retain_until_done(stream_view stream, std::unique_ptr<retained_object> object);

/// Blocks until every object that CUDA has already handed back (its host function ran, or its
/// user object was released) has been destroyed. After a stream synchronize this covers the
/// objects retained on that stream; user-object releases arrive when CUDA sends them. For tests
/// and orderly shutdown.
STREAMLIKE_API void flush_released_objects();

} // namespace detail

/// Moves (or copies) `object` into streamlike, which destroys it only once the GPU is done with
/// it (see the file comment): after the work queued on `stream` so far has finished, or, on a
/// capturing stream, after every graph made from the capture is gone. Destruction happens on a
/// streamlike thread, where the object's destructor may make CUDA calls; it must not throw.
/// Throws streamlike::error if CUDA refuses the host function or the user object (an invalid
/// stream, a context with a sticky error, an invalidated capture: streams whose queued work will
/// not run as queued); the object is then destroyed before the exception leaves.
template <class S, class T>
  requires stream_like<S>
void retain_until_done(S&& stream, T&& object) {
  using held = std::remove_cvref_t<T>;
  static_assert(std::is_nothrow_destructible_v<held>,
                "streamlike::retain_until_done: the object is destroyed on a streamlike thread, where an exception "
                "could go nowhere; its destructor must not throw.");
  static_assert(std::is_constructible_v<held, T&&>,
                "streamlike::retain_until_done: the object is moved (an rvalue) or copied (an lvalue) into "
                "streamlike; this one can be neither.");
  const stream_view view = streamlike::get_stream(std::forward<S>(stream));
  detail::retain_until_done(view, std::make_unique<detail::retained_value<held>>(std::forward<T>(object)));
}

} // namespace streamlike

#endif // STREAMLIKE_RETAIN_UNTIL_DONE_HPP

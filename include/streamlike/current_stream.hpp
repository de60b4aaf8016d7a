// streamlike/current_stream.hpp: the stream the caller meant, one answer across frameworks.
//
//   void my_op(float* data) {
//     auto s = streamlike::current_stream(); // inside torch.cuda.stream(x): x; inside
//     launch(data, s);                       // streamlike::scoped_current_stream{y}: y
//   }
//
//   {
//     streamlike::scoped_current_stream guard{stream}; // current in streamlike, torch, tvm-ffi, ...
//     my_library_call();                                // finds `stream` whichever framework it asks
//   }                                                   // each one restored (exceptions too)
//
// Every framework keeps its own current stream per host thread and device. streamlike asks them
// through providers (streamlike/current_stream_providers.hpp, the C interface in
// streamlike/c/current_stream_provider.h): built in are streamlike's own thread-local, torch and
// tvm-ffi, looked up in the already-loaded framework (no link-time dependency; a framework not
// loaded is not a provider). docs/current-stream.md has the rule, the providers and the limits.
//
// Capture-safe: neither current_stream() nor scoped_current_stream makes a CUDA call that a graph
// capture forbids; under capture they return or set the capturing stream without touching it.
#ifndef STREAMLIKE_CURRENT_STREAM_HPP
#define STREAMLIKE_CURRENT_STREAM_HPP

#include <streamlike/detail/export.hpp>
#include <streamlike/get_stream.hpp>
#include <streamlike/stream_like.hpp>
#include <streamlike/stream_view.hpp>

#include <new>
#include <optional>
#include <utility>

namespace streamlike {

/// `device` argument meaning "the calling thread's current CUDA device" (cudaGetDevice).
inline constexpr int current_device = -1;

/// Whether `a` and `b` are one stream as current streams are compared: the handle 0 and
/// cudaStreamLegacy both name the legacy default stream (torch and CuPy call it 0, the casters
/// read `__cuda_stream__`'s `(0, 0)` as cudaStreamLegacy), while cudaStreamPerThread stays a
/// stream of its own. What current_stream_conflicts() and the current-stream check compare with.
[[nodiscard]] inline bool same_current_stream(stream_view a, stream_view b) noexcept {
  const auto canonical = [](stream_view s) noexcept {
    return s == stream_view::legacy_default() ? cudaStream_t{} : s.get();
  };
  return canonical(a) == canonical(b);
}

/// The calling thread's current stream on `device` (default: its current device). Providers are
/// asked in priority order (torch, tvm-ffi, then any registered provider by its priority,
/// streamlike's own thread-local last). Inside a scope (the innermost scoped_current_stream of
/// this thread on `device`): the first provider whose answer changed after the scope began (a
/// framework's own block opened inside it) answers, whatever it names; none changed, the scope's
/// stream. Outside any scope: the first provider naming a stream other than a default stream;
/// when every provider names a default stream, the first answer; with no answer at all, the
/// handle 0 (the default stream of the translation unit that launches on it). No CUDA call beyond
/// reading the current device for the default device (the driver's device of the current
/// context, else cudaGetDevice), and not that where no provider but streamlike's own is
/// registered and no scope of this thread names a stream on any device (the answer is 0 on every
/// device; read once first, so that a process without a driver still hears so). Throws
/// streamlike::error when the current device cannot be read (no driver), and
/// std::invalid_argument for a device below -1 or one the process does not have (naming the range
/// 0..count-1).
[[nodiscard]] STREAMLIKE_API stream_view current_stream(int device = current_device);

/// current_stream(device)'s answer for code that may neither throw nor call CUDA on its path (a
/// profiler's callback, which is handed the device of the call's context): the same rule and
/// providers, but `device` is taken as given, one the process has (not checked against the device
/// count: a device the process lacks gets what the providers answer for it, the handle 0 where none
/// does), no current device is read, and nothing throws. std::nullopt for a device below 0
/// (current_device among them: reading it is a CUDA call).
///
///   if (const auto s = streamlike::current_stream(context_device, std::nothrow)) use(*s);
[[nodiscard]] STREAMLIKE_API std::optional<stream_view> current_stream(int device, std::nothrow_t) noexcept;

/// Makes a stream current for the calling thread and the stream's device in streamlike and in
/// every provider that can set it, and restores each provider's previous stream on destruction,
/// also when an exception leaves the scope (in reverse order). Not copyable, not movable: a scope.
///
/// The device is the stream's (stream_view::device(), capture-safe), the current device for the
/// handles of the default streams, or the one given, which must exist (std::invalid_argument names
/// the range) and be the stream's own unless it is a default stream (std::invalid_argument). The
/// thread's current device is left as it is, entering and leaving. If a provider fails to set
/// the stream, the providers already set are restored and streamlike::error names the provider.
/// A provider that cannot set it on this thread now (STREAMLIKE_CURRENT_STREAM_UNAVAILABLE, e.g.
/// CuPy's without the Python GIL) is skipped.
///
/// A scope belongs to the thread that made it. One destroyed on another thread (a heap-allocated
/// scope handed over) is not restored there and not freed: it stays open on the thread that made
/// it, its stream current there, and a message on stderr says to end a scope on the thread that
/// began it.
class STREAMLIKE_API scoped_current_stream {
public:
  /// Makes `stream` (any stream_like object; an owner as an lvalue, which must outlive the scope)
  /// current on its device.
  template <class S>
    requires stream_like<S>
  explicit scoped_current_stream(S&& stream)
      : scoped_current_stream(streamlike::get_stream(std::forward<S>(stream)), current_device, true) {}
  /// Makes `stream` current on `device`.
  template <class S>
    requires stream_like<S> scoped_current_stream(S&& stream, int device)
        : scoped_current_stream(streamlike::get_stream(std::forward<S>(stream)), device, false) {}

    scoped_current_stream(const scoped_current_stream&) = delete;
    scoped_current_stream& operator=(const scoped_current_stream&) = delete;
    ~scoped_current_stream();

    /// The stream made current.
    [[nodiscard]] stream_view stream() const noexcept { return stream_; }
    /// The device it was made current on.
    [[nodiscard]] int device() const noexcept { return device_; }

  private:
    scoped_current_stream(stream_view stream, int device, bool device_of_stream);

    stream_view stream_;
    int device_ = -1;
    void* saved_ = nullptr; // what each provider had before (src/current_stream.cpp)
};

} // namespace streamlike

#endif // STREAMLIKE_CURRENT_STREAM_HPP

// streamlike/current_stream_check.hpp: the opt-in check that finds launches on the wrong stream.
//
// Off by default. On with STREAMLIKE_CHECK_CURRENT_STREAM=1 in the environment (read when the
// library loads) or set_current_stream_check(true) (Python: streamlike.set_current_stream_check).
// While on, streamlike's entry points that are given a stream (the Python casters' stream
// arguments, check_current_stream() in your own code) compare it with current_stream() of its
// device and report, once per call site, when they differ: the stream was not the one the
// framework current on that thread would use. The hook is one relaxed load while off.
#ifndef STREAMLIKE_CURRENT_STREAM_CHECK_HPP
#define STREAMLIKE_CURRENT_STREAM_CHECK_HPP

#include <streamlike/detail/export.hpp>
#include <streamlike/stream_view.hpp>

#include <atomic>

namespace streamlike {

/// What a report says: where (`site`, as the caller named it), the stream given, the current
/// stream and the provider that answered for it.
struct current_stream_mismatch {
  const char* site;
  stream_view given;
  stream_view current;
  const char* provider; // "" when no provider answered (the current stream is the handle 0)
  int device;
};

/// Receives each report (once per site). The default writes one line to stderr. Must not throw.
using current_stream_check_reporter = void (*)(const current_stream_mismatch&) noexcept;

/// Turns the check on or off for the process. Turning it on forgets the call sites already
/// reported: each reports once again.
STREAMLIKE_API void set_current_stream_check(bool on) noexcept;
/// Whether the check is on.
[[nodiscard]] STREAMLIKE_API bool current_stream_check_enabled() noexcept;
/// Replaces the reporter (nullptr: the default, stderr); returns the previous one. Also forgets
/// the sites already reported, so each is reported again once.
STREAMLIKE_API current_stream_check_reporter
set_current_stream_check_reporter(current_stream_check_reporter reporter) noexcept;

namespace detail {
STREAMLIKE_API extern std::atomic<bool> current_stream_check_on;
STREAMLIKE_API void report_if_not_current(stream_view given, const char* site) noexcept;
STREAMLIKE_API void report_if_not_current(stream_view given, int device, const char* site) noexcept;
/// Forgets the call sites reported (this copy's; the process's registry's: set_current_stream_check).
STREAMLIKE_API void forget_reported_sites() noexcept;
} // namespace detail

/// The hook: while the check is on, reports (once per `site`, e.g. "file.cpp:42", copied when
/// first reported) when `given` is not current_stream() of its device. Never throws; makes no
/// CUDA call that a capture forbids.
inline void check_current_stream(stream_view given, const char* site) noexcept {
  if (detail::current_stream_check_on.load(std::memory_order_relaxed)) [[unlikely]]
    detail::report_if_not_current(given, site);
}

/// The same, on `device` (when the caller knows it, which saves asking the stream).
inline void check_current_stream(stream_view given, int device, const char* site) noexcept {
  if (detail::current_stream_check_on.load(std::memory_order_relaxed)) [[unlikely]]
    detail::report_if_not_current(given, device, site);
}

} // namespace streamlike

#endif // STREAMLIKE_CURRENT_STREAM_CHECK_HPP

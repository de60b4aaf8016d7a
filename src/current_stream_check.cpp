// The opt-in check that a stream given to streamlike is the current one (current_stream_check.hpp).
#include "current_stream_registry.hpp"
#include "current_stream_shared.hpp"

#include <streamlike/current_stream.hpp>
#include <streamlike/current_stream_check.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_set>

namespace streamlike {

namespace {

bool enabled_by_environment() noexcept {
  const char* value = std::getenv("STREAMLIKE_CHECK_CURRENT_STREAM");
  return value != nullptr && value[0] != '\0' && !(value[0] == '0' && value[1] == '\0');
}

void report_to_stderr(const current_stream_mismatch& m) noexcept {
  std::fprintf(stderr,
               "streamlike: %s: stream %#jx is not the current stream of device %d (%#jx, from %s); "
               "reported once for this call site (STREAMLIKE_CHECK_CURRENT_STREAM)\n",
               m.site, static_cast<std::uintmax_t>(reinterpret_cast<std::uintptr_t>(m.given.get())), m.device,
               static_cast<std::uintmax_t>(reinterpret_cast<std::uintptr_t>(m.current.get())),
               m.provider[0] != '\0' ? m.provider : "no provider");
}

struct check_state {
  std::mutex lock;
  current_stream_check_reporter reporter = &report_to_stderr;
  std::unordered_set<std::string> reported;
};

check_state& state() noexcept {
  static check_state* s = new check_state; // never destroyed: reports may come during exit
  return *s;
}

} // namespace

namespace detail {
std::atomic<bool> current_stream_check_on{enabled_by_environment()};

void forget_reported_sites() noexcept {
  check_state& s = state();
  const std::lock_guard<std::mutex> guard(s.lock);
  s.reported.clear();
}

void report_if_not_current(stream_view given, int device, const char* site) noexcept {
  // The process's registry decides and reports: one set of reported sites, one reporter.
  if (const streamlike_current_stream_registry* to = current::forwarded()) {
    to->check(device, given.get(), site);
    return;
  }
  try {
    const current::answer now = current::current_answer(current::providers(/*throttled=*/true), device);
    const stream_view current{static_cast<cudaStream_t>(now.stream)};
    if (same_current_stream(current, given)) return; // 0 and cudaStreamLegacy are one stream
    const std::string where = site != nullptr ? site : "(unknown site)";
    check_state& s = state();
    const std::lock_guard<std::mutex> guard(s.lock);
    if (!s.reported.insert(where).second) return;
    s.reporter(
        current_stream_mismatch{where.c_str(), given, current, now.by != nullptr ? now.by->name.c_str() : "", device});
  } catch (...) {
    // Out of memory: not reported.
  }
}

void report_if_not_current(stream_view given, const char* site) noexcept {
  int device = 0;
  try {
    // A default stream has no device of its own: compare on the current device.
    device = given.is_default() ? current::resolve_device(current_device, "check_current_stream")
                                : given.device(); // capture-safe
  } catch (...) {
    (void)cudaGetLastError(); // a stream CUDA cannot ask about: nothing to compare, nothing reported
    return;
  }
  report_if_not_current(given, device, site);
}
} // namespace detail

void set_current_stream_check(bool on) noexcept {
  if (on) {
    // Each time the check is turned on, every call site may report again (once).
    if (const streamlike_current_stream_registry* to = detail::current::forwarded()) to->forget_reported();
    detail::forget_reported_sites();
  }
  detail::current_stream_check_on.store(on, std::memory_order_relaxed);
}

bool current_stream_check_enabled() noexcept { return detail::current_stream_check_on.load(std::memory_order_relaxed); }

current_stream_check_reporter set_current_stream_check_reporter(current_stream_check_reporter reporter) noexcept {
  if (const streamlike_current_stream_registry* to = detail::current::forwarded()) {
    return reinterpret_cast<current_stream_check_reporter>(
        to->set_reporter(reinterpret_cast<void (*)(void)>(reporter))); // the registry reports
  }
  check_state& s = state();
  const std::lock_guard<std::mutex> guard(s.lock);
  const current_stream_check_reporter previous = s.reporter;
  s.reporter = reporter != nullptr ? reporter : &report_to_stderr;
  s.reported.clear();
  return previous;
}

} // namespace streamlike

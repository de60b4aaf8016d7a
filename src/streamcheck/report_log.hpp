// streamcheck: the reports of a run, one per call site (docs/streamcheck.md, "Reading a report"):
// each report's call site taken, deduplicated before anything costly is taken (a repeat costs the
// native return addresses and, where they alone cannot tell, the Python frames' identity), judged
// against the allow-list once, counted, and the run's summary and JSON. Pure: no CUDA call, no
// CUPTI type.
#ifndef STREAMLIKE_SRC_STREAMCHECK_REPORT_LOG_HPP
#define STREAMLIKE_SRC_STREAMCHECK_REPORT_LOG_HPP

#include "options.hpp"
#include "report.hpp"
#include "world.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace streamlike::check {

/// What writes a report's `why`: asked only for a call site seen the first time, so that a repeat
/// costs no text.
struct explanation {
  void (*write)(const void* context, report& r) = nullptr;
  const void* context = nullptr;
};

class report_log {
public:
  report_log(std::vector<allow_entry> allow, const world& w) : allow_(std::move(allow)), world_(w) {}

  /// Called with each report the first time its call site is seen (not for allowed ones).
  void on_report(void (*sink)(void* context, const report& r), void* context) noexcept {
    sink_ = sink;
    sink_context_ = context;
  }

  /// Takes r's call site and files it. A repeat (the same kind, API, native site and, where the
  /// native site's first report had a Python location, the same Python frames) is counted from
  /// the native return addresses and the Python frames' identity alone: nothing symbolized, no
  /// text made, the allow-list not asked again. A new call site is symbolized (once per native
  /// site), judged against the allow-list (lib: and sym: once per native site, py: per Python
  /// location) and sent to the sink.
  verdict record(report r, explanation why = {});

  /// Every distinct report so far (allowed ones too), in the order first seen.
  [[nodiscard]] std::vector<report> reports() const;
  /// The number of distinct reports not allowed.
  [[nodiscard]] std::size_t reported() const;
  /// Counts per kind and call site, for the end of the run.
  [[nodiscard]] std::string summary() const;
  /// The same as JSON: {"reports": [...], "wrong_stream": N, "capture_breaker": N, "allowed": N}.
  [[nodiscard]] std::string json() const;

private:
  // What the first report at a native call site (its return addresses) decided for all of them.
  struct native_site {
    std::vector<std::string> frames;
    bool allowed = false;    // by lib: or sym:
    bool has_python = false; // a Python location: the Python frames tell its call sites apart
    [[nodiscard]] bool needs_python() const noexcept { return has_python && !allowed; }
  };
  struct addresses_hash {
    using is_transparent = void;
    std::size_t operator()(std::span<void* const> addresses) const noexcept;
  };
  struct addresses_equal {
    using is_transparent = void;
    bool operator()(std::span<void* const> a, std::span<void* const> b) const noexcept {
      return std::equal(a.begin(), a.end(), b.begin(), b.end());
    }
  };
  // What a repeat is known by: no text but the API's name.
  struct repeat_probe {
    report::kind what;
    std::string_view api;
    const native_site* native;
    std::span<const std::uintptr_t> python; // the Python frames' identity; empty where not needed
  };
  struct repeat_key {
    report::kind what;
    std::string api;
    const native_site* native;
    std::vector<std::uintptr_t> python;
    operator repeat_probe() const noexcept { return {what, api, native, python}; }
  };
  struct repeat_hash {
    using is_transparent = void;
    std::size_t operator()(const repeat_probe& p) const noexcept;
  };
  struct repeat_equal {
    using is_transparent = void;
    bool operator()(const repeat_probe& a, const repeat_probe& b) const noexcept {
      return a.what == b.what && a.native == b.native && a.api == b.api &&
             std::equal(a.python.begin(), a.python.end(), b.python.begin(), b.python.end());
    }
  };

  verdict record_new(report r, explanation why);
  [[nodiscard]] bool allowed_natively(const std::vector<std::string>& frames) const;
  [[nodiscard]] bool allowed_by_python(const std::string& location) const;

  std::vector<allow_entry> allow_;
  world world_;
  void (*sink_)(void*, const report&) = nullptr;
  void* sink_context_ = nullptr;

  mutable std::mutex mutex_;
  std::deque<report> reports_;
  std::unordered_map<std::vector<void*>, native_site, addresses_hash, addresses_equal> natives_;
  std::unordered_map<repeat_key, std::size_t, repeat_hash, repeat_equal> by_repeat_; // -> index in reports_
  // kind, API, native site and Python location -> index in reports_: one report where two Python
  // identities name one line (two calls on it, or the library frames on the way differ).
  std::unordered_map<std::string, std::size_t> by_location_;
};

} // namespace streamlike::check

#endif // STREAMLIKE_SRC_STREAMCHECK_REPORT_LOG_HPP

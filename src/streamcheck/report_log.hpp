// streamcheck: the reports of a run, one per call site (docs/streamcheck.md, "Reading a report"):
// each report's call site taken, deduplicated, judged against the allow-list once, counted, and
// the run's summary and JSON. Pure: no CUDA call, no CUPTI type.
#ifndef STREAMLIKE_SRC_STREAMCHECK_REPORT_LOG_HPP
#define STREAMLIKE_SRC_STREAMCHECK_REPORT_LOG_HPP

#include "options.hpp"
#include "report.hpp"
#include "world.hpp"

#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace streamlike::check {

class report_log {
public:
  report_log(std::vector<allow_entry> allow, const world& w) : allow_(std::move(allow)), world_(w) {}

  /// Called with each report the first time its call site is seen (not for allowed ones).
  void on_report(void (*sink)(void* context, const report& r), void* context) noexcept {
    sink_ = sink;
    sink_context_ = context;
  }

  /// Takes r's call site and files it: a new call site is symbolized, judged against the allow-list
  /// and sent to the sink; a known one is counted.
  verdict record(report r);

  /// Every distinct report so far (allowed ones too), in the order first seen.
  [[nodiscard]] std::vector<report> reports() const;
  /// The number of distinct reports not allowed.
  [[nodiscard]] std::size_t reported() const;
  /// Counts per kind and call site, for the end of the run.
  [[nodiscard]] std::string summary() const;
  /// The same as JSON: {"reports": [...], "wrong_stream": N, "capture_breaker": N, "allowed": N}.
  [[nodiscard]] std::string json() const;

private:
  [[nodiscard]] bool allowed(const call_site& site) const;

  std::vector<allow_entry> allow_;
  world world_;
  void (*sink_)(void*, const report&) = nullptr;
  void* sink_context_ = nullptr;

  mutable std::mutex mutex_;
  std::deque<report> reports_;
  std::unordered_map<std::string, std::size_t> by_site_; // dedup key -> index in reports_
};

} // namespace streamlike::check

#endif // STREAMLIKE_SRC_STREAMCHECK_REPORT_LOG_HPP

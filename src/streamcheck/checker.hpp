// streamcheck's decisions (docs/streamcheck.md): given each CUDA driver call a process makes, as a
// call_event, and what the process knows (its current streams, the call site), the reports of
// work not ordered with the current stream and of calls that break an active capture.
// Pure: no CUDA call, no CUPTI type; the CUPTI layer (cupti_injection.cpp) feeds it, the host test
// (test/streamcheck/checker.cpp) feeds it synthetic events. The parts: capture_rules (the captures
// and CUDA's rules for them), report_log (dedup, allow-list, summary), stream_order
// (the order CUDA gives the streams' work).
#ifndef STREAMLIKE_SRC_STREAMCHECK_CHECKER_HPP
#define STREAMLIKE_SRC_STREAMCHECK_CHECKER_HPP

#include "call_event.hpp"
#include "call_kind.hpp"
#include "capture_rules.hpp"
#include "options.hpp"
#include "report.hpp"
#include "report_log.hpp"
#include "stream_order.hpp"
#include "world.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace streamlike::check {

class checker {
public:
  checker(options opts, world w);
  checker(const checker&) = delete;
  checker& operator=(const checker&) = delete;

  using verdict = check::verdict;
  /// The decision on one call, made before the call runs; or, with event.returned, what the call
  /// taught once it returned (noted_after kinds, with `succeeded`). A new report goes to the sink
  /// given to on_report.
  verdict on_call(const call_event& event);

  /// A thread exited: a new thread given its id inherits nothing of it.
  void forget_thread(std::uint64_t thread);
  /// Calls went unseen (a pause): the order known so far is taken as complete, so that nothing the
  /// checker did not see is reported.
  void calls_went_unseen();

  /// Called with each report the first time its call site is seen (not for allowed ones).
  void on_report(void (*sink)(void* context, const report& r), void* context) noexcept {
    log_.on_report(sink, context);
  }

  /// Every distinct report so far (allowed ones too), in the order first seen.
  [[nodiscard]] std::vector<report> reports() const { return log_.reports(); }
  /// The number of distinct reports not allowed.
  [[nodiscard]] std::size_t reported() const { return log_.reported(); }
  /// Counts per kind and call site, for the end of the run.
  [[nodiscard]] std::string summary() const { return log_.summary(); }
  /// The same as JSON: {"reports": [...], "wrong_stream": N, "capture_breaker": N, "allowed": N}.
  [[nodiscard]] std::string json() const { return log_.json(); }
  [[nodiscard]] const options& settings() const noexcept { return options_; }

private:
  verdict check_stream(const call_event& e);
  // Work on a stream other than the current one, which is not a default stream: out of line, so
  // that a call on the current stream pays for none of the report's making.
  [[gnu::noinline]] verdict check_other_stream(const call_event& e, std::uintptr_t current);
  verdict check_capture(const call_event& e);
  void note_returned(const call_event& e);
  void explain_wrong_stream(report& r, const stream_order::judgment& j) const;

  options options_;
  world world_;
  capture_tracker captures_;
  stream_order order_;
  report_log log_;
};

} // namespace streamlike::check

#endif // STREAMLIKE_SRC_STREAMCHECK_CHECKER_HPP

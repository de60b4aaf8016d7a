// streamcheck's decisions (docs/streamcheck.md): given each CUDA driver call a process makes, as a
// call_event, and what the process knows (its current streams, the call site), the reports of
// launches on a stream other than the current one and of calls that break an active capture.
// Pure: no CUDA call, no CUPTI type; the CUPTI layer (cupti_injection.cpp) feeds it, the host test
// (test/streamcheck/checker.cpp) feeds it synthetic events.
#ifndef STREAMLIKE_SRC_STREAMCHECK_CHECKER_HPP
#define STREAMLIKE_SRC_STREAMCHECK_CHECKER_HPP

#include "call_kind.hpp"
#include "options.hpp"

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace streamlike::check {

/// One driver call, as the CUPTI layer saw it.
struct call_event {
  call_kind kind = call_kind::other;
  std::string_view api;      // the driver API's name, e.g. "cuLaunchKernel_ptsz"
  bool has_stream = false;   // whether the call takes a stream (and `stream` is it)
  std::uintptr_t stream = 0; // canonical_stream(api, the handle given)
  int device = 0;            // the device of the call's context; -1: unknown (no wrong-stream report)
  std::uint64_t thread = 0;  // the calling thread
  // capture_begin: the capture's mode; capture_mode: the mode the thread switches to.
  cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
  bool blocking = true; // capture_begin: whether the stream synchronizes with the legacy default one
  // capture_begin, capture_end: seen after the call, whether it began / ended the capture.
  bool succeeded = true;
};

/// Where a reported call was made: native return addresses (the dedup key with `python`), the
/// symbolized frames (filled only for a call site seen the first time) and the Python file:line.
struct call_site {
  std::vector<void*> addresses;
  std::vector<std::string> frames; // "library: function+0xoffset"
  std::string python;              // "path/script.py:12" when the thread held the GIL
};

/// What the checker asks of the process, as plain function pointers (no cost beyond the call).
struct world {
  /// The calling thread's current stream on `device` as its frameworks agree on it (a handle: 0
  /// and 0x1 the legacy default stream, 0x2 the per-thread one), and which provider set it. False
  /// when it cannot be known now: then no wrong-stream report.
  bool (*current_stream)(void* context, int device, std::uintptr_t* stream) = nullptr;
  /// The calling thread's call site: addresses and python (cheap: taken only for a report).
  void (*take_call_site)(void* context, call_site& site) = nullptr;
  /// Fills site.frames from site.addresses (taken once per call site).
  void (*symbolize)(void* context, call_site& site) = nullptr;
  /// For a wrong-stream report only: which framework set the current stream on `device` and which
  /// others name another one ("set by torch, while cupy names 0x8000"); empty when all agree.
  std::string (*current_stream_answers)(void* context, int device) = nullptr;
  void* context = nullptr;
};

struct report {
  enum class kind { wrong_stream, capture_breaker };
  kind what = kind::wrong_stream;
  std::string api;
  call_kind call = call_kind::other;
  std::uintptr_t stream = 0;  // the stream given (canonical); 0 for a call that takes none
  std::uintptr_t current = 0; // wrong stream: the current stream (canonical)
  int device = 0;
  std::uint64_t thread = 0;
  std::string why;
  call_site site;
  std::size_t count = 1;
  bool allowed = false; // matched the allow-list: counted, not reported
};

[[nodiscard]] const char* report_kind_name(report::kind kind) noexcept;
/// "0x1 (the legacy default stream)", "0x7f00aa (a stream)".
[[nodiscard]] std::string stream_name(std::uintptr_t canonical);
/// The report as the lines written when it is first seen.
[[nodiscard]] std::string format(const report& r);

class checker {
public:
  checker(options opts, world w);
  checker(const checker&) = delete;
  checker& operator=(const checker&) = delete;

  enum class verdict { fine, reported, repeated, allowed };
  /// The decision on one call, made before the call runs (capture_begin and capture_end: after it,
  /// with `succeeded`). A new report goes to the sink given to on_report.
  verdict on_call(const call_event& event);

  /// Called with each report the first time its call site is seen (not for allowed ones).
  void on_report(void (*sink)(void* context, const report& r), void* context) noexcept {
    sink_ = sink;
    sink_context_ = context;
  }

  /// Every distinct report so far (allowed ones too), in the order first seen.
  [[nodiscard]] std::vector<report> reports() const;
  /// The number of distinct reports not allowed.
  [[nodiscard]] std::size_t reported() const;
  /// Counts per kind and call site, for the end of the run.
  [[nodiscard]] std::string summary() const;
  /// The same as JSON: {"reports": [...], "wrong_stream": N, "capture_breaker": N, "allowed": N}.
  [[nodiscard]] std::string json() const;
  [[nodiscard]] const options& settings() const noexcept { return options_; }

private:
  struct capture {
    std::uintptr_t stream;
    cudaStreamCaptureMode mode;
    std::uint64_t thread;
    bool blocking;
  };

  verdict check_stream(const call_event& e);
  verdict check_capture(const call_event& e);
  void note_capture(const call_event& e);
  verdict record(report r);
  [[nodiscard]] bool allowed(const call_site& site) const;
  [[nodiscard]] cudaStreamCaptureMode mode_of(std::uint64_t thread) const; // lock held

  options options_;
  world world_;
  void (*sink_)(void*, const report&) = nullptr;
  void* sink_context_ = nullptr;

  mutable std::mutex mutex_;
  std::vector<capture> captures_;                                         // active, process-wide
  std::atomic<std::size_t> capture_count_{0};                             // captures_.size(), read unlocked
  std::unordered_map<std::uint64_t, cudaStreamCaptureMode> thread_modes_; // only threads that exchanged
  std::deque<report> reports_;
  std::unordered_map<std::string, std::size_t> by_site_; // dedup key -> index in reports_
};

} // namespace streamlike::check

#endif // STREAMLIKE_SRC_STREAMCHECK_CHECKER_HPP

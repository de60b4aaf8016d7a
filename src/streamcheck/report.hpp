// streamcheck: what a report holds and how it reads (docs/streamcheck.md, "Reading a report").
// Pure: no CUDA call, no CUPTI type.
#ifndef STREAMLIKE_SRC_STREAMCHECK_REPORT_HPP
#define STREAMLIKE_SRC_STREAMCHECK_REPORT_HPP

#include "call_kind.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace streamlike::check {

/// Where a reported call was made: native return addresses (the dedup key with the Python
/// frames' identity), the symbolized frames (taken once per native call site) and the Python
/// file:line.
struct call_site {
  std::vector<void*> addresses;
  std::vector<std::string> frames; // "library: function+0xoffset"
  std::string python;              // "path/script.py:12" when the thread held the GIL
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

/// The decision on one call: nothing to say, a new report, a report already made at this call
/// site (counted), or one the allow-list takes.
enum class verdict { fine, reported, repeated, allowed };

[[nodiscard]] const char* report_kind_name(report::kind kind) noexcept;
/// What to change, in one line, for a report of this kind, call and stream: the "fix" of the text
/// report and of the JSON.
[[nodiscard]] const char* fix_for(const report& r) noexcept;
/// "0x1 (the legacy default stream)", "0x7f00aa (a stream)".
[[nodiscard]] std::string stream_name(std::uintptr_t canonical);
/// "0x7f00aa".
[[nodiscard]] std::string hex(std::uintptr_t value);
/// `text` as a JSON string, quoted and escaped.
[[nodiscard]] std::string json_quoted(std::string_view text);
/// The report as the lines written when it is first seen.
[[nodiscard]] std::string format(const report& r);

} // namespace streamlike::check

#endif // STREAMLIKE_SRC_STREAMCHECK_REPORT_HPP

#include "report.hpp"

#include <cstdio>

namespace streamlike::check {

const char* report_kind_name(report::kind kind) noexcept {
  return kind == report::kind::wrong_stream ? "wrong stream" : "capture breaker";
}

std::string hex(std::uintptr_t value) {
  char text[2 + 2 * sizeof(value) + 1];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

std::string stream_name(std::uintptr_t canonical) {
  if (canonical == legacy_stream) return "0x1 (the legacy default stream)";
  if (canonical == per_thread_stream) return "0x2 (the per-thread default stream)";
  return hex(canonical);
}

std::string format(const report& r) {
  std::string text = "streamcheck: " + std::string(report_kind_name(r.what)) + ": " + r.api + " (" + kind_name(r.call) +
                     ") on device " + std::to_string(r.device) + ", thread " + std::to_string(r.thread) + ": " + r.why +
                     "\n";
  text += "  at " + (r.site.python.empty() ? std::string("(no Python frame)") : r.site.python) + "\n";
  for (const std::string& frame : r.site.frames) text += "    " + frame + "\n";
  return text;
}

} // namespace streamlike::check

#include "report.hpp"

#include <cstdio>

namespace streamlike::check {

const char* report_kind_name(report::kind kind) noexcept {
  return kind == report::kind::wrong_stream ? "wrong stream" : "capture breaker";
}

const char* fix_for(const report& r) noexcept {
  if (r.what == report::kind::wrong_stream) {
    return is_default_stream(r.stream) ? "pass the current stream (torch.cuda.current_stream() / "
                                         "streamlike.current_stream()), or take a stream argument"
                                       : "order it with the current stream (an event recorded there and waited on "
                                         "with cudaStreamWaitEvent, or torch's wait_stream), or launch on the current "
                                         "stream";
  }
  switch (r.call) {
    case call_kind::ctx_sync:
      // Prohibited in every mode: it synchronizes the capturing streams too.
      return "move it out of the capture: after the capture ends, synchronize the stream whose work you need";
    case call_kind::stream_sync:
    case call_kind::stream_query:
    case call_kind::event_sync:
    case call_kind::event_query:
      return "move it out of the capture (after cudaStreamEndCapture); a stream or event outside the capture may "
             "instead be synchronized in a relaxed region (cudaStreamCaptureModeRelaxed / "
             "cudaThreadExchangeStreamCaptureMode), as CUDA allows";
    case call_kind::sync_copy:
    case call_kind::sync_memset:
      return "use the async form on the capturing stream (cudaMemcpyAsync / cudaMemsetAsync), or move it out of "
             "the capture";
    case call_kind::alloc:
    case call_kind::free:
      return "allocate before the capture, use the stream-ordered form on the capturing stream (cudaMallocAsync / "
             "cudaFreeAsync), or make the call in a relaxed region (cudaStreamCaptureModeRelaxed / "
             "cudaThreadExchangeStreamCaptureMode), as CUDA allows";
    default:
      // Work, a record or a wait on the legacy default stream while a blocking stream captures.
      return "make the call on the capturing stream (or a non-blocking stream) instead of the legacy default "
             "stream, or move it out of the capture";
  }
}

std::string json_quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
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
                     "\n  fix: " + fix_for(r) + "\n";
  text += "  at " + (r.site.python.empty() ? std::string("(no Python frame)") : r.site.python) + "\n";
  for (const std::string& frame : r.site.frames) text += "    " + frame + "\n";
  return text;
}

} // namespace streamlike::check

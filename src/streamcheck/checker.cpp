#include "checker.hpp"

#include <utility>

namespace streamlike::check {

checker::checker(options opts, world w) : options_(std::move(opts)), world_(w), log_(options_.allow, w) {}

checker::verdict checker::on_call(const call_event& e) {
  switch (e.kind) {
    case call_kind::capture_begin:
    case call_kind::capture_end:
    case call_kind::capture_mode: captures_.note(e); return verdict::fine;
    case call_kind::other: return verdict::fine;
    default: break;
  }
  if (options_.capture) {
    const verdict v = check_capture(e);
    if (v != verdict::fine) return v;
  }
  if (options_.wrong_stream && e.has_stream && works_on_stream(e.kind)) return check_stream(e);
  return verdict::fine;
}

checker::verdict checker::check_stream(const call_event& e) {
  std::uintptr_t current = 0;
  if (e.device < 0 || world_.current_stream == nullptr || !world_.current_stream(world_.context, e.device, &current))
    return verdict::fine;
  current = canonical_stream(current);
  // A default current stream is every framework's "nothing set": launching elsewhere is a choice.
  if (is_default_stream(current) || e.stream == current) [[likely]]
    return verdict::fine;
  report r;
  r.what = report::kind::wrong_stream;
  r.api = e.api;
  r.call = e.kind;
  r.stream = e.stream;
  r.current = current;
  r.device = e.device;
  r.thread = e.thread;
  r.why = "given stream " + stream_name(e.stream) + ", but the calling thread's current stream on device " +
          std::to_string(e.device) + " is " + stream_name(current) + " (streamlike::current_stream())";
  const std::string answers = world_.current_stream_answers != nullptr
                                  ? world_.current_stream_answers(world_.context, e.device)
                                  : std::string();
  if (!answers.empty()) r.why += "; " + answers;
  return log_.record(std::move(r));
}

checker::verdict checker::check_capture(const call_event& e) {
  std::string why = captures_.breaker(e);
  if (why.empty()) [[likely]]
    return verdict::fine;
  report r;
  r.what = report::kind::capture_breaker;
  r.api = e.api;
  r.call = e.kind;
  r.stream = e.has_stream ? e.stream : 0;
  r.device = e.device;
  r.thread = e.thread;
  r.why = std::move(why);
  return log_.record(std::move(r));
}

} // namespace streamlike::check

#include "checker.hpp"

#include <utility>

namespace streamlike::check {
namespace {

stream_at stream_of(const call_event& e) noexcept { return {e.stream, e.device, e.thread}; }

} // namespace

checker::checker(options opts, world w) : options_(std::move(opts)), world_(w), log_(options_.allow, w) {}

checker::verdict checker::on_call(const call_event& e) {
  if (e.returned) {
    note_returned(e);
    return verdict::fine;
  }
  if (e.kind == call_kind::capture_mode) {
    captures_.note(e);
    return verdict::fine;
  }
  if (!judged_before(e.kind)) return verdict::fine;
  if (options_.capture && captures_.any()) { // none under way: nothing to break, no call made
    const verdict v = check_capture(e);
    if (v != verdict::fine) return v;
  }
  if (!options_.wrong_stream) return verdict::fine;
  switch (e.kind) {
    case call_kind::event_record: order_.event_recorded(e.object, stream_of(e)); break;
    case call_kind::stream_wait: order_.event_waited(e.object, stream_of(e)); break;
    case call_kind::wait_value: order_.value_waited(e.object, stream_of(e)); break;
    case call_kind::event_destroy: order_.event_destroyed(e.object); break;
    case call_kind::stream_destroy: order_.stream_destroyed(e.stream); break;
    case call_kind::graph_upload: (void)order_.queue(stream_of(e), nullptr); break;
    case call_kind::write_value: {
      const verdict v = check_stream(e);
      order_.value_written(e.object, stream_of(e));
      return v;
    }
    default:
      if (e.has_stream && works_on_stream(e.kind)) return check_stream(e);
      break;
  }
  return verdict::fine;
}

void checker::note_returned(const call_event& e) {
  switch (e.kind) {
    case call_kind::capture_begin:
    case call_kind::capture_end: captures_.note(e); return;
    default: break;
  }
  if (!options_.wrong_stream || !e.succeeded) return;
  switch (e.kind) {
    case call_kind::stream_create: order_.stream_created(e.stream, e.device, e.blocking, e.library_stream); break;
    case call_kind::stream_sync:
    case call_kind::stream_query: order_.host_waited_stream(e.thread, stream_of(e)); break;
    case call_kind::event_sync:
    case call_kind::event_query: order_.host_waited_event(e.thread, e.object); break;
    case call_kind::ctx_sync: order_.host_waited_device(e.thread, e.device); break;
    case call_kind::sync_copy:
    case call_kind::sync_memset:
      // Work on the default stream of the call's entry point that the host waited for.
      (void)order_.queue(stream_of(e), nullptr);
      order_.host_waited_stream(e.thread, stream_of(e));
      break;
    default: break;
  }
}

void checker::forget_thread(std::uint64_t thread) {
  order_.forget_thread(thread);
  captures_.forget_thread(thread);
}

void checker::calls_went_unseen() { order_.assume_all_ordered(); }

checker::verdict checker::check_stream(const call_event& e) {
  std::uintptr_t current = 0;
  if (e.device < 0 || world_.current_stream == nullptr || !world_.current_stream(world_.context, e.device, &current)) {
    (void)order_.queue(stream_of(e), nullptr);
    return verdict::fine;
  }
  current = canonical_stream(current);
  // A default current stream is every framework's "nothing set": launching elsewhere is a choice.
  if (is_default_stream(current) || e.stream == current) [[likely]] {
    (void)order_.queue(stream_of(e), nullptr);
    return verdict::fine;
  }
  return check_other_stream(e, current);
}

checker::verdict checker::check_other_stream(const call_event& e, std::uintptr_t current) {
  const stream_at current_at{current, e.device, e.thread};
  const stream_order::judgment j = order_.queue(stream_of(e), &current_at);
  const bool on_default = is_default_stream(e.stream);
  if (!options_.strict_stream) {
    // A default stream stays reported unless something orders it with the current stream's work
    // (an empty current stream orders nothing); another stream only when it is not ordered after
    // that work, and not at all when a library that orders its own streams made it.
    if (on_default ? j.implicit || (j.ordered && j.current_has_work) : j.ordered || j.library_stream)
      return verdict::fine;
  }
  report r;
  r.what = report::kind::wrong_stream;
  r.api = e.api;
  r.call = e.kind;
  r.stream = e.stream;
  r.current = current;
  r.device = e.device;
  r.thread = e.thread;
  // The words are written only for a call site seen the first time: a repeat costs no text.
  struct context {
    const checker* self;
    const stream_order::judgment* judged;
  } words{this, &j};
  const explanation why{[](const void* c, report& r) {
                          const auto& [self, judged] = *static_cast<const context*>(c);
                          self->explain_wrong_stream(r, *judged);
                        },
                        &words};
  return log_.record(std::move(r), why);
}

void checker::explain_wrong_stream(report& r, const stream_order::judgment& j) const {
  r.why = "given stream " + stream_name(r.stream) + ", but the calling thread's current stream on device " +
          std::to_string(r.device) + " is " + stream_name(r.current) + " (streamlike::current_stream())";
  if (!options_.strict_stream) {
    r.why += j.current_has_work
                 ? ", and nothing orders this call after the " + std::to_string(j.unseen) + " call(s) queued there"
                 : ", and nothing orders this call with it";
  }
  const std::string answers = world_.current_stream_answers != nullptr
                                  ? world_.current_stream_answers(world_.context, r.device)
                                  : std::string();
  if (!answers.empty()) r.why += "; " + answers;
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

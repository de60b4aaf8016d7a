#include "capture_rules.hpp"

#include "../capture_checks.hpp"
#include "report.hpp"

#include <algorithm>

// CUDA's rules, as its programming guide states them ("Prohibited and Unhandled Operations" of
// stream capture) and as CUDA answers them (test/streamcheck/capture_verdicts.cu asks CUDA and the
// checker about the same calls):
//  - a synchronization or query of a stream of a capture (the one it began on, or one forked into
//    it) or of an event recorded in a capture: never allowed, in any mode, from any thread;
//  - a synchronization of the context: it encompasses every stream of the context, so never while a
//    capture of that context is under way, whatever the modes;
//  - any use of the legacy default stream (work, a wait, a record, a synchronization, and the
//    synchronous copies and memsets, which run on it) while a blocking stream of its context
//    captures: the legacy stream synchronizes with every blocking stream (cudaErrorStreamCaptureImplicit);
//  - the "potentially unsafe" calls (synchronizing or querying any other stream or event, cuMemAlloc,
//    cuMemFree and their kin, and cuMemAllocAsync and cuMemFreeAsync on a stream outside the
//    capture): prohibited by the capture modes and the calling thread's interaction
//    mode (src/capture_checks.hpp). Synchronous copies and memsets are not among them: CUDA lets a
//    synchronous copy run during a global capture of a non-blocking stream.

namespace streamlike::check {
namespace {

using detail::capture::mode_name;

bool same_device(int a, int b) noexcept { return a < 0 || b < 0 || a == b; }

// Calls that can break a capture or change what belongs to one; the others can only by naming the
// legacy default stream. Asked before the lock.
bool concerns_captures(const call_event& e) noexcept {
  if (capture_punished(e.kind)) return true;
  switch (e.kind) {
    case call_kind::alloc_async:
    case call_kind::free_async:
    case call_kind::event_record:
    case call_kind::stream_wait:
    case call_kind::stream_destroy:
    case call_kind::event_destroy: return true;
    default: return e.has_stream && e.stream == legacy_stream;
  }
}

} // namespace

void capture_tracker::note(const call_event& e) {
  if (!e.succeeded) return;
  const std::lock_guard lock(mutex_);
  const stream_key key{e.stream, e.stream == per_thread_stream ? e.thread : 0};
  if (e.kind == call_kind::capture_mode) {
    thread_modes_[e.thread] = e.mode;
  } else if (e.kind == call_kind::capture_begin) {
    captures_.push_back({next_id_++, key, e.mode, e.thread, e.blocking, e.device});
  } else if (e.kind == call_kind::capture_end) {
    // Ends that capture alone, with every stream forked into it and every event recorded in it.
    const auto found =
        std::find_if(captures_.begin(), captures_.end(), [&](const capture& c) { return c.origin == key; });
    if (found != captures_.end()) {
      const std::uint64_t id = found->id;
      std::erase_if(members_, [&](const member& m) { return m.capture == id; });
      std::erase_if(events_, [&](const auto& event) { return event.second == id; });
      captures_.erase(found);
    }
  }
  count_.store(captures_.size(), std::memory_order_release);
}

void capture_tracker::forget_thread(std::uint64_t thread) {
  const std::lock_guard lock(mutex_);
  thread_modes_.erase(thread);
}

cudaStreamCaptureMode capture_tracker::mode_of(std::uint64_t thread) const {
  const auto found = thread_modes_.find(thread);
  return found == thread_modes_.end() ? cudaStreamCaptureModeGlobal : found->second; // CUDA's default
}

const capture_tracker::capture* capture_tracker::with_id(std::uint64_t id) const {
  const auto found = std::find_if(captures_.begin(), captures_.end(), [&](const capture& c) { return c.id == id; });
  return found == captures_.end() ? nullptr : &*found;
}

const capture_tracker::capture* capture_tracker::capture_of(const stream_key& stream) const {
  for (const capture& c : captures_) {
    if (c.origin == stream) return &c;
  }
  for (const member& m : members_) {
    if (m.stream == stream) return with_id(m.capture);
  }
  return nullptr;
}

const capture_tracker::capture* capture_tracker::blocking_capture_on(int device) const {
  const auto found = std::find_if(captures_.begin(), captures_.end(),
                                  [&](const capture& c) { return c.blocking && same_device(c.device, device); });
  return found == captures_.end() ? nullptr : &*found;
}

std::string capture_tracker::breaker(const call_event& e) {
  if (!any() || !concerns_captures(e)) [[likely]]
    return {};
  const std::lock_guard lock(mutex_);
  std::string why = judge(e);
  follow(e);
  return why;
}

namespace {

std::string capture_words(std::uintptr_t stream, cudaStreamCaptureMode mode, std::uint64_t thread, bool own) {
  return std::string("a capture of stream ") + stream_name(stream) + " in " + mode_name(mode) + " mode begun by " +
         (own ? "this thread" : "thread " + std::to_string(thread));
}

constexpr const char* invalidated = "the capture would be invalidated";

} // namespace

std::string capture_tracker::judge(const call_event& e) const {
  const std::string api = *e.api == '\0' ? std::string("the call") : std::string(e.api);
  const auto words = [&](const capture& c) {
    return capture_words(c.origin.stream, c.mode, c.thread, c.thread == e.thread);
  };
  const auto legacy = [&](const capture& c, const char* use) {
    return api + " uses the legacy default stream (" + use + "), which synchronizes with every blocking stream, and " +
           words(c) + " is active on a blocking stream: " + invalidated +
           " (cudaErrorStreamCaptureImplicit). Use another stream than the legacy one (an async call on a "
           "non-blocking stream), or create the capturing stream non-blocking";
  };
  switch (e.kind) {
    case call_kind::stream_sync:
    case call_kind::stream_query: {
      if (!e.has_stream) return unsafe_call_breaker(e);
      const stream_key key{e.stream, e.stream == per_thread_stream ? e.thread : 0};
      if (const capture* c = capture_of(key)) {
        const std::string which = c->origin == key ? words(*c)
                                                   : "stream " + stream_name(e.stream) + ", forked into " + words(*c) +
                                                         " (it waited on an event recorded in the capture)";
        return api + " waits on or asks about " + which + ", which a capture never allows: " + invalidated;
      }
      if (e.stream == legacy_stream) {
        if (const capture* c = blocking_capture_on(e.device)) return legacy(*c, "a synchronization or query of it");
      }
      return unsafe_call_breaker(e);
    }
    case call_kind::event_sync:
    case call_kind::event_query: {
      if (const auto found = events_.find(e.object); e.object != 0 && found != events_.end()) {
        if (const capture* c = with_id(found->second)) {
          return api + " waits on or asks about event " + hex(e.object) + ", recorded in " + words(*c) +
                 ": such an event marks a point of the graph being built, not work that runs, and a capture never "
                 "lets it be waited on or asked about, from any thread: " +
                 invalidated;
        }
      }
      return unsafe_call_breaker(e);
    }
    case call_kind::ctx_sync:
      for (const capture& c : captures_) {
        if (!same_device(c.device, e.device)) continue;
        return api + " synchronizes every stream of the context, and while " + words(c) +
               " is active, CUDA refuses that in every capture mode, on a thread in any capture interaction mode "
               "(this one is in " +
               mode_name(mode_of(e.thread)) + " capture interaction mode): " + invalidated +
               ". Synchronize the streams the program needs after the capture ends";
      }
      return {};
    case call_kind::sync_copy:
    case call_kind::sync_memset: {
      // Synchronous work on the default stream of its entry point: the legacy one, or the calling
      // thread's per-thread stream (_ptsz), which synchronizes with the legacy stream alone.
      if (canonical_stream(e.api, 0) == per_thread_stream) {
        const capture* c = capture_of({per_thread_stream, e.thread});
        if (c == nullptr) return {};
        return api + " is synchronous work on this thread's per-thread default stream, which is in " + words(*c) +
               ": a capture never lets its streams be waited on: " + invalidated;
      }
      if (const capture* c = blocking_capture_on(e.device))
        return legacy(*c, "a synchronous copy or memset runs on it");
      return {};
    }
    case call_kind::alloc:
    case call_kind::free: return unsafe_call_breaker(e);
    case call_kind::alloc_async:
    case call_kind::free_async: {
      // On a stream of a capture they become its graph's nodes; on any other stream CUDA counts
      // them among the potentially unsafe calls (measured: refused and the capture invalidated).
      const stream_key key{e.stream, e.stream == per_thread_stream ? e.thread : 0};
      if (e.has_stream && capture_of(key) != nullptr) return {};
      if (e.has_stream && e.stream == legacy_stream) {
        if (const capture* c = blocking_capture_on(e.device)) return legacy(*c, "a stream-ordered allocation or free");
      }
      return unsafe_call_breaker(e);
    }
    default:
      if (e.has_stream && e.stream == legacy_stream) {
        if (const capture* c = blocking_capture_on(e.device)) return legacy(*c, "work, a record or a wait on it");
      }
      return {};
  }
}

std::string capture_tracker::unsafe_call_breaker(const call_event& e) const {
  // CUDA's rule for potentially unsafe calls, the one streamlike's own refusals follow.
  const capture* own = nullptr;
  const capture* other = nullptr;
  for (const capture& c : captures_) {
    if (c.mode == cudaStreamCaptureModeRelaxed) continue;
    if (c.thread == e.thread && own == nullptr) own = &c;
    if (c.thread != e.thread && c.mode == cudaStreamCaptureModeGlobal && other == nullptr) other = &c;
  }
  const cudaStreamCaptureMode thread_mode = mode_of(e.thread);
  const auto by = detail::capture::unsafe_call_prohibited_by(thread_mode, own != nullptr, other != nullptr);
  const capture* c = by == detail::capture::prohibited_by::own_capture            ? own
                     : by == detail::capture::prohibited_by::other_thread_capture ? other
                                                                                  : nullptr;
  if (c == nullptr) return {};
  return "while " + capture_words(c->origin.stream, c->mode, c->thread, c->thread == e.thread) +
         " is active, CUDA prohibits this call on a thread in " + mode_name(thread_mode) +
         " capture interaction mode: it would invalidate the capture. Make it before the capture begins "
         "or after it ends, or from a thread in relaxed mode (cudaThreadExchangeStreamCaptureMode)";
}

void capture_tracker::follow(const call_event& e) {
  const stream_key key{e.stream, e.stream == per_thread_stream ? e.thread : 0};
  switch (e.kind) {
    case call_kind::event_record:
      // Recorded on a stream of a capture, the event belongs to it; recorded elsewhere, to none.
      if (e.object == 0 || !e.has_stream) break;
      if (const capture* c = capture_of(key))
        events_[e.object] = c->id;
      else
        events_.erase(e.object);
      break;
    case call_kind::stream_wait: {
      // A stream outside any capture waiting on an event of one joins that capture (a fork) until it
      // ends; the legacy stream cannot be captured.
      if (e.object == 0 || !e.has_stream || e.stream == legacy_stream || capture_of(key) != nullptr) break;
      const auto found = events_.find(e.object);
      if (found != events_.end()) members_.push_back({key, found->second});
      break;
    }
    case call_kind::stream_destroy: // its handle may name another stream next
      if (e.has_stream) std::erase_if(members_, [&](const member& m) { return m.stream == key; });
      break;
    case call_kind::event_destroy:
      if (e.object != 0) events_.erase(e.object);
      break;
    default: break;
  }
}

} // namespace streamlike::check

#include "stream_order.hpp"

#include "call_kind.hpp"

#include <algorithm>

namespace streamlike::check {

stream_order::key stream_order::key_of(const stream_at& s) noexcept {
  if (s.stream == per_thread_stream) return {s.stream, s.device, s.thread}; // one per thread and context
  if (s.stream == legacy_stream) return {s.stream, s.device, 0};            // one per context
  return {s.stream, 0, 0};                                                  // a handle names one stream
}

void stream_order::join(clock& into, const clock& from) {
  if (into.size() < from.size()) into.resize(from.size(), 0);
  for (std::size_t i = 0; i < from.size(); ++i) into[i] = std::max(into[i], from[i]);
}

stream_order::stream_state& stream_order::state(const stream_at& s) {
  const auto [at, made] = streams_.try_emplace(key_of(s));
  stream_state& st = at->second;
  if (made) {
    st.index = next_index_++;
    st.device = s.device;
    st.legacy = s.stream == legacy_stream;
    // The default streams synchronize with the legacy one; a stream made while the checker did not
    // see it is taken for non-blocking, the answer that orders the least.
    st.blocking = is_default_stream(s.stream);
  }
  return st;
}

const stream_order::stream_state* stream_order::find(const stream_at& s) const {
  const auto at = streams_.find(key_of(s));
  return at == streams_.end() ? nullptr : &at->second;
}

void stream_order::catch_up(stream_state& s, std::uint64_t thread) {
  if (const auto host = hosts_.find(thread);
      host != hosts_.end() && (s.host_thread != thread || s.host_generation != host->second.generation)) {
    join(s.known, host->second.known);
    s.host_thread = thread;
    s.host_generation = host->second.generation;
  }
  if (s.legacy) {
    // Work on the legacy default stream waits for the work of every blocking stream of its context.
    for (const auto& [k, other] : streams_)
      if (other.device == s.device && other.blocking && !other.legacy) join(s.known, other.known);
  } else if (s.blocking) {
    // And a blocking stream's work waits for the legacy stream's.
    const auto legacy = streams_.find(key{legacy_stream, s.device, 0});
    if (legacy != streams_.end()) {
      const std::uint64_t calls = entry(legacy->second.known, legacy->second.index);
      if (calls != s.legacy_seen) {
        join(s.known, legacy->second.known);
        s.legacy_seen = calls;
      }
    }
  }
}

void stream_order::stream_created(std::uintptr_t stream, int device, bool blocking, bool library_stream) {
  const std::lock_guard lock(mutex_);
  streams_.erase(key_of({stream, device, 0}));
  stream_state& s = state({stream, device, 0});
  s.blocking = blocking;
  s.library_stream = library_stream;
}

void stream_order::stream_destroyed(std::uintptr_t stream) {
  if (is_default_stream(stream)) return;
  const std::lock_guard lock(mutex_);
  streams_.erase(key_of({stream, 0, 0}));
}

stream_order::judgment stream_order::queue(const stream_at& on, const stream_at* current) {
  const std::lock_guard lock(mutex_);
  stream_state& s = state(on);
  catch_up(s, on.thread);
  judgment j;
  j.library_stream = s.library_stream;
  if (current != nullptr) {
    const stream_state& c = state(*current);
    const std::uint64_t calls = entry(c.known, c.index);
    const std::uint64_t seen = entry(s.known, c.index);
    j.current_has_work = calls != 0;
    j.unseen = calls > seen ? calls - seen : 0;
    j.ordered = j.unseen == 0;
    j.implicit = s.legacy && c.blocking && c.device == s.device;
  }
  if (s.known.size() <= s.index) s.known.resize(s.index + 1, 0);
  ++s.known[s.index];
  return j;
}

void stream_order::event_recorded(std::uintptr_t event, const stream_at& on) {
  const std::lock_guard lock(mutex_);
  stream_state& s = state(on);
  catch_up(s, on.thread);
  events_[event] = s.known;
}

void stream_order::event_waited(std::uintptr_t event, const stream_at& waiting) {
  const std::lock_guard lock(mutex_);
  stream_state& s = state(waiting);
  catch_up(s, waiting.thread);
  if (const auto recorded = events_.find(event); recorded != events_.end()) join(s.known, recorded->second);
}

void stream_order::event_destroyed(std::uintptr_t event) {
  const std::lock_guard lock(mutex_);
  events_.erase(event);
}

void stream_order::value_written(std::uintptr_t address, const stream_at& on) {
  const std::lock_guard lock(mutex_);
  stream_state& s = state(on);
  catch_up(s, on.thread);
  values_[address] = s.known;
}

void stream_order::value_waited(std::uintptr_t address, const stream_at& waiting) {
  const std::lock_guard lock(mutex_);
  stream_state& s = state(waiting);
  catch_up(s, waiting.thread);
  if (const auto written = values_.find(address); written != values_.end()) join(s.known, written->second);
}

namespace {
std::uint64_t next_generation() noexcept {
  static std::uint64_t generation = 0; // under the order's lock
  return ++generation;
}
} // namespace

void stream_order::host_waited_stream(std::uint64_t thread, const stream_at& stream) {
  const std::lock_guard lock(mutex_);
  host_state& h = hosts_[thread];
  if (const stream_state* s = find(stream)) join(h.known, s->known);
  // Waiting for the legacy stream waits for what its next work would wait for.
  if (stream.stream == legacy_stream)
    for (const auto& [k, other] : streams_)
      if (other.device == stream.device && other.blocking) join(h.known, other.known);
  h.generation = next_generation();
}

void stream_order::host_waited_event(std::uint64_t thread, std::uintptr_t event) {
  const std::lock_guard lock(mutex_);
  const auto recorded = events_.find(event);
  if (recorded == events_.end()) return;
  host_state& h = hosts_[thread];
  join(h.known, recorded->second);
  h.generation = next_generation();
}

void stream_order::host_waited_device(std::uint64_t thread, int device) {
  const std::lock_guard lock(mutex_);
  host_state& h = hosts_[thread];
  for (const auto& [k, s] : streams_)
    if (s.device == device) join(h.known, s.known);
  h.generation = next_generation();
}

void stream_order::forget_thread(std::uint64_t thread) {
  const std::lock_guard lock(mutex_);
  hosts_.erase(thread);
  std::erase_if(streams_, [&](const auto& item) {
    return item.first.stream == per_thread_stream && item.first.thread == thread;
  });
}

void stream_order::assume_all_ordered() {
  const std::lock_guard lock(mutex_);
  clock all;
  for (const auto& [k, s] : streams_) join(all, s.known);
  for (auto& [k, s] : streams_) join(s.known, all);
  for (auto& [t, h] : hosts_) {
    join(h.known, all);
    h.generation = next_generation();
  }
}

std::size_t stream_order::streams() const {
  const std::lock_guard lock(mutex_);
  return streams_.size();
}

} // namespace streamlike::check

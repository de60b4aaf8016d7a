#include "stream_order.hpp"

#include "call_kind.hpp"

#include <algorithm>

namespace streamlike::check {

stream_order::key stream_order::key_of(const stream_at& s) noexcept {
  if (s.stream == per_thread_stream) return {s.stream, s.device, s.thread}; // one per thread and context
  if (s.stream == legacy_stream) return {s.stream, s.device, 0};            // one per context
  return {s.stream, 0, 0};                                                  // a handle names one stream
}

std::uint64_t stream_order::entry(const clock& c, std::uint32_t index) noexcept {
  const auto at =
      std::lower_bound(c.begin(), c.end(), index, [](const auto& e, std::uint32_t i) { return e.first < i; });
  return at != c.end() && at->first == index ? at->second : 0;
}

void stream_order::join(clock& into, const clock& from) const {
  if (from.empty()) return;
  clock out;
  out.reserve(into.size() + from.size());
  auto a = into.begin();
  auto b = from.begin();
  while (a != into.end() || b != from.end()) {
    std::pair<std::uint32_t, std::uint64_t> next;
    if (b == from.end() || (a != into.end() && a->first < b->first))
      next = *a++;
    else if (a == into.end() || b->first < a->first)
      next = *b++;
    else
      next = {a->first, std::max((a++)->second, (b++)->second)};
    if (alive_[next.first]) out.push_back(next); // a destroyed stream is never asked about again
  }
  into.swap(out);
}

void stream_order::join(clock& into, const stream_state& from) const {
  join(into, from.known);
  const std::uint64_t calls = from.calls.load(std::memory_order_relaxed);
  if (calls == 0 || !alive_[from.index]) return;
  const auto at = std::lower_bound(into.begin(), into.end(), from.index,
                                   [](const auto& e, std::uint32_t i) { return e.first < i; });
  if (at != into.end() && at->first == from.index)
    at->second = std::max(at->second, calls);
  else
    into.insert(at, {from.index, calls});
}

stream_order::stream_state& stream_order::state(const stream_at& s) {
  const key k = key_of(s);
  if (const auto found = streams_.find(k); found != streams_.end()) return *found->second;
  stream_state& st = states_.emplace_back();
  st.index = static_cast<std::uint32_t>(states_.size() - 1);
  alive_.push_back(true);
  st.device = s.device;
  st.legacy = s.stream == legacy_stream;
  // The default streams synchronize with the legacy one; a stream made while the checker did not
  // see it is taken for non-blocking, the answer that orders the least.
  st.blocking = is_default_stream(s.stream);
  streams_.emplace(k, &st);
  changed();
  return st;
}

const stream_order::stream_state* stream_order::find(const stream_at& s) const {
  const auto at = streams_.find(key_of(s));
  return at == streams_.end() ? nullptr : at->second;
}

stream_order::stream_state* stream_order::find_legacy(int device) const {
  const auto at = streams_.find(key{legacy_stream, device, 0});
  return at == streams_.end() ? nullptr : at->second;
}

void stream_order::note_blocking_work(const stream_state& s) noexcept {
  if (!s.blocking || s.legacy) return;
  std::atomic<std::uint64_t>& work =
      s.device >= 0 && s.device < tracked_devices ? blocking_work_[s.device] : untracked_blocking_work_;
  work.store(work.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

std::uint64_t stream_order::blocking_work(int device) const noexcept {
  return (device >= 0 && device < tracked_devices ? blocking_work_[device] : untracked_blocking_work_)
      .load(std::memory_order_relaxed);
}

void stream_order::catch_up(stream_state& s, std::uint64_t thread) {
  if (const auto host = hosts_.find(thread); host != hosts_.end()) {
    const std::uint64_t generation = host->second->generation.load(std::memory_order_relaxed);
    if (s.host_thread.load(std::memory_order_relaxed) != thread ||
        s.host_generation.load(std::memory_order_relaxed) != generation) {
      join(s.known, host->second->known);
      s.host_thread.store(thread, std::memory_order_relaxed);
      s.host_generation.store(generation, std::memory_order_relaxed);
    }
  }
  if (s.legacy) {
    // Work on the legacy default stream waits for the work of every blocking stream of its context.
    const std::uint64_t work = blocking_work(s.device);
    if (work != s.blocking_seen.load(std::memory_order_relaxed)) {
      for (const auto& [k, other] : streams_)
        if (other->device == s.device && other->blocking && !other->legacy) join(s.known, *other);
      s.blocking_seen.store(work, std::memory_order_relaxed);
    }
  } else if (s.blocking) {
    // And a blocking stream's work waits for the legacy stream's.
    if (const stream_state* legacy = find_legacy(s.device)) {
      const std::uint64_t calls = legacy->calls.load(std::memory_order_relaxed);
      if (calls != s.legacy_seen.load(std::memory_order_relaxed)) {
        join(s.known, *legacy);
        s.legacy_seen.store(calls, std::memory_order_relaxed);
        note_blocking_work(s);
      }
    }
  }
}

std::uint64_t stream_order::next_id() noexcept {
  static std::atomic<std::uint64_t> made{0};
  return made.fetch_add(1, std::memory_order_relaxed) + 1;
}

stream_order::recent_stream& stream_order::recent() noexcept {
  static thread_local recent_stream last;
  // Its address computed once: GCC computes a thread-local's address again further down the same
  // path (in a library loaded with dlopen, a call into the loader each); the empty asm makes it a
  // value to keep.
  recent_stream* r = &last;
  asm("" : "+r"(r));
  return *r;
}

bool stream_order::queue_recent(const stream_at& on) noexcept {
  const recent_stream& r = recent();
  if (r.order != id_ || r.version != version_.load(std::memory_order_acquire) || r.thread != on.thread ||
      !(r.stream == key_of(on)))
    return false;
  stream_state& s = *r.state;
  if (r.host != nullptr &&
      (s.host_thread.load(std::memory_order_relaxed) != on.thread ||
       s.host_generation.load(std::memory_order_relaxed) != r.host->generation.load(std::memory_order_relaxed)))
    return false; // the host waited since: its order to pass on
  if (s.legacy) {
    if (blocking_work(s.device) != s.blocking_seen.load(std::memory_order_relaxed)) return false;
  } else if (s.blocking && r.legacy != nullptr &&
             r.legacy->calls.load(std::memory_order_relaxed) != s.legacy_seen.load(std::memory_order_relaxed)) {
    return false;
  }
  // Threads queuing on one stream at once may lose a count here: a call less known to come first.
  s.calls.store(s.calls.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  note_blocking_work(s);
  return true;
}

void stream_order::remember(const stream_at& on, stream_state& s) {
  recent_stream& r = recent();
  r.order = id_;
  r.version = version_.load(std::memory_order_relaxed);
  r.stream = key_of(on);
  r.thread = on.thread;
  r.state = &s;
  const auto host = hosts_.find(on.thread);
  r.host = host == hosts_.end() ? nullptr : host->second;
  r.legacy = find_legacy(s.device);
}

void stream_order::forget(stream_state& s) {
  alive_[s.index] = false;
  s.known.clear();
  s.known.shrink_to_fit();
  changed();
}

void stream_order::stream_created(std::uintptr_t stream, int device, bool blocking, bool library_stream) {
  const std::lock_guard lock(mutex_);
  if (const auto old = streams_.find(key_of({stream, device, 0})); old != streams_.end()) {
    forget(*old->second);
    streams_.erase(old);
  }
  stream_state& s = state({stream, device, 0});
  s.blocking = blocking;
  s.library_stream = library_stream;
}

void stream_order::stream_destroyed(std::uintptr_t stream) {
  if (is_default_stream(stream)) return;
  const std::lock_guard lock(mutex_);
  if (const auto found = streams_.find(key_of({stream, 0, 0})); found != streams_.end()) {
    forget(*found->second);
    streams_.erase(found);
  }
}

stream_order::judgment stream_order::queue_locked(const stream_at& on, const stream_at* current) {
  const std::lock_guard lock(mutex_);
  stream_state& s = state(on);
  catch_up(s, on.thread);
  judgment j;
  j.library_stream = s.library_stream;
  if (current != nullptr) {
    const stream_state& c = state(*current);
    const std::uint64_t calls = c.calls.load(std::memory_order_relaxed);
    const std::uint64_t seen = entry(s.known, c.index);
    j.current_has_work = calls != 0;
    j.unseen = calls > seen ? calls - seen : 0;
    j.ordered = j.unseen == 0;
    j.implicit = s.legacy && c.blocking && c.device == s.device;
  }
  s.calls.fetch_add(1, std::memory_order_relaxed);
  note_blocking_work(s);
  remember(on, s);
  return j;
}

void stream_order::take_clock(std::unordered_map<std::uintptr_t, clock>& marks, std::uintptr_t mark,
                              const stream_at& on) {
  const std::lock_guard lock(mutex_);
  stream_state& s = state(on);
  catch_up(s, on.thread);
  clock& taken = marks[mark];
  taken.clear();
  join(taken, s);
}

void stream_order::join_clock(const std::unordered_map<std::uintptr_t, clock>& marks, std::uintptr_t mark,
                              const stream_at& waiting) {
  const std::lock_guard lock(mutex_);
  stream_state& s = state(waiting);
  catch_up(s, waiting.thread);
  if (const auto taken = marks.find(mark); taken != marks.end()) {
    join(s.known, taken->second);
    note_blocking_work(s);
  }
}

void stream_order::event_recorded(std::uintptr_t event, const stream_at& on) { take_clock(events_, event, on); }

void stream_order::event_waited(std::uintptr_t event, const stream_at& waiting) { join_clock(events_, event, waiting); }

void stream_order::event_destroyed(std::uintptr_t event) {
  const std::lock_guard lock(mutex_);
  events_.erase(event);
}

void stream_order::value_written(std::uintptr_t address, const stream_at& on) { take_clock(values_, address, on); }

void stream_order::value_waited(std::uintptr_t address, const stream_at& waiting) {
  join_clock(values_, address, waiting);
}

stream_order::host_state& stream_order::host(std::uint64_t thread) {
  const auto [at, made] = hosts_.try_emplace(thread, nullptr);
  if (made) {
    at->second = &hosts_made_.emplace_back();
    changed();
  }
  return *at->second;
}

void stream_order::waited(host_state& h) {
  // Unique across the host clocks ever made: a new thread given an old one's id is joined again.
  h.generation.store(++generations_, std::memory_order_relaxed);
}

void stream_order::host_waited_stream(std::uint64_t thread, const stream_at& stream) {
  const std::lock_guard lock(mutex_);
  host_state& h = host(thread);
  if (const stream_state* s = find(stream)) join(h.known, *s);
  // Waiting for the legacy stream waits for what its next work would wait for.
  if (stream.stream == legacy_stream)
    for (const auto& [k, other] : streams_)
      if (other->device == stream.device && other->blocking) join(h.known, *other);
  waited(h);
}

void stream_order::host_waited_event(std::uint64_t thread, std::uintptr_t event) {
  const std::lock_guard lock(mutex_);
  const auto recorded = events_.find(event);
  if (recorded == events_.end()) return;
  host_state& h = host(thread);
  join(h.known, recorded->second);
  waited(h);
}

void stream_order::host_waited_device(std::uint64_t thread, int device) {
  const std::lock_guard lock(mutex_);
  host_state& h = host(thread);
  for (const auto& [k, s] : streams_)
    if (s->device == device) join(h.known, *s);
  waited(h);
}

void stream_order::forget_thread(std::uint64_t thread) {
  const std::lock_guard lock(mutex_);
  if (hosts_.erase(thread) != 0) changed();
  std::erase_if(streams_, [&](const auto& item) {
    if (item.first.stream != per_thread_stream || item.first.thread != thread) return false;
    forget(*item.second);
    return true;
  });
}

void stream_order::assume_all_ordered() {
  const std::lock_guard lock(mutex_);
  clock all;
  for (const auto& [k, s] : streams_) join(all, *s);
  for (auto& [k, s] : streams_) {
    join(s->known, all);
    s->host_generation.store(0, std::memory_order_relaxed); // joined again at its next work
  }
  for (auto& [t, h] : hosts_) {
    join(h->known, all);
    waited(*h);
  }
}

std::size_t stream_order::streams() const {
  const std::lock_guard lock(mutex_);
  return streams_.size();
}

} // namespace streamlike::check

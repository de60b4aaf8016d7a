// streamcheck: the order CUDA gives the work of a process's streams, followed call by call
// (docs/streamcheck.md, "The rule: order"). Each stream carries a vector clock: how many calls of
// every stream it is known to come after. Work queued on a stream advances its own entry; an
// event records a stream's clock and a wait on it joins that clock into the waiting stream; the
// host joins what it waited for (stream, event and context synchronization, synchronous copies)
// and passes it on to the work it queues next; the legacy default stream and the blocking streams
// of its context join each other (CUDA's implicit synchronization); memory words written and
// waited on in stream order (cuStreamWriteValue/WaitValue) order like events. Pure: no CUDA call,
// no CUPTI type.
#ifndef STREAMLIKE_SRC_STREAMCHECK_STREAM_ORDER_HPP
#define STREAMLIKE_SRC_STREAMCHECK_STREAM_ORDER_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace streamlike::check {

/// A stream as the order knows it: a canonical handle (call_kind.hpp: 0x1 the legacy default
/// stream, 0x2 the per-thread one), the device of the call's context (the default streams are one
/// per context) and the calling thread (the per-thread default stream is one per thread).
struct stream_at {
  std::uintptr_t stream = 0;
  int device = 0;
  std::uint64_t thread = 0;
};

class stream_order {
public:
  /// What a call queued on a stream learned of its order with the current stream.
  struct judgment {
    bool ordered = true;           // everything queued on the current stream comes before it
    std::uint64_t unseen = 0;      // how many of the current stream's calls it does not come after
    bool current_has_work = false; // whether anything was queued on the current stream at all
    bool implicit = false;         // ordered by the legacy stream's implicit synchronization only
    bool library_stream = false;   // the stream was made by a library that orders its own streams
  };

  /// A stream was made: `blocking` unless made CU_STREAM_NON_BLOCKING; `library_stream` when the
  /// code that made it is a library that orders its own streams (NCCL, cuDNN, XLA, ...).
  void stream_created(std::uintptr_t stream, int device, bool blocking, bool library_stream);
  /// A stream was destroyed: its handle may be made again, as a new stream.
  void stream_destroyed(std::uintptr_t stream);

  /// Work queued on `on` by `on.thread`: advances the stream. With `current` (the calling thread's
  /// current stream, when it is another, non-default stream) it says whether the work comes after
  /// all of `current`'s.
  judgment queue(const stream_at& on, const stream_at* current) {
    // The lock-free path inline, so that the every-launch call pays no frame of the locked one.
    if (current == nullptr && queue_recent(on)) [[likely]]
      return {};
    return queue_locked(on, current);
  }

  void event_recorded(std::uintptr_t event, const stream_at& on);
  void event_waited(std::uintptr_t event, const stream_at& waiting);
  void event_destroyed(std::uintptr_t event);
  /// cuStreamWriteValue*: `address` is written after the work queued on `on` so far.
  void value_written(std::uintptr_t address, const stream_at& on);
  /// cuStreamWaitValue*: `waiting` waits for a value at `address` (taken to be the last written).
  void value_waited(std::uintptr_t address, const stream_at& waiting);

  /// The host thread waited, successfully, for a stream, an event or every stream of a device.
  void host_waited_stream(std::uint64_t thread, const stream_at& stream);
  void host_waited_event(std::uint64_t thread, std::uintptr_t event);
  void host_waited_device(std::uint64_t thread, int device);

  /// A thread exited: its host clock and its per-thread default streams are forgotten, so a new
  /// thread given the same id inherits nothing.
  void forget_thread(std::uint64_t thread);
  /// Calls went unseen (a pause): everything queued so far is taken to be ordered, so that nothing
  /// unseen is reported.
  void assume_all_ordered();

  /// How many streams the order follows now (for tests).
  [[nodiscard]] std::size_t streams() const;

private:
  // A vector clock, sparse: (stream index, calls known to come before), sorted by index. Entries of
  // destroyed streams are dropped as clocks are joined, so that a clock holds live streams only.
  using clock = std::vector<std::pair<std::uint32_t, std::uint64_t>>;

  // Never freed once made (kept in states_ after the stream is destroyed), so that the lock-free
  // path of queue() may keep a pointer to one; what that path reads and writes is atomic.
  struct stream_state {
    std::uint32_t index = 0; // this stream's entry in every clock: never reused
    int device = 0;
    bool blocking = true;
    bool library_stream = false;
    bool legacy = false;
    std::atomic<std::uint64_t> calls{0};           // the calls queued on it
    clock known;                                   // the other streams' calls known to come before
    std::atomic<std::uint64_t> host_thread{0};     // the host clock last joined: its thread
    std::atomic<std::uint64_t> host_generation{0}; // and generation
    std::atomic<std::uint64_t> legacy_seen{0};     // blocking streams: the legacy stream's calls last joined
    std::atomic<std::uint64_t> blocking_seen{0};   // the legacy stream: its device's blocking work last joined
  };
  struct host_state {
    clock known;
    std::atomic<std::uint64_t> generation{0};
  };
  struct key {
    std::uintptr_t stream;
    int device;
    std::uint64_t thread;
    bool operator==(const key&) const = default;
  };
  struct key_hash {
    std::size_t operator()(const key& k) const noexcept {
      return std::hash<std::uintptr_t>()(k.stream) ^ (std::hash<std::uint64_t>()(k.thread) << 1) ^
             static_cast<std::size_t>(k.device) * 0x9e3779b97f4a7c15ull;
    }
  };
  // The lock-free path's memory of the last stream a thread queued on, valid while version_ holds.
  struct recent_stream {
    std::uint64_t order = 0; // the order's id: an order made where another was is another
    std::uint64_t version = 0;
    key stream{0, 0, 0};
    std::uint64_t thread = 0;
    stream_state* state = nullptr;
    const host_state* host = nullptr;     // the thread's host clock, if it has one
    const stream_state* legacy = nullptr; // its device's legacy stream, if seen
  };
  static constexpr int tracked_devices = 64; // devices with a lock-free count of blocking work

  static key key_of(const stream_at& s) noexcept;
  stream_state& state(const stream_at& s); // made on first sight; lock held
  const stream_state* find(const stream_at& s) const;
  stream_state* find_legacy(int device) const;
  void catch_up(stream_state& s, std::uint64_t thread); // the host's and the legacy stream's order
  void join(clock& into, const clock& from) const;
  void join(clock& into, const stream_state& from) const; // its clock and its own calls
  static std::uint64_t entry(const clock& c, std::uint32_t index) noexcept;
  void note_blocking_work(const stream_state& s) noexcept;
  [[nodiscard]] std::uint64_t blocking_work(int device) const noexcept;
  bool queue_recent(const stream_at& on) noexcept; // the lock-free path: false when it cannot decide
  judgment queue_locked(const stream_at& on, const stream_at* current); // queue() under the lock
  void remember(const stream_at& on, stream_state& s);                  // lock held
  void forget(stream_state& s);                                         // destroyed: no clock keeps it; lock held
  // An event record or memory write: `mark` takes `on`'s clock. A wait: `waiting` joins it.
  void take_clock(std::unordered_map<std::uintptr_t, clock>& marks, std::uintptr_t mark, const stream_at& on);
  void join_clock(const std::unordered_map<std::uintptr_t, clock>& marks, std::uintptr_t mark,
                  const stream_at& waiting);
  host_state& host(std::uint64_t thread); // made on first wait; lock held
  void waited(host_state& h);             // its clock grew; lock held
  static recent_stream& recent() noexcept;
  void changed() noexcept { version_.fetch_add(1, std::memory_order_release); }

  const std::uint64_t id_ = next_id();
  static std::uint64_t next_id() noexcept;
  mutable std::mutex mutex_;
  std::atomic<std::uint64_t> version_{1}; // changes whenever a stream or host clock is made or forgotten
  std::uint64_t generations_ = 0;
  std::deque<stream_state> states_;
  std::deque<host_state> hosts_made_;
  std::vector<bool> alive_; // by stream index
  std::unordered_map<key, stream_state*, key_hash> streams_;
  std::unordered_map<std::uintptr_t, clock> events_; // event -> the clock it recorded
  std::unordered_map<std::uintptr_t, clock> values_; // memory word -> the clock of its last write
  std::unordered_map<std::uint64_t, host_state*> hosts_;
  std::atomic<std::uint64_t> blocking_work_[tracked_devices] = {};
  std::atomic<std::uint64_t> untracked_blocking_work_{0}; // devices beyond tracked_devices
};

} // namespace streamlike::check

#endif // STREAMLIKE_SRC_STREAMCHECK_STREAM_ORDER_HPP

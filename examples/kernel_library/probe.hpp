// probe.hpp: what the tests of examples/kernel_library/ use to see which stream an operation ran
// on, across frameworks (part of the example's modules, not of the library).
//
// The ordering probe: a gate (a flag in pinned, mapped host memory), a gated copy queued on the
// caller's stream (the device waits for the gate, then t = x), then the operation on t. Opened
// only after everything is queued, the gate holds the caller's stream: an operation queued on that
// stream reads x's values, one that ran on another stream read t before the copy and gives a
// wrong result. A gate opens by itself after its timeout (timed_out() then says so).
#ifndef KERNEL_LIBRARY_PROBE_HPP
#define KERNEL_LIBRARY_PROBE_HPP

#include <streamlike/stream_view.hpp>

#include <cstdint>

namespace kernel_library::probe {

/// Pinned host memory the device reads: [0] open (host writes 1), [1] timed out, [2] started.
class gate {
public:
  gate();
  ~gate();
  gate(const gate&) = delete;
  gate& operator=(const gate&) = delete;

  /// The flag's address, for gated_copy (also from an XLA FFI attribute).
  [[nodiscard]] std::uintptr_t address() const noexcept;
  void open() noexcept;
  /// Closed again, for another use; the previous use must have ended.
  void reset() noexcept;
  [[nodiscard]] bool started() const noexcept;
  [[nodiscard]] bool timed_out() const noexcept;

private:
  volatile int* state_ = nullptr;
};

/// Queued on `stream`: waits until the gate at `gate_address` opens (or `timeout_ns` pass), then
/// t[i] = x[i] for i < n.
void gated_copy(std::uintptr_t gate_address, const float* x, float* t, std::int64_t n, std::uint64_t timeout_ns,
                streamlike::stream_view stream);

/// Queued on `stream`: *out = 1 if `stream` was capturing when this was queued, else 0 (decided on
/// the host, so a graph replays the value it was recorded with).
void write_capturing(int* out, streamlike::stream_view stream);

} // namespace kernel_library::probe

#endif // KERNEL_LIBRARY_PROBE_HPP

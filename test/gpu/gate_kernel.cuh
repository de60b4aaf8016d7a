// The gate of the GPU tests: a kernel that spins until the host sets state[0] (open), or gives up
// after timeout_ns and says so in state[1]; state[2] says it started, state[3] that it returned.
// The state lives in host memory the device can address (mapped or pinned), so the host opens the
// gate while the kernel runs. Work queued behind it on a stream cannot run before the test says
// so, however slow the host or fast the device.
//
// One source for every test that holds a stream: nvcc compiles it where test/gpu/gpu_support.cu
// includes it (the gate class of gpu_support.hpp), and NVRTC, through CuPy, from this file's text
// (test/bridge/device_gate.py, test/package/gpu_event_capture.py). So it includes nothing and
// names no type of a standard header (and has an include guard, not #pragma once, which a compiler
// warns about in a main file).
#ifndef STREAMLIKE_TEST_GATE_KERNEL_CUH
#define STREAMLIKE_TEST_GATE_KERNEL_CUH

extern "C" __global__ void streamlike_test_gate(volatile int* state, unsigned long long timeout_ns) {
  unsigned long long start = 0;
  unsigned long long now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  state[2] = 1;
  __threadfence_system();
  while (state[0] == 0) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start > timeout_ns) {
      state[1] = 1;
      break;
    }
    __nanosleep(1000);
  }
  __threadfence_system();
  state[3] = 1;
}

#endif

// A CUDA driver of two calls, named libcuda.so.1, for the CPU test of what python -m streamlike.check
// sees at a Python program's exit (test/streamcheck/cli.py): a process that initialized "CUDA"
// without the checker library. cuDeviceGetCount answers as the real driver does before and after
// cuInit, which is all the command's bootstrap (python/streamlike/_check_child.py) asks.
extern "C" {

static bool initialized = false;

__attribute__((visibility("default"))) int cuInit(unsigned int) {
  initialized = true;
  return 0;
}

__attribute__((visibility("default"))) int cuDeviceGetCount(int* count) {
  if (!initialized) return 3; // CUDA_ERROR_NOT_INITIALIZED
  *count = 0;
  return 0;
}

} // extern "C"

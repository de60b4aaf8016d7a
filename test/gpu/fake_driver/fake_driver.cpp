// A library named like the CUDA driver (libcuda.so.1) that has none of its functions: first on the
// library path, it makes the CUDA runtime see an installed but unusable driver. start_checks_test.py
// runs a gpu program with it, which must fail rather than skip.
extern "C" int streamlike_test_not_a_cuda_driver() { return 0; }

// The main of every program of the gpu suite that needs one device (gpu_suite.cpp runs it; without
// a device it exits 77, which meson reports as SKIP). The multi-GPU program has its own main.
#include "gpu_support.hpp"

int main(int argc, char** argv) { return gpu_test::run_suite(argc, argv, 1); }

// _create_floor: the floor bench_package.py measures Stream.create() + drop against, a raw
// cudaStreamCreateWithPriority + cudaStreamDestroy called from a C extension function with no
// arguments, as Stream.create() is. It lives here, not in the package: the product ships nothing
// for its benchmarks. A failed call raises RuntimeError naming the call and CUDA's error.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cuda_runtime_api.h>

#include <string>

namespace {

PyObject* failed(const char* call, cudaError_t status) {
  const std::string message = std::string("_create_floor.create_destroy: ") + call +
                              " failed: " + cudaGetErrorName(status) + ": " + cudaGetErrorString(status);
  PyErr_SetString(PyExc_RuntimeError, message.c_str());
  return nullptr;
}

PyObject* create_destroy(PyObject*, PyObject*) {
  cudaStream_t stream = nullptr;
  if (const cudaError_t status = cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking, 0);
      status != cudaSuccess) {
    return failed("cudaStreamCreateWithPriority", status);
  }
  if (const cudaError_t status = cudaStreamDestroy(stream); status != cudaSuccess) {
    return failed("cudaStreamDestroy", status);
  }
  Py_RETURN_NONE;
}

PyMethodDef functions[] = {
    {"create_destroy", &create_destroy, METH_NOARGS,
     "cudaStreamCreateWithPriority(non_blocking, 0) + cudaStreamDestroy on the current device, nothing else."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT,
                      "_create_floor",
                      "The raw stream creation bench_package.py compares with.",
                      -1,
                      functions,
                      nullptr,
                      nullptr,
                      nullptr,
                      nullptr};

} // namespace

PyMODINIT_FUNC PyInit__create_floor() { return PyModule_Create(&module); }

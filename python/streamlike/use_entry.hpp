// What a use block being entered on this thread hands the current-stream providers that run Python
// (CuPy's, cupy_provider.cpp): its stream object, and where a provider's Python error goes, so that
// the block (use.cpp) raises its error from it; and the guard around a provider's Python calls.
#ifndef STREAMLIKE_PACKAGE_USE_ENTRY_HPP
#define STREAMLIKE_PACKAGE_USE_ENTRY_HPP

#include <streamlike/python/detail/saved_error.hpp>
#include <streamlike/stream_view.hpp>

namespace streamlike_package {

namespace sd = streamlike::python::detail;

/// Where a provider's Python error goes while a use block is entered on this thread (the block
/// raises its error from it); nullptr elsewhere, where the error is dropped: a provider answers
/// the registry by status only.
inline thread_local sd::saved_error* provider_failure = nullptr;

/// Keeps and restores a pending Python exception around a provider's Python calls (the scope's
/// destructor may run while one propagates). An error the calls leave raised is handed to the use
/// block being entered (provider_failure), the first one only, else dropped.
class python_error_guard {
public:
  python_error_guard() noexcept : raised_(sd::saved_error::fetch()) {}
  ~python_error_guard() {
    if (provider_failure != nullptr && !*provider_failure && PyErr_Occurred() != nullptr) {
      *provider_failure = sd::saved_error::fetch();
    }
    PyErr_Clear();
    raised_.restore();
  }
  python_error_guard(const python_error_guard&) = delete;
  python_error_guard& operator=(const python_error_guard&) = delete;

private:
  sd::saved_error raised_;
};

/// The use block being entered on this thread: its stream object (borrowed, for that entry only)
/// and handle, which CuPy's provider hands to Stream.from_external; and where a provider's Python
/// error goes (provider_failure).
struct entering_block {
  PyObject* object = nullptr;
  void* handle = nullptr;
};
inline thread_local entering_block entering;

/// Marks a use block's entry on this thread for its lifetime (see entering_block).
class use_entry {
public:
  use_entry(PyObject* object, streamlike::stream_view stream, sd::saved_error& failure) noexcept
      : outer_(entering), outer_failure_(provider_failure) {
    entering = entering_block{object, static_cast<void*>(stream.get())};
    provider_failure = &failure;
  }
  ~use_entry() {
    entering = outer_;
    provider_failure = outer_failure_;
  }
  use_entry(const use_entry&) = delete;
  use_entry& operator=(const use_entry&) = delete;

private:
  entering_block outer_;
  sd::saved_error* outer_failure_;
};

} // namespace streamlike_package

#endif // STREAMLIKE_PACKAGE_USE_ENTRY_HPP

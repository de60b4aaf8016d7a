// streamcheck: where a reported call was made. Native frames (backtrace, symbolized with dladdr
// only for a call site seen the first time) and, in a Python process whose streamlike.check
// asked for it, the Python file:line of the calling thread when Python runs on it.
#ifndef STREAMLIKE_SRC_STREAMCHECK_CALL_SITE_HPP
#define STREAMLIKE_SRC_STREAMCHECK_CALL_SITE_HPP

#include "report.hpp"

#include <string>

namespace streamlike::check {

/// The calling thread's return addresses and Python location.
void take_call_site(void* context, call_site& site);
/// site.frames from site.addresses: "library: function+0xoffset", the frames of CUPTI, the CUDA
/// driver, the shared CUDA runtime and this library left out.
void symbolize(void* context, call_site& site);

/// The path of the shared object (or program) whose code made the CUDA call under way: the first
/// caller outside CUPTI, the CUDA driver and runtime, and this library. Empty if none is found.
[[nodiscard]] std::string calling_library();

/// The calling thread's Python location as a report would name it ("file.py:12"): with the GIL
/// held, or released around the CUDA call (it is taken back for the look). Empty on a thread
/// Python never ran on, during finalization, or before use_python_frames().
[[nodiscard]] std::string python_location();

/// Looks up the Python C API in the process (no link-time dependency on Python): from then on a
/// call site has the innermost Python frame outside site-packages and the standard library.
/// False when the process has no Python.
bool use_python_frames() noexcept;

} // namespace streamlike::check

#endif // STREAMLIKE_SRC_STREAMCHECK_CALL_SITE_HPP

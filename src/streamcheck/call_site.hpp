// streamcheck: where a reported call was made, besides its native return addresses
// (native_site.hpp): the symbolized native frames (dladdr, once per native call site) and, in a
// Python process whose streamlike.check asked for it, the calling thread's Python frames: a cheap
// identity of them for every report at a site that has them, and the file:line a report names
// for a site seen the first time.
#ifndef STREAMLIKE_SRC_STREAMCHECK_CALL_SITE_HPP
#define STREAMLIKE_SRC_STREAMCHECK_CALL_SITE_HPP

#include "report.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace streamlike::check {

/// The calling thread's Python frames, with the GIL held or released around the CUDA call (it is
/// taken back for the look): `identity` holds, per frame from the innermost to the one a report
/// names, its code object's address and its position, and no text; `location`, when not null, the
/// file:line a report names ("file.py:12"). Both empty on a thread Python never ran on, during
/// finalization, or before use_python_frames().
void take_python_site(void* context, std::vector<std::uintptr_t>& identity, std::string* location);

/// site.frames from site.addresses: "library: function+0xoffset", the frames of CUPTI, the CUDA
/// driver, the shared CUDA runtime and this library left out.
void symbolize(void* context, call_site& site);

/// The path of the shared object (or program) whose code made the CUDA call under way: the first
/// caller outside CUPTI, the CUDA driver and runtime, and this library. Empty if none is found.
[[nodiscard]] std::string calling_library();

/// take_python_site's location alone.
[[nodiscard]] std::string python_location();

/// Whether Python can be asked on the calling thread: the Python C API was found, and Python ran
/// on this thread (it has a thread state). Where it cannot, a provider that lives in Python (CuPy's)
/// has no answer here.
[[nodiscard]] bool python_reachable_here() noexcept;

/// Looks up the Python C API in the process (no link-time dependency on Python): from then on a
/// call site has the innermost Python frame outside site-packages and the standard library.
/// False when the process has no Python.
bool use_python_frames() noexcept;

} // namespace streamlike::check

#endif // STREAMLIKE_SRC_STREAMCHECK_CALL_SITE_HPP

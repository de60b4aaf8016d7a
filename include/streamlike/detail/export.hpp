// streamlike/detail/export.hpp: STREAMLIKE_API, what libstreamlike exports.
//
// The library is compiled with hidden visibility (-fvisibility=hidden -fvisibility-inlines-hidden),
// so it exports only what is marked STREAMLIKE_API: every function declared in a header and defined
// in src/, and the classes whose typeinfo and vtable must be one across the library boundary
// (streamlike::error, so that an exception thrown inside the library is caught by type in the
// program; the shared_stream control block, derived from in headers and in src/, each block
// released through its vtable by whichever side drops the last reference). Everything else the
// library's objects contain, the C++ runtime included when a toolchain links it in statically,
// stays inside: a library that re-exports the runtime's symbols (std::__once_callable, __cxa_*)
// interposes them for the whole process.
//
// The macro also applies on the using side, so that a program or extension module compiled with
// -fvisibility=hidden (nanobind's and pybind11's default) still sees these classes with default
// visibility. STREAMLIKE_STATIC (set by the build for a static libstreamlike, and passed on to its
// users) leaves it empty: a static library's symbols are the linking module's to export or not.
#ifndef STREAMLIKE_DETAIL_EXPORT_HPP
#define STREAMLIKE_DETAIL_EXPORT_HPP

#if defined(STREAMLIKE_STATIC)
#  define STREAMLIKE_API
#elif defined(__GNUC__) || defined(__clang__) // also nvcc with a GCC or Clang host compiler
#  define STREAMLIKE_API __attribute__((visibility("default")))
#else
#  define STREAMLIKE_API
#endif

#endif // STREAMLIKE_DETAIL_EXPORT_HPP

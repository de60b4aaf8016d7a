// streamcheck: the calling thread's native call site, its return addresses, taken for every report
// (repeats included: how a repeat is known), so cheap for a stack seen before. The first time, a
// DWARF unwind (libgcc's _Unwind_Backtrace) finds the return addresses and where in the stack
// each one lies; after that, a stack whose words at those places are those addresses is that site
// again, read without unwinding (docs/streamcheck.md, "Cost").
#ifndef STREAMLIKE_SRC_STREAMCHECK_NATIVE_SITE_HPP
#define STREAMLIKE_SRC_STREAMCHECK_NATIVE_SITE_HPP

#include "report.hpp"

namespace streamlike::check {

/// The most return addresses a native site has: the checker, CUPTI and the driver take a good
/// part of them.
inline constexpr int max_native_addresses = 64;

/// site.addresses: the calling thread's return addresses, innermost first, from the caller of
/// this function on.
void take_native_site(void* context, call_site& site);

/// The same, always by unwinding (the first sight's way, for the benchmark of a repeat).
void unwind_native_site(void* context, call_site& site);

} // namespace streamlike::check

#endif // STREAMLIKE_SRC_STREAMCHECK_NATIVE_SITE_HPP

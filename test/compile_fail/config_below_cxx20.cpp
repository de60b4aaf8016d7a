// Promise: compiled below C++20, streamlike's headers stop at once with one line that says what
// to add, instead of failing on `requires` and concepts (nvcc defaults to C++17).
// compile-flags: -std=c++17
// expected-error-re: streamlike needs C\+\+20: add -std=c\+\+20
// unexpected-error-re: requires|concept|does not name a type
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
#  include <streamlike/streamlike.hpp>
#endif

int main() { return 0; }

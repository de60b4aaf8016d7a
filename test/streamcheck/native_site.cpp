// streamcheck's native call sites, of this very process: a site taken again (read from the stack
// where its return addresses were) is the one unwinding finds, on this thread and on another, and
// another call chain is another site.
#include "../../src/streamcheck/native_site.hpp"

#include <doctest/doctest.h>

#include <thread>
#include <vector>

using namespace streamlike::check;

namespace {

using take_fn = void (*)(void*, call_site&);

// One call instruction for both ways, so that both see the same return addresses.
[[gnu::noinline]] std::vector<void*> site_in_a(take_fn take) {
  call_site site;
  take(nullptr, site);
  asm volatile(""); // no tail call: this frame stays under the call
  return site.addresses;
}

[[gnu::noinline]] std::vector<void*> site_in_b(take_fn take) {
  call_site site;
  take(nullptr, site);
  asm volatile("");
  return site.addresses;
}

[[gnu::noinline]] std::vector<void*> deeper(int levels, take_fn take) {
  std::vector<void*> found = levels == 0 ? site_in_a(take) : deeper(levels - 1, take);
  asm volatile("");
  return found;
}

// Taken by unwinding, then as a report takes it (again and again), from one call instruction:
// the same return addresses every time.
std::vector<std::vector<void*>> taken_four_times(std::vector<void*> (*chain)(take_fn)) {
  std::vector<std::vector<void*>> taken;
  for (int i = 0; i < 4; ++i) taken.push_back(chain(i == 0 ? unwind_native_site : take_native_site));
  return taken;
}

void same_either_way(std::vector<void*> (*chain)(take_fn)) {
  const auto taken = taken_four_times(chain);
  REQUIRE(taken[0].size() >= 3);
  for (int i = 1; i < 4; ++i) CHECK(taken[i] == taken[0]);
}

} // namespace

TEST_CASE("a site taken again is the site unwinding finds") {
  same_either_way(site_in_a);
  same_either_way(site_in_b);
  same_either_way([](take_fn take) { return deeper(3, take); });
  same_either_way([](take_fn take) { return deeper(7, take); });
}

// Four chains, each from a call instruction of its own.
[[gnu::noinline]] std::vector<void*> chain(int which) {
  std::vector<void*> found;
  switch (which) {
    case 0: found = site_in_a(take_native_site); break;
    case 1: found = site_in_b(take_native_site); break;
    case 2: found = deeper(2, take_native_site); break;
    default: found = deeper(3, take_native_site); break;
  }
  return found;
}

TEST_CASE("another call chain is another site") {
  std::vector<std::vector<void*>> sites[2]; // each chain taken twice, from one call instruction
  for (auto& round : sites)
    for (int which = 0; which < 4; ++which) round.push_back(chain(which));
  CHECK(sites[1] == sites[0]);
  const auto& site = sites[0];
  CHECK(site[0].front() != site[1].front()); // the return addresses into the two functions
  CHECK(site[2].front() == site[0].front()); // the same innermost caller, reached another way
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < i; ++j) CHECK(site[i] != site[j]);
}

TEST_CASE("the same chain on another thread, at another stack address, is the same site") {
  const auto on_a_thread = [] {
    std::vector<std::vector<void*>> taken;
    std::thread t([&taken] { taken = taken_four_times([](take_fn take) { return deeper(4, take); }); });
    t.join();
    REQUIRE(taken.size() == 4);
    for (int i = 1; i < 4; ++i) CHECK(taken[i] == taken[0]);
    return taken[1];
  };
  const std::vector<void*> first = on_a_thread();
  CHECK(on_a_thread() == first);               // the second thread reads the first one's layout
  CHECK(deeper(4, take_native_site) != first); // the main thread's outer frames differ
}

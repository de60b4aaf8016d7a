// Tests for streamlike/retain_until_done.hpp that need no GPU: without a driver the call throws
// streamlike::error naming itself, and the object it took is destroyed exactly once before the
// exception leaves (never leaked); an lvalue is copied, an rvalue moved.
#include <streamlike/retain_until_done.hpp>

#include "host_support.hpp"

#include <doctest/doctest.h>

#include <memory>

using host_test::check_no_device_error;
using host_test::device_present;
using host_test::fake_handle;
using host_test::thrown;

TEST_CASE("without a driver, retain_until_done throws and destroys what it took, once") {
  if (device_present()) return;
  auto value = std::make_shared<int>(1);
  const std::weak_ptr<int> watch = value;
  check_no_device_error(
      thrown<streamlike::error>([&] { streamlike::retain_until_done(fake_handle(0x1000), std::move(value)); }),
      "retain_until_done");
  CHECK(watch.expired()); // moved in, then destroyed: not leaked

  auto kept = std::make_shared<int>(2);
  check_no_device_error(thrown<streamlike::error>([&] { streamlike::retain_until_done(fake_handle(0x1000), kept); }),
                        "retain_until_done");
  CHECK(kept.use_count() == 1); // an lvalue is copied: the copy is gone, the original untouched
  CHECK(*kept == 2);
}

// streamcheck's options from its environment variables (no GPU).
#include "../../src/streamcheck/options.hpp"

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

using streamlike::check::allow_entry;
using streamlike::check::parse_options;

TEST_CASE("unset means off: nothing to check") {
  const auto o = parse_options(nullptr, nullptr, nullptr, nullptr, nullptr);
  CHECK_FALSE(o.any());
  CHECK_FALSE(o.fail);
  CHECK(o.output.empty());
  CHECK(o.allow.empty());
  CHECK_FALSE(parse_options("off", nullptr, nullptr, "0", nullptr).any());
  CHECK_FALSE(parse_options("", nullptr, nullptr, "", nullptr).any());
}

TEST_CASE("STREAMLIKE_CHECK picks the checks") {
  const auto ws = parse_options("wrong-stream", nullptr, nullptr, nullptr, nullptr);
  CHECK(ws.wrong_stream);
  CHECK_FALSE(ws.strict_stream); // judged by order
  CHECK_FALSE(ws.capture);
  const auto strict = parse_options("wrong-stream=strict,capture", nullptr, nullptr, nullptr, nullptr);
  CHECK(strict.wrong_stream);
  CHECK(strict.strict_stream);
  CHECK(strict.capture);
  CHECK_FALSE(parse_options("all", nullptr, nullptr, nullptr, nullptr).strict_stream);
  const auto c = parse_options("capture", nullptr, nullptr, nullptr, nullptr);
  CHECK(c.capture);
  CHECK_FALSE(c.wrong_stream);
  for (const char* both : {"wrong-stream,capture", " capture , wrong-stream ", "all", "1"}) {
    CAPTURE(both);
    const auto o = parse_options(both, nullptr, nullptr, nullptr, nullptr);
    CHECK(o.wrong_stream);
    CHECK(o.capture);
  }
}

TEST_CASE("output, JSON, fail and the allow-list") {
  const auto o = parse_options("all", "/tmp/r.txt", "/tmp/r.json", "1", "lib:libnccl,sym:ncclKernel, py:torch.nn");
  CHECK(o.output == "/tmp/r.txt");
  CHECK(o.json == "/tmp/r.json");
  CHECK(o.fail);
  REQUIRE(o.allow.size() == 3);
  CHECK(o.allow[0].what == allow_entry::by::library);
  CHECK(o.allow[0].text == "libnccl");
  CHECK(o.allow[1].what == allow_entry::by::symbol);
  CHECK(o.allow[1].text == "ncclKernel");
  CHECK(o.allow[2].what == allow_entry::by::python_module);
  CHECK(o.allow[2].text == "torch.nn");
}

TEST_CASE("a value the checker cannot read is named with what was expected") {
  const auto message = [](auto call) {
    try {
      call();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string check = message([] { (void)parse_options("wrong_stream", nullptr, nullptr, nullptr, nullptr); });
  CHECK(check.find("STREAMLIKE_CHECK='wrong_stream'") != std::string::npos);
  CHECK(check.find("wrong-stream (or wrong-stream=strict), capture, all") != std::string::npos);
  const std::string strict =
      message([] { (void)parse_options("wrong-stream=loose", nullptr, nullptr, nullptr, nullptr); });
  CHECK(strict.find("STREAMLIKE_CHECK='wrong-stream=loose'") != std::string::npos);
  const std::string fail = message([] { (void)parse_options("all", nullptr, nullptr, "yes", nullptr); });
  CHECK(fail.find("STREAMLIKE_CHECK_FAIL='yes'") != std::string::npos);
  const std::string allow = message([] { (void)parse_options("all", nullptr, nullptr, nullptr, "nccl"); });
  CHECK(allow.find("STREAMLIKE_CHECK_ALLOW='nccl'") != std::string::npos);
  CHECK(allow.find("lib:TEXT") != std::string::npos);
  const std::string empty = message([] { (void)parse_options("all", nullptr, nullptr, nullptr, "py:"); });
  CHECK(empty.find("non-empty TEXT") != std::string::npos);
}

TEST_CASE("%p in a file name is the process id: one file per process of a checked suite") {
  CHECK(streamlike::check::with_pid("/tmp/check-%p.json", 4242) == "/tmp/check-4242.json");
  CHECK(streamlike::check::with_pid("%p/%p", 7) == "7/7");
  CHECK(streamlike::check::with_pid("plain.json", 7) == "plain.json");
  CHECK(streamlike::check::with_pid("100%", 7) == "100%");
  CHECK(streamlike::check::with_pid("", 7).empty());
}

TEST_CASE("py:MODULE names a module, dotted; anything else is named with what was expected") {
  for (const char* good : {"py:torch", "py:torch.nn", "py:my_pkg.sub2", "py:\xc3\xa9t\xc3\xa9"}) {
    const std::string what = good;
    INFO(what);
    CHECK(parse_options("all", nullptr, nullptr, nullptr, good).allow.size() == 1);
  }
  for (const char* bad : {"py:torch/nn", "py:.torch", "py:torch.", "py:torch..nn", "py:/env/torch", "py:torch nn"}) {
    const std::string what = bad;
    INFO(what);
    try {
      (void)parse_options("all", nullptr, nullptr, nullptr, bad);
      FAIL("accepted");
    } catch (const std::invalid_argument& e) {
      const std::string message = e.what();
      CHECK(message.find(std::string("STREAMLIKE_CHECK_ALLOW='") + bad + "'") != std::string::npos);
      CHECK(message.find("py:MODULE to name a module, dotted (py:torch.nn)") != std::string::npos);
    }
  }
}

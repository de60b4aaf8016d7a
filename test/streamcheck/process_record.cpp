// streamcheck's per-process record (no GPU): its fields in their order, null for a reason not given,
// the log's counts and reports carried whole, and the file replaced whole, no temporary left.
#include "../../src/streamcheck/process_record.hpp"

#include "../../src/streamcheck/report_log.hpp"

#include <doctest/doctest.h>

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace streamlike::check;

namespace {

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (const dirent* e = readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") names.emplace_back(e->d_name);
    closedir(d);
  }
  return names;
}

std::string read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

} // namespace

TEST_CASE("a process never checked: its reason, zero counts, no reports") {
  const process_facts p{42, 7, {"python", "-c", "say \"hi\""}};
  CHECK(process_record(p, false, "no CUDA driver", true, "") ==
        "{\"schema\": \"streamlike.check.process/1\", \"pid\": 42, \"ppid\": 7, \"argv\": [\"python\", \"-c\", \"say "
        "\\\"hi\\\"\"], \"checked\": false, \"why_unchecked\": \"no CUDA driver\", \"summarized\": true, "
        "\"wrong_stream\": 0, \"capture_breaker\": 0, \"allowed\": 0, \"reports\": []}\n");
}

TEST_CASE("a checked process: null reason, the log's counts and reports with their fix") {
  world w;
  report_log log({}, w);
  report r;
  r.what = report::kind::wrong_stream;
  r.api = "cuLaunchKernel";
  r.call = call_kind::launch;
  r.stream = legacy_stream;
  REQUIRE(log.record(r) == verdict::reported);
  const std::string record = process_record({1, 2, {}}, true, "", false, log.json());
  CHECK(record.starts_with("{\"schema\": \"streamlike.check.process/1\", \"pid\": 1, \"ppid\": 2, \"argv\": [], "
                           "\"checked\": true, \"why_unchecked\": null, \"summarized\": false, \"wrong_stream\": 1, "
                           "\"capture_breaker\": 0, \"allowed\": 0, \"reports\": ["));
  CHECK(record.find("\"api\": \"cuLaunchKernel\"") != std::string::npos);
  CHECK(record.find("\"fix\": \"pass the current stream") != std::string::npos);
  CHECK(record.ends_with("]}\n"));
}

TEST_CASE("this process: its pid, parent and arguments") {
  const process_facts p = this_process();
  CHECK(p.pid == static_cast<long>(getpid()));
  CHECK(p.ppid == static_cast<long>(getppid()));
  REQUIRE_FALSE(p.argv.empty());
  CHECK(p.argv[0].find("streamcheck_process_record") != std::string::npos);
}

TEST_CASE("the record is replaced whole, and a folder it cannot write in is named") {
  char dir[] = "/tmp/process_record.XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  std::string error;
  REQUIRE(write_process_record(dir, 99, "first\n", error));
  REQUIRE(write_process_record(dir, 99, "second, longer\n", error));
  CHECK(names_in(dir) == std::vector<std::string>{"streamcheck-99.json"});
  CHECK(read(std::string(dir) + "/streamcheck-99.json") == "second, longer\n");
  std::remove((std::string(dir) + "/streamcheck-99.json").c_str());
  rmdir(dir);
  CHECK_FALSE(write_process_record(std::string(dir) + "/missing", 99, "x", error));
  CHECK(error.find(std::string(dir) + "/missing") != std::string::npos);
}

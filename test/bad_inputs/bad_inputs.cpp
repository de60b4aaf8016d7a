// The bad-input table: every run-time bad input of docs/bad-inputs.md, run through the real API.
//
// Each BAD_INPUT below is one row: an id, the exception type it must throw (exactly that type, not
// a base), fragments its what() must contain, when it applies (always, or only without / only with
// a CUDA device), and the call itself, whose source text becomes the row's "call" column. Test
// cases (suite `host`):
//   - every row throws what it says (rows for another machine are reported and skipped);
//   - docs/bad-inputs.md's generated run-time section is exactly what this program renders, so the
//     document cannot drift from the tests (fix: test/bad_inputs/bad_inputs.py --write --program
//     <this program>, which runs `<this program> --print-table`).
// The compile-time rows (test/compile_fail/*.cpp) are rendered and checked by bad_inputs.py.
#include <streamlike/streamlike.hpp>

#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#ifndef STREAMLIKE_SOURCE_ROOT
#  error "compile with -DSTREAMLIKE_SOURCE_ROOT=\"<repository root>\" (test/bad_inputs/meson.build does)"
#endif

using namespace streamlike; // the "call" column is written as a user with this directive would

namespace {

enum class when { always, without_device, with_device };

struct bad_input {
  std::string group;
  std::string id;
  std::string call;                   // the source text of the call, as run
  std::string gets;                   // "std::invalid_argument" or "streamlike::error"
  std::vector<std::string> fragments; // each must be in what(); "a|b": either a or b
  when condition;
  std::function<void()> run;
};

struct fixture {
  std::string name;
  std::string code;
};

// The objects some calls need, defined once and shown in the document as written here.
std::vector<fixture>& fixtures() {
  static std::vector<fixture> all;
  return all;
}
bool add_fixture(const char* name, const char* code) {
  fixtures().push_back({name, code});
  return true;
}
#define BAD_INPUT_FIXTURE(type, name, ...)    \
  type& name() {                              \
    static type value = [] { __VA_ARGS__ }(); \
    return value;                             \
  }                                           \
  [[maybe_unused]] const bool name##_registered = add_fixture(#name "()", #__VA_ARGS__)

BAD_INPUT_FIXTURE(shared_stream, moved_from_shared, shared_stream s = shared_stream::legacy_default();
                  shared_stream t = std::move(s); return s;);
BAD_INPUT_FIXTURE(unique_stream, moved_from_unique, unique_stream u; unique_stream t = std::move(u); return u;);
// adopt() of a unique_stream takes the handle without any CUDA call; release() gives it back, so
// the fake handle never reaches a driver.
BAD_INPUT_FIXTURE(unique_stream, released_unique,
                  unique_stream u = unique_stream::adopt(reinterpret_cast<cudaStream_t>(0x1234));
                  (void)u.release(); return u;);
BAD_INPUT_FIXTURE(const shared_stream, empty_shared, return shared_stream{};);
BAD_INPUT_FIXTURE(const unique_stream, empty_unique, return unique_stream{};);

#define BAD_INPUT_UNPAREN(...) __VA_ARGS__
// BAD_INPUT(group, id, exception type, (fragments...), when, call...): the call is the variadic
// tail so that it may contain commas; its text is the document's "call" column.
#define BAD_INPUT(group, id, type, fragments, condition, ...)                                         \
  bad_input {                                                                                         \
    group, id, #__VA_ARGS__, #type, std::vector<std::string>{BAD_INPUT_UNPAREN fragments}, condition, \
        [] { (void)(__VA_ARGS__); }                                                                   \
  }

// The table. Groups appear in the document in this order.
const std::vector<bad_input>& table() {
  static const std::vector<bad_input> rows = {
      // --- integer decoders (stream_encodings.hpp): std::invalid_argument naming the convention and the value
      BAD_INPUT("Integer decoders", "protocol-version-1", std::invalid_argument,
                ("streamlike: __cuda_stream__: invalid stream value (1, 5)", "expected protocol version 0"),
                when::always, from_cuda_stream_protocol(1, 5)),
      BAD_INPUT("Integer decoders", "protocol-version-negative", std::invalid_argument,
                ("__cuda_stream__: invalid stream value (-1, 0)", "expected protocol version 0"), when::always,
                from_cuda_stream_protocol(-1, 0)),
      BAD_INPUT("Integer decoders", "protocol-address-negative", std::invalid_argument,
                ("__cuda_stream__: invalid stream value (0, -1)", "expected a non-negative stream address"),
                when::always, from_cuda_stream_protocol(0, -1)),
      BAD_INPUT("Integer decoders", "protocol-address-int64-min", std::invalid_argument,
                ("__cuda_stream__: invalid stream value (0, -9223372036854775808)"), when::always,
                from_cuda_stream_protocol(0, std::numeric_limits<std::int64_t>::min())),
      BAD_INPUT("Integer decoders", "dlpack-zero", std::invalid_argument,
                ("streamlike: DLPack __dlpack__(stream=): invalid stream value 0", "0 is disallowed as ambiguous"),
                when::always, from_dlpack_stream(0)),
      BAD_INPUT("Integer decoders", "dlpack-minus-2", std::invalid_argument,
                ("DLPack __dlpack__(stream=): invalid stream value -2", "-1 (no synchronization)"), when::always,
                from_dlpack_stream(-2)),
      BAD_INPUT("Integer decoders", "dlpack-int64-min", std::invalid_argument,
                ("DLPack __dlpack__(stream=): invalid stream value -9223372036854775808"), when::always,
                from_dlpack_stream(std::numeric_limits<std::int64_t>::min())),
      BAD_INPUT("Integer decoders", "cai-zero", std::invalid_argument,
                ("streamlike: __cuda_array_interface__ v3 \"stream\": invalid stream value 0", "0 is disallowed"),
                when::always, from_cuda_array_interface_stream(0)),
      // -1 means "no synchronization" in DLPack, but CAI v3 has no such value.
      BAD_INPUT("Integer decoders", "cai-minus-1", std::invalid_argument,
                ("__cuda_array_interface__ v3 \"stream\": invalid stream value -1", "None (no synchronization)"),
                when::always, from_cuda_array_interface_stream(-1)),
      BAD_INPUT("Integer decoders", "cai-int64-min", std::invalid_argument,
                ("__cuda_array_interface__ v3 \"stream\": invalid stream value -9223372036854775808"), when::always,
                from_cuda_array_interface_stream(std::numeric_limits<std::int64_t>::min())),
      BAD_INPUT("Integer decoders", "address-minus-1", std::invalid_argument,
                ("streamlike: from_address (CUDA runtime handle): invalid stream value -1",
                 "expected a non-negative stream address"),
                when::always, from_address(-1)),
      // Narrow signed types are checked as they are, not wrapped into a huge address.
      BAD_INPUT("Integer decoders", "address-signed-char", std::invalid_argument,
                ("from_address (CUDA runtime handle): invalid stream value -128"), when::always,
                from_address(static_cast<signed char>(-128))),
      BAD_INPUT("Integer decoders", "address-int64-min", std::invalid_argument,
                ("from_address (CUDA runtime handle): invalid stream value -9223372036854775808"), when::always,
                from_address(std::numeric_limits<std::int64_t>::min())),

      // --- empty owners: streamlike::error (cudaErrorInvalidResourceHandle) naming the operation, never a crash
      BAD_INPUT("Empty owners", "shared-empty-view", streamlike::error,
                ("streamlike: shared_stream::view: the shared_stream is empty"), when::always, shared_stream{}.view()),
      BAD_INPUT("Empty owners", "shared-empty-get", streamlike::error, ("shared_stream::get", "is empty"), when::always,
                shared_stream{}.get()),
      BAD_INPUT("Empty owners", "shared-empty-device", streamlike::error, ("shared_stream::device", "is empty"),
                when::always, shared_stream{}.device()),
      BAD_INPUT("Empty owners", "shared-empty-id", streamlike::error, ("shared_stream::id", "is empty"), when::always,
                shared_stream{}.id()),
      BAD_INPUT("Empty owners", "shared-empty-flags", streamlike::error, ("shared_stream::flags", "is empty"),
                when::always, shared_stream{}.flags()),
      BAD_INPUT("Empty owners", "shared-empty-priority", streamlike::error, ("shared_stream::priority", "is empty"),
                when::always, shared_stream{}.priority()),
      BAD_INPUT("Empty owners", "shared-empty-get-stream", streamlike::error, ("shared_stream::view", "is empty"),
                when::always, get_stream(empty_shared())),
      BAD_INPUT("Empty owners", "shared-moved-from", streamlike::error,
                ("shared_stream::view", "(default-constructed or moved-from)"), when::always,
                moved_from_shared().view()),
      BAD_INPUT("Empty owners", "unique-empty-view", streamlike::error,
                ("streamlike: unique_stream::view: the unique_stream is empty"), when::always, unique_stream{}.view()),
      BAD_INPUT("Empty owners", "unique-empty-get", streamlike::error, ("unique_stream::get", "is empty"), when::always,
                unique_stream{}.get()),
      BAD_INPUT("Empty owners", "unique-empty-get-stream", streamlike::error, ("unique_stream::view", "is empty"),
                when::always, get_stream(empty_unique())),
      BAD_INPUT("Empty owners", "unique-moved-from", streamlike::error, ("unique_stream::view", "moved-from"),
                when::always, moved_from_unique().view()),
      BAD_INPUT("Empty owners", "unique-released", streamlike::error, ("unique_stream::get", "released"), when::always,
                released_unique().get()),

      // --- owning a default stream: std::invalid_argument (it is never destroyed, so it cannot be owned)
      BAD_INPUT(
          "Owning a default stream", "shared-adopt-zero", std::invalid_argument,
          ("streamlike: shared_stream::adopt: a default stream", "cannot be owned", "shared_stream::legacy_default()"),
          when::always, shared_stream::adopt(cudaStream_t{})),
      BAD_INPUT("Owning a default stream", "shared-adopt-legacy", std::invalid_argument,
                ("shared_stream::adopt", "cannot be owned"), when::always, shared_stream::adopt(cudaStreamLegacy)),
      BAD_INPUT("Owning a default stream", "shared-adopt-per-thread", std::invalid_argument,
                ("shared_stream::adopt", "cannot be owned"), when::always, shared_stream::adopt(cudaStreamPerThread)),
      BAD_INPUT("Owning a default stream", "unique-adopt-zero", std::invalid_argument,
                ("streamlike: unique_stream::adopt: a default stream", "cannot be owned"), when::always,
                unique_stream::adopt(cudaStream_t{})),
      BAD_INPUT("Owning a default stream", "unique-adopt-legacy", std::invalid_argument,
                ("unique_stream::adopt", "cannot be owned"), when::always, unique_stream::adopt(cudaStreamLegacy)),
      BAD_INPUT("Owning a default stream", "unique-adopt-per-thread", std::invalid_argument,
                ("unique_stream::adopt", "cannot be owned"), when::always, unique_stream::adopt(cudaStreamPerThread)),

      // --- sizes and pointers
      BAD_INPUT("Sizes and pointers", "pool-size-0", std::invalid_argument,
                ("streamlike: stream_pool: size 0", "expected at least one stream"), when::always, stream_pool(0)),
      BAD_INPUT("Sizes and pointers", "export-null-shared-ptr", std::invalid_argument,
                ("streamlike::export_stream: the std::shared_ptr is null", "expected a pointer to a stream"),
                when::always, export_stream(std::shared_ptr<stream_view>{})),

      // --- no driver or no device: streamlike::error naming the operation and the CUDA error
      BAD_INPUT(
          "Without a CUDA driver or device", "create-shared", streamlike::error,
          ("streamlike: shared_stream::create: cudaGetDevice failed", "cudaErrorInsufficientDriver|cudaErrorNoDevice"),
          when::without_device, shared_stream::create()),
      BAD_INPUT("Without a CUDA driver or device", "create-shared-device-0", streamlike::error,
                ("shared_stream::create: cudaGetDeviceCount failed", "cudaErrorInsufficientDriver|cudaErrorNoDevice"),
                when::without_device, shared_stream::create({.device = 0, .priority = 0, .non_blocking = false})),
      BAD_INPUT("Without a CUDA driver or device", "create-unique", streamlike::error,
                ("unique_stream::create: cudaGetDevice failed", "cudaErrorInsufficientDriver|cudaErrorNoDevice"),
                when::without_device, unique_stream::create()),
      BAD_INPUT("Without a CUDA driver or device", "create-pool", streamlike::error,
                ("shared_stream::create: cudaGetDevice failed", "cudaErrorInsufficientDriver|cudaErrorNoDevice"),
                when::without_device, stream_pool(4)),
      BAD_INPUT("Without a CUDA driver or device", "adopt-unqueryable-handle", streamlike::error,
                ("cudaStreamGetDevice failed", "cudaErrorInsufficientDriver|cudaErrorNoDevice"), when::without_device,
                shared_stream::adopt(reinterpret_cast<cudaStream_t>(0x1234))),
      // keep_alive makes no CUDA call; the first query asks (and caches) the stream's facts.
      BAD_INPUT("Without a CUDA driver or device", "keep-alive-unqueryable-view", streamlike::error,
                ("cudaStreamGetDevice failed", "cudaErrorInsufficientDriver|cudaErrorNoDevice"), when::without_device,
                shared_stream::keep_alive(stream_view{reinterpret_cast<cudaStream_t>(0x1234)}, 0).device()),
      BAD_INPUT("Without a CUDA driver or device", "view-device", streamlike::error,
                ("stream_view::device: cudaStreamGetDevice failed", "cudaErrorInsufficientDriver|cudaErrorNoDevice"),
                when::without_device, stream_view::legacy_default().device()),
      BAD_INPUT("Without a CUDA driver or device", "view-sync", streamlike::error,
                ("stream_view::sync: cudaStreamSynchronize failed", "cudaErrorInsufficientDriver|cudaErrorNoDevice"),
                when::without_device, stream_view::per_thread_default().sync()),
      BAD_INPUT("Without a CUDA driver or device", "view-wait", streamlike::error,
                ("stream_view::wait: cudaStreamGetDevice failed", "cudaErrorInsufficientDriver|cudaErrorNoDevice"),
                when::without_device, stream_view::legacy_default().wait(stream_view::per_thread_default())),
      BAD_INPUT("Without a CUDA driver or device", "shared-default-device", streamlike::error,
                ("cudaStreamGetDevice failed", "cudaErrorInsufficientDriver|cudaErrorNoDevice"), when::without_device,
                shared_stream::per_thread_default().device()),
      BAD_INPUT("Without a CUDA driver or device", "event-create", streamlike::error,
                ("event::create: cudaGetDevice failed", "cudaErrorInsufficientDriver|cudaErrorNoDevice"),
                when::without_device, event::create()),
      BAD_INPUT("Without a CUDA driver or device", "device-guard", streamlike::error,
                ("device_guard: cudaGetDevice failed", "cudaErrorInsufficientDriver|cudaErrorNoDevice"),
                when::without_device, device_guard{0}),

      // --- options this machine's devices do not have: std::invalid_argument, never clamped
      BAD_INPUT("Options the device does not have", "create-device-out-of-range", std::invalid_argument,
                ("streamlike: shared_stream::create: device 1000 does not exist", "expected 0.."), when::with_device,
                shared_stream::create({.device = 1000})),
      BAD_INPUT("Options the device does not have", "create-device-negative", std::invalid_argument,
                ("shared_stream::create: device -1 does not exist"), when::with_device,
                shared_stream::create({.device = -1})),
      BAD_INPUT("Options the device does not have", "create-priority-out-of-range", std::invalid_argument,
                ("shared_stream::create: priority 1000 is outside device", "(highest) to"), when::with_device,
                shared_stream::create({.priority = 1000})),
      BAD_INPUT("Options the device does not have", "create-unique-device-out-of-range", std::invalid_argument,
                ("unique_stream::create: device 1000 does not exist"), when::with_device,
                unique_stream::create({.device = 1000})),
      BAD_INPUT("Options the device does not have", "pool-priority-out-of-range", std::invalid_argument,
                ("shared_stream::create: priority -1000 is outside device"), when::with_device,
                stream_pool(2, {.priority = -1000})),
  };
  return rows;
}

bool device_present() {
  int count = 0;
  const bool present = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  (void)cudaGetLastError();
  return present;
}

const char* condition_text(when condition) {
  switch (condition) {
    case when::always: return "always";
    case when::without_device: return "without a CUDA device";
    case when::with_device: return "with a CUDA device";
  }
  return "?";
}

// The exact (most derived) type of `e`, by the name the table uses.
std::string type_of(const std::exception& e) {
  if (typeid(e) == typeid(std::invalid_argument)) return "std::invalid_argument";
  if (typeid(e) == typeid(streamlike::error)) return "streamlike::error";
  return std::string("another type (") + typeid(e).name() + ")";
}

std::vector<std::string> alternatives(const std::string& fragment) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t bar; (bar = fragment.find('|', start)) != std::string::npos; start = bar + 1) {
    out.push_back(fragment.substr(start, bar - start));
  }
  out.push_back(fragment.substr(start));
  return out;
}

// A markdown code span; `|` would end a table cell, so it is escaped.
std::string code(const std::string& text) {
  std::string out = "`";
  for (const char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out + "`";
}

std::string render_fragments(const std::vector<std::string>& fragments) {
  std::string out;
  for (const std::string& fragment : fragments) {
    if (!out.empty()) out += ", ";
    std::string alts;
    for (const std::string& alt : alternatives(fragment)) alts += (alts.empty() ? "" : " or ") + code(alt);
    out += alts;
  }
  return out;
}

// The generated run-time section of docs/bad-inputs.md, without its marker lines.
std::string render() {
  std::ostringstream out;
  out << "Calls are written as after `using namespace streamlike;`. Objects they use:\n\n";
  out << "| object | what makes it |\n|---|---|\n";
  for (const fixture& f : fixtures()) out << "| " << code(f.name) << " | " << code(f.code) << " |\n";
  std::string group;
  for (const bad_input& row : table()) {
    if (row.group != group) {
      group = row.group;
      out << "\n### " << group << "\n\n";
      out << "| case | call | throws | `what()` contains | checked |\n|---|---|---|---|---|\n";
    }
    out << "| " << row.id << " | " << code(row.call) << " | " << code(row.gets) << " | "
        << render_fragments(row.fragments) << " | " << condition_text(row.condition) << " |\n";
  }
  return out.str();
}

// std::string, not const char*: doctest's messages print a const char* as a pointer.
const std::string doc_path = STREAMLIKE_SOURCE_ROOT "/docs/bad-inputs.md";
const std::string begin_marker = "<!-- BEGIN GENERATED: run-time bad inputs";
const std::string end_marker = "<!-- END GENERATED: run-time bad inputs -->";

} // namespace

TEST_CASE("every bad input throws the documented exception type with the documented message fragments") {
  const bool device = device_present();
  int checked = 0;
  for (const bad_input& row : table()) {
    CAPTURE(row.id);
    CAPTURE(row.call);
    if ((row.condition == when::without_device && device) || (row.condition == when::with_device && !device)) {
      MESSAGE("skipped on this machine (" << std::string(condition_text(row.condition)) << "): " << row.id);
      continue;
    }
    ++checked;
    try {
      row.run();
      FAIL_CHECK(row.id << ": threw nothing; expected " << row.gets);
    } catch (const std::exception& e) {
      const std::string what = e.what();
      CHECK_MESSAGE(type_of(e) == row.gets, row.id << ": threw " << type_of(e) << ": " << what);
      for (const std::string& fragment : row.fragments) {
        bool found = false;
        for (const std::string& alt : alternatives(fragment)) found = found || what.find(alt) != std::string::npos;
        CHECK_MESSAGE(found, row.id << ": what() lacks '" << fragment << "': " << what);
      }
    } catch (...) {
      FAIL_CHECK(row.id << ": threw something that is not a std::exception");
    }
  }
  CHECK(checked > 0);
}

TEST_CASE("the table's ids are unique") {
  std::set<std::string> ids;
  for (const bad_input& row : table()) CHECK_MESSAGE(ids.insert(row.id).second, "duplicate id " << row.id);
}

TEST_CASE("an empty owner's error carries cudaErrorInvalidResourceHandle as its code()") {
  // The message says "empty" rather than a CUDA error; code() still classifies it for callers.
  int checked = 0;
  for (const bad_input& row : table()) {
    if (row.group != "Empty owners") continue;
    CAPTURE(row.id);
    REQUIRE_MESSAGE(row.condition == when::always, row.id << ": an empty owner's row does not need a device");
    // Every row of the group throws streamlike::error: no throw, or any other exception, fails.
    try {
      row.run();
      FAIL_CHECK(row.id << ": did not throw");
    } catch (const streamlike::error& e) {
      CHECK(e.code() == cudaErrorInvalidResourceHandle);
      ++checked;
    } catch (const std::exception& e) {
      FAIL_CHECK(row.id << ": threw " << type_of(e) << " (" << e.what() << "), not streamlike::error");
    } catch (...) {
      FAIL_CHECK(row.id << ": threw something that is not a std::exception");
    }
  }
  CHECK(checked > 0);
}

TEST_CASE(
    "docs/bad-inputs.md's run-time section is this table (regenerate with test/bad_inputs/bad_inputs.py --write)") {
  std::ifstream file(doc_path);
  REQUIRE_MESSAGE(file.good(), "cannot read " << doc_path);
  std::string line;
  std::string section;
  bool inside = false;
  bool ended = false;
  while (std::getline(file, line)) {
    if (line.rfind(begin_marker, 0) == 0) {
      inside = true;
    } else if (line == end_marker) {
      ended = inside;
      inside = false;
    } else if (inside) {
      section += line + "\n";
    }
  }
  REQUIRE_MESSAGE(ended, doc_path << " lacks the markers '" << begin_marker << " ...' and '" << end_marker << "'");
  const std::string expected = render();
  if (section != expected) {
    // Point at the first line that differs, so the fix is obvious.
    std::istringstream have(section);
    std::istringstream want(expected);
    std::string have_line;
    std::string want_line;
    int number = 1;
    while (true) {
      const bool more_have = static_cast<bool>(std::getline(have, have_line));
      const bool more_want = static_cast<bool>(std::getline(want, want_line));
      if (!more_have && !more_want) break;
      if (!more_have || !more_want || have_line != want_line) {
        FAIL_CHECK("docs/bad-inputs.md is stale at line "
                   << number << " of the run-time section:\n  document: " << (more_have ? have_line : "(end)")
                   << "\n  tests:    " << (more_want ? want_line : "(end)")
                   << "\nRegenerate: test/bad_inputs/bad_inputs.py --write --program <this program>");
        break;
      }
      ++number;
    }
  }
}

int main(int argc, char** argv) {
  // bad_inputs.py --write asks for the section this program checks, to write it into the document.
  if (argc == 2 && std::strcmp(argv[1], "--print-table") == 0) {
    std::cout << render();
    return 0;
  }
  doctest::Context context(argc, argv);
  return context.run();
}

// streamcheck's reports of a run (no GPU): a repeat is counted from the native site and the Python
// frames' identity alone, distinct Python lines stay distinct reports, and what the allow-list
// takes, by library, symbol and Python module, judged once.
#include "../../src/streamcheck/report_log.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

using namespace streamlike::check;

namespace {

// The process as the log sees it: one native call site, its frames, and the Python frames' identity
// and location as given; counting what the log asks for.
struct fake_process {
  std::vector<void*> native{reinterpret_cast<void*>(0x1000), reinterpret_cast<void*>(0x2000)};
  std::vector<std::string> frames{"/opt/app/libextension.so: launch_my_kernel(float*)+0x10"};
  std::vector<std::uintptr_t> identity; // the Python frames: code object, position
  std::string python;                   // their location
  std::atomic<int> natives_taken{0};    // atomic: the log asks from many threads in one case
  std::atomic<int> identities_taken{0}; // the Python identity alone
  std::atomic<int> locations_taken{0};  // the identity with the location
  std::atomic<int> symbolized{0};

  // The Python frames at `location`, one frame whose code object is `code` at instruction `at`.
  void in_python(std::string location, std::uintptr_t code = 0x7000, std::uintptr_t at = 10) {
    python = std::move(location);
    identity = {code, at};
  }

  world as_world() {
    world w;
    w.context = this;
    w.take_native_site = [](void* c, call_site& s) {
      auto& p = *static_cast<fake_process*>(c);
      ++p.natives_taken;
      s.addresses = p.native;
    };
    w.take_python_site = [](void* c, std::vector<std::uintptr_t>& identity, std::string* location) {
      auto& p = *static_cast<fake_process*>(c);
      ++(location != nullptr ? p.locations_taken : p.identities_taken);
      identity = p.identity;
      if (location != nullptr) *location = p.python;
    };
    w.symbolize = [](void* c, call_site& s) {
      auto& p = *static_cast<fake_process*>(c);
      ++p.symbolized;
      s.frames = p.frames;
    };
    return w;
  }
};

report wrong_stream() {
  report r;
  r.what = report::kind::wrong_stream;
  r.api = "cuLaunchKernel";
  return r;
}

// Whether `allow` takes the one report made with these frames and this Python location.
bool takes(const char* allow, std::string python, std::vector<std::string> frames = {}) {
  fake_process process;
  process.in_python(std::move(python));
  if (!frames.empty()) process.frames = std::move(frames);
  report_log log(parse_options("all", nullptr, nullptr, nullptr, allow).allow, process.as_world());
  return log.record(wrong_stream()) == verdict::allowed;
}

} // namespace

TEST_CASE("py:MODULE takes the files inside the module, by whole path components") {
  struct row {
    const char* allow;
    const char* python;
    bool allowed;
  };
  const row rows[] = {
      {"py:torch", "/env/lib/python3.12/site-packages/torch/nn/functional.py:2380", true},
      {"py:torch", "/env/lib/python3.12/site-packages/torch/__init__.py:1", true},
      {"py:torch", "torch/cuda/streams.py:40", true}, // a relative file name (sys.path entry "")
      {"py:torch.nn", "/env/site-packages/torch/nn/modules/linear.py:125", true},
      {"py:torch.nn.functional", "/env/site-packages/torch/nn/functional.py:2380", true}, // the module's file
      {"py:torch", "/env/site-packages/torchvision/ops/boxes.py:40", false},
      {"py:torch", "/env/site-packages/torchaudio/functional/filtering.py:9", false},
      {"py:torch", "/home/u/mytorch/train.py:12", false},
      {"py:torch", "/home/u/torch_utils.py:3", false},
      {"py:torch.nn", "/env/site-packages/torch/optim/sgd.py:30", false},
      {"py:torch.nn", "/env/site-packages/torch/nnx/thing.py:1", false},
      {"py:torch.nn.functional", "/env/site-packages/torch/nn/functional_extra.py:1", false},
      {"py:torch", "", false}, // no Python location
  };
  for (const row& r : rows) {
    const std::string what = std::string(r.allow) + " on " + r.python;
    INFO(what);
    CHECK(takes(r.allow, r.python) == r.allowed);
  }
}

TEST_CASE("lib:TEXT and sym:TEXT are substrings of a frame's library path and of its symbol") {
  const std::vector<std::string> frames{"/opt/nccl/lib/libnccl.so.2: ncclAllReduce+0x1c4",
                                        "/opt/app/libops.so: ops::launch(int)+0x10", "/opt/app/app: +0x7f10"};
  struct row {
    const char* allow;
    bool allowed;
  };
  const row rows[] = {
      {"lib:libnccl", true},        {"lib:/opt/nccl/", true}, {"lib:nccl.so.2", true},
      {"sym:ncclAllReduce", true},  {"sym:AllRed", true},     {"sym:ops::launch(int)", true},
      {"lib:ncclAllReduce", false}, // a symbol is not a library
      {"sym:libnccl", false},       // and the other way round
      {"sym:+0x1c4", false},        // the offset is not part of the symbol
      {"sym:0x7f10", false},        // nor is it a symbol where the frame has none
      {"lib:libcudart", false},
  };
  for (const row& r : rows) {
    const std::string what = r.allow;
    INFO(what);
    CHECK(takes(r.allow, "/app/train.py:3", frames) == r.allowed);
  }
}

TEST_CASE("a repeat takes neither the Python location nor the frames again") {
  fake_process process;
  process.in_python("/app/train.py:12");
  report_log log({}, process.as_world());
  CHECK(log.record(wrong_stream()) == verdict::reported);
  CHECK(process.locations_taken == 1);
  CHECK(process.symbolized == 1);
  for (int i = 0; i < 4; ++i) CHECK(log.record(wrong_stream()) == verdict::repeated);
  CHECK(process.natives_taken == 5);
  CHECK(process.identities_taken == 4); // a Python site: the native site alone cannot tell
  CHECK(process.locations_taken == 1);
  CHECK(process.symbolized == 1);
  REQUIRE(log.reports().size() == 1);
  CHECK(log.reports()[0].count == 5);
  CHECK(log.reports()[0].site.python == "/app/train.py:12");
  CHECK(log.reports()[0].site.frames == process.frames);
}

TEST_CASE("a native site whose first report had no Python location: its repeats ask nothing of Python") {
  fake_process process; // no Python frames: a C++ program, or a thread Python never ran on
  report_log log({}, process.as_world());
  for (int i = 0; i < 5; ++i) CHECK(log.record(wrong_stream()) == (i == 0 ? verdict::reported : verdict::repeated));
  CHECK(process.identities_taken == 0);
  CHECK(process.locations_taken == 1);
  CHECK(process.symbolized == 1);
  // Another native site is another report, symbolized once.
  process.native = {reinterpret_cast<void*>(0x1000), reinterpret_cast<void*>(0x3000)};
  CHECK(log.record(wrong_stream()) == verdict::reported);
  CHECK(log.record(wrong_stream()) == verdict::repeated);
  CHECK(process.symbolized == 2);
  CHECK(log.reports().size() == 2);
}

TEST_CASE("distinct Python lines under one native site stay distinct reports") {
  // A Python program calling one C function from many lines: the same native stack.
  fake_process process;
  report_log log({}, process.as_world());
  for (int round = 0; round < 3; ++round) {
    for (std::uintptr_t line = 1; line <= 4; ++line) {
      process.in_python("/app/loop.py:" + std::to_string(line), 0x7000, 2 * line);
      CHECK(log.record(wrong_stream()) == (round == 0 ? verdict::reported : verdict::repeated));
    }
  }
  const auto all = log.reports();
  REQUIRE(all.size() == 4);
  for (std::size_t i = 0; i < all.size(); ++i) {
    CHECK(all[i].site.python == "/app/loop.py:" + std::to_string(i + 1));
    CHECK(all[i].count == 3);
  }
  CHECK(process.symbolized == 1);        // one native site
  CHECK(process.locations_taken == 4);   // once per line
  CHECK(process.identities_taken == 11); // each repeat (8), and the first look at lines 2 to 4 (3)
  // Two instructions of one line (two calls on it) are one report.
  process.in_python("/app/loop.py:1", 0x7000, 3);
  CHECK(log.record(wrong_stream()) == verdict::repeated);
  CHECK(log.reports().size() == 4);
  CHECK(log.reports()[0].count == 4);
  // Another kind or API at the same place is another report.
  report other = wrong_stream();
  other.api = "cuMemsetD8Async";
  CHECK(log.record(other) == verdict::reported);
  CHECK(log.reports().size() == 5);
}

TEST_CASE("allow-listed repeats are not judged again") {
  SUBCASE("lib: and sym: are decided once per native site, without the Python frames") {
    fake_process process;
    report_log log(parse_options("all", nullptr, nullptr, nullptr, "sym:launch_my_kernel").allow, process.as_world());
    process.in_python("/app/a.py:1");
    CHECK(log.record(wrong_stream()) == verdict::allowed);
    for (std::uintptr_t line = 2; line <= 5; ++line) {
      process.in_python("/app/a.py:" + std::to_string(line), 0x7000, line);
      CHECK(log.record(wrong_stream()) == verdict::allowed);
    }
    CHECK(process.symbolized == 1);
    CHECK(process.locations_taken == 1);
    CHECK(process.identities_taken == 0);
    REQUIRE(log.reports().size() == 1); // counted per native site
    CHECK(log.reports()[0].allowed);
    CHECK(log.reports()[0].count == 5);
    CHECK(log.reported() == 0);
  }
  SUBCASE("py: is decided once per Python location") {
    fake_process process;
    report_log log(parse_options("all", nullptr, nullptr, nullptr, "py:torch").allow, process.as_world());
    process.in_python("/env/site-packages/torch/nn/functional.py:2380");
    for (int i = 0; i < 5; ++i) CHECK(log.record(wrong_stream()) == verdict::allowed);
    CHECK(process.symbolized == 1);
    CHECK(process.locations_taken == 1);
    CHECK(process.identities_taken == 4);
    // The user's own line under the same native site is reported.
    process.in_python("/app/train.py:7", 0x7100, 4);
    CHECK(log.record(wrong_stream()) == verdict::reported);
    CHECK(log.record(wrong_stream()) == verdict::repeated);
    const auto all = log.reports();
    REQUIRE(all.size() == 2);
    CHECK(all[0].allowed);
    CHECK(all[0].count == 5);
    CHECK_FALSE(all[1].allowed);
    CHECK(all[1].count == 2);
    CHECK(process.symbolized == 1);
    CHECK(process.locations_taken == 2);
  }
}

TEST_CASE("many threads at one site: one report, every call counted") {
  // The sanitizer runs of the host suite check this for races.
  fake_process process;
  process.in_python("/app/train.py:12");
  report_log log({}, process.as_world());
  constexpr int threads = 4;
  constexpr int calls = 500;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&log] {
      for (int i = 0; i < calls; ++i) (void)log.record(wrong_stream());
    });
  for (std::thread& w : workers) w.join();
  REQUIRE(log.reports().size() == 1);
  CHECK(log.reports()[0].count == threads * calls);
}

TEST_CASE("each report says what to change, in one line, in its text and its JSON") {
  const auto fix_of = [](report::kind what, call_kind call, std::uintptr_t stream) {
    report r;
    r.what = what;
    r.call = call;
    r.stream = stream;
    return std::string(fix_for(r));
  };
  using enum call_kind;
  const auto wrong = report::kind::wrong_stream;
  const auto breaker = report::kind::capture_breaker;
  // A default stream inside a scope: the code meant the current stream.
  CHECK(fix_of(wrong, launch, legacy_stream)
            .starts_with("pass the current stream (torch.cuda.current_stream() / "
                         "streamlike.current_stream())"));
  CHECK(fix_of(wrong, async_copy, per_thread_stream) == fix_of(wrong, launch, legacy_stream));
  // Another stream: order it, or use the current one.
  CHECK(fix_of(wrong, launch, 0x7000).starts_with("order it with the current stream"));
  CHECK(fix_of(wrong, launch, 0x7000).find("cudaStreamWaitEvent") != std::string::npos);
  // Capture breakers, by what the call is.
  CHECK(fix_of(breaker, stream_sync, 0x7000).starts_with("move it out of the capture"));
  CHECK(fix_of(breaker, event_query, 0).find("cudaThreadExchangeStreamCaptureMode") != std::string::npos);
  CHECK(fix_of(breaker, ctx_sync, 0).find("relaxed") == std::string::npos); // no mode allows it
  CHECK(fix_of(breaker, sync_copy, 0).find("cudaMemcpyAsync") != std::string::npos);
  CHECK(fix_of(breaker, alloc, 0).find("cudaMallocAsync") != std::string::npos);
  CHECK(fix_of(breaker, free, 0).find("cudaStreamCaptureModeRelaxed") != std::string::npos);
  CHECK(fix_of(breaker, launch, legacy_stream).find("instead of the legacy default stream") != std::string::npos);
  for (const call_kind call : {launch, stream_sync, event_sync, ctx_sync, sync_memset, alloc, free})
    CHECK(fix_of(breaker, call, 0).find('\n') == std::string::npos);

  fake_process process;
  report_log log({}, process.as_world());
  report r = wrong_stream();
  r.stream = legacy_stream;
  r.call = launch;
  std::string text;
  log.on_report([](void* c, const report& seen) { *static_cast<std::string*>(c) = format(seen); }, &text);
  REQUIRE(log.record(r) == verdict::reported);
  CHECK(text.find("\n  fix: pass the current stream") != std::string::npos);
  CHECK(log.json().find("\"fix\": \"pass the current stream") != std::string::npos);
}

// streamcheck's decisions, fed synthetic driver calls (no GPU, no CUPTI): wrong stream against the
// current stream with the canonical default streams, capture breakers by CUDA's capture rules,
// dedup per call site, the allow-list, the report's words and JSON, and off.
#include "../../src/streamcheck/checker.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <vector>

using namespace streamlike::check;

namespace {

constexpr std::uintptr_t side = 0x7000;  // a created stream
constexpr std::uintptr_t other = 0x8000; // another one
constexpr std::uint64_t main_thread = 11;
constexpr std::uint64_t worker = 22;

// The process as the checker sees it: current streams per device, and where the call is made.
struct fake_process {
  std::map<int, std::uintptr_t> current; // device -> current stream; absent: cannot be known
  std::uintptr_t site = 1;               // the call site's one return address
  std::string python;                    // its Python file:line
  std::vector<std::string> frames{"libextension.so: launch_my_kernel+0x10"};
  int symbolized = 0;
  std::vector<report> sunk;
  std::string answers; // the frameworks' disagreement, as the world words it

  world as_world() {
    world w;
    w.context = this;
    w.current_stream = [](void* c, int device, std::uintptr_t* stream) {
      auto& p = *static_cast<fake_process*>(c);
      const auto found = p.current.find(device);
      if (found == p.current.end()) return false;
      *stream = found->second;
      return true;
    };
    w.take_native_site = [](void* c, call_site& s) {
      s.addresses = {reinterpret_cast<void*>(static_cast<fake_process*>(c)->site)};
    };
    w.take_python_site = [](void* c, std::vector<std::uintptr_t>& identity, std::string* location) {
      const std::string& python = static_cast<fake_process*>(c)->python;
      identity.clear(); // one frame per line: its "code object" and position made of the text
      if (!python.empty()) identity = {std::hash<std::string>{}(python), python.size()};
      if (location != nullptr) *location = python;
    };
    w.current_stream_answers = [](void* c, int) { return static_cast<fake_process*>(c)->answers; };
    w.symbolize = [](void* c, call_site& s) {
      auto& p = *static_cast<fake_process*>(c);
      ++p.symbolized;
      s.frames = p.frames;
    };
    return w;
  }
};

options both() { return parse_options("all", nullptr, nullptr, nullptr, nullptr); }

struct fixture {
  fake_process process;
  checker check;
  explicit fixture(options o = both()) : check(std::move(o), process.as_world()) {
    check.on_report([](void* c, const report& r) { static_cast<fake_process*>(c)->sunk.push_back(r); }, &process);
  }
};

call_event call(const char* api, std::uintptr_t handle, std::uint64_t thread = main_thread, int device = 0) {
  call_event e;
  e.api = api;
  e.kind = classify(api);
  e.has_stream = true;
  e.stream = canonical_stream(api, handle);
  e.thread = thread;
  e.device = device;
  // What the checker can know only once the call returned.
  e.returned = !judged_before(e.kind);
  return e;
}

call_event no_stream_call(const char* api, std::uint64_t thread = main_thread) {
  call_event e = call(api, 0, thread);
  e.has_stream = false;
  return e;
}

call_event begin_capture(std::uintptr_t stream, cudaStreamCaptureMode mode, std::uint64_t thread = main_thread,
                         bool blocking = false) {
  call_event e = call("cuStreamBeginCapture_v2", stream, thread);
  e.mode = mode;
  e.blocking = blocking;
  return e;
}

call_event exchange_mode(cudaStreamCaptureMode mode, std::uint64_t thread = main_thread) {
  call_event e = no_stream_call("cuThreadExchangeStreamCaptureMode", thread);
  e.mode = mode;
  return e;
}

} // namespace

TEST_CASE("wrong stream: a launch on the legacy default stream while a created stream is current") {
  fixture f;
  f.process.current[0] = side;
  f.process.python = "model.py:12";
  CHECK(f.check.on_call(call("cuLaunchKernel", 0)) == checker::verdict::reported);
  REQUIRE(f.process.sunk.size() == 1);
  const report& r = f.process.sunk[0];
  CHECK(r.what == report::kind::wrong_stream);
  CHECK(r.api == "cuLaunchKernel");
  CHECK(r.call == call_kind::launch);
  CHECK(r.stream == legacy_stream);
  CHECK(r.current == side);
  CHECK(r.thread == main_thread);
  CHECK(r.site.python == "model.py:12");
  CHECK(r.site.frames == f.process.frames);
  const std::string text = format(r);
  CHECK(text.find("streamcheck: wrong stream: cuLaunchKernel (launch) on device 0") != std::string::npos);
  CHECK(text.find("given stream 0x1 (the legacy default stream)") != std::string::npos);
  CHECK(text.find("current stream on device 0 is 0x7000") != std::string::npos);
  CHECK(text.find("at model.py:12") != std::string::npos);
  CHECK(text.find("libextension.so: launch_my_kernel+0x10") != std::string::npos);
  CHECK(text.find("set by") == std::string::npos); // the frameworks agree: nothing more to say
}

TEST_CASE("wrong stream: a launch on one framework's stream while the others agree on another") {
  // CuPy launching on its own current stream inside torch.cuda.stream(s): the report names each
  // framework's answer.
  fixture f;
  f.process.current[0] = side;
  f.process.answers = "set by torch, while cupy names 0x8000";
  CHECK(f.check.on_call(call("cuLaunchKernel", side)) == checker::verdict::fine); // work the next does not wait for
  CHECK(f.check.on_call(call("cuLaunchKernel", other)) == checker::verdict::reported);
  REQUIRE(f.process.sunk.size() == 1);
  CHECK(f.process.sunk[0].why.find("current stream on device 0 is 0x7000 (streamlike::current_stream())") !=
        std::string::npos);
  CHECK(f.process.sunk[0].why.find("; set by torch, while cupy names 0x8000") != std::string::npos);
}

TEST_CASE("wrong stream: every call that works on a stream, on the per-thread default or another stream") {
  for (const char* api : {"cuLaunchKernel_ptsz", "cuLaunchKernelEx", "cuLaunchCooperativeKernel", "cuMemcpyAsync",
                          "cuMemcpyHtoDAsync_v2_ptsz", "cuMemsetD8Async", "cuLaunchHostFunc", "cuGraphLaunch"}) {
    CAPTURE(api);
    fixture f;
    f.process.current[0] = side;
    CHECK(f.check.on_call(call("cuLaunchKernel", side)) == checker::verdict::fine);
    CHECK(f.check.on_call(call(api, other)) == checker::verdict::reported);
    // 0 in a per-thread entry point is the per-thread default stream, not the current one either.
    f.process.site = 2;
    CHECK(f.check.on_call(call(api, 0)) == checker::verdict::reported);
    REQUIRE(f.process.sunk.size() == 2);
    CHECK(f.process.sunk[0].stream == other);
    CHECK(f.process.sunk[1].stream == canonical_stream(api, 0));
  }
}

TEST_CASE("no wrong stream: the current stream, a default current stream, ordering calls, unknown") {
  fixture f;
  f.process.current[0] = side;
  CHECK(f.check.on_call(call("cuLaunchKernel", side)) == checker::verdict::fine);
  CHECK(f.check.on_call(call("cuMemcpyAsync", side)) == checker::verdict::fine);
  // Recording an event on, or waiting from, another stream is how streams are ordered.
  CHECK(f.check.on_call(call("cuEventRecord", other)) == checker::verdict::fine);
  CHECK(f.check.on_call(call("cuStreamWaitEvent", other)) == checker::verdict::fine);
  // Another device has its own current stream: nothing set there.
  f.process.current[1] = 0;
  CHECK(f.check.on_call(call("cuLaunchKernel", other, main_thread, 1)) == checker::verdict::fine);
  // No device, or a current stream that cannot be known: no report.
  CHECK(f.check.on_call(call("cuLaunchKernel", other, main_thread, -1)) == checker::verdict::fine);
  CHECK(f.check.on_call(call("cuLaunchKernel", other, main_thread, 2)) == checker::verdict::fine);
  // Every default current stream means "nothing set": 0, cudaStreamLegacy and cudaStreamPerThread.
  for (std::uintptr_t def : {std::uintptr_t{0}, legacy_stream, per_thread_stream}) {
    f.process.current[0] = def;
    CHECK(f.check.on_call(call("cuLaunchKernel", other)) == checker::verdict::fine);
    CHECK(f.check.on_call(call("cuLaunchKernel", 0)) == checker::verdict::fine);
  }
  CHECK(f.check.reports().empty());
  CHECK(f.process.sunk.empty());
}

TEST_CASE("the canonical default: 0 and cudaStreamLegacy are one stream, 0x2 another") {
  fixture f;
  // A legacy default current stream given as 0x1 (torch names it 0; cudaStreamLegacy elsewhere):
  // default, never a report.
  f.process.current[0] = legacy_stream;
  CHECK(f.check.on_call(call("cuLaunchKernel", 0)) == checker::verdict::fine);
  // The checker reads a current stream of 0 as the legacy one, and a launch given 0x1 or 0 matches it.
  CHECK(canonical_stream(0) == canonical_stream("cuLaunchKernel", 0x1));
  CHECK(canonical_stream(0) == canonical_stream("cuLaunchKernel", 0));
  CHECK(canonical_stream(0) != canonical_stream("cuLaunchKernel_ptsz", 0));
}

TEST_CASE("reports are deduplicated per call site and counted") {
  fixture f;
  f.process.current[0] = side;
  f.process.python = "loop.py:3";
  for (int i = 0; i < 5; ++i)
    CHECK(f.check.on_call(call("cuLaunchKernel", 0)) ==
          (i == 0 ? checker::verdict::reported : checker::verdict::repeated));
  CHECK(f.process.symbolized == 1); // symbolized once, for the first
  CHECK(f.process.sunk.size() == 1);
  // Another Python line is another call site, as is another native return address.
  f.process.python = "loop.py:4";
  CHECK(f.check.on_call(call("cuLaunchKernel", 0)) == checker::verdict::reported);
  f.process.site = 99;
  CHECK(f.check.on_call(call("cuLaunchKernel", 0)) == checker::verdict::reported);
  const auto all = f.check.reports();
  REQUIRE(all.size() == 3);
  CHECK(all[0].count == 5);
  CHECK(all[1].count == 1);
  CHECK(f.check.reported() == 3);
  const std::string summary = f.check.summary();
  CHECK(summary.find("3 wrong-stream and 0 capture-breaker call sites reported, 0 allowed") != std::string::npos);
  CHECK(summary.find("5x wrong stream: cuLaunchKernel at loop.py:3") != std::string::npos);
}

TEST_CASE("capture breaker: a synchronization while this thread's global capture runs") {
  fixture f;
  f.process.python = "graph.py:7";
  // A blocking stream: the synchronous copy and memset break it through the legacy stream.
  CHECK(f.check.on_call(begin_capture(side, cudaStreamCaptureModeGlobal, main_thread, /*blocking=*/true)) ==
        checker::verdict::fine);
  for (const char* api : {"cuCtxSynchronize", "cuEventSynchronize", "cuEventQuery", "cuMemAlloc_v2", "cuMemFree_v2",
                          "cuMemcpyHtoD_v2", "cuMemsetD8_v2"}) {
    CAPTURE(api);
    f.process.site += 1;
    CHECK(f.check.on_call(no_stream_call(api)) == checker::verdict::reported);
  }
  // A sync of another stream too (potentially unsafe).
  f.process.site += 1;
  CHECK(f.check.on_call(call("cuStreamSynchronize", other)) == checker::verdict::reported);
  REQUIRE(f.process.sunk.size() == 8);
  const report& r = f.process.sunk[0];
  CHECK(r.what == report::kind::capture_breaker);
  CHECK(r.api == "cuCtxSynchronize");
  const std::string text = format(r);
  CHECK(text.find("capture breaker: cuCtxSynchronize (context synchronization)") != std::string::npos);
  CHECK(text.find("a capture of stream 0x7000 in global mode begun by this thread") != std::string::npos);
  CHECK(text.find("global capture interaction mode") != std::string::npos);
  CHECK(text.find("at graph.py:7") != std::string::npos);
}

TEST_CASE("capture breaker: CUDA's interaction-mode rule") {
  struct row {
    cudaStreamCaptureMode capture_mode;
    bool same_thread;
    cudaStreamCaptureMode thread_mode;
    bool reported;
  };
  const row rows[] = {
      {cudaStreamCaptureModeGlobal, true, cudaStreamCaptureModeGlobal, true},
      {cudaStreamCaptureModeGlobal, true, cudaStreamCaptureModeThreadLocal, true},
      {cudaStreamCaptureModeGlobal, true, cudaStreamCaptureModeRelaxed, false},
      {cudaStreamCaptureModeThreadLocal, true, cudaStreamCaptureModeGlobal, true},
      {cudaStreamCaptureModeThreadLocal, true, cudaStreamCaptureModeRelaxed, false},
      {cudaStreamCaptureModeRelaxed, true, cudaStreamCaptureModeGlobal, false},
      // Another thread's capture: only a global one, and only for a thread in global mode.
      {cudaStreamCaptureModeGlobal, false, cudaStreamCaptureModeGlobal, true},
      {cudaStreamCaptureModeGlobal, false, cudaStreamCaptureModeThreadLocal, false},
      {cudaStreamCaptureModeGlobal, false, cudaStreamCaptureModeRelaxed, false},
      {cudaStreamCaptureModeThreadLocal, false, cudaStreamCaptureModeGlobal, false},
      {cudaStreamCaptureModeRelaxed, false, cudaStreamCaptureModeGlobal, false},
  };
  for (const row& r : rows) {
    CAPTURE(static_cast<int>(r.capture_mode));
    CAPTURE(r.same_thread);
    CAPTURE(static_cast<int>(r.thread_mode));
    fixture f;
    f.check.on_call(begin_capture(side, r.capture_mode, r.same_thread ? main_thread : worker));
    f.check.on_call(exchange_mode(r.thread_mode));
    // cuMemAlloc: potentially unsafe (cuCtxSynchronize breaks every capture, whatever the modes).
    const auto v = f.check.on_call(no_stream_call("cuMemAlloc_v2"));
    CHECK((v == checker::verdict::reported) == r.reported);
    if (r.reported && !r.same_thread) {
      REQUIRE(f.process.sunk.size() == 1);
      CHECK(f.process.sunk[0].why.find("begun by thread 22") != std::string::npos);
    }
  }
}

TEST_CASE("capture breaker: waiting on the capturing stream itself, in every mode") {
  for (cudaStreamCaptureMode mode : {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeRelaxed}) {
    fixture f;
    f.check.on_call(begin_capture(side, mode));
    f.check.on_call(exchange_mode(cudaStreamCaptureModeRelaxed));
    CHECK(f.check.on_call(call("cuStreamSynchronize", side)) == checker::verdict::reported);
    f.process.site = 2;
    CHECK(f.check.on_call(call("cuStreamQuery_ptsz", side)) == checker::verdict::reported);
    REQUIRE_FALSE(f.process.sunk.empty());
    CHECK(f.process.sunk[0].why.find("waits on or asks about a capture of stream 0x7000") != std::string::npos);
    // Another stream, in relaxed mode: allowed.
    f.process.site = 3;
    CHECK(f.check.on_call(call("cuStreamSynchronize", other)) == checker::verdict::fine);
  }
}

TEST_CASE("capture breaker: the legacy default stream while a blocking stream captures") {
  fixture f;
  f.check.on_call(begin_capture(side, cudaStreamCaptureModeRelaxed, worker, /*blocking=*/true));
  CHECK(f.check.on_call(call("cuLaunchKernel", 0)) == checker::verdict::reported);
  REQUIRE(f.process.sunk.size() == 1);
  CHECK(f.process.sunk[0].why.find("cudaErrorStreamCaptureImplicit") != std::string::npos);
  // The per-thread default stream does not synchronize with other streams.
  f.process.site = 2;
  CHECK(f.check.on_call(call("cuLaunchKernel_ptsz", 0)) == checker::verdict::fine);
  // A non-blocking capturing stream (torch's, CuPy's) is not touched by the legacy stream.
  fixture g;
  g.check.on_call(begin_capture(side, cudaStreamCaptureModeGlobal, worker, /*blocking=*/false));
  CHECK(g.check.on_call(call("cuLaunchKernel", 0)) == checker::verdict::fine);
}

TEST_CASE("captures end: nothing is a breaker after the end, unless the end came from the wrong thread") {
  fixture f;
  f.check.on_call(begin_capture(side, cudaStreamCaptureModeGlobal));
  call_event failed_end = call("cuStreamEndCapture", side, worker);
  failed_end.succeeded = false; // cudaErrorStreamCaptureWrongThread: still capturing
  f.check.on_call(failed_end);
  CHECK(f.check.on_call(no_stream_call("cuCtxSynchronize")) == checker::verdict::reported);
  f.check.on_call(call("cuStreamEndCapture", side));
  f.process.site = 2;
  CHECK(f.check.on_call(no_stream_call("cuCtxSynchronize")) == checker::verdict::fine);
  // A begin that failed began nothing.
  call_event failed_begin = begin_capture(other, cudaStreamCaptureModeGlobal);
  failed_begin.succeeded = false;
  f.check.on_call(failed_begin);
  CHECK(f.check.on_call(no_stream_call("cuCtxSynchronize")) == checker::verdict::fine);
}

TEST_CASE("with no capture under way nothing is a capture breaker") {
  fixture f;
  for (const char* api : {"cuCtxSynchronize", "cuStreamSynchronize", "cuMemAlloc_v2", "cuMemFree_v2", "cuMemcpy"})
    CHECK(f.check.on_call(no_stream_call(api)) == checker::verdict::fine);
  CHECK(f.check.on_call(call("cuLaunchKernel", 0)) == checker::verdict::fine);
  CHECK(f.check.reports().empty());
}

TEST_CASE("each check can be off, and off checks nothing") {
  fixture stream_only(parse_options("wrong-stream", nullptr, nullptr, nullptr, nullptr));
  stream_only.check.on_call(begin_capture(side, cudaStreamCaptureModeGlobal));
  CHECK(stream_only.check.on_call(no_stream_call("cuCtxSynchronize")) == checker::verdict::fine);
  fixture capture_only(parse_options("capture", nullptr, nullptr, nullptr, nullptr));
  capture_only.process.current[0] = side;
  CHECK(capture_only.check.on_call(call("cuLaunchKernel", 0)) == checker::verdict::fine);
  fixture off(parse_options(nullptr, nullptr, nullptr, nullptr, nullptr));
  off.process.current[0] = side;
  off.check.on_call(begin_capture(side, cudaStreamCaptureModeGlobal));
  CHECK(off.check.on_call(call("cuLaunchKernel", 0)) == checker::verdict::fine);
  CHECK(off.check.on_call(no_stream_call("cuCtxSynchronize")) == checker::verdict::fine);
  CHECK(off.check.reports().empty());
}

TEST_CASE("the allow-list: by library, symbol and Python module, counted but not reported") {
  struct row {
    const char* allow;
    bool allowed;
  };
  const row rows[] = {
      {"lib:libextension", true},
      {"sym:launch_my_kernel", true},
      {"py:torch.nn", true},
      {"lib:libnccl", false},
      {"sym:ncclKernel", false},
      {"py:torch.optim", false},
      // A library's name is not its symbols', and the other way round.
      {"lib:launch_my_kernel", false},
      {"sym:libextension", false},
  };
  for (const row& r : rows) {
    CAPTURE(r.allow);
    fixture f(parse_options("all", nullptr, nullptr, nullptr, r.allow));
    f.process.current[0] = side;
    f.process.python = "/env/lib/site-packages/torch/nn/modules/linear.py:125";
    CHECK(f.check.on_call(call("cuLaunchKernel", 0)) ==
          (r.allowed ? checker::verdict::allowed : checker::verdict::reported));
    CHECK(f.check.on_call(call("cuLaunchKernel", 0)) ==
          (r.allowed ? checker::verdict::allowed : checker::verdict::repeated));
    CHECK(f.process.sunk.size() == (r.allowed ? 0U : 1U));
    CHECK(f.check.reported() == (r.allowed ? 0U : 1U));
    REQUIRE(f.check.reports().size() == 1);
    CHECK(f.check.reports()[0].allowed == r.allowed);
    CHECK(f.check.reports()[0].count == 2);
  }
}

TEST_CASE("the JSON summary names each report, escaped") {
  fixture f;
  f.process.current[0] = side;
  f.process.python = "dir \"q\"\\x.py:1";
  f.check.on_call(call("cuLaunchKernel", 0));
  f.check.on_call(begin_capture(other, cudaStreamCaptureModeGlobal));
  f.process.site = 2;
  f.check.on_call(no_stream_call("cuMemFree_v2"));
  const std::string json = f.check.json();
  CHECK(json.find("{\"wrong_stream\": 1, \"capture_breaker\": 1, \"allowed\": 0, \"reports\": [") == 0);
  CHECK(json.find("\"kind\": \"wrong-stream\", \"api\": \"cuLaunchKernel\", \"call\": \"launch\", \"stream\": \"0x1\", "
                  "\"current\": \"0x7000\", \"device\": 0, \"thread\": 11, \"count\": 1, \"allowed\": false") !=
        std::string::npos);
  CHECK(json.find("\"python\": \"dir \\\"q\\\"\\\\x.py:1\"") != std::string::npos);
  CHECK(json.find("\"kind\": \"capture-breaker\", \"api\": \"cuMemFree_v2\"") != std::string::npos);
  CHECK(json.find("\"frames\": [\"libextension.so: launch_my_kernel+0x10\"]") != std::string::npos);
}

TEST_CASE("calls from many threads: one report per call site, every call counted") {
  // The sanitizer runs of the host suite check this for races (captures begun and ended meanwhile).
  fixture f;
  f.process.current[0] = side;
  constexpr int threads = 4;
  constexpr int calls = 500;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&f, t] {
      for (int i = 0; i < calls; ++i) {
        (void)f.check.on_call(call("cuLaunchKernel", 0, 100 + t));
        call_event begin = begin_capture(0x9000 + t, cudaStreamCaptureModeRelaxed, 100 + t);
        (void)f.check.on_call(begin);
        (void)f.check.on_call(call("cuStreamEndCapture", 0x9000 + t, 100 + t));
      }
    });
  }
  for (std::thread& w : workers) w.join();
  const auto all = f.check.reports();
  REQUIRE(all.size() == 1);
  CHECK(all[0].count == threads * calls);
  CHECK(f.process.sunk.size() == 1);
  f.process.site = 2;
  CHECK(f.check.on_call(no_stream_call("cuCtxSynchronize")) == checker::verdict::fine); // every capture ended
}

namespace {

call_event made(std::uintptr_t stream, bool blocking, bool library_stream = false) {
  call_event e = call("cuStreamCreate", stream);
  e.blocking = blocking;
  e.library_stream = library_stream;
  return e;
}

call_event on_event(const char* api, std::uintptr_t stream, std::uintptr_t event) {
  call_event e = call(api, stream);
  e.object = event;
  return e;
}

call_event returned(call_event e) {
  e.returned = true;
  return e;
}

} // namespace

TEST_CASE("order: a side stream forked from and joined to the current stream is a correct program") {
  fixture f;
  f.process.current[0] = side;
  f.check.on_call(made(side, false));
  f.check.on_call(made(other, false));
  CHECK(f.check.on_call(call("cuLaunchKernel", side)) == checker::verdict::fine);
  // s2.wait_stream(s1): an event recorded on the current stream, waited on by the side stream.
  f.check.on_call(on_event("cuEventRecord", side, 0xe1));
  f.check.on_call(on_event("cuStreamWaitEvent", other, 0xe1));
  CHECK(f.check.on_call(call("cuLaunchKernel", other)) == checker::verdict::fine);
  CHECK(f.check.on_call(call("cuMemcpyAsync", other)) == checker::verdict::fine);
  // s1.wait_stream(s2), then the next round forgets to fork: that launch is reported.
  f.check.on_call(on_event("cuEventRecord", other, 0xe2));
  f.check.on_call(on_event("cuStreamWaitEvent", side, 0xe2));
  CHECK(f.check.on_call(call("cuLaunchKernel", side)) == checker::verdict::fine);
  f.process.site = 2;
  CHECK(f.check.on_call(call("cuLaunchKernel", other)) == checker::verdict::reported);
  REQUIRE(f.process.sunk.size() == 1);
  CHECK(f.process.sunk[0].why.find("nothing orders this call after the 1 call(s) queued there") != std::string::npos);
  CHECK(std::string(fix_for(f.process.sunk[0])).find("wait_stream") != std::string::npos);
}

TEST_CASE("order: the host's synchronization orders what it queues next") {
  fixture f;
  f.process.current[0] = side;
  f.check.on_call(made(side, false));
  f.check.on_call(made(other, false));
  for (const char* sync : {"cuStreamSynchronize", "cuCtxSynchronize"}) {
    CAPTURE(sync);
    CHECK(f.check.on_call(call("cuLaunchKernel", side)) == checker::verdict::fine);
    // Judged before it runs (a capture breaker or not), it orders only once it returned.
    CHECK(f.check.on_call(call(sync, side)) == checker::verdict::fine);
    CHECK(f.check.on_call(returned(call(sync, side))) == checker::verdict::fine);
    CHECK(f.check.on_call(call("cuLaunchKernel", other)) == checker::verdict::fine);
  }
  // A failed synchronization orders nothing.
  CHECK(f.check.on_call(call("cuLaunchKernel", side)) == checker::verdict::fine);
  call_event failed = returned(call("cuStreamSynchronize", side));
  failed.succeeded = false;
  f.check.on_call(failed);
  CHECK(f.check.on_call(call("cuLaunchKernel", other)) == checker::verdict::reported);
}

TEST_CASE("order: the default streams stay reported unless something orders them with the current stream") {
  SUBCASE("a non-blocking current stream: legacy work is reported, even before anything was queued on it") {
    fixture f;
    f.process.current[0] = side;
    f.check.on_call(made(side, false));
    CHECK(f.check.on_call(call("cuLaunchKernel", 0)) == checker::verdict::reported);
    REQUIRE(f.process.sunk.size() == 1);
    CHECK(f.process.sunk[0].why.find("nothing orders this call with it") != std::string::npos);
  }
  SUBCASE("a blocking current stream: the legacy stream's implicit synchronization orders it") {
    fixture f;
    f.process.current[0] = side;
    f.check.on_call(made(side, true));
    CHECK(f.check.on_call(call("cuLaunchKernel", side)) == checker::verdict::fine);
    // Not the per-thread default stream, which synchronizes with the legacy stream only.
    CHECK(f.check.on_call(call("cuLaunchKernel_ptsz", 0)) == checker::verdict::reported);
    f.process.site = 2;
    CHECK(f.check.on_call(call("cuLaunchKernel", 0)) == checker::verdict::fine);
    // Which, once the legacy stream's work came after the current stream's, comes after both.
    CHECK(f.check.on_call(call("cuLaunchKernel_ptsz", 0)) == checker::verdict::fine);
  }
  SUBCASE("the current stream's work synchronized by the host first") {
    fixture f;
    f.process.current[0] = side;
    f.check.on_call(made(side, false));
    CHECK(f.check.on_call(call("cuLaunchKernel", side)) == checker::verdict::fine);
    f.check.on_call(returned(call("cuStreamSynchronize", side)));
    CHECK(f.check.on_call(call("cuMemsetD8Async", 0)) == checker::verdict::fine);
  }
  SUBCASE("stream-ordered allocation and free on the legacy stream") {
    fixture f;
    f.process.current[0] = side;
    f.check.on_call(made(side, false));
    CHECK(f.check.on_call(call("cuMemAllocAsync", side)) == checker::verdict::fine);
    CHECK(f.check.on_call(call("cuLaunchKernel", side)) == checker::verdict::fine);
    CHECK(f.check.on_call(call("cuMemFreeAsync", 0)) == checker::verdict::reported);
    CHECK(f.process.sunk.at(0).call == call_kind::free_async);
  }
}

TEST_CASE("order: a library that orders its own streams is not judged on them; strict mode judges all") {
  for (const bool strict : {false, true}) {
    CAPTURE(strict);
    fixture f(parse_options(strict ? "wrong-stream=strict,capture" : "all", nullptr, nullptr, nullptr, nullptr));
    f.process.current[0] = side;
    f.check.on_call(made(side, false));
    f.check.on_call(made(other, false, /*library_stream=*/true)); // cuDNN's, NCCL's, XLA's
    f.check.on_call(made(0x9000, false));
    CHECK(f.check.on_call(call("cuLaunchKernel", side)) == checker::verdict::fine);
    CHECK(f.check.on_call(call("cuMemsetD8Async", other)) ==
          (strict ? checker::verdict::reported : checker::verdict::fine));
    // The same library stream ordered by events, and another stream no library made.
    f.process.site = 2;
    CHECK(f.check.on_call(call("cuLaunchKernel", 0x9000)) == checker::verdict::reported);
    // Strict: any stream but the current one, ordered or not, as before the order was followed.
    f.check.on_call(on_event("cuEventRecord", side, 0xe1));
    f.check.on_call(on_event("cuStreamWaitEvent", 0x9000, 0xe1));
    f.process.site = 3;
    CHECK(f.check.on_call(call("cuLaunchKernel", 0x9000)) ==
          (strict ? checker::verdict::reported : checker::verdict::fine));
  }
}

TEST_CASE("order: an exited thread's waits are not inherited by a new thread given its id") {
  fixture f;
  f.process.current[0] = side;
  f.check.on_call(made(side, false));
  f.check.on_call(made(other, false));
  CHECK(f.check.on_call(call("cuLaunchKernel", side)) == checker::verdict::fine);
  f.check.on_call(returned(call("cuStreamSynchronize", side, worker)));
  f.check.forget_thread(worker);
  CHECK(f.check.on_call(call("cuLaunchKernel", other, worker)) == checker::verdict::reported);
}

TEST_CASE("order: after calls went unseen (a pause), nothing queued before is reported") {
  fixture f;
  f.process.current[0] = side;
  f.check.on_call(made(side, false));
  f.check.on_call(made(other, false));
  CHECK(f.check.on_call(call("cuLaunchKernel", side)) == checker::verdict::fine);
  f.check.calls_went_unseen();
  CHECK(f.check.on_call(call("cuLaunchKernel", other)) == checker::verdict::fine);
}

TEST_CASE("order: memory words written by one stream and waited on by another order them") {
  fixture f;
  f.process.current[0] = side;
  f.check.on_call(made(side, false));
  f.check.on_call(made(other, false));
  CHECK(f.check.on_call(on_event("cuStreamWriteValue32_v2", side, 0x5000)) == checker::verdict::fine);
  CHECK(f.check.on_call(on_event("cuStreamWaitValue32_v2", other, 0x5000)) == checker::verdict::fine);
  CHECK(f.check.on_call(call("cuLaunchKernel", other)) == checker::verdict::fine);
}

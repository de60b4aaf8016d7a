// streamcheck's reports of a run (no GPU): what the allow-list takes, by library, symbol and Python
// module.
#include "../../src/streamcheck/report_log.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace streamlike::check;

namespace {

// The process as the log sees it: one call site, its frames and Python location as given.
struct fake_process {
  std::vector<std::string> frames{"/opt/app/libextension.so: launch_my_kernel(float*)+0x10"};
  std::string python;

  world as_world() {
    world w;
    w.context = this;
    w.take_call_site = [](void* c, call_site& s) {
      s.addresses = {reinterpret_cast<void*>(0x1000)};
      s.python = static_cast<fake_process*>(c)->python;
    };
    w.symbolize = [](void* c, call_site& s) { s.frames = static_cast<fake_process*>(c)->frames; };
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
  process.python = std::move(python);
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

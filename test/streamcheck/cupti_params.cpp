// The CUPTI layer's reading of driver calls, on a CPU (libcupti names every driver callback
// without a driver): every call the toolkit names that the checker judges by its stream has its
// stream read, every capture begin its mode, and the reads find the fields CUDA fills in.
#include "../../src/streamcheck/call_kind.hpp"
#include "../../src/streamcheck/cupti_params.hpp"

#include <doctest/doctest.h>

#include <cupti.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

using namespace streamlike::check;

namespace {

// Calls that carry no single stream: judged by nothing but their kind (documented in
// docs/streamcheck.md, "What it cannot see").
const std::set<std::string> without_stream = {
    "cuLaunch",                             // the pre-3.0 launch: the legacy stream, no argument
    "cuLaunchGrid",                         // the same
    "cuLaunchCooperativeKernelMultiDevice", // one stream per device, in its launch parameters
    "cuCtxSynchronize",
    "cuEventSynchronize",
    "cuEventQuery",
};

bool needs_stream(call_kind kind) {
  return queued_on_stream(kind) || kind == call_kind::event_record || kind == call_kind::stream_wait ||
         kind == call_kind::wait_value || kind == call_kind::batch_mem_op || kind == call_kind::stream_destroy ||
         kind == call_kind::capture_begin || kind == call_kind::capture_end;
}

std::string base(std::string name) {
  for (const char* suffix : {"_ptsz", "_ptds"}) {
    if (name.size() > 5 && name.compare(name.size() - 5, 5, suffix) == 0) name.resize(name.size() - 5);
  }
  return name;
}

} // namespace

TEST_CASE("every driver call the checker judges by its stream has its stream read") {
  std::map<call_kind, int> per_kind;
  int punished = 0;
  std::set<std::string> missing;
  int named = 0;
  for (CUpti_CallbackId cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &name) != CUPTI_SUCCESS || name == nullptr) continue;
    ++named;
    const call_kind kind = classify(name);
    ++per_kind[kind];
    punished += capture_punished(kind) ? 1 : 0;
    // cu64*: CUDA 3's 64-bit entry points, which no params struct describes (the driver's own
    // calls go through the _v2 ones): not judged by their stream.
    const bool legacy_64 = std::string(name).rfind("cu64", 0) == 0;
    if (needs_stream(kind) && !takes_stream(cbid) && without_stream.count(base(name)) == 0 && !legacy_64)
      missing.insert(name);
    // A stream sync or query names its stream: a sync of the capturing stream itself is judged by it.
    const std::string b = base(name);
    if ((b == "cuStreamSynchronize" || b == "cuStreamQuery") && !takes_stream(cbid)) missing.insert(name);
  }
  CAPTURE(named);
  CHECK(named > 500);
  for (const std::string& name : missing) FAIL_CHECK("no stream read for " << name);
  // The toolkit's calls of each kind are all classified (the counts of CUDA 13.0's driver API).
  CHECK(per_kind[call_kind::launch] >= 8);
  CHECK(per_kind[call_kind::async_copy] >= 30);
  CHECK(per_kind[call_kind::memset] >= 12);
  CHECK(per_kind[call_kind::host_function] >= 2);
  CHECK(per_kind[call_kind::event_record] >= 4);
  CHECK(per_kind[call_kind::stream_wait] >= 2);
  CHECK(per_kind[call_kind::graph_launch] >= 2);
  CHECK(punished >= 20);
  CHECK(per_kind[call_kind::alloc_async] >= 4);
  CHECK(per_kind[call_kind::free_async] >= 2);
  CHECK(per_kind[call_kind::write_value] >= 8);
  CHECK(per_kind[call_kind::wait_value] >= 8);
  CHECK(per_kind[call_kind::batch_mem_op] >= 4);
  CHECK(per_kind[call_kind::stream_create] >= 3);
  CHECK(per_kind[call_kind::event_destroy] >= 2);
  CHECK(per_kind[call_kind::capture_begin] >= 6);
  CHECK(per_kind[call_kind::capture_end] >= 2);
  CHECK(per_kind[call_kind::capture_mode] == 1);
}

TEST_CASE("the stream and the capture mode are read from the fields CUDA fills in") {
  const auto handle = reinterpret_cast<CUstream>(std::uintptr_t{0x1234});
  CUstream got = nullptr;

  cuLaunchKernel_params launch{};
  launch.hStream = handle;
  REQUIRE(stream_of(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &launch, &got));
  CHECK(got == handle);

  CUlaunchConfig config{};
  config.hStream = handle;
  cuLaunchKernelEx_params ex{};
  ex.config = &config;
  got = nullptr;
  REQUIRE(stream_of(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, &ex, &got));
  CHECK(got == handle);
  ex.config = nullptr;
  CHECK_FALSE(stream_of(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, &ex, &got));

  cuMemcpyHtoDAsync_v2_params copy{};
  copy.hStream = handle;
  got = nullptr;
  REQUIRE(stream_of(CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2, &copy, &got));
  CHECK(got == handle);

  cuStreamSynchronize_params sync{};
  sync.hStream = handle;
  got = nullptr;
  REQUIRE(stream_of(CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, &sync, &got));
  CHECK(got == handle);

  CHECK_FALSE(stream_of(CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, nullptr, &got)); // takes no parameters
  CHECK_FALSE(takes_stream(CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize));

  cuStreamBeginCapture_v2_params begin{};
  begin.hStream = handle;
  begin.mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  CHECK(capture_mode_of(CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2, &begin) == cudaStreamCaptureModeRelaxed);
  begin.mode = CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
  CHECK(capture_mode_of(CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2, &begin) == cudaStreamCaptureModeThreadLocal);
  cuStreamBeginCaptureToGraph_params to_graph{};
  to_graph.mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  CHECK(capture_mode_of(CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph, &to_graph) ==
        cudaStreamCaptureModeRelaxed);
  cuStreamBeginCapture_params v1{};
  CHECK(capture_mode_of(CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture, &v1) == cudaStreamCaptureModeGlobal);
}

TEST_CASE("the events, memory words and made streams the order follows are read from their fields") {
  const auto event = reinterpret_cast<CUevent>(std::uintptr_t{0xe1});
  cuEventRecord_params record{};
  record.hEvent = event;
  CHECK(object_of(CUPTI_DRIVER_TRACE_CBID_cuEventRecord, &record) == 0xe1);
  cuStreamWaitEvent_ptsz_params wait{};
  wait.hEvent = event;
  CHECK(object_of(CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent_ptsz, &wait) == 0xe1);
  cuEventDestroy_v2_params destroy{};
  destroy.hEvent = event;
  CHECK(object_of(CUPTI_DRIVER_TRACE_CBID_cuEventDestroy_v2, &destroy) == 0xe1);
  cuStreamWriteValue32_v2_params write{};
  write.stream = reinterpret_cast<CUstream>(std::uintptr_t{0x1234});
  write.addr = 0x5000;
  CHECK(object_of(CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue32_v2, &write) == 0x5000);
  CUstream got = nullptr;
  REQUIRE(stream_of(CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue32_v2, &write, &got));
  CHECK(got == write.stream);
  CHECK(object_of(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &record) == 0);

  CUstream made = reinterpret_cast<CUstream>(std::uintptr_t{0x7000});
  cuStreamCreateWithPriority_params create{};
  create.phStream = &made;
  create.flags = CU_STREAM_NON_BLOCKING;
  CUstream stream = nullptr;
  unsigned int flags = 0;
  REQUIRE(created_stream_of(CUPTI_DRIVER_TRACE_CBID_cuStreamCreateWithPriority, &create, &stream, &flags));
  CHECK(stream == made);
  CHECK(flags == CU_STREAM_NON_BLOCKING);
  create.phStream = nullptr;
  CHECK_FALSE(created_stream_of(CUPTI_DRIVER_TRACE_CBID_cuStreamCreateWithPriority, &create, &stream, &flags));
  CHECK_FALSE(created_stream_of(CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, &create, &stream, &flags));

  CUstreamBatchMemOpParams ops[3]{};
  ops[0].operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  ops[0].writeValue.address = 0x5000;
  ops[1].operation = CU_STREAM_MEM_OP_BARRIER;
  ops[2].operation = CU_STREAM_MEM_OP_WAIT_VALUE_64;
  ops[2].waitValue.address = 0x6000;
  cuStreamBatchMemOp_v2_params batch{};
  batch.count = 3;
  batch.paramArray = ops;
  std::vector<std::pair<bool, std::uintptr_t>> seen;
  REQUIRE(for_each_memory_op(
      CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_v2, &batch,
      [](void* c, bool writes, std::uintptr_t address) {
        static_cast<std::vector<std::pair<bool, std::uintptr_t>>*>(c)->emplace_back(writes, address);
      },
      &seen));
  CHECK(seen == std::vector<std::pair<bool, std::uintptr_t>>{{true, 0x5000}, {false, 0x6000}});
}

TEST_CASE("a call's object is read only where its kind names one, which every call with an object has") {
  // Every field of the parameters non-zero: object_of finds an object wherever it reads one.
  alignas(std::max_align_t) std::array<unsigned char, 4096> params{};
  params.fill(0x11);
  int read = 0;
  for (CUpti_CallbackId cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &name) != CUPTI_SUCCESS || name == nullptr) continue;
    if (object_of(cbid, params.data()) == 0) continue;
    ++read;
    CHECK_MESSAGE(names_object(classify(name)), name << " has an object its kind, " << kind_name(classify(name))
                                                     << ", does not name: the CUPTI layer would not read it");
  }
  CHECK(read >= 20); // events recorded, waited on, synchronized, queried, destroyed; memory words
}

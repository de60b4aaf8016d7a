// streamlike/adapters/xla_ffi.hpp: handlers bound with the bridge, called as XLA calls them (a call
// frame and an XLA_FFI_Api table, here a stand-in that hands out a stream of the fake CUDA), with
// torch's and tvm-ffi's stand-ins loaded (test/fake_frameworks) as in a process that imported them.
// Inside the body XLA's stream is current everywhere; after it every framework has what it had,
// whether something was set before or nothing, and whether the body returned, failed or threw.
#include "../host/fake_cuda_streams.hpp"
#include "../host/host_support.hpp"
#include "../host/loaded_frameworks.hpp"

#include <streamlike/adapters/xla_ffi.hpp>
#include <streamlike/current_stream.hpp>
#include <streamlike/current_stream_providers.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <dlfcn.h>

/// The stand-in's error: what XLA_FFI_Error_Create was given.
struct XLA_FFI_Error {
  XLA_FFI_Error_Code code;
  std::string message;
};

namespace {

namespace ffi = xla::ffi;
namespace bridge = streamlike::adapters::xla_ffi;
using streamlike::stream_view;

// --- the frameworks' stand-ins ---------------------------------------------------------------

using namespace host_test::loaded;

// --- the XLA FFI API's stand-in ----------------------------------------------------------------

/// What XLA's execution context holds for these tests: the stream XLA_FFI_Stream_Get hands out.
struct execution_context {
  void* stream;
};

XLA_FFI_Error* create_error(XLA_FFI_Error_Create_Args* args) {
  return new XLA_FFI_Error{args->errc, args->message != nullptr ? args->message : ""};
}
void destroy_error(XLA_FFI_Error_Destroy_Args* args) { delete args->error; }
XLA_FFI_Error* get_stream(XLA_FFI_Stream_Get_Args* args) {
  args->stream = reinterpret_cast<execution_context*>(args->ctx)->stream;
  return nullptr;
}

// Only the entries the bridge's handlers reach: newer XLA headers renamed the error-message one
// (XLA_FFI_Error_GetDetails), and these tests read the stand-in's error directly.
XLA_FFI_Api make_api() {
  XLA_FFI_Api api{};
  api.struct_size = XLA_FFI_Api_STRUCT_SIZE;
  api.XLA_FFI_Error_Create = create_error;
  api.XLA_FFI_Error_Destroy = destroy_error;
  api.XLA_FFI_Stream_Get = get_stream;
  return api;
}
const XLA_FFI_Api fake_api = make_api();

/// The result of one call as XLA sees it: success, or an error's code and text.
struct call_result {
  bool ok = true;
  XLA_FFI_Error_Code code = XLA_FFI_Error_Code_OK;
  std::string message;
};

/// Calls `handler` as XLA does, on `stream`, with one F32 scalar attribute "a".
call_result call(XLA_FFI_Handler* handler, stream_view stream, float a) {
  execution_context context{stream.get()};
  XLA_FFI_ByteSpan name{"a", 1};
  XLA_FFI_ByteSpan* names[] = {&name};
  XLA_FFI_Scalar scalar{XLA_FFI_DataType_F32, &a};
  void* attrs[] = {&scalar};
  XLA_FFI_AttrType attr_types[] = {XLA_FFI_AttrType_SCALAR};

  XLA_FFI_CallFrame frame{};
  frame.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  frame.api = &fake_api;
  frame.ctx = reinterpret_cast<XLA_FFI_ExecutionContext*>(&context);
  frame.stage = XLA_FFI_ExecutionStage_EXECUTE;
  frame.args = {XLA_FFI_Args_STRUCT_SIZE, nullptr, 0, nullptr, nullptr};
  frame.rets = {XLA_FFI_Rets_STRUCT_SIZE, nullptr, 0, nullptr, nullptr};
  frame.attrs = {XLA_FFI_Attrs_STRUCT_SIZE, nullptr, 1, attr_types, names, attrs};
  XLA_FFI_Error* error = handler(&frame);
  if (error == nullptr) return {};
  call_result result{false, error->code, error->message};
  delete error;
  return result;
}

/// The traits a handler declares, read as XLA reads them (the metadata extension).
XLA_FFI_Handler_Traits traits_of(XLA_FFI_Handler* handler) {
  XLA_FFI_Metadata metadata{};
  metadata.struct_size = XLA_FFI_Metadata_STRUCT_SIZE;
  XLA_FFI_Metadata_Extension extension{};
  extension.extension_base = {XLA_FFI_Metadata_Extension_STRUCT_SIZE, XLA_FFI_Extension_Metadata, nullptr};
  extension.metadata = &metadata;
  XLA_FFI_CallFrame frame{};
  frame.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  frame.extension_start = &extension.extension_base;
  frame.api = &fake_api;
  XLA_FFI_Error* error = handler(&frame);
  REQUIRE(error == nullptr);
  return metadata.traits;
}

// --- the handlers ------------------------------------------------------------------------------

/// What a body saw, and what it is told to do.
struct observed {
  stream_view current{cudaStream_t{}};
  stream_view given{cudaStream_t{}};
  void* torch = nullptr;
  void* tvm = nullptr;
  float a = 0;
  int calls = 0;
};
thread_local observed seen;
enum class outcome { succeed, fail, throw_runtime_error, throw_invalid_argument };
thread_local outcome next_outcome = outcome::succeed;

void look(float a) {
  ++seen.calls;
  seen.a = a;
  seen.current = streamlike::current_stream();
  const int device = 0;
  seen.torch = torch_current(device);
  seen.tvm = tvm_current(device);
}

ffi::Error body(float a) {
  look(a);
  switch (next_outcome) {
    case outcome::succeed: return ffi::Error::Success();
    case outcome::fail: return ffi::Error::InvalidArgument("the body refused");
    case outcome::throw_runtime_error: throw std::runtime_error("the body threw");
    case outcome::throw_invalid_argument: throw std::invalid_argument("a must be positive");
  }
  return ffi::Error::Success();
}

// Bound once each way: returning an error, returning void and taking the stream, with the trait.
XLA_FFI_DEFINE_HANDLER(error_handler, bridge::on_xla_stream(body), bridge::bind().Attr<float>("a"));
XLA_FFI_DEFINE_HANDLER(void_handler, bridge::on_xla_stream([](stream_view stream, float a) {
                         seen.given = stream;
                         look(a);
                       }),
                       bridge::bind().Attr<float>("a"), {bridge::command_buffer_compatible});

/// A handler whose body calls error_handler on another stream.
struct nested_calls {
  stream_view inner{cudaStream_t{}};
  stream_view after_inner{cudaStream_t{}};
  call_result inner_result;
};
thread_local nested_calls nested;
XLA_FFI_DEFINE_HANDLER(outer_handler, bridge::on_xla_stream([](float) {
                         nested.inner_result = call(error_handler, nested.inner, 3.0f);
                         nested.after_inner = streamlike::current_stream(0);
                       }),
                       bridge::bind().Attr<float>("a"));

struct handler_case {
  const char* name;
  XLA_FFI_Handler* handler;
  bool takes_stream;
};
const handler_case handlers[] = {
    {"body returning xla::ffi::Error", error_handler, false},
    {"body returning void, taking the stream", void_handler, true},
};

/// What each framework had before the call: nothing set, or a stream of its own.
struct before_case {
  const char* name;
  bool frameworks_set;
};
const before_case prior_states[] = {{"nothing set before", false}, {"each framework on its own stream", true}};

} // namespace

TEST_CASE("inside a handler XLA's stream is current everywhere; after it, everything is as before") {
  require_setup();
  for (const auto& h : handlers) {
    for (const auto& b : prior_states) {
      CAPTURE(h.name);
      CAPTURE(b.name);
      const stream_view xla_stream = host_test::fake_cuda_stream(0);
      const stream_view torch_before = host_test::fake_cuda_stream(0);
      const stream_view tvm_before = host_test::fake_cuda_stream(0);
      if (b.frameworks_set) {
        set_torch(0, torch_before.get());
        set_tvm(0, tvm_before.get());
      }
      const stream_view current_before = streamlike::current_stream(0);
      seen = {};
      next_outcome = outcome::succeed;

      const call_result result = call(h.handler, xla_stream, 2.5f);

      CHECK(result.ok);
      CHECK(seen.calls == 1);
      CHECK(seen.a == 2.5f);
      CHECK(seen.current == xla_stream);
      CHECK(seen.torch == xla_stream.get());
      CHECK(seen.tvm == xla_stream.get());
      if (h.takes_stream) CHECK(seen.given == xla_stream);
      CHECK(torch_current(0) == (b.frameworks_set ? torch_before.get() : nullptr));
      CHECK(tvm_current(0) == (b.frameworks_set ? tvm_before.get() : nullptr));
      CHECK(streamlike::current_stream(0) == current_before);
      CHECK(torch_current(1) == nullptr); // another device: never touched
      CHECK(tvm_current(1) == nullptr);
      require_setup();
    }
  }
}

TEST_CASE("a body that fails or throws: XLA gets an error with its text, every framework is restored") {
  require_setup();
  struct failure_case {
    const char* name;
    outcome what;
    XLA_FFI_Error_Code code;
    const char* message;
  };
  const failure_case failures[] = {
      {"returns an error", outcome::fail, XLA_FFI_Error_Code_INVALID_ARGUMENT, "the body refused"},
      {"throws std::runtime_error", outcome::throw_runtime_error, XLA_FFI_Error_Code_INTERNAL, "the body threw"},
      {"throws std::invalid_argument", outcome::throw_invalid_argument, XLA_FFI_Error_Code_INVALID_ARGUMENT,
       "a must be positive"},
  };
  for (const auto& f : failures) {
    for (const auto& b : prior_states) {
      CAPTURE(f.name);
      CAPTURE(b.name);
      const stream_view xla_stream = host_test::fake_cuda_stream(0);
      const stream_view torch_before = host_test::fake_cuda_stream(0);
      if (b.frameworks_set) set_torch(0, torch_before.get());
      seen = {};
      next_outcome = f.what;

      const call_result result = call(error_handler, xla_stream, 1.0f);

      CHECK(seen.calls == 1);
      CHECK(seen.current == xla_stream);
      CHECK_FALSE(result.ok);
      CHECK(result.code == f.code);
      CHECK(result.message == f.message);
      CHECK(torch_current(0) == (b.frameworks_set ? torch_before.get() : nullptr));
      CHECK(tvm_current(0) == nullptr);
      require_setup();
    }
  }
  next_outcome = outcome::succeed;
}

TEST_CASE("handlers nest: a handler called inside another's body restores the outer one's stream") {
  require_setup();
  const stream_view outer = host_test::fake_cuda_stream(0);
  nested.inner = host_test::fake_cuda_stream(0);
  seen = {};
  next_outcome = outcome::succeed;
  const call_result result = call(outer_handler, outer, 1.0f);
  CHECK(result.ok);
  CHECK(nested.inner_result.ok);
  CHECK(seen.current == nested.inner);
  CHECK(nested.after_inner == outer);
  CHECK(torch_current(0) == nullptr);
  CHECK(tvm_current(0) == nullptr);
}

TEST_CASE("command_buffer_compatible is XLA's trait, declared to XLA through the handler's metadata") {
  CHECK(traits_of(void_handler) == XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE);
  CHECK(traits_of(error_handler) == 0);
}

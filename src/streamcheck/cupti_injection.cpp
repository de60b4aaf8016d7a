// streamcheck's CUPTI layer: libstreamlike_check.so, loaded into any CUDA process through
// CUDA_INJECTION64_PATH (the driver calls InitializeInjection when it initializes) or LD_PRELOAD
// (a constructor that only points CUDA_INJECTION64_PATH at this library, so that CUPTI starts with
// the driver, in a process that initializes CUDA), with its options in STREAMLIKE_CHECK*
// (options.hpp). It finds libcupti at run time (cupti_library.hpp), subscribes to the driver API
// callbacks of the calls the checker judges, turns each into a call_event and hands it to the
// checker (checker.hpp), which decides; this file only translates. Unset STREAMLIKE_CHECK: nothing
// is subscribed and the process runs as without the library.
#include "call_site.hpp"
#include "cupti_params.hpp"
#include "checker.hpp"
#include "cupti_library.hpp"
#include "library_streams.hpp"
#include "native_site.hpp"
#include "options.hpp"
#include "process_record.hpp"
#include "stream_blocking.hpp"

#include <streamlike/c/current_stream_registry.h>
#include <streamlike/current_stream.hpp>
#include <streamlike/current_stream_providers.hpp>

#include <cuda.h>
#include <cupti.h>

#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace streamlike::check {
namespace {

// Never destroyed: callbacks may still come during static destruction.
checker* the_checker = nullptr;
std::FILE* report_file = stderr;
std::vector<call_kind> kind_of_cbid; // indexed by callback id
void* driver = nullptr;              // libcuda.so.1, for the driver queries the layer makes
stream_flag_queries flag_queries;    // looked up in `driver` once it is open
CUpti_SubscriberHandle subscriber = nullptr;
const cupti_functions* cupti = nullptr; // set once libcupti is found
std::mutex pausing;                     // one pause or resume at a time
// Subscribed as when checking, every callback but a capture's returning at once: CUPTI's floor
// under the checker's cost, timed in the checker's own process (streamlike_check_set_paused(2)).
std::atomic<bool> idle{false};

// STREAMLIKE_CHECK_RECORDS: the folder of the per-process records (process_record.hpp). Written at
// start, at each new report and at exit; never on a call the checker finds clean.
std::string records_dir;
std::mutex records_writing; // one writer at a time, so that the newest record is the one left
bool checked = false;
std::string why_unchecked;

void write_record(bool summarized) noexcept {
  if (records_dir.empty()) return;
  try {
    const std::lock_guard lock(records_writing);
    // The log is read under this lock, so that a later writer never leaves an older list.
    const std::string log = checked && the_checker != nullptr ? the_checker->json() : std::string();
    const process_facts p = this_process();
    std::string error;
    static bool said = false;
    if (!write_process_record(records_dir, p.pid, process_record(p, checked, why_unchecked, summarized, log), error) &&
        !said) {
      said = true;
      std::fprintf(stderr, "streamcheck: %s\n", error.c_str());
    }
  } catch (...) { // out of memory: the record stays as it was
  }
}

// cuStreamBeginRecaptureToGraph (CUDA 13.3) is newer than the headers this may be built with: its
// callback is found by name at run time (past the headers' last callback id), and its parameters
// read as CUPTI lays out every call's, in the call's order.
struct recapture_params {
  CUstream hStream;
  CUstreamCaptureMode mode;
  CUgraph hGraph;
  void* callbackFunc;
  void* userData;
};

// The stream and mode of a call, the recapture's included: only a recapture is enabled past the
// headers' last callback id.
bool stream_of_call(CUpti_CallbackId cbid, const void* params, CUstream* stream) noexcept {
  if (cbid >= CUPTI_DRIVER_TRACE_CBID_SIZE) [[unlikely]] {
    *stream = static_cast<const recapture_params*>(params)->hStream;
    return true;
  }
  return stream_of(cbid, params, stream);
}
// The recapture's callback ids, found by name (within the headers' ids too, when built with 13.3's).
std::vector<bool> is_recapture;
cudaStreamCaptureMode capture_mode_of_call(CUpti_CallbackId cbid, const void* params) noexcept {
  if (cbid < is_recapture.size() && is_recapture[cbid])
    return static_cast<cudaStreamCaptureMode>(static_cast<const recapture_params*>(params)->mode);
  return capture_mode_of(cbid, params);
}

// Switches the callbacks of every checked call but the capture ones on or off; how many switched.
int switch_checked_calls(bool on) {
  int switched = 0;
  for (CUpti_CallbackId cbid = 1; cbid < kind_of_cbid.size(); ++cbid) {
    if (kind_of_cbid[cbid] == call_kind::other || follows_captures(kind_of_cbid[cbid])) continue;
    if (cupti->enable_callback(on ? 1 : 0, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid) == CUPTI_SUCCESS) ++switched;
  }
  return switched;
}

// The layer's state of the calling thread, in one object that is trivial to destroy and
// initialized by a constant: a callback reaches all of it with one thread-local access and no
// initialization check (in a library loaded with dlopen, each thread-local access can be a call
// into the loader).
struct thread_state {
  bool inside = false;       // the checker's own CUDA calls (a provider's) are not judged
  bool exit_watched = false; // the thread's exit_watch is armed
  // The verdict on the last call this thread made that was judged before it ran (a
  // checker::verdict), -1 for none since streamlike_check_last_verdict last asked.
  int last_verdict = -1;
  // A capture's stream, asked whether it is blocking when cuStreamBeginCapture is entered (once
  // the capture has begun, asking would invalidate it), for the note made after the call.
  CUstream stream_entering_capture = nullptr;
  bool stream_entering_capture_blocking = true;
  // The last context the thread used and its device (one CUPTI query per change of context).
  CUcontext last_context = nullptr;
  int last_device = -1;
  std::uint64_t id = 0; // the thread's id, 0 until first asked
};
thread_local constinit thread_state this_thread_state{};

/// The calling thread's state, its address computed once: GCC computes a thread-local's address
/// again after every call (a call into the loader here), the empty asm makes it a value to keep.
thread_state& my_thread_state() noexcept {
  thread_state* t = &this_thread_state;
  asm("" : "+r"(t));
  return *t;
}

// The device of a call's context.
int device_of(thread_state& t, CUcontext context) noexcept {
  if (context == nullptr) return -1;
  if (context != t.last_context) {
    uint32_t device = 0;
    t.last_device = cupti->get_device_id(context, &device) == CUPTI_SUCCESS ? static_cast<int>(device) : -1;
    t.last_context = context;
  }
  return t.last_device;
}

std::uint64_t thread_id(thread_state& t) noexcept {
  if (t.id == 0) [[unlikely]]
    t.id = static_cast<std::uint64_t>(syscall(SYS_gettid));
  return t.id;
}

// The device is the call's context's, so the process's registry is asked for it directly (the
// table this copy of streamlike forwards to, or its own): current_stream(device)'s answer, with no
// device check that could throw and no frame of this copy's on every checked call.
const streamlike_current_stream_registry* process_registry = nullptr; // set before the first call

bool current_stream_of(void*, int device, std::uintptr_t* stream) noexcept {
  void* current = nullptr;
  if (process_registry->current(device, &current) != STREAMLIKE_CURRENT_STREAM_OK) return false;
  *stream = reinterpret_cast<std::uintptr_t>(current);
  return true;
}

// Which framework's answer current_stream() took, and any other framework naming another stream
// (a default stream named by one that has nothing set is not a disagreement worth a word).
std::string current_stream_answers(void*, int device) {
  try {
    std::string text;
    const std::vector<streamlike::current_stream_answer> answers = streamlike::current_stream_conflicts(device);
    if (!answers.empty()) {
      text = "set by " + answers.front().provider;
      for (std::size_t i = 1; i < answers.size(); ++i) {
        if (answers[i].stream.is_default()) continue;
        char handle[32];
        std::snprintf(handle, sizeof handle, "%p", static_cast<void*>(answers[i].stream.get()));
        text += ", while " + answers[i].provider + " names " + handle;
      }
    }
    // A provider that lives in Python cannot answer on a thread Python never ran on: say so, since
    // the current stream read here may then not be the one the program set.
    if (!python_reachable_here()) {
      for (const streamlike::current_stream_provider_info& p : streamlike::current_stream_providers()) {
        if (p.name != "cupy") continue;
        if (!text.empty()) text += "; ";
        text += "CuPy's current stream could not be asked: this thread cannot call into Python";
        break;
      }
    }
    return text;
  } catch (...) {
    return {};
  }
}

// Called by the log outside its lock, once per new call site: the record is written here, never
// for a call found clean.
void write_report(void*, const report& r) {
  const std::string text = format(r);
  std::fputs(text.c_str(), report_file);
  std::fflush(report_file);
  write_record(false);
}

// Tells the checker when a thread that made driver calls exits, so that a new thread given its id
// inherits nothing of it. Touched once per thread (thread_state::exit_watched), since touching it
// runs an initialization check.
struct thread_exit_watch {
  bool armed = false;
  ~thread_exit_watch() {
    if (armed && the_checker != nullptr) {
      thread_state& t = this_thread_state;
      t.inside = true;
      the_checker->forget_thread(thread_id(t));
    }
  }
};
thread_local thread_exit_watch exit_watch;

[[gnu::noinline]] void arm_exit_watch(thread_state& t) noexcept {
  exit_watch.armed = true;
  t.exit_watched = true;
}

// Inlined into look_at, whose every judged call comes through here: one frame fewer per launch.
[[gnu::always_inline]] inline void judge(thread_state& t, const call_event& e) noexcept {
  try {
    const checker::verdict v = the_checker->on_call(e);
    if (!e.returned) t.last_verdict = static_cast<int>(v);
  } catch (...) { // out of memory for a report: nothing may leave a CUPTI callback
  }
}

// cuStreamBatchMemOp: each wait and write of a memory word, as the calls of their own they stand for.
struct batch_context {
  call_event* e;
  thread_state* t;
};
void judge_memory_op(void* context, bool writes, std::uintptr_t address) {
  call_event op = *static_cast<batch_context*>(context)->e;
  op.kind = writes ? call_kind::write_value : call_kind::wait_value;
  op.object = address;
  judge(*static_cast<batch_context*>(context)->t, op);
}

// A call the callback looks at: its thread's state, the call_event, the checker's judgment.
[[gnu::noinline]] void look_at(CUpti_CallbackId cbid, call_kind kind, bool returned, const CUpti_CallbackData* cb) {
  thread_state& t = my_thread_state();
  if (t.inside) return;
  call_event e;
  e.kind = kind;
  e.returned = returned;
  if (e.kind == call_kind::capture_begin && !e.returned) {
    t.inside = true;
    CUstream stream = nullptr;
    (void)stream_of_call(cbid, cb->functionParams, &stream);
    t.stream_entering_capture = stream;
    t.stream_entering_capture_blocking = stream_is_blocking(flag_queries, stream);
    t.inside = false;
    return;
  }
  t.inside = true;
  if (!t.exit_watched) [[unlikely]]
    arm_exit_watch(t);
  e.api = cb->functionName != nullptr ? cb->functionName : "";
  e.thread = thread_id(t);
  e.device = device_of(t, cb->context);
  CUstream stream = nullptr;
  e.has_stream = stream_of_call(cbid, cb->functionParams, &stream);
  if (names_object(e.kind)) e.object = object_of(cbid, cb->functionParams);
  if (e.returned && cb->functionReturnValue != nullptr) {
    const CUresult result = *static_cast<const CUresult*>(cb->functionReturnValue);
    // An end capture that failed (an invalidated capture) still ended it, unless made from the
    // wrong thread.
    e.succeeded =
        e.kind == call_kind::capture_end ? result != CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD : result == CUDA_SUCCESS;
  }
  if (e.kind == call_kind::stream_create) {
    unsigned int flags = 0;
    e.has_stream = e.succeeded && created_stream_of(cbid, cb->functionParams, &stream, &flags);
    e.succeeded = e.has_stream;
    e.blocking = (flags & CU_STREAM_NON_BLOCKING) == 0;
    e.library_stream = e.has_stream && orders_its_own_streams(calling_library());
  }
  e.stream = stream != nullptr ? reinterpret_cast<std::uintptr_t>(stream) : canonical_stream(e.api, 0);
  if (e.kind == call_kind::capture_begin) {
    e.mode = capture_mode_of_call(cbid, cb->functionParams);
    // A non-blocking stream does not synchronize with the legacy one: known from the entry.
    e.blocking = stream == t.stream_entering_capture ? t.stream_entering_capture_blocking : true;
    t.stream_entering_capture = nullptr;
  } else if (e.kind == call_kind::capture_mode) {
    const auto* p = static_cast<const cuThreadExchangeStreamCaptureMode_params*>(cb->functionParams);
    if (p->mode == nullptr)
      e.succeeded = false;
    else
      e.mode = static_cast<cudaStreamCaptureMode>(*p->mode);
  }
  if (e.kind == call_kind::batch_mem_op) {
    batch_context context{&e, &t};
    judge(t, e); // the capture rules see the call itself
    (void)for_each_memory_op(cbid, cb->functionParams, judge_memory_op, &context);
  } else {
    judge(t, e);
  }
  t.inside = false;
}

// CUPTI's callback. Each call is judged before it runs; some are also (or only) noted once they
// returned. The exit of every other call (a launch's) is let go before anything else is read: no
// thread-local, no call_event, no frame of look_at's.
void CUPTIAPI on_driver_call(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API || cbid >= kind_of_cbid.size()) [[unlikely]]
    return;
  const call_kind kind = kind_of_cbid[cbid];
  if (idle.load(std::memory_order_relaxed) && !follows_captures(kind)) [[unlikely]]
    return;
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  const bool returned = cb->callbackSite == CUPTI_API_EXIT;
  // A capture's entry is looked at too: whether its stream is blocking can be asked only then.
  if (returned ? !noted_after(kind) : !judged_before(kind) && kind != call_kind::capture_begin) return;
  look_at(cbid, kind, returned, cb);
}

void write_summary() {
  const std::string summary = the_checker->summary();
  std::fputs(summary.c_str(), report_file);
  std::fflush(report_file);
  const options& o = the_checker->settings();
  if (!o.json.empty()) {
    if (std::FILE* f = std::fopen(o.json.c_str(), "w")) {
      const std::string json = the_checker->json();
      std::fputs(json.c_str(), f);
      std::fclose(f);
    } else {
      std::fprintf(stderr, "streamcheck: cannot write STREAMLIKE_CHECK_JSON=%s\n", o.json.c_str());
    }
  }
  write_record(true);
  if (o.fail && the_checker->reported() != 0) {
    std::fflush(nullptr);
    _exit(1); // STREAMLIKE_CHECK_FAIL=1: the run fails
  }
}

void at_exit() noexcept {
  if (the_checker == nullptr) return;
  this_thread_state.inside = true;
  try {
    write_summary();
  } catch (...) { // nothing may leave an exit handler
  }
}

// A process the checker did not start in: the record of why, final at exit.
void at_exit_unchecked() noexcept { write_record(true); }

// Says why the checker is off, once, on stderr and in the record; 1, start()'s "not started".
int refuse(const std::string& why) noexcept {
  try {
    std::fprintf(stderr, "streamcheck: %s; the program runs unchecked\n", why.c_str());
    checked = false;
    why_unchecked = why;
    write_record(false);
    if (!records_dir.empty()) std::atexit(at_exit_unchecked);
  } catch (...) {
  }
  return 1;
}

// Who holds CUPTI when a subscription is refused: the name CUPTI gave, else the injection library
// the driver was given, else a library in the process known to subscribe.
std::string cupti_holder(const char* named_by_cupti) {
  if (named_by_cupti != nullptr && named_by_cupti[0] != '\0') return named_by_cupti;
  if (const char* injection = std::getenv("CUDA_INJECTION64_PATH");
      injection != nullptr && injection[0] != '\0' && std::strstr(injection, "streamlike_check") == nullptr)
    return std::string("the CUDA_INJECTION64_PATH library ") + injection;
  struct known {
    const char* file;
    const char* who;
  };
  static constexpr known subscribers[] = {
      {"libToolsInjection", "Nsight Systems or Nsight Compute"},
      {"libkineto", "kineto (torch.profiler)"},
      {"libtorch_cuda", "torch (torch.profiler's kineto)"},
      {"libjax", "JAX's profiler"},
      {"xla_extension", "XLA's profiler"},
  };
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    for (const known& k : subscribers)
      if (line.find(k.file, slash) != std::string::npos) return std::string(k.who) + " (" + line.substr(slash) + ")";
  }
  return "another CUPTI subscriber";
}

// Subscribes beside other subscribers where CUPTI allows it (cuptiSubscribe_v2 with
// allowMultipleSubscribers, CUPTI 13.2 and newer); else alone. `how` says which.
CUptiResult subscribe(std::string& holder, const char*& how) {
  char old_name[old_subscriber_name_size] = {};
  CUptiResult result = CUPTI_ERROR_INVALID_PARAMETER;
  if (cupti->subscribe_v2 != nullptr) {
    // The newest struct first; each older one where CUPTI refuses the size.
    const bool several = cupti->version >= cupti_version_multiple_subscribers;
    for (const std::size_t size :
         {subscriber_params_size, subscriber_params_size_to_field, subscriber_params_size_13_0}) {
      if (!several && size != subscriber_params_size_13_0) continue;
      subscriber_params p{};
      p.structSize = size;
      p.subscriberName = "streamlike.check";
      p.oldSubscriberName = old_name;
      p.oldSubscriberSize = sizeof old_name;
      p.allowMultipleSubscribers = size > subscriber_params_size_13_0 ? 1 : 0;
      how = p.allowMultipleSubscribers != 0 ? "beside other CUPTI subscribers" : "as the only CUPTI subscriber";
      result = cupti->subscribe_v2(&subscriber, on_driver_call, nullptr, &p);
      if (result != CUPTI_ERROR_INVALID_PARAMETER) break;
    }
  }
  if (result == CUPTI_ERROR_INVALID_PARAMETER) {
    how = "as the only CUPTI subscriber";
    result = cupti->subscribe(&subscriber, on_driver_call, nullptr);
  }
  if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) holder = cupti_holder(old_name);
  return result;
}

// 0: subscribed (or off); 1: not (said why on stderr and in the record).
int start() noexcept {
  if (const char* dir = std::getenv("STREAMLIKE_CHECK_RECORDS"); dir != nullptr) records_dir = dir;
  options o;
  try {
    o = options_from_environment();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s; streamcheck is off\n", e.what());
    why_unchecked = e.what();
    write_record(false);
    if (!records_dir.empty()) std::atexit(at_exit_unchecked);
    return 1;
  }
  if (!o.any()) return 0; // off: nothing subscribed
  o.output = with_pid(o.output, static_cast<long>(getpid()));
  o.json = with_pid(o.json, static_cast<long>(getpid()));
  // No driver, no CUDA calls to check: said plainly rather than as CUPTI's unknown error.
  driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (driver == nullptr) driver = dlopen("libcuda.so.1", RTLD_LAZY);
  if (driver == nullptr)
    return refuse("no CUDA driver in this process (libcuda.so.1 cannot be loaded): nothing to check");
  std::string not_found;
  cupti = load_cupti(not_found);
  if (cupti == nullptr) return refuse(not_found);
  if (!o.output.empty()) {
    report_file = std::fopen(o.output.c_str(), "w");
    if (report_file == nullptr) {
      std::fprintf(stderr, "streamcheck: cannot write STREAMLIKE_CHECK_OUTPUT=%s; reporting on stderr\n",
                   o.output.c_str());
      report_file = stderr;
    }
  }
  // Past the headers' last callback id, a newer CUPTI's calls are unknown here but for the
  // recapture, found by name.
  constexpr CUpti_CallbackId newer_ids = 1024;
  kind_of_cbid.assign(CUPTI_DRIVER_TRACE_CBID_SIZE + newer_ids, call_kind::other);
  is_recapture.assign(kind_of_cbid.size(), false);
  for (CUpti_CallbackId cbid = 1; cbid < kind_of_cbid.size(); ++cbid) {
    const char* name = nullptr;
    if (cupti->get_callback_name(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &name) != CUPTI_SUCCESS || name == nullptr) continue;
    const std::string_view n(name);
    if (n == "cuStreamBeginRecaptureToGraph" || n == "cuStreamBeginRecaptureToGraph_ptsz") {
      kind_of_cbid[cbid] = call_kind::capture_begin;
      is_recapture[cbid] = true;
    } else if (cbid < CUPTI_DRIVER_TRACE_CBID_SIZE) {
      kind_of_cbid[cbid] = classify(name);
    }
  }
  while (kind_of_cbid.size() > CUPTI_DRIVER_TRACE_CBID_SIZE && kind_of_cbid.back() == call_kind::other)
    kind_of_cbid.pop_back();
  // streamlike.check asks for Python call sites through the environment, so that it need not load
  // this library before the script's frameworks load theirs.
  if (const char* frames = std::getenv("STREAMLIKE_CHECK_PYTHON_FRAMES"); frames != nullptr && frames[0] == '1')
    (void)use_python_frames();
  // Looked up, not linked: the library loads where there is no driver.
  flag_queries.is_capturing =
      reinterpret_cast<decltype(flag_queries.is_capturing)>(dlsym(driver, "cuStreamIsCapturing"));
  flag_queries.get_flags = reinterpret_cast<decltype(flag_queries.get_flags)>(dlsym(driver, "cuStreamGetFlags"));
  process_registry = streamlike_current_stream_registry_table();
  world w;
  w.current_stream = current_stream_of;
  w.take_native_site = take_native_site;
  w.take_python_site = take_python_site;
  w.symbolize = symbolize;
  w.current_stream_answers = current_stream_answers;
  checker* made = new checker(o, w);
  made->on_report(write_report, nullptr);
  std::string holder;
  const char* how = "";
  const CUptiResult subscribed = subscribe(holder, how);
  if (subscribed != CUPTI_SUCCESS) {
    delete made;
    const char* what = nullptr;
    cupti->get_result_string(subscribed, &what);
    std::string why = std::string("cannot subscribe to CUDA driver callbacks (") +
                      (what != nullptr ? what : "unknown CUPTI error") + ")";
    if (!holder.empty()) why += ": CUPTI is held by " + holder;
    return refuse(why);
  }
  the_checker = made;
  checked = true;
  std::size_t enabled = 0;
  for (CUpti_CallbackId cbid = 1; cbid < kind_of_cbid.size(); ++cbid) {
    if (kind_of_cbid[cbid] == call_kind::other) continue;
    if (cupti->enable_callback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid) == CUPTI_SUCCESS) ++enabled;
  }
  std::atexit(at_exit);
  write_record(false);
  std::fprintf(report_file, "streamcheck: checking %s%s%s on %zu CUDA driver calls (%s, %s)\n",
               o.wrong_stream ? "wrong-stream" : "", o.wrong_stream && o.capture ? " and " : "",
               o.capture ? "capture" : "", enabled, cupti->path.c_str(), how);
  return 0;
}

int start_once() noexcept {
  static int result = -1;
  static std::once_flag once;
  std::call_once(once, [] { result = start(); });
  return result;
}

// This library's own path, resolved (LD_PRELOAD may name it relative to the directory it started in).
std::string own_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&start_once), &info) == 0 || info.dli_fname == nullptr) return {};
  char resolved[PATH_MAX];
  return realpath(info.dli_fname, resolved) != nullptr ? std::string(resolved) : std::string(info.dli_fname);
}

// LD_PRELOAD: nothing is started here, in a process that may never use CUDA. The driver is pointed
// at this library instead (it reads CUDA_INJECTION64_PATH when it initializes, and calls
// InitializeInjection then), so CUPTI is loaded only in a process that initializes CUDA.
__attribute__((constructor)) void start_when_preloaded() {
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload == nullptr || std::string_view(preload).find("streamlike_check") == std::string_view::npos) return;
  try {
    if (!options_from_environment().any()) return; // off
  } catch (const std::exception&) {
    (void)start_once(); // says what is wrong with the options, touching no CUDA
    return;
  }
  const std::string self = own_path();
  const char* injection = std::getenv("CUDA_INJECTION64_PATH");
  if (injection == nullptr || injection[0] == '\0') {
    if (!self.empty()) setenv("CUDA_INJECTION64_PATH", self.c_str(), 1);
    return;
  }
  char resolved[PATH_MAX];
  if (realpath(injection, resolved) != nullptr && self == resolved) return; // already the driver's
  // The driver is given another tool's library: this one starts now, before the driver does.
  (void)start_once();
}

} // namespace
} // namespace streamlike::check

/// CUDA_INJECTION64_PATH: the driver calls this once, when it initializes. 1 for success, as
/// CUPTI's injection samples return.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  (void)streamlike::check::start_once();
  return 1;
}

/// For streamlike.check (Python): call sites from now on carry the Python file:line. Returns 1
/// when the Python C API was found in the process.
extern "C" __attribute__((visibility("default"))) int streamlike_check_use_python_frames(void) {
  return streamlike::check::use_python_frames() ? 1 : 0;
}

/// The calling thread's Python location as a report would name it, into `buffer` (NUL-terminated,
/// truncated to `size`); returns its length, 0 when there is none (a thread Python never ran on,
/// no Python frames asked for). For streamlike.check's tests.
extern "C" __attribute__((visibility("default"))) int streamlike_check_python_location(char* buffer, size_t size) {
  const std::string location = streamlike::check::python_location();
  if (buffer != nullptr && size > 0) {
    const std::size_t n = location.size() < size ? location.size() : size - 1;
    std::memcpy(buffer, location.data(), n);
    buffer[n] = '\0';
  }
  return static_cast<int>(location.size());
}

/// Resumes (0) or pauses (1) the checking of calls, or keeps every call subscribed with nothing
/// judged (2: CUPTI's floor under the checker's cost, in this process). Captures begun and ended
/// meanwhile are still followed, so a capture breaker after the pause is still named. Returns how
/// many driver calls are subscribed to (resumed, idle) or were switched off (paused), -1 where the
/// checker is not running or `state` is none of these. What bench/tools/streamcheck_overhead.py
/// toggles to time the checker within one process; also for a region a program checks apart.
extern "C" __attribute__((visibility("default"))) int streamlike_check_set_paused(int state) {
  using namespace streamlike::check;
  if (the_checker == nullptr || subscriber == nullptr || state < 0 || state > 2) return -1;
  const std::lock_guard lock(pausing);
  const int switched = switch_checked_calls(state != 1);
  idle.store(state == 2, std::memory_order_relaxed);
  // What the pause kept from the checker's sight: nothing queued before is taken to be unordered.
  if (state == 0) the_checker->calls_went_unseen();
  return switched;
}

/// The checker's verdict on the last driver call the calling thread made that it judged before the
/// call ran (0 fine, 1 reported, 2 repeated: reported before at that call site, 3 allowed), and
/// forgets it: -1 when no call was judged on this thread since the last ask. For the test that
/// asks CUDA and the checker about the same calls (test/streamcheck/capture_verdicts.cu).
static_assert(static_cast<int>(streamlike::check::checker::verdict::fine) == 0 &&
              static_cast<int>(streamlike::check::checker::verdict::reported) == 1 &&
              static_cast<int>(streamlike::check::checker::verdict::repeated) == 2 &&
              static_cast<int>(streamlike::check::checker::verdict::allowed) == 3);
extern "C" __attribute__((visibility("default"))) int streamlike_check_last_verdict(void) {
  streamlike::check::thread_state& t = streamlike::check::this_thread_state;
  const int v = t.last_verdict;
  t.last_verdict = -1;
  return v;
}

/// Whether the checker is subscribed (1), off (0), or failed to start (-1): for streamlike.check.
extern "C" __attribute__((visibility("default"))) int streamlike_check_active(void) {
  return streamlike::check::the_checker != nullptr ? 1 : 0;
}

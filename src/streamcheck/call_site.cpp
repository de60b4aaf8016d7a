#include "call_site.hpp"

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace streamlike::check {
namespace {

constexpr std::size_t max_frames = 8;

// The Python C API functions a location needs (all in the limited API since 3.10, but the
// finalization query and the interpreter list).
struct python_api {
  int (*initialized)() = nullptr;                  // Py_IsInitialized
  int (*finalizing)() = nullptr;                   // Py_IsFinalizing (3.13), _Py_IsFinalizing before
  void* (*attached_state)() = nullptr;             // PyThreadState_GetUnchecked (3.13), _PyThreadState_UncheckedGet
  void* (*this_thread_state)() = nullptr;          // PyGILState_GetThisThreadState: borrowed
  int (*gil_ensure)() = nullptr;                   // PyGILState_Ensure (a PyGILState_STATE)
  void (*gil_release)(int) = nullptr;              // PyGILState_Release
  void* (*thread_frame)(void*) = nullptr;          // PyThreadState_GetFrame: new reference
  void* (*interpreter_head)() = nullptr;           // PyInterpreterState_Head
  void* (*interpreter_main)() = nullptr;           // PyInterpreterState_Main
  void* (*frame_back)(void*) = nullptr;            // PyFrame_GetBack: new reference
  void* (*frame_code)(void*) = nullptr;            // PyFrame_GetCode: new reference
  int (*frame_line)(void*) = nullptr;              // PyFrame_GetLineNumber
  int (*frame_lasti)(void*) = nullptr;             // PyFrame_GetLasti (3.11), optional
  void* (*get_attr)(void*, const char*) = nullptr; // PyObject_GetAttrString: new reference
  const char* (*utf8)(void*) = nullptr;            // PyUnicode_AsUTF8
  void (*incref)(void*) = nullptr;                 // Py_IncRef
  void (*decref)(void*) = nullptr;                 // Py_DecRef
  void (*clear_error)() = nullptr;                 // PyErr_Clear
  // What attached_state answers: before 3.12, the thread state of whichever thread holds the GIL
  // (a process-wide variable); from 3.12 on, the calling thread's own attached thread state.
  bool attached_is_this_threads = false;
};
python_api python;
std::atomic<bool> python_ready{false};

template <class F>
bool find(F& function, const char* name) {
  function = reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
  return function != nullptr;
}

// Code of a library rather than of the program: the frame to name is the caller's.
bool is_library_file(std::string_view file) {
  return file.find("/site-packages/") != std::string::npos || file.find("/dist-packages/") != std::string::npos ||
         file.find("/lib/python3") != std::string::npos || file.starts_with("<frozen");
}

bool is_own_library(const Dl_info& info) {
  static const void* own_base = [] {
    Dl_info self{};
    return dladdr(reinterpret_cast<void*>(&symbolize), &self) != 0 ? self.dli_fbase : nullptr;
  }();
  return info.dli_fbase == own_base;
}

bool is_cuda_library(const char* path) {
  const char* slash = std::strrchr(path, '/');
  const char* name = slash != nullptr ? slash + 1 : path;
  return std::strncmp(name, "libcupti", 8) == 0 || std::strncmp(name, "libcuda.", 8) == 0 ||
         std::strncmp(name, "libcudart.", 10) == 0;
}

// What a report needs of a code object its frames run: its file, and whether that is a library's.
// Taken once per code object, which is kept alive from then on (a reference held for the run),
// so that its address names it in a repeat's identity for the rest of the run.
struct code_facts {
  std::string file;
  bool library = false;
};
std::mutex codes_mutex;
auto* const codes = new std::unordered_map<void*, code_facts>; // never destroyed, as the references

const code_facts& facts_of(void* code) { // with this thread's thread state attached
  {
    const std::lock_guard lock(codes_mutex);
    if (const auto found = codes->find(code); found != codes->end()) return found->second;
  }
  code_facts facts;
  if (void* name = python.get_attr(code, "co_filename")) {
    if (const char* text = python.utf8(name)) facts.file = text;
    python.decref(name);
  }
  python.clear_error();
  facts.library = is_library_file(facts.file);
  const std::lock_guard lock(codes_mutex);
  const auto [at, added] = codes->emplace(code, std::move(facts));
  if (added) python.incref(code);
  return at->second;
}

// `tstate`'s frames (the calling thread's own thread state, attached): per frame from the
// innermost to the innermost outside the libraries (or all, up to 64, when every one is a
// library's), its code object and position (its last instruction; its line before 3.11) into
// `identity`, and that frame's file:line into `location` when asked (the innermost one's when
// every frame is a library's).
void frames_of(void* tstate, std::vector<std::uintptr_t>& identity, std::string* location) {
  void* frame = python.thread_frame(tstate); // new references from here on, released as we go
  std::string innermost;
  bool chosen = false;
  for (int depth = 0; frame != nullptr && depth < 64 && !chosen; ++depth) {
    void* code = python.frame_code(frame);
    const code_facts* facts = code != nullptr ? &facts_of(code) : nullptr;
    chosen = facts != nullptr && !facts->library;
    identity.push_back(reinterpret_cast<std::uintptr_t>(code));
    identity.push_back(static_cast<std::uintptr_t>(python.frame_lasti != nullptr ? python.frame_lasti(frame)
                                                                                 : python.frame_line(frame)));
    if (location != nullptr && (chosen || depth == 0)) {
      std::string here =
          (facts != nullptr ? facts->file : std::string()) + ":" + std::to_string(python.frame_line(frame));
      if (chosen)
        *location = std::move(here);
      else
        innermost = std::move(here);
    }
    if (code != nullptr) python.decref(code);
    void* back = python.frame_back(frame);
    python.decref(frame);
    frame = back;
  }
  if (frame != nullptr) python.decref(frame);
  if (location != nullptr && !chosen) *location = std::move(innermost);
}

// The version's major.minor from Py_GetVersion ("3.12.1 (main, ...)"): 0 when it cannot be read.
int python_minor(const char* version) {
  int major = 0;
  int minor = 0;
  if (version == nullptr || std::sscanf(version, "%d.%d", &major, &minor) != 2 || major != 3) return 0;
  return minor;
}

} // namespace

void take_python_site(void*, std::vector<std::uintptr_t>& identity, std::string* location) {
  identity.clear();
  if (location != nullptr) location->clear();
  if (!python_ready.load(std::memory_order_acquire) || python.initialized() == 0) return;
  // The frames read are always those of this thread's own thread state, never those of the thread
  // state that happens to be current: before 3.12 "current" is whichever thread holds the GIL, so
  // a thread that released it would name another thread's line. (Not PyGILState_Check either,
  // which answers yes on every thread once a subinterpreter exists.)
  void* const own = python.this_thread_state();
  void* const attached = python.attached_state();
  if (attached != nullptr && (attached == own || python.attached_is_this_threads)) {
    frames_of(attached, identity, location);
    return;
  }
  // Frameworks release the GIL around their CUDA calls (CuPy's launches and allocations, torch's
  // synchronizations): the thread's Python frames are still there, frozen while the call runs.
  // Take the GIL back for the look, as a `with gil:` block inside their `nogil` one would. A thread
  // Python never ran on has no frames (and gets no thread state made for it); during
  // finalization, taking the GIL could stop this thread for good, so no look then.
  if (own == nullptr || python.finalizing() != 0) return;
  // Before 3.12, another thread state holding the GIL may still be this thread's own, of another
  // interpreter (a subinterpreter entered from this thread): taking the GIL would then wait for
  // ever, so where more than one interpreter exists, no look.
  if (attached != nullptr && python.interpreter_head() != python.interpreter_main()) return;
  const int state = python.gil_ensure();
  frames_of(own, identity, location);
  python.gil_release(state);
}

std::string python_location() {
  std::vector<std::uintptr_t> identity;
  std::string location;
  take_python_site(nullptr, identity, &location);
  return location;
}

void symbolize(void*, call_site& site) {
  for (void* address : site.addresses) {
    if (site.frames.size() == max_frames) break;
    Dl_info info{};
    if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) {
      char text[32];
      std::snprintf(text, sizeof text, "?: %p", address);
      site.frames.emplace_back(text);
      continue;
    }
    if (is_own_library(info) || is_cuda_library(info.dli_fname)) continue;
    std::string frame = info.dli_fname;
    frame += ": ";
    if (info.dli_sname != nullptr) {
      int status = 0;
      char* demangled = abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status);
      frame += status == 0 && demangled != nullptr ? demangled : info.dli_sname;
      std::free(demangled);
      char offset[32];
      std::snprintf(offset, sizeof offset, "+0x%llx",
                    static_cast<unsigned long long>(static_cast<char*>(address) - static_cast<char*>(info.dli_saddr)));
      frame += offset;
    } else {
      char offset[32];
      std::snprintf(offset, sizeof offset, "+0x%llx",
                    static_cast<unsigned long long>(static_cast<char*>(address) - static_cast<char*>(info.dli_fbase)));
      frame += offset;
    }
    site.frames.push_back(std::move(frame));
  }
}

bool python_reachable_here() noexcept {
  return python_ready.load(std::memory_order_acquire) && python.initialized() != 0 &&
         python.this_thread_state() != nullptr;
}

bool use_python_frames() noexcept {
  if (python_ready.load(std::memory_order_acquire)) return true;
  python_api api;
  if (!find(api.finalizing, "Py_IsFinalizing")) (void)find(api.finalizing, "_Py_IsFinalizing");
  if (find(api.attached_state, "PyThreadState_GetUnchecked")) {
    api.attached_is_this_threads = true;
  } else if (find(api.attached_state, "_PyThreadState_UncheckedGet")) {
    const char* (*version)() = nullptr;
    api.attached_is_this_threads = find(version, "Py_GetVersion") && python_minor(version()) >= 12;
  }
  const bool found =
      api.finalizing != nullptr && api.attached_state != nullptr && find(api.initialized, "Py_IsInitialized") &&
      find(api.this_thread_state, "PyGILState_GetThisThreadState") && find(api.gil_ensure, "PyGILState_Ensure") &&
      find(api.gil_release, "PyGILState_Release") && find(api.thread_frame, "PyThreadState_GetFrame") &&
      find(api.interpreter_head, "PyInterpreterState_Head") && find(api.interpreter_main, "PyInterpreterState_Main") &&
      find(api.frame_back, "PyFrame_GetBack") && find(api.frame_code, "PyFrame_GetCode") &&
      find(api.frame_line, "PyFrame_GetLineNumber") && find(api.get_attr, "PyObject_GetAttrString") &&
      find(api.utf8, "PyUnicode_AsUTF8") && find(api.incref, "Py_IncRef") && find(api.decref, "Py_DecRef") &&
      find(api.clear_error, "PyErr_Clear");
  if (!found) return false;
  (void)find(api.frame_lasti, "PyFrame_GetLasti");
  python = api;
  python_ready.store(true, std::memory_order_release);
  return true;
}

std::string calling_library() {
  void* addresses[24];
  const int n = backtrace(addresses, 24);
  for (int i = 0; i < n; ++i) {
    Dl_info info{};
    if (dladdr(addresses[i], &info) == 0 || info.dli_fname == nullptr) continue;
    if (is_own_library(info) || is_cuda_library(info.dli_fname)) continue;
    return info.dli_fname;
  }
  return {};
}

} // namespace streamlike::check

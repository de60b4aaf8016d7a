#include "cupti_library.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <string_view>
#include <type_traits>
#include <vector>

namespace streamlike::check {
namespace {

constexpr const char* library_names[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"};

// Reads the functions out of an opened libcupti; false (naming the missing one) when it lacks any
// the layer needs.
bool resolve(void* handle, cupti_functions& f, std::string& missing) {
  const auto look_up = [handle, &missing](auto& pointer, const char* name, bool required) {
    pointer = reinterpret_cast<std::remove_reference_t<decltype(pointer)>>(dlsym(handle, name));
    if (pointer == nullptr && required && missing.empty()) missing = name;
  };
  look_up(f.subscribe, "cuptiSubscribe", true);
  look_up(f.subscribe_v2, "cuptiSubscribe_v2", false);
  look_up(f.enable_callback, "cuptiEnableCallback", true);
  look_up(f.get_callback_name, "cuptiGetCallbackName", true);
  look_up(f.get_device_id, "cuptiGetDeviceId", true);
  look_up(f.get_result_string, "cuptiGetResultString", true);
  CUptiResult (*get_version)(uint32_t*) = nullptr;
  look_up(get_version, "cuptiGetVersion", false);
  if (get_version == nullptr || get_version(&f.version) != CUPTI_SUCCESS) f.version = 0;
  return missing.empty();
}

// The folder of this library (libstreamlike_check.so), "" if unknown.
std::string own_folder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&load_cupti), &info) == 0 || info.dli_fname == nullptr) return {};
  std::string path = info.dli_fname;
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

// Every site-packages (or dist-packages) folder the process has a file mapped from: where pip put
// the libraries a Python process loaded (torch's, the streamlike package's), so where it put
// nvidia-cuda-cupti too. Read from /proc/self/maps, without calling into Python.
std::vector<std::string> mapped_site_folders() {
  std::vector<std::string> folders;
  std::set<std::string> seen;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string_view path = std::string_view(line).substr(slash);
    for (const std::string_view marker : {"/site-packages/", "/dist-packages/"}) {
      const auto at = path.find(marker);
      if (at == std::string_view::npos) continue;
      std::string folder(path.substr(0, at + marker.size() - 1));
      if (seen.insert(folder).second) folders.push_back(std::move(folder));
      break;
    }
  }
  return folders;
}

struct search {
  cupti_functions functions;
  std::vector<std::string> looked; // each place, as the message names it
  std::string unusable;            // a libcupti found that lacks a function

  // Opens `path` (a file) if it exists; true once the functions are read.
  bool try_file(const std::string& path) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) return false;
    return take(handle, path);
  }
  bool try_folder(const std::string& folder) {
    looked.push_back(folder);
    for (const char* name : library_names)
      if (try_file(folder + "/" + name)) return true;
    return false;
  }
  bool take(void* handle, const std::string& path) {
    std::string missing;
    if (resolve(handle, functions, missing)) {
      functions.path = path;
      return true;
    }
    if (unusable.empty()) unusable = path + " lacks " + missing;
    return false;
  }
};

} // namespace

const cupti_functions* load_cupti(std::string& why) {
  static search found;
  static bool loaded = false;
  if (loaded) return &found.functions;
  search s;
  bool ok = false;
  if (const char* given = std::getenv("STREAMLIKE_CHECK_CUPTI"); given != nullptr && given[0] != '\0') {
    s.looked.push_back(std::string("$STREAMLIKE_CHECK_CUPTI=") + given);
    ok = s.try_file(given);
  }
  // One already in the process (a framework's, a profiler's): a second copy would be a second CUPTI.
  if (!ok) {
    s.looked.push_back("the libcupti already loaded (libcupti.so.13, .12, libcupti.so)");
    for (const char* name : library_names) {
      if (void* handle = dlopen(name, RTLD_NOW | RTLD_NOLOAD); handle != nullptr && s.take(handle, name)) {
        ok = true;
        break;
      }
    }
  }
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"}) {
    if (ok) break;
    const char* root = std::getenv(variable);
    if (root == nullptr || root[0] == '\0') {
      s.looked.push_back(std::string("$") + variable + " (unset)");
      continue;
    }
    ok = s.try_folder(std::string(root) + "/lib64") || s.try_folder(std::string(root) + "/extras/CUPTI/lib64");
  }
  if (!ok) ok = s.try_folder("/usr/local/cuda/lib64") || s.try_folder("/usr/local/cuda/extras/CUPTI/lib64");
  if (!ok) {
    // nvidia-cuda-cupti: nvidia/cu13/lib from 13.x, nvidia/cuda_cupti/lib before. This library sits
    // in site-packages/streamlike/ when pip installed it.
    std::vector<std::string> sites;
    if (const std::string own = own_folder(); !own.empty()) sites.push_back(own + "/..");
    for (std::string& site : mapped_site_folders()) sites.push_back(std::move(site));
    for (const std::string& site : sites) {
      if ((ok = s.try_folder(site + "/nvidia/cu13/lib") || s.try_folder(site + "/nvidia/cuda_cupti/lib"))) break;
    }
  }
  if (!ok) {
    s.looked.push_back("the loader's search path (LD_LIBRARY_PATH, ldconfig)");
    for (const char* name : {"libcupti.so.13", "libcupti.so"}) {
      if (void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL); handle != nullptr && s.take(handle, name)) {
        ok = true;
        break;
      }
    }
  }
  if (!ok) {
    why = "CUPTI (libcupti) not found; looked at: ";
    for (std::size_t i = 0; i < s.looked.size(); ++i) why += (i ? "; " : "") + s.looked[i];
    if (!s.unusable.empty()) why += " (" + s.unusable + ")";
    why += ". Install the CUDA Toolkit's CUPTI, or pip install nvidia-cuda-cupti, or set STREAMLIKE_CHECK_CUPTI to "
           "the library";
    return nullptr;
  }
  found = std::move(s);
  loaded = true;
  return &found.functions;
}

} // namespace streamlike::check

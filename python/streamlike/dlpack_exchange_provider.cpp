// A current-stream provider over DLPack's C exchange API (docs/current-stream.md, "Providers":
// dlpack): a framework's tensor type offers `__dlpack_c_exchange_api__`, a PyCapsule named
// "dlpack_exchange_api" holding a DLPackExchangeAPI (dlpack.h, DLPack 1.3) that stays valid for the
// process, whose current_work_stream(device_type, device_id, &stream) answers the framework's
// current stream (torch: torch.cuda.current_stream). Read-only: the API has no setter. Registered
// for a type by register_dlpack_exchange_provider, and for torch.Tensor by the package itself
// where no dedicated torch provider answers (a torch whose libtorch_cuda lacks the C shim).
#include "package.hpp"
#include "use_entry.hpp"

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <streamlike/c/current_stream_provider.h>
#include <streamlike/current_stream_providers.hpp>
#include <streamlike/python/detail/cpython.hpp>
#include <streamlike/python/detail/package_current_stream.hpp>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

namespace nb = nanobind;

namespace streamlike_package {

namespace {

// The part of dlpack.h's exchange API this provider reads, laid out as DLPack 1.3 declares it:
// DLPackExchangeAPIHeader {DLPackVersion version; DLPackExchangeAPIHeader* prev_api;}, then five
// function pointers, current_work_stream last. Only current_work_stream is called.
struct dlpack_version {
  std::uint32_t major;
  std::uint32_t minor;
};
struct dlpack_exchange_header {
  dlpack_version version;
  dlpack_exchange_header* prev_api; // an older version's table, where the framework keeps one
};
struct dlpack_exchange_api {
  dlpack_exchange_header header;
  void* managed_tensor_allocator;
  void* managed_tensor_from_py_object_no_sync;
  void* managed_tensor_to_py_object_no_sync;
  void* dltensor_from_py_object_no_sync;
  // 0 on success; -1 with a Python exception set (so called only where Python can be called).
  int (*current_work_stream)(std::int32_t device_type, std::int32_t device_id, void** out_current_stream);
};
constexpr std::uint32_t dlpack_major = 1;
constexpr std::int32_t dl_cuda = 2; // DLDeviceType kDLCUDA
constexpr const char* capsule_name = "dlpack_exchange_api";
constexpr const char* attribute = "__dlpack_c_exchange_api__";

/// What one registration reads: the framework's table (valid for the process, by DLPack's rule).
struct exchange_context {
  const dlpack_exchange_api* api;
};

int exchange_get(void* context, std::int32_t device, void** stream) {
  if (!streamlike::python::detail::thread_can_call_python()) return STREAMLIKE_CURRENT_STREAM_UNAVAILABLE;
  const python_error_guard keep; // a failure's Python exception is the use block's, or dropped
  void* out = nullptr;
  if (static_cast<const exchange_context*>(context)->api->current_work_stream(dl_cuda, device, &out) != 0)
    return STREAMLIKE_CURRENT_STREAM_FAILED;
  *stream = out;
  return STREAMLIKE_CURRENT_STREAM_OK;
}

/// The exchange API `holder` (a type, or an object whose type) offers, of DLPack major 1 (walking
/// prev_api from a newer major); nullptr with a TypeError or ValueError naming what was wrong.
const dlpack_exchange_api* exchange_api_of(PyObject* holder, std::string& owner) noexcept {
  PyObject* type = PyType_Check(holder) ? holder : reinterpret_cast<PyObject*>(Py_TYPE(holder));
  const char* type_name = reinterpret_cast<PyTypeObject*>(type)->tp_name;
  owner = type_name;
  sd::scoped_ref capsule = sd::scoped_ref::steal(PyObject_GetAttrString(type, attribute));
  if (!capsule) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError,
                 "register_dlpack_exchange_provider: %s has no %s; expected a type (or an object of one) that offers "
                 "DLPack's C exchange API (a PyCapsule named \"%s\")",
                 type_name, attribute, capsule_name);
    return nullptr;
  }
  if (!PyCapsule_IsValid(capsule.get(), capsule_name)) {
    PyErr_Format(PyExc_TypeError,
                 "register_dlpack_exchange_provider: %s.%s is a %s, not a PyCapsule named \"%s\" (DLPack 1.3)",
                 type_name, attribute, Py_TYPE(capsule.get())->tp_name, capsule_name);
    return nullptr;
  }
  auto* first = static_cast<const dlpack_exchange_header*>(PyCapsule_GetPointer(capsule.get(), capsule_name));
  const dlpack_exchange_header* h = first;
  while (h != nullptr && h->version.major != dlpack_major) h = h->prev_api;
  if (h == nullptr) {
    PyErr_Format(PyExc_ValueError,
                 "register_dlpack_exchange_provider: %s's DLPack exchange API is version %u.%u, with no major %u "
                 "in its prev_api chain; this streamlike reads DLPack major %u",
                 type_name, first != nullptr ? first->version.major : 0U, first != nullptr ? first->version.minor : 0U,
                 dlpack_major, dlpack_major);
    return nullptr;
  }
  const auto* api = reinterpret_cast<const dlpack_exchange_api*>(h);
  if (api->current_work_stream == nullptr) {
    PyErr_Format(PyExc_ValueError,
                 "register_dlpack_exchange_provider: %s's DLPack exchange API has no current_work_stream", type_name);
    return nullptr;
  }
  Py_INCREF(capsule.get()); // the table stays valid for the process; so does the capsule that holds it
  return api;
}

/// The provider's name for `type_name`: "dlpack:" and its module's top package ("dlpack:torch").
std::string default_name(PyObject* holder) {
  PyObject* type = PyType_Check(holder) ? holder : reinterpret_cast<PyObject*>(Py_TYPE(holder));
  std::string module = "unknown";
  if (sd::scoped_ref m = sd::scoped_ref::steal(PyObject_GetAttrString(type, "__module__"))) {
    if (const char* text = PyUnicode_Check(m.get()) ? PyUnicode_AsUTF8(m.get()) : nullptr) module = text;
  }
  PyErr_Clear();
  return "dlpack:" + module.substr(0, module.find('.'));
}

/// Registers the provider of `holder`'s exchange API as `name` (or the default name); the name, or
/// nullopt with a Python error set. A name taken is std::invalid_argument (ValueError).
std::optional<std::string> register_for(PyObject* holder, const std::optional<std::string>& name) {
  std::string owner;
  const dlpack_exchange_api* api = exchange_api_of(holder, owner);
  if (api == nullptr) return std::nullopt;
  auto* names = new std::string(name ? *name : default_name(holder)); // lives as long as the registration may
  auto* context = new exchange_context{api};
  streamlike_current_stream_provider table = STREAMLIKE_CURRENT_STREAM_PROVIDER_INIT;
  table.priority = STREAMLIKE_CURRENT_STREAM_PRIORITY_DLPACK;
  table.name = names->c_str();
  table.context = context;
  table.get = &exchange_get;
  streamlike::register_current_stream_provider(table); // copies the name; context kept for good
  return *names;
}

std::atomic<bool> torch_decided{false};
std::mutex torch_deciding; // held only to register: no Python inside

} // namespace

void register_dlpack_torch_if_needed() noexcept {
  if (torch_decided.load(std::memory_order_acquire)) return;
  static std::atomic<PyObject*> name_slot{nullptr};
  PyObject* name = sd::interned(name_slot, "torch");
  if (name == nullptr || PyDict_Contains(PyImport_GetModuleDict(), name) != 1) {
    PyErr_Clear();
    return; // not imported (yet): asked again next time
  }
  const python_error_guard keep;
  try {
    // The dedicated provider, found in libtorch_cuda (the listing looks for it first), answers
    // torch itself: the exchange API is then not asked twice.
    for (const auto& p : streamlike::current_stream_providers()) {
      if (p.name == "torch" || p.name == "dlpack:torch") {
        torch_decided.store(true, std::memory_order_release);
        return;
      }
    }
    sd::scoped_ref torch = sd::scoped_ref::steal(PyImport_GetModule(name));
    sd::scoped_ref tensor = sd::scoped_ref::steal(torch ? PyObject_GetAttrString(torch.get(), "Tensor") : nullptr);
    const std::lock_guard<std::mutex> lock(torch_deciding);
    if (torch_decided.load(std::memory_order_relaxed)) return;
    torch_decided.store(true, std::memory_order_release); // once: a torch without the API stays without
    if (tensor && PyObject_HasAttrString(tensor.get(), attribute) == 1)
      (void)register_for(tensor.get(), std::string("dlpack:torch"));
  } catch (...) {
    // Registered already under that name, or out of memory: torch answers as it can.
  }
}

void bind_dlpack_exchange(nb::module_& m) {
  m.def(
      "register_dlpack_exchange_provider",
      [](nb::handle tensor_type, std::optional<std::string> name) {
        std::optional<std::string> registered = register_for(tensor_type.ptr(), name);
        if (!registered) throw nb::python_error();
        return *registered;
      },
      nb::arg("tensor_type"), nb::arg("name").none() = nb::none(),
      "Registers a read-only current-stream provider that asks `tensor_type`'s DLPack C exchange API "
      "(__dlpack_c_exchange_api__, DLPack 1.3) for the current stream (current_work_stream); returns its name "
      "(default: 'dlpack:' and the type's top package).");
}

} // namespace streamlike_package

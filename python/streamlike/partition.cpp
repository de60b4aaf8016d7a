// streamlike.Partition and streamlike.PartitionInfo: streamlike::partition and
// streamlike::partition_info (include/streamlike/partition.hpp), and streamlike.partition_of. A
// stream's partition (StreamView.partition, Stream.partition) is the library's partition_of.
#include "package.hpp"

#include <streamlike/partition.hpp>

#include <cstdint>
#include <string>

namespace streamlike_package {

namespace {

using streamlike::partition;
using streamlike::partition_info;

std::uintptr_t address_of(CUgreenCtx_st* green) { return reinterpret_cast<std::uintptr_t>(green); }

constexpr const char* borrow_expects =
    "expected an int (a CUgreenCtx address), a torch.cuda.green_contexts.GreenContext, a cuda.core green Context, "
    "or a stream of a green context (an object with __cuda_stream__)";

// A green context handle given as an int by its address, refused otherwise.
CUgreenCtx_st* green_context_address(nb::handle handle) {
  const unsigned long long address = PyLong_AsUnsignedLongLong(handle.ptr());
  if (PyErr_Occurred() != nullptr) {
    PyErr_Clear();
    throw nb::value_error(("Partition.borrow: " + std::string(nb::str(handle).c_str()) +
                           " is not a green context address; expected a positive int")
                              .c_str());
  }
  return reinterpret_cast<CUgreenCtx_st*>(static_cast<std::uintptr_t>(address));
}

// A stream that `owner` (a framework's green context object) hands out, and what it is, for messages.
// Neither torch's GreenContext nor cuda.core's Context shows its CUgreenCtx: the stream's is asked
// (partition_of). torch: GreenContext.Stream(), a stream of its own pool (torch 2.9 on, C++ and
// Python GreenContext alike); cuda.core: Context.create_stream(), valid on a green Context only.
nb::object stream_of_green_context_object(nb::handle owner, const char*& what) {
  if (nb::hasattr(owner, "is_green") && nb::hasattr(owner, "create_stream")) {
    what = "a cuda.core Context";
    if (!nb::cast<bool>(owner.attr("is_green"))) {
      throw nb::value_error("Partition.borrow: a cuda.core Context that is not green (a device's primary context); "
                            "expected one made with Device.create_context(ContextOptions(resources=...))");
    }
    return owner.attr("create_stream")();
  }
  what = "a torch GreenContext";
  return owner.attr("Stream")();
}

// The green context `obj` names: an address, a framework's green context object, or a green stream.
CUgreenCtx_st* green_context_argument(nb::handle obj) {
  if (PyLong_Check(obj.ptr()) && !PyBool_Check(obj.ptr())) return green_context_address(obj);
  const char* what = "the stream";
  nb::object stream;
  if (nb::hasattr(obj, "__cuda_stream__")) {
    stream = nb::borrow(obj);
  } else if ((nb::hasattr(obj, "is_green") && nb::hasattr(obj, "create_stream")) ||
             (nb::hasattr(obj, "Stream") && PyCallable_Check(obj.attr("Stream").ptr()))) {
    stream = stream_of_green_context_object(obj, what);
  } else {
    throw nb::type_error(
        ("Partition.borrow: an object of type '" + std::string(Py_TYPE(obj.ptr())->tp_name) + "'; " + borrow_expects)
            .c_str());
  }
  const partition_info info = streamlike::partition_of(stream_argument(stream));
  if (!info.green) {
    throw nb::value_error((std::string("Partition.borrow: ") + what + " of type '" + Py_TYPE(obj.ptr())->tp_name +
                           "' is in no green context (partition_of its stream: plain); " + borrow_expects)
                              .c_str());
  }
  return info.green_context;
}

} // namespace

PyObject* partition_or_none(stream_view view) noexcept {
  return guarded([&]() -> PyObject* {
    const partition_info info = streamlike::partition_of(view);
    if (!info.green) return Py_NewRef(Py_None);
    return nb::cast(info).release().ptr();
  });
}

bool read_partition(PyObject* value, std::optional<partition>& out) noexcept {
  if (value == Py_None) return true;
  partition* p = nullptr;
  if (!nb::try_cast<partition*>(nb::handle(value), p) || p == nullptr) {
    PyErr_Format(PyExc_TypeError, "Stream.create: partition must be a streamlike.Partition or None, got '%s'",
                 Py_TYPE(value)->tp_name);
    return false;
  }
  out = *p;
  return true;
}

void bind_partition(nb::module_& m) {
  nb::class_<partition_info>(m, "PartitionInfo",
                             "The partition a stream runs in (streamlike::partition_of): green or not, its device, "
                             "its context's id, the SMs its work may use.")
      .def_ro("green", &partition_info::green, "True for a stream made in a green context.")
      .def_ro("device", &partition_info::device, "The device of the stream's context.")
      .def_ro("context_id", &partition_info::context_id,
              "The driver's unique id of the stream's context (a green context's for a green stream).")
      .def_ro("sm_count", &partition_info::sm_count, "The SMs the stream's work may run on.")
      .def_prop_ro(
          "green_context", [](const partition_info& i) { return address_of(i.green_context); },
          "The CUgreenCtx address (0 for a plain stream).")
      .def(
          "__eq__", [](const partition_info& a, const partition_info& b) { return a == b; }, nb::is_operator())
      .def("__repr__",
           [](const partition_info& i) {
             return nb::steal(PyUnicode_FromFormat("<streamlike.PartitionInfo green=%s device=%d sm_count=%u "
                                                   "context_id=%llu>",
                                                   i.green ? "True" : "False", i.device, i.sm_count, i.context_id));
           })
      .def("__reduce__", [](const partition_info&) { refuse_pickle_of("streamlike.PartitionInfo"); });
  m.attr("PartitionInfo").attr("__module__") = "streamlike";

  nb::class_<partition>(m, "Partition", nb::is_weak_referenceable(),
                        "An SM partition of a device (a CUDA green context), shared: streams made on it "
                        "(Stream.create(partition=...)) keep it alive.")
      .def_static(
          "create", [](int device, unsigned int sm_count) { return partition::create(device, sm_count); },
          nb::arg("device"), nb::arg("sm_count"),
          "A green context of sm_count SMs of `device` (rounded up to the driver's granularity).")
      .def_static(
          "borrow", [](nb::handle green) { return partition::borrow(green_context_argument(green)); },
          nb::arg("green_context").none(),
          "Shares a green context someone else owns, never destroying it: given by its CUgreenCtx address, as a "
          "torch.cuda.green_contexts.GreenContext or a cuda.core green Context (the green context of a stream "
          "each hands out), or as a stream of it. Its owner keeps it alive while the partition and its streams "
          "live.")
      .def_prop_ro("device", &partition::device)
      .def_prop_ro("sm_count", &partition::sm_count)
      .def_prop_ro("id", &partition::id, "The driver's unique id of the green context's context.")
      .def_prop_ro("owned", &partition::owned, "True if the last reference destroys the green context.")
      .def_prop_ro(
          "green_context", [](const partition& p) { return address_of(p.green_context()); },
          "The CUgreenCtx address, as an int.")
      .def(
          "__eq__", [](const partition& a, const partition& b) { return a == b; }, nb::is_operator())
      .def("__hash__", [](const partition& p) { return p.id(); })
      .def("__repr__",
           [](const partition& p) {
             if (!p) return nb::steal(PyUnicode_FromString("<streamlike.Partition empty>"));
             return nb::steal(PyUnicode_FromFormat("<streamlike.Partition device=%d sm_count=%u id=%llu>", p.device(),
                                                   p.sm_count(), p.id()));
           })
      .def("__reduce__", [](const partition&) { refuse_pickle_of("streamlike.Partition"); });
  m.attr("Partition").attr("__module__") = "streamlike";

  m.def(
      "partition_of", [](nb::handle stream) { return streamlike::partition_of(stream_argument(stream)); },
      nb::arg("stream"),
      "The partition any stream object runs in, green or not (a PartitionInfo); capture-safe driver queries only.");
}

} // namespace streamlike_package

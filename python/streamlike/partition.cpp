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

// A green context handle given as an int by its address (torch's, cuda.core's), refused otherwise.
CUgreenCtx_st* green_context_argument(nb::handle handle) {
  if (!PyLong_Check(handle.ptr()) || PyBool_Check(handle.ptr())) {
    throw nb::type_error(("Partition.borrow: the green context must be an int (a CUgreenCtx address), got an "
                          "object of type '" +
                          std::string(Py_TYPE(handle.ptr())->tp_name) + "'")
                             .c_str());
  }
  const unsigned long long address = PyLong_AsUnsignedLongLong(handle.ptr());
  if (PyErr_Occurred() != nullptr) {
    PyErr_Clear();
    throw nb::value_error(("Partition.borrow: " + std::string(nb::str(handle).c_str()) +
                           " is not a green context address; expected a positive int")
                              .c_str());
  }
  return reinterpret_cast<CUgreenCtx_st*>(static_cast<std::uintptr_t>(address));
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
          nb::arg("green_context"),
          "Shares a green context someone else owns (by its CUgreenCtx address); never destroys it.")
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

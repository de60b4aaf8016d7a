// streamlike.StreamPool: streamlike::stream_pool (include/streamlike/stream_pool.hpp). Its streams
// reach Python through the casters as owning streamlike.Stream objects.
#include "package.hpp"

#include <streamlike/stream_pool.hpp>

#include <new>
#include <string>

namespace streamlike_package {

void bind_pool(nb::module_& m) {
  using streamlike::stream_pool;
  nb::class_<stream_pool>(m, "StreamPool", nb::is_weak_referenceable(),
                          "A fixed set of owning streams on one device, handed out round-robin (thread-safe).")
      .def(
          "__init__",
          [](stream_pool* self, nb::handle size, nb::handle device_arg) {
            if (!PyLong_Check(size.ptr()) || PyBool_Check(size.ptr())) {
              throw nb::type_error(
                  ("StreamPool: size must be an int (how many streams, >= 1), got an object of type '" +
                   std::string(Py_TYPE(size.ptr())->tp_name) + "'")
                      .c_str());
            }
            const long long n = PyLong_AsLongLong(size.ptr());
            if (n < 1 || n > 1 << 16) {
              PyErr_Clear();
              throw nb::value_error(
                  ("StreamPool: size must be between 1 and 65536, got " + std::string(nb::str(size).c_str())).c_str());
            }
            streamlike::stream_options options;
            if (!read_device("StreamPool", device_arg.ptr(), options.device)) throw nb::python_error();
            new (self) stream_pool(static_cast<std::size_t>(n), options);
          },
          nb::arg("size") = 16, nb::arg("device").none() = nb::none())
      .def("get", &stream_pool::get, "The next stream, round-robin (an owning Stream).")
      .def(
          "get_for", [](stream_pool& pool, nb::handle caller) { return pool.get_for(stream_argument(caller)); },
          nb::arg("stream"),
          "A pooled stream in the same SM partition (green context) as `stream` (any stream object); for a "
          "plain stream, get().")
      .def("get_non_capturing", &stream_pool::get_non_capturing,
           "The next stream, round-robin, that is not capturing a CUDA graph; RuntimeError if all are.")
      .def(
          "at", [](const stream_pool& pool, std::size_t index) { return pool.at(index); }, nb::arg("index"),
          "The stream at index % size (a stable choice).")
      .def("__len__", &stream_pool::size)
      .def_prop_ro("size", &stream_pool::size)
      .def_prop_ro("device", &stream_pool::device)
      .def("__repr__",
           [](const stream_pool& pool) {
             return nb::steal(
                 PyUnicode_FromFormat("<streamlike.StreamPool size=%zu device=%d>", pool.size(), pool.device()));
           })
      .def("__reduce__", [](const stream_pool&) { refuse_pickle_of("streamlike.StreamPool"); });
  m.attr("StreamPool").attr("__module__") = "streamlike";
}

} // namespace streamlike_package

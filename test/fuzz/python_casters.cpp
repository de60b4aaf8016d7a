// libFuzzer target: the Python casters (include/streamlike/python/), in an embedded interpreter.
// Each input builds one Python object and hands it to pybind11's stream_view and shared_stream
// casters and to the decoders both bindings' casters call (detail::decode_view, decode_shared;
// nanobind's casters are the same calls behind another base class), with and without implicit
// conversion. The object is one of:
//   - an instance of a class whose __cuda_stream__ is a method returning a fuzzed value (ints of
//     every size and sign, bools, floats, strings, None, objects with a raising or lying
//     __index__, tuples and lists of any length of those), or raising a fuzzed exception;
//   - the same with __cuda_stream__ as a plain attribute (the deprecated form), None, a property
//     that raises, or absent;
//   - a look-alike of torch's stream type: a C base type made with PyType_FromSpec with a fuzzed
//     size and fuzzed members (names among torch's device_type/device_index/stream_id, types
//     long long, int, unsigned long long, double, byte, read-only or not, at fuzzed offsets inside
//     the object), its bytes filled from the input, subclassed in Python with a __cuda_stream__
//     that passes (or nearly passes) the casters' test for torch's method, and a `cuda_stream`
//     that is a fuzzed value, a raising property, or absent in the class, over a base whose
//     `cuda_stream` is a C getter (as torch's is: returning the object's last word, or raising)
//     or absent; after the first pass the class may be changed (its `cuda_stream` replaced or
//     deleted), so the second pass meets a class that changed after use.
// The contract: no crash, no sanitizer report (PYTHONMALLOC=malloc, so AddressSanitizer sees
// every Python object's bounds), and every outcome consistent: a refusal (outcome::failed, a
// thrown error_already_set) has a Python exception set, an acceptance or a decline has none, and
// no other C++ exception escapes. Input: one byte per choice, read from the front (fuzz::input).
#include "fuzz_support.hpp"

#include <pybind11/embed.h>
#include <streamlike/python/pybind11.hpp>
#if PY_VERSION_HEX < 0x030C0000
#  include <structmember.h>
#endif

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

namespace py = pybind11;
namespace sd = streamlike::python::detail;

namespace {

constexpr const char* target = "fuzz_python_casters";

// Helpers written in Python, defined once: classes are made per input from fuzzed parts.
constexpr const char* helpers = R"PY(
class Boom(Exception):
    pass

class Index:
    """An object with __index__: numpy integers look like this to the casters."""
    def __init__(self, value, raises):
        self.value, self.raises = value, raises
    def __index__(self):
        if self.raises:
            raise Boom("__index__ raised")
        return self.value

class IntSub(int):
    pass

def make_method(result, raises, module, qualname):
    def __cuda_stream__(self):
        if raises is not None:
            raise raises
        return result
    __cuda_stream__.__module__ = module
    __cuda_stream__.__qualname__ = qualname
    return __cuda_stream__

def raising_property(exc):
    def get(self):
        raise exc
    return property(get)

def make_class(base, form, method, value, cuda_stream_form, cuda_stream_value, exc):
    ns = {}
    if form == 0:
        ns["__cuda_stream__"] = method
    elif form == 1:
        ns["__cuda_stream__"] = value          # the deprecated attribute form
    elif form == 2:
        ns["__cuda_stream__"] = None           # opts out
    elif form == 3:
        ns["__cuda_stream__"] = raising_property(exc)
    # form 4: no __cuda_stream__ at all
    if cuda_stream_form == 1:
        ns["cuda_stream"] = cuda_stream_value
    elif cuda_stream_form == 2:
        ns["cuda_stream"] = raising_property(exc)
    elif cuda_stream_form == 3:
        ns["cuda_stream"] = property(lambda self: cuda_stream_value)
    return type("Stream", (base,), ns)
)PY";

struct interpreter {
  py::scoped_interpreter guard{};
  py::dict globals;
  interpreter() {
    globals = py::dict(py::module_::import("__main__").attr("__dict__"));
    py::exec(helpers, globals);
    // The deprecated attribute form warns; warnings turned into errors would be refusals too,
    // both are fine, but printing thousands of warnings is not.
    py::module_::import("warnings").attr("simplefilter")("ignore");
  }
};
interpreter* python = nullptr;

// ---- fuzzed Python values -----------------------------------------------------------------------

py::object make_exception(fuzz::input& in) {
  switch (in.take<std::uint8_t>() % 5) {
    case 0: return python->globals["Boom"]("raised inside");
    case 1: return py::module_::import("builtins").attr("AttributeError")("an AttributeError inside");
    case 2: return py::module_::import("builtins").attr("TypeError")("a TypeError inside");
    case 3: return py::module_::import("builtins").attr("MemoryError")();
    default: return py::module_::import("builtins").attr("KeyboardInterrupt")();
  }
}

py::object make_int(fuzz::input& in) {
  const auto kind = in.take<std::uint8_t>() % 6;
  const auto raw = in.take<std::int64_t>();
  switch (kind) {
    case 0: return py::int_(raw % 8); // the small values: 0, 1, 2 are the default streams
    case 1: return py::int_(raw);
    case 2: { // beyond 64 bits, either sign
      py::object big = py::int_(raw) * py::int_(std::uint64_t{1} << 63) * py::int_(4);
      return (raw & 1) ? big : -big;
    }
    case 3: return py::reinterpret_steal<py::object>(PyLong_FromUnsignedLongLong(static_cast<std::uint64_t>(raw)));
    case 4: return python->globals["IntSub"](raw);
    default: return py::bool_((raw & 1) != 0);
  }
}

py::object make_value(fuzz::input& in, int depth) {
  const auto kind = in.take<std::uint8_t>() % (depth > 0 ? 9 : 7);
  switch (kind) {
    case 0:
    case 1: return make_int(in);
    case 2: return py::float_(static_cast<double>(in.take<std::int32_t>()) / 3.0);
    case 3: return py::str("0x" + std::to_string(in.take<std::uint16_t>()));
    case 4: return py::none();
    case 5: return py::bytes("\x00\x01", 2);
    case 6: {
      const auto raises = (in.take<std::uint8_t>() & 1) != 0;
      return python->globals["Index"](make_int(in), raises);
    }
    default: { // a tuple (most often of two: the protocol's shape) or a list
      const auto shape = in.take<std::uint8_t>();
      const std::size_t n = (shape & 0x70) == 0 ? std::size_t{2} : std::size_t{shape % 5U};
      py::list items;
      for (std::size_t i = 0; i < n; ++i) items.append(make_value(in, depth - 1));
      if ((shape & 0x80) != 0) return std::move(items);
      return py::tuple(items);
    }
  }
}

// ---- look-alike torch stream types --------------------------------------------------------------

struct member_kind {
  int code;
  Py_ssize_t size;
};
#if PY_VERSION_HEX >= 0x030C0000
constexpr member_kind member_kinds[] = {{Py_T_LONGLONG, 8}, {Py_T_INT, 4},  {Py_T_ULONGLONG, 8},
                                        {Py_T_DOUBLE, 8},   {Py_T_BYTE, 1}, {Py_T_LONGLONG, 8}};
constexpr int read_only = Py_READONLY;
#else
constexpr member_kind member_kinds[] = {{T_LONGLONG, 8}, {T_INT, 4},  {T_ULONGLONG, 8},
                                        {T_DOUBLE, 8},   {T_BYTE, 1}, {T_LONGLONG, 8}};
constexpr int read_only = READONLY;
#endif
constexpr const char* member_names[] = {"device_type", "device_index", "stream_id", "cuda_stream", "other"};

// `cuda_stream` getters for the base types (getset tables are not copied into a heap type, so
// they are static): the object's last payload word as an int, or a raised exception.
PyObject* last_word_getter(PyObject* self, void*) {
  const Py_ssize_t size = Py_TYPE(self)->tp_basicsize;
  if (size < static_cast<Py_ssize_t>(sizeof(PyObject)) + 8) return PyLong_FromLong(0);
  long long word = 0;
  std::memcpy(&word, reinterpret_cast<const char*>(self) + size - 8, sizeof word);
  return PyLong_FromLongLong(word);
}
PyObject* raising_getter(PyObject*, void*) {
  PyErr_SetString(PyExc_RuntimeError, "the cuda_stream getter raised");
  return nullptr;
}
PyGetSetDef word_getset[] = {{"cuda_stream", &last_word_getter, nullptr, nullptr, nullptr}, {}};
PyGetSetDef raising_getset[] = {{"cuda_stream", &raising_getter, nullptr, nullptr, nullptr}, {}};

// A C type shaped by the input: its size and its members, each inside the object and aligned for
// its type (what CPython requires of a type), and maybe a `cuda_stream` getter. CPython copies
// the member definitions into the heap type; their names are literals.
py::object make_base_type(fuzz::input& in, Py_ssize_t& basicsize) {
  std::vector<PyMemberDef> members;
  const Py_ssize_t words = in.take<std::uint8_t>() % 8; // 0..7 payload words after the header
  basicsize = static_cast<Py_ssize_t>(sizeof(PyObject)) + words * 8;
  const unsigned count = in.take<std::uint8_t>() % 6U;
  for (unsigned i = 0; i < count; ++i) {
    const member_kind kind = member_kinds[in.take<std::uint8_t>() % std::size(member_kinds)];
    const char* name = member_names[in.take<std::uint8_t>() % std::size(member_names)];
    const auto place = in.take<std::uint8_t>();
    const int flags = (place & 0x80) != 0 ? 0 : read_only;
    // Inside the object, past the header, aligned for the member's type: a valid C type.
    const Py_ssize_t slots = (basicsize - static_cast<Py_ssize_t>(sizeof(PyObject))) / kind.size;
    if (slots <= 0) continue;
    const Py_ssize_t offset = static_cast<Py_ssize_t>(sizeof(PyObject)) + (place & 0x7F) % slots * kind.size;
    members.push_back({name, kind.code, offset, flags, nullptr});
  }
  members.push_back({nullptr, 0, 0, 0, nullptr});
  const auto getset_form = in.take<std::uint8_t>() % 3; // 0: none, 1: the last word, 2: raises
  PyType_Slot slots[] = {{Py_tp_members, members.data()},
                         {getset_form == 0 ? 0 : Py_tp_getset, getset_form == 1 ? word_getset : raising_getset},
                         {0, nullptr}};
  PyType_Spec spec = {"fuzz.LookAlikeStreamBase", static_cast<int>(basicsize), 0,
                      Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, slots};
  return py::reinterpret_steal<py::object>(PyType_FromSpec(&spec));
}

// ---- the checks -----------------------------------------------------------------------------------

// How often each outcome happened (printed at exit: a run that never accepts or never refuses
// would not be testing much).
unsigned long long outcomes[3] = {};
unsigned long long torch_like_inputs = 0;
unsigned long long direct_getter_inputs = 0; // read through `cuda_stream`'s C getter, without a lookup

void check_outcome(sd::outcome o, const char* what) {
  ++outcomes[static_cast<int>(o)];
  const bool error_set = PyErr_Occurred() != nullptr;
  if (o == sd::outcome::failed) {
    fuzz::require(error_set, target, std::string(what) + ": refused without a Python exception");
  } else {
    fuzz::require(!error_set, target,
                  std::string(what) + (o == sd::outcome::ok ? ": accepted" : ": declined") +
                      " with a Python exception left set");
  }
  PyErr_Clear();
}

template <class Value>
void check_caster(py::handle obj, bool convert, const char* what) {
  try {
    py::detail::make_caster<Value> caster;
    const bool loaded = caster.load(obj, convert);
    fuzz::require(PyErr_Occurred() == nullptr, target,
                  std::string(what) + (loaded ? ": loaded" : ": declined") + " with a Python exception left set");
    if (loaded) {
      Value value = py::detail::cast_op<Value&&>(std::move(caster)); // the shared_stream drops here
      (void)value;
    }
  } catch (py::error_already_set& e) {
    fuzz::require(static_cast<bool>(e.type()), target, std::string(what) + ": error_already_set without an exception");
  } catch (const std::exception& e) {
    fuzz::violated(target, std::string(what) + ": a C++ exception escaped the caster: " + e.what());
  } catch (...) {
    fuzz::violated(target, std::string(what) + ": an unknown C++ exception escaped the caster");
  }
  PyErr_Clear();
}

void feed(py::handle obj) {
  for (const bool convert : {false, true}) {
    streamlike::stream_view view = streamlike::stream_view::legacy_default();
    check_outcome(sd::decode_view(obj.ptr(), convert, view), "decode_view");
    streamlike::shared_stream shared;
    check_outcome(sd::decode_shared(obj.ptr(), convert, shared), "decode_shared");
    shared = streamlike::shared_stream(); // drops the exporter's reference, with the GIL held
    check_caster<streamlike::stream_view>(obj, convert, "pybind11 stream_view caster");
    check_caster<streamlike::shared_stream>(obj, convert, "pybind11 shared_stream caster");
  }
}

void one_input(fuzz::input& in) {
  const auto shape = in.take<std::uint8_t>();
  const bool torch_like = (shape & 1U) != 0;
  const int form = (shape >> 1) % 5;             // how __cuda_stream__ is there (make_class)
  const int cuda_stream_form = (shape >> 4) % 4; // how `cuda_stream` is there
  const bool raises = (shape & 0x40U) != 0;
  py::object exc = make_exception(in);
  py::object value = make_value(in, 3);
  py::object cuda_stream_value = make_value(in, 1);

  // torch's method passes the casters' check by its module and qualified name; a near miss not.
  const auto naming = in.take<std::uint8_t>() % 4;
  const char* module = naming == 1 ? "torch.cuda" : "torch.cuda.streams";
  const char* qualname = naming == 2   ? "Stream.__cuda_stream"
                         : naming == 3 ? "Other.__cuda_stream__"
                                       : "Stream.__cuda_stream__";
  py::object method = python->globals["make_method"](value, raises ? exc : py::none(), module, qualname);

  py::object base = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(&PyBaseObject_Type));
  Py_ssize_t basicsize = 0;
  if (torch_like) {
    base = make_base_type(in, basicsize);
    ++torch_like_inputs;
  }
  py::object cls = python->globals["make_class"](base, form, method, value, cuda_stream_form, cuda_stream_value, exc);

  py::object obj;
  if (torch_like) {
    // An instance with the base's bytes from the input (numbers only: the members are numeric).
    auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
    obj = py::reinterpret_steal<py::object>(type->tp_alloc(type, 0));
    fuzz::require(static_cast<bool>(obj), target, "could not allocate a look-alike instance");
    auto* bytes = reinterpret_cast<unsigned char*>(obj.ptr());
    for (Py_ssize_t i = static_cast<Py_ssize_t>(sizeof(PyObject)); i < basicsize; ++i) {
      bytes[i] = in.take<std::uint8_t>();
    }
  } else {
    obj = cls();
  }
  feed(obj);
  if (PyObject* name = sd::cuda_stream_name();
      name != nullptr && sd::reader_for(obj.ptr(), name).handle.get != nullptr) {
    ++direct_getter_inputs;
  }
  // Again: the casters' caches (the type's reader, torch's handles by key) answer, unless the
  // class changed since (read from the input's end: the seeds leave it unchanged).
  switch (in.take<std::uint8_t>() % 3) {
    case 1: cls.attr("cuda_stream") = python->globals["raising_property"](exc); break;
    case 2:
      if (py::dict(cls.attr("__dict__")).contains("cuda_stream")) py::delattr(cls, "cuda_stream");
      break;
    default: break;
  }
  feed(obj);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Python's own allocator hides the bounds of small objects from AddressSanitizer.
  setenv("PYTHONMALLOC", "malloc", 1);
  python = new interpreter(); // never finalized: the process ends with the fuzzer
  std::atexit([] {
    std::fprintf(stderr,
                 "%s: decoder outcomes: %llu accepted, %llu declined, %llu refused; %llu look-alike torch inputs, "
                 "%llu read through a direct getter\n",
                 target, outcomes[0], outcomes[1], outcomes[2], torch_like_inputs, direct_getter_inputs);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::input in(data, size);
  try {
    one_input(in);
  } catch (py::error_already_set& e) {
    // Building the object itself failed (e.g. an Index(...) of a huge int): not the casters' input.
    PyErr_Clear();
  }
  static unsigned inputs = 0;
  if (++inputs % 256 == 0) PyGC_Collect(); // the types made per input are reference cycles
  return 0;
}

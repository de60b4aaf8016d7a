// streamlike/python/detail/torch_fast_path.hpp: a torch stream's handle without running torch's
// Python-level __cuda_stream__: read from its `cuda_stream` attribute, and remembered for the last
// few torch streams by torch's own key for a stream (docs/python-bridge.md, "Known exporters").
#ifndef STREAMLIKE_PYTHON_DETAIL_TORCH_FAST_PATH_HPP
#define STREAMLIKE_PYTHON_DETAIL_TORCH_FAST_PATH_HPP

#include <streamlike/python/detail/cpython.hpp>
#include <streamlike/python/detail/decode_info.hpp>
#include <streamlike/python/detail/decode_problem.hpp>
#include <streamlike/python/detail/known_exporters.hpp>
#include <streamlike/stream_view.hpp>

#include <cstring>
#include <optional>

namespace streamlike::python::detail {

/// torch's handle, read from `cuda_stream` (by calling its C getter directly if `getter` is set:
/// known_exporters.hpp says when that is what the attribute lookup would do) and decoded as
/// __cuda_stream__'s address would be; nullopt (nothing set) if that does not work out, so the
/// caller calls the method instead.
[[nodiscard]] inline std::optional<decode_status> read_torch_attribute(PyObject* obj, const handle_getter& getter,
                                                                       stream_view& out) noexcept {
  scoped_ref handle;
  if (getter.get != nullptr) {
    handle = scoped_ref::steal(getter.get(obj, getter.closure));
  } else {
    PyObject* name = torch_handle_name();
    if (name == nullptr) {
      PyErr_Clear();
      return std::nullopt;
    }
    handle = scoped_ref::steal(PyObject_GetAttr(obj, name));
  }
  if (!handle || !PyLong_CheckExact(handle.get())) {
    PyErr_Clear();
    return std::nullopt;
  }
  return decode_address(handle.get(), out);
}

/// The stream views of the last few torch streams read, by torch's key for the stream. Used with
/// the GIL held, on GIL builds only.
class torch_view_cache {
public:
  struct key { // stream_id first: it tells most streams apart, so a miss is one compare per entry
    long long stream_id;
    long long device_index;
    long long device_type;
    friend bool operator==(const key&, const key&) = default;
  };

  [[nodiscard]] static key key_of(PyObject* obj, const torch_stream_layout& layout) noexcept {
    const char* base = reinterpret_cast<const char*>(obj);
    const auto at = [base](Py_ssize_t offset) {
      long long value;
      std::memcpy(&value, base + offset, sizeof value);
      return value;
    };
    return {at(layout.stream_id), at(layout.device_index), at(layout.device_type)};
  }

  [[nodiscard]] bool find(const key& k, stream_view& out) const noexcept {
    for (unsigned i = 0; i < used_; ++i) {
      if (entries_[i].k == k) {
        out = entries_[i].view;
        return true;
      }
    }
    return false;
  }

  void remember(const key& k, stream_view view) noexcept {
    entries_[next_] = {k, view};
    next_ = (next_ + 1) % slots;
    if (used_ < slots) ++used_;
  }

private:
  static constexpr unsigned slots = 8;
  struct entry {
    key k{};
    stream_view view = stream_view::legacy_default();
  };
  entry entries_[slots];
  unsigned used_ = 0;
  unsigned next_ = 0;
};

[[nodiscard]] inline torch_view_cache& torch_views() noexcept {
  static torch_view_cache cache;
  return cache;
}

/// torch's handle: remembered by the stream's key if the type publishes it, else read from
/// `cuda_stream`; nullopt (nothing set) if that does not work out, so the caller calls the
/// method instead.
[[nodiscard]] inline std::optional<decode_status> read_torch_handle(PyObject* obj, const exporter_reader& reader,
                                                                    stream_view& out) noexcept {
  const torch_stream_layout& layout = reader.layout;
  if (!layout.known()) return read_torch_attribute(obj, reader.handle, out);
  torch_view_cache& remembered = torch_views();
  const torch_view_cache::key k = torch_view_cache::key_of(obj, layout);
  if (remembered.find(k, out)) return decode_status::read();
  std::optional<decode_status> status = read_torch_attribute(obj, reader.handle, out);
  if (status && status->ok()) remembered.remember(k, out);
  return status;
}

} // namespace streamlike::python::detail

#endif // STREAMLIKE_PYTHON_DETAIL_TORCH_FAST_PATH_HPP

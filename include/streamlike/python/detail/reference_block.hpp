// streamlike/python/detail/reference_block.hpp: the control block of a shared_stream read from a
// Python object: it holds a strong reference to the object, and lives in Python's small-object heap
// (docs/python-bridge.md, "Keeping a Python exporter alive from C++").
#ifndef STREAMLIKE_PYTHON_DETAIL_REFERENCE_BLOCK_HPP
#define STREAMLIKE_PYTHON_DETAIL_REFERENCE_BLOCK_HPP

#include <streamlike/python/detail/cpython.hpp>
#include <streamlike/python/detail/py_ref.hpp>

#include <streamlike/detail/shared_stream_access.hpp>
#include <streamlike/detail/stream_control_block.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_view.hpp>

#include <atomic>
#include <new>
#include <optional>
#include <typeinfo>
#include <utility>

namespace streamlike::python::detail {

/// A shared_stream's block that holds a strong reference to a Python object until the last C++
/// reference drops, from any thread (drop_with_gil). What shared_stream::keep_alive(view,
/// py_ref(object)) would make, but allocated with PyObject_Malloc, which needs the GIL when the
/// block is made (a caster holds it) and when it is freed (dispose takes it to release the
/// reference anyway), instead of operator new: for a shared_stream argument, malloc and free
/// were a tenth of a pybind11 call's instructions. And one freed block is kept for the next
/// make(): an argument's block is dropped when the call returns, before the next call needs one.
class reference_block final : public streamlike::detail::stream_control_block {
public:
  /// A shared_stream viewing `view` that holds `object`; no CUDA call (the facts of a stream that
  /// is not a default stream are queried when first asked for). The GIL must be held. Empty, with
  /// MemoryError set, if Python's allocator has no memory.
  [[nodiscard]] static shared_stream make(stream_view view, PyObject* object) noexcept {
    void* memory = keeps_spare ? std::exchange(spare(), nullptr) : nullptr;
    if (memory == nullptr) memory = PyObject_Malloc(sizeof(reference_block));
    if (memory == nullptr) {
      PyErr_NoMemory();
      return {};
    }
    reference_block* block = view.is_default()
                                 ? new (memory) reference_block(view.get(), std::nullopt, object)
                                 : new (memory) reference_block(view.get(), streamlike::detail::defer_facts, object);
    return streamlike::detail::shared_stream_access::make(block);
  }

  /// The reference_block that `stream` shares if this module made it, else nullptr (another kind
  /// of block, or a reference_block of another module: each module has its own copy of this
  /// class, hidden, with its own type_info object, so the objects are compared, not the names).
  [[nodiscard]] static const reference_block* of(const shared_stream& stream) noexcept {
    if (!stream) return nullptr;
    const streamlike::detail::stream_control_block& block = streamlike::detail::shared_stream_access::block(stream);
    return &typeid(block) == &typeid(reference_block) ? static_cast<const reference_block*>(&block) : nullptr;
  }

  // Garbage-collector support for the Python objects that share this block (the package's
  // Stream and StreamView): each holds a strong reference of its own to object(), counted here
  // (add_python_owner / remove_python_owner), and visits it, so any of them reached by the
  // collector reaches the object. The block's own reference is visited by exactly one of them
  // (visits_block_reference), and only while they are all of the block's owners: a C++ owner
  // keeps the object alive, so the block's reference is then a root, visited by none. So every
  // reference is visited once however many objects share the block, and a cycle through it is
  // collected (docs/python-package.md, "Python object protocol"). Called with the GIL held, or in
  // the free-threaded build with the object's own references (the collector stops the world).

  /// The Python object the block holds (borrowed).
  [[nodiscard]] PyObject* object() const noexcept { return object_; }

  /// A Python object that shares the block and holds its own reference to object().
  void add_python_owner() const noexcept { python_owners_.fetch_add(1, std::memory_order_relaxed); }

  /// `owner` (as given to visits_block_reference) no longer shares the block; called while it
  /// still does.
  void remove_python_owner(const void* owner) const noexcept {
    const void* visitor = owner;
    gc_visitor_.compare_exchange_strong(visitor, nullptr, std::memory_order_relaxed);
    python_owners_.fetch_sub(1, std::memory_order_relaxed);
  }

  /// Whether `owner`'s tp_traverse visits the block's own reference to object(): the first owner
  /// to ask becomes the one that does (until it stops sharing the block), and it does while only
  /// Python objects share the block.
  [[nodiscard]] bool visits_block_reference(const void* owner) const noexcept {
    const void* visitor = nullptr;
    if (!gc_visitor_.compare_exchange_strong(visitor, owner, std::memory_order_relaxed) && visitor != owner) {
      return false;
    }
    return use_count() == python_owners_.load(std::memory_order_relaxed);
  }

private:
  template <class Facts>
  reference_block(cudaStream_t handle, const Facts& facts, PyObject* object) noexcept
      : stream_control_block(handle, facts), object_(object) {
    Py_INCREF(object_);
  }

  void dispose() noexcept override {
    drop_with_gil([this] {
      PyObject* object = object_;
      this->~reference_block();
      if (keeps_spare && spare() == nullptr) {
        spare() = this;
      } else {
        PyObject_Free(this);
      }
      Py_DECREF(object); // last: it may run Python code (which may make a block)
    });
  }

  /// The freed block kept for the next make(), or null; read and written with the GIL held only.
  [[nodiscard]] static void*& spare() noexcept {
    static void* block = nullptr;
    return block;
  }
#if defined(Py_GIL_DISABLED)
  static constexpr bool keeps_spare = false; // a free-threaded build has no GIL to guard it
#else
  static constexpr bool keeps_spare = true;
#endif

  PyObject* object_;
  mutable std::atomic<long> python_owners_{0};
  mutable std::atomic<const void*> gc_visitor_{nullptr};
};

} // namespace streamlike::python::detail

#endif // STREAMLIKE_PYTHON_DETAIL_REFERENCE_BLOCK_HPP

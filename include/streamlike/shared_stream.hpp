// streamlike/shared_stream.hpp: the refcounted stream with shared ownership, a vocabulary type
// for "keep this stream alive" across libraries (what NVIDIA/cccl#1447 asks for).
//
// It shares ownership, as std::shared_ptr does: the stream is released when the last
// shared_stream referring to it is destroyed, not when any one is. So it is not a stream_owner
// (stream_owner.hpp: destroying the object destroys the stream); it is what export_stream yields
// (a stream_exporter), and stream_like as an lvalue.
//
// Ways in, each a named function: create(options), adopt(handle), keep_alive(view, object),
// from_owner(owner) (what export_stream(std::move(owner)) calls), and the immortal default
// streams. A copy is one atomic increment and a move is free; the last reference releases the
// stream on its own device and never throws, also at process exit and after cudaDeviceReset.
//
// Two pointers in size (handle and control block), like std::shared_ptr, so get_stream() reads
// the handle without touching the block. A default-constructed or moved-from shared_stream is
// empty: `if (s)` tells, and every query on it throws streamlike::error instead of crashing.
#ifndef STREAMLIKE_SHARED_STREAM_HPP
#define STREAMLIKE_SHARED_STREAM_HPP

#include <streamlike/detail/stream_control_block.hpp>
#include <streamlike/detail/export.hpp>
#include <streamlike/detail/owner_operations.hpp>
#include <streamlike/enable_stream_owner.hpp>
#include <streamlike/error.hpp>
#include <streamlike/get_stream.hpp>
#include <streamlike/stream_like.hpp>
#include <streamlike/stream_options.hpp>
#include <streamlike/stream_view.hpp>

#include <concepts>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

namespace streamlike {

namespace detail {
struct shared_stream_access;
} // namespace detail

/// A refcounted stream: copies share it, and the last one releases it (see the file comment).
class STREAMLIKE_API shared_stream : public detail::owner_operations<shared_stream> {
public:
  // view(), get(), get_stream(), the conversions to the view types, is_capturing(), capture_info(),
  // is_done(), sync(), wait(), record() and `== view` come from detail::owner_operations (errors
  // name "shared_stream::<operation>").

  /// Empty: owns nothing, views nothing.
  constexpr shared_stream() noexcept = default;

  shared_stream(const shared_stream& other) noexcept : handle_(other.handle_), block_(other.block_) {
    if (block_ != nullptr) block_->retain();
  }
  shared_stream(shared_stream&& other) noexcept
      : handle_(std::exchange(other.handle_, nullptr)), block_(std::exchange(other.block_, nullptr)) {}
  shared_stream& operator=(const shared_stream& other) noexcept {
    shared_stream(other).swap(*this);
    return *this;
  }
  shared_stream& operator=(shared_stream&& other) noexcept {
    shared_stream(std::move(other)).swap(*this);
    return *this;
  }
  ~shared_stream() {
    if (block_ != nullptr) block_->release();
  }

  /// A new stream, destroyed with the last reference. Throws streamlike::error if CUDA cannot
  /// create it (no device, no driver), std::invalid_argument for a device ordinal or a priority
  /// the machine does not have. Taken by value: a partition in options built for the call moves
  /// into the stream rather than being copied (a reference count less to move each way).
  [[nodiscard]] static shared_stream create(stream_options options = {});

  /// Takes ownership of a stream created elsewhere (cudaStreamCreate*): it is destroyed with
  /// the last reference. The default streams cannot be owned (std::invalid_argument).
  [[nodiscard]] static shared_stream adopt(cudaStream_t handle);

  /// Views `view` and holds `object` (copied or moved in) until the last reference drops: any
  /// object whose lifetime keeps the stream alive (a std::shared_ptr, a Python reference). Makes
  /// no CUDA call (the facts are cached on the first query); if the allocation throws, `object`
  /// is left as it was.
  template <class T>
  [[nodiscard]] static shared_stream keep_alive(stream_view view, T&& object);

  /// Moves a stream owner in (enable_stream_owner<O>); its stream is destroyed with the last
  /// reference. An owner with `cudaStream_t release()` (unique_stream, cuda::stream) gives its
  /// handle to adopt(); any other is held whole and destroyed with the last reference.
  template <class Owner>
    requires(enable_stream_owner<std::remove_cvref_t<Owner>> && !std::is_lvalue_reference_v<Owner> &&
             !std::is_const_v<std::remove_reference_t<Owner>>)
  [[nodiscard]] static shared_stream from_owner(Owner&& owner);

  /// The default streams (cudaStreamLegacy, cudaStreamPerThread): immortal, never destroyed,
  /// valid during static destruction; their queries answer for the current device.
  [[nodiscard]] static shared_stream legacy_default() noexcept;
  [[nodiscard]] static shared_stream per_thread_default() noexcept;

  /// False when empty (default-constructed, moved-from or reset).
  [[nodiscard]] explicit operator bool() const noexcept { return block_ != nullptr; }

  /// How many shared_streams share this stream; 0 when empty.
  [[nodiscard]] long use_count() const noexcept { return block_ != nullptr ? block_->use_count() : 0; }

  // Queries, cached: when the stream was made (create, adopt, and from_owner of an owner that
  // can release its handle) or on the first query (keep_alive and the rest). Default streams
  // answer for the current device. Each throws streamlike::error on an empty shared_stream or a
  // failed CUDA call. Cached facts answer also while the stream captures a CUDA graph; a
  // keep-alive stream first asked while it captures fills its cache only once the capture has
  // ended, and until then answers as stream_view does (device() and priority() work, id() and
  // flags() are refused by name: docs/cuda-graphs.md).

  // A cached fact is read inline, without a library call; the rest (an empty shared_stream, a
  // default stream, a keep-alive not asked before) goes to the library.

  /// The device the stream belongs to.
  [[nodiscard]] int device() const {
    if (const detail::stream_facts* known = known_facts()) [[likely]]
      return known->device;
    return query_device();
  }
  /// The process-unique stream id (cudaStreamGetId).
  [[nodiscard]] unsigned long long id() const {
    if (const detail::stream_facts* known = known_facts()) [[likely]]
      return known->id;
    return query_id();
  }
  /// cudaStreamDefault or cudaStreamNonBlocking.
  [[nodiscard]] unsigned int flags() const {
    if (const detail::stream_facts* known = known_facts()) [[likely]]
      return known->flags;
    return query_flags();
  }
  /// The stream's priority (lower numbers are higher priorities).
  [[nodiscard]] int priority() const {
    if (const detail::stream_facts* known = known_facts()) [[likely]]
      return known->priority;
    return query_priority();
  }

  /// Drops this reference (the stream is released if it was the last) and empties *this.
  void reset() noexcept { shared_stream().swap(*this); }
  void swap(shared_stream& other) noexcept {
    std::swap(handle_, other.handle_);
    std::swap(block_, other.block_);
  }
  friend void swap(shared_stream& a, shared_stream& b) noexcept { a.swap(b); }

  /// Equal when they view the same stream handle (two empty ones are equal).
  [[nodiscard]] friend bool operator==(const shared_stream& a, const shared_stream& b) noexcept {
    return a.handle_ == b.handle_ && (a.block_ == nullptr) == (b.block_ == nullptr);
  }

  /// For streamlike::wait (detail::stream_operations::known_context_id_of): the id of the CUDA
  /// context the stream was made in, where the cache knows it (a primary context's), else 0.
  [[nodiscard]] friend unsigned long long known_context_id(const shared_stream& s) noexcept {
    const detail::stream_facts* known = s.known_facts();
    return known != nullptr ? known->primary_context_id : 0;
  }

private:
  friend struct detail::shared_stream_access;
  friend class detail::owner_operations<shared_stream>;
  static constexpr const char type_name[] = "shared_stream";
  // Adopts the block's initial reference.
  explicit shared_stream(detail::stream_control_block* block) noexcept : handle_(block->handle()), block_(block) {}
  [[noreturn]] static void throw_empty(const char* what);
  [[nodiscard]] std::optional<int> known_device() const noexcept {
    if (const detail::stream_facts* known = known_facts()) return known->device;
    return std::nullopt;
  }
  // The block's facts (std::nullopt for a default stream); throws on an empty shared_stream.
  [[nodiscard]] const std::optional<detail::stream_facts>& facts(const char* operation) const;
  [[nodiscard]] const detail::stream_facts* known_facts() const noexcept {
    return block_ != nullptr ? block_->known_facts() : nullptr;
  }
  // The queries where no fact is cached yet (src/shared_stream.cpp).
  [[nodiscard]] int query_device() const;
  [[nodiscard]] unsigned long long query_id() const;
  [[nodiscard]] unsigned int query_flags() const;
  [[nodiscard]] int query_priority() const;

  cudaStream_t handle_ = nullptr;
  detail::stream_control_block* block_ = nullptr;
};

static_assert(sizeof(shared_stream) == 2 * sizeof(void*),
              "shared_stream is a handle and a block, its base takes no room");

namespace detail {
// A temporary shared_stream may hold the last reference: get_stream refuses it as it refuses
// a temporary owner (see get_stream.hpp).
template <>
inline constexpr bool view_dangles_from_temporary<shared_stream> = true;
} // namespace detail

template <class T>
shared_stream shared_stream::keep_alive(stream_view view, T&& object) {
  using block = detail::holding_block<std::remove_cvref_t<T>>;
  // `new` moves the object in only once the allocation has succeeded. No CUDA call here: the
  // facts of a foreign stream are queried when first asked for; default streams have none.
  if (view.is_default()) return shared_stream(new block(view.get(), std::nullopt, std::forward<T>(object)));
  return shared_stream(new block(view.get(), detail::defer_facts, std::forward<T>(object)));
}

template <class Owner>
  requires(enable_stream_owner<std::remove_cvref_t<Owner>> && !std::is_lvalue_reference_v<Owner> &&
           !std::is_const_v<std::remove_reference_t<Owner>>)
shared_stream shared_stream::from_owner(Owner&& owner) {
  using held_type = std::remove_cvref_t<Owner>;
  static_assert(stream_like<held_type&>,
                "streamlike::shared_stream::from_owner: enable_stream_owner<T> is true but T is not stream_like: "
                "give it a get_stream route (see get_stream.hpp).");
  static_assert(std::is_move_constructible_v<held_type>,
                "streamlike::shared_stream::from_owner: a stream owner is moved into the shared_stream, so it "
                "must be move constructible.");
  if constexpr (requires {
                  { owner.release() } -> std::same_as<cudaStream_t>;
                }) {
    // An owner that can give up its handle (unique_stream, cuda::stream) hands it to adopt(),
    // whose block records the stream's context and so skips a stream that died with
    // cudaDeviceReset; the owner's own destructor could not. Released only once adopted.
    shared_stream adopted = adopt(streamlike::get_stream(owner).get());
    (void)owner.release();
    return adopted;
  } else {
    const stream_view view = streamlike::get_stream(owner); // owners keep their handle when moved
    return keep_alive(view, std::move(owner));
  }
}

} // namespace streamlike

template <>
struct std::hash<streamlike::shared_stream> {
  [[nodiscard]] std::size_t operator()(const streamlike::shared_stream& s) const noexcept {
    return s ? std::hash<streamlike::stream_view>{}(s.view()) : 0;
  }
};

#endif // STREAMLIKE_SHARED_STREAM_HPP

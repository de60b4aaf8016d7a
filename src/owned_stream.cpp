// shared_stream to and from the C ABI for owning streams (include/streamlike/owned_stream.hpp,
// include/streamlike/c/owned_stream.h).
#include <streamlike/c/owned_stream.h>
#include <streamlike/detail/shared_stream_access.hpp>
#include <streamlike/detail/stream_control_block.hpp>
#include <streamlike/error.hpp>
#include <streamlike/owned_stream.hpp>
#include <streamlike/shared_stream.hpp>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace streamlike {
namespace {

// What to_owned_stream hands out: the struct and the reference it stands for, freed together by
// the deleter. manager_ctx points back here.
struct exported_reference {
  streamlike_owned_stream abi{};
  shared_stream stream;
};

void release_exported_reference(streamlike_owned_stream* self) noexcept {
  // Dropping the copy may destroy the stream: shared_stream's release never throws.
  delete static_cast<exported_reference*>(self->manager_ctx);
}

cudaStream_t handle_of(const streamlike_owned_stream& owned) noexcept {
  return static_cast<cudaStream_t>(owned.handle);
}

// The block of a stream received through the C ABI: its last drop calls the struct's deleter,
// which releases the reference wherever it came from.
class received_stream_block final : public detail::stream_control_block {
public:
  received_stream_block(streamlike_owned_stream* owned, const std::optional<detail::stream_facts>& facts) noexcept
      : stream_control_block(handle_of(*owned), facts), owned_(owned) {}
  received_stream_block(streamlike_owned_stream* owned, detail::defer_facts_t defer) noexcept
      : stream_control_block(handle_of(*owned), defer), owned_(owned) {}

private:
  void dispose() noexcept override {
    streamlike_owned_stream* owned = owned_;
    delete this;
    owned->deleter(owned);
  }
  streamlike_owned_stream* owned_;
};

// Releases `owned` and throws the refusal; the error says what was received and what is expected.
[[noreturn]] void refuse(streamlike_owned_stream* owned, const std::string& reason) {
  if (owned != nullptr && owned->deleter != nullptr) owned->deleter(owned);
  throw error(cudaErrorInvalidValue, "from_owned_stream", reason);
}

std::string hex(std::uint64_t value) {
  char text[2 + 16 + 1];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

} // namespace

streamlike_owned_stream* to_owned_stream(const shared_stream& stream) {
  if (!stream) {
    throw error(cudaErrorInvalidResourceHandle, "to_owned_stream",
                "the shared_stream is empty (default-constructed or moved-from); expected one that holds a stream");
  }
  auto* exported = new exported_reference{{}, stream};
  streamlike_owned_stream& abi = exported->abi;
  abi.major_version = STREAMLIKE_OWNED_STREAM_MAJOR_VERSION;
  abi.minor_version = STREAMLIKE_OWNED_STREAM_MINOR_VERSION;
  abi.manager_ctx = exported;
  abi.deleter = &release_exported_reference;
  const cudaStream_t handle = stream.get();
  abi.handle = static_cast<void*>(handle);
  abi.device = -1;
  if (handle == cudaStreamLegacy) {
    abi.flags = STREAMLIKE_OWNED_STREAM_LEGACY_DEFAULT;
  } else if (handle == cudaStreamPerThread) {
    abi.flags = STREAMLIKE_OWNED_STREAM_PER_THREAD_DEFAULT;
  } else if (const auto& facts = detail::shared_stream_access::block(stream).facts_if_known()) {
    // Only what is known already: a stream imported without its facts travels without them (no
    // CUDA call here, so exporting is safe on a capturing stream and costs no driver round trip).
    abi.flags = STREAMLIKE_OWNED_STREAM_HAS_FACTS |
                ((facts->flags & cudaStreamNonBlocking) != 0 ? STREAMLIKE_OWNED_STREAM_NON_BLOCKING : 0);
    abi.device = facts->device;
    abi.priority = facts->priority;
    abi.stream_id = facts->id;
    abi.context_id = facts->primary_context_id;
    if (facts->partition_known) {
      abi.flags |= STREAMLIKE_OWNED_STREAM_HAS_PARTITION;
      abi.green_context = facts->green_context;
      abi.sm_count = facts->green_context != nullptr ? facts->sm_count : 0;
    }
  }
  return &abi;
}

shared_stream from_owned_stream(streamlike_owned_stream* owned) {
  if (owned == nullptr) {
    throw error(cudaErrorInvalidValue, "from_owned_stream",
                "the streamlike_owned_stream pointer is null; expected one from a producer (to_owned_stream, "
                "a capsule's pointer)");
  }
  if (owned->deleter == nullptr) {
    throw error(cudaErrorInvalidValue, "from_owned_stream",
                "the streamlike_owned_stream's deleter is null, so its reference cannot be released; expected "
                "a deleter (every producer sets one)");
  }
  if (owned->major_version != STREAMLIKE_OWNED_STREAM_MAJOR_VERSION) {
    refuse(owned, "unknown major version " + std::to_string(owned->major_version) + "." +
                      std::to_string(owned->minor_version) + "; expected major version " +
                      std::to_string(STREAMLIKE_OWNED_STREAM_MAJOR_VERSION) + " (the struct was released)");
  }
  const cudaStream_t handle = handle_of(*owned);
  if (handle == nullptr) {
    refuse(owned, "the handle is null (0 would mean a different default stream in each translation unit); "
                  "expected a CUstream, or CU_STREAM_LEGACY (0x1) / CU_STREAM_PER_THREAD (0x2) with their flag "
                  "(the struct was released)");
  }
  const bool legacy = (owned->flags & STREAMLIKE_OWNED_STREAM_LEGACY_DEFAULT) != 0;
  const bool per_thread = (owned->flags & STREAMLIKE_OWNED_STREAM_PER_THREAD_DEFAULT) != 0;
  if ((legacy && handle != cudaStreamLegacy) || (per_thread && handle != cudaStreamPerThread) ||
      (!legacy && handle == cudaStreamLegacy) || (!per_thread && handle == cudaStreamPerThread)) {
    refuse(owned, "flags " + hex(owned->flags) + " contradict handle " +
                      hex(reinterpret_cast<std::uintptr_t>(owned->handle)) +
                      "; expected STREAMLIKE_OWNED_STREAM_LEGACY_DEFAULT exactly with handle 0x1 and "
                      "STREAMLIKE_OWNED_STREAM_PER_THREAD_DEFAULT exactly with handle 0x2 (the struct was released)");
  }
  if (legacy || per_thread) { // immortal: nothing to hold
    owned->deleter(owned);
    return legacy ? shared_stream::legacy_default() : shared_stream::per_thread_default();
  }
  if (owned->deleter == &release_exported_reference) {
    // A struct this library made (to_owned_stream): its reference is taken back as the
    // shared_stream it holds, the same block, instead of a second block around the struct. So
    // the stream's owners stay one count, and a block that holds a Python exporter is seen as
    // shared by the objects holding it (the Python package's garbage collector support counts
    // them). Releasing the struct is what its deleter would do.
    auto* exported = static_cast<exported_reference*>(owned->manager_ctx);
    if (exported != nullptr && &exported->abi == owned && exported->stream.get() == handle) {
      shared_stream stream = std::move(exported->stream);
      delete exported;
      return stream;
    }
  }
  detail::stream_control_block* block = nullptr;
  try {
    if ((owned->flags & STREAMLIKE_OWNED_STREAM_HAS_FACTS) != 0) {
      detail::stream_facts facts;
      facts.device = owned->device;
      facts.id = owned->stream_id;
      facts.flags = (owned->flags & STREAMLIKE_OWNED_STREAM_NON_BLOCKING) != 0 ? cudaStreamNonBlocking : 0U;
      facts.priority = owned->priority;
      // Unknown whether it is a primary context's id, and not needed: the producer's deleter,
      // not this block, decides whether the stream is still there to destroy.
      facts.primary_context_id = 0;
      // A 1.0 producer leaves the flag and the 1.1 words zero: the partition stays unknown.
      if ((owned->flags & STREAMLIKE_OWNED_STREAM_HAS_PARTITION) != 0) {
        facts.partition_known = true;
        facts.green_context = static_cast<CUgreenCtx_st*>(owned->green_context);
        facts.sm_count = owned->green_context != nullptr ? owned->sm_count : 0;
      }
      block = new received_stream_block(owned, std::optional<detail::stream_facts>(facts));
    } else {
      block = new received_stream_block(owned, detail::defer_facts);
    }
  } catch (...) { // std::bad_alloc: the reference is not taken over, so release it
    owned->deleter(owned);
    throw;
  }
  return detail::shared_stream_access::make(block);
}

} // namespace streamlike

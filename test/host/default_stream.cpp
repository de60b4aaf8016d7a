// Tests for streamlike/default_stream.hpp: what the handle 0 means is decided in the calling
// translation unit, and translation units of both default-stream modes meet in one program.
//
// This is also the ODR test. default_stream_legacy_tu.cpp (no CUDA_API_PER_THREAD_DEFAULT_STREAM)
// and default_stream_per_thread_tu.cpp (with it) include the same header and are linked into
// this one program. Had the header one inline function whose body differs by the macro, that
// would be an ODR violation: the linker keeps a single copy, so both TUs would give the same
// answer (or which answer would depend on inlining). The header gives each mode its own inline
// namespace instead, so the TUs must answer differently, and their inline functions must be
// distinct entities with distinct addresses. This file itself is in the legacy mode.
#include <streamlike/default_stream.hpp>

#include <streamlike/stream_encodings.hpp>

#include <doctest/doctest.h>

#include <cstdint>

using streamlike::stream_view;

// Exported by default_stream_legacy_tu.cpp.
bool legacy_tu_is_per_thread();
stream_view legacy_tu_default_stream();
stream_view legacy_tu_resolve_default(stream_view view);
bool legacy_tu_is_legacy_default(stream_view view);
bool legacy_tu_is_per_thread_default(stream_view view);
stream_view legacy_tu_from_address(std::uint64_t address);
stream_view legacy_tu_from_cuda_stream_protocol(std::int64_t address);

// Exported by default_stream_per_thread_tu.cpp.
bool per_thread_tu_is_per_thread();
stream_view per_thread_tu_default_stream();
stream_view per_thread_tu_resolve_default(stream_view view);
bool per_thread_tu_is_legacy_default(stream_view view);
bool per_thread_tu_is_per_thread_default(stream_view view);
stream_view per_thread_tu_from_address(std::uint64_t address);
stream_view per_thread_tu_from_cuda_stream_protocol(std::int64_t address);

using resolve_default_fn = stream_view (*)(stream_view) noexcept;
using from_address_fn = stream_view (*)(std::uint64_t);
resolve_default_fn legacy_tu_resolve_default_address();
resolve_default_fn per_thread_tu_resolve_default_address();
from_address_fn legacy_tu_from_address_address();
from_address_fn per_thread_tu_from_address_address();
const bool* legacy_tu_is_per_thread_address();
const bool* per_thread_tu_is_per_thread_address();

namespace {

const stream_view zero{cudaStream_t{}};
const stream_view legacy = stream_view::legacy_default();
const stream_view per_thread = stream_view::per_thread_default();
// Some other stream: a fake handle, never dereferenced.
const stream_view other{reinterpret_cast<cudaStream_t>(std::uintptr_t{0x1000})};

} // namespace

TEST_CASE("each translation unit knows its own mode") {
  CHECK_FALSE(legacy_tu_is_per_thread());
  CHECK(per_thread_tu_is_per_thread());
  // This file is compiled without the macro.
  static_assert(!streamlike::default_stream_is_per_thread);
}

TEST_CASE("default_stream() is the explicit handle of the TU's mode") {
  CHECK(legacy_tu_default_stream() == cudaStreamLegacy);
  CHECK(per_thread_tu_default_stream() == cudaStreamPerThread);
  CHECK(streamlike::default_stream() == cudaStreamLegacy);
}

TEST_CASE("resolve_default: handle 0 becomes the default stream of the calling TU") {
  CHECK(legacy_tu_resolve_default(zero) == legacy);
  CHECK(per_thread_tu_resolve_default(zero) == per_thread);
  CHECK(streamlike::resolve_default(zero) == legacy);
}

TEST_CASE("resolve_default: explicit handles mean the same in both TUs") {
  for (const stream_view view : {legacy, per_thread, other}) {
    CAPTURE(view.get());
    CHECK(legacy_tu_resolve_default(view) == view);
    CHECK(per_thread_tu_resolve_default(view) == view);
  }
}

TEST_CASE("is_legacy_default / is_per_thread_default agree with the TU's mode") {
  // Handle 0 follows the TU.
  CHECK(legacy_tu_is_legacy_default(zero));
  CHECK_FALSE(legacy_tu_is_per_thread_default(zero));
  CHECK_FALSE(per_thread_tu_is_legacy_default(zero));
  CHECK(per_thread_tu_is_per_thread_default(zero));

  // The explicit handles 1 and 2 do not.
  CHECK(legacy_tu_is_legacy_default(legacy));
  CHECK(per_thread_tu_is_legacy_default(legacy));
  CHECK_FALSE(legacy_tu_is_per_thread_default(legacy));
  CHECK_FALSE(per_thread_tu_is_per_thread_default(legacy));

  CHECK(legacy_tu_is_per_thread_default(per_thread));
  CHECK(per_thread_tu_is_per_thread_default(per_thread));
  CHECK_FALSE(legacy_tu_is_legacy_default(per_thread));
  CHECK_FALSE(per_thread_tu_is_legacy_default(per_thread));

  // Another stream is neither, anywhere.
  CHECK_FALSE(legacy_tu_is_legacy_default(other));
  CHECK_FALSE(legacy_tu_is_per_thread_default(other));
  CHECK_FALSE(per_thread_tu_is_legacy_default(other));
  CHECK_FALSE(per_thread_tu_is_per_thread_default(other));
}

TEST_CASE("from_address(0) follows the calling TU; 1 and 2 do not") {
  CHECK(legacy_tu_from_address(0) == legacy);
  CHECK(per_thread_tu_from_address(0) == per_thread);
  CHECK(streamlike::from_address(0) == legacy);

  CHECK(legacy_tu_from_address(1) == legacy);
  CHECK(per_thread_tu_from_address(1) == legacy);
  CHECK(legacy_tu_from_address(2) == per_thread);
  CHECK(per_thread_tu_from_address(2) == per_thread);
  CHECK(legacy_tu_from_address(0x1000) == other);
  CHECK(per_thread_tu_from_address(0x1000) == other);
}

TEST_CASE("__cuda_stream__ (0, 0) is the legacy default stream in both modes") {
  // The protocol's 0 is what CuPy and numba export for the legacy null stream; the importer's
  // mode must not change it.
  CHECK(legacy_tu_from_cuda_stream_protocol(0) == legacy);
  CHECK(per_thread_tu_from_cuda_stream_protocol(0) == legacy);
  CHECK(per_thread_tu_from_cuda_stream_protocol(2) == per_thread);
}

TEST_CASE("ODR: the two modes' inline entities are distinct, and one mode's are one entity") {
  // Distinct entities in the two modes: the linker did not fold one mode's body into the other's.
  // (Extra parentheses: doctest cannot print function pointers, so it gets the bool.)
  CHECK((legacy_tu_resolve_default_address() != per_thread_tu_resolve_default_address()));
  CHECK((legacy_tu_from_address_address() != per_thread_tu_from_address_address()));
  CHECK(legacy_tu_is_per_thread_address() != per_thread_tu_is_per_thread_address());

  // Within one mode they are the same entity (so the comparison above means something): this
  // file and the legacy TU share the legacy mode's.
  CHECK((legacy_tu_resolve_default_address() == &streamlike::resolve_default));
  CHECK((legacy_tu_from_address_address() == &streamlike::from_address<std::uint64_t>));
  CHECK(legacy_tu_is_per_thread_address() == &streamlike::default_stream_is_per_thread);

  // Called through the pointers (no inlining can hide a merged body), each answers for its mode.
  CHECK(legacy_tu_resolve_default_address()(zero) == legacy);
  CHECK(per_thread_tu_resolve_default_address()(zero) == per_thread);
  CHECK(legacy_tu_from_address_address()(0) == legacy);
  CHECK(per_thread_tu_from_address_address()(0) == per_thread);
  CHECK_FALSE(*legacy_tu_is_per_thread_address());
  CHECK(*per_thread_tu_is_per_thread_address());
}

// libFuzzer target: streamlike::from_cuda_stream_protocol(version, address), the decoder of
// `__cuda_stream__()`'s (version, address) tuple. Input: version, then address, each 8 bytes
// little-endian (see fuzz_support.hpp). The contract (stream_encodings.hpp):
//   version != 0            -> std::invalid_argument naming "__cuda_stream__" and "(version, address)"
//   version 0, address < 0  -> std::invalid_argument naming "(0, address)"
//   (0, 0)                  -> stream_view::legacy_default() (CuPy's null stream, numba's default)
//   (0, address > 0)        -> the handle `address` itself (1 and 2 are cudaStreamLegacy/PerThread)
// and never any other exception.
#include "fuzz_support.hpp"

#include <streamlike/stream_encodings.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace {
constexpr const char* target = "fuzz_cuda_stream_protocol";
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::input in(data, size);
  const auto version = in.take<std::int64_t>();
  const auto address = in.take<std::int64_t>();
  const std::string tuple = "(" + std::to_string(version) + ", " + std::to_string(address) + ")";
  const bool refused = version != 0 || address < 0;
  try {
    const streamlike::stream_view view = streamlike::from_cuda_stream_protocol(version, address);
    fuzz::require(!refused, target, "accepted " + tuple + ", which the protocol does not allow");
    const streamlike::stream_view expected =
        address == 0 ? streamlike::stream_view::legacy_default() : fuzz::view_of(static_cast<std::uint64_t>(address));
    fuzz::require(view == expected, target, tuple + " decoded to " + fuzz::describe(view));
    // The decoded view must not be the ambiguous handle 0, whatever the importer's mode.
    fuzz::require(view.get() != cudaStream_t{}, target, tuple + " decoded to the ambiguous handle 0");
  } catch (const std::invalid_argument& e) {
    fuzz::require(refused, target, "refused the valid " + tuple + ": " + e.what());
    // A bad version names the whole tuple; a bad address (version 0) names (0, address).
    fuzz::require_refusal_message(target, e.what(), "__cuda_stream__", tuple);
  } catch (const std::exception& e) {
    fuzz::violated(target, tuple + " threw something other than std::invalid_argument: " + e.what());
  } catch (...) {
    fuzz::violated(target, tuple + " threw a non-std exception");
  }
  return 0;
}

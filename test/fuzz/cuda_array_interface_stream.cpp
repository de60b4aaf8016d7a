// libFuzzer target: streamlike::from_cuda_array_interface_stream(optional<int64>), the decoder of
// `__cuda_array_interface__` v3's "stream" field. Input: one byte whose low bit says whether the
// value is present (0: None/absent), then the value, 8 bytes little-endian (see fuzz_support.hpp).
// The contract (stream_encodings.hpp):
//   None -> empty (no synchronization);  1 -> legacy default;  2 -> per-thread default;
//   > 2 -> the handle itself;  <= 0 -> std::invalid_argument naming "__cuda_array_interface__"
//   and the value; never any other exception.
#include "fuzz_support.hpp"

#include <streamlike/stream_encodings.hpp>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace {
constexpr const char* target = "fuzz_cuda_array_interface_stream";
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::input in(data, size);
  const auto [present, raw, stream, shown] = in.take_optional_int64();
  const bool refused = present && raw <= 0;
  try {
    const std::optional<streamlike::stream_view> view = streamlike::from_cuda_array_interface_stream(stream);
    fuzz::require(!refused, target, "accepted stream=" + shown + ", which CAI v3 does not allow");
    std::optional<streamlike::stream_view> expected;
    if (!present) {
      expected = std::nullopt;
    } else if (raw == 1) {
      expected = streamlike::stream_view::legacy_default();
    } else if (raw == 2) {
      expected = streamlike::stream_view::per_thread_default();
    } else {
      expected = fuzz::view_of(static_cast<std::uint64_t>(raw));
    }
    fuzz::require(view == expected, target,
                  "stream=" + shown + " decoded to " + fuzz::describe(view) + ", expected " + fuzz::describe(expected));
  } catch (const std::invalid_argument& e) {
    fuzz::require(refused, target, "refused the valid stream=" + shown + ": " + e.what());
    fuzz::require_refusal_message(target, e.what(), "__cuda_array_interface__ v3 \"stream\"", shown);
  } catch (const std::exception& e) {
    fuzz::violated(target, "stream=" + shown + " threw something other than std::invalid_argument: " + e.what());
  } catch (...) {
    fuzz::violated(target, "stream=" + shown + " threw a non-std exception");
  }
  return 0;
}

// libFuzzer target: streamlike::from_dlpack_stream(optional<int64>), the decoder of DLPack's
// `__dlpack__(stream=...)` for CUDA. Input: one byte whose low bit says whether the value is
// present (0: None), then the value, 8 bytes little-endian (see fuzz_support.hpp). The contract
// (stream_encodings.hpp):
//   None -> legacy default;  -1 -> empty (no synchronization);  1 -> legacy default;
//   2 -> per-thread default;  > 2 -> the handle itself;
//   0 or < -1 -> std::invalid_argument naming "DLPack" and the value; never any other exception.
#include "fuzz_support.hpp"

#include <streamlike/stream_encodings.hpp>

#include <cstdint>
#include <optional>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  constexpr const char* target = "fuzz_dlpack_stream";
  fuzz::input in(data, size);
  const fuzz::input::optional_int64 value = in.take_optional_int64();
  const std::int64_t raw = value.raw;
  fuzz::decoding expected;
  if (!value.present || raw == 1) {
    expected = fuzz::decodes_to(streamlike::stream_view::legacy_default());
  } else if (raw == -1) {
    expected = fuzz::decodes_to(std::nullopt);
  } else if (raw == 0 || raw < -1) {
    expected = fuzz::refusal();
  } else if (raw == 2) {
    expected = fuzz::decodes_to(streamlike::stream_view::per_thread_default());
  } else {
    expected = fuzz::decodes_to(fuzz::view_of(static_cast<std::uint64_t>(raw)));
  }
  const std::string refusal = fuzz::check_optional_decoder(
      target, "DLPack __dlpack__(stream=)", value,
      [](std::optional<std::int64_t> v) { return streamlike::from_dlpack_stream(v); }, expected);
  if (value.present && raw == 0) {
    fuzz::require(fuzz::contains(refusal, "ambiguous"), target, "0 is refused without saying why: " + refusal);
  }
  return 0;
}

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

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::input in(data, size);
  const fuzz::input::optional_int64 value = in.take_optional_int64();
  const std::int64_t raw = value.raw;
  fuzz::decoding expected;
  if (!value.present) {
    expected = fuzz::decodes_to(std::nullopt);
  } else if (raw <= 0) {
    expected = fuzz::refusal();
  } else if (raw == 1) {
    expected = fuzz::decodes_to(streamlike::stream_view::legacy_default());
  } else if (raw == 2) {
    expected = fuzz::decodes_to(streamlike::stream_view::per_thread_default());
  } else {
    expected = fuzz::decodes_to(fuzz::view_of(static_cast<std::uint64_t>(raw)));
  }
  (void)fuzz::check_optional_decoder(
      "fuzz_cuda_array_interface_stream", "__cuda_array_interface__ v3 \"stream\"", value,
      [](std::optional<std::int64_t> v) { return streamlike::from_cuda_array_interface_stream(v); }, expected);
  return 0;
}

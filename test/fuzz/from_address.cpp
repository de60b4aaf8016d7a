// libFuzzer target: streamlike::from_address(integer), the CUDA runtime's convention for a raw
// stream address, for every integer type it accepts (signed and unsigned, 8 to 64 bits, and the
// character types, which std::integral also admits). Input: one byte choosing the type (modulo
// the number of types), then the value, sizeof(type) bytes little-endian (see fuzz_support.hpp).
// The contract (stream_encodings.hpp):
//   negative (signed types) -> std::invalid_argument naming "from_address" and the value
//   0 -> this TU's default stream as an explicit handle: cudaStreamLegacy here, and
//        cudaStreamPerThread in from_address_per_thread_tu.cpp (compiled in the other mode)
//   other -> the handle itself (1 is cudaStreamLegacy, 2 cudaStreamPerThread)
// and never any other exception. Both TUs must agree on everything but 0.
#include "fuzz_support.hpp"

#include <streamlike/stream_encodings.hpp>

#include <concepts>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>

// from_address_per_thread_tu.cpp: the same decoder in a CUDA_API_PER_THREAD_DEFAULT_STREAM TU.
streamlike::stream_view per_thread_tu_from_address(std::int64_t address);
streamlike::stream_view per_thread_tu_from_address(std::uint64_t address);

namespace {

constexpr const char* target = "fuzz_from_address";

static_assert(!streamlike::default_stream_is_per_thread, "this TU must be in the legacy mode");

using integer_types = std::tuple<signed char, short, int, long, long long, unsigned char, unsigned short, unsigned int,
                                 unsigned long, unsigned long long, char, wchar_t, char8_t, char16_t, char32_t>;

// The value widened to 64 bits, keeping its sign: what the per-thread TU gets and what the message shows.
template <class T>
auto widen(T value) {
  if constexpr (std::signed_integral<T>) {
    return static_cast<std::int64_t>(value);
  } else {
    return static_cast<std::uint64_t>(value);
  }
}

// Decodes `decode()` and checks it against the contract; `mode` names the TU for the messages.
template <class Decode>
void check_one(Decode decode, const std::string& shown, bool refused, streamlike::stream_view expected,
               const char* mode) {
  const std::string where = std::string(mode) + " TU, address " + shown;
  try {
    const streamlike::stream_view view = decode();
    fuzz::require(!refused, target, where + ": accepted a negative address");
    fuzz::require(view == expected, target,
                  where + ": decoded to " + fuzz::describe(view) + ", expected " + fuzz::describe(expected));
    fuzz::require(view.get() != cudaStream_t{}, target, where + ": decoded to the ambiguous handle 0");
  } catch (const std::invalid_argument& e) {
    fuzz::require(refused, target, where + ": refused a valid address: " + e.what());
    fuzz::require_refusal_message(target, e.what(), "from_address (CUDA runtime handle)", shown);
  } catch (const std::exception& e) {
    fuzz::violated(target, where + ": threw something other than std::invalid_argument: " + e.what());
  } catch (...) {
    fuzz::violated(target, where + ": threw a non-std exception");
  }
}

template <class T>
void check(fuzz::input& in) {
  const T value = in.take<T>();
  const auto wide = widen(value);
  const std::string shown = std::to_string(wide);
  bool refused = false;
  if constexpr (std::signed_integral<T>) refused = value < 0;
  const std::uint64_t bits = static_cast<std::uint64_t>(wide);
  check_one([&] { return streamlike::from_address(value); }, shown, refused,
            value == 0 ? streamlike::stream_view::legacy_default() : fuzz::view_of(bits), "legacy");
  check_one([&] { return per_thread_tu_from_address(wide); }, shown, refused,
            value == 0 ? streamlike::stream_view::per_thread_default() : fuzz::view_of(bits), "per-thread");
}

template <std::size_t... I>
void dispatch(std::size_t which, fuzz::input& in, std::index_sequence<I...>) {
  ((which == I ? check<std::tuple_element_t<I, integer_types>>(in) : void()), ...);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::input in(data, size);
  constexpr std::size_t count = std::tuple_size_v<integer_types>;
  const std::size_t which = in.take<std::uint8_t>() % count;
  dispatch(which, in, std::make_index_sequence<count>{});
  return 0;
}

// Shared by the libFuzzer targets of test/fuzz/: reading integers from the fuzzer's bytes, the
// expected handle of an address, and the contract checks. A broken contract prints what broke
// and calls __builtin_trap(), so libFuzzer reports a crash and saves the input that caused it
// (an uncaught exception would too, but the targets catch everything to say which rule broke).
//
// Input layout (also what make_corpus.py writes): fixed-size little-endian fields, read from the
// start; a short input reads as if padded with zero bytes, so every input decodes to something.
#ifndef STREAMLIKE_TEST_FUZZ_FUZZ_SUPPORT_HPP
#define STREAMLIKE_TEST_FUZZ_FUZZ_SUPPORT_HPP

#include <streamlike/stream_view.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace fuzz {

// The fuzzer's bytes, consumed from the front.
class input {
public:
  input(const std::uint8_t* data, std::size_t size) noexcept : data_(data), size_(size) {}

  // sizeof(T) bytes, little-endian, zero-padded past the end; as T (two's complement for signed T).
  template <class T>
  T take() noexcept {
    using U = std::make_unsigned_t<T>;
    std::uint64_t bits = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      const std::uint64_t byte = offset_ < size_ ? data_[offset_] : 0;
      ++offset_;
      bits |= byte << (8 * i);
    }
    return static_cast<T>(static_cast<U>(bits));
  }

  [[nodiscard]] bool exhausted() const noexcept { return offset_ >= size_; }

  // A Python-style optional integer (None or an int64), as DLPack and the CUDA Array Interface
  // pass a stream: one byte whose low bit says the value is present, then 8 value bytes, always
  // consumed, so the layout of the seed corpus does not depend on that bit.
  struct optional_int64 {
    bool present;
    std::int64_t raw;
    std::optional<std::int64_t> value;
    std::string shown; // as Python would print it: the number, or None
  };
  optional_int64 take_optional_int64() {
    const bool present = (take<std::uint8_t>() & 1U) != 0;
    const auto raw = take<std::int64_t>();
    return {present, raw, present ? std::optional<std::int64_t>(raw) : std::nullopt,
            present ? std::to_string(raw) : std::string("None")};
  }

private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t offset_ = 0;
};

// The view that names the raw address `address` (what a decoder must return for a handle).
inline streamlike::stream_view view_of(std::uint64_t address) noexcept {
  return streamlike::stream_view{reinterpret_cast<cudaStream_t>(static_cast<std::uintptr_t>(address))};
}

[[noreturn]] inline void violated(const char* target, const std::string& what) noexcept {
  std::fprintf(stderr, "\n%s: contract violated: %s\n", target, what.c_str());
  std::fflush(stderr);
  __builtin_trap();
}

inline void require(bool ok, const char* target, const std::string& what) noexcept {
  if (!ok) violated(target, what);
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Checks the message of a refusal: the header promises "streamlike: <convention>: invalid stream
// value <value>; expected <what>", so the convention, the value as written and "expected" must
// all be in it.
inline void require_refusal_message(const char* target, const std::string& message, const std::string& convention,
                                    const std::string& value) {
  require(contains(message, "streamlike: "), target, "message lacks the library prefix: " + message);
  require(contains(message, convention), target,
          "message does not name the convention '" + convention + "': " + message);
  require(contains(message, "invalid stream value " + value), target,
          "message does not name the value " + value + ": " + message);
  require(contains(message, "; expected "), target, "message does not say what was expected: " + message);
}

inline std::string describe(const std::optional<streamlike::stream_view>& view) {
  if (!view) return "no synchronization (empty)";
  return "handle " + std::to_string(reinterpret_cast<std::uintptr_t>(view->get()));
}

// What a decoder of an optional stream integer must do with one value: refuse it, or decode it.
struct decoding {
  bool refused = false;
  std::optional<streamlike::stream_view> view; // when not refused: empty means "no synchronization"
};
inline decoding refusal() { return {true, std::nullopt}; }
inline decoding decodes_to(std::optional<streamlike::stream_view> view) { return {false, view}; }

// Calls decode(value.value) and checks it against `expected`: the expected view, or a
// std::invalid_argument whose message names `convention` and the value (require_refusal_message);
// any other exception breaks the contract. Returns the refusal's message ("" if it accepted), for
// the target's own checks of it.
template <class Decode>
std::string check_optional_decoder(const char* target, const std::string& convention,
                                   const input::optional_int64& value, Decode decode, const decoding& expected) {
  try {
    const std::optional<streamlike::stream_view> view = decode(value.value);
    require(!expected.refused, target, "accepted stream=" + value.shown + ", which " + convention + " does not allow");
    require(view == expected.view, target,
            "stream=" + value.shown + " decoded to " + describe(view) + ", expected " + describe(expected.view));
    return {};
  } catch (const std::invalid_argument& e) {
    require(expected.refused, target, "refused the valid stream=" + value.shown + ": " + e.what());
    require_refusal_message(target, e.what(), convention, value.shown);
    return e.what();
  } catch (const std::exception& e) {
    violated(target, "stream=" + value.shown + " threw something other than std::invalid_argument: " + e.what());
  } catch (...) {
    violated(target, "stream=" + value.shown + " threw a non-std exception");
  }
}

} // namespace fuzz

#endif // STREAMLIKE_TEST_FUZZ_FUZZ_SUPPORT_HPP

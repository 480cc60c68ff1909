// Helpers shared by the libFuzzer harnesses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include <tensogram.hpp>

namespace tensogram_fuzz {

/// The fuzzer's input as the byte span the library's API takes.
inline std::span<const std::byte> as_bytes(const std::uint8_t* data, std::size_t size) noexcept {
  return {reinterpret_cast<const std::byte*>(data), size};
}

/// Reads every byte of `bytes` in instrumented code. Zero-copy decode hands
/// out views into the input, and libxxhash is not instrumented, so only an
/// explicit read lets AddressSanitizer check that a view stays inside the
/// buffer it claims to point into. The sum is returned so the loop is not
/// optimised away.
inline std::uint64_t touch(std::span<const std::byte> bytes) noexcept {
  std::uint64_t sum = 0;
  for (std::byte b : bytes) sum += static_cast<std::uint8_t>(b);
  return sum;
}

/// Messages of one input whose metadata and objects the scanning targets
/// decode (fuzz_scan: the first ones and the last; fuzz_file_source: the
/// first ones per scan mode). Their subject is the scan; the decoders have
/// targets of their own, and decoding every message of an input cut from the
/// hundred-message fixtures parsed the same shape a hundred times per
/// execution (60 % of fuzz_scan's time, no new code reached).
inline constexpr std::size_t max_decoded_messages = 8;

/// Touches every object payload of a decoded message.
inline std::uint64_t touch(const tensogram::message& m) noexcept {
  std::uint64_t sum = 0;
  for (const tensogram::decoded_object& o : m) sum += touch(o.bytes());
  return sum;
}

}  // namespace tensogram_fuzz

// blosc2's filters over one block (spec 03 §8.4.3): byte shuffle and bit
// shuffle, forward when compressing and backward when decompressing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tensogram::codecs::blosc2_detail {

/// Runs filter `code` (`blosc2_filter::shuffle` or `bitshuffle`) over the
/// `n` bytes of `in` into `out` (elements of `ts` bytes; the trailing
/// `n mod ts` bytes, or those after the last whole group of eight elements
/// for bit shuffle, are copied unchanged).
void run_filter(std::uint8_t code, const std::byte* in, std::byte* out, std::size_t n, std::size_t ts,
                bool forward);

/// A filter code for messages ("delta (3)", …).
[[nodiscard]] std::string filter_name(std::uint8_t code);

}  // namespace tensogram::codecs::blosc2_detail

// The byte-transposition filter `shuffle` (spec 03 §5).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace tensogram::codecs {

/// out[b·M + e] = in[e·S + b] for S = element_size, M = len / S. Throws
/// `encoding_error` ("shuffle error: ...") for S = 0 or a length that is not
/// a multiple of S. `in` and `out` must not overlap and have equal sizes.
void shuffle(std::span<const std::byte> in, std::size_t element_size, std::span<std::byte> out,
             std::uint32_t threads = 0);

/// The inverse: out[e·S + b] = in[b·M + e].
void unshuffle(std::span<const std::byte> in, std::size_t element_size, std::span<std::byte> out,
               std::uint32_t threads = 0);

}  // namespace tensogram::codecs

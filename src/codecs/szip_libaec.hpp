// The szip codec (spec 03 §7) through Debian's libaec: the functions of
// tensogram/codecs/szip.hpp with libaec doing the coding, same parameters,
// results and errors. The native build (src/codecs/szip.cpp) codes with our
// own CCSDS 121.0-B-3 encoder and decoder and falls back to these where ours
// cannot promise libaec's answer: a sample above bits_per_sample bits
// (encode), a stream our decoder refuses (decode: libaec then gives its own
// error or its own bytes). Private to src/codecs/szip*.cpp.
#pragma once

#include <libaec.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "tensogram/codecs/szip.hpp"

namespace tensogram::codecs::szip_libaec {

/// libaec's stream settings for `p` (no buffers yet).
[[nodiscard]] aec_stream make_stream(const szip_params& p);

[[nodiscard]] szip_encoded compress(std::span<const std::byte> in, const szip_params& p);
[[nodiscard]] szip_encoded compress_chunked(std::uint64_t size, std::size_t unit, const szip_chunk_fill& fill,
                                            const szip_params& p, std::uint32_t threads);
void decompress_into(std::span<const std::byte> payload, const szip_params& p, std::span<std::byte> out);
void decompress_chunked(std::span<const std::byte> payload, const szip_params& p, std::size_t expected,
                        std::size_t unit, const szip_chunk_sink& sink, std::uint32_t threads);
[[nodiscard]] std::vector<std::byte> decompress_range(std::span<const std::byte> payload,
                                                      const szip_params& p,
                                                      std::span<const std::uint64_t> stored_offsets,
                                                      std::uint64_t total_bytes, std::uint64_t byte_pos,
                                                      std::uint64_t byte_size);

}  // namespace tensogram::codecs::szip_libaec

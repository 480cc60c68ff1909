// The szip entry points of a build without libaec (the WebAssembly module
// when the libaec source package cannot be obtained, docs/wasm.md), all on
// our own CCSDS 121.0-B-3 code: encoding with our encoder
// (src/codecs/szip_encoder.hpp, byte-identical to libaec 1.0.6's streams,
// with the true RSI offsets of spec 03 §7.4, as the libaec build records
// them), decoding with our decoder (src/codecs/szip_decoder.hpp), full,
// piecewise and by range (§7.5, the RSI start found by the same CDS walk as
// the libaec build), with the same checks and errors as src/codecs/szip.cpp.
// The build is sequential, so `threads` is ignored.
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "szip_common.hpp"
#include "szip_decoder.hpp"
#include "szip_encoder.hpp"
#include "szip_parallel.hpp"
#include "tensogram/codecs/szip.hpp"
#include "tensogram/core/error.hpp"

namespace tensogram::codecs {

using szip_parallel::chunk_bytes;

// True: both directions are built in (the doctor's self-test encodes).
bool szip_available() noexcept {
  return true;
}

szip_encoded szip_compress(std::span<const std::byte> in, const szip_params& p) {
  szip_validate(p);
  if (in.empty()) return {};
  return szip_encode(in, p);  // which refuses a partial sample
}

szip_encoded szip_compress_chunked(std::uint64_t size, std::size_t unit, const szip_chunk_fill& fill,
                                   const szip_params& p, std::uint32_t /*threads*/) {
  szip_validate(p);
  szip_encoded out;
  if (size == 0) return out;
  // The producer's pieces (whole RSIs and units, about 64 KiB) go straight
  // into the encoder while still in cache; samples above bits_per_sample
  // are masked (szip_encoder.hpp).
  std::uint64_t bits = 0;
  (void)szip_encode_filled(0, size, chunk_bytes(p, unit), fill, p, out, bits);  // refuses a partial sample
  return out;
}

void szip_decompress_into(std::span<const std::byte> payload, const szip_params& p,
                          std::span<std::byte> out) {
  if (!szip_common::check_decode_sizes(payload, p, out.size())) return;
  szip_decode_into(payload, p, out);
}

std::vector<std::byte> szip_decompress(std::span<const std::byte> payload, const szip_params& p,
                                       std::size_t expected) {
  if (!szip_common::check_decode_sizes(payload, p, expected)) return {};
  std::vector<std::byte> out(expected);
  szip_decode_into(payload, p, out);
  return out;
}

void szip_decompress_chunked(std::span<const std::byte> payload, const szip_params& p, std::size_t expected,
                             std::size_t unit, const szip_chunk_sink& sink, std::uint32_t /*threads*/) {
  if (!szip_common::check_decode_sizes(payload, p, expected)) return;
  (void)szip_decode_pieces(payload, p, 0, 0, expected, chunk_bytes(p, unit), sink, true, false);
}

std::vector<std::byte> szip_decompress_range(std::span<const std::byte> payload, const szip_params& p,
                                             std::span<const std::uint64_t> stored_offsets,
                                             std::uint64_t total_bytes, std::uint64_t byte_pos,
                                             std::uint64_t byte_size) {
  const auto at = szip_common::start_range(payload, p, stored_offsets, total_bytes, byte_pos, byte_size);
  if (!at) return {};
  return szip_decode_range(payload, p, at->bit, at->skip, byte_size, false);
}

}  // namespace tensogram::codecs

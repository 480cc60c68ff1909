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
#include "tensogram/codecs/szip.hpp"
#include "tensogram/core/error.hpp"

namespace tensogram::codecs {

namespace {

// Pieces of stage input handed to the encoder and of decoded bytes handed to
// a sink: whole RSIs and whole `unit`s, about 64 KiB (as the libaec build's).
std::size_t piece_bytes(const szip_params& p, std::size_t unit) {
  const std::size_t rsi_bytes = static_cast<std::size_t>(p.rsi) * p.block_size * szip_sample_bytes(p);
  const std::size_t step = std::lcm(rsi_bytes, std::max<std::size_t>(unit, 1));
  return std::max<std::size_t>(1, (std::size_t{64} << 10) / step) * step;
}

}  // namespace

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
  // into the encoder while still in cache.
  const std::size_t chunk = piece_bytes(p, unit);
  std::vector<std::byte> buf(static_cast<std::size_t>(std::min<std::uint64_t>(chunk, size)));
  szip_stream_encoder enc(p, size, out);  // refuses a partial sample
  for (std::uint64_t off = 0; off < size; off += chunk) {
    const std::span<std::byte> piece(buf.data(),
                                     static_cast<std::size_t>(std::min<std::uint64_t>(chunk, size - off)));
    fill(off, piece);
    enc.feed(piece);
  }
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
  const std::size_t chunk = std::min(piece_bytes(p, unit), expected);
  std::vector<std::byte> buf(chunk);
  szip_stream_decoder dec(payload, p, expected);
  for (std::size_t off = 0; off < expected; off += chunk) {
    const std::span<std::byte> piece(buf.data(), std::min(chunk, expected - off));
    dec.next(piece);
    sink(off, piece);
  }
}

std::vector<std::byte> szip_decompress_range(std::span<const std::byte> payload, const szip_params& p,
                                             std::span<const std::uint64_t> stored_offsets,
                                             std::uint64_t total_bytes, std::uint64_t byte_pos,
                                             std::uint64_t byte_size) {
  szip_validate(p);
  if (byte_size == 0) return {};
  const szip_common::range_start at =
      szip_common::locate_range(payload, p, stored_offsets, total_bytes, byte_pos, byte_size);
  // Decoded from the RSI's start; its head before `byte_pos` is skipped.
  szip_stream_decoder dec(payload, p, at.skip + byte_size, at.bit);
  std::vector<std::byte> head(
      static_cast<std::size_t>(std::min<std::uint64_t>(at.skip, std::size_t{64} << 10)));
  for (std::uint64_t left = at.skip; left != 0;) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left, head.size()));
    dec.next(std::span(head).first(n));
    left -= n;
  }
  std::vector<std::byte> out(static_cast<std::size_t>(byte_size));
  dec.next(out);
  return out;
}

}  // namespace tensogram::codecs

// The szip codec of the native build (spec 03 §7): our own CCSDS 121.0-B-3
// encoder and decoder (src/codecs/szip_encoder.hpp, szip_decoder.hpp; the
// WebAssembly build's, byte-identical to libaec 1.0.6 on every stream
// libaec writes), with libaec (src/codecs/szip_libaec.cpp) wherever ours
// cannot promise libaec's answer. Why: ours decodes in ~0.6 of libaec's time
// and encodes in about libaec's time while recording the RSI offsets of §7.4
// as it writes them (libaec's stage walks the coded stream for them); why
// the fallback: the reference codes with libaec, so a stream must decode to
// libaec's bytes, and fail with libaec's error exactly where libaec fails.
//
//   - Encode: our encoder (on `threads` parts joined as szip_parallel
//     describes). A sample above bits_per_sample bits, which ours masks and
//     libaec codes into other bytes, and a block size above ours (4096, with
//     AEC_NOT_ENFORCE) go to libaec.
//   - Decode: our decoder with libaec parity (szip_decoder.hpp: it refuses
//     every stream on which libaec could answer differently); any failure of
//     ours, whatever its reason, and the stream is decoded again by libaec,
//     whose success or error is the result. The fast path only ever
//     accepts, as the metatensor JSON fast path (src/metatensor/fast_json.hpp).
#include "tensogram/codecs/szip.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "szip_common.hpp"
#include "szip_decoder.hpp"
#include "szip_encoder.hpp"
#include "szip_libaec.hpp"
#include "szip_parallel.hpp"
#include "szip_walk.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/core/memory.hpp"
#include "tensogram/core/parallel.hpp"

namespace tensogram::codecs {

namespace {

using szip_parallel::chunk_bytes;
using szip_parallel::parallel_parts;

// The walk to a decode part's start, relative to our decode of an RSI: the
// 0.08 measured against libaec's decode (sp24 bytes on x86-64, BMI2 walk),
// over ours' 0.56-0.63 of libaec's time (docs/benchmarks.md).
constexpr double k_walk_share = 0.13;

// Whether our coder takes these parameters at all (szip_validate'd).
bool ours_codes(const szip_params& p) noexcept {
  return p.block_size <= szip_walk::k_max_block;
}

// Our encoder over stage bytes [begin, end) from `fill` (szip_encode_filled),
// with payload room reserved for `capacity` input bytes.
bool encode_ours(std::uint64_t begin, std::uint64_t end, std::size_t unit, const szip_chunk_fill& fill,
                 const szip_params& p, std::size_t capacity, szip_encoded& e, std::uint64_t& bits) {
  reserve_advised(e.payload, szip_common::payload_bound(capacity));
  return szip_encode_filled(begin, end, chunk_bytes(p, unit), fill, p, e, bits);
}

}  // namespace

bool szip_available() noexcept {
  return true;
}

szip_encoded szip_compress(std::span<const std::byte> in, const szip_params& p) {
  szip_validate(p);
  if (in.empty()) return {};
  szip_parallel::check_sample_multiple(in.size(), p);
  if (ours_codes(p)) {
    szip_encoded out;
    reserve_advised(out.payload, szip_common::payload_bound(in.size()));
    szip_stream_encoder enc(p, in.size(), out);
    enc.feed(in);
    if (!enc.saw_wide_sample()) return out;
  }
  return szip_libaec::compress(in, p);
}

szip_encoded szip_compress_chunked(std::uint64_t size, std::size_t unit, const szip_chunk_fill& fill,
                                   const szip_params& p, std::uint32_t threads) {
  szip_validate(p);
  if (size == 0) return {};
  szip_parallel::check_sample_multiple(size, p);
  if (!ours_codes(p)) return szip_libaec::compress_chunked(size, unit, fill, p, threads);
  if (const std::size_t parts = parallel_parts(p, size, unit, threads); parts > 1) {
    // Any failure (a non-finite value, say) is reported by the serial code
    // below, so errors do not depend on the thread count.
    try {
      const auto code = [&](std::uint64_t begin, std::uint64_t /*own*/, std::uint64_t end,
                            std::size_t capacity, szip_encoded& e) {
        std::uint64_t bits = 0;
        if (!encode_ours(begin, end, unit, fill, p, capacity, e, bits)) szip_walk::fail("wide sample");
        return bits;
      };
      if (std::optional<szip_encoded> joined =
              szip_parallel::compress_parts(size, unit, p, parts, threads, code)) {
        return std::move(*joined);
      }
    } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): retried serially
    }
  }
  szip_encoded out;
  std::uint64_t bits = 0;
  if (encode_ours(0, size, unit, fill, p, static_cast<std::size_t>(size), out, bits)) return out;
  return szip_libaec::compress_chunked(size, unit, fill, p, 1);
}

void szip_decompress_into(std::span<const std::byte> payload, const szip_params& p,
                          std::span<std::byte> out) {
  if (!szip_common::check_decode_sizes(payload, p, out.size())) return;
  if (ours_codes(p)) {
    try {
      szip_decode_into(payload, p, out, true);
      return;
    } catch (const encoding_error&) {  // NOLINT(bugprone-empty-catch): libaec decides
    }
  }
  szip_libaec::decompress_into(payload, p, out);
}

std::vector<std::byte> szip_decompress(std::span<const std::byte> payload, const szip_params& p,
                                       std::size_t expected) {
  if (!szip_common::check_decode_sizes(payload, p, expected)) return {};
  std::vector<std::byte> out = make_advised_bytes(expected);
  szip_decompress_into(payload, p, out);
  return out;
}

void szip_decompress_chunked(std::span<const std::byte> payload, const szip_params& p, std::size_t expected,
                             std::size_t unit, const szip_chunk_sink& sink, std::uint32_t threads) {
  if (!szip_common::check_decode_sizes(payload, p, expected)) return;
  if (ours_codes(p)) {
    // Any failure: libaec decodes the stream again (handing `sink` every
    // piece again), so values and errors are libaec's and do not depend on
    // the thread count.
    try {
      if (const std::size_t parts = parallel_parts(p, expected, unit, threads); parts > 1) {
        // Every part but the last must end where the walk puts the next
        // one (else the stream is not read alike by both, and libaec
        // decides).
        szip_parallel::decode_parts(
            payload, p, expected, unit, parts, threads, k_walk_share,
            [&](std::uint64_t bit, std::size_t begin, std::size_t end, bool last) {
              return std::optional<std::uint64_t>(
                  szip_decode_pieces(payload, p, bit, begin, end, chunk_bytes(p, unit), sink, last, true));
            });
      } else {
        (void)szip_decode_pieces(payload, p, 0, 0, expected, chunk_bytes(p, unit), sink, true, true);
      }
      return;
    } catch (const encoding_error&) {  // NOLINT(bugprone-empty-catch): libaec decides
    }
  }
  szip_libaec::decompress_chunked(payload, p, expected, unit, sink, threads);
}

std::vector<std::byte> szip_decompress_range(std::span<const std::byte> payload, const szip_params& p,
                                             std::span<const std::uint64_t> stored_offsets,
                                             std::uint64_t total_bytes, std::uint64_t byte_pos,
                                             std::uint64_t byte_size) {
  if (!ours_codes(p)) {
    return szip_libaec::decompress_range(payload, p, stored_offsets, total_bytes, byte_pos, byte_size);
  }
  // The range checks and the walk to the RSI's start are the libaec path's
  // too (its errors are the same); libaec walks again only after our
  // decoder refused the run.
  const auto at = szip_common::start_range(payload, p, stored_offsets, total_bytes, byte_pos, byte_size);
  if (!at) return {};
  try {
    return szip_decode_range(payload, p, at->bit, at->skip, byte_size, true);
  } catch (const encoding_error&) {  // NOLINT(bugprone-empty-catch): libaec decides
  }
  return szip_libaec::decompress_range(payload, p, stored_offsets, total_bytes, byte_pos, byte_size);
}

}  // namespace tensogram::codecs

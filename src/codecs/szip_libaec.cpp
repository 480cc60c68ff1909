// The szip codec through libaec (szip_libaec.hpp): what the native build
// falls back to where our own coder cannot promise libaec's answer.
#include "szip_libaec.hpp"

#include <libaec.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "szip_common.hpp"
#include "szip_parallel.hpp"
#include "szip_walk.hpp"
#include "tensogram/core/byte_order.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/core/memory.hpp"
#include "tensogram/core/parallel.hpp"

namespace tensogram::codecs::szip_libaec {

namespace {

using szip_common::check_decode_sizes;
using szip_parallel::check_sample_multiple;
using szip_parallel::chunk_bytes;
using szip_parallel::parallel_parts;
using szip_walk::fail;

// libaec 1.0.6 keeps a whole RSI as 32-bit samples and sizes it, and a
// block's bits, in 32-bit arithmetic: past 2^30 samples per RSI its buffers
// wrap to a few bytes (a 2^30-sample block crashes its decoder on a 64-byte
// payload), and it allocates the RSI whatever the input's size. We take RSIs
// of at most 2^25 samples (128 MiB of libaec state; the largest our own coder
// takes is 4096 x 4096 = 2^24), where every such product stays below 2^31.
constexpr std::uint64_t k_max_rsi_samples = std::uint64_t{1} << 25;

// Ends a libaec stream on scope exit.
class aec_session {
 public:
  aec_session(aec_stream& s, bool encode) : s_(s), encode_(encode) {
    if (const std::uint64_t rsi_samples = std::uint64_t{s.rsi} * s.block_size;
        rsi_samples > k_max_rsi_samples) {
      fail("rsi x block_size = " + std::to_string(rsi_samples) + " samples per RSI exceeds " +
           std::to_string(k_max_rsi_samples) + ", the most libaec is given (its 32-bit sizes)");
    }
    const int rc = encode ? aec_encode_init(&s) : aec_decode_init(&s);
    if (rc != AEC_OK)
      fail(std::string(encode ? "aec_encode_init" : "aec_decode_init") + " failed with code " +
           std::to_string(rc));
  }
  aec_session(const aec_session&) = delete;
  aec_session& operator=(const aec_session&) = delete;
  ~aec_session() {
    if (encode_) {
      aec_encode_end(&s_);
    } else {
      aec_decode_end(&s_);
    }
  }

 private:
  aec_stream& s_;
  bool encode_;
};

// The stream walk (src/codecs/szip_walk.hpp).
using szip_walk::bit_reader;
using szip_walk::copy_from_bit;
using szip_walk::id_length;
using szip_walk::walk_rsi;
using szip_walk::walk_rsi_body;

// An RSI codes to at least 3 bits (one CDS: an ID of >= 1 bit and at least
// two more bits, Appendix C), so once this many further RSIs have been coded
// the end of an RSI lies in a byte libaec has already written (it holds back
// only the byte it is filling).
constexpr std::uint64_t k_walk_lag = 4;

// libaec 1.0.6 writes a CDS straight to its output only while more than
// CDSLEN = 258 bytes (5 ID bits, 64 samples of 32 bits, carry) are left
// there, without checking that the CDS fits; otherwise, and always for the
// first CDS of a call that resumes an RSI begun in an earlier call, it
// stages the CDS in a buffer of that size. A longer block (AEC_NOT_ENFORCE)
// of wide samples codes to up to ID + block_size x bits_per_sample bits and
// overruns either, past avail_out or past its buffer into its own state
// (tests/codecs/szip_fallback_test.cpp). Its decoder has no such limit.
// Such parameters are therefore coded by one aec_encode call over the whole
// input into room for the longest stream it can write (whole_stream_room).
bool takes_pieces(const szip_params& p) noexcept {
  return std::uint64_t{p.block_size} * p.bits_per_sample <= 64 * 32;
}

// Room for all libaec writes for `n` input bytes in one call with more than
// CDSLEN to spare before every CDS, so that it never stages one nor runs out
// of room: every block (the last one padded, Appendix C; a zero-block CDS is
// shorter) at most as long as its samples plus 2 bytes of ID and carry, one
// more such block and 512 bytes.
std::size_t whole_stream_room(std::size_t n, const szip_params& p) {
  const std::size_t block = static_cast<std::size_t>(p.block_size) * szip_sample_bytes(p);
  return ((n + block - 1) / block + 1) * (block + 2) + 512;
}

// libaec's encoder fed piece by piece (its streaming interface, AEC_NO_FLUSH
// until the last piece), or in one piece where takes_pieces() is false: the
// coded bytes land in a buffer and are appended to the payload (never
// zero-filled first), and the RSI offsets of §7.4 are walked while those
// bytes are still in cache, instead of in a second pass over the whole
// payload. The output is that of one aec_buffer_encode call: libaec's stream
// does not depend on how its input is split.
class chunked_encoder {
 public:
  // `capacity`: the input size the payload's capacity is reserved for
  // (`total`, or more where parts are appended later).
  chunked_encoder(const szip_params& p, std::size_t total, szip_encoded& out, std::size_t capacity = 0)
      : p_(p),
        out_(out),
        strm_(make_stream(p)),
        session_(strm_, true),
        scratch_size_(takes_pieces(p) ? std::min(k_scratch, szip_common::payload_bound(total))
                                      : whole_stream_room(total, p)),
        scratch_(std::make_unique_for_overwrite<unsigned char[]>(scratch_size_)),
        rsi_bytes_(static_cast<std::uint64_t>(p.rsi) * p.block_size * szip_sample_bytes(p)) {
    // Capacity as the reference sizes it (§7.3), advised for huge pages
    // before the first touch.
    capacity = std::max(capacity, total);
    reserve_advised(out_.payload, szip_common::payload_bound(capacity));
    samples_ = total / szip_sample_bytes(p);
    const std::uint64_t per_rsi = static_cast<std::uint64_t>(p.rsi) * p.block_size;
    count_ = static_cast<std::size_t>((samples_ + per_rsi - 1) / per_rsi);
    out_.block_offsets.reserve(count_);
    if (count_ != 0) out_.block_offsets.push_back(0);
  }

  // Codes `in`, the stage input bytes that follow those fed so far.
  void feed(std::span<const std::byte> in, bool last) {
    if (!takes_pieces(p_) && !(last && fed_ == 0)) {
      fail("szip parameters whose CDS can exceed 258 bytes are coded in one piece");
    }
    strm_.next_in = reinterpret_cast<const unsigned char*>(in.data());
    strm_.avail_in = in.size();
    do {
      strm_.next_out = scratch_.get();
      strm_.avail_out = scratch_size_;
      const int rc = aec_encode(&strm_, last ? AEC_FLUSH : AEC_NO_FLUSH);
      if (rc != AEC_OK) fail("aec_encode failed with code " + std::to_string(rc));
      const auto* coded = reinterpret_cast<const std::byte*>(scratch_.get());
      out_.payload.insert(out_.payload.end(), coded, coded + (scratch_size_ - strm_.avail_out));
    } while (strm_.avail_in != 0 || strm_.avail_out == 0);
    fed_ += in.size();
    const std::uint64_t coded_rsis = last ? count_ : fed_ / rsi_bytes_;
    walk(last ? count_ : (coded_rsis > k_walk_lag ? coded_rsis - k_walk_lag : 0));
  }

  // After the last feed: the bit length of the coded stream, the end of its
  // last CDS (libaec pads the final byte with zero bits). The last RSI may
  // be partial: libaec codes its blocks, the last one padded (Appendix C).
  [[nodiscard]] std::uint64_t bit_length() const {
    if (count_ == 0) return 0;
    const std::uint64_t per_rsi = static_cast<std::uint64_t>(p_.rsi) * p_.block_size;
    const std::uint64_t rest = samples_ - (count_ - 1) * per_rsi;
    const auto blocks = static_cast<std::uint32_t>((rest + p_.block_size - 1) / p_.block_size);
    bit_reader r(out_.payload, out_.block_offsets.back());
    walk_rsi(r, p_, blocks, blocks < p_.rsi);
    return r.position();
  }

 private:
  static constexpr std::size_t k_scratch = std::size_t{256} << 10;

  // Records the starts of RSIs up to index `upto` - 1 (RSI 0 starts at 0).
  void walk(std::uint64_t upto) {
    upto = std::min<std::uint64_t>(upto, count_);
    if (out_.block_offsets.size() >= upto) return;
    bit_reader r(out_.payload, out_.block_offsets.back());
    while (out_.block_offsets.size() < upto) {
      walk_rsi(r, p_, p_.rsi);
      out_.block_offsets.push_back(r.position());
    }
  }

  szip_params p_;
  szip_encoded& out_;
  aec_stream strm_;
  aec_session session_;
  std::size_t scratch_size_;
  std::unique_ptr<unsigned char[]> scratch_;
  std::uint64_t rsi_bytes_;
  std::uint64_t fed_ = 0;
  std::uint64_t samples_ = 0;
  std::size_t count_ = 0;
};

// A part of a parallel encode (szip_parallel::compress_parts) coded by a
// libaec encoder of its own, its pieces ending where the part's own RSIs
// begin.
std::uint64_t code_part(std::uint64_t begin, std::uint64_t own, std::uint64_t end, std::size_t capacity,
                        szip_encoded& e, std::size_t unit, const szip_chunk_fill& fill,
                        const szip_params& p) {
  chunked_encoder enc(p, static_cast<std::size_t>(end - begin), e, capacity);
  if (!takes_pieces(p)) {
    const auto n = static_cast<std::size_t>(end - begin);
    const auto whole = std::make_unique_for_overwrite<std::byte[]>(n);
    fill(begin, {whole.get(), n});
    enc.feed({whole.get(), n}, true);
    return enc.bit_length();
  }
  const auto chunk = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_bytes(p, unit), end - begin));
  const auto buf = std::make_unique_for_overwrite<std::byte[]>(chunk);
  for (std::uint64_t off = begin; off < end;) {
    const std::uint64_t stop = off < own ? own : end;
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, stop - off));
    const std::span<std::byte> piece(buf.get(), n);
    fill(off, piece);
    enc.feed(piece, off + n == end);
    off += n;
  }
  return enc.bit_length();
}

}  // namespace

szip_encoded compress(std::span<const std::byte> in, const szip_params& p) {
  szip_validate(p);
  szip_encoded out;
  if (in.empty()) return out;
  check_sample_multiple(in.size(), p);
  chunked_encoder enc(p, in.size(), out);
  const std::size_t chunk = takes_pieces(p) ? chunk_bytes(p, 1) : in.size();
  for (std::size_t off = 0; off < in.size(); off += chunk) {
    const std::size_t n = std::min(chunk, in.size() - off);
    enc.feed(in.subspan(off, n), off + n == in.size());
  }
  return out;
}

szip_encoded compress_chunked(std::uint64_t size, std::size_t unit, const szip_chunk_fill& fill,
                              const szip_params& p, std::uint32_t threads) {
  szip_validate(p);
  szip_encoded out;
  if (size == 0) return out;
  check_sample_multiple(size, p);
  if (const std::size_t parts = parallel_parts(p, size, unit, threads); parts > 1) {
    // Any failure (a non-finite value, say) is reported by the serial code
    // below, so errors do not depend on the thread count.
    try {
      const auto code = [&](std::uint64_t begin, std::uint64_t own, std::uint64_t end, std::size_t capacity,
                            szip_encoded& e) {
        return code_part(begin, own, end, capacity, e, unit, fill, p);
      };
      if (std::optional<szip_encoded> joined =
              szip_parallel::compress_parts(size, unit, p, parts, threads, code)) {
        return std::move(*joined);
      }
    } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): retried serially
    }
  }
  // Where libaec takes no pieces the whole stage is gathered first: input,
  // this copy and the coded stream in memory at once.
  const auto chunk =
      static_cast<std::size_t>(takes_pieces(p) ? std::min<std::uint64_t>(chunk_bytes(p, unit), size) : size);
  const auto buf = std::make_unique_for_overwrite<std::byte[]>(chunk);
  chunked_encoder enc(p, static_cast<std::size_t>(size), out);
  for (std::uint64_t off = 0; off < size; off += chunk) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, size - off));
    const std::span<std::byte> piece(buf.get(), n);
    fill(off, piece);
    enc.feed(piece, off + n == size);
  }
  return out;
}

namespace {

// A libaec decoder over the whole payload whose output is taken in pieces.
class piecewise_decoder {
 public:
  piecewise_decoder(std::span<const std::byte> payload, const szip_params& p, std::size_t expected)
      : expected_(expected), strm_(make_stream(p)), session_(strm_, false) {
    strm_.next_in = reinterpret_cast<const unsigned char*>(payload.data());
    strm_.avail_in = payload.size();
  }
  // Decodes the next out.size() bytes into `out`; `done` bytes precede them.
  void next(std::span<std::byte> out, std::size_t done) {
    strm_.next_out = reinterpret_cast<unsigned char*>(out.data());
    strm_.avail_out = out.size();
    const int rc = aec_decode(&strm_, AEC_FLUSH);
    if (rc != AEC_OK) fail("aec_decode failed with code " + std::to_string(rc));
    if (strm_.avail_out != 0) {
      fail("stream decoded to " + std::to_string(done + out.size() - strm_.avail_out) + " bytes, expected " +
           std::to_string(expected_));
    }
  }

 private:
  std::size_t expected_;
  aec_stream strm_;
  aec_session session_;
};

}  // namespace

void decompress_into(std::span<const std::byte> payload, const szip_params& p, std::span<std::byte> out) {
  if (!check_decode_sizes(payload, p, out.size())) return;
  piecewise_decoder dec(payload, p, out.size());
  dec.next(out, 0);
}

namespace {

// A part of a parallel decode (szip_parallel::decode_parts): its RSIs decoded
// by a libaec decoder of its own from the part's first RSI (with its reference
// sample, as range decode does, §7.5), from a byte-aligned copy of its bits
// when that RSI starts inside a byte.
std::optional<std::uint64_t> decode_part(std::span<const std::byte> payload, const szip_params& p,
                                         std::uint64_t bit, std::size_t begin, std::size_t end,
                                         std::size_t unit, const szip_chunk_sink& sink) {
  const auto b = static_cast<std::size_t>(bit / 8);
  if (b >= payload.size()) fail("RSI start past the end of the stream");
  std::span<const std::byte> in = payload.subspan(b);
  std::unique_ptr<std::byte[]> aligned;
  if (bit % 8 != 0) {
    // A libaec-written CDS is never longer than the uncompressed option
    // (+ slack); a stream that needs more is decoded serially instead.
    const std::uint64_t blocks = (end - begin) / szip_sample_bytes(p) / p.block_size + 2;
    const std::uint64_t block_bits =
        id_length(p) + 1 + static_cast<std::uint64_t>(p.block_size + 1) * p.bits_per_sample;
    const auto avail =
        static_cast<std::size_t>(std::min<std::uint64_t>(in.size(), blocks * block_bits / 8 + 64));
    aligned = std::make_unique_for_overwrite<std::byte[]>(avail);
    copy_from_bit(in, static_cast<unsigned>(bit % 8), {aligned.get(), avail});
    in = {aligned.get(), avail};
  }
  const std::size_t chunk = std::min(chunk_bytes(p, unit), end - begin);
  const auto buf = std::make_unique_for_overwrite<std::byte[]>(chunk);
  piecewise_decoder dec(in, p, end - begin);
  for (std::size_t off = begin; off < end; off += chunk) {
    const std::span<std::byte> piece(buf.get(), std::min(chunk, end - off));
    dec.next(piece, off - begin);
    sink(off, piece);
  }
  return std::nullopt;
}

}  // namespace

void decompress_chunked(std::span<const std::byte> payload, const szip_params& p, std::size_t expected,
                        std::size_t unit, const szip_chunk_sink& sink, std::uint32_t threads) {
  if (!check_decode_sizes(payload, p, expected)) return;
  if (const std::size_t parts = parallel_parts(p, expected, unit, threads); parts > 1) {
    // A stream the parts cannot decode (a walk or libaec error) is decoded
    // serially below, which reports its error: decoded values and errors do
    // not depend on the thread count.
    try {
      // The walk costs ~0.08 of libaec's decode per RSI (sp24 bytes on
      // x86-64, BMI2 walk; docs/benchmarks.md).
      szip_parallel::decode_parts(payload, p, expected, unit, parts, threads, 0.08,
                                  [&](std::uint64_t bit, std::size_t begin, std::size_t end, bool /*last*/) {
                                    return decode_part(payload, p, bit, begin, end, unit, sink);
                                  });
      return;
    } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): retried serially
    }
  }
  const std::size_t chunk = std::min(chunk_bytes(p, unit), expected);
  const auto buf = std::make_unique_for_overwrite<std::byte[]>(chunk);
  piecewise_decoder dec(payload, p, expected);
  for (std::size_t off = 0; off < expected; off += chunk) {
    const std::span<std::byte> piece(buf.get(), std::min(chunk, expected - off));
    dec.next(piece, off);
    sink(off, piece);
  }
}

std::vector<std::byte> decompress_range(std::span<const std::byte> payload, const szip_params& p,
                                        std::span<const std::uint64_t> stored_offsets,
                                        std::uint64_t total_bytes, std::uint64_t byte_pos,
                                        std::uint64_t byte_size) {
  const auto at = szip_common::start_range(payload, p, stored_offsets, total_bytes, byte_pos, byte_size);
  if (!at) return {};
  const std::uint64_t start_bit = at->bit;
  const std::uint64_t skip = at->skip;
  const std::size_t s = szip_sample_bytes(p);
  // Decode from a byte-aligned copy of the stream from that bit (§7.5). A
  // libaec-written CDS is never longer than the uncompressed option, so the
  // bits of the blocks up to the end of the range are bounded; copy only
  // those (plus slack) instead of the whole rest of the stream. Should that
  // prefix not be enough (a stream not written by libaec), decode again from
  // the full rest, which is exactly what the unbounded copy gave.
  const auto b = static_cast<std::size_t>(start_bit / 8);
  const auto sh = static_cast<unsigned>(start_bit % 8);
  const auto need = static_cast<std::size_t>(skip + byte_size);
  const std::uint64_t blocks = (need / s + 1) / p.block_size + 2;
  const std::uint64_t block_bits =
      id_length(p) + 1 + static_cast<std::uint64_t>(p.block_size + 1) * p.bits_per_sample;
  const std::size_t rest = payload.size() - b;
  std::size_t avail = rest;
  if (blocks <= (std::uint64_t{1} << 40) / block_bits) {
    avail = static_cast<std::size_t>(std::min<std::uint64_t>(rest, blocks * block_bits / 8 + 64));
  }
  std::vector<std::byte> out = make_advised_bytes(need);
  std::vector<std::byte> aligned;
  for (;;) {
    aligned = make_advised_bytes(avail);
    copy_from_bit(payload.subspan(b), sh, aligned);
    aec_stream strm = make_stream(p);
    strm.next_in = reinterpret_cast<const unsigned char*>(aligned.data());
    strm.avail_in = aligned.size();
    strm.next_out = reinterpret_cast<unsigned char*>(out.data());
    strm.avail_out = out.size();
    int rc = AEC_OK;
    {
      aec_session session(strm, false);
      rc = aec_decode(&strm, AEC_FLUSH);
    }
    if (rc == AEC_OK && strm.avail_out == 0) break;
    if (avail < rest) {
      avail = rest;
      continue;
    }
    if (rc != AEC_OK) fail("aec_decode failed with code " + std::to_string(rc));
    fail("stream ended before the requested range");
  }
  // Drop the decoded head of the RSI in place (no second buffer).
  out.erase(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(skip));
  return out;
}

aec_stream make_stream(const szip_params& p) {
  aec_stream s{};
  s.bits_per_sample = p.bits_per_sample;
  s.block_size = p.block_size;
  s.rsi = p.rsi;
  s.flags = p.flags;
  return s;
}

}  // namespace tensogram::codecs::szip_libaec

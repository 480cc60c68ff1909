#include "tensogram/codecs/szip.hpp"

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
#include "szip_walk.hpp"
#include "tensogram/core/byte_order.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/core/memory.hpp"
#include "tensogram/core/parallel.hpp"

namespace tensogram::codecs {

namespace {

using szip_common::check_decode_sizes;
using szip_walk::fail;

// Ends a libaec stream on scope exit.
class aec_session {
 public:
  aec_session(aec_stream& s, bool encode) : s_(s), encode_(encode) {
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

aec_stream make_stream(const szip_params& p) {
  aec_stream s{};
  s.bits_per_sample = p.bits_per_sample;
  s.block_size = p.block_size;
  s.rsi = p.rsi;
  s.flags = p.flags;
  return s;
}

// The stream walk (src/codecs/szip_walk.hpp).
using szip_walk::bit_reader;
using szip_walk::copy_from_bit;
using szip_walk::id_length;
using szip_walk::walk_rsi;
using szip_walk::walk_rsi_body;

}  // namespace

bool szip_available() noexcept {
  return true;
}

namespace {

// Stage input handed to libaec per call: whole RSIs (and whole units of the
// producer), about 64 KiB, so that a chunk packed just before is still in
// L2 when libaec reads it, and the coded bytes are in cache when the offset
// walk reads them.
constexpr std::size_t k_chunk_target = std::size_t{64} << 10;

std::size_t chunk_bytes(const szip_params& p, std::size_t unit) {
  const std::size_t rsi_bytes = static_cast<std::size_t>(p.rsi) * p.block_size * szip_sample_bytes(p);
  const std::size_t step = std::lcm(rsi_bytes, std::max<std::size_t>(unit, 1));
  return std::max<std::size_t>(1, k_chunk_target / step) * step;
}

// An RSI codes to at least 3 bits (one CDS: an ID of >= 1 bit and at least
// two more bits, Appendix C), so once this many further RSIs have been coded
// the end of an RSI lies in a byte libaec has already written (it holds back
// only the byte it is filling).
constexpr std::uint64_t k_walk_lag = 4;

// libaec's encoder fed piece by piece (its streaming interface, AEC_NO_FLUSH
// until the last piece): the coded bytes land in a small buffer and are
// appended to the payload (never zero-filled first), and the RSI offsets of
// §7.4 are walked while those bytes are still in cache, instead of in a
// second pass over the whole payload. The output is that of one
// aec_buffer_encode call: libaec's stream does not depend on how its input
// is split.
class chunked_encoder {
 public:
  // `capacity`: the input size the payload's capacity is reserved for
  // (`total`, or more where parts are appended later).
  chunked_encoder(const szip_params& p, std::size_t total, szip_encoded& out, std::size_t capacity = 0)
      : p_(p),
        out_(out),
        strm_(make_stream(p)),
        session_(strm_, true),
        scratch_(std::make_unique_for_overwrite<unsigned char[]>(k_scratch)),
        rsi_bytes_(static_cast<std::uint64_t>(p.rsi) * p.block_size * szip_sample_bytes(p)) {
    // Capacity as the reference sizes it (§7.3), advised for huge pages
    // before the first touch.
    capacity = std::max(capacity, total);
    reserve_advised(out_.payload, capacity + capacity / 4 + 256);
    samples_ = total / szip_sample_bytes(p);
    const std::uint64_t per_rsi = static_cast<std::uint64_t>(p.rsi) * p.block_size;
    count_ = static_cast<std::size_t>((samples_ + per_rsi - 1) / per_rsi);
    out_.block_offsets.reserve(count_);
    if (count_ != 0) out_.block_offsets.push_back(0);
  }

  // Codes `in`, the stage input bytes that follow those fed so far.
  void feed(std::span<const std::byte> in, bool last) {
    strm_.next_in = reinterpret_cast<const unsigned char*>(in.data());
    strm_.avail_in = in.size();
    do {
      strm_.next_out = scratch_.get();
      strm_.avail_out = k_scratch;
      const int rc = aec_encode(&strm_, last ? AEC_FLUSH : AEC_NO_FLUSH);
      if (rc != AEC_OK) fail("aec_encode failed with code " + std::to_string(rc));
      const auto* coded = reinterpret_cast<const std::byte*>(scratch_.get());
      out_.payload.insert(out_.payload.end(), coded, coded + (k_scratch - strm_.avail_out));
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
  std::unique_ptr<unsigned char[]> scratch_;
  std::uint64_t rsi_bytes_;
  std::uint64_t fed_ = 0;
  std::uint64_t samples_ = 0;
  std::size_t count_ = 0;
};

void check_sample_multiple(std::uint64_t size, const szip_params& p) {
  const std::size_t s = szip_sample_bytes(p);
  if (size % s != 0) {
    fail("data length " + std::to_string(size) + " is not a multiple of sample byte width " +
         std::to_string(s));
  }
}

// Parallel calls split a stream into runs of whole steps (RSIs that are
// also whole units of the producer). Part k is steps [first[k], first[k+1]),
// sized so that every part ends at the same time when the task of part k
// first spends `lead` (per step, relative to coding one) for each step
// before it: the walk to its start, which the tasks share in turn.
std::vector<std::uint64_t> split_steps(std::uint64_t steps, std::size_t parts, double lead) {
  std::vector<std::uint64_t> first(parts + 1, steps);
  double share = 1.0;  // part k's size relative to part 0's: (1 - lead)^k
  double sum = 0;
  for (std::size_t k = 0; k < parts; ++k, share *= 1.0 - lead) sum += share;
  double at = 0;
  share = 1.0;
  for (std::size_t k = 0; k < parts; ++k, share *= 1.0 - lead) {
    first[k] = std::min<std::uint64_t>(static_cast<std::uint64_t>(at + 0.5), steps);
    at += static_cast<double>(steps) * share / sum;
  }
  // Every part at least one step (parts <= steps).
  for (std::size_t k = 1; k < parts; ++k) {
    first[k] = std::min(std::max(first[k], first[k - 1] + 1), steps - (parts - k));
  }
  return first;
}

std::size_t step_bytes(const szip_params& p, std::size_t unit) {
  const std::size_t rsi_bytes = static_cast<std::size_t>(p.rsi) * p.block_size * szip_sample_bytes(p);
  return std::lcm(rsi_bytes, std::max<std::size_t>(unit, 1));
}

// Whether a parallel call may split this stream: two steps or more, and RSIs
// that follow one another bit for bit (AEC_PAD_RSI pads each to a byte,
// which the CDS walk does not model).
std::size_t parallel_parts(const szip_params& p, std::uint64_t size, std::size_t unit,
                           std::uint32_t threads) {
  if (threads <= 1 || (p.flags & szip_flags::pad_rsi) != 0) return 1;
  const std::uint64_t steps = (size + step_bytes(p, unit) - 1) / step_bytes(p, unit);
  return static_cast<std::size_t>(std::min<std::uint64_t>(threads, steps));
}

// Eight stream bits of `src` from bit `pos` (bits past its end read as 0).
std::byte byte_at_bit(std::span<const std::byte> src, std::uint64_t pos) noexcept {
  const auto b = static_cast<std::size_t>(pos / 8);
  const auto sh = static_cast<unsigned>(pos % 8);
  const unsigned hi = b < src.size() ? static_cast<unsigned>(src[b]) << sh : 0U;
  const unsigned lo = sh != 0 && b + 1 < src.size() ? static_cast<unsigned>(src[b + 1]) >> (8 - sh) : 0U;
  return static_cast<std::byte>((hi | lo) & 0xFF);
}

// Whether `n` bits of `a` from bit `ai` equal those of `b` from bit `bi`.
bool same_bits(std::span<const std::byte> a, std::uint64_t ai, std::span<const std::byte> b, std::uint64_t bi,
               std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; i += 8) {
    const unsigned keep = static_cast<unsigned>(std::min<std::uint64_t>(8, n - i));
    const auto mask = static_cast<std::byte>((0xFF00U >> keep) & 0xFF);
    if ((byte_at_bit(a, ai + i) & mask) != (byte_at_bit(b, bi + i) & mask)) return false;
  }
  return true;
}

// One part of a parallel encode: its lead-in RSIs (the previous part's last
// ones, coded again) and then its own.
struct coded_part {
  szip_encoded e;
  std::uint64_t own = 0;   // bit where the part's own first RSI starts
  std::uint64_t bits = 0;  // bit length of the whole stream
  std::size_t lead = 0;    // lead-in RSIs
};

// The split-coded blocks of `rsis` RSIs from bit `from`: (block index
// counted from the first, bits from the CDS start to `end`).
std::vector<std::pair<std::uint64_t, std::uint64_t>> split_blocks(std::span<const std::byte> payload,
                                                                  const szip_params& p, std::uint64_t from,
                                                                  std::size_t rsis, std::uint64_t end) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  bit_reader r(payload, from);
  for (std::size_t j = 0; j < rsis; ++j) {
    walk_rsi_body<false>(r, p, p.rsi, false, [&](std::uint32_t b, std::uint64_t bit) {
      out.emplace_back(j * p.rsi + b, end - bit);
    });
  }
  if (r.position() != end) out.clear();
  return out;
}

// Whether part `c`'s lead-in ends as part `b` coded the same RSIs: from a
// block that both coded with the same split option (the same k, so the two
// encoders' searches agree from there on) to the end, bit for bit.
bool lead_in_agrees(const coded_part& b, const coded_part& c, const szip_params& p) {
  const std::size_t count = b.e.block_offsets.size();
  if (c.lead == 0 || c.lead > count - b.lead) return false;
  const std::uint64_t from = b.e.block_offsets[count - c.lead];
  const auto ours = split_blocks(c.e.payload, p, 0, c.lead, c.own);
  const auto theirs = split_blocks(b.e.payload, p, from, c.lead, b.bits);
  // The last block split-coded in both, as many bits before the end.
  auto t = theirs.rbegin();
  for (auto o = ours.rbegin(); o != ours.rend(); ++o) {
    while (t != theirs.rend() && t->first > o->first) ++t;
    if (t == theirs.rend()) return false;
    if (t->first == o->first && t->second == o->second) {
      return same_bits(b.e.payload, b.bits - o->second, c.e.payload, c.own - o->second, o->second);
    }
  }
  return false;
}

// szip_compress_chunked on `parts` threads: every part, whole RSIs, coded by
// a libaec encoder of its own, then the parts' bit streams joined at their
// exact bit lengths (found by the CDS walk) into the stream one encoder
// writes. Each RSI starts from its own reference sample and libaec ends
// zero-block runs at the end of an RSI, but its choice of split option
// starts searching from the previous block's k, across RSIs: a part
// therefore first codes the previous part's last RSIs again (its lead-in),
// and is kept only where the lead-in came out bit for bit as the previous
// part wrote those RSIs and holds a block coded with a split option: that
// block's k is then the one the single encoder had there, and the two
// encoders agree from it on. std::nullopt otherwise (the caller codes the
// stream serially).
std::optional<szip_encoded> compress_parts(std::uint64_t size, std::size_t unit, const szip_chunk_fill& fill,
                                           const szip_params& p, std::size_t parts, std::uint32_t threads) {
  const std::size_t step = step_bytes(p, unit);
  const std::size_t rsi_bytes = static_cast<std::size_t>(p.rsi) * p.block_size * szip_sample_bytes(p);
  const std::vector<std::uint64_t> first = split_steps((size + step - 1) / step, parts, 0.0);
  const std::uint64_t lead_steps = (2 * rsi_bytes + step - 1) / step;
  const auto byte_of = [&](std::size_t k) { return std::min<std::uint64_t>(first[k] * step, size); };
  std::vector<coded_part> coded(parts);
  parallel_for(parts, threads, [&](std::size_t k) {
    coded_part& c = coded[k];
    const std::uint64_t own = byte_of(k);
    const std::uint64_t begin =
        k == 0 ? 0 : (first[k] - std::min(lead_steps, first[k] - first[k - 1])) * step;
    const std::uint64_t end = byte_of(k + 1);
    c.lead = static_cast<std::size_t>((own - begin) / rsi_bytes);
    const std::size_t chunk = chunk_bytes(p, unit);
    const auto buf = std::make_unique_for_overwrite<std::byte[]>(chunk);
    // Part 0's payload becomes the result: capacity for the whole stream.
    chunked_encoder enc(p, static_cast<std::size_t>(end - begin), c.e,
                        k == 0 ? static_cast<std::size_t>(size) : 0);
    for (std::uint64_t off = begin; off < end;) {
      // Pieces end where the part's own RSIs begin.
      const std::uint64_t stop = off < own ? own : end;
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, stop - off));
      const std::span<std::byte> piece(buf.get(), n);
      fill(off, piece);
      enc.feed(piece, off + n == end);
      off += n;
    }
    c.bits = enc.bit_length();
    c.own = c.lead < c.e.block_offsets.size() ? c.e.block_offsets[c.lead] : c.bits;
  });
  for (std::size_t k = 0; k < parts; ++k) {
    const coded_part& c = coded[k];
    if (c.e.payload.size() != (c.bits + 7) / 8) return std::nullopt;
    if (k == 0) continue;
    if (!lead_in_agrees(coded[k - 1], c, p)) return std::nullopt;
  }
  std::vector<std::uint64_t> start(parts + 1, 0);
  for (std::size_t k = 0; k < parts; ++k) start[k + 1] = start[k] + coded[k].bits - coded[k].own;
  szip_encoded out = std::move(coded[0].e);
  out.payload.resize(static_cast<std::size_t>((start[parts] + 7) / 8));
  // Part k writes the bytes from the one holding its first bit up to the
  // one holding the next part's first bit (which that part writes, merging
  // the two): every byte has one writer.
  parallel_for(parts - 1, threads, [&](std::size_t i) {
    const std::size_t k = i + 1;
    const coded_part& c = coded[k];
    const auto g0 = static_cast<std::size_t>(start[k] / 8);
    const auto sh = static_cast<unsigned>(start[k] % 8);
    const std::size_t g1 = k + 1 == parts ? out.payload.size() : static_cast<std::size_t>(start[k + 1] / 8);
    if (g1 <= g0) return;
    // The shared first byte: the previous part's last bits, then ours.
    std::byte head = byte_at_bit(c.e.payload, c.own) >> sh;
    if (sh != 0) {
      head |= k == 1 ? out.payload[g0]
                     : byte_at_bit(coded[k - 1].e.payload, coded[k - 1].own + 8 * g0 - start[k - 1]);
    }
    out.payload[g0] = head;
    // Then our bits from the one that goes to byte g0 + 1 (zero past them).
    const std::uint64_t next = c.own + 8 - sh;
    const std::span<const std::byte> src =
        std::span<const std::byte>(c.e.payload).subspan(std::min<std::size_t>(next / 8, c.e.payload.size()));
    const std::span<std::byte> dst = std::span(out.payload).subspan(g0 + 1, g1 - g0 - 1);
    const std::size_t m = std::min(dst.size(), src.size());
    copy_from_bit(src, static_cast<unsigned>(next % 8), dst.first(m));
    std::fill(dst.begin() + static_cast<std::ptrdiff_t>(m), dst.end(), std::byte{0});
  });
  for (std::size_t k = 1; k < parts; ++k) {
    const std::vector<std::uint64_t>& own = coded[k].e.block_offsets;
    for (std::size_t j = coded[k].lead; j < own.size(); ++j)
      out.block_offsets.push_back(start[k] + own[j] - coded[k].own);
  }
  return out;
}

}  // namespace

szip_encoded szip_compress(std::span<const std::byte> in, const szip_params& p) {
  szip_validate(p);
  szip_encoded out;
  if (in.empty()) return out;
  check_sample_multiple(in.size(), p);
  chunked_encoder enc(p, in.size(), out);
  const std::size_t chunk = chunk_bytes(p, 1);
  for (std::size_t off = 0; off < in.size(); off += chunk) {
    const std::size_t n = std::min(chunk, in.size() - off);
    enc.feed(in.subspan(off, n), off + n == in.size());
  }
  return out;
}

szip_encoded szip_compress_chunked(std::uint64_t size, std::size_t unit, const szip_chunk_fill& fill,
                                   const szip_params& p, std::uint32_t threads) {
  szip_validate(p);
  szip_encoded out;
  if (size == 0) return out;
  check_sample_multiple(size, p);
  if (const std::size_t parts = parallel_parts(p, size, unit, threads); parts > 1) {
    // Any failure (a non-finite value, say) is reported by the serial code
    // below, so errors do not depend on the thread count.
    try {
      if (std::optional<szip_encoded> joined = compress_parts(size, unit, fill, p, parts, threads)) {
        return std::move(*joined);
      }
    } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): retried serially
    }
  }
  const std::size_t chunk = chunk_bytes(p, unit);
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

void szip_decompress_into(std::span<const std::byte> payload, const szip_params& p,
                          std::span<std::byte> out) {
  if (!check_decode_sizes(payload, p, out.size())) return;
  piecewise_decoder dec(payload, p, out.size());
  dec.next(out, 0);
}

std::vector<std::byte> szip_decompress(std::span<const std::byte> payload, const szip_params& p,
                                       std::size_t expected) {
  if (!check_decode_sizes(payload, p, expected)) return {};
  std::vector<std::byte> out = make_advised_bytes(expected);
  szip_decompress_into(payload, p, out);
  return out;
}

namespace {

// The bit offsets of the parts' first RSIs, found by one walk of the stream
// (never taken from the stored offsets, which the reference writes one block
// early in a data-dependent case, spec 03 §7.4) that the parts' tasks share:
// each walks on from where the last one stopped, under the lock.
class shared_walk {
 public:
  shared_walk(std::span<const std::byte> payload, const szip_params& p, std::vector<std::uint64_t> rsis)
      : p_(p), r_(payload, 0), rsis_(std::move(rsis)), bits_(rsis_.size()) {}
  // The start of the first RSI of part k.
  std::uint64_t start(std::size_t k) {
    const std::lock_guard lock(m_);
    while (found_ <= k) {
      while (walked_ < rsis_[found_]) {
        walk_rsi(r_, p_, p_.rsi);
        ++walked_;
      }
      bits_[found_++] = r_.position();
    }
    return bits_[k];
  }

 private:
  szip_params p_;
  std::mutex m_;
  bit_reader r_;
  std::vector<std::uint64_t> rsis_;  // part k's first RSI, increasing
  std::vector<std::uint64_t> bits_;
  std::uint64_t walked_ = 0;
  std::size_t found_ = 0;
};

// The walk to a part's start costs about this much per RSI, relative to
// decoding it with libaec (measured for sp24 bytes on x86-64, BMI2 walk;
// docs/benchmarks.md): later parts are made that much shorter.
constexpr double k_walk_share = 0.08;

// szip_decompress_chunked on `parts` threads: part k's RSIs decoded by a
// libaec decoder of its own from the part's first RSI (with its reference
// sample, as range decode does, §7.5), from a byte-aligned copy of its bits
// when that RSI starts inside a byte.
void decompress_parts(std::span<const std::byte> payload, const szip_params& p, std::size_t expected,
                      std::size_t unit, const szip_chunk_sink& sink, std::size_t parts,
                      std::uint32_t threads) {
  const std::size_t step = step_bytes(p, unit);
  const std::size_t rsi_bytes = static_cast<std::size_t>(p.rsi) * p.block_size * szip_sample_bytes(p);
  const std::vector<std::uint64_t> first = split_steps((expected + step - 1) / step, parts, k_walk_share);
  std::vector<std::uint64_t> rsis(parts);
  for (std::size_t k = 0; k < parts; ++k) rsis[k] = first[k] * (step / rsi_bytes);
  shared_walk walk(payload, p, std::move(rsis));
  parallel_for(parts, threads, [&](std::size_t k) {
    const auto begin = static_cast<std::size_t>(std::min<std::uint64_t>(first[k] * step, expected));
    const auto end = static_cast<std::size_t>(std::min<std::uint64_t>(first[k + 1] * step, expected));
    const std::uint64_t bit = k == 0 ? 0 : walk.start(k);
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
  });
}

}  // namespace

void szip_decompress_chunked(std::span<const std::byte> payload, const szip_params& p, std::size_t expected,
                             std::size_t unit, const szip_chunk_sink& sink, std::uint32_t threads) {
  if (!check_decode_sizes(payload, p, expected)) return;
  if (const std::size_t parts = parallel_parts(p, expected, unit, threads); parts > 1) {
    // A stream the parts cannot decode (a walk or libaec error) is decoded
    // serially below, which reports its error: decoded values and errors do
    // not depend on the thread count.
    try {
      decompress_parts(payload, p, expected, unit, sink, parts, threads);
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

std::vector<std::byte> szip_decompress_range(std::span<const std::byte> payload, const szip_params& p,
                                             std::span<const std::uint64_t> stored_offsets,
                                             std::uint64_t total_bytes, std::uint64_t byte_pos,
                                             std::uint64_t byte_size) {
  szip_validate(p);
  if (byte_size == 0) return {};
  const szip_common::range_start at =
      szip_common::locate_range(payload, p, stored_offsets, total_bytes, byte_pos, byte_size);
  const std::uint64_t start_bit = at.bit;
  const std::uint64_t skip = at.skip;
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

}  // namespace tensogram::codecs

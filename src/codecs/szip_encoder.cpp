// The CCSDS 121.0-B-3 encoder of szip_encoder.hpp (format, choices, limits
// and refusals are described there).
#include "szip_encoder.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "szip_walk.hpp"
#include "tensogram/core/memory.hpp"

namespace tensogram::codecs {

using szip_walk::fail;

namespace {

constexpr std::uint64_t k_none = std::numeric_limits<std::uint64_t>::max();

// MSB-first bit writer into a byte buffer that the caller sizes for the
// worst case: bits gather in a 64-bit word and leave 32 at a time, each
// store bounds-checked. A plain value (pointer, sizes, word), so that a
// local copy lives in registers while a block is coded.
class bit_writer {
 public:
  // The buffer (again, after it grew): the bytes written so far stay.
  void bind(std::span<std::byte> buf) noexcept {
    buf_ = buf.data();
    cap_ = buf.size();
  }

  // The low `n` bits of `v` (n <= 32; bits above them are zero).
  void put(std::uint32_t v, unsigned n) {
    acc_ = (acc_ << n) | v;
    fill_ += n;
    if (fill_ >= 32) {
      fill_ -= 32;
      store32(static_cast<std::uint32_t>(acc_ >> fill_));
    }
  }

  // The fundamental sequence of `m` (§3.2): m zeros, then a one.
  void fs(std::uint64_t m) {
    for (; m >= 32; m -= 32) put(0, 32);
    put(1, static_cast<unsigned>(m) + 1);
  }

  [[nodiscard]] std::uint64_t position() const noexcept { return 8 * pos_ + fill_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return pos_; }

  // Zero bits up to a byte boundary, and every whole byte out.
  void finish() {
    if (fill_ % 8 != 0) put(0, 8 - fill_ % 8);
    for (; fill_ != 0; fill_ -= 8) {
      if (pos_ >= cap_) fail("encoder output bound exceeded");
      buf_[pos_++] = static_cast<std::byte>((acc_ >> (fill_ - 8)) & 0xFF);
    }
  }

 private:
  void store32(std::uint32_t w) {
    if (cap_ - pos_ < 4) fail("encoder output bound exceeded");
    for (unsigned i = 0; i < 4; ++i) buf_[pos_ + i] = static_cast<std::byte>((w >> (24 - 8 * i)) & 0xFF);
    pos_ += 4;
  }

  std::byte* buf_ = nullptr;
  std::size_t cap_ = 0;
  std::size_t pos_ = 0;
  std::uint64_t acc_ = 0;
  unsigned fill_ = 0;
};

// Reads `count` W-byte sample containers into x, masked to `mask`.
// Returns the OR of the bits masked off.
template <std::size_t W, bool Msb>
std::uint32_t read_as(const std::byte* in, std::size_t count, std::uint32_t mask, std::uint32_t* x) noexcept {
  std::uint32_t wide = 0;
  for (std::size_t i = 0; i < count; ++i, in += W) {
    std::uint32_t v = 0;
    for (std::size_t b = 0; b < W; ++b) {
      const std::size_t shift = 8 * (Msb ? W - 1 - b : b);
      v |= static_cast<std::uint32_t>(in[b]) << shift;
    }
    x[i] = v & mask;
    wide |= v & ~mask;
  }
  return wide;
}

std::uint32_t read_samples(const std::byte* in, std::size_t count, std::size_t w, bool msb,
                           std::uint32_t mask, std::uint32_t* x) noexcept {
  switch (w) {
    case 1: return read_as<1, false>(in, count, mask, x);
    case 2: return msb ? read_as<2, true>(in, count, mask, x) : read_as<2, false>(in, count, mask, x);
    case 3: return msb ? read_as<3, true>(in, count, mask, x) : read_as<3, false>(in, count, mask, x);
    default: return msb ? read_as<4, true>(in, count, mask, x) : read_as<4, false>(in, count, mask, x);
  }
}

// Sum of the high parts v >> k (the split option's FS bits less the ones).
std::uint64_t fs_sum(const std::uint32_t* v, std::uint32_t count, unsigned k) noexcept {
  std::uint64_t s = 0;
  for (std::uint32_t i = 0; i < count; ++i) s += v[i] >> k;
  return s;
}

}  // namespace

struct szip_stream_encoder::state {
  state(const szip_params& p, std::uint64_t total, szip_encoded& out)
      : p(p), out(out), total(total), sample_bytes(szip_sample_bytes(p)) {
    szip_validate(p);
    szip_walk::check_stream_shape(p, total, sample_bytes);
    n = p.bits_per_sample;
    bs = p.block_size;
    id_len = szip_walk::id_length(p);
    kmax = (1 << id_len) - 3;
    pp = (p.flags & szip_flags::data_preprocess) != 0;
    sign_bit = (p.flags & szip_flags::data_signed) != 0 ? std::uint32_t{1} << (n - 1) : 0;
    mask = n == 32 ? 0xFFFFFFFFU : (std::uint32_t{1} << n) - 1;
    const std::size_t per_rsi = static_cast<std::size_t>(p.rsi) * bs;
    rsi_bytes = per_rsi * sample_bytes;
    raw.resize(static_cast<std::size_t>(std::min<std::uint64_t>(rsi_bytes, total)));
    x.resize(std::min<std::size_t>(per_rsi, static_cast<std::size_t>(total / sample_bytes) + bs));
    const std::uint64_t rsis = (total + rsi_bytes - 1) / rsi_bytes;
    out.payload.clear();
    out.block_offsets.clear();
    out.block_offsets.reserve(static_cast<std::size_t>(rsis));
    // Worst case of one block: a pending zero run's code word (id, bit,
    // reference sample, FS of at most 64 blocks) and the block uncompressed.
    block_bound = 2 * id_len + 1 + n + 66 + static_cast<std::uint64_t>(bs) * n;
    // Capacity for the worst case of the whole stream, so that the per-RSI
    // growth below never reallocates (nor copies) the payload.
    const std::uint64_t blocks = total / sample_bytes / bs + 2 * rsis;
    reserve_advised(out.payload, static_cast<std::size_t>(blocks * block_bound / 8 + 16 * rsis + 64));
  }

  szip_params p;
  szip_encoded& out;
  bit_writer writer;  // its state between RSIs
  std::uint64_t total;
  std::uint64_t fed = 0;
  std::size_t sample_bytes;
  std::size_t rsi_bytes = 0;
  std::size_t raw_fill = 0;
  unsigned n = 8;
  std::uint32_t bs = 16;
  unsigned id_len = 3;
  int kmax = 5;
  int k = 0;  // the split search's start, kept across blocks and RSIs
  bool pp = false;
  std::uint32_t sign_bit = 0;
  std::uint32_t mask = 0;
  std::uint32_t ref_sample = 0;
  std::uint64_t block_bound = 0;
  std::uint64_t end_bit = 0;     // the stream's bit length, once ended
  std::uint32_t wide = 0;        // bits masked off the samples
  std::vector<std::byte> raw;    // the RSI's input bytes gathered so far
  std::vector<std::uint32_t> x;  // its samples, then the values to code

  void code_rsi(std::size_t samples);
  void preprocess(std::size_t count);
  void zero_run(bit_writer& w, std::uint32_t z, bool with_ref, bool ros) const;
  void block(bit_writer& w, const std::uint32_t* v, unsigned ref);
  int best_k(const std::uint32_t* v, std::uint32_t count, std::uint64_t& len);
};

// §4.3: the unit-delay predictor's residuals mapped into [0, 2^n - 1]; the
// signed range is the unsigned one in offset binary (x ^ 2^(n-1)), where
// theta and the mapping come out the same.
void szip_stream_encoder::state::preprocess(std::size_t count) {
  ref_sample = x[0];
  std::uint32_t prev = x[0] ^ sign_bit;
  x[0] = 0;
  for (std::size_t i = 1; i < count; ++i) {
    const std::uint32_t cur = x[i] ^ sign_bit;
    std::uint32_t d = 0;
    if (cur >= prev) {
      const std::uint32_t delta = cur - prev;
      d = delta <= prev ? 2 * delta : cur;
    } else {
      const std::uint32_t delta = prev - cur;
      d = delta <= mask - prev ? 2 * delta - 1 : mask - cur;
    }
    x[i] = d;
    prev = cur;
  }
}

[[gnu::always_inline]] inline void szip_stream_encoder::state::zero_run(bit_writer& w, std::uint32_t z,
                                                                        bool with_ref, bool ros) const {
  w.put(0, id_len + 1);
  if (with_ref) w.put(ref_sample, n);
  w.fs(ros ? 4 : (z >= 5 ? z : z - 1));
}

// The split option's k, searched from the previous block's as libaec does:
// the length fs + count * (k + 1) has one minimum in k; a larger k cannot
// win once the FS part is below `count` bits, a smaller one once it is not.
int szip_stream_encoder::state::best_k(const std::uint32_t* v, std::uint32_t count, std::uint64_t& len) {
  const int k0 = k;
  int kk = k0;
  int found = k0;
  std::uint64_t best = k_none;
  bool no_turn = k0 == 0;
  bool up = true;
  for (;;) {
    const std::uint64_t fs = fs_sum(v, count, static_cast<unsigned>(kk));
    const std::uint64_t l = fs + static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(kk + 1);
    if (l < best) {
      if (best != k_none) no_turn = true;
      best = l;
      found = kk;
      if (up) {
        if (fs < count || kk >= kmax) {
          if (no_turn) break;
          kk = k0 - 1;
          up = false;
          no_turn = true;
        } else {
          ++kk;
        }
      } else {
        if (fs >= count || kk == 0) break;
        --kk;
      }
    } else {
      if (no_turn) break;
      kk = k0 - 1;
      up = false;
      no_turn = true;
    }
  }
  len = best;
  return found;
}

// One non-zero block (values v[0..bs), v[0] = 0 in the reference block).
[[gnu::always_inline]] inline void szip_stream_encoder::state::block(bit_writer& w, const std::uint32_t* v,
                                                                     unsigned ref) {
  const std::uint32_t count = bs - ref;
  const std::uint64_t uncomp = static_cast<std::uint64_t>(count) * n;
  std::uint64_t split = k_none;
  if (kmax >= 0) k = best_k(v + ref, count, split);
  // Second extension: 1 bit, then the FS of every pair's index; given up
  // once a pair alone outgrows the uncompressed length (no overflow).
  std::uint64_t se = 1;
  for (std::uint32_t i = 0; i < bs; i += 2) {
    const std::uint64_t s = std::uint64_t{v[i]} + v[i + 1];
    if (s > uncomp) {
      se = k_none;
      break;
    }
    se += s * (s + 1) / 2 + v[i + 1] + 1;
  }
  enum class option { split, se, uncomp };
  option o = option::uncomp;
  if (split < uncomp) {
    o = split < se ? option::split : option::se;
  } else {
    o = uncomp <= se ? option::uncomp : option::se;
  }
  switch (o) {
    case option::split: {
      w.put(static_cast<std::uint32_t>(k) + 1, id_len);
      if (ref != 0) w.put(ref_sample, n);
      const auto kb = static_cast<unsigned>(k);
      for (std::uint32_t i = ref; i < bs; ++i) w.fs(v[i] >> kb);
      if (kb != 0) {
        const std::uint32_t low = (std::uint32_t{1} << kb) - 1;
        for (std::uint32_t i = ref; i < bs; ++i) w.put(v[i] & low, kb);
      }
      break;
    }
    case option::se:
      w.put(1, id_len + 1);
      if (ref != 0) w.put(ref_sample, n);
      for (std::uint32_t i = 0; i < bs; i += 2) {
        const std::uint64_t s = std::uint64_t{v[i]} + v[i + 1];
        w.fs(s * (s + 1) / 2 + v[i + 1]);
      }
      break;
    case option::uncomp:
      w.put((1U << id_len) - 1, id_len);
      w.put(ref != 0 ? ref_sample : v[0], n);
      for (std::uint32_t i = 1; i < bs; ++i) w.put(v[i], n);
      break;
  }
}

// One RSI of `samples` samples (all of them, or the stream's last ones) from
// `raw`.
void szip_stream_encoder::state::code_rsi(std::size_t samples) {
  const std::uint32_t blocks = static_cast<std::uint32_t>((samples + bs - 1) / bs);
  const std::size_t count = static_cast<std::size_t>(blocks) * bs;
  // Room for the worst case of every block (and the final byte).
  const std::size_t need = writer.bytes() + static_cast<std::size_t>((blocks * block_bound + 64) / 8) + 8;
  if (out.payload.size() < need) out.payload.resize(need);
  // The RSI is coded through a local copy of the writer (kept in registers).
  bit_writer w = writer;
  w.bind(out.payload);
  out.block_offsets.push_back(w.position());
  wide |=
      read_samples(raw.data(), samples, sample_bytes, (p.flags & szip_flags::data_msb) != 0, mask, x.data());
  std::fill(x.begin() + static_cast<std::ptrdiff_t>(samples), x.begin() + static_cast<std::ptrdiff_t>(count),
            x[samples - 1]);
  if (pp) preprocess(count);
  std::uint32_t zeros = 0;
  bool zero_ref = false;
  for (std::uint32_t b = 0; b < blocks; ++b) {
    const unsigned ref = (pp && b == 0) ? 1U : 0U;
    const std::uint32_t* v = x.data() + static_cast<std::size_t>(b) * bs;
    const bool zero = std::all_of(v + ref, v + bs, [](std::uint32_t e) { return e == 0; });
    if (!zero) {
      if (zeros != 0) zero_run(w, zeros, zero_ref, false);
      zeros = 0;
      block(w, v, ref);
      continue;
    }
    if (zeros++ == 0) zero_ref = ref != 0;
    // Runs end at the RSI's last coded block and at the end of every
    // 64-block segment counted from the RSI's start (a partial RSI's too).
    const std::uint32_t left = blocks - 1 - b;
    if (left == 0 || (b + 1) % 64 == 0) {
      zero_run(w, zeros, zero_ref, zeros > 4);
      zeros = 0;
    }
  }
  writer = w;
}

szip_stream_encoder::szip_stream_encoder(const szip_params& p, std::uint64_t total, szip_encoded& out)
    : s_(std::make_unique<state>(p, total, out)) {}

szip_stream_encoder::~szip_stream_encoder() = default;

void szip_stream_encoder::feed(std::span<const std::byte> in) {
  state& s = *s_;
  if (in.size() > s.total - s.fed) fail("more input than announced");
  s.fed += in.size();
  while (!in.empty()) {
    const std::size_t take = std::min(in.size(), s.raw.size() - s.raw_fill);
    std::memcpy(s.raw.data() + s.raw_fill, in.data(), take);
    s.raw_fill += take;
    in = in.subspan(take);
    if (s.raw_fill == s.raw.size()) {
      s.code_rsi(s.raw_fill / s.sample_bytes);
      s.raw_fill = 0;
    }
  }
  if (s.fed != s.total) return;
  if (s.raw_fill != 0) s.code_rsi(s.raw_fill / s.sample_bytes);
  s.raw_fill = 0;
  s.writer.bind(s.out.payload);
  s.end_bit = s.writer.position();
  s.writer.finish();
  s.out.payload.resize(s.writer.bytes());
}

std::uint64_t szip_stream_encoder::bit_length() const noexcept {
  return s_->end_bit;
}

bool szip_stream_encoder::saw_wide_sample() const noexcept {
  return s_->wide != 0;
}

bool szip_encode_filled(std::uint64_t begin, std::uint64_t end, std::size_t chunk,
                        const szip_chunk_fill& fill, const szip_params& p, szip_encoded& out,
                        std::uint64_t& bits) {
  szip_stream_encoder enc(p, end - begin, out);
  std::vector<std::byte> buf(static_cast<std::size_t>(std::min<std::uint64_t>(chunk, end - begin)));
  for (std::uint64_t off = begin; off < end;) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, end - off));
    const std::span<std::byte> piece(buf.data(), n);
    fill(off, piece);
    enc.feed(piece);
    off += n;
  }
  bits = enc.bit_length();
  return !enc.saw_wide_sample();
}

szip_encoded szip_encode(std::span<const std::byte> in, const szip_params& p) {
  szip_encoded out;
  szip_stream_encoder enc(p, in.size(), out);
  if (!in.empty()) enc.feed(in);
  return out;
}

}  // namespace tensogram::codecs

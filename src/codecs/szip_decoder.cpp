// The CCSDS 121.0-B-3 decoder of szip_decoder.hpp (format, limits and
// refusals are described there).
#include "szip_decoder.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "szip_walk.hpp"

namespace tensogram::codecs {

using szip_walk::bit_reader;
using szip_walk::fail;

namespace {

// The largest second-extension code word: pair sums up to 12 (libaec refuses
// larger ones, so do we: every stream it decodes, we decode the same).
constexpr std::uint32_t k_max_se_word = 90;

}  // namespace

struct szip_stream_decoder::state {
  state(std::span<const std::byte> payload, const szip_params& p, std::uint64_t total, std::uint64_t start,
        bool parity)
      : p(p),
        r(payload, start),
        start_bit(start),
        stream_bits(8 * static_cast<std::uint64_t>(payload.size())),
        sample_bytes(szip_sample_bytes(p)),
        parity(parity) {
    szip_walk::check_stream_shape(p, total, sample_bytes);
    samples_left = total / sample_bytes;
    per_rsi = static_cast<std::uint64_t>(p.rsi) * p.block_size;
    id_len = szip_walk::id_length(p);
    pp = (p.flags & szip_flags::data_preprocess) != 0;
    is_signed = (p.flags & szip_flags::data_signed) != 0;
    msb = (p.flags & szip_flags::data_msb) != 0;
  }

  szip_params p;
  bit_reader r;
  std::uint64_t start_bit;
  std::uint64_t stream_bits;
  std::size_t sample_bytes;
  bool parity;
  std::uint64_t samples_left = 0;  // not yet decoded into `d`
  std::uint64_t per_rsi = 0;
  unsigned id_len = 3;
  bool pp = false;
  bool is_signed = false;
  bool msb = false;
  std::vector<std::uint32_t> d;    // one RSI's decoded values (before §4.3's inverse)
  std::vector<std::byte> pending;  // the part of the last RSI not yet handed out
  std::size_t pending_at = 0;
  // The last RSI decoded: its samples, and whether its last CDS goes on past
  // them (a partial block, or a zero-block run cut short).
  std::uint64_t last_samples = 0;
  bool last_cut = false;

  void decode_rsi(std::uint64_t samples);
  void refuse_unlike_libaec(const std::uint32_t* v, unsigned ref, std::uint64_t cds, unsigned k,
                            bool se) const;
  void finish() const;
  void postprocess(std::uint64_t samples, std::span<std::byte> dst) const;
  void store(std::uint64_t samples, std::span<std::byte> dst) const;
};

// One RSI (§5.1), the first `samples` of its values into `d` (whole blocks).
void szip_stream_decoder::state::decode_rsi(std::uint64_t samples) {
  const std::uint32_t bs = p.block_size;
  const auto blocks = static_cast<std::uint32_t>((samples + bs - 1) / bs);
  if (d.size() < static_cast<std::size_t>(blocks) * bs) d.resize(static_cast<std::size_t>(blocks) * bs);
  const std::uint32_t all_ones = (1U << id_len) - 1;
  const unsigned n = p.bits_per_sample;
  std::uint32_t b = 0;
  last_samples = samples;
  last_cut = samples % bs != 0;
  while (b < blocks) {
    const unsigned ref = (pp && b == 0) ? 1U : 0U;
    std::uint32_t* v = d.data() + static_cast<std::size_t>(b) * bs;
    const std::uint32_t id = r.bits(id_len);
    if (id == 0) {
      const bool second_extension = r.bits(1) == 1;
      if (ref != 0) v[0] = r.bits(n);
      if (second_extension) {
        // §5.1.5: pairs (a, b) from m = (a+b)(a+b+1)/2 + b; with a reference
        // sample the first pair's a is not coded (its b is the block's second
        // value).
        const std::uint64_t cds = r.position() - id_len - 1 - (ref != 0 ? n : 0);
        for (std::uint32_t i = ref; i < bs;) {
          const std::uint32_t m = r.fs();
          if (m > k_max_se_word) fail("second-extension code word " + std::to_string(m) + " out of range");
          std::uint32_t s = 0;
          while ((s + 1) * (s + 2) / 2 <= m) ++s;
          const std::uint32_t second = m - s * (s + 1) / 2;
          if ((i & 1U) == 0) v[i++] = s - second;
          v[i++] = second;
        }
        if (parity) refuse_unlike_libaec(v, ref, cds, 0, true);
        ++b;
        continue;
      }
      // §5.1.4: zero-block run; FS value 4 (count 5) is the ROS.
      std::uint32_t zero_blocks = r.fs();
      if (zero_blocks == 0xFFFFFFFFU) fail("zero-block run too long");
      ++zero_blocks;
      if (zero_blocks == 5) {
        zero_blocks = std::min(p.rsi - b, 64 - (b % 64));
      } else if (zero_blocks > 5) {
        --zero_blocks;
      }
      if (zero_blocks > p.rsi - b) fail("zero-block run past the end of its RSI");
      const std::uint32_t take = std::min(zero_blocks, blocks - b);
      std::fill(v + ref, v + static_cast<std::size_t>(take) * bs, 0U);
      b += take;
      if (take < zero_blocks) last_cut = true;
    } else if (id == all_ones) {
      r.fields_into<false>(v, bs, n);
      ++b;
    } else {
      // §5.1.3: split samples, the FS of every high part, then the k-bit
      // low parts.
      const unsigned k = id - 1;
      const std::uint64_t cds = r.position() - id_len;
      if (ref != 0) v[0] = r.bits(n);
      r.fs_into(v + ref, bs - ref);
      if (parity) refuse_unlike_libaec(v, ref, cds, k, false);
      if (k != 0) r.fields_into<true>(v + ref, bs - ref, k);
      ++b;
    }
  }
  if ((p.flags & szip_flags::pad_rsi) != 0) {
    const std::uint64_t used = r.position() - start_bit;
    if (used % 8 != 0 && samples == per_rsi) r.skip(8 - used % 8);
  }
}

// libaec parity: a split block (k = its option, v[ref..bs) the high parts
// just read) or a second-extension block (`se`, k = 0, its values), its CDS from
// bit `cds`. Refused when longer than the block uncompressed (with the split
// option's k-bit low parts, still to be read), or when a value would exceed
// n bits (a high part at or above 2^(n-k)).
void szip_stream_decoder::state::refuse_unlike_libaec(const std::uint32_t* v, unsigned ref, std::uint64_t cds,
                                                      unsigned k, bool se) const {
  const unsigned n = p.bits_per_sample;
  const std::uint32_t bs = p.block_size;
  const std::uint64_t length = r.position() - cds + static_cast<std::uint64_t>(k) * (bs - ref);
  // The second extension's extra bit is allowed on top of the id.
  const std::uint64_t bound = id_len + (se ? 1U : 0U) + static_cast<std::uint64_t>(bs) * n;
  std::uint32_t high = 0;
  for (std::uint32_t i = ref; i < bs; ++i) high |= v[i];
  if (length > bound || k >= n || (static_cast<std::uint64_t>(high) >> (n - k)) != 0) {
    fail("coded data set libaec's encoder does not write");
  }
}

// libaec parity: what libaec reads after the requested output, when that
// output ends at a CDS boundary (its decoder then starts the next CDS: the
// id, and for a block not holding a reference sample the low-entropy bit and
// fundamental sequence, which it checks before finding no room for output).
void szip_stream_decoder::state::finish() const {
  if (!parity || last_cut || samples_left != 0) return;
  const std::uint64_t per = per_rsi;
  const bool whole = last_samples == per;
  // A new RSI starts with a reference sample: nothing more is checked.
  if (whole && pp) return;
  const std::uint64_t used = whole ? 0 : last_samples;
  bit_reader peek = r;
  const auto have = [&](std::uint64_t bits) { return stream_bits - peek.position() >= bits; };
  if (!have(id_len) || peek.bits(id_len) != 0 || !have(1)) return;
  const bool second_extension = peek.bits(1) == 1;
  // An unfinished fundamental sequence: libaec waits for more input and
  // reports success. (Bit by bit: this runs once per decode, over the
  // stream's zero padding in the usual case.)
  if (stream_bits - peek.position() > (std::uint64_t{1} << 32)) fail("trailing run too long to check");
  std::uint64_t m = 0;
  for (;; ++m) {
    if (!have(1)) return;
    if (peek.bits(1) == 1) break;
  }
  if (second_extension) {
    if (m > k_max_se_word) fail("second-extension code word " + std::to_string(m) + " out of range");
    return;
  }
  // As decode_rsi's zero-block run (§5.1.4), without a reference sample.
  std::uint64_t zero_blocks = m + 1;
  const std::uint64_t b = used / p.block_size;
  if (zero_blocks == 5) {
    zero_blocks = std::min<std::uint64_t>(p.rsi - b, 64 - (b % 64));
  } else if (zero_blocks > 5) {
    --zero_blocks;
  }
  if (zero_blocks * p.block_size > per - used) fail("zero-block run past the end of its RSI");
}

namespace {

// Writes `x` (low bits) into `dst` as one W-byte sample container.
template <std::size_t W, bool Msb>
[[gnu::always_inline]] inline void put_sample(std::byte* dst, std::uint32_t x) noexcept {
  for (std::size_t i = 0; i < W; ++i) {
    const std::size_t shift = 8 * (Msb ? W - 1 - i : i);
    dst[i] = static_cast<std::byte>((x >> shift) & 0xFFU);
  }
}

// Without preprocessing: the values themselves.
template <std::size_t W, bool Msb>
void store_as(const std::uint32_t* d, std::uint64_t samples, std::byte* o) noexcept {
  for (std::uint64_t i = 0; i < samples; ++i, o += W) put_sample<W, Msb>(o, d[i]);
}

// §4.3's inverse mapping of the unit-delay predictor's residuals, from the
// RSI's reference sample (d[0]), in [xmin, xmax].
template <std::size_t W, bool Msb>
void unmap_as(const std::uint32_t* d, std::uint64_t samples, std::byte* o, std::int64_t x, std::int64_t xmin,
              std::int64_t xmax) noexcept {
  put_sample<W, Msb>(o, static_cast<std::uint32_t>(x));
  for (std::uint64_t i = 1; i < samples; ++i) {
    o += W;
    const std::int64_t delta = d[i];
    const std::int64_t below = x - xmin;
    const std::int64_t above = xmax - x;
    const std::int64_t theta = std::min(below, above);
    // Within ±theta: delta/2 for even delta, -(delta+1)/2 = ~(delta/2) for
    // odd; beyond it the residual only goes the other way. Selects, no
    // branches: the choice follows the data.
    const std::int64_t near = x + ((delta >> 1) ^ -(delta & 1));
    const std::int64_t far = below < above ? xmin + delta : xmax - delta;
    x = delta <= 2 * theta ? near : far;
    // Only a corrupt stream leaves the range; keep it bounded there.
    x = std::clamp(x, xmin, xmax);
    put_sample<W, Msb>(o, static_cast<std::uint32_t>(x));
  }
}

// Calls f.template operator()<W, Msb>() for the runtime width and order.
template <class F>
void dispatch(std::size_t w, bool msb, F&& f) {
  const auto by_order = [&]<std::size_t W>() {
    if (msb) {
      f.template operator()<W, true>();
    } else {
      f.template operator()<W, false>();
    }
  };
  switch (w) {
    case 1: f.template operator()<1, true>(); break;
    case 2: by_order.template operator()<2>(); break;
    case 3: by_order.template operator()<3>(); break;
    default: by_order.template operator()<4>(); break;
  }
}

}  // namespace

void szip_stream_decoder::state::store(std::uint64_t samples, std::span<std::byte> dst) const {
  dispatch(sample_bytes, msb,
           [&]<std::size_t W, bool Msb>() { store_as<W, Msb>(d.data(), samples, dst.data()); });
}

void szip_stream_decoder::state::postprocess(std::uint64_t samples, std::span<std::byte> dst) const {
  const unsigned n = p.bits_per_sample;
  const std::int64_t xmin = is_signed ? -(std::int64_t{1} << (n - 1)) : 0;
  const std::int64_t xmax = is_signed ? (std::int64_t{1} << (n - 1)) - 1 : (std::int64_t{1} << n) - 1;
  std::int64_t x = d[0];
  if (is_signed) {
    const std::int64_t m = std::int64_t{1} << (n - 1);
    x = (x ^ m) - m;  // the reference sample is sign-extended
  }
  dispatch(sample_bytes, msb, [&]<std::size_t W, bool Msb>() {
    unmap_as<W, Msb>(d.data(), samples, dst.data(), x, xmin, xmax);
  });
}

szip_stream_decoder::szip_stream_decoder(std::span<const std::byte> payload, const szip_params& p,
                                         std::uint64_t total, std::uint64_t start_bit, bool libaec_parity) {
  szip_validate(p);
  s_ = std::make_unique<state>(payload, p, total, start_bit, libaec_parity);
}

void szip_stream_decoder::finish() const {
  s_->finish();
}

szip_stream_decoder::~szip_stream_decoder() = default;

std::uint64_t szip_stream_decoder::position() const noexcept {
  return s_->r.position();
}

void szip_stream_decoder::next(std::span<std::byte> out) {
  state& s = *s_;
  std::size_t at = 0;
  while (at < out.size()) {
    if (s.pending_at < s.pending.size()) {
      const std::size_t n = std::min(out.size() - at, s.pending.size() - s.pending_at);
      std::memcpy(out.data() + at, s.pending.data() + s.pending_at, n);
      s.pending_at += n;
      at += n;
      continue;
    }
    if (s.samples_left == 0) fail("more bytes requested than the stream decodes to");
    const std::uint64_t samples = std::min(s.per_rsi, s.samples_left);
    s.decode_rsi(samples);
    s.samples_left -= samples;
    const auto bytes = static_cast<std::size_t>(samples * s.sample_bytes);
    // Straight into `out` when the whole RSI fits, else through `pending`.
    std::span<std::byte> dst;
    if (bytes <= out.size() - at) {
      dst = out.subspan(at, bytes);
      at += bytes;
    } else {
      s.pending.resize(bytes);
      s.pending_at = 0;
      dst = s.pending;
    }
    if (s.pp) {
      s.postprocess(samples, dst);
    } else {
      s.store(samples, dst);
    }
  }
}

std::uint64_t szip_decode_pieces(std::span<const std::byte> payload, const szip_params& p,
                                 std::uint64_t start_bit, std::size_t begin, std::size_t end,
                                 std::size_t chunk, const szip_chunk_sink& sink, bool last,
                                 bool libaec_parity) {
  chunk = std::min(chunk, end - begin);
  std::vector<std::byte> buf(chunk);
  szip_stream_decoder dec(payload, p, end - begin, start_bit, libaec_parity);
  for (std::size_t off = begin; off < end; off += chunk) {
    const std::span<std::byte> piece(buf.data(), std::min(chunk, end - off));
    dec.next(piece);
    sink(off, piece);
  }
  if (last) dec.finish();
  return dec.position();
}

std::vector<std::byte> szip_decode_range(std::span<const std::byte> payload, const szip_params& p,
                                         std::uint64_t start_bit, std::uint64_t skip, std::uint64_t size,
                                         bool libaec_parity) {
  // Decoded from the RSI's start; its head before the range is skipped.
  szip_stream_decoder dec(payload, p, skip + size, start_bit, libaec_parity);
  std::vector<std::byte> head(static_cast<std::size_t>(std::min<std::uint64_t>(skip, std::size_t{64} << 10)));
  for (std::uint64_t left = skip; left != 0;) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left, head.size()));
    dec.next(std::span(head).first(n));
    left -= n;
  }
  std::vector<std::byte> out(static_cast<std::size_t>(size));
  dec.next(out);
  dec.finish();
  return out;
}

void szip_decode_into(std::span<const std::byte> payload, const szip_params& p, std::span<std::byte> out,
                      bool libaec_parity) {
  szip_stream_decoder dec(payload, p, out.size(), 0, libaec_parity);
  dec.next(out);
  dec.finish();
}

}  // namespace tensogram::codecs

// The parallel split and join of szip_parallel.hpp.
#include "szip_parallel.hpp"

#include <algorithm>
#include <mutex>
#include <numeric>
#include <string>
#include <utility>

#include "tensogram/core/parallel.hpp"

namespace tensogram::codecs::szip_parallel {

using szip_walk::bit_reader;
using szip_walk::copy_from_bit;
using szip_walk::fail;
using szip_walk::walk_rsi_body;

std::size_t step_bytes(const szip_params& p, std::size_t unit) {
  const std::size_t rsi_bytes = static_cast<std::size_t>(p.rsi) * p.block_size * szip_sample_bytes(p);
  return std::lcm(rsi_bytes, std::max<std::size_t>(unit, 1));
}

std::size_t chunk_bytes(const szip_params& p, std::size_t unit) {
  constexpr std::size_t target = std::size_t{64} << 10;
  const std::size_t step = step_bytes(p, unit);
  return std::max<std::size_t>(1, target / step) * step;
}

void check_sample_multiple(std::uint64_t size, const szip_params& p) {
  const std::size_t s = szip_sample_bytes(p);
  if (size % s != 0) {
    fail("data length " + std::to_string(size) + " is not a multiple of sample byte width " +
         std::to_string(s));
  }
}

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

std::size_t parallel_parts(const szip_params& p, std::uint64_t size, std::size_t unit,
                           std::uint32_t threads) {
  if (threads <= 1 || (p.flags & szip_flags::pad_rsi) != 0) return 1;
  const std::uint64_t steps = (size + step_bytes(p, unit) - 1) / step_bytes(p, unit);
  return static_cast<std::size_t>(std::min<std::uint64_t>(threads, steps));
}

namespace {

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

}  // namespace

std::optional<szip_encoded> compress_parts(std::uint64_t size, std::size_t unit, const szip_params& p,
                                           std::size_t parts, std::uint32_t threads, const part_coder& code) {
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
    // Part 0's payload becomes the result: capacity for the whole stream.
    c.bits = code(begin, own, end,
                  k == 0 ? static_cast<std::size_t>(size) : static_cast<std::size_t>(end - begin), c.e);
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

namespace {

// The bit offsets of the decode parts' first RSIs, found by one walk of the
// stream (never taken from the stored offsets, which the reference writes
// one block early in a data-dependent case, spec 03 §7.4) that the parts'
// tasks share: each walks on from where the last one stopped, under the
// lock.
class shared_walk {
 public:
  shared_walk(std::span<const std::byte> payload, const szip_params& p, std::vector<std::uint64_t> rsis)
      : p_(p), r_(payload, 0), rsis_(std::move(rsis)), bits_(rsis_.size()) {}
  // The start of the first RSI of part k.
  std::uint64_t start(std::size_t k) {
    const std::lock_guard lock(m_);
    while (found_ <= k) {
      while (walked_ < rsis_[found_]) {
        szip_walk::walk_rsi(r_, p_, p_.rsi);
        ++walked_;
      }
      bits_[found_++] = r_.position();
    }
    return bits_[k];
  }

 private:
  szip_params p_;
  std::mutex m_;
  szip_walk::bit_reader r_;
  std::vector<std::uint64_t> rsis_;  // part k's first RSI, increasing
  std::vector<std::uint64_t> bits_;
  std::uint64_t walked_ = 0;
  std::size_t found_ = 0;
};

}  // namespace

void decode_parts(std::span<const std::byte> payload, const szip_params& p, std::size_t expected,
                  std::size_t unit, std::size_t parts, std::uint32_t threads, double walk_share,
                  const part_decoder& decode) {
  const std::size_t step = step_bytes(p, unit);
  const std::size_t rsi_bytes = static_cast<std::size_t>(p.rsi) * p.block_size * szip_sample_bytes(p);
  const std::vector<std::uint64_t> first = split_steps((expected + step - 1) / step, parts, walk_share);
  std::vector<std::uint64_t> rsis(parts);
  for (std::size_t k = 0; k < parts; ++k) rsis[k] = first[k] * (step / rsi_bytes);
  shared_walk walk(payload, p, std::move(rsis));
  const auto byte_of = [&](std::size_t k) {
    return static_cast<std::size_t>(std::min<std::uint64_t>(first[k] * step, expected));
  };
  parallel_for(parts, threads, [&](std::size_t k) {
    const bool last = k + 1 == parts;
    const std::optional<std::uint64_t> after =
        decode(k == 0 ? 0 : walk.start(k), byte_of(k), byte_of(k + 1), last);
    if (after && !last && *after != walk.start(k + 1)) fail("a part ends off the walk");
  });
}

}  // namespace tensogram::codecs::szip_parallel

#include "tensogram/codecs/simple_packing.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "tensogram/core/error.hpp"
#include "tensogram/core/parallel.hpp"

namespace tensogram {

double powi(double base, std::int32_t k) noexcept {
  // Spec 03 §4.2, the compiler-runtime algorithm: two's-complement bit test
  // and truncating division also for negative k.
  const bool recip = k < 0;
  double r = 1.0;
  for (;;) {
    if ((k & 1) != 0) r *= base;
    k /= 2;
    if (k == 0) break;
    base *= base;
  }
  return recip ? 1.0 / r : r;
}

namespace {

std::int32_t saturating_i32(double x) noexcept {
  if (std::isnan(x)) return 0;
  if (x >= 2147483647.0) return std::numeric_limits<std::int32_t>::max();
  if (x <= -2147483648.0) return std::numeric_limits<std::int32_t>::min();
  return static_cast<std::int32_t>(x);
}

std::uint64_t saturating_u64(double x) noexcept {
  if (!(x > 0.0)) return 0;  // negative, zero and NaN
  if (x >= 18446744073709551616.0) return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>(x);
}

double load_f64(const std::byte* p, bool swap) noexcept {
  std::uint64_t bits;
  std::memcpy(&bits, p, 8);
  if (swap) bits = __builtin_bswap64(bits);
  return std::bit_cast<double>(bits);
}

void store_f64(std::byte* p, double v, bool swap) noexcept {
  auto bits = std::bit_cast<std::uint64_t>(v);
  if (swap) bits = __builtin_bswap64(bits);
  std::memcpy(p, &bits, 8);
}

[[noreturn]] void non_finite(double v, std::uint64_t i) {
  if (std::isnan(v)) throw encoding_error("NaN value encountered at index " + std::to_string(i));
  throw encoding_error("infinite value encountered at index " + std::to_string(i));
}

void validate(const simple_packing_params& p) {
  if (p.bits_per_value > 64) {
    throw encoding_error("bits_per_value " + std::to_string(p.bits_per_value) + " exceeds maximum of 64");
  }
}

// MSB-first bit writer over a pre-sized output.
class bit_writer {
 public:
  explicit bit_writer(std::span<std::byte> out) noexcept : out_(out) {}
  void put(std::uint64_t v, unsigned bits) noexcept {
    // Fast paths for whole-byte widths (B = 8, 16, 24, 32, ... at byte
    // alignment): big-endian integers.
    if (fill_ == 0 && bits % 8 == 0) {
      for (unsigned k = bits; k > 0; k -= 8) out_[pos_++] = static_cast<std::byte>((v >> (k - 8)) & 0xFF);
      return;
    }
    while (bits > 0) {
      const unsigned room = 8 - fill_;
      const unsigned take = bits < room ? bits : room;
      const auto chunk = static_cast<unsigned>((v >> (bits - take)) & ((1U << take) - 1U));
      acc_ = static_cast<unsigned>(acc_ | (chunk << (room - take)));
      fill_ += take;
      bits -= take;
      if (fill_ == 8) {
        out_[pos_++] = static_cast<std::byte>(acc_);
        acc_ = 0;
        fill_ = 0;
      }
    }
  }
  void flush() noexcept {
    if (fill_ > 0) out_[pos_++] = static_cast<std::byte>(acc_);
    acc_ = 0;
    fill_ = 0;
  }

 private:
  std::span<std::byte> out_;
  std::size_t pos_ = 0;
  unsigned acc_ = 0;
  unsigned fill_ = 0;
};

// The B-bit field starting at stream bit `bit` (MSB-first).
std::uint64_t read_field(const std::byte* p, std::uint64_t bit, unsigned bits) noexcept {
  std::uint64_t v = 0;
  std::uint64_t byte = bit / 8;
  unsigned off = static_cast<unsigned>(bit % 8);
  while (bits > 0) {
    const unsigned avail = 8 - off;
    const unsigned take = bits < avail ? bits : avail;
    const unsigned b = static_cast<unsigned>(p[byte]);
    const unsigned chunk = (b >> (avail - take)) & ((1U << take) - 1U);
    v = (take == 64 ? 0 : (v << take)) | chunk;
    bits -= take;
    off += take;
    if (off == 8) {
      off = 0;
      ++byte;
    }
  }
  return v;
}

}  // namespace

simple_packing_params simple_packing_compute_params(std::span<const double> values, std::uint32_t bits,
                                                    std::int32_t decimal_scale_factor) {
  simple_packing_params p;
  p.bits_per_value = bits;
  p.decimal_scale_factor = decimal_scale_factor;
  validate(p);
  if (values.empty() || bits == 0) {
    // The first value, not the minimum (spec 03 §4.4).
    p.reference_value = values.empty() ? 0.0 : values[0];
    return p;
  }
  double mn = std::numeric_limits<double>::infinity();
  double mx = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double v = values[i];
    if (!std::isfinite(v)) non_finite(v, i);
    if (v < mn) mn = v;
    if (v > mx) mx = v;
  }
  const double range = (mx - mn) * powi(10.0, decimal_scale_factor);
  const double maxq =
      bits >= 64 ? 18446744073709551616.0 : static_cast<double>((std::uint64_t{1} << bits) - 1);
  p.reference_value = mn;
  p.binary_scale_factor =
      (range == 0.0 || maxq == 0.0) ? 0 : saturating_i32(std::ceil(std::log2(range / maxq)));
  return p;
}

namespace codecs {

std::uint64_t simple_packing_size(std::uint64_t n, std::uint32_t bits) noexcept {
  // ceil(n·B/8) without overflowing the intermediate product; saturates for
  // absurd n, which callers reject against the payload size.
  std::uint64_t whole = 0;
  if (__builtin_mul_overflow(n / 8, std::uint64_t{bits}, &whole)) return UINT64_MAX;
  return whole + ((n % 8) * bits + 7) / 8;
}

void simple_packing_encode(std::span<const std::byte> input, byte_order order, const simple_packing_params& p,
                           std::span<std::byte> out, std::uint32_t threads) {
  validate(p);
  if (!std::isfinite(p.reference_value)) throw encoding_error("invalid reference_value: must be finite");
  if (p.binary_scale_factor > 256 || p.binary_scale_factor < -256) {
    throw encoding_error("invalid binary_scale_factor: " + std::to_string(p.binary_scale_factor) +
                         " (|E| must be <= 256)");
  }
  const std::uint64_t n = input.size() / 8;
  const bool swap = order != native_byte_order();
  // Non-finite values are rejected before anything is written (§4.5).
  for (std::uint64_t i = 0; i < n; ++i) {
    const double v = load_f64(input.data() + i * 8, swap);
    if (!std::isfinite(v)) non_finite(v, i);
  }
  const unsigned bits = p.bits_per_value;
  if (bits == 0) return;
  if (out.size() != simple_packing_size(n, bits)) {
    throw encoding_error("simple_packing output buffer has the wrong size");
  }
  const double scale = powi(10.0, p.decimal_scale_factor) * powi(2.0, -p.binary_scale_factor);
  const std::uint64_t maxq =
      bits >= 64 ? std::numeric_limits<std::uint64_t>::max() : (std::uint64_t{1} << bits) - 1;
  const double r = p.reference_value;
  // Chunks of a multiple of 8 values start on byte boundaries, so they pack
  // independently into disjoint bytes: identical output for any thread count.
  const std::uint64_t chunk = 1U << 16;
  const auto chunks = static_cast<std::size_t>((n + chunk - 1) / chunk);
  parallel_for(chunks, threads, [&](std::size_t c) {
    const std::uint64_t first = c * chunk;
    const std::uint64_t last = std::min(n, first + chunk);
    const std::size_t byte0 = static_cast<std::size_t>(first / 8 * bits);
    bit_writer w(out.subspan(byte0));
    for (std::uint64_t i = first; i < last; ++i) {
      const double x = (load_f64(input.data() + i * 8, swap) - r) * scale;
      std::uint64_t q = saturating_u64(std::round(x));
      if (q > maxq) q = maxq;
      w.put(q, bits);
    }
    w.flush();
  });
}

void simple_packing_decode_bits(std::span<const std::byte> packed, std::uint64_t first_bit,
                                std::uint64_t count, const simple_packing_params& p, byte_order order,
                                std::span<std::byte> out) {
  validate(p);
  if (out.size() / 8 < count) throw encoding_error("simple_packing output buffer too small");
  const bool swap = order != native_byte_order();
  const unsigned bits = p.bits_per_value;
  if (bits == 0) {
    for (std::uint64_t i = 0; i < count; ++i) store_f64(out.data() + i * 8, p.reference_value, swap);
    return;
  }
  // Bits needed: first_bit + count·B, checked without overflow.
  std::uint64_t field_bits = 0;
  std::uint64_t end_bit = 0;
  if (__builtin_mul_overflow(count, std::uint64_t{bits}, &field_bits) ||
      __builtin_add_overflow(first_bit, field_bits, &end_bit) ||
      end_bit / 8 + (end_bit % 8 != 0) > packed.size()) {
    throw encoding_error("insufficient data: simple_packing needs " + std::to_string(count) + " values of " +
                         std::to_string(bits) + " bits from bit " + std::to_string(first_bit) +
                         ", payload has " + std::to_string(packed.size()) + " byte(s)");
  }
  const double inv = powi(2.0, p.binary_scale_factor) * powi(10.0, -p.decimal_scale_factor);
  const double r = p.reference_value;
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t q = read_field(packed.data(), first_bit + i * bits, bits);
    store_f64(out.data() + i * 8, r + inv * static_cast<double>(q), swap);
  }
}

void simple_packing_decode_range(std::span<const std::byte> packed, std::uint64_t first, std::uint64_t count,
                                 const simple_packing_params& p, byte_order order, std::span<std::byte> out) {
  std::uint64_t first_bit = 0;
  if (__builtin_mul_overflow(first, std::uint64_t{p.bits_per_value}, &first_bit)) {
    throw encoding_error("simple_packing range start overflows");
  }
  simple_packing_decode_bits(packed, first_bit, count, p, order, out);
}

void simple_packing_decode(std::span<const std::byte> packed, std::uint64_t n, const simple_packing_params& p,
                           byte_order order, std::span<std::byte> out, std::uint32_t threads) {
  validate(p);
  if (simple_packing_size(n, p.bits_per_value) > packed.size()) {
    throw encoding_error("insufficient data: simple_packing needs " +
                         std::to_string(simple_packing_size(n, p.bits_per_value)) + " byte(s), payload has " +
                         std::to_string(packed.size()));
  }
  if (out.size() / 8 < n) throw encoding_error("simple_packing output buffer too small");
  const std::uint64_t chunk = 1U << 16;
  const auto chunks = static_cast<std::size_t>((n + chunk - 1) / chunk);
  parallel_for(chunks, threads, [&](std::size_t c) {
    const std::uint64_t first = c * chunk;
    const std::uint64_t count = std::min(n, first + chunk) - first;
    simple_packing_decode_range(
        packed, first, count, p, order,
        out.subspan(static_cast<std::size_t>(first * 8), static_cast<std::size_t>(count * 8)));
  });
}

}  // namespace codecs
}  // namespace tensogram

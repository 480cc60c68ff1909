// simple_packing kernels (spec 03 §4) against a straightforward reference
// written here: the per-bit packing and per-bit unpacking of §4.5/§4.6 with
// C round(). Every bit width 0..64, both byte orders, chunk-spanning sizes,
// every Highway target the CPU runs, thread counts 0/1/2, range decodes at odd
// bit offsets, NaN/±Inf at various indices, and compute_params' byte overload.
#include <gtest/gtest.h>

#include <hwy/targets.h>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "tensogram/codecs/simple_packing.hpp"
#include "tensogram/core/error.hpp"

namespace {

namespace tg = tensogram;
using bytes = std::vector<std::byte>;

// ---- reference ---------------------------------------------------------------

std::uint64_t ref_sat_u64(double x) {
  if (!(x > 0.0)) return 0;
  if (x >= 18446744073709551616.0) return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>(x);
}

std::int32_t ref_sat_i32(double x) {
  if (std::isnan(x)) return 0;
  if (x >= 2147483647.0) return std::numeric_limits<std::int32_t>::max();
  if (x <= -2147483648.0) return std::numeric_limits<std::int32_t>::min();
  return static_cast<std::int32_t>(x);
}

std::string ref_non_finite(double v, std::size_t i) {
  return (std::isnan(v) ? "NaN value encountered at index " : "infinite value encountered at index ") +
         std::to_string(i);
}

// Either params or the error message.
struct ref_params {
  tg::simple_packing_params p;
  std::string error;
};

ref_params ref_compute_params(const std::vector<double>& v, std::uint32_t bits, std::int32_t d) {
  ref_params r;
  r.p.bits_per_value = bits;
  r.p.decimal_scale_factor = d;
  if (v.empty() || bits == 0) {
    r.p.reference_value = v.empty() ? 0.0 : v[0];
    return r;
  }
  double mn = std::numeric_limits<double>::infinity();
  double mx = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i])) {
      r.error = ref_non_finite(v[i], i);
      return r;
    }
    if (v[i] < mn) mn = v[i];
    if (v[i] > mx) mx = v[i];
  }
  const double range = (mx - mn) * tg::powi(10.0, d);
  const double maxq =
      bits >= 64 ? 18446744073709551616.0 : static_cast<double>((std::uint64_t{1} << bits) - 1);
  r.p.reference_value = mn;
  r.p.binary_scale_factor =
      (range == 0.0 || maxq == 0.0) ? 0 : ref_sat_i32(std::ceil(std::log2(range / maxq)));
  return r;
}

void put_bit(bytes& out, std::uint64_t pos, unsigned bit) {
  if (bit != 0) out[pos / 8] |= static_cast<std::byte>(0x80U >> (pos % 8));
}

unsigned get_bit(const bytes& in, std::uint64_t pos) {
  return (static_cast<unsigned>(in[pos / 8]) >> (7 - pos % 8)) & 1U;
}

// Packed bytes, or the error message (§4.5).
std::pair<bytes, std::string> ref_encode(const std::vector<double>& v, const tg::simple_packing_params& p) {
  if (!std::isfinite(p.reference_value)) return {{}, "invalid reference_value: must be finite"};
  if (p.binary_scale_factor > 256 || p.binary_scale_factor < -256) {
    return {
        {},
        "invalid binary_scale_factor: " + std::to_string(p.binary_scale_factor) + " (|E| must be <= 256)"};
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i])) return {{}, ref_non_finite(v[i], i)};
  }
  const unsigned bits = p.bits_per_value;
  bytes out(tg::codecs::simple_packing_size(v.size(), bits));
  if (bits == 0) return {out, ""};
  const double scale = tg::powi(10.0, p.decimal_scale_factor) * tg::powi(2.0, -p.binary_scale_factor);
  const std::uint64_t maxq =
      bits >= 64 ? std::numeric_limits<std::uint64_t>::max() : (std::uint64_t{1} << bits) - 1;
  std::uint64_t pos = 0;
  for (const double x : v) {
    std::uint64_t q = ref_sat_u64(std::round((x - p.reference_value) * scale));
    if (q > maxq) q = maxq;
    for (unsigned k = bits; k > 0; --k) put_bit(out, pos++, static_cast<unsigned>((q >> (k - 1)) & 1U));
  }
  return {out, ""};
}

// Values decoded from `count` fields at stream bit `first_bit` (§4.6).
std::vector<double> ref_decode_bits(const bytes& packed, std::uint64_t first_bit, std::uint64_t count,
                                    const tg::simple_packing_params& p) {
  std::vector<double> out(count, p.reference_value);
  if (p.bits_per_value == 0) return out;
  const double inv = tg::powi(2.0, p.binary_scale_factor) * tg::powi(10.0, -p.decimal_scale_factor);
  for (std::uint64_t i = 0; i < count; ++i) {
    std::uint64_t q = 0;
    for (unsigned k = 0; k < p.bits_per_value; ++k)
      q = (q << 1) | get_bit(packed, first_bit + i * p.bits_per_value + k);
    // Kept as two roundings, as the reference computes it (no FMA).
    const volatile double prod = inv * static_cast<double>(q);
    out[i] = p.reference_value + prod;
  }
  return out;
}

// ---- helpers -------------------------------------------------------------------

bytes to_bytes(const std::vector<double>& v, tg::byte_order order) {
  bytes out(v.size() * 8);
  for (std::size_t i = 0; i < v.size(); ++i) {
    auto u = std::bit_cast<std::uint64_t>(v[i]);
    if (order != tg::native_byte_order()) u = __builtin_bswap64(u);
    std::memcpy(out.data() + 8 * i, &u, 8);
  }
  return out;
}

std::vector<std::uint64_t> bits_of(const bytes& b, tg::byte_order order) {
  std::vector<std::uint64_t> out(b.size() / 8);
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::memcpy(&out[i], b.data() + 8 * i, 8);
    if (order != tg::native_byte_order()) out[i] = __builtin_bswap64(out[i]);
  }
  return out;
}

std::vector<std::uint64_t> bits_of(const std::vector<double>& v) {
  std::vector<std::uint64_t> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = std::bit_cast<std::uint64_t>(v[i]);
  return out;
}

std::optional<std::string> error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const tg::encoding_error& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

// The message as thrown (what() may carry a category prefix): compared by
// the reference text being its suffix.
void expect_error_text(const std::optional<std::string>& got, const std::string& want) {
  ASSERT_TRUE(got.has_value()) << "expected error: " << want;
  ASSERT_GE(got->size(), want.size()) << *got;
  EXPECT_EQ(got->substr(got->size() - want.size()), want) << *got;
}

const std::vector<std::uint64_t> kSizes = {0, 1, 7, 8, 9, 63, 64, 65, 1000, 70001};
const tg::byte_order kOrders[] = {tg::byte_order::little, tg::byte_order::big};

// Values of several kinds for case `seed`: smooth fields, uniform noise,
// exact quantisation ties, min/max repeated, huge ranges, signed zeros.
std::vector<double> make_values(std::uint64_t n, unsigned seed) {
  std::mt19937_64 rng(seed * 7919U + n);
  std::vector<double> v(n);
  const unsigned kind = seed % 6;
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (std::uint64_t i = 0; i < n; ++i) {
    switch (kind) {
      case 0: v[i] = 280.0 + 30.0 * std::sin(static_cast<double>(i) * 0.001) + u(rng); break;
      case 1: v[i] = u(rng) * 1e6; break;
      case 2:  // halves: exact ties with R = 0, scale 1
        v[i] = static_cast<double>(rng() % 512) * 0.5;
        break;
      case 3:  // only the extremes and a few values between
        v[i] = (rng() % 3 == 0) ? -17.25 : (rng() % 2 == 0 ? 1e3 : u(rng) * 500.0);
        break;
      case 4:  // huge range
        v[i] = u(rng) * 1e300;
        break;
      default:  // tiny values and signed zeros
        v[i] = (rng() % 4 == 0) ? ((rng() % 2) != 0U ? 0.0 : -0.0) : u(rng) * 1e-300;
        break;
    }
  }
  return v;
}

// Parameter sets for one data set: auto (D = 0, 2, -2) and explicit ones
// that exercise ties (R = 0, E = 0), clamping, negative x and saturation.
std::vector<tg::simple_packing_params> make_params(const std::vector<double>& v, std::uint32_t bits) {
  std::vector<tg::simple_packing_params> out;
  for (std::int32_t d : {0, 2, -2}) {
    const ref_params r = ref_compute_params(v, bits, d);
    if (r.error.empty()) out.push_back(r.p);
  }
  out.push_back({0.0, 0, 0, bits});        // ties round away from zero; negatives to 0
  out.push_back({100.0, -3, 1, bits});     // values below R, large q, clamped
  out.push_back({-1e300, -256, 0, bits});  // +Inf x: saturates to maxq
  out.push_back({5.0, 256, -3, bits});     // q mostly 0
  return out;
}

// Encodes with the library at threads 0, 1, 2 (all identical) and compares
// with the reference, bytes or error; then decodes (full and range) in both
// byte orders against the reference decode.
void check_case(const std::vector<double>& v, tg::byte_order order, const tg::simple_packing_params& p,
                bool thread_sweep) {
  const bytes in = to_bytes(v, order);
  const auto [want, want_error] = ref_encode(v, p);
  const std::uint64_t n = v.size();
  bytes got;
  for (std::uint32_t threads : {0U, 1U, 2U}) {
    if (!thread_sweep && threads != 0) break;
    bytes out(tg::codecs::simple_packing_size(n, p.bits_per_value), std::byte{0xA5});
    const auto err = error_of([&] { tg::codecs::simple_packing_encode(in, order, p, out, threads); });
    if (!want_error.empty()) {
      expect_error_text(err, want_error);
      continue;
    }
    ASSERT_FALSE(err.has_value()) << *err;
    ASSERT_EQ(out, want) << "threads " << threads;
    got = std::move(out);
  }
  if (!want_error.empty()) return;
  const std::vector<double> ref = ref_decode_bits(want, 0, n, p);
  for (const tg::byte_order out_order : kOrders) {
    bytes dec(n * 8);
    tg::codecs::simple_packing_decode(got, n, p, out_order, dec, thread_sweep ? 2 : 0);
    ASSERT_EQ(bits_of(dec, out_order), bits_of(ref)) << "decode, order " << static_cast<int>(out_order);
  }
  // A range in the middle.
  if (n >= 3) {
    const std::uint64_t first = n / 3;
    const std::uint64_t count = n - first - 1;
    bytes dec(count * 8);
    tg::codecs::simple_packing_decode_range(got, first, count, p, order, dec);
    const std::vector<double> part(ref.begin() + static_cast<std::ptrdiff_t>(first),
                                   ref.begin() + static_cast<std::ptrdiff_t>(first + count));
    ASSERT_EQ(bits_of(dec, order), bits_of(part)) << "range " << first;
  }
}

// The packed stream shifted right by `shift` bits behind random prefix bits
// (and followed by random padding): decode_bits at odd offsets.
void check_odd_offsets(const std::vector<double>& v, const tg::simple_packing_params& p) {
  const auto [packed, err] = ref_encode(v, p);
  ASSERT_TRUE(err.empty()) << err;
  const std::uint64_t n = v.size();
  const std::uint64_t nbits = n * p.bits_per_value;
  std::mt19937_64 rng(n + p.bits_per_value);
  for (unsigned shift : {1U, 7U, 13U, 70U}) {
    for (unsigned pad : {0U, 80U}) {
      bytes s((shift + nbits + pad + 7) / 8);
      for (auto& b : s) b = static_cast<std::byte>(rng());
      for (std::uint64_t k = 0; k < nbits; ++k) {
        const std::uint64_t pos = shift + k;
        s[pos / 8] &= static_cast<std::byte>(~(0x80U >> (pos % 8)));
        put_bit(s, pos, get_bit(packed, k));
      }
      // Trim to exactly the bytes needed when there is no padding.
      if (pad == 0) s.resize((shift + nbits + 7) / 8);
      for (const tg::byte_order order : kOrders) {
        for (const std::uint64_t first : {std::uint64_t{0}, n / 2}) {
          const std::uint64_t count = n - first;
          bytes dec(count * 8);
          tg::codecs::simple_packing_decode_bits(s, shift + first * p.bits_per_value, count, p, order, dec);
          const std::vector<double> want = ref_decode_bits(s, shift + first * p.bits_per_value, count, p);
          ASSERT_EQ(bits_of(dec, order), bits_of(want))
              << "shift " << shift << " pad " << pad << " first " << first;
        }
      }
    }
  }
}

// Runs `body` once per Highway target this CPU supports (the scalar one
// included), restoring normal dispatch afterwards.
void for_each_target(const std::function<void(const char*)>& body) {
  for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(hwy::TargetName(target));
    body(hwy::TargetName(target));
    if (::testing::Test::HasFatalFailure()) break;
  }
  hwy::SetSupportedTargetsForTest(0);
}

// ---- tests -------------------------------------------------------------------

TEST(SimplePackingKernels, EveryWidthSizeOrderAgainstReference) {
  // Full matrix on the best target; threads 0/1/2 compared.
  for (std::uint32_t bits = 0; bits <= 64; ++bits) {
    for (const std::uint64_t n : kSizes) {
      for (const tg::byte_order order : kOrders) {
        const unsigned seed =
            bits * 31U + static_cast<unsigned>(n) + (order == tg::byte_order::big ? 1U : 0U);
        const std::vector<double> v = make_values(n, seed);
        std::vector<tg::simple_packing_params> ps = make_params(v, bits);
        // The chunk-spanning size (per-bit reference is slow): one byte order
        // and one parameter set per width, alternating.
        if (n > 65536) {
          if ((bits % 2 == 0) != (order == tg::byte_order::big)) continue;
          ps = {bits % 4 < 2 ? ps.front() : ps[ps.size() - 3]};
        }
        for (const auto& p : ps) {
          SCOPED_TRACE("bits " + std::to_string(bits) + " n " + std::to_string(n) + " R " +
                       std::to_string(p.reference_value) + " E " + std::to_string(p.binary_scale_factor) +
                       " D " + std::to_string(p.decimal_scale_factor));
          check_case(v, order, p, n == 70001 || n == 1000);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST(SimplePackingKernels, EveryTargetAgainstReference) {
  for_each_target([](const char*) {
    for (std::uint32_t bits = 0; bits <= 64; ++bits) {
      for (const std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{9}, std::uint64_t{65},
                                    std::uint64_t{1000}, std::uint64_t{1029}}) {
        for (const tg::byte_order order : kOrders) {
          const std::vector<double> v = make_values(n, bits + static_cast<unsigned>(n));
          std::vector<tg::simple_packing_params> ps = make_params(v, bits);
          ps.erase(ps.begin() + 1, ps.end() - 3);  // one auto set and three explicit ones
          for (const auto& p : ps) {
            SCOPED_TRACE("bits " + std::to_string(bits) + " n " + std::to_string(n));
            check_case(v, order, p, false);
            if (::testing::Test::HasFatalFailure()) return;
          }
        }
      }
    }
  });
}

TEST(SimplePackingKernels, DecodeBitsAtOddOffsets) {
  for_each_target([](const char*) {
    for (std::uint32_t bits = 1; bits <= 64; ++bits) {
      for (const std::uint64_t n :
           {std::uint64_t{1}, std::uint64_t{7}, std::uint64_t{64}, std::uint64_t{1100}}) {
        const std::vector<double> v = make_values(n, bits * 6 + bits % 4);  // kinds 0..3: E in range
        const ref_params r = ref_compute_params(v, bits, 0);
        ASSERT_TRUE(r.error.empty());
        SCOPED_TRACE("bits " + std::to_string(bits) + " n " + std::to_string(n));
        check_odd_offsets(v, r.p);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  });
}

TEST(SimplePackingKernels, RoundingTiesSpecVector) {
  // §4.5: B = 2, R = 0, E = 0: halves round away from zero.
  const std::vector<double> v = {0, 0.5, 1, 1.5, 2.5, 3};
  bytes out(2);
  tg::codecs::simple_packing_encode(to_bytes(v, tg::native_byte_order()), tg::native_byte_order(),
                                    {0.0, 0, 0, 2}, out);
  EXPECT_EQ(out, (bytes{std::byte{0x16}, std::byte{0xF0}}));
  // Doubles next to the ties, where floor(x + 0.5) would be wrong.
  const std::vector<double> near = {
      0.49999999999999994,     std::nextafter(0.5, 1.0), 4503599627370495.5, 4503599627370497.0, 2.5,
      std::nextafter(2.5, 0.0)};
  for (std::uint32_t bits : {53U, 52U, 40U}) {
    check_case(near, tg::native_byte_order(), {0.0, 0, 0, bits}, true);
  }
}

TEST(SimplePackingKernels, NonFiniteNamesFirstIndex) {
  const std::uint64_t n = 70001 * 2;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> base = make_values(n, 3);
  const std::vector<std::uint64_t> all_at = {0, 5, 1023, 65535, 65536, 70000, n - 1};
  const std::vector<std::uint64_t> some_at = {5, 65536};
  bool first_target = true;
  for_each_target([&](const char*) {
    // Every index on the best target, two on the others (time under ASan).
    for (const std::uint64_t at : first_target ? all_at : some_at) {
      for (const double bad : {nan, inf, -inf}) {
        std::vector<double> v = base;
        v[at] = bad;
        if (at + 70001 < n) v[at + 70001] = std::isnan(bad) ? inf : nan;  // a later offender, other kind
        const std::string want = ref_non_finite(bad, at);
        for (const tg::byte_order order : kOrders) {
          const bytes in = to_bytes(v, order);
          expect_error_text(error_of([&] { (void)tg::simple_packing_compute_params(in, order, 16, 0); }),
                            want);
          for (std::uint32_t bits : {0U, 16U, 13U, 60U}) {
            for (std::uint32_t threads : {0U, 1U, 2U}) {
              bytes out(tg::codecs::simple_packing_size(n, bits));
              expect_error_text(
                  error_of([&] {
                    tg::codecs::simple_packing_encode(in, order, {250.0, -10, 0, bits}, out, threads);
                  }),
                  want);
            }
            // A wrong-sized output still reports the value first.
            bytes small(1);
            expect_error_text(error_of([&] {
                                tg::codecs::simple_packing_encode(in, order, {250.0, -10, 0, bits}, small);
                              }),
                              want);
          }
        }
        expect_error_text(error_of([&] { (void)tg::simple_packing_compute_params(v, 16, 0); }), want);
        if (::testing::Test::HasFailure()) return;
      }
    }
    first_target = false;
  });
}

TEST(SimplePackingKernels, ThreadedParameterScanMatchesSequential) {
  // Several 2^18-value scan chunks plus a ragged end; extremes, a -0.0/+0.0
  // tie and non-finite values placed in later chunks.
  const std::uint64_t n = (std::uint64_t{1} << 18) * 3 + 12345;
  std::vector<double> v = make_values(n, 11);
  for (double& x : v) x = std::fabs(x) + 1.0;  // all positive: a zero becomes the minimum
  v[700000] = -0.0;
  v[500000] = 0.0;  // the first zero met wins the tie (§4.4)
  v[n - 1] = 1e9;   // maximum in the ragged end
  for_each_target([&](const char*) {
    for (const tg::byte_order order : kOrders) {
      // At an odd byte offset: the scan cannot rely on aligned values.
      bytes store(1 + n * 8);
      const bytes raw = to_bytes(v, order);
      std::memcpy(store.data() + 1, raw.data(), raw.size());
      const std::span<const std::byte> odd(store.data() + 1, raw.size());
      const ref_params want = ref_compute_params(v, 24, 0);
      for (std::uint32_t threads : {0U, 1U, 2U, 3U}) {
        for (const std::span<const std::byte> in : {std::span<const std::byte>(raw), odd}) {
          const tg::simple_packing_params got = tg::simple_packing_compute_params(in, order, 24, 0, threads);
          EXPECT_EQ(std::bit_cast<std::uint64_t>(got.reference_value),
                    std::bit_cast<std::uint64_t>(want.p.reference_value))
              << "threads " << threads;
          EXPECT_EQ(got.binary_scale_factor, want.p.binary_scale_factor);
        }
      }
      // Non-finite values in the second and third chunks: the first one is
      // named for every thread count.
      std::vector<double> bad = v;
      bad[(std::uint64_t{1} << 18) * 2 + 5] = std::numeric_limits<double>::quiet_NaN();
      bad[(std::uint64_t{1} << 18) + 77] = -std::numeric_limits<double>::infinity();
      const bytes bad_raw = to_bytes(bad, order);
      for (std::uint32_t threads : {0U, 2U, 3U}) {
        expect_error_text(
            error_of([&] { (void)tg::simple_packing_compute_params(bad_raw, order, 24, 0, threads); }),
            ref_non_finite(bad[(std::uint64_t{1} << 18) + 77], (std::uint64_t{1} << 18) + 77));
      }
    }
  });
}

TEST(SimplePackingKernels, ComputeParamsByteOverloadMatchesReference) {
  std::vector<std::vector<double>> sets = {
      {},
      {3.0},
      {0.0, -0.0, 1.0},
      {-0.0, 0.0, 1.0},
      {1.0, -0.0, 0.0},
      {1.0, 0.0, -0.0},
      {-1.0, 0.0, -0.0},
      {-1.0, -0.0, 0.0},
      {-0.0, 0.0},
      {0.0, -0.0},
      {5.5, 5.5, 5.5},
      {250.0, 251.3, 252.7},
      {-1.7e308, 1.7e308},
      {std::numeric_limits<double>::denorm_min(), -std::numeric_limits<double>::denorm_min()},
  };
  for (std::uint64_t n : kSizes) sets.push_back(make_values(n, static_cast<unsigned>(n)));
  for (unsigned seed = 0; seed < 6; ++seed) sets.push_back(make_values(1031, seed));
  for_each_target([&](const char*) {
    for (const auto& v : sets) {
      for (std::uint32_t bits : {0U, 1U, 16U, 24U, 53U, 64U}) {
        for (std::int32_t d : {0, 3, -2}) {
          const ref_params want = ref_compute_params(v, bits, d);
          ASSERT_TRUE(want.error.empty());
          const auto check = [&](const tg::simple_packing_params& got) {
            EXPECT_EQ(std::bit_cast<std::uint64_t>(got.reference_value),
                      std::bit_cast<std::uint64_t>(want.p.reference_value))
                << "n " << v.size() << " bits " << bits;
            EXPECT_EQ(got.binary_scale_factor, want.p.binary_scale_factor);
            EXPECT_EQ(got.decimal_scale_factor, d);
            EXPECT_EQ(got.bits_per_value, bits);
          };
          check(tg::simple_packing_compute_params(v, bits, d));
          for (const tg::byte_order order : kOrders)
            check(tg::simple_packing_compute_params(to_bytes(v, order), order, bits, d));
        }
      }
      // Trailing bytes short of a value are ignored, as by the encoder.
      bytes raw = to_bytes(v, tg::native_byte_order());
      raw.push_back(std::byte{0x7F});
      const ref_params want = ref_compute_params(v, 16, 0);
      EXPECT_EQ(tg::simple_packing_compute_params(raw, tg::native_byte_order(), 16, 0).binary_scale_factor,
                want.p.binary_scale_factor);
    }
  });
  expect_error_text(
      error_of([] { (void)tg::simple_packing_compute_params(bytes(16), tg::byte_order::big, 65, 0); }),
      "bits_per_value 65 exceeds maximum of 64");
}

}  // namespace

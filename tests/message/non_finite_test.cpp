// The NaN/Inf screens and scans (spec 02 §9) on every compiled SIMD target:
// find_non_finite and copy_and_screen_non_finite against a naive
// classification written here, for every float and complex dtype, both byte
// orders, unaligned buffers and lengths around every vector width, with the
// non-finite value in each position class (vector body, ragged end, first
// and last element).
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <vector>

#include "tensogram/message/non_finite.hpp"

namespace {

namespace tg = tensogram;

struct layout {
  tg::dtype type;
  std::size_t part;   // bytes per real component
  unsigned mantissa;  // mantissa bits
  bool complex;
};

constexpr std::array<layout, 6> k_layouts = {{{tg::dtype::float16, 2, 10, false},
                                              {tg::dtype::bfloat16, 2, 7, false},
                                              {tg::dtype::float32, 4, 23, false},
                                              {tg::dtype::float64, 8, 52, false},
                                              {tg::dtype::complex64, 4, 23, true},
                                              {tg::dtype::complex128, 8, 52, true}}};

// Component bits: finite values, and the three non-finite kinds.
std::uint64_t finite_bits(const layout& l, std::mt19937_64& rng) {
  const unsigned total = static_cast<unsigned>(8 * l.part);
  const unsigned exp_bits = total - 1 - l.mantissa;
  const std::uint64_t exp = rng() % ((std::uint64_t{1} << exp_bits) - 1);  // never all ones
  const std::uint64_t mant = rng() & ((std::uint64_t{1} << l.mantissa) - 1);
  const std::uint64_t sign = rng() & 1;
  return (sign << (total - 1)) | (exp << l.mantissa) | mant;
}

std::uint64_t special_bits(const layout& l, tg::non_finite_kind k) {
  const unsigned total = static_cast<unsigned>(8 * l.part);
  const std::uint64_t all_ones = ((std::uint64_t{1} << (total - 1 - l.mantissa)) - 1) << l.mantissa;
  switch (k) {
    case tg::non_finite_kind::nan: return all_ones | 1;
    case tg::non_finite_kind::pos_inf: return all_ones;
    case tg::non_finite_kind::neg_inf: return all_ones | (std::uint64_t{1} << (total - 1));
  }
  return 0;
}

void put(std::byte* p, std::size_t part, std::uint64_t bits, bool big_endian) {
  for (std::size_t b = 0; b < part; ++b) {
    const std::size_t shift = 8 * (big_endian ? part - 1 - b : b);
    p[b] = static_cast<std::byte>((bits >> shift) & 0xFF);
  }
}

void for_each_target(const std::function<void()>& body) {
  for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(hwy::TargetName(target));
    body();
  }
  hwy::SetSupportedTargetsForTest(0);
}

// Lengths (elements) around the vector widths of every target, plus one
// spanning several 4 KiB screening chunks.
const std::vector<std::size_t> k_lengths = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 129, 1500};

TEST(NonFiniteScreen, FindsTheExactFirstElementOnEveryTarget) {
  for_each_target([] {
    std::mt19937_64 rng(7);
    for (const layout& l : k_layouts) {
      SCOPED_TRACE(std::string(tg::dtype_name(l.type)));
      const std::size_t width = l.complex ? 2 * l.part : l.part;
      for (const tg::byte_order order : {tg::byte_order::little, tg::byte_order::big}) {
        const bool big = order == tg::byte_order::big;
        for (const std::size_t n : k_lengths) {
          // An odd offset inside the allocation: unaligned loads.
          std::vector<std::byte> store(n * width + 3);
          std::byte* data = store.data() + 3;
          for (std::size_t c = 0; c < n * width / l.part; ++c)
            put(data + c * l.part, l.part, finite_bits(l, rng), big);
          const std::span<const std::byte> span(data, n * width);
          ASSERT_FALSE(tg::find_non_finite(l.type, order, span, true, true)) << n;
          std::vector<std::byte> copy(n * width);
          ASSERT_FALSE(tg::copy_and_screen_non_finite(l.type, order, span, copy.data())) << n;
          ASSERT_EQ(0, std::memcmp(copy.data(), data, copy.size()));

          for (const std::size_t at : {std::size_t{0}, n / 2, n - 1}) {
            for (const tg::non_finite_kind k :
                 {tg::non_finite_kind::nan, tg::non_finite_kind::pos_inf, tg::non_finite_kind::neg_inf}) {
              const bool imaginary = l.complex && (rng() & 1) != 0;
              std::byte* slot = data + at * width + (imaginary ? l.part : 0);
              std::array<std::byte, 8> saved{};
              std::memcpy(saved.data(), slot, l.part);
              put(slot, l.part, special_bits(l, k), big);

              const auto hit = tg::find_non_finite(l.type, order, span, true, true, 100);
              ASSERT_TRUE(hit) << "n " << n << " at " << at;
              EXPECT_EQ(hit->element, at + 100);
              EXPECT_EQ(hit->kind, k);
              EXPECT_EQ(hit->imaginary, imaginary);
              // The flags filter kinds.
              const bool is_nan = k == tg::non_finite_kind::nan;
              EXPECT_FALSE(tg::find_non_finite(l.type, order, span, !is_nan, is_nan));
              // The fused copy flags it and still copies every byte.
              std::fill(copy.begin(), copy.end(), std::byte{0});
              EXPECT_TRUE(tg::copy_and_screen_non_finite(l.type, order, span, copy.data()));
              EXPECT_EQ(0, std::memcmp(copy.data(), data, copy.size()));

              std::memcpy(slot, saved.data(), l.part);
            }
          }
        }
      }
    }
  });
}

TEST(NonFiniteScreen, NonFloatDtypesAreCopiedAndNeverFlagged) {
  std::vector<std::byte> in(37, std::byte{0xFF});
  std::vector<std::byte> out(37);
  EXPECT_FALSE(tg::copy_and_screen_non_finite(tg::dtype::uint16, tg::byte_order::little, in, out.data()));
  EXPECT_EQ(in, out);
  EXPECT_FALSE(tg::find_non_finite(tg::dtype::int32, tg::byte_order::little, in, true, true));
}

TEST(NonFiniteScreen, TrailingPartialComponentIsCopied) {
  // 3 float64 values and 5 stray bytes: everything is copied, the stray
  // bytes (all ones) are not a value.
  std::vector<std::byte> in(29, std::byte{0});
  for (std::size_t i = 24; i < 29; ++i) in[i] = std::byte{0xFF};
  std::vector<std::byte> out(29);
  EXPECT_FALSE(tg::copy_and_screen_non_finite(tg::dtype::float64, tg::byte_order::little, in, out.data()));
  EXPECT_EQ(in, out);
}

}  // namespace

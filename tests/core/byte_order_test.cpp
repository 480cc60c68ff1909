#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cstddef>
#include <numeric>
#include <vector>

#include "tensogram/core/byte_order.hpp"

namespace {

using tensogram::byte_order;

std::vector<std::byte> iota_bytes(std::size_t n) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>(i);
  return v;
}

// Independent reference: reverse each full `unit` group, keep the tail.
std::vector<std::byte> reference_swap(std::vector<std::byte> v, std::size_t unit) {
  if (unit <= 1) return v;
  for (std::size_t g = 0; g + unit <= v.size(); g += unit) {
    for (std::size_t i = 0; i < unit / 2; ++i) std::swap(v[g + i], v[g + unit - 1 - i]);
  }
  return v;
}

TEST(ByteOrder, NamesAndParse) {
  EXPECT_EQ(tensogram::byte_order_name(byte_order::big), "big");
  EXPECT_EQ(tensogram::byte_order_name(byte_order::little), "little");
  EXPECT_EQ(tensogram::parse_byte_order("big"), byte_order::big);
  EXPECT_EQ(tensogram::parse_byte_order("little"), byte_order::little);
  EXPECT_FALSE(tensogram::parse_byte_order("Big").has_value());
  EXPECT_FALSE(tensogram::parse_byte_order("native").has_value());
  EXPECT_FALSE(tensogram::parse_byte_order("").has_value());
  EXPECT_EQ(tensogram::native_byte_order(),
            std::endian::native == std::endian::big ? byte_order::big : byte_order::little);
}

TEST(ByteOrder, SwapInPlacePerUnit) {
  for (std::size_t unit : {1u, 2u, 3u, 4u, 8u, 16u}) {
    for (std::size_t n : {0u, 1u, 7u, 16u, 33u, 64u}) {
      SCOPED_TRACE(testing::Message() << "unit " << unit << " n " << n);
      auto v = iota_bytes(n);
      const auto expected = reference_swap(v, unit);
      tensogram::swap_bytes_in_place(v, unit);
      EXPECT_EQ(v, expected);
    }
  }
}

TEST(ByteOrder, SwapExamples) {
  auto v = iota_bytes(8);
  tensogram::swap_bytes_in_place(v, 2);
  EXPECT_EQ(v, (std::vector<std::byte>{std::byte{1}, std::byte{0}, std::byte{3}, std::byte{2}, std::byte{5},
                                       std::byte{4}, std::byte{7}, std::byte{6}}));
  v = iota_bytes(8);
  tensogram::swap_bytes_in_place(v, 8);
  EXPECT_EQ(v[0], std::byte{7});
  EXPECT_EQ(v[7], std::byte{0});
  // Unit 0 and 1 are no-ops.
  v = iota_bytes(5);
  tensogram::swap_bytes_in_place(v, 0);
  EXPECT_EQ(v, iota_bytes(5));
}

TEST(ByteOrder, CopySwappedPerUnit) {
  for (std::size_t unit : {1u, 2u, 4u, 8u, 16u}) {
    for (std::size_t n : {0u, 4u, 9u, 48u, 70000u}) {
      SCOPED_TRACE(testing::Message() << "unit " << unit << " n " << n);
      const auto src = iota_bytes(n);
      std::vector<std::byte> dst(n, std::byte{0xAA});
      tensogram::copy_swapped(src, dst, unit);
      EXPECT_EQ(dst, reference_swap(src, unit));
    }
  }
}

TEST(ByteOrder, CopySwappedSmallerDestination) {
  const auto src = iota_bytes(8);
  std::vector<std::byte> dst(4, std::byte{0xAA});
  tensogram::copy_swapped(src, dst, 4);
  EXPECT_EQ(dst, (std::vector<std::byte>{std::byte{3}, std::byte{2}, std::byte{1}, std::byte{0}}));
}

TEST(ByteOrder, BigEndianLoadsAndStores) {
  std::array<std::byte, 8> b{};
  tensogram::store_be16(b.data(), 0x0102);
  EXPECT_EQ(b[0], std::byte{1});
  EXPECT_EQ(b[1], std::byte{2});
  EXPECT_EQ(tensogram::load_be16(b.data()), 0x0102);
  tensogram::store_be32(b.data(), 0x01020304);
  EXPECT_EQ(b[0], std::byte{1});
  EXPECT_EQ(b[3], std::byte{4});
  EXPECT_EQ(tensogram::load_be32(b.data()), 0x01020304u);
  tensogram::store_be64(b.data(), 0x0102030405060708ULL);
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(b[i], static_cast<std::byte>(i + 1));
  EXPECT_EQ(tensogram::load_be64(b.data()), 0x0102030405060708ULL);
}

}  // namespace

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tensogram/core/dtype.hpp"

namespace {

using tensogram::dtype;

struct expected_dtype {
  dtype type;
  const char* name;
  std::size_t width;
  std::size_t swap_unit;
  bool is_float;
};

// Spec 02 §5, in table order.
const expected_dtype k_table[] = {
    {dtype::float16, "float16", 2, 2, true},     {dtype::bfloat16, "bfloat16", 2, 2, true},
    {dtype::float32, "float32", 4, 4, true},     {dtype::float64, "float64", 8, 8, true},
    {dtype::complex64, "complex64", 8, 4, true}, {dtype::complex128, "complex128", 16, 8, true},
    {dtype::int8, "int8", 1, 1, false},          {dtype::int16, "int16", 2, 2, false},
    {dtype::int32, "int32", 4, 4, false},        {dtype::int64, "int64", 8, 8, false},
    {dtype::uint8, "uint8", 1, 1, false},        {dtype::uint16, "uint16", 2, 2, false},
    {dtype::uint32, "uint32", 4, 4, false},      {dtype::uint64, "uint64", 8, 8, false},
    {dtype::bitmask, "bitmask", 0, 1, false},
};

TEST(Dtype, TableMatchesSpec) {
  ASSERT_EQ(std::size(tensogram::all_dtypes), 15u);
  for (std::size_t i = 0; i < 15; ++i) {
    const auto& e = k_table[i];
    SCOPED_TRACE(e.name);
    EXPECT_EQ(tensogram::all_dtypes[i], e.type);
    EXPECT_EQ(tensogram::dtype_name(e.type), e.name);
    EXPECT_EQ(tensogram::dtype_width(e.type), e.width);
    EXPECT_EQ(tensogram::dtype_swap_unit(e.type), e.swap_unit);
    EXPECT_EQ(tensogram::dtype_is_float(e.type), e.is_float);
    const auto parsed = tensogram::parse_dtype(e.name);
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(*parsed, e.type);
  }
}

TEST(Dtype, ParseIsExactAndLowercase) {
  for (const char* bad : {"", "Float32", "FLOAT32", "float", "float32 ", " float32", "f32", "complex", "int",
                          "uint", "bool", "float128"}) {
    EXPECT_FALSE(tensogram::parse_dtype(bad).has_value()) << '"' << bad << '"';
  }
  EXPECT_FALSE(tensogram::parse_dtype(std::string_view("float32\0", 8)).has_value());
}

TEST(Dtype, ElementCount) {
  using V = std::vector<std::uint64_t>;
  EXPECT_EQ(tensogram::element_count(V{}), 1u);  // scalar
  EXPECT_EQ(tensogram::element_count(V{0}), 0u);
  EXPECT_EQ(tensogram::element_count(V{3, 0, 2}), 0u);
  EXPECT_EQ(tensogram::element_count(V{4}), 4u);
  EXPECT_EQ(tensogram::element_count(V{2, 3, 4, 5}), 120u);
  EXPECT_EQ(tensogram::element_count(V{1ULL << 62, 3}), 3ULL << 62);
  EXPECT_EQ(tensogram::element_count(V{std::numeric_limits<std::uint64_t>::max()}),
            std::numeric_limits<std::uint64_t>::max());
  // Overflow of u64.
  EXPECT_FALSE(tensogram::element_count(V{1ULL << 62, 4}).has_value());
  EXPECT_FALSE(tensogram::element_count(V{1ULL << 32, 1ULL << 32}).has_value());
  EXPECT_FALSE(tensogram::element_count(V{1ULL << 32, 1ULL << 31, 2, 2}).has_value());
  EXPECT_FALSE(tensogram::element_count(V{std::numeric_limits<std::uint64_t>::max(), 2}).has_value());
}

TEST(Dtype, RawByteSize) {
  EXPECT_EQ(tensogram::raw_byte_size(dtype::float32, 4), 16u);
  EXPECT_EQ(tensogram::raw_byte_size(dtype::complex128, 3), 48u);
  EXPECT_EQ(tensogram::raw_byte_size(dtype::int8, 0), 0u);
  EXPECT_EQ(tensogram::raw_byte_size(dtype::uint8, std::numeric_limits<std::uint64_t>::max()),
            std::numeric_limits<std::uint64_t>::max());
  for (dtype t : tensogram::all_dtypes) {
    if (t == dtype::bitmask) continue;
    EXPECT_EQ(tensogram::raw_byte_size(t, 7), 7 * tensogram::dtype_width(t));
  }
}

TEST(Dtype, RawByteSizeBitmaskIsCeilOfEighth) {
  for (std::uint64_t n = 0; n < 100; ++n) {
    EXPECT_EQ(tensogram::raw_byte_size(dtype::bitmask, n), (n + 7) / 8) << n;
  }
  const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  EXPECT_EQ(tensogram::raw_byte_size(dtype::bitmask, max), (max / 8) + 1);      // no overflow in the ceiling
  EXPECT_EQ(tensogram::raw_byte_size(dtype::bitmask, max - 7), (max - 7) / 8);  // 2^64-8 bits: exact
  EXPECT_EQ(tensogram::raw_byte_size(dtype::bitmask, max - 8), (max - 8) / 8 + 1);
}

TEST(Dtype, RawByteSizeOverflow) {
  EXPECT_FALSE(tensogram::raw_byte_size(dtype::float64, 1ULL << 61).has_value());
  EXPECT_TRUE(tensogram::raw_byte_size(dtype::float64, (1ULL << 61) - 1).has_value());
  EXPECT_FALSE(tensogram::raw_byte_size(dtype::complex128, 1ULL << 60).has_value());
  EXPECT_FALSE(tensogram::raw_byte_size(dtype::int16, 1ULL << 63).has_value());
  EXPECT_FALSE(
      tensogram::raw_byte_size(dtype::float32, std::numeric_limits<std::uint64_t>::max()).has_value());
}

}  // namespace

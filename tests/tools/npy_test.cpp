// Direct tests of the .npy reader and writer (tools/tensogram/npy.hpp).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "npy.hpp"
#include "test_support.hpp"

namespace tensogram::cli::test {
namespace {

using npy::npy_error;

std::string error_of(const std::string& dict) {
  try {
    (void)npy::parse_header_text(dict);
  } catch (const npy_error& e) {
    return e.what();
  }
  return "";
}

TEST(NpyHeader, NumpyLayout) {
  const npy::header h =
      npy::parse_header_text("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }    \n");
  EXPECT_EQ(h.descr, "<f4");
  EXPECT_FALSE(h.fortran_order);
  EXPECT_EQ(h.shape, (std::vector<std::uint64_t>{2, 3}));
}

TEST(NpyHeader, LiteralVariants) {
  // Any key order, double quotes, no trailing commas, extra whitespace.
  const npy::header h =
      npy::parse_header_text("{ \"shape\" : ( 7 , ) ,\t\"fortran_order\":True,'descr':\"|u1\"}");
  EXPECT_EQ(h.descr, "|u1");
  EXPECT_TRUE(h.fortran_order);
  EXPECT_EQ(h.shape, (std::vector<std::uint64_t>{7}));
  EXPECT_EQ(npy::parse_header_text("{'descr': '<f8', 'fortran_order': False, 'shape': ()}").shape.size(), 0u);
  EXPECT_EQ(npy::parse_header_text("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 5,)}").shape,
            (std::vector<std::uint64_t>{0, 5}));
  EXPECT_EQ(
      npy::parse_header_text("{'descr': '<f8', 'fortran_order': False, 'shape': (18446744073709551615,)}")
          .shape[0],
      18446744073709551615ULL);
}

TEST(NpyHeader, Rejections) {
  EXPECT_EQ(error_of(""), "invalid header: expected '{' at offset 0 of the header dict");
  EXPECT_EQ(error_of("{}"), "invalid header: missing key 'descr'");
  EXPECT_EQ(error_of("{'descr': '<f4', 'fortran_order': False}"), "invalid header: missing key 'shape'");
  EXPECT_EQ(error_of("{'descr': '<f4' 'fortran_order': False, 'shape': ()}"),
            "invalid header: expected ',' or '}' at offset 16 of the header dict");
  EXPECT_EQ(error_of("{'descr': '<f4',, 'fortran_order': False, 'shape': ()}"),
            "invalid header: expected a quoted string at offset 16 of the header dict");
  EXPECT_EQ(error_of("{'descr': '<f4', 'fortran_order': false, 'shape': ()}"),
            "invalid header: expected True or False for 'fortran_order' at offset 34 of the header dict");
  EXPECT_EQ(error_of("{'descr': '<f4', 'fortran_order': Trueish, 'shape': ()}"),
            "invalid header: expected True or False for 'fortran_order' at offset 34 of the header dict");
  EXPECT_EQ(error_of("{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3]}"),
            "invalid header: expected a tuple for 'shape' at offset 50 of the header dict");
  EXPECT_EQ(error_of("{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}"),
            "invalid header: expected ',' or ')' in 'shape' at offset 53 of the header dict");
  EXPECT_EQ(error_of("{'descr': '<f4', 'fortran_order': False, 'shape': (3L,)}"),
            "invalid header: expected a non-negative integer dimension at offset 51 of the header dict");
  EXPECT_EQ(error_of("{'descr': '<f4', 'fortran_order': False, 'shape': (2.0,)}"),
            "invalid header: expected ',' or ')' in 'shape' at offset 52 of the header dict");
  EXPECT_EQ(error_of("{'descr': '<f4', 'fortran_order': False, 'shape': (,)}"),
            "invalid header: expected a non-negative integer dimension at offset 51 of the header dict");
  EXPECT_EQ(error_of("{'descr': 42, 'fortran_order': False, 'shape': ()}"),
            "invalid header: expected a quoted string at offset 10 of the header dict");
  EXPECT_EQ(error_of("{'descr': '<f4"),
            "invalid header: unterminated string at offset 10 of the header dict");
  EXPECT_EQ(error_of("{'descr': '<f4', 'fortran_order': False, 'shape': ()"),
            "invalid header: expected ',' or '}' at offset 52 of the header dict");
  EXPECT_EQ(error_of("{'descr': '<f4', 'fortran_order': False, 'shape': ()}}"),
            "invalid header: unexpected text after the closing '}' at offset 53 of the header dict");
  EXPECT_EQ(error_of("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'shape': ()}"),
            "invalid header: duplicate key 'shape' at offset 54 of the header dict");
  EXPECT_EQ(error_of("{'descr': '<f4', 'fortran_order': False, 'fortran_order': True, 'shape': ()}"),
            "invalid header: duplicate key 'fortran_order' at offset 41 of the header dict");
  EXPECT_EQ(error_of("{'descr': '<f4', 'fortran_order': False, 'shape': ()}\x7f"),
            "invalid header: unexpected byte 0x7f at offset 53 of the header dict");
}

TEST(NpyDescr, SupportedTable) {
  struct row {
    const char* descr;
    dtype type;
    std::size_t size;
    byte_order order;
    bool is_bool;
  };
  const byte_order host = native_byte_order();
  const row rows[] = {
      {"<f2", dtype::float16, 2, byte_order::little, false},
      {">f2", dtype::float16, 2, byte_order::big, false},
      {"<f4", dtype::float32, 4, byte_order::little, false},
      {">f4", dtype::float32, 4, byte_order::big, false},
      {"<f8", dtype::float64, 8, byte_order::little, false},
      {">f8", dtype::float64, 8, byte_order::big, false},
      {"<c8", dtype::complex64, 8, byte_order::little, false},
      {">c16", dtype::complex128, 16, byte_order::big, false},
      {"|i1", dtype::int8, 1, host, false},
      {"<i1", dtype::int8, 1, host, false},
      {">i2", dtype::int16, 2, byte_order::big, false},
      {"<i4", dtype::int32, 4, byte_order::little, false},
      {">i8", dtype::int64, 8, byte_order::big, false},
      {"|u1", dtype::uint8, 1, host, false},
      {"u1", dtype::uint8, 1, host, false},
      {"<u2", dtype::uint16, 2, byte_order::little, false},
      {">u4", dtype::uint32, 4, byte_order::big, false},
      {"<u8", dtype::uint64, 8, byte_order::little, false},
      {"|b1", dtype::uint8, 1, host, true},
  };
  for (const row& r : rows) {
    const npy::element_type t = npy::parse_descr(r.descr);
    EXPECT_EQ(t.type, r.type) << r.descr;
    EXPECT_EQ(t.itemsize, r.size) << r.descr;
    EXPECT_EQ(t.order, r.order) << r.descr;
    EXPECT_EQ(t.is_bool, r.is_bool) << r.descr;
  }
  for (const char* bad : {"", "<", "f4", "=f4", "|f8", "<f16", "<c32", "<U1", "|S3", "|V8", "<M8[s]", "<m8",
                          "O", "|O", "<i16", "<b2", "<F4", "<f4 "}) {
    EXPECT_THROW((void)npy::parse_descr(bad), npy_error) << bad;
  }
}

TEST(NpyFile, ParseVersionsAndData) {
  const std::vector<std::byte> data = {std::byte{1}, std::byte{2}, std::byte{3}};
  for (int major : {1, 2, 3}) {
    const auto file = make_npy(npy_dict("|u1", {3}), data, major);
    const npy::array a = npy::parse(file);
    EXPECT_EQ(a.major_version, major);
    EXPECT_EQ(a.element_count, 3u);
    EXPECT_EQ(a.data.size(), 3u);
    EXPECT_EQ(a.data.data(), file.data() + (file.size() - 3));
  }
  // Unpadded headers are fine too.
  const npy::array a = npy::parse(make_npy(npy_dict("|u1", {3}), data, 1, false));
  EXPECT_EQ(a.data.size(), 3u);
}

TEST(NpyFile, HeaderLengthCap) {
  // A header of exactly the cap is read (and fails on its content, not its size).
  std::string dict = npy_dict("|u1", {1});
  dict.append(npy::max_header_length - dict.size(), ' ');
  EXPECT_NO_THROW((void)npy::parse(make_npy(dict, {std::byte{1}}, 2, false)));
  dict += ' ';
  try {
    (void)npy::parse(make_npy(dict, {std::byte{1}}, 2, false));
    FAIL();
  } catch (const npy_error& e) {
    EXPECT_EQ(std::string(e.what()), "header length 65537 exceeds the limit of 65536 bytes");
  }
}

TEST(NpyWrite, LayoutMatchesNumpy) {
  const std::vector<std::uint64_t> shape = {2, 3};
  const std::vector<std::byte> data(24, std::byte{7});
  const std::vector<std::byte> file = npy::serialize("<f4", shape, data);
  ASSERT_EQ(file.size(), 128u + 24u);
  const std::string head(reinterpret_cast<const char*>(file.data()), 128);
  EXPECT_EQ(head.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(static_cast<int>(file[8]) + 256 * static_cast<int>(file[9]), 118);
  EXPECT_EQ(head.substr(10, 60), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } ");
  EXPECT_EQ(head.back(), '\n');
  const npy::array a = npy::parse(file);
  EXPECT_EQ(a.hdr.shape, shape);
  EXPECT_EQ(a.hdr.descr, "<f4");

  for (const auto& s :
       {std::vector<std::uint64_t>{}, std::vector<std::uint64_t>{5}, std::vector<std::uint64_t>{0, 2}}) {
    const std::uint64_t n = s.empty() ? 1 : s[0] * (s.size() > 1 ? s[1] : 1);
    const std::vector<std::byte> f = npy::serialize("|u1", s, std::vector<std::byte>(n));
    EXPECT_EQ((f.size() - n) % 64, 0u);
    EXPECT_EQ(npy::parse(f).hdr.shape, s);
  }
}

TEST(NpyWrite, DescrFor) {
  EXPECT_EQ(npy::descr_for(dtype::float32, byte_order::little), "<f4");
  EXPECT_EQ(npy::descr_for(dtype::complex128, byte_order::big), ">c16");
  EXPECT_EQ(npy::descr_for(dtype::int8, byte_order::big), "|i1");
  EXPECT_EQ(npy::descr_for(dtype::uint8, byte_order::little), "|u1");
  EXPECT_THROW((void)npy::descr_for(dtype::bfloat16, byte_order::little), npy_error);
  EXPECT_THROW((void)npy::descr_for(dtype::bitmask, byte_order::little), npy_error);
  // Every other dtype round-trips through parse_descr.
  for (const dtype t : all_dtypes) {
    if (t == dtype::bfloat16 || t == dtype::bitmask) continue;
    for (const byte_order o : {byte_order::little, byte_order::big}) {
      const npy::element_type e = npy::parse_descr(npy::descr_for(t, o));
      EXPECT_EQ(e.type, t);
      EXPECT_EQ(e.itemsize, dtype_width(t));
    }
  }
}

TEST(NpyFortran, Reorders) {
  // 2×3×2 of 2-byte items: element (i,j,k) holds the value 100i + 10j + k.
  const std::vector<std::uint64_t> shape = {2, 3, 2};
  std::vector<std::byte> f;
  std::vector<std::byte> c;
  auto push = [](std::vector<std::byte>& v, int x) {
    v.push_back(static_cast<std::byte>(x & 0xFF));
    v.push_back(static_cast<std::byte>(x >> 8));
  };
  for (int k = 0; k < 2; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 2; ++i) push(f, 100 * i + 10 * j + k);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) push(c, 100 * i + 10 * j + k);
  EXPECT_EQ(npy::fortran_to_c_order(f, shape, 2), c);
  // Zero-length and rank-0 inputs.
  EXPECT_TRUE(npy::fortran_to_c_order({}, std::vector<std::uint64_t>{3, 0}, 4).empty());
  EXPECT_EQ(npy::fortran_to_c_order(std::vector<std::byte>{std::byte{5}}, {}, 1),
            std::vector<std::byte>{std::byte{5}});
}

}  // namespace
}  // namespace tensogram::cli::test

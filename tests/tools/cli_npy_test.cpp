// `convert-npy` and `to-npy` through the built binary: round trips of every
// supported dtype in both byte orders (rank 0 and zero-length shapes
// included), Fortran order, --meta, hostile inputs, atomic outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <tensogram.hpp>

#include "npy.hpp"
#include "test_support.hpp"

namespace tensogram::cli::test {
namespace {

constexpr bool host_little = std::endian::native == std::endian::little;

template <typename T>
std::vector<std::byte> native_bytes(std::initializer_list<T> values) {
  std::vector<std::byte> out(values.size() * sizeof(T));
  std::size_t i = 0;
  for (const T v : values) std::memcpy(out.data() + sizeof(T) * i++, &v, sizeof(T));
  return out;
}

std::vector<std::byte> swapped(std::vector<std::byte> b, std::size_t unit) {
  for (std::size_t i = 0; i + unit <= b.size(); i += unit)
    std::reverse(b.begin() + static_cast<long>(i), b.begin() + static_cast<long>(i + unit));
  return b;
}

struct npy_case {
  std::string code;  // "f4", "c16", "i1", ...
  std::vector<std::uint64_t> shape;
  std::vector<std::byte> native;  // element bytes in host order
  std::size_t swap_unit;          // 1 for 1-byte types; half the size for complex
  dtype type;
};

// Finite test values for every supported dtype (the encoder rejects NaN and
// Inf by default).
std::vector<npy_case> all_cases() {
  std::vector<npy_case> c;
  c.push_back({"f2",
               {2, 3},
               native_bytes<std::uint16_t>({0x3C00, 0xC000, 0x3555, 0x7BFF, 0x0001, 0x8000}),
               2,
               dtype::float16});
  c.push_back(
      {"f4", {3, 2}, native_bytes<float>({1.5f, -2.25f, 3e38f, 1e-45f, 0.0f, 42.0f}), 4, dtype::float32});
  c.push_back({"f8",
               {2, 2, 2},
               native_bytes<double>({1.0, -1e300, 5e-324, 0.1, 2.0, 3.0, -0.0, 7.5}),
               8,
               dtype::float64});
  c.push_back({"c8", {2}, native_bytes<float>({1.0f, -1.0f, 0.5f, 2.0f}), 4, dtype::complex64});
  c.push_back({"c16", {3}, native_bytes<double>({1.0, 2.0, -3.0, 4.5, 1e-310, 6.0}), 8, dtype::complex128});
  c.push_back({"i1", {4}, native_bytes<std::int8_t>({-128, 127, 0, -1}), 1, dtype::int8});
  c.push_back({"i2", {3}, native_bytes<std::int16_t>({-32768, 32767, -2}), 2, dtype::int16});
  c.push_back({"i4", {2, 2}, native_bytes<std::int32_t>({INT32_MIN, INT32_MAX, 1, -1}), 4, dtype::int32});
  c.push_back({"i8", {2}, native_bytes<std::int64_t>({INT64_MIN, 0x0102030405060708}), 8, dtype::int64});
  c.push_back({"u1", {5}, native_bytes<std::uint8_t>({0, 1, 127, 128, 255}), 1, dtype::uint8});
  c.push_back({"u2", {2}, native_bytes<std::uint16_t>({0xFFFF, 0x0102}), 2, dtype::uint16});
  c.push_back({"u4", {1, 2}, native_bytes<std::uint32_t>({0xFFFFFFFF, 0x01020304}), 4, dtype::uint32});
  c.push_back({"u8", {2}, native_bytes<std::uint64_t>({UINT64_MAX, 0x0102030405060708}), 8, dtype::uint64});
  // Rank 0 and zero-length shapes.
  c.push_back({"f8", {}, native_bytes<double>({-12.5}), 8, dtype::float64});
  c.push_back({"i4", {}, native_bytes<std::int32_t>({-7}), 4, dtype::int32});
  c.push_back({"f4", {0}, {}, 4, dtype::float32});
  c.push_back({"u2", {3, 0}, {}, 2, dtype::uint16});
  c.push_back({"c8", {0, 2, 5}, {}, 4, dtype::complex64});
  return c;
}

struct written_case {
  npy_case c;
  char order;  // '<', '>' or '|'
  std::vector<std::byte> file_data;
};

std::string native_descr(const npy_case& c) {
  const bool one_byte = c.code == "i1" || c.code == "u1";
  return std::string(1, one_byte ? '|' : (host_little ? '<' : '>')) + c.code;
}

class NpyRoundTrip : public ::testing::Test {
 protected:
  scratch_dir dir_;
};

TEST_F(NpyRoundTrip, EveryDtypeBothByteOrders) {
  std::vector<written_case> cases;
  for (const npy_case& c : all_cases()) {
    if (c.swap_unit == 1) {
      cases.push_back({c, '|', c.native});
    } else {
      for (const char order : {'<', '>'}) {
        const bool file_little = order == '<';
        cases.push_back({c, order, file_little == host_little ? c.native : swapped(c.native, c.swap_unit)});
      }
    }
  }
  std::vector<std::string> args = {"convert-npy"};
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto path = dir_ / ("in" + std::to_string(i) + ".npy");
    write_file(path, make_npy(npy_dict(std::string(1, cases[i].order) + cases[i].c.code, cases[i].c.shape),
                              cases[i].file_data));
    args.push_back(path.string());
  }
  const std::string tgm = (dir_ / "out.tgm").string();
  args.insert(args.end(), {"-o", tgm});
  const run_result conv = run_cli(args);
  ASSERT_EQ(conv.exit_code, 0) << conv.err;
  EXPECT_EQ(conv.out, "Wrote " + std::to_string(cases.size()) + " objects to " + tgm + "\n");
  EXPECT_EQ(conv.err, "");

  // The message stores each array's bytes verbatim with its byte order.
  const buffer msg = buffer::map_file(tgm);
  ASSERT_EQ(scan(msg.bytes()).size(), 1u);
  decode_options raw;
  raw.native_byte_order = false;
  const message m = decode(msg, raw);
  ASSERT_EQ(m.num_objects(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const decoded_object& o = m.object(i);
    EXPECT_EQ(o.descriptor().dtype, cases[i].c.type) << i;
    EXPECT_EQ(o.descriptor().shape, cases[i].c.shape) << i;
    if (cases[i].order != '|') {
      EXPECT_EQ(o.descriptor().byte_order, cases[i].order == '<' ? byte_order::little : byte_order::big) << i;
    }
    EXPECT_TRUE(
        std::equal(o.bytes().begin(), o.bytes().end(), cases[i].file_data.begin(), cases[i].file_data.end()))
        << i;
  }

  // Back to .npy: host byte order, same shape, same values.
  const std::filesystem::path out_dir = dir_ / "npy_out";
  const run_result back = run_cli({"to-npy", tgm, "-o", out_dir.string()});
  ASSERT_EQ(back.exit_code, 0) << back.err;
  EXPECT_EQ(back.err, "");
  std::string listing;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto path = out_dir / ("0_" + std::to_string(i) + ".npy");
    listing += path.string() + "\n";
    const std::vector<std::byte> file = read_file(path);
    const npy::array a = npy::parse(file);
    EXPECT_EQ(a.hdr.descr, native_descr(cases[i].c)) << i;
    EXPECT_FALSE(a.hdr.fortran_order);
    EXPECT_EQ(a.hdr.shape, cases[i].c.shape) << i;
    EXPECT_TRUE(std::equal(a.data.begin(), a.data.end(), cases[i].c.native.begin(), cases[i].c.native.end()))
        << i;
  }
  EXPECT_EQ(back.out, listing);
}

TEST_F(NpyRoundTrip, VersionTwoAndThreeHeaders) {
  const auto data = native_bytes<std::int16_t>({1, -2, 3});
  const std::string hostle = host_little ? "<" : ">";
  write_file(dir_ / "v2.npy", make_npy(npy_dict(hostle + "i2", {3}), data, 2));
  write_file(dir_ / "v3.npy", make_npy(npy_dict(hostle + "i2", {3}), data, 3));
  const std::string tgm = (dir_ / "out.tgm").string();
  ASSERT_EQ(
      run_cli({"convert-npy", (dir_ / "v2.npy").string(), (dir_ / "v3.npy").string(), "-o", tgm}).exit_code,
      0);
  const message m = decode(buffer::map_file(tgm));
  ASSERT_EQ(m.num_objects(), 2u);
  for (const decoded_object& o : m)
    EXPECT_TRUE(std::equal(o.bytes().begin(), o.bytes().end(), data.begin(), data.end()));
}

TEST_F(NpyRoundTrip, BoolBecomesUint8WithWarning) {
  const auto path = dir_ / "b.npy";
  write_file(path, make_npy(npy_dict("|b1", {4}), {std::byte{1}, std::byte{0}, std::byte{0}, std::byte{1}}));
  const std::string tgm = (dir_ / "b.tgm").string();
  const run_result r = run_cli({"convert-npy", path.string(), "-o", tgm});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "warning: " + path.string() +
                       ": bool array stored as uint8 (0/1); Tensogram has no boolean dtype\n");
  const message m = decode(buffer::map_file(tgm));
  EXPECT_EQ(m.object(0).descriptor().dtype, dtype::uint8);
  ASSERT_EQ(run_cli({"to-npy", tgm, "-o", (dir_ / "o").string()}).exit_code, 0);
  const auto back = read_file(dir_ / "o" / "0_0.npy");
  EXPECT_EQ(npy::parse(back).hdr.descr, "|u1");
}

TEST_F(NpyRoundTrip, FortranOrderIsReorderedToCOrder) {
  // 2×3: logical [[1,2,3],[4,5,6]] stored column-major.
  const std::string le = host_little ? "<" : ">";
  write_file(dir_ / "f2d.npy",
             make_npy(npy_dict(le + "i4", {2, 3}, true), native_bytes<std::int32_t>({1, 4, 2, 5, 3, 6})));
  // 2×3×4: element (i,j,k) = 100i + 10j + k, stored column-major.
  std::vector<std::byte> f3;
  std::vector<std::byte> c3;
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 2; ++i) {
        const auto b = native_bytes<double>({100.0 * i + 10.0 * j + k});
        f3.insert(f3.end(), b.begin(), b.end());
      }
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) {
        const auto b = native_bytes<double>({100.0 * i + 10.0 * j + k});
        c3.insert(c3.end(), b.begin(), b.end());
      }
  write_file(dir_ / "f3d.npy", make_npy(npy_dict(le + "f8", {2, 3, 4}, true), f3));
  // Rank 1 Fortran order is the same as C order.
  write_file(dir_ / "f1d.npy",
             make_npy(npy_dict("|u1", {3}, true), {std::byte{7}, std::byte{8}, std::byte{9}}));
  const std::string tgm = (dir_ / "f.tgm").string();
  const run_result r = run_cli({"convert-npy", (dir_ / "f2d.npy").string(), (dir_ / "f3d.npy").string(),
                                (dir_ / "f1d.npy").string(), "-o", tgm});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const message m = decode(buffer::map_file(tgm));
  const auto c2 = native_bytes<std::int32_t>({1, 2, 3, 4, 5, 6});
  EXPECT_EQ(m.object(0).descriptor().shape, (std::vector<std::uint64_t>{2, 3}));
  EXPECT_TRUE(std::equal(m.object(0).bytes().begin(), m.object(0).bytes().end(), c2.begin(), c2.end()));
  EXPECT_EQ(m.object(1).descriptor().shape, (std::vector<std::uint64_t>{2, 3, 4}));
  EXPECT_TRUE(std::equal(m.object(1).bytes().begin(), m.object(1).bytes().end(), c3.begin(), c3.end()));
  EXPECT_EQ(static_cast<int>(m.object(2).bytes()[2]), 9);
}

TEST_F(NpyRoundTrip, MetaGoesIntoEveryBaseEntry) {
  write_file(dir_ / "a.npy", make_npy(npy_dict("|u1", {1}), {std::byte{1}}));
  write_file(dir_ / "b.npy", make_npy(npy_dict("|i1", {1}), {std::byte{2}}));
  const std::string tgm = (dir_ / "m.tgm").string();
  const run_result r = run_cli({"convert-npy",
                                (dir_ / "a.npy").string(),
                                "--meta",
                                "mars.param=2t",
                                "--meta",
                                "mars.levtype=sfc",
                                (dir_ / "b.npy").string(),
                                "--meta",
                                "step=6",
                                "--meta",
                                "ratio=0.25",
                                "--meta",
                                "lead=06",
                                "--meta",
                                "neg=-3",
                                "--meta",
                                "big=18446744073709551615",
                                "--meta",
                                "huge=1e400",
                                "--meta",
                                "empty=",
                                "--meta",
                                "eq=a=b",
                                "--meta",
                                "step=12",
                                "-o",
                                tgm});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const message m = decode(buffer::map_file(tgm));
  const global_metadata& g = m.global();
  ASSERT_EQ(g.base.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    ASSERT_NE(g.get_at(i, "mars.param"), nullptr);
    EXPECT_EQ(*g.get_at(i, "mars.param"), cbor::value("2t"));
    EXPECT_EQ(*g.get_at(i, "mars.levtype"), cbor::value("sfc"));
    EXPECT_EQ(*g.get_at(i, "step"), cbor::value(12));  // the later assignment wins
    EXPECT_EQ(*g.get_at(i, "ratio"), cbor::value(0.25));
    EXPECT_EQ(*g.get_at(i, "lead"), cbor::value("06"));
    EXPECT_EQ(*g.get_at(i, "neg"), cbor::value(-3));
    EXPECT_EQ(*g.get_at(i, "big"), cbor::value(std::uint64_t{18446744073709551615ULL}));
    EXPECT_EQ(*g.get_at(i, "huge"), cbor::value("1e400"));
    EXPECT_EQ(*g.get_at(i, "empty"), cbor::value(""));
    EXPECT_EQ(*g.get_at(i, "eq"), cbor::value("a=b"));
  }
  const run_result ls = run_cli({"ls", "-p", "mars.param,step,ratio,lead", tgm});
  EXPECT_EQ(ls.out, "mars.param\tstep\tratio\tlead\n2t\t12\t0.25\t06\n");
}

TEST_F(NpyRoundTrip, BadMetaIsRuntimeError) {
  write_file(dir_ / "a.npy", make_npy(npy_dict("|u1", {1}), {std::byte{1}}));
  const std::string in = (dir_ / "a.npy").string();
  const std::string out = (dir_ / "m.tgm").string();
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"novalue"}, "error: invalid --meta 'novalue': expected key=value\n"},
      {{"a..b=1"}, "error: invalid --meta 'a..b=1': empty key segment\n"},
      {{"=1"}, "error: invalid --meta '=1': empty key segment\n"},
      {{"_reserved_.x=1"}, "error: invalid --meta '_reserved_.x=1': _reserved_ is managed by the library\n"},
      {{"mars=x", "mars.param=2t"},
       "error: invalid --meta 'mars.param=2t': 'mars' is already set to a value that is not a map\n"},
  };
  for (const auto& [metas, message] : bad) {
    std::vector<std::string> args = {"convert-npy", in, "-o", out};
    for (const std::string& mo : metas) args.insert(args.end(), {"--meta", mo});
    const run_result r = run_cli(args);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err, message);
    EXPECT_FALSE(std::filesystem::exists(out));
  }
}

// ---- hostile .npy input ------------------------------------------------------

struct hostile_case {
  std::string name;
  std::vector<std::byte> bytes;
  std::string message;  // expected text after "error: <path>: "
};

std::vector<hostile_case> hostile_cases() {
  const std::vector<std::byte> four = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
  std::vector<hostile_case> c;
  c.push_back({"empty", {}, "not a .npy file (bad magic string)"});
  c.push_back({"magic", bytes_of("PK\x03\x04 this is a zip"), "not a .npy file (bad magic string)"});
  c.push_back({"short_magic", bytes_of("\x93NUM"), "not a .npy file (bad magic string)"});
  c.push_back({"no_version", bytes_of("\x93NUMPY"), "truncated preamble (no format version)"});
  c.push_back({"no_length", bytes_of(std::string("\x93NUMPY\x01\x00\x10", 9)),
               "truncated preamble (no header length)"});
  {
    auto b = make_npy(npy_dict("|u1", {4}), four);
    b[6] = std::byte{4};
    c.push_back({"version4", b, "unsupported .npy format version 4.0 (supported: 1.0, 2.0, 3.0)"});
    b[6] = std::byte{1};
    b[7] = std::byte{1};
    c.push_back({"version11", b, "unsupported .npy format version 1.1 (supported: 1.0, 2.0, 3.0)"});
  }
  {
    auto b = make_npy(npy_dict("|u1", {4}), four);
    b.resize(40);
    c.push_back({"truncated_header", b, "truncated header: 118 bytes declared, 30 present"});
  }
  {
    std::vector<std::byte> b = bytes_of(std::string("\x93NUMPY\x02\x00", 8));
    for (const unsigned char x : {0x00, 0x00, 0x00, 0x40}) b.push_back(static_cast<std::byte>(x));
    c.push_back({"huge_header", b, "header length 1073741824 exceeds the limit of 65536 bytes"});
  }
  c.push_back({"object", make_npy(npy_dict("|O", {1}), std::vector<std::byte>(8)),
               "object arrays (dtype '|O') are not supported"});
  c.push_back(
      {"unicode", make_npy(npy_dict("<U5", {1}), std::vector<std::byte>(20)),
       "unsupported dtype '<U5' (supported: f2 f4 f8 c8 c16 i1 i2 i4 i8 u1 u2 u4 u8 b1, little or big "
       "endian)"});
  c.push_back(
      {"float128", make_npy(npy_dict("<f16", {1}), std::vector<std::byte>(16)),
       "unsupported dtype '<f16' (supported: f2 f4 f8 c8 c16 i1 i2 i4 i8 u1 u2 u4 u8 b1, little or big "
       "endian)"});
  c.push_back(
      {"datetime", make_npy(npy_dict("<M8[ns]", {1}), std::vector<std::byte>(8)),
       "unsupported dtype '<M8[ns]' (supported: f2 f4 f8 c8 c16 i1 i2 i4 i8 u1 u2 u4 u8 b1, little or big "
       "endian)"});
  c.push_back({"no_order", make_npy(npy_dict("|f4", {1}), four),
               "dtype '|f4' does not say its byte order (expected '<' or '>' prefix)"});
  c.push_back(
      {"structured", make_npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", four),
       "structured dtypes (a list as 'descr') are not supported; Tensogram objects are plain N-d arrays "
       "(`metatensor from-npy` turns records into a struct tensor)"});
  c.push_back({"missing_key", make_npy("{'descr': '|u1', 'shape': (4,), }", four),
               "invalid header: missing key 'fortran_order'"});
  c.push_back(
      {"extra_key", make_npy("{'descr': '|u1', 'fortran_order': False, 'shape': (4,), 'x': 1, }", four),
       "invalid header: unexpected key 'x' (expected 'descr', 'fortran_order' and 'shape') at offset 56 of "
       "the header dict"});
  c.push_back({"duplicate_key",
               make_npy("{'descr': '|u1', 'descr': '|u1', 'fortran_order': False, 'shape': (4,)}", four),
               "invalid header: duplicate key 'descr' at offset 17 of the header dict"});
  c.push_back(
      {"not_tuple", make_npy("{'descr': '|u1', 'fortran_order': False, 'shape': (4)}", four),
       "invalid header: 'shape' is not a tuple (a 1-tuple needs a comma) at offset 50 of the header dict"});
  c.push_back({"negative_dim", make_npy("{'descr': '|u1', 'fortran_order': False, 'shape': (-4,)}", four),
               "invalid header: expected a non-negative integer dimension at offset 51 of the header dict"});
  c.push_back({"bad_bool", make_npy("{'descr': '|u1', 'fortran_order': 0, 'shape': (4,)}", four),
               "invalid header: expected True or False for 'fortran_order' at offset 34 of the header dict"});
  c.push_back({"trailing_text", make_npy("{'descr': '|u1', 'fortran_order': False, 'shape': (4,)} x", four),
               "invalid header: unexpected text after the closing '}' at offset 56 of the header dict"});
  c.push_back({"not_a_dict", make_npy("['descr', '|u1']", four),
               "invalid header: expected '{' at offset 0 of the header dict"});
  c.push_back({"non_ascii",
               make_npy("{'descr': '|u1', 'fortran_order': False, 'shape': (4,), '\xc3\xa9': 1}", four),
               "invalid header: unexpected byte 0xc3 at offset 57 of the header dict"});
  c.push_back({"nul",
               make_npy(std::string("{'descr': '|u1'\0, 'fortran_order': False, 'shape': (4,)}", 57), four),
               "invalid header: unexpected byte 0x00 at offset 15 of the header dict"});
  c.push_back({"escape", make_npy("{'descr': '|u\\x31', 'fortran_order': False, 'shape': (4,)}", four),
               "invalid header: escape sequences are not supported at offset 13 of the header dict"});
  c.push_back({"unterminated",
               make_npy("{'descr': '|u1, 'fortran_order': False, 'shape': (4,)}", four, 1, false),
               "invalid header: expected ',' or '}' at offset 17 of the header dict"});
  c.push_back({"dim_overflow",
               make_npy("{'descr': '|u1', 'fortran_order': False, 'shape': (18446744073709551616,)}", four),
               "invalid header: dimension does not fit in 64 bits at offset 51 of the header dict"});
  c.push_back({"count_overflow",
               make_npy("{'descr': '|u1', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", four),
               "shape's element count overflows 64 bits"});
  c.push_back({"size_overflow",
               make_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904,)}", four),
               "array size overflows"});
  c.push_back({"truncated_data", make_npy(npy_dict("<f4", {2}), four),
               "truncated data: the header describes 8 bytes, the file holds 4"});
  c.push_back(
      {"trailing_data", make_npy(npy_dict("|u1", {2}), four),
       "data size mismatch: the header describes 2 bytes, the file holds 4 (2 unexpected trailing bytes)"});
  c.push_back({"leading_zero", make_npy("{'descr': '|u1', 'fortran_order': False, 'shape': (04,)}", four),
               "invalid header: leading zeros in an integer at offset 51 of the header dict"});
  std::string many = "{'descr': '|u1', 'fortran_order': False, 'shape': (";
  for (int i = 0; i < 65; ++i) many += "1, ";
  c.push_back({"rank65", make_npy(many + ")}", {std::byte{1}}), "shape has more than 64 dimensions"});
  return c;
}

TEST(NpyHostile, EachGivesAClearErrorAndKeepsTheOutput) {
  const scratch_dir dir;
  const auto good = dir / "good.npy";
  write_file(good, make_npy(npy_dict("|u1", {2}), {std::byte{1}, std::byte{2}}));
  const auto out = dir / "out.tgm";
  const std::vector<std::byte> precious = bytes_of("precious existing data");
  for (const hostile_case& c : hostile_cases()) {
    SCOPED_TRACE(c.name);
    write_file(out, precious);
    const auto path = dir / (c.name + ".npy");
    write_file(path, c.bytes);
    const run_result r = run_cli({"convert-npy", good.string(), path.string(), "-o", out.string()});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "error: " + path.string() + ": " + c.message + "\n");
    EXPECT_EQ(read_file(out), precious);
  }
  // No temporary files were left behind.
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos) << entry.path();
  }
}

TEST(NpyHostile, MissingInputFile) {
  const scratch_dir dir;
  const run_result r = run_cli({"convert-npy", (dir / "nope.npy").string(), "-o", (dir / "o.tgm").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "error: io error: file not found: " + (dir / "nope.npy").string() + "\n");
  EXPECT_FALSE(std::filesystem::exists(dir / "o.tgm"));
}

TEST(NpyHostile, EncodeFailureKeepsTheOutput) {
  const scratch_dir dir;
  const std::string le = host_little ? "<" : ">";
  write_file(dir / "nan.npy",
             make_npy(npy_dict(le + "f8", {2}),
                      native_bytes<double>({1.0, std::numeric_limits<double>::quiet_NaN()})));
  write_file(dir / "out.tgm", bytes_of("keep"));
  const std::vector<std::string> base = {"convert-npy", (dir / "nan.npy").string(), "-o",
                                         (dir / "out.tgm").string()};
  const run_result strict = run_cli(base);
  EXPECT_EQ(strict.exit_code, 1);
  EXPECT_NE(strict.err.find("error: encoding error: strict-NaN check"), std::string::npos) << strict.err;
  EXPECT_EQ(read_file(dir / "out.tgm"), bytes_of("keep"));
  // The global option reaches the encoder: the NaN is substituted and
  // masked, the output is replaced, and decoding restores the NaN.
  std::vector<std::string> allowed = base;
  allowed.push_back("--allow-nan");
  const run_result r = run_cli(allowed);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("strict-NaN check"), std::string::npos) << r.err;
  const message m = decode(buffer::map_file(dir / "out.tgm"));
  ASSERT_EQ(m.object(0).element_count<double>(), 2u);
  EXPECT_EQ(m.object(0).data_as<double>()[0], 1.0);
  EXPECT_TRUE(std::isnan(m.object(0).data_as<double>()[1]));
  ASSERT_TRUE(m.object(0).descriptor().masks.has_value());
  EXPECT_NE(m.object(0).descriptor().masks->find("nan"), nullptr);
}

TEST(NpyOutput, ReplacesExistingOutputAtomically) {
  const scratch_dir dir;
  write_file(dir / "a.npy", make_npy(npy_dict("|u1", {1}), {std::byte{9}}));
  write_file(dir / "out.tgm", bytes_of("old content"));
  ASSERT_EQ(run_cli({"convert-npy", (dir / "a.npy").string(), "-o", (dir / "out.tgm").string()}).exit_code,
            0);
  const message m = decode(buffer::map_file(dir / "out.tgm"));
  EXPECT_EQ(static_cast<int>(m.object(0).bytes()[0]), 9);
}

TEST(NpyOutput, UnwritableOutputDirectory) {
  const scratch_dir dir;
  write_file(dir / "a.npy", make_npy(npy_dict("|u1", {1}), {std::byte{9}}));
  const std::string out = (dir / "missing-dir" / "out.tgm").string();
  const run_result r = run_cli({"convert-npy", (dir / "a.npy").string(), "-o", out});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("error: io error: cannot write " + out + ": cannot create temporary file: ", 0), 0u)
      << r.err;
}

// ---- to-npy -----------------------------------------------------------------

TEST(ToNpy, FixtureObjectsInHostOrder) {
  const scratch_dir dir;
  const std::filesystem::path out = dir / "nested" / "deeper";
  const run_result r = run_cli({"to-npy", fixture("multi_object.tgm"), "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, (out / "0_0.npy").string() + "\n" + (out / "0_1.npy").string() + "\n" +
                       (out / "0_2.npy").string() + "\n");
  const std::string o = host_little ? "<" : ">";
  {
    const auto f = read_file(out / "0_0.npy");
    const npy::array a = npy::parse(f);
    EXPECT_EQ(a.hdr.descr, o + "f4");
    EXPECT_EQ(a.hdr.shape, (std::vector<std::uint64_t>{2}));
    const auto want = native_bytes<float>({1.5f, 2.5f});
    EXPECT_TRUE(std::equal(a.data.begin(), a.data.end(), want.begin(), want.end()));
  }
  {
    const auto f = read_file(out / "0_1.npy");
    const npy::array a = npy::parse(f);
    EXPECT_EQ(a.hdr.descr, o + "i8");
    const auto want = native_bytes<std::int64_t>({100, -200, 300});
    EXPECT_TRUE(std::equal(a.data.begin(), a.data.end(), want.begin(), want.end()));
  }
  {
    const auto f = read_file(out / "0_2.npy");
    const npy::array a = npy::parse(f);
    EXPECT_EQ(a.hdr.descr, "|u1");
    const auto want = native_bytes<std::uint8_t>({10, 20, 30, 40, 50});
    EXPECT_TRUE(std::equal(a.data.begin(), a.data.end(), want.begin(), want.end()));
  }
}

TEST(ToNpy, OneFilePerMessageAndObject) {
  const scratch_dir dir;
  const run_result r = run_cli({"to-npy", fixture("streaming-tail.tgm"), "-o", dir.path().string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (int i = 0; i < 10; ++i) {
    const auto f = read_file(dir / (std::to_string(i) + "_0.npy"));
    const npy::array a = npy::parse(f);
    const auto want = native_bytes<float>({float(i), float(i + 1), float(i + 2), float(i + 3)});
    EXPECT_TRUE(std::equal(a.data.begin(), a.data.end(), want.begin(), want.end())) << i;
  }
}

TEST(ToNpy, OverwritesExistingFiles) {
  const scratch_dir dir;
  write_file(dir / "0_0.npy", bytes_of("stale"));
  ASSERT_EQ(run_cli({"to-npy", fixture("simple_f32.tgm"), "-o", dir.path().string()}).exit_code, 0);
  const auto f = read_file(dir / "0_0.npy");
  EXPECT_EQ(npy::parse(f).element_count, 4u);
}

TEST(ToNpy, BitmaskAndBfloat16WrittenRawWithWarnings) {
  const scratch_dir dir;
  const std::vector<std::byte> bits = {std::byte{0xA5}, std::byte{0xC0}};  // 10 bits, MSB-first
  const auto bf = native_bytes<std::uint16_t>({0x3F80, 0xC000, 0x0000});
  std::vector<object_input> objs = {
      {data_object_descriptor::contiguous(dtype::bitmask, {10}), bits},
      {data_object_descriptor::contiguous(dtype::bfloat16, {3}), bf},
  };
  const std::vector<std::byte> msg = encode(global_metadata{}, objs);
  write_file(dir / "in.tgm", msg);
  const auto out = dir / "out";
  const run_result r = run_cli({"to-npy", (dir / "in.tgm").string(), "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string in = (dir / "in.tgm").string();
  EXPECT_EQ(r.err, "warning: " + in +
                       ": message 0 object 0: bitmask of 10 bits written as packed uint8 bytes to 0_0.npy\n"
                       "warning: " +
                       in + ": message 0 object 1: bfloat16 written as raw uint16 bit patterns to 0_1.npy\n");
  const auto f0 = read_file(out / "0_0.npy");
  const npy::array a0 = npy::parse(f0);
  EXPECT_EQ(a0.hdr.descr, "|u1");
  EXPECT_EQ(a0.hdr.shape, (std::vector<std::uint64_t>{2}));
  EXPECT_TRUE(std::equal(a0.data.begin(), a0.data.end(), bits.begin(), bits.end()));
  const auto f1 = read_file(out / "0_1.npy");
  const npy::array a1 = npy::parse(f1);
  EXPECT_EQ(a1.hdr.descr, std::string(host_little ? "<" : ">") + "u2");
  EXPECT_EQ(a1.hdr.shape, (std::vector<std::uint64_t>{3}));
  EXPECT_TRUE(std::equal(a1.data.begin(), a1.data.end(), bf.begin(), bf.end()));
}

TEST(ToNpy, Errors) {
  const scratch_dir dir;
  const run_result missing = run_cli({"to-npy", (dir / "nope.tgm").string(), "-o", (dir / "o").string()});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err, "error: io error: file not found: " + (dir / "nope.tgm").string() + "\n");
  EXPECT_FALSE(std::filesystem::exists(dir / "o"));

  write_file(dir / "plain", bytes_of("x"));
  const run_result not_dir = run_cli({"to-npy", fixture("simple_f32.tgm"), "-o", (dir / "plain").string()});
  EXPECT_EQ(not_dir.exit_code, 1);
  EXPECT_EQ(not_dir.err.rfind("error: ", 0), 0u);
  EXPECT_EQ(read_file(dir / "plain"), bytes_of("x"));
}

TEST(ToNpy, FileWithoutMessagesWritesNothing) {
  const scratch_dir dir;
  write_file(dir / "junk.tgm", bytes_of("no messages here"));
  const run_result r = run_cli({"to-npy", (dir / "junk.tgm").string(), "-o", (dir / "o").string()});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(std::filesystem::is_directory(dir / "o"));
  EXPECT_TRUE(std::filesystem::is_empty(dir / "o"));
}

}  // namespace
}  // namespace tensogram::cli::test

namespace tensogram::cli::test {
namespace {

// Objects the reference wrote with zfp/sz3 on other dtypes (spec 03 §3.3):
// to-npy writes the reference decoder's bytes (the xxh3 its decoder gave,
// fixtures/tgm-reference-lossy/expected.json), flat where they do not fill
// the shape, and says on stderr that they are reinterpreted float64.
TEST(ToNpyReferenceLossy, WritesTheReferenceDecodersBytes) {
  struct expected_object {
    const char* file;
    const char* xxh3;
    std::vector<std::uint64_t> shape;
  };
  const std::vector<expected_object> objects{
      {"float32__zfp_rate16.tgm", "9f818e358e8016a9", {1920}},  // 8·960 bytes as float32
      {"int16__zfp_acc1e-3.tgm", "c2031ffdf05f3394", {3840}},
      {"complex128__zfp_acc1e-3.tgm", "fb74a197ee10b4fa", {480}},
      {"uint8__2x3x4x5__zfp_rate16.tgm", "61878d0ce7605492", {960}},
      {"float32__sz3_abs1e-3__big.tgm", "b6c7e92fd0d8fe72", {24, 40}},  // sz3: N·W bytes, shape kept
      {"float64__mixed__sz3_abs1e-3__big.tgm", "c38ba539bfe267dc", {24, 40}},
  };
  for (const expected_object& o : objects) {
    scratch_dir dir;
    const std::string input = std::string(TENSOGRAM_FIXTURES) + "/tgm-reference-lossy/" + o.file;
    const run_result r = run_cli({"to-npy", input, "-o", dir.path().string()});
    ASSERT_EQ(r.exit_code, 0) << o.file << ": " << r.err;
    const bool flagged = std::string(o.file).rfind("float64", 0) != 0;
    EXPECT_EQ(r.err.find("reinterpreted float64") != std::string::npos, flagged) << o.file << ": " << r.err;
    const std::vector<std::byte> file = read_file(dir.path() / "0_0.npy");
    const npy::array a = npy::parse(file);
    EXPECT_EQ(a.hdr.shape, o.shape) << o.file;
    EXPECT_EQ(compute_hash(reinterpret_cast<const std::uint8_t*>(a.data.data()), a.data.size()), o.xxh3)
        << o.file;
  }
}

// A damaged sz3 stream: the error names the file, message and object.
TEST(ToNpyReferenceLossy, DamagedStreamNamesTheObject) {
  scratch_dir dir;
  std::vector<std::byte> file =
      read_file(std::string(TENSOGRAM_FIXTURES) + "/tgm-reference-lossy/float32__sz3_abs1e-3__big.tgm");
  const std::array<std::byte, 4> magic{std::byte{0x10}, std::byte{0xF3}, std::byte{0x42}, std::byte{0xF3}};
  const auto at = std::search(file.begin(), file.end(), magic.begin(), magic.end());
  ASSERT_NE(at, file.end());
  std::fill(at + 20, at + 40, std::byte{0});  // inside the zstd frame header
  const auto damaged = dir.path() / "damaged.tgm";
  write_file(damaged, file);
  const run_result r = run_cli({"to-npy", damaged.string(), "-o", (dir.path() / "out").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("damaged.tgm: message 0 object 0: encoding error: sz3:"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tensogram::cli::test

// The safetensors base layer (spec 06 §2, §3.5, §8.2, §9).
#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <array>
#include <complex>
#include <cstring>
#include <filesystem>
#include <memory>
#include <metatensor.hpp>
#include <optional>
#include <random>
#include <string>
#include <tensogram/io/file.hpp>
#include <vector>

namespace st = metatensor::safetensors;
using metatensor::errc;

namespace {

std::vector<std::byte> to_bytes(std::string_view s) {
  std::vector<std::byte> out(s.size());
  if (!s.empty()) std::memcpy(out.data(), s.data(), s.size());
  return out;
}

// A file built byte by byte from the safetensors rules: u64 LE header
// length, the header, the data section.
std::vector<std::byte> raw_file(std::string_view header, std::string_view data = {},
                                std::optional<std::uint64_t> n = std::nullopt) {
  const std::uint64_t len = n.value_or(header.size());
  std::vector<std::byte> out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::byte>((len >> (8 * i)) & 0xFF));
  const auto h = to_bytes(header);
  const auto d = to_bytes(data);
  out.insert(out.end(), h.begin(), h.end());
  out.insert(out.end(), d.begin(), d.end());
  return out;
}

st::file open_bytes(const std::vector<std::byte>& bytes) {
  return st::file::from_buffer(tensogram::buffer::owned(bytes));
}

// The error name reported for `bytes`, or "valid".
std::string verdict(const std::vector<std::byte>& bytes) {
  try {
    (void)open_bytes(bytes);
    return "valid";
  } catch (const metatensor::error& e) {
    return std::string(metatensor::errc_name(e.kind()));
  }
}

std::string entry(std::string_view dtype, std::string_view shape, std::string_view offsets) {
  return "{\"dtype\":\"" + std::string(dtype) + "\",\"shape\":" + std::string(shape) +
         ",\"data_offsets\":" + std::string(offsets) + "}";
}

TEST(SafetensorsDtype, AllTwentyTwoNamesAndWidths) {
  const std::array<std::pair<const char*, unsigned>, 22> expected{{
      {"BOOL", 8},        {"U8", 8},   {"I8", 8},      {"U16", 16},    {"I16", 16},    {"U32", 32},
      {"I32", 32},        {"U64", 64}, {"I64", 64},    {"F16", 16},    {"BF16", 16},   {"F32", 32},
      {"F64", 64},        {"C64", 64}, {"F8_E4M3", 8}, {"F8_E5M2", 8}, {"F8_E8M0", 8}, {"F8_E4M3FNUZ", 8},
      {"F8_E5M2FNUZ", 8}, {"F4", 4},   {"F6_E2M3", 6}, {"F6_E3M2", 6},
  }};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const auto t = static_cast<st::dtype>(i);
    EXPECT_EQ(st::dtype_name(t), expected[i].first);
    EXPECT_EQ(st::dtype_bits(t), expected[i].second);
    EXPECT_EQ(st::parse_dtype(expected[i].first), t);
  }
  EXPECT_FALSE(st::parse_dtype("f32"));
  EXPECT_FALSE(st::parse_dtype("F32 "));
  EXPECT_EQ(st::dtype_alignment(st::dtype::c64), 4u);
  EXPECT_EQ(st::to_tensogram(st::dtype::bf16), tensogram::dtype::bfloat16);
  EXPECT_EQ(st::from_tensogram(tensogram::dtype::complex64), st::dtype::c64);
  EXPECT_FALSE(st::to_tensogram(st::dtype::boolean));
  EXPECT_FALSE(st::from_tensogram(tensogram::dtype::complex128));
}

// A plain safetensors file as another tool writes it: unpadded header,
// entries out of offset order, unaligned data (spec 06 §13 base layer).
TEST(SafetensorsRead, HandBuiltPlainFile) {
  const std::string header = "{\"weight\":" + entry("F32", "[2]", "[2,10]") +
                             ",\"bias\":" + entry("I16", "[]", "[0,2]") +
                             ",\"__metadata__\":{\"format\":\"pt\"}}";
  std::string data;
  const std::int16_t bias = -3;
  data.append(reinterpret_cast<const char*>(&bias), 2);
  const float w[2] = {1.5f, -2.25f};
  data.append(reinterpret_cast<const char*>(w), 8);
  const auto f = open_bytes(raw_file(header, data));
  ASSERT_EQ(f.tensors().size(), 2u);
  EXPECT_EQ(f.tensors()[0].name(), "bias");  // file order
  EXPECT_EQ(f.header_length(), header.size());
  EXPECT_TRUE(f.has_metadata());
  EXPECT_EQ(f.metadata().at("format"), "pt");
  const auto& wt = f.at("weight");
  EXPECT_EQ(wt.type(), st::dtype::f32);
  ASSERT_EQ(wt.shape().size(), 1u);
  EXPECT_EQ(wt.shape()[0], 2u);
  EXPECT_EQ(wt.begin(), 2u);
  EXPECT_EQ(wt.bytes().size(), 8u);
  EXPECT_EQ(wt.copy_as<float>(), (std::vector<float>{1.5f, -2.25f}));
  const auto& b = f.at("bias");
  EXPECT_TRUE(b.shape().empty());
  EXPECT_EQ(b.element_count(), 1u);
  EXPECT_EQ(b.copy_as<std::int16_t>(), std::vector<std::int16_t>{-3});
  EXPECT_EQ(f.find("nope"), nullptr);
  EXPECT_THROW((void)f.at("nope"), tensogram::invalid_arg_error);
  // Wrong element type is refused.
  EXPECT_THROW((void)wt.as<double>(), tensogram::invalid_arg_error);
  EXPECT_THROW((void)wt.copy_as<std::int32_t>(), tensogram::invalid_arg_error);
}

// `__metadata__` lives in storage the copies of a file share: a value read
// with `metadata_value` is the file's own string (no copy) and outlives the
// file (issue 27: a metatensor file's schema is tens of MB).
TEST(SafetensorsRead, MetadataIsSharedNotCopied) {
  const std::string long_value(100'000, 'x');
  const std::string header = "{\"w\":" + entry("U8", "[2]", "[0,2]") +
                             ",\"__metadata__\":{\"format\":\"pt\",\"long\":\"" + long_value + "\"}}";
  std::shared_ptr<const std::string> value;
  {
    const auto f = open_bytes(raw_file(header, "ab"));
    value = f.metadata_value("long");
    ASSERT_NE(value, nullptr);
    EXPECT_EQ(value.get(), &f.metadata().at("long"));
    const st::file copy = f;  // NOLINT(performance-unnecessary-copy-initialization): the copy is the point
    EXPECT_EQ(&copy.metadata(), &f.metadata());
    EXPECT_EQ(f.metadata_value("absent"), nullptr);
    EXPECT_EQ(*f.metadata_value("format"), "pt");
  }
  EXPECT_EQ(*value, long_value);  // the file and its copy are gone
}

TEST(SafetensorsRead, MisalignedTypedViewIsRefusedCopyWorks) {
  // The F32 tensor begins at data offset 1: D + 1 is odd in an owned buffer
  // whose base is 16-aligned.
  const std::string header =
      "{\"a\":" + entry("U8", "[1]", "[0,1]") + ",\"b\":" + entry("F32", "[1]", "[1,5]") + "}";
  std::string data(1, '\x07');
  const float v = 3.0f;
  data.append(reinterpret_cast<const char*>(&v), 4);
  const auto f = open_bytes(raw_file(header, data));
  const auto& b = f.at("b");
  if (!b.aligned_for<float>()) {
    EXPECT_THROW((void)b.as<float>(), tensogram::invalid_arg_error);
  }
  EXPECT_EQ(b.copy_as<float>(), std::vector<float>{3.0f});
  EXPECT_EQ(f.at("a").as<std::uint8_t>()[0], 7u);
}

TEST(SafetensorsRead, AcceptedLeniencies) {
  const std::string z = entry("F32", "[0]", "[4,4]");
  // Leading and trailing whitespace, unpadded header, zero-size tensors at a
  // shared boundary, out-of-order entries, empty tensor name, null metadata.
  EXPECT_EQ(verdict(raw_file(" \t\r\n{\"a\":" + entry("U8", "[4]", "[0,4]") + "} \n", "abcd")), "valid");
  EXPECT_EQ(verdict(raw_file("{\"b\":" + entry("U8", "[2]", "[4,6]") + ",\"z1\":" + z + ",\"z2\":" + z +
                                 ",\"a\":" + entry("U8", "[4]", "[0,4]") + "}",
                             "abcdef")),
            "valid");
  EXPECT_EQ(verdict(raw_file("{\"\":" + entry("U8", "[1]", "[0,1]") + ",\"__metadata__\":null}", "x")),
            "valid");
  EXPECT_EQ(verdict(raw_file("{}")), "valid");
  EXPECT_EQ(verdict(raw_file("{\"z\":" + entry("F32", "[0,3]", "[0,0]") + "}")), "valid");
}

struct bad_case {
  const char* what;
  std::vector<std::byte> bytes;
  const char* expected;
};

TEST(SafetensorsRead, EachRuleViolationHasItsNamedError) {
  const std::string u8x4 = entry("U8", "[4]", "[0,4]");
  std::vector<bad_case> cases = {
      {"7 bytes", std::vector<std::byte>(7), "ST_HEADER_TOO_SMALL"},
      {"empty", {}, "ST_HEADER_TOO_SMALL"},
      {"N too large", raw_file("{}", "", 100'000'001), "ST_HEADER_TOO_LARGE"},
      {"N huge", raw_file("{}", "", UINT64_MAX), "ST_HEADER_TOO_LARGE"},
      {"N past end", raw_file("{}", "", 3), "ST_HEADER_LENGTH"},
      {"invalid byte", raw_file("{\"a\xff\":" + u8x4 + "}", "abcd"), "ST_HEADER_UTF8"},
      {"overlong", raw_file("{\"a\xc0\x80\":" + u8x4 + "}", "abcd"), "ST_HEADER_UTF8"},
      {"surrogate", raw_file("{\"a\xed\xa0\x80\":" + u8x4 + "}", "abcd"), "ST_HEADER_UTF8"},
      {"truncated seq", raw_file("{}\xe2\x82"), "ST_HEADER_UTF8"},
      {"BOM", raw_file("\xef\xbb\xbf{}"), "ST_HEADER_JSON"},
      {"trailing NUL", raw_file(std::string("{}\0", 3)), "ST_HEADER_JSON"},
      {"NUL then garbage", raw_file(std::string("{}\0xyz", 6)), "ST_HEADER_JSON"},
      {"NUL in a string", raw_file(std::string("{\"a\0\":1}", 8)), "ST_HEADER_JSON"},
      {"deep unbalanced", raw_file(std::string(1'000'000, '[')), "ST_HEADER_JSON"},
      {"deep balanced", raw_file(std::string(1'000'000, '[') + std::string(1'000'000, ']')), "MT_LIMIT"},
      {"deep in an entry",
       raw_file("{\"a\":{\"dtype\":" + std::string(65, '[') + std::string(65, ']') +
                    ",\"shape\":[],\"data_offsets\":[0,1]}}",
                "x"),
       "MT_LIMIT"},
      {"dup in a deep object", raw_file("{\"a\":{\"dtype\":{\"x\":1,\"x\":2}}}"), "ST_DUPLICATE_KEY"},
      {"empty header", raw_file(""), "ST_HEADER_JSON"},
      {"two values", raw_file("{} {}"), "ST_HEADER_JSON"},
      {"comment", raw_file("{}/**/"), "ST_HEADER_JSON"},
      {"not object", raw_file("[]"), "ST_HEADER_JSON"},
      {"bad json with dup", raw_file("{\"a\":1,\"a\":2"), "ST_HEADER_JSON"},
      {"dup tensor", raw_file("{\"a\":" + u8x4 + ",\"a\":" + u8x4 + "}", "abcd"), "ST_DUPLICATE_KEY"},
      {"dup metadata key", raw_file("{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}"), "ST_DUPLICATE_KEY"},
      {"dup __metadata__", raw_file("{\"__metadata__\":{},\"__metadata__\":{}}"), "ST_DUPLICATE_KEY"},
      {"dup field",
       raw_file("{\"a\":{\"dtype\":\"U8\",\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}}", "abcd"),
       "ST_DUPLICATE_KEY"},
      {"metadata number", raw_file("{\"__metadata__\":{\"k\":1}}"), "ST_METADATA"},
      {"metadata string", raw_file("{\"__metadata__\":\"x\"}"), "ST_METADATA"},
      {"metadata nested", raw_file("{\"__metadata__\":{\"k\":{}}}"), "ST_METADATA"},
      {"entry string", raw_file("{\"a\":\"x\"}"), "ST_ENTRY"},
      {"entry extra field",
       raw_file("{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4],\"x\":1}}", "abcd"),
       "ST_ENTRY"},
      {"entry missing field", raw_file("{\"a\":{\"dtype\":\"U8\",\"shape\":[4]}}", "abcd"), "ST_ENTRY"},
      {"rule 5 before rule 6", raw_file("{\"a\":" + entry("X", "[4]", "[0,4]") + ",\"b\":{}}", "abcd"),
       "ST_ENTRY"},
      {"lowercase dtype", raw_file("{\"a\":" + entry("u8", "[4]", "[0,4]") + "}", "abcd"), "ST_DTYPE"},
      {"numeric dtype", raw_file("{\"a\":{\"dtype\":8,\"shape\":[4],\"data_offsets\":[0,4]}}", "abcd"),
       "ST_DTYPE"},
      {"negative dim", raw_file("{\"a\":" + entry("U8", "[-4]", "[0,4]") + "}", "abcd"), "ST_ENTRY"},
      {"fraction dim", raw_file("{\"a\":" + entry("U8", "[4.0]", "[0,4]") + "}", "abcd"), "ST_ENTRY"},
      {"exponent offset", raw_file("{\"a\":" + entry("U8", "[4]", "[0,4e0]") + "}", "abcd"), "ST_ENTRY"},
      {"shape not array", raw_file("{\"a\":" + entry("U8", "4", "[0,4]") + "}", "abcd"), "ST_ENTRY"},
      {"dim above 2^53-1", raw_file("{\"a\":" + entry("U8", "[9007199254740992,0]", "[0,0]") + "}"),
       "ST_ENTRY"},
      {"offset above 2^53-1",
       raw_file("{\"a\":" + entry("U8", "[0]", "[9007199254740992,9007199254740992]") + "}"), "ST_ENTRY"},
      {"one offset", raw_file("{\"a\":" + entry("U8", "[4]", "[4]") + "}", "abcd"), "ST_ENTRY"},
      {"three offsets", raw_file("{\"a\":" + entry("U8", "[4]", "[0,4,4]") + "}", "abcd"), "ST_ENTRY"},
      {"rank 33",
       raw_file(
           "{\"a\":" +
               entry("U8", "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]", "[0,1]") +
               "}",
           "a"),
       "MT_LIMIT"},
      {"begin > end", raw_file("{\"a\":" + entry("U8", "[4]", "[4,0]") + "}", "abcd"), "ST_OFFSETS"},
      {"sub-byte F4", raw_file("{\"a\":" + entry("F4", "[3]", "[0,1]") + "}", "a"), "ST_SUBBYTE"},
      {"sub-byte F6", raw_file("{\"a\":" + entry("F6_E2M3", "[1]", "[0,1]") + "}", "a"), "ST_SUBBYTE"},
      {"size mismatch", raw_file("{\"a\":" + entry("F32", "[2]", "[0,4]") + "}", "abcd"), "ST_SIZE_MISMATCH"},
      {"overflow",
       raw_file("{\"a\":" + entry("U8", "[4503599627370496,4503599627370496]", "[0,4]") + "}", "abcd"),
       "ST_OVERFLOW"},
      {"overflow before zero",
       raw_file("{\"a\":" + entry("U8", "[4503599627370496,4503599627370496,0]", "[0,0]") + "}"),
       "ST_OVERFLOW"},
      {"overflow in bits",
       raw_file("{\"a\":" + entry("F64", "[4503599627370496,4096]", "[0,4]") + "}", "abcd"), "ST_OVERFLOW"},
      {"first not at 0", raw_file("{\"a\":" + entry("U8", "[4]", "[1,5]") + "}", "abcde"), "ST_OFFSETS"},
      {"hole", raw_file("{\"a\":" + u8x4 + ",\"b\":" + entry("U8", "[2]", "[5,7]") + "}", "abcdefg"),
       "ST_OFFSETS"},
      {"overlap", raw_file("{\"a\":" + u8x4 + ",\"b\":" + entry("U8", "[2]", "[3,5]") + "}", "abcde"),
       "ST_OFFSETS"},
      {"zero-size inside a tensor",
       raw_file("{\"a\":" + u8x4 + ",\"z\":" + entry("U8", "[0]", "[2,2]") + "}", "abcd"), "ST_OFFSETS"},
      {"trailing byte", raw_file("{\"a\":" + u8x4 + "}", "abcde"), "ST_INCOMPLETE"},
      {"missing data", raw_file("{\"a\":" + u8x4 + "}", "abc"), "ST_INCOMPLETE"},
      {"no tensors, data", raw_file("{}", "x"), "ST_INCOMPLETE"},
      {"offsets past the file", raw_file("{\"a\":" + entry("U8", "[1000]", "[0,1000]") + "}", "ab"),
       "ST_INCOMPLETE"},
  };
  for (const auto& c : cases) EXPECT_EQ(verdict(c.bytes), c.expected) << c.what;
}

TEST(SafetensorsRead, ErrorMessageSaysWhatAndWhere) {
  try {
    (void)open_bytes(raw_file("{\"w\":" + entry("F32", "[2]", "[0,4]") + "}", "abcd"));
    FAIL() << "no error";
  } catch (const metatensor::error& e) {
    EXPECT_EQ(e.kind(), errc::st_size_mismatch);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("ST_SIZE_MISMATCH"), std::string::npos) << msg;
    EXPECT_NE(msg.find("\"w\""), std::string::npos) << msg;
    EXPECT_EQ(e.code(), TGM_ERROR_FRAMING);
  }
}

// Every dtype round trips, with a normal, a zero-size and (where the size
// is whole bytes) a rank-0 tensor each, through the canonical writer.
TEST(SafetensorsWrite, RoundTripEveryDtype) {
  std::vector<std::vector<std::byte>> storage;
  std::vector<st::tensor_input> inputs;
  for (std::size_t i = 0; i < st::dtype_count; ++i) {
    const auto t = static_cast<st::dtype>(i);
    const std::string name(st::dtype_name(t));
    const std::size_t bytes = 8 * st::dtype_bits(t) / 8;  // shape [2,4]
    auto& buf = storage.emplace_back(bytes);
    for (std::size_t k = 0; k < bytes; ++k) buf[k] = static_cast<std::byte>((k * 37 + i) & 0xFF);
    inputs.push_back({name, t, {2, 4}, buf});
    inputs.push_back({name + ".empty", t, {3, 0}, {}});
    if (st::dtype_bits(t) % 8 == 0) {
      auto& s = storage.emplace_back(st::dtype_bits(t) / 8, std::byte{0x5A});
      inputs.push_back({name + ".scalar", t, {}, s});
    }
  }
  const std::map<std::string, std::string> meta{{"z", "last"}, {"a", "first \"quoted\" \xc3\xa9"}};
  const auto image = st::serialize(inputs, meta);
  EXPECT_EQ(static_cast<char>(image[8]), '{');
  const auto f = open_bytes(image);
  EXPECT_EQ(f.data_offset() % 64, 0u);
  EXPECT_EQ(f.metadata(), meta);
  EXPECT_EQ(f.tensors().size(), inputs.size());
  for (const auto& in : inputs) {
    const auto* t = f.find(in.name);
    ASSERT_NE(t, nullptr) << in.name;
    EXPECT_EQ(t->type(), in.type) << in.name;
    EXPECT_EQ(std::vector<std::uint64_t>(t->shape().begin(), t->shape().end()), in.shape) << in.name;
    EXPECT_TRUE(std::equal(t->bytes().begin(), t->bytes().end(), in.data.begin(), in.data.end())) << in.name;
    // Canonical order makes every tensor naturally aligned (§3.5).
    EXPECT_EQ((f.data_offset() + t->begin()) % st::dtype_alignment(t->type()), 0u) << in.name;
  }
  // Typed zero-copy views on the aligned output.
  EXPECT_EQ(f.at("F32").as<float>().size(), 8u);
  EXPECT_EQ(f.at("C64").as<std::complex<float>>().size(), 8u);
  EXPECT_EQ(f.at("F64.scalar").as<double>().size(), 1u);
  EXPECT_TRUE(f.at("I64.empty").as<std::int64_t>().empty());
  EXPECT_EQ(f.at("BF16").as<std::uint16_t>().size(), 8u);
  EXPECT_THROW((void)f.at("F4").as<std::uint8_t>(), tensogram::invalid_arg_error);
}

TEST(SafetensorsWrite, CanonicalFormIsExactAndOrderIndependent) {
  const std::array<std::byte, 2> b16{std::byte{1}, std::byte{2}};
  const std::array<std::byte, 8> b64{};
  std::vector<st::tensor_input> in1 = {
      {"b", st::dtype::u8, {2}, b16}, {"a", st::dtype::u8, {2}, b16}, {"w", st::dtype::f64, {1}, b64}};
  std::vector<st::tensor_input> in2 = {in1[2], in1[0], in1[1]};
  const std::map<std::string, std::string> meta{{"b", "2"}, {"a", "1"}};
  const auto x = st::serialize(in1, meta);
  EXPECT_EQ(x, st::serialize(in2, meta));
  const std::string expected_header =
      "{\"__metadata__\":{\"a\":\"1\",\"b\":\"2\"},"
      "\"w\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]},"
      "\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[8,10]},"
      "\"b\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[10,12]}}";
  const auto f = open_bytes(x);
  const std::string header(f.header_text());
  ASSERT_EQ(header.substr(0, expected_header.size()), expected_header);
  EXPECT_EQ(header.find_first_not_of(' ', expected_header.size()), std::string::npos);
  EXPECT_EQ((8 + header.size()) % 64, 0u);
  EXPECT_LT(header.size() - expected_header.size(), 64u);
  // Unpadded and always-metadata options.
  const auto y = st::serialize(in1, {}, {.header_alignment = 1, .always_write_metadata = true});
  EXPECT_EQ(std::string(open_bytes(y).header_text()).substr(0, 18), "{\"__metadata__\":{}");
  EXPECT_EQ(static_cast<char>(y[8 + open_bytes(y).header_length() - 1]), '}');
}

TEST(SafetensorsWrite, BadInputIsRefused) {
  const std::array<std::byte, 4> d{};
  using v = std::vector<st::tensor_input>;
  EXPECT_THROW((void)st::serialize(v{{"a", st::dtype::f32, {2}, d}}), tensogram::invalid_arg_error);
  EXPECT_THROW((void)st::serialize(v{{"__metadata__", st::dtype::u8, {4}, d}}), tensogram::invalid_arg_error);
  EXPECT_THROW((void)st::serialize(v{{"a", st::dtype::u8, {4}, d}, {"a", st::dtype::u8, {4}, d}}),
               tensogram::invalid_arg_error);
  EXPECT_THROW((void)st::serialize(v{{"a", st::dtype::f4, {1}, {}}}), tensogram::invalid_arg_error);
  EXPECT_THROW((void)st::serialize(v{{"\xff", st::dtype::u8, {4}, d}}), tensogram::invalid_arg_error);
  EXPECT_THROW((void)st::serialize(v{}, {{"k", "\xc0\x80"}}), tensogram::invalid_arg_error);
  EXPECT_THROW((void)st::serialize(v{}, {}, {.header_alignment = 3}), tensogram::invalid_arg_error);
}

TEST(SafetensorsFile, WriteAtomicallyAndOpenByMmap) {
  const auto dir = std::filesystem::temp_directory_path() / ("mt_st_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "x.safetensors";
  const std::array<float, 3> v{1.f, 2.f, 3.f};
  const std::vector<st::tensor_input> in = {{"v", st::dtype::f32, {3}, std::as_bytes(std::span(v))}};
  st::write_file(path, in, {{"k", "v"}});
  {
    const auto f = st::file::open(path);
    const auto s = f.at("v").as<float>();
    EXPECT_EQ(std::vector<float>(s.begin(), s.end()), std::vector<float>(v.begin(), v.end()));
    EXPECT_EQ(f.image().size(), std::filesystem::file_size(path));
  }
  // Errors from open name the path.
  {
    auto bytes = raw_file("{}", "x");
    tensogram::write_file_atomically(path, bytes);
    try {
      (void)st::file::open(path);
      ADD_FAILURE() << "no error";
    } catch (const metatensor::error& e) {
      EXPECT_EQ(e.kind(), errc::st_incomplete);
      EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW((void)st::file::open(dir / "missing"), tensogram::io_error);
  std::filesystem::remove_all(dir);
}

// Every view of an accepted image lies inside it and matches its entry.
void check_views(const st::file& f) {
  const auto img = f.image();
  std::uint64_t pos = 0;
  for (const auto& t : f.tensors()) {
    EXPECT_EQ(t.begin(), pos);
    pos = t.end();
    ASSERT_GE(t.bytes().data(), img.data());
    ASSERT_LE(t.bytes().data() + t.bytes().size(), img.data() + img.size());
    std::uint64_t n = 1;
    for (auto d : t.shape()) n *= d;
    EXPECT_EQ(n * st::dtype_bits(t.type()) / 8, t.bytes().size());
  }
  EXPECT_EQ(f.data_offset() + pos, img.size());
}

std::vector<std::byte> small_valid_file() {
  const std::array<std::byte, 6> d{std::byte{1}, std::byte{2}, std::byte{3},
                                   std::byte{4}, std::byte{5}, std::byte{6}};
  const std::vector<st::tensor_input> in = {{"a", st::dtype::u16, {2}, std::span(d).first(4)},
                                            {"b", st::dtype::i8, {2}, std::span(d).subspan(4)},
                                            {"e", st::dtype::f32, {0}, {}},
                                            {"f", st::dtype::f4, {2}, std::span(d).first(1)}};
  return st::serialize(in, {{"k", "v"}}, {.header_alignment = 8});
}

TEST(SafetensorsRobustness, TruncationAtEveryByte) {
  const auto full = small_valid_file();
  ASSERT_EQ(verdict(full), "valid");
  for (std::size_t n = 0; n < full.size(); ++n) {
    const std::vector<std::byte> cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_NE(verdict(cut), "valid") << "truncated to " << n;
  }
}

TEST(SafetensorsRobustness, BitFlipSweep) {
  const auto full = small_valid_file();
  std::size_t accepted = 0;
  for (std::size_t i = 0; i < full.size() * 8; ++i) {
    auto bytes = full;
    bytes[i / 8] ^= static_cast<std::byte>(1u << (i % 8));
    try {
      const auto f = open_bytes(bytes);
      check_views(f);
      ++accepted;
    } catch (const metatensor::error&) {
      // a typed error is a correct outcome
    }
  }
  // Flips in the data section and in padding-free names keep the file valid.
  EXPECT_GT(accepted, 0u);
}

// Names as the header writes them: long with a shared prefix (as in large
// models), escaped ones (quote, backslash, \u escape), and names that also
// occur as strings inside earlier entries ("F32", "dtype", "shape").
struct named_tensor {
  std::string name;  // as read
  std::string text;  // as written in the header
};

std::vector<named_tensor> many_names(std::size_t count) {
  std::vector<named_tensor> out;
  for (std::size_t i = 0; i < count; ++i) {
    std::string n = "model.encoder.layers.block.attention.projection.weight." + std::to_string(i) + ".";
    n += std::string(200, static_cast<char>('a' + i % 26));
    out.push_back({n, n});
  }
  out.push_back({"F32", "F32"});
  out.push_back({"dtype", "dtype"});
  out.push_back({"shape", "shape"});
  out.push_back({"q\"uote", "q\\\"uote"});
  out.push_back({"back\\slash", "back\\\\slash"});
  out.push_back({"uA.esc", "u\\u0041.esc"});
  out.push_back({"", ""});
  return out;
}

// A file with `names` listed in `text_order`, tensor k (in `names`) holding
// U8 bytes [k, k + 1) of the data section, whose byte k is k % 251, and a
// long `__metadata__` string with escapes ahead of them; `note` adds a
// metadata entry (one with ",-0" sends the header the reference way).
std::vector<std::byte> file_of(const std::vector<named_tensor>& names,
                               const std::vector<std::size_t>& text_order, const std::string& note) {
  std::string header = "{\"__metadata__\":{\"long\":\"";
  for (int i = 0; i < 2000; ++i) header += "\\\"escaped\\\" \\u00e9l\\u00e8ve \\n ";
  header += "\",\"note\":\"" + note + "\"}";
  for (const std::size_t k : text_order) {
    header += ",\"" + names[k].text +
              "\":" + entry("U8", "[1]", "[" + std::to_string(k) + "," + std::to_string(k + 1) + "]");
  }
  header += "}";
  std::string data;
  for (std::size_t k = 0; k < names.size(); ++k) data += static_cast<char>(k % 251);
  return raw_file(header, data);
}

// Every name is found, views its own bytes, and survives the file it was
// read from (a copy shares the name tables, as it shares the image).
void check_names(const std::vector<named_tensor>& names, const std::vector<std::byte>& bytes) {
  std::optional<st::file> copy;
  {
    const auto f = open_bytes(bytes);
    copy = f;
  }
  const st::file& f = *copy;
  ASSERT_EQ(f.tensors().size(), names.size());
  for (std::size_t k = 0; k < names.size(); ++k) {
    const auto* t = f.find(names[k].name);
    ASSERT_NE(t, nullptr) << names[k].name;
    EXPECT_EQ(t->name(), names[k].name);
    EXPECT_EQ(t->begin(), k);
    EXPECT_EQ(std::to_integer<std::size_t>(t->bytes()[0]), k % 251);
    ASSERT_EQ(t->shape().size(), 1u);
    EXPECT_EQ(t->shape()[0], 1u);
    EXPECT_EQ(f.tensors()[k].name(), names[k].name);  // file order is data order
  }
  EXPECT_EQ(f.find(names[0].name + "x"), nullptr);
  EXPECT_EQ(f.find(names[0].name.substr(0, names[0].name.size() - 1)), nullptr);
}

TEST(SafetensorsRead, ManyLongEscapedAndRepeatedNamesInAnyOrder) {
  const auto names = many_names(3000);
  std::vector<std::size_t> order(names.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::mt19937 rng(27);
  for (const bool shuffled : {false, true}) {
    if (shuffled) std::shuffle(order.begin(), order.end(), rng);
    SCOPED_TRACE(shuffled ? "shuffled" : "data order");
    check_names(names, file_of(names, order, "plain"));
    check_names(names, file_of(names, order, "a,-0"));  // the reference path
  }
}

TEST(SafetensorsRead, DuplicateLongNameFarApartIsNamed) {
  const auto names = many_names(3000);
  std::vector<std::size_t> order(names.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  for (const std::size_t twin : {std::size_t{0}, std::size_t{1500}, names.size() - 1}) {
    auto dup = names;
    dup[2999] = dup[twin == 2999 ? 0 : twin];
    try {
      (void)open_bytes(file_of(dup, order, "plain"));
      ADD_FAILURE() << "accepted a duplicate of " << twin;
    } catch (const metatensor::error& e) {
      EXPECT_EQ(e.kind(), errc::st_duplicate_key) << e.what();
    }
  }
}

}  // namespace

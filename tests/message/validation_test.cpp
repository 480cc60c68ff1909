// Encode-time validation (spec 02 §3.3, §13), non-finite input (spec 02 §9),
// pipeline names (spec 02 §4.1) and allocation failures (spec 01 §19.1).
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <tensogram.hpp>
#include "test_support.hpp"

namespace {

namespace tg = tensogram;
namespace cbor = tensogram::cbor;
using tg::dtype;
using tgtest::bytes;

tg::encode_options fixed_options() {
  tg::encode_options o;
  o.fixed_provenance = tgtest::test_provenance();
  return o;
}

template <typename E>
void expect_encode_error(const tg::global_metadata& meta, const std::vector<tg::object_input>& in,
                         const std::string& fragment, const tg::encode_options& o = fixed_options()) {
  try {
    (void)tg::encode(meta, in, o);
    ADD_FAILURE() << "encode succeeded; expected " << fragment;
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

tg::object_input object(const tg::data_object_descriptor& d, const bytes& data) {
  return {d, data};
}

TEST(EncodeValidation, DescriptorErrorsAreMetadataErrors) {
  const bytes four(4, std::byte{0});
  auto d = tg::data_object_descriptor::contiguous(dtype::float32, {1});
  {
    auto bad = d;
    bad.ndim = 2;
    expect_encode_error<tg::metadata_error>({}, {object(bad, four)}, "ndim 2 does not match shape length 1");
  }
  {
    auto bad = d;
    bad.strides = {1, 1};
    expect_encode_error<tg::metadata_error>({}, {object(bad, four)},
                                            "strides length 2 does not match shape length 1");
  }
  {
    auto bad = d;
    bad.strides = {};
    expect_encode_error<tg::metadata_error>({}, {object(bad, four)}, "strides length 0");
  }
  {
    auto bad = d;
    bad.type = "";
    expect_encode_error<tg::metadata_error>({}, {object(bad, four)}, "type must not be empty");
  }
  {
    const bytes three(3, std::byte{0});
    expect_encode_error<tg::metadata_error>({}, {object(d, three)}, "data length 3 does not match");
    const bytes five(5, std::byte{0});
    expect_encode_error<tg::metadata_error>({}, {object(d, five)}, "data length 5 does not match");
  }
  {
    // Bitmask sizing is ceil(N/8): 9 bits need 2 bytes.
    const auto bm = tg::data_object_descriptor::contiguous(dtype::bitmask, {9});
    const bytes one(1, std::byte{0});
    const bytes two(2, std::byte{0});
    expect_encode_error<tg::metadata_error>({}, {object(bm, one)}, "does not match");
    EXPECT_NO_THROW((void)tg::encode({}, std::vector<tg::object_input>{object(bm, two)}, fixed_options()));
    const auto bm8 = tg::data_object_descriptor::contiguous(dtype::bitmask, {8});
    EXPECT_NO_THROW((void)tg::encode({}, std::vector<tg::object_input>{object(bm8, one)}, fixed_options()));
    expect_encode_error<tg::metadata_error>({}, {object(bm8, two)}, "does not match");
  }
  {
    // Shape product overflow.
    auto bad = tg::data_object_descriptor::contiguous(dtype::uint8, {1ULL << 32, 1ULL << 32});
    expect_encode_error<tg::metadata_error>({}, {object(bad, four)}, "shape product overflow");
    auto big = tg::data_object_descriptor::contiguous(dtype::float64, {1ULL << 61});
    expect_encode_error<tg::metadata_error>({}, {object(big, four)}, "overflows");
  }
  {
    // The error names the offending object.
    auto bad = d;
    bad.ndim = 0;
    expect_encode_error<tg::metadata_error>({}, {object(d, four), object(bad, four)}, "(object 1)");
  }
}

TEST(EncodeValidation, ClientReservedAndBaseCount) {
  const bytes four(4, std::byte{0});
  const auto d = tg::data_object_descriptor::contiguous(dtype::float32, {1});
  {
    tg::global_metadata meta;
    meta.reserved.set("time", "x");
    expect_encode_error<tg::metadata_error>(meta, {object(d, four)},
                                            "client code must not write to '_reserved_'");
  }
  {
    tg::global_metadata meta;
    meta.base.push_back(cbor::value::make_map({{"_reserved_", cbor::value::make_map()}}));
    expect_encode_error<tg::metadata_error>(meta, {object(d, four)}, "_reserved_");
  }
  {
    tg::global_metadata meta;
    meta.base.resize(2, cbor::value::make_map());
    expect_encode_error<tg::metadata_error>(meta, {object(d, four)},
                                            "metadata base has 2 entries but message contains 1 objects");
    expect_encode_error<tg::metadata_error>(meta, {},
                                            "metadata base has 2 entries but message contains 0 objects");
  }
  {
    tg::global_metadata meta;
    meta.base.push_back(cbor::value(1));
    expect_encode_error<tg::metadata_error>(meta, {object(d, four)}, "base[0] must be a map");
  }
}

TEST(EncodeValidation, UnknownPipelineNamesAreEncodingErrors) {
  const bytes eight(8, std::byte{0});
  const auto d = tg::data_object_descriptor::contiguous(dtype::float64, {1});
  struct named {
    const char* field;
    const char* value;
  };
  // Names outside the wire format's registry (spec 02 §17), so the test
  // holds whichever codecs a build provides.
  for (const named& n : {named{"encoding", "bogus"}, named{"encoding", "NONE"}, named{"filter", "xor"},
                         named{"filter", ""}, named{"compression", "gzip"}, named{"compression", "Zstd"}}) {
    auto bad = d;
    std::string* target = std::string(n.field) == "encoding" ? &bad.encoding
                          : std::string(n.field) == "filter" ? &bad.filter
                                                             : &bad.compression;
    *target = n.value;
    expect_encode_error<tg::encoding_error>({}, {object(bad, eight)},
                                            std::string("unknown ") + n.field + ": " + n.value);
  }
}

TEST(EncodeValidation, UnknownPipelineNamesOnDecode) {
  // A reference message using a codec this build lacks decodes to an
  // encoding error naming it (descriptor otherwise valid).
  auto desc = tgtest::descriptor_value("float32", {1});
  desc.set("compression", "gzip");
  const bytes payload(4, std::byte{0});
  const bytes msg =
      tgtest::message_builder().frame(1, tgtest::metadata_with_base(1)).data_frame(payload, desc).finish();
  try {
    (void)tg::decode(tg::buffer::borrowed(msg));
    FAIL();
  } catch (const tg::encoding_error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown compression: gzip"), std::string::npos) << e.what();
  }
  // Descriptors alone still parse.
  EXPECT_EQ(tg::decode_descriptors(msg).second.at(0).compression, "gzip");
}

// --- non-finite input ----------------------------------------------------------------

// Bytes of one component value (given as its bit pattern) in `order`.
void put(bytes& out, std::uint64_t bits, std::size_t width, tg::byte_order order) {
  for (std::size_t i = 0; i < width; ++i) {
    const std::size_t shift = 8 * (order == tg::byte_order::big ? width - 1 - i : i);
    out.push_back(static_cast<std::byte>((bits >> shift) & 0xFF));
  }
}

struct float_kind {
  dtype t;
  std::size_t part;   // bytes per component
  std::uint64_t one;  // 1.0
  std::uint64_t nan;
  std::uint64_t pos_inf;
  std::uint64_t neg_inf;
};

const float_kind k_float_kinds[] = {
    {dtype::float16, 2, 0x3C00, 0x7E01, 0x7C00, 0xFC00},
    {dtype::bfloat16, 2, 0x3F80, 0x7FC1, 0x7F80, 0xFF80},
    {dtype::float32, 4, 0x3F800000, 0x7FC00001, 0x7F800000, 0xFF800000},
    {dtype::float64, 8, 0x3FF0000000000000, 0xFFF8000000000000, 0x7FF0000000000000, 0xFFF0000000000000},
    {dtype::complex64, 4, 0x3F800000, 0x7FC00000, 0x7F800000, 0xFF800000},
    {dtype::complex128, 8, 0x3FF0000000000000, 0x7FF8000000000001, 0x7FF0000000000000, 0xFFF0000000000000},
};

TEST(NonFinite, EachFloatDtypeRejectsNanAndInfNamingTheElement) {
  for (const float_kind& k : k_float_kinds) {
    const bool complex = k.t == dtype::complex64 || k.t == dtype::complex128;
    for (tg::byte_order order : {tg::byte_order::big, tg::byte_order::little}) {
      struct bad_value {
        std::uint64_t bits;
        const char* text;
      };
      for (const bad_value& bv :
           {bad_value{k.nan, "strict-NaN check: NaN"}, bad_value{k.pos_inf, "strict-Inf check: +Inf"},
            bad_value{k.neg_inf, "strict-Inf check: -Inf"}}) {
        for (int component = 0; component < (complex ? 2 : 1); ++component) {
          SCOPED_TRACE(testing::Message() << tg::dtype_name(k.t) << " " << tg::byte_order_name(order) << " "
                                          << bv.text << " component " << component);
          // Six elements; element 4 holds the bad value.
          bytes data;
          for (int e = 0; e < 6; ++e) {
            const bool bad = e == 4;
            put(data, bad && component == 0 ? bv.bits : k.one, k.part, order);
            if (complex) put(data, bad && component == 1 ? bv.bits : k.one, k.part, order);
          }
          const auto d = tg::data_object_descriptor::contiguous(k.t, {2, 3}, order);
          std::string fragment =
              std::string(bv.text) + " at element 4 of " + std::string(tg::dtype_name(k.t)) + " array";
          if (complex) fragment += component == 0 ? " (real component)" : " (imaginary component)";
          expect_encode_error<tg::encoding_error>({}, {object(d, data)}, fragment);
          // With the allow flags the value is substituted and masked, and
          // restored on decode.
          tg::encode_options allow = fixed_options();
          allow.allow_nan = true;
          allow.allow_inf = true;
          bytes msg;
          ASSERT_NO_THROW(msg = tg::encode({}, std::vector<tg::object_input>{object(d, data)}, allow));
          {
            tg::decode_options raw;
            raw.native_byte_order = false;
            const tg::message m = tg::decode(tg::buffer::borrowed(msg), raw);
            const auto out = m.object(0).bytes();
            const std::size_t w = tg::dtype_width(k.t);
            ASSERT_EQ(out.size(), data.size());
            for (std::size_t e = 0; e < 6; ++e) {
              const bytes got(out.begin() + static_cast<std::ptrdiff_t>(e * w),
                              out.begin() + static_cast<std::ptrdiff_t>((e + 1) * w));
              const bytes orig(data.begin() + static_cast<std::ptrdiff_t>(e * w),
                               data.begin() + static_cast<std::ptrdiff_t>((e + 1) * w));
              if (e != 4) {
                EXPECT_EQ(got, orig) << "element " << e;
              } else if (bv.bits != k.nan) {
                // ±Inf restore exactly (both halves of a complex element).
                bytes inf;
                put(inf, bv.bits, k.part, order);
                if (complex) put(inf, bv.bits, k.part, order);
                EXPECT_EQ(got, inf);
              } else {
                // NaN restores as the canonical quiet NaN of the dtype, in
                // both halves of a complex element (spec 03 §11.6).
                const std::uint64_t canonical = k.part == 8              ? 0x7FF8000000000000u
                                                : k.part == 4            ? 0x7FC00000u
                                                : k.t == dtype::bfloat16 ? 0x7FC0u
                                                                         : 0x7E00u;
                bytes nan;
                put(nan, canonical, k.part, order);
                if (complex) put(nan, canonical, k.part, order);
                EXPECT_EQ(got, nan);
              }
            }
          }
        }
      }
    }
  }
}

TEST(NonFinite, FirstOffendingElementIsReported) {
  bytes data;
  for (std::uint32_t bits : {0x3F800000u, 0x7F800000u, 0x7FC00000u, 0xFF800000u}) {
    put(data, bits, 4, tg::byte_order::little);
  }
  const auto d = tg::data_object_descriptor::contiguous(dtype::float32, {4}, tg::byte_order::little);
  expect_encode_error<tg::encoding_error>({}, {object(d, data)}, "+Inf at element 1");
  // Complex priority: a NaN anywhere in the element wins over an Inf in the other half.
  bytes c;
  put(c, 0x7F800000, 4, tg::byte_order::big);
  put(c, 0x7FC00000, 4, tg::byte_order::big);
  const auto dc = tg::data_object_descriptor::contiguous(dtype::complex64, {1}, tg::byte_order::big);
  expect_encode_error<tg::encoding_error>({}, {object(dc, c)},
                                          "NaN at element 0 of complex64 array (imaginary component)");
}

TEST(NonFinite, LargeArraysReportTheGlobalIndex) {
  // Past the encoder's internal block size: the index is not block-relative.
  const std::size_t n = 20000;
  bytes data;
  for (std::size_t i = 0; i < n; ++i) put(data, i == 17777 ? 0x7FF8000000000000 : 0, 8, tg::byte_order::big);
  const auto d = tg::data_object_descriptor::contiguous(dtype::float64, {n}, tg::byte_order::big);
  expect_encode_error<tg::encoding_error>({}, {object(d, data)}, "NaN at element 17777 of float64 array");
}

TEST(NonFinite, IntegersAndBitmasksAreNotScanned) {
  bytes data;
  put(data, 0x7FC00000, 4, tg::byte_order::big);
  const auto d = tg::data_object_descriptor::contiguous(dtype::uint32, {1}, tg::byte_order::big);
  EXPECT_NO_THROW((void)tg::encode({}, std::vector<tg::object_input>{object(d, data)}, fixed_options()));
  const auto h = tg::data_object_descriptor::contiguous(dtype::int16, {2}, tg::byte_order::big);
  EXPECT_NO_THROW((void)tg::encode({}, std::vector<tg::object_input>{object(h, data)}, fixed_options()));
}

TEST(NonFinite, FiniteExtremesAccepted) {
  bytes data;
  put(data, 0x7BFF, 2, tg::byte_order::big);  // float16 max
  put(data, 0x0001, 2, tg::byte_order::big);  // smallest subnormal
  put(data, 0xFBFF, 2, tg::byte_order::big);
  put(data, 0x8000, 2, tg::byte_order::big);  // -0
  const auto d = tg::data_object_descriptor::contiguous(dtype::float16, {4}, tg::byte_order::big);
  EXPECT_NO_THROW((void)tg::encode({}, std::vector<tg::object_input>{object(d, data)}, fixed_options()));
}

// --- the JSON-driven encode -----------------------------------------------------------

TEST(JsonEncode, ParseMessageJson) {
  const tg::json_message_spec spec = tg::parse_message_json(R"({
    "descriptors": [{"type": "ntensor", "ndim": 1, "shape": [2], "strides": [1], "dtype": "int16",
                     "encoding": "none", "filter": "none", "compression": "none"}],
    "base": [{"a": 1}], "extra": {"x": 1}, "loose": "y"})");
  ASSERT_EQ(spec.descriptors.size(), 1u);
  EXPECT_EQ(spec.descriptors[0].dtype, dtype::int16);
  EXPECT_EQ(spec.descriptors[0].byte_order, tg::native_byte_order());  // absent → host order
  ASSERT_EQ(spec.metadata.base.size(), 1u);
  EXPECT_EQ(spec.metadata.extra.find("x")->as_int64(), 1);
  EXPECT_EQ(*spec.metadata.extra.find("loose")->as_text(), "y");
}

TEST(JsonEncode, ParseErrors) {
  for (const char* bad :
       {"not json", "[]", R"({"extra": {}, "_extra_": {}})", R"({"_reserved_": {"time": "x"}})",
        R"({"base": {}})", R"({"base": [1]})", R"({"descriptors": [1]})",
        R"({"descriptors": [{"type": "ntensor"}]})", R"({"extra": 3})"}) {
    EXPECT_THROW((void)tg::parse_message_json(bad), tg::metadata_error) << bad;
  }
}

TEST(JsonEncode, CountMismatchAndRoundTrip) {
  const std::string json = R"({"descriptors": [{"type": "ntensor", "ndim": 0, "shape": [], "strides": [],
      "dtype": "float64", "byte_order": "little", "encoding": "none", "filter": "none", "compression": "none"}],
      "base": [{"k": "v"}]})";
  const double v = 2.5;
  bytes le;
  put(le, std::bit_cast<std::uint64_t>(v), 8, tg::byte_order::little);
  const std::vector<std::pair<const std::uint8_t*, std::size_t>> objs = {
      {reinterpret_cast<const std::uint8_t*>(le.data()), le.size()}};
  EXPECT_THROW((void)tg::encode(json, {}, fixed_options()), tg::metadata_error);
  const std::vector<std::uint8_t> msg = tg::encode(json, objs, fixed_options());
  const tg::message m = tg::decode(msg.data(), msg.size());
  ASSERT_EQ(m.num_objects(), 1u);
  EXPECT_EQ(m.object(0).ndim(), 0u);
  EXPECT_EQ(*m.object(0).data_as<double>(), 2.5);
  EXPECT_EQ(m.get_metadata().get_string("k"), "v");
  const std::vector<std::uint8_t> pre = tg::encode_pre_encoded(json, objs, fixed_options());
  EXPECT_EQ(pre, msg);
}

// Encodes 64 MB of float64 with the address space capped a little above
// what the process already maps, and exits 0 when the result is an
// encoding_error holding `fragment` (a std::bad_alloc, the untyped error
// this replaces, exits 1).
[[noreturn]] void encode_under_address_cap(const std::string& compression, const std::string& fragment) {
  const bytes data(64U << 20, std::byte{1});
  auto d = tg::data_object_descriptor::contiguous(dtype::float64, {data.size() / 8});
  d.compression = compression;
  tg::encode_options o = fixed_options();
  o.threads = 1;
  std::uint64_t mapped_pages = 0;
  std::ifstream("/proc/self/statm") >> mapped_pages;
  const rlimit cap{mapped_pages * 4096 + (16U << 20), RLIM_INFINITY};
  if (::setrlimit(RLIMIT_AS, &cap) != 0) std::exit(3);
  try {
    const std::vector<tg::object_input> in = {object(d, data)};
    static_cast<void>(tg::encode(tg::global_metadata{}, in, o));
    std::fputs("encode succeeded under the cap\n", stderr);
  } catch (const tg::encoding_error& e) {
    if (std::string(e.what()).find(fragment) != std::string::npos) std::exit(0);
    std::fprintf(stderr, "encoding_error without the fragment: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "untyped error: %s\n", e.what());
  }
  std::exit(1);
}

TEST(EncodeValidation, AllocationFailuresAreEncodingErrors) {
  // Under AddressSanitizer an allocation beyond the limit ends the process.
  if (tgtest::k_address_sanitized)
    GTEST_SKIP() << "AddressSanitizer aborts on an allocation beyond RLIMIT_AS";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // The pipeline's own buffer (lz4's bound) for the object...
  EXPECT_EXIT(encode_under_address_cap("lz4",
                                       "cannot allocate memory to encode object 0 of 8388608 "
                                       "element(s) of float64 (encoding none, filter none, compression lz4)"),
              ::testing::ExitedWithCode(0), "");
  // ...and the message buffer, when the payload is the caller's bytes.
  EXPECT_EXIT(encode_under_address_cap("none", "cannot allocate an encoded message of "),
              ::testing::ExitedWithCode(0), "");
}

}  // namespace

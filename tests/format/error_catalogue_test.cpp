// The decoder error catalogue of spec 01 §19.2 (pipeline `none`): every
// condition is constructed, and the exception type, the reference text
// fragment and the location are checked. Also the layouts and frame
// sequences a decoder must accept (§6, §13, §18).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <tensogram.hpp>
#include "tensogram/format/aggregate_frames.hpp"
#include "tensogram/format/frame.hpp"
#include "test_support.hpp"

namespace {

namespace tg = tensogram;
namespace cbor = tensogram::cbor;
using cbor::value;
using tgtest::bytes;
using tgtest::message_builder;

// --- helpers -------------------------------------------------------------------

enum class api { decode, decode_metadata, decode_object, decode_descriptors, verify };

void call(api a, const bytes& msg) {
  const tg::buffer buf = tg::buffer::borrowed(msg);
  switch (a) {
    case api::decode: (void)tg::decode(buf); break;
    case api::decode_metadata: (void)tg::decode_metadata(msg); break;
    case api::decode_object: (void)tg::decode_object(buf, 0); break;
    case api::decode_descriptors: (void)tg::decode_descriptors(msg); break;
    case api::verify: {
      tg::decode_options o;
      o.verify_hash = true;
      (void)tg::decode(buf, o);
      break;
    }
  }
}

// Runs `a` on `msg` and checks the exception type and every fragment.
template <typename E>
void expect_error(const bytes& msg, std::vector<std::string> fragments, api a = api::decode) {
  try {
    call(a, msg);
    ADD_FAILURE() << "no error; expected " << fragments.front();
  } catch (const E& e) {
    const std::string what = e.what();
    for (const std::string& f : fragments)
      EXPECT_NE(what.find(f), std::string::npos) << "missing '" << f << "' in: " << what;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

bytes payload_f32(std::initializer_list<float> v) {
  bytes out;
  for (float f : v) {
    const auto u = std::bit_cast<std::uint32_t>(f);
    for (int b = 3; b >= 0; --b) out.push_back(static_cast<std::byte>((u >> (8 * b)) & 0xFF));
  }
  return out;
}

// A valid message: metadata (1 base entry), one float32 [2] big-endian object.
struct simple {
  bytes msg;
  std::size_t meta_at = 24;
  std::size_t data_at = 0;
};

simple simple_message(bool hashed = true) {
  message_builder b;
  b.frame(1, tgtest::metadata_with_base(1), hashed);
  simple s;
  b.data_frame(payload_f32({1.5f, -2.0f}), tgtest::descriptor_value("float32", {2}), true, hashed);
  s.data_at = b.last_frame();
  s.msg = b.finish();
  return s;
}

std::string at(std::size_t offset) {
  return "offset " + std::to_string(offset);
}

TEST(ErrorCatalogue, BaselineMessageDecodes) {
  const simple s = simple_message();
  const tg::message m = tg::decode(tg::buffer::borrowed(s.msg));
  ASSERT_EQ(m.num_objects(), 1u);
  EXPECT_EQ(m.object(0).data_as<float>()[1], -2.0f);
  for (api a :
       {api::decode, api::decode_metadata, api::decode_object, api::decode_descriptors, api::verify}) {
    EXPECT_NO_THROW(call(a, s.msg));
  }
}

// #1
TEST(ErrorCatalogue, E01_BufferShorterThanPreamble) {
  const simple s = simple_message();
  for (std::size_t n : {0u, 1u, 8u, 23u}) {
    const bytes cut(s.msg.begin(), s.msg.begin() + static_cast<std::ptrdiff_t>(n));
    for (api a :
         {api::decode, api::decode_metadata, api::decode_object, api::decode_descriptors, api::verify}) {
      expect_error<tg::framing_error>(cut, {"buffer too short for preamble"}, a);
    }
  }
}

// #2
TEST(ErrorCatalogue, E02_BadMagic) {
  simple s = simple_message();
  s.msg[7] = std::byte{'X'};
  for (api a : {api::decode, api::decode_metadata, api::decode_object, api::verify}) {
    expect_error<tg::framing_error>(s.msg, {"invalid magic bytes: expected \"TENSOGRM\"", at(0)}, a);
  }
}

// #3
TEST(ErrorCatalogue, E03_UnsupportedVersion) {
  for (std::uint16_t v : {0, 1, 2, 4, 0xFFFF}) {
    simple s = simple_message();
    tgtest::put_be16(s.msg, 8, v);
    for (api a : {api::decode, api::decode_metadata, api::verify}) {
      expect_error<tg::framing_error>(
          s.msg, {"unsupported message version " + std::to_string(v) + " (required = 3)"}, a);
    }
  }
}

// #4 cannot occur on a 64-bit host (every u64 fits size_t); the largest
// values take the #5 path.
// #5
TEST(ErrorCatalogue, E05_TotalLengthExceedsBuffer) {
  simple s = simple_message();
  const std::size_t n = s.msg.size();
  for (std::uint64_t claimed : {std::uint64_t{n + 8}, std::uint64_t{1} << 63, ~std::uint64_t{0}}) {
    tgtest::put_be64(s.msg, 16, claimed);
    for (api a : {api::decode, api::decode_metadata, api::decode_object, api::verify}) {
      expect_error<tg::framing_error>(
          s.msg, {"total_length " + std::to_string(claimed) + " exceeds buffer size " + std::to_string(n)},
          a);
    }
  }
}

// #6
TEST(ErrorCatalogue, E06_TotalLengthBelowMinimum) {
  simple s = simple_message();
  for (std::uint64_t claimed : {1u, 24u, 47u}) {
    tgtest::put_be64(s.msg, 16, claimed);
    expect_error<tg::framing_error>(s.msg, {"smaller than the minimum message size 48"});
  }
}

// #7
TEST(ErrorCatalogue, E07_PostambleWithoutEndMagic) {
  simple s = simple_message();
  s.msg[s.msg.size() - 1] = std::byte{'8'};
  expect_error<tg::framing_error>(s.msg, {"invalid end magic in postamble", at(s.msg.size() - 24)});
  // total_length pointing elsewhere inside the buffer.
  simple t = simple_message();
  tgtest::put_be64(t.msg, 16, t.msg.size() - 8);
  expect_error<tg::framing_error>(t.msg, {"invalid end magic in postamble", at(t.msg.size() - 8 - 24)});
}

// #8
TEST(ErrorCatalogue, E08_PostambleLengthMismatch) {
  simple s = simple_message();
  const std::size_t n = s.msg.size();
  tgtest::put_be64(s.msg, n - 16, n + 8);
  expect_error<tg::framing_error>(s.msg,
                                  {"postamble total_length (" + std::to_string(n + 8) +
                                       ") does not match preamble total_length (" + std::to_string(n) + ")",
                                   at(n - 24)});
  // 0 in the postamble is accepted (non-back-filled mirror).
  simple z = simple_message();
  tgtest::put_be64(z.msg, n - 16, 0);
  EXPECT_NO_THROW(call(api::decode, z.msg));
}

// #9, #10
TEST(ErrorCatalogue, E09_E10_UnknownAndReservedFrameTypes) {
  for (std::uint16_t type : {0, 10, 11, 0xFFFF}) {
    simple s = simple_message();
    tgtest::put_be16(s.msg, s.data_at + 2, type);
    for (api a : {api::decode, api::decode_descriptors, api::verify}) {
      expect_error<tg::framing_error>(s.msg, {"unknown frame type: " + std::to_string(type), at(s.data_at)},
                                      a);
    }
    // Before the first metadata frame, metadata-only decode fails too.
    simple h = simple_message();
    tgtest::put_be16(h.msg, 24 + 2, type);
    expect_error<tg::framing_error>(h.msg, {"unknown frame type: " + std::to_string(type), at(24)},
                                    api::decode_metadata);
  }
  simple s = simple_message();
  tgtest::put_be16(s.msg, s.data_at + 2, 4);
  expect_error<tg::framing_error>(
      s.msg, {"reserved frame type 4 (obsolete v2 NTensorFrame) not supported in v3", at(s.data_at)});
}

// #12 cannot occur on a 64-bit host.
// #13
TEST(ErrorCatalogue, E13_NonDataFrameTooSmall) {
  for (std::uint64_t len : {0u, 16u, 20u, 27u}) {
    simple s = simple_message();
    tgtest::put_be64(s.msg, 24 + 8, len);
    expect_error<tg::framing_error>(s.msg, {"is smaller than minimum 28", at(24)});
  }
}

// #14
TEST(ErrorCatalogue, E14_NonDataFrameBeyondBuffer) {
  for (std::uint64_t len : {std::uint64_t{5000}, std::uint64_t{1} << 63, ~std::uint64_t{0}}) {
    simple s = simple_message();
    tgtest::put_be64(s.msg, 24 + 8, len);
    expect_error<tg::framing_error>(
        s.msg, {"frame total_length " + std::to_string(len) + " exceeds buffer", at(24)});
    expect_error<tg::framing_error>(s.msg,
                                    {"frame total_length " + std::to_string(len) + " exceeds buffer", at(24)},
                                    api::decode_metadata);
  }
  // A frame running into the postamble (but inside the buffer) is rejected too.
  simple s = simple_message();
  tgtest::put_be64(s.msg, s.data_at + 8, s.msg.size() - s.data_at - 8);
  EXPECT_THROW(call(api::decode, s.msg), tg::framing_error);
}

// #15
TEST(ErrorCatalogue, E15_NonDataFrameWithoutEndf) {
  simple s = simple_message();
  const std::size_t end = 24 + static_cast<std::size_t>(tgtest::be64(s.msg, 32));
  s.msg[end - 1] = std::byte{'G'};
  expect_error<tg::framing_error>(s.msg, {"missing ENDF marker at offset " + std::to_string(end - 4)});
  expect_error<tg::framing_error>(s.msg, {"missing ENDF marker at offset " + std::to_string(end - 4)},
                                  api::decode_metadata);
}

// #16
TEST(ErrorCatalogue, E16_DataFrameTooSmall) {
  for (std::uint64_t len : {0u, 28u, 35u}) {
    simple s = simple_message();
    tgtest::put_be64(s.msg, s.data_at + 8, len);
    expect_error<tg::framing_error>(s.msg, {"data object frame too small", at(s.data_at)});
  }
}

// #17
TEST(ErrorCatalogue, E17_DataFrameBeyondBuffer) {
  simple s = simple_message();
  tgtest::put_be64(s.msg, s.data_at + 8, 100000);
  expect_error<tg::framing_error>(s.msg,
                                  {"data object frame total_length 100000 exceeds buffer", at(s.data_at)});
}

// #18
TEST(ErrorCatalogue, E18_DataFrameWithoutEndf) {
  simple s = simple_message();
  const std::size_t end = s.data_at + static_cast<std::size_t>(tgtest::be64(s.msg, s.data_at + 8));
  s.msg[end - 4] = std::byte{'e'};
  expect_error<tg::framing_error>(s.msg, {"missing ENDF marker in data object frame", at(s.data_at)});
}

// #19
TEST(ErrorCatalogue, E19_CborOffsetOutOfRange) {
  const simple base = simple_message(false);
  const std::size_t len = static_cast<std::size_t>(tgtest::be64(base.msg, base.data_at + 8));
  const std::size_t p = len - 20;
  for (std::uint64_t co : {std::uint64_t{0}, std::uint64_t{15}, std::uint64_t{p + 1}, ~std::uint64_t{0}}) {
    bytes msg = base.msg;
    tgtest::put_be64(msg, base.data_at + p, co);
    expect_error<tg::framing_error>(
        msg, {"cbor_offset " + std::to_string(co) + " out of valid range [16, " + std::to_string(p) + "]",
              at(base.data_at)});
  }
}

// #20
TEST(ErrorCatalogue, E20_MaskBeyondPayloadRegion) {
  auto desc = tgtest::descriptor_value("float32", {2});
  // Region is 8 bytes of payload + 1 byte mask; the mask claims 2 bytes.
  for (const auto& [off, len] :
       std::vector<std::pair<std::uint64_t, std::uint64_t>>{{8, 2}, {9, 1}, {~std::uint64_t{0}, 2}}) {
    auto d = desc;
    d.set("masks", value::make_map(
                       {{"nan", value::make_map(
                                    {{"method", "none"}, {"offset", value(off)}, {"length", value(len)}})}}));
    bytes region = payload_f32({1, 2});
    region.push_back(std::byte{0x80});
    message_builder b;
    b.frame(1, tgtest::metadata_with_base(1));
    b.data_frame(region, d);
    const std::size_t data_at = b.last_frame();
    expect_error<tg::framing_error>(
        b.finish(), {"mask_nan.offset + length", "exceeds payload region size 9", at(data_at)});
  }
}

// Masks that fit are honoured on decode: canonical NaN/Inf are restored.
TEST(ErrorCatalogue, MaskRestorationOnDecode) {
  auto d = tgtest::descriptor_value("float32", {3});
  d.set("masks",
        value::make_map({{"nan", value::make_map({{"method", "none"}, {"offset", 12}, {"length", 1}})},
                         {"inf-", value::make_map({{"method", "none"}, {"offset", 13}, {"length", 1}})}}));
  bytes region = payload_f32({0, 5, 0});
  region.push_back(std::byte{0x80});  // element 0 was NaN
  region.push_back(std::byte{0x20});  // element 2 was -Inf
  const bytes msg = message_builder().frame(1, tgtest::metadata_with_base(1)).data_frame(region, d).finish();
  tg::decode_options raw;
  raw.native_byte_order = false;
  const tg::message m = tg::decode(tg::buffer::borrowed(msg), raw);
  EXPECT_EQ(tgtest::to_hex(m.object(0).bytes()), "7fc0000040a00000ff800000");
  raw.restore_non_finite = false;
  EXPECT_EQ(tgtest::to_hex(tg::decode(tg::buffer::borrowed(msg), raw).object(0).bytes()),
            tgtest::to_hex(payload_f32({0, 5, 0})));
  // Native order: restored patterns are written in the host's order.
  const tg::message n = tg::decode(tg::buffer::borrowed(msg));
  EXPECT_TRUE(std::isnan(n.object(0).data_as<float>()[0]));
  EXPECT_EQ(n.object(0).data_as<float>()[1], 5.0f);
  EXPECT_EQ(n.object(0).data_as<float>()[2], -std::numeric_limits<float>::infinity());
  EXPECT_FALSE(n.object(0).is_view());
}

// #21
TEST(ErrorCatalogue, E21_PhaseOrderViolations) {
  const value meta = tgtest::metadata_with_base(1);
  const value desc = tgtest::descriptor_value("float32", {2});
  const bytes p = payload_f32({1, 2});
  {
    message_builder b;
    b.frame(1, meta).data_frame(p, desc);
    b.frame(2, tgtest::B({0xa0}));
    const std::size_t bad = b.last_frame();
    expect_error<tg::framing_error>(b.finish(),
                                    {"unexpected HeaderIndex frame", at(bad), "after data object phase",
                                     "frames must appear in order: headers, data objects, footers"});
  }
  {
    message_builder b;
    b.frame(1, meta).data_frame(p, desc).frame(7, meta);
    b.data_frame(p, desc);
    const std::size_t bad = b.last_frame();
    expect_error<tg::framing_error>(b.finish(), {"unexpected NTensorFrame frame", at(bad),
                                                 "after footer phase", "frames must appear in order"});
  }
  {
    message_builder b;
    b.frame(7, meta);
    b.frame(1, meta);
    const std::size_t bad = b.last_frame();
    expect_error<tg::framing_error>(b.finish(),
                                    {"unexpected HeaderMetadata frame", at(bad), "after footer phase"});
  }
}

// Within a phase any order is accepted (the streaming encoder writes 7, 5, 6).
TEST(ErrorCatalogue, AnyOrderWithinAPhase) {
  const value desc = tgtest::descriptor_value("float32", {2});
  const bytes p = payload_f32({1, 2});
  message_builder b;
  b.frame(3, tgtest::B({0xa0})).frame(2, tgtest::B({0xa0})).frame(1, tgtest::metadata_with_base(1));
  b.data_frame(p, desc);
  b.frame(6, tgtest::B({0xa0})).frame(5, tgtest::B({0xa0})).frame(7, tgtest::metadata_with_base(1));
  EXPECT_NO_THROW(call(api::decode, b.finish()));
}

// #22, #23
TEST(ErrorCatalogue, E22_E23_PrecederRules) {
  const value meta = tgtest::metadata_with_base(1);
  const value pre = value::make_map({{"base", value(cbor::array{value::make_map({{"a", 1}})})}});
  const value desc = tgtest::descriptor_value("float32", {2});
  const bytes p = payload_f32({1, 2});
  {
    message_builder b;
    b.frame(1, meta).frame(8, pre);
    const std::size_t pre_at = b.last_frame();
    b.frame(7, meta);
    expect_error<tg::framing_error>(
        b.finish(),
        {"PrecederMetadata must be followed by a data-object frame, got FooterMetadata", at(pre_at)});
  }
  {
    message_builder b;
    b.frame(1, meta).frame(8, pre);
    const std::size_t pre_at = b.last_frame();
    b.frame(8, pre).data_frame(p, desc);
    expect_error<tg::framing_error>(
        b.finish(),
        {"PrecederMetadata must be followed by a data-object frame, got PrecederMetadata", at(pre_at)});
  }
  {
    message_builder b;
    b.frame(1, meta).data_frame(p, desc).frame(8, pre);
    const std::size_t pre_at = b.last_frame();
    expect_error<tg::framing_error>(b.finish(),
                                    {"dangling PrecederMetadata: no data-object frame followed", at(pre_at)});
  }
}

// Preceders merge into base: the preceder wins per key, its _reserved_ is
// stripped, metadata-frame keys it lacks are kept.
TEST(ErrorCatalogue, PrecederMergedIntoBase) {
  const value meta = value::make_map(
      {{"base", value(cbor::array{
                    value::make_map({{"a", 0}, {"b", 2}, {"_reserved_", value::make_map({{"tensor", 1}})}}),
                    value::make_map({{"c", 3}})})}});
  const value pre = value::make_map(
      {{"base", value(cbor::array{value::make_map({{"a", 1}, {"_reserved_", value::make_map({{"x", 9}})}})})},
       {"_extra_", value::make_map({{"ignored", true}})}});
  const value desc = tgtest::descriptor_value("float32", {2});
  const bytes p = payload_f32({1, 2});
  for (bool flag : {true, false}) {
    SCOPED_TRACE(flag);
    // The preamble flags are advisory: the same frames with or without
    // PRECEDER_METADATA and with a header index must decode identically.
    message_builder b(static_cast<std::uint16_t>(0x0005 | (flag ? 0x0040 : 0)));
    b.frame(1, meta);
    const std::size_t meta_len = b.size() - 24;
    // Index: first object right after the index frame, second after the preceder.
    const bytes dbody = cbor::encode(desc);
    const std::uint64_t data_len = 16 + 8 + dbody.size() + 20;
    const bytes pre_body = cbor::encode(pre);
    std::uint64_t idx_frame = 32;
    std::uint64_t first = 0;
    std::uint64_t second = 0;
    bytes idx;
    for (int pass = 0; pass < 3; ++pass) {
      first = 24 + meta_len + idx_frame;
      second = first + tg::format::align8(data_len) + tg::format::align8(28 + pre_body.size());
      idx = tg::format::encode_index_body({{first, second}, {data_len, data_len}});
      idx_frame = tg::format::align8(28 + idx.size());
    }
    b.frame(2, idx);
    b.data_frame(p, desc);
    ASSERT_EQ(b.last_frame(), first);
    b.frame(8, pre);
    b.data_frame(p, desc);
    ASSERT_EQ(b.last_frame(), second);
    const bytes msg = b.finish();
    const tg::message m = tg::decode(tg::buffer::borrowed(msg));
    const tg::global_metadata& g = m.global();
    ASSERT_EQ(g.base.size(), 2u);
    EXPECT_EQ(g.base[0], meta.find("base")->as_array()->at(0));
    EXPECT_EQ(g.base[1].find("c")->as_int64(), 3);
    EXPECT_EQ(g.base[1].find("a")->as_int64(), 1);
    EXPECT_FALSE(g.base[1].contains("_reserved_"));
    EXPECT_FALSE(g.extra.contains("ignored"));
    // decode_object agrees with decode for every object.
    for (std::size_t i = 0; i < 2; ++i) {
      const tg::message one = tg::decode_object(tg::buffer::borrowed(msg), i);
      EXPECT_EQ(one.global(), g) << "object " << i;
    }
  }
}

TEST(ErrorCatalogue, PrecederReplacesWholeValuesAndPadsBase) {
  // No base in the metadata frame: base is padded, then the preceder merges.
  const value pre =
      value::make_map({{"base", value(cbor::array{value::make_map({{"m", value::make_map({{"x", 1}})}})})}});
  const bytes msg = message_builder()
                        .frame(1, value::make_map())
                        .frame(8, pre)
                        .data_frame(payload_f32({1, 2}), tgtest::descriptor_value("float32", {2}))
                        .finish();
  const tg::message m = tg::decode(tg::buffer::borrowed(msg));
  ASSERT_EQ(m.global().base.size(), 1u);
  EXPECT_EQ(m.global().base[0], value::make_map({{"m", value::make_map({{"x", 1}})}}));
}

// #24–#29
TEST(ErrorCatalogue, E24_E29_MetadataBodies) {
  const value desc = tgtest::descriptor_value("float32", {2});
  const bytes p = payload_f32({1, 2});
  auto with_meta = [&](const bytes& body) {
    return message_builder().frame(1, body).data_frame(p, desc).finish();
  };
  // #24
  expect_error<tg::metadata_error>(with_meta(tgtest::B({0xa1, 0x64, 'b', 'a'})),
                                   {"failed to parse CBOR", at(24)});
  expect_error<tg::metadata_error>(with_meta(tgtest::B({0xa1, 0x64, 'b', 'a'})),
                                   {"failed to parse CBOR", at(24)}, api::decode_metadata);
  expect_error<tg::metadata_error>(with_meta({}), {"failed to parse CBOR", at(24)});
  // #25
  expect_error<tg::metadata_error>(with_meta(tgtest::B({0x80})),
                                   {"global metadata CBOR is not a map", at(24)});
  // #26
  expect_error<tg::metadata_error>(with_meta(tgtest::B({0xa1, 0x01, 0x02})),
                                   {"global metadata CBOR has non-text top-level key", at(24)});
  // #27
  expect_error<tg::metadata_error>(with_meta(cbor::encode(value::make_map({{"base", 1}}))),
                                   {"failed to deserialize base", at(24)});
  expect_error<tg::metadata_error>(
      with_meta(cbor::encode(value::make_map({{"base", value(cbor::array{value(1)})}}))),
      {"failed to deserialize base"});
  expect_error<tg::metadata_error>(with_meta(cbor::encode(value::make_map({{"_reserved_", 1}}))),
                                   {"failed to deserialize _reserved_", at(24)});
  expect_error<tg::metadata_error>(with_meta(cbor::encode(value::make_map({{"_extra_", "x"}}))),
                                   {"failed to deserialize _extra_", at(24)});
  // #28
  expect_error<tg::metadata_error>(
      with_meta(cbor::encode(value::make_map({{"k", 1}, {"_extra_", value::make_map({{"k", 2}})}}))),
      {"ambiguous metadata: key", "appears both at the top level and inside _extra_", at(24)});
  // #29
  for (std::size_t n : {0u, 2u}) {
    message_builder b;
    b.frame(1, tgtest::metadata_with_base(0));
    b.frame(8, tgtest::metadata_with_base(n));
    const std::size_t pre_at = b.last_frame();
    b.data_frame(p, desc);
    expect_error<tg::metadata_error>(
        b.finish(),
        {"PrecederMetadata base must have exactly 1 entry, got " + std::to_string(n), at(pre_at)});
  }
  // Preceder bodies are parsed with the same rules (#24, #28 through a preceder).
  {
    message_builder b;
    b.frame(1, tgtest::metadata_with_base(0));
    b.frame(8, tgtest::B({0x82}));
    const std::size_t pre_at = b.last_frame();
    b.data_frame(p, desc);
    expect_error<tg::metadata_error>(b.finish(), {"failed to parse CBOR", at(pre_at)});
  }
}

// #30
TEST(ErrorCatalogue, E30_IndexBodies) {
  const value desc = tgtest::descriptor_value("float32", {2});
  const bytes p = payload_f32({1, 2});
  struct bad {
    bytes body;
    const char* fragment;
  };
  const value arr_ok = value(cbor::array{value(1)});
  for (const bad& c : std::vector<bad>{
           {tgtest::B({0xa2}), "failed to parse index CBOR"},
           {tgtest::B({0x80}), "index CBOR is not a map"},
           {tgtest::B({0xa1, 0x01, 0x80}), "non-text key"},
           {cbor::encode(value::make_map({{"offsets", 1}})), "offsets must be an array"},
           {cbor::encode(value::make_map({{"offsets", value(cbor::array{value(-1)})}})),
            "offsets must be an integer"},
           {cbor::encode(value::make_map({{"lengths", value(cbor::array{value("x")})}})),
            "lengths must be an integer"},
           {cbor::encode(value::make_map({{"offsets", arr_ok}, {"lengths", value(cbor::array{})}})),
            "index offsets.len() (1) != lengths.len() (0)"},
       }) {
    for (std::uint16_t type : {2, 6}) {
      message_builder b;
      b.frame(1, tgtest::metadata_with_base(1));
      if (type == 2) b.frame(2, c.body);
      b.data_frame(p, desc);
      if (type == 6) b.frame(6, c.body);
      expect_error<tg::metadata_error>(b.finish(), {c.fragment, "offset"});
    }
  }
}

// #31
TEST(ErrorCatalogue, E31_HashBodies) {
  const value desc = tgtest::descriptor_value("float32", {2});
  const bytes p = payload_f32({1, 2});
  struct bad {
    bytes body;
    const char* fragment;
  };
  for (const bad& c : std::vector<bad>{
           {tgtest::B({0xa1, 0x66}), "failed to parse hash CBOR"},
           {tgtest::B({0x01}), "hash frame CBOR is not a map"},
           {tgtest::B({0xa1, 0x01, 0x80}), "non-text key"},
           {cbor::encode(value::make_map({{"algorithm", 1}})), "algorithm must be text"},
           {cbor::encode(value::make_map({{"hashes", "x"}})), "hashes must be an array"},
           {cbor::encode(value::make_map({{"hashes", value(cbor::array{value(1)})}})),
            "hash entry must be text"},
       }) {
    for (std::uint16_t type : {3, 5}) {
      message_builder b;
      b.frame(1, tgtest::metadata_with_base(1));
      if (type == 3) b.frame(3, c.body);
      b.data_frame(p, desc);
      if (type == 5) b.frame(5, c.body);
      expect_error<tg::metadata_error>(b.finish(), {c.fragment, "offset"});
    }
  }
}

// #32
TEST(ErrorCatalogue, E32_Descriptors) {
  const bytes p = payload_f32({1, 2});
  // Not CBOR (CBOR-after and CBOR-before layouts).
  for (bool after : {true, false}) {
    message_builder b;
    b.frame(1, tgtest::metadata_with_base(1));
    b.data_frame(p, tgtest::B({0xa9, 0x64}), after);
    const std::size_t data_at = b.last_frame();
    expect_error<tg::metadata_error>(
        b.finish(),
        {after ? "failed to parse descriptor CBOR" : "failed to parse object descriptor CBOR", at(data_at)});
  }
  // Wrong schema.
  auto missing = tgtest::descriptor_value("float32", {2});
  missing.erase("dtype");
  auto unknown_dtype = tgtest::descriptor_value("float32", {2});
  unknown_dtype.set("dtype", "float8");
  auto bad_order = tgtest::descriptor_value("float32", {2});
  bad_order.set("byte_order", "middle");
  auto negative = tgtest::descriptor_value("float32", {2});
  negative.set("ndim", -1);
  auto shape_text = tgtest::descriptor_value("float32", {2});
  shape_text.set("shape", value(cbor::array{value("2")}));
  auto not_map = value(cbor::array{});
  for (const value& d : {missing, unknown_dtype, bad_order, negative, shape_text, not_map}) {
    message_builder b;
    b.frame(1, tgtest::metadata_with_base(1));
    b.data_frame(p, d);
    const std::size_t data_at = b.last_frame();
    const bytes msg = b.finish();
    expect_error<tg::metadata_error>(msg, {"failed to deserialize descriptor", at(data_at)});
    expect_error<tg::metadata_error>(msg, {"failed to deserialize descriptor"}, api::decode_descriptors);
    expect_error<tg::metadata_error>(msg, {"failed to deserialize descriptor"}, api::decode_object);
  }
}

// CBOR-before layout (flag bit 0 clear) decodes like CBOR-after, also
// with trailing bytes after the descriptor in the CBOR-after layout.
TEST(ErrorCatalogue, CborBeforeLayoutDecodes) {
  const bytes p = payload_f32({1.5f, -2.0f});
  const value desc = tgtest::descriptor_value("float32", {2});
  for (bool hashed : {true, false}) {
    message_builder b;
    b.frame(1, tgtest::metadata_with_base(1), hashed);
    b.data_frame(p, desc, false, hashed);
    const std::size_t data_at = b.last_frame();
    const bytes msg = b.finish();
    ASSERT_EQ(tgtest::be16(msg, data_at + 6), hashed ? 0x0002 : 0x0000);
    tg::decode_options raw;
    raw.native_byte_order = false;
    raw.verify_hash = hashed;
    const tg::message m = tg::decode(tg::buffer::borrowed(msg), raw);
    ASSERT_EQ(m.num_objects(), 1u);
    EXPECT_EQ(tgtest::to_hex(m.object(0).bytes()), tgtest::to_hex(p));
    EXPECT_EQ(m.object(0).descriptor(), tg::data_object_descriptor::from_cbor(desc));
    const tg::message n = tg::decode(tg::buffer::borrowed(msg));
    EXPECT_EQ(n.object(0).data_as<float>()[1], -2.0f);
    EXPECT_EQ(tg::decode_object(tg::buffer::borrowed(msg), 0).object(0).data_as<float>()[0], 1.5f);
  }
  // CBOR-after with bytes between the descriptor and the footer: ignored.
  bytes d = cbor::encode(desc);
  d.push_back(std::byte{0x00});
  d.push_back(std::byte{0xFF});
  const bytes msg = message_builder().frame(1, tgtest::metadata_with_base(1)).data_frame(p, d).finish();
  EXPECT_EQ(tg::decode(tg::buffer::borrowed(msg)).object(0).data_as<float>()[0], 1.5f);
}

// #33
TEST(ErrorCatalogue, E33_NoMetadataFrame) {
  const bytes p = payload_f32({1, 2});
  const bytes msg = message_builder().data_frame(p, tgtest::descriptor_value("float32", {2})).finish();
  for (api a : {api::decode, api::decode_metadata, api::decode_object, api::decode_descriptors}) {
    expect_error<tg::metadata_error>(msg, {"no metadata frame found in message"}, a);
  }
  expect_error<tg::metadata_error>(message_builder().finish(), {"no metadata frame found in message"});
  // A 24–47 byte streaming buffer has an empty frame area.
  bytes small = message_builder().finish(true);
  small.resize(40);
  expect_error<tg::metadata_error>(small, {"no metadata frame found in message"});
  expect_error<tg::metadata_error>(bytes(small.begin(), small.begin() + 24),
                                   {"no metadata frame found in message"});
}

// #34
TEST(ErrorCatalogue, E34_BaseLongerThanObjects) {
  const bytes p = payload_f32({1, 2});
  const bytes msg = message_builder()
                        .frame(1, tgtest::metadata_with_base(3))
                        .data_frame(p, tgtest::descriptor_value("float32", {2}))
                        .finish();
  expect_error<tg::metadata_error>(msg, {"metadata base has 3 entries but message contains 1 objects"});
  expect_error<tg::metadata_error>(msg, {"metadata base has 3 entries but message contains 1 objects"},
                                   api::decode_object);
  EXPECT_NO_THROW(call(api::decode_metadata, msg));  // no base-count check there
}

// #35
TEST(ErrorCatalogue, E35_ShapeOverflow) {
  const bytes p = payload_f32({1, 2});
  struct c {
    const char* dtype;
    std::vector<std::uint64_t> shape;
    const char* fragment;
  };
  for (const c& x : std::vector<c>{{"uint8", {1ULL << 32, 1ULL << 32}, "shape product overflow"},
                                   {"float32", {1ULL << 62, 4}, "shape product overflow"},
                                   {"float64", {1ULL << 61}, "element count overflows usize"},
                                   {"complex128", {1ULL << 60}, "element count overflows usize"}}) {
    message_builder b;
    b.frame(1, tgtest::metadata_with_base(1));
    b.data_frame(p, tgtest::descriptor_value(x.dtype, x.shape));
    const std::size_t data_at = b.last_frame();
    const bytes msg = b.finish();
    expect_error<tg::metadata_error>(msg, {x.fragment, at(data_at)});
    expect_error<tg::metadata_error>(msg, {x.fragment}, api::decode_object);
  }
}

// #36
TEST(ErrorCatalogue, E36_ObjectIndexOutOfRange) {
  const simple s = simple_message();
  const tg::buffer buf = tg::buffer::borrowed(s.msg);
  for (std::size_t i : {1u, 2u, 1000u}) {
    try {
      (void)tg::decode_object(buf, i);
      ADD_FAILURE();
    } catch (const tg::object_error& e) {
      EXPECT_NE(
          std::string(e.what()).find("object index " + std::to_string(i) + " out of range (num_objects=1)"),
          std::string::npos)
          << e.what();
    }
    EXPECT_THROW((void)tg::decode_range(buf, i, std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, 1}}),
                 tg::object_error);
  }
  const tg::message m = tg::decode(buf);
  EXPECT_THROW((void)m.object(1), tg::object_error);
}

// §14.4: access through the index must give what the full walk gives. An
// index that no longer matches the frames (here a copy of a data-object
// frame slipped in before it, the postamble's first_footer_offset left
// pointing into the last frame) is not used.
TEST(ErrorCatalogue, IndexThatDisagreesWithTheFramesIsNotUsed) {
  const std::vector<float> a = {1.5f, -2.0f};
  const std::vector<float> c = {3.0f, 4.0f};
  const std::vector<tg::object_input> objects = {
      {tg::data_object_descriptor::contiguous(tg::dtype::float32, {2}), std::as_bytes(std::span(a))},
      {tg::data_object_descriptor::contiguous(tg::dtype::float32, {2}), std::as_bytes(std::span(c))}};
  bytes msg = tg::encode(tg::global_metadata{}, objects);
  std::vector<tgtest::wire_frame> data;
  for (const tgtest::wire_frame& f : tgtest::wire_frames(msg)) {
    if (f.type == 9) data.push_back(f);
  }
  ASSERT_EQ(data.size(), 2u);
  const std::size_t at = data[1].offset;
  const bytes copy = tgtest::slice(msg, at, tg::format::align8(data[1].total_length));
  msg.insert(msg.begin() + static_cast<std::ptrdiff_t>(at), copy.begin(), copy.end());
  tgtest::put_be64(msg, 16, msg.size());
  tgtest::put_be64(msg, msg.size() - 16, msg.size());
  const tg::buffer buf = tg::buffer::borrowed(msg);
  ASSERT_EQ(tg::decode(buf).num_objects(), 3u);
  const tg::message_layout layout = tg::read_message_layout(msg);
  ASSERT_EQ(layout.objects.size(), 3u);
  EXPECT_EQ(layout.objects[2].offset, at + copy.size());
  EXPECT_EQ(tg::decode_object(buf, 2).object(0).data_as<float>()[1], 4.0f);
}

// #39
TEST(ErrorCatalogue, E39_PayloadSizeMismatch) {
  for (std::size_t n : {0u, 6u, 9u, 16u}) {
    message_builder b;
    b.frame(1, tgtest::metadata_with_base(1));
    b.data_frame(bytes(n, std::byte{0}), tgtest::descriptor_value("float32", {2}));
    const std::size_t data_at = b.last_frame();
    const bytes msg = b.finish();
    expect_error<tg::encoding_error>(
        msg, {"descriptor claims 8 decoded byte(s) but frame payload is " + std::to_string(n) + " byte(s)",
              at(data_at + 16)});
    expect_error<tg::encoding_error>(msg, {"descriptor claims 8 decoded byte(s)"}, api::decode_object);
  }
  // Bitmask: ceil(N/8).
  message_builder b;
  b.frame(1, tgtest::metadata_with_base(1));
  b.data_frame(bytes(1, std::byte{0}), tgtest::descriptor_value("bitmask", {9}));
  expect_error<tg::encoding_error>(b.finish(),
                                   {"descriptor claims 2 decoded byte(s) but frame payload is 1 byte(s)"});
}

// #43, #44
TEST(ErrorCatalogue, E43_E44_HashVerification) {
  const simple unhashed = simple_message(false);
  expect_error<tg::missing_hash_error>(
      unhashed.msg, {"hash verification requested but object 0 has no inline hash recorded"}, api::verify);
  EXPECT_NO_THROW(call(api::decode, unhashed.msg));
  simple s = simple_message();
  s.msg[s.data_at + 17] ^= std::byte{0x40};
  const std::uint64_t slot =
      tgtest::be64(s.msg, s.data_at + static_cast<std::size_t>(tgtest::be64(s.msg, s.data_at + 8)) - 12);
  expect_error<tg::hash_mismatch_error>(
      s.msg, {"hash mismatch on object 0: expected " + tg::hex16(slot) + ", got "}, api::verify);
  // A zero digest is legitimate when the bit is set: only equality counts.
  simple z = simple_message(false);
  tgtest::put_be16(z.msg, z.data_at + 6, 0x0003);
  expect_error<tg::hash_mismatch_error>(z.msg, {"expected 0000000000000000"}, api::verify);
}

// #45
TEST(ErrorCatalogue, E45_VerifyPrePassFrameRunsPastMessageEnd) {
  simple s = simple_message();
  tgtest::put_be64(s.msg, 24 + 8, s.msg.size());  // metadata frame claims the whole message
  expect_error<tg::framing_error>(s.msg, {"runs past first-message end", at(24)}, api::verify);
  EXPECT_THROW(tg::verify_hashes(s.msg), tg::framing_error);
  // A zero-length frame header does not hang the pre-pass.
  simple z = simple_message();
  tgtest::put_be64(z.msg, 24 + 8, 0);
  EXPECT_THROW(call(api::verify, z.msg), tg::error);
}

// §6: duplicates — the full decode keeps the last metadata frame, the
// metadata-only decode the first.
TEST(ErrorCatalogue, DuplicateMetadataFrames) {
  const value first = value::make_map({{"_extra_", value::make_map({{"which", "first"}})}});
  const value second = value::make_map({{"_extra_", value::make_map({{"which", "second"}})}});
  const value third = value::make_map({{"_extra_", value::make_map({{"which", "footer"}})}});
  const bytes p = payload_f32({1, 2});
  const value desc = tgtest::descriptor_value("float32", {2});
  {
    const bytes msg = message_builder().frame(1, first).frame(1, second).data_frame(p, desc).finish();
    EXPECT_EQ(tg::decode(tg::buffer::borrowed(msg)).get_metadata().get_string("which"), "second");
    EXPECT_EQ(tg::decode_metadata(msg).get_string("which"), "first");
    EXPECT_EQ(tg::decode_object(tg::buffer::borrowed(msg), 0).get_metadata().get_string("which"), "second");
    EXPECT_EQ(tg::decode_descriptors(msg).first.get_string("which"), "second");
  }
  {
    const bytes msg = message_builder().frame(1, first).data_frame(p, desc).frame(7, third).finish();
    EXPECT_EQ(tg::decode(tg::buffer::borrowed(msg)).get_metadata().get_string("which"), "footer");
    EXPECT_EQ(tg::decode_metadata(msg).get_string("which"), "first");
    EXPECT_EQ(tg::decode_object(tg::buffer::borrowed(msg), 0).get_metadata().get_string("which"), "footer");
  }
  {
    // Footer only.
    const bytes msg = message_builder().data_frame(p, desc).frame(7, third).finish();
    EXPECT_EQ(tg::decode_metadata(msg).get_string("which"), "footer");
  }
  {
    // A malformed duplicate still fails the decode even though a later one is fine.
    const bytes msg =
        message_builder().frame(1, tgtest::B({0x80})).frame(1, second).data_frame(p, desc).finish();
    EXPECT_THROW(call(api::decode, msg), tg::metadata_error);
  }
}

// §18: streaming messages (total_length 0) decode to the end of the buffer.
TEST(ErrorCatalogue, StreamingMessages) {
  const value header = value::make_map({{"base", value(cbor::array{value::make_map({{"h", 1}})})}});
  const value footer = value::make_map({{"base", value(cbor::array{value::make_map({{"f", 1}})})}});
  const bytes p = payload_f32({3, 4});
  const value desc = tgtest::descriptor_value("float32", {2});
  message_builder b(0x00EB);
  b.frame(1, header).data_frame(p, desc).frame(7, footer);
  b.frame(5, tg::format::encode_hash_body(std::vector<std::uint64_t>{0}));
  b.frame(6, tg::format::encode_index_body({{88}, {0}}));
  const bytes msg = b.finish(true);
  ASSERT_EQ(tgtest::be64(msg, 16), 0u);
  const tg::message m = tg::decode(tg::buffer::borrowed(msg));
  EXPECT_EQ(m.object(0).data_as<float>()[1], 4.0f);
  EXPECT_EQ(m.get_metadata().get_int("f"), 1);
  EXPECT_EQ(tg::decode_metadata(msg).get_int("h"), 1);
  EXPECT_EQ(tg::decode_object(tg::buffer::borrowed(msg), 0).object(0).data_as<float>()[0], 3.0f);
  EXPECT_EQ(tg::scan(msg), (std::vector<tg::scan_entry>{{0, msg.size()}}));
  // Two streaming messages back to back: scan splits them at the first end magic.
  bytes twice = msg;
  twice.insert(twice.end(), msg.begin(), msg.end());
  const auto entries = tg::scan(twice);
  ASSERT_EQ(entries.size(), 2u);
  const tg::message second = tg::decode(
      tg::buffer::borrowed(std::span<const std::byte>(twice).subspan(entries[1].offset, entries[1].length)));
  EXPECT_EQ(second.object(0).data_as<float>()[0], 3.0f);
  // Streaming message truncated before its postamble: no end magic at the end.
  const bytes cut(msg.begin(), msg.end() - 8);
  EXPECT_THROW(call(api::decode, cut), tg::framing_error);
}

// §8: padding and stray bytes between frames are tolerated.
TEST(ErrorCatalogue, PaddingAndStrayBytesBetweenFrames) {
  const bytes p = payload_f32({1, 2});
  const value desc = tgtest::descriptor_value("float32", {2});
  message_builder b;
  b.raw(bytes(16, std::byte{0}));
  b.frame(1, tgtest::metadata_with_base(1));
  b.raw(tgtest::B({'j', 'u', 'n', 'k', 'F', 0, 0}));  // includes a lone 'F'
  b.data_frame(p, desc);
  EXPECT_EQ(tg::decode(tg::buffer::borrowed(b.finish())).object(0).data_as<float>()[0], 1.0f);
  // More than 7 zero bytes after a frame are tolerated too.
  message_builder z;
  z.frame(1, tgtest::metadata_with_base(1));
  z.raw(bytes(64, std::byte{0}));
  z.data_frame(p, desc);
  EXPECT_EQ(tg::decode(tg::buffer::borrowed(z.finish())).object(0).data_as<float>()[1], 2.0f);
}

}  // namespace

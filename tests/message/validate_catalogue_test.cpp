// Validation's issue catalogue (spec 02 §15): one crafted message per issue
// code, reported at the level that must report it and absent below it, with
// the severity and position the reference gives.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "tensogram/format/aggregate_frames.hpp"
#include "validate_support.hpp"

namespace {

using namespace tgtest::validation;
using tgtest::bytes;

// One row of the issue catalogue: a message that must produce `code` at
// `level`, when validated with `at`, with the expected position.
struct catalogue_case {
  const char* name;
  issue_code code;
  validation_level level;
  bytes msg;
  tg::validate_options at;
  opt_u64 object;
  opt_u64 offset;
  // Options one step below, where the issue must be absent (nothing: the
  // issue is structural and always reported).
  std::optional<tg::validate_options> below;
};

catalogue_case row(const char* name, issue_code code, validation_level level, bytes msg, opt_u64 object,
                   opt_u64 offset) {
  catalogue_case c{name, code, level, std::move(msg), {}, object, offset, std::nullopt};
  switch (level) {
    case validation_level::structure: c.at = mode(validation_mode::quick); break;
    case validation_level::metadata:
      c.at = mode(validation_mode::standard);
      c.below = mode(validation_mode::quick);
      break;
    case validation_level::integrity:
      c.at = mode(validation_mode::standard);
      c.below = up_to(validation_level::metadata);
      break;
    case validation_level::fidelity:
      c.at = mode(validation_mode::full);
      c.below = mode(validation_mode::standard);
      break;
  }
  return c;
}

// The canonical checks appear only with check_canonical.
catalogue_case canonical_row(const char* name, issue_code code, bytes msg, opt_u64 object, opt_u64 offset) {
  catalogue_case c = row(name, code, validation_level::metadata, std::move(msg), object, offset);
  c.at = mode(validation_mode::standard, true);
  c.below = mode(validation_mode::standard, false);
  return c;
}

std::vector<catalogue_case> catalogue() {
  std::vector<catalogue_case> rows;
  const crafted base = good();
  const std::size_t df = base.data_frame;
  const std::size_t df_len = tgtest::be64(base.msg, df + 8);
  const std::size_t post = base.msg.size() - 24;
  using L = validation_level;

  // -- structure --
  rows.push_back(row("short buffer", issue_code::buffer_too_short, L::structure, bytes(10), std::nullopt, 0));
  {
    bytes m = base.msg;
    m[0] = std::byte{'X'};
    rows.push_back(row("bad magic", issue_code::invalid_magic, L::structure, m, std::nullopt, 0));
  }
  {
    tgtest::message_builder b(k_flags, 2);
    b.frame(1, tgtest::metadata_with_base(0));
    rows.push_back(
        row("version 2", issue_code::preamble_parse_failed, L::structure, b.finish(), std::nullopt, 0));
  }
  rows.push_back(row("truncated message", issue_code::total_length_exceeds_buffer, L::structure,
                     tgtest::slice(base.msg, 0, base.msg.size() - 8), std::nullopt, 16));
  {
    bytes m = tgtest::slice(base.msg, 0, 48);
    tgtest::put_be64(m, 16, 40);
    rows.push_back(
        row("total_length 40", issue_code::total_length_too_small, L::structure, m, std::nullopt, 16));
  }
  {
    bytes m = base.msg;
    m.back() = std::byte{'8'};
    rows.push_back(row("no end magic", issue_code::postamble_invalid, L::structure, m, std::nullopt, post));
  }
  {
    bytes m = base.msg;
    tgtest::put_be64(m, post + 8, 1234);  // mirrored total_length disagrees
    rows.push_back(
        row("mirrored length", issue_code::postamble_invalid, L::structure, m, std::nullopt, post + 8));
  }
  {
    bytes m = base.msg;
    tgtest::put_be64(m, post, 5);
    rows.push_back(row("first_footer_offset 5", issue_code::footer_offset_out_of_range, L::structure, m,
                       std::nullopt, post));
  }
  {
    bytes m = base.msg;
    tgtest::put_be64(m, post, 24);
    rows.push_back(row("first_footer_offset 24", issue_code::footer_offset_mismatch, L::structure, m,
                       std::nullopt, std::nullopt));
  }
  {
    tgtest::message_builder b(k_flags);
    b.frame(1, tgtest::metadata_with_base(0));
    const std::size_t at = b.size();
    b.raw(tgtest::B({'F', 'R', 0, 9, 0, 1, 0, 0}));
    rows.push_back(row("FR before postamble", issue_code::truncated_frame_header, L::structure, b.finish(),
                       std::nullopt, at));
  }
  {
    tgtest::message_builder b(k_flags);
    b.frame(1, tgtest::metadata_with_base(0));
    b.frame(4, enc(cbor::value::make_map()));
    rows.push_back(row("frame type 4", issue_code::invalid_frame_header, L::structure, b.finish(),
                       std::nullopt, b.last_frame()));
  }
  {
    bytes m = base.msg;
    tgtest::put_be64(m, df + 8, ~std::uint64_t{0});
    rows.push_back(
        row("frame length 2^64-1", issue_code::frame_length_overflow, L::structure, m, std::nullopt, df));
  }
  {
    bytes m = base.msg;
    tgtest::put_be64(m, df + 8, 30);  // < 36 for a data frame
    rows.push_back(
        row("data frame of 30 bytes", issue_code::frame_too_small, L::structure, m, std::nullopt, df));
  }
  {
    bytes m = base.msg;
    tgtest::put_be64(m, df + 8, df_len + 16);
    rows.push_back(
        row("frame into postamble", issue_code::frame_exceeds_message, L::structure, m, std::nullopt, df));
  }
  {
    bytes m = base.msg;
    m[df + df_len - 4] = std::byte{'X'};
    rows.push_back(
        row("no ENDF", issue_code::missing_end_marker, L::structure, m, std::nullopt, df + df_len - 4));
  }
  {
    tgtest::message_builder b(k_flags);
    b.frame(1, tgtest::metadata_with_base(1));
    b.data_frame(be32({f1, f2}), f32_descriptor());
    b.frame(1, tgtest::metadata_with_base(1));
    rows.push_back(row("header frame after data", issue_code::frame_order_violation, L::structure, b.finish(),
                       std::nullopt, b.last_frame()));
  }
  {
    tgtest::message_builder b(k_flags | 0x0002 | 0x0040);
    b.frame(1, tgtest::metadata_with_base(0));
    b.frame(8, tgtest::metadata_with_base(1));
    b.frame(7, tgtest::metadata_with_base(0));
    rows.push_back(row("preceder then footer", issue_code::preceder_not_followed_by_object, L::structure,
                       b.finish(), std::nullopt, b.last_frame()));
  }
  {
    tgtest::message_builder b(k_flags | 0x0040);
    b.frame(1, tgtest::metadata_with_base(1));
    b.data_frame(be32({f1, f2}), f32_descriptor());
    b.frame(8, tgtest::metadata_with_base(1));
    rows.push_back(row("dangling preceder", issue_code::dangling_preceder, L::structure, b.finish(),
                       std::nullopt, std::nullopt));
  }
  {
    bytes m = base.msg;
    tgtest::put_be64(m, df + df_len - 20, 3);
    rows.push_back(row("cbor_offset 3", issue_code::cbor_offset_invalid, L::structure, m, 0, df));
  }
  {
    const crafted c = [] {
      tgtest::message_builder b(k_flags);
      b.frame(1, tgtest::metadata_with_base(1));
      b.data_frame(be32({f1, f2}), tgtest::B({0xFF}), false);
      return crafted{b.finish(), b.last_frame()};
    }();
    rows.push_back(row("CBOR-before garbage", issue_code::cbor_before_boundary_unknown, L::structure, c.msg,
                       0, c.data_frame));
  }
  {
    bytes m = base.msg;
    m[61] = std::byte{1};  // padding after the 36-byte metadata frame at 24
    rows.push_back(row("padding byte", issue_code::non_zero_padding, L::structure, m, std::nullopt, 60));
  }
  rows.push_back(row("HEADER_INDEX declared", issue_code::flag_mismatch, L::structure,
                     one_object(enc(f32_descriptor()), be32({f1, f2}), k_flags | 0x0004).msg, std::nullopt,
                     10));
  {
    tgtest::message_builder b(0x0080);
    b.data_frame(be32({f1, f2}), f32_descriptor());
    rows.push_back(row("no metadata", issue_code::no_metadata_frame, L::structure, b.finish(), std::nullopt,
                       std::nullopt));
  }

  // -- metadata --
  {
    tgtest::message_builder b(k_flags);
    b.frame(1, tgtest::B({0xFF}));
    rows.push_back(row("metadata 0xFF", issue_code::metadata_cbor_parse_failed, L::metadata, b.finish(),
                       std::nullopt, std::nullopt));
  }
  {
    tgtest::message_builder b(k_flags);
    b.frame(1, raw_map({{"zz", 1}, {"a", 2}}));
    rows.push_back(canonical_row("metadata keys zz, a", issue_code::metadata_cbor_non_canonical, b.finish(),
                                 std::nullopt, std::nullopt));
  }
  {
    tgtest::message_builder b(k_flags | 0x0004);
    b.frame(1, tgtest::metadata_with_base(0));
    b.frame(2, tgtest::B({0xFF}));
    rows.push_back(row("index 0xFF", issue_code::index_cbor_parse_failed, L::metadata, b.finish(),
                       std::nullopt, std::nullopt));
  }
  {
    tgtest::message_builder b(k_flags | 0x0004);
    b.frame(1, tgtest::metadata_with_base(1));
    b.frame(2, tg::format::encode_index_body({{999}, {df_len}}));
    b.data_frame(be32({f1, f2}), f32_descriptor());
    rows.push_back(
        row("index offset 999", issue_code::index_offset_mismatch, L::metadata, b.finish(), 0, std::nullopt));
  }
  {
    // Two index entries, one object; the first entry is right (a probe
    // build finds the frame: both offsets encode in the same CBOR width).
    auto build = [&](std::uint64_t first) {
      tgtest::message_builder b(k_flags | 0x0004);
      b.frame(1, tgtest::metadata_with_base(1));
      b.frame(2, tg::format::encode_index_body({{first, 999}, {df_len, df_len}}));
      b.data_frame(be32({f1, f2}), f32_descriptor());
      return crafted{b.finish(), b.last_frame()};
    };
    rows.push_back(row("index of two", issue_code::index_count_mismatch, L::metadata,
                       build(build(100).data_frame).msg, std::nullopt, std::nullopt));
  }
  {
    tgtest::message_builder b(k_flags | 0x0010);
    b.frame(1, tgtest::metadata_with_base(0));
    b.frame(3, tgtest::B({0xFF}));
    const bytes m = b.finish();
    rows.push_back(row("hash frame 0xFF (metadata)", issue_code::hash_frame_cbor_parse_failed, L::metadata, m,
                       std::nullopt, std::nullopt));
    catalogue_case c = row("hash frame 0xFF (integrity)", issue_code::hash_frame_cbor_parse_failed,
                           L::integrity, m, std::nullopt, b.last_frame());
    rows.push_back(std::move(c));
  }
  {
    tgtest::message_builder b(k_flags | 0x0010);
    b.frame(1, tgtest::metadata_with_base(0));
    const std::uint64_t two[] = {1, 2};
    b.frame(3, tg::format::encode_hash_body(two));
    rows.push_back(row("two hashes, no object", issue_code::hash_frame_count_mismatch, L::metadata,
                       b.finish(), std::nullopt, std::nullopt));
  }
  {
    tgtest::message_builder b(k_flags | 0x0040);
    b.frame(1, tgtest::metadata_with_base(1));
    b.frame(8, tgtest::B({0xFF}));
    const std::size_t at = b.last_frame();
    b.data_frame(be32({f1, f2}), f32_descriptor());
    rows.push_back(row("preceder 0xFF", issue_code::preceder_cbor_parse_failed, L::metadata, b.finish(),
                       std::nullopt, at));
  }
  {
    tgtest::message_builder b(k_flags | 0x0040);
    b.frame(1, tgtest::metadata_with_base(1));
    b.frame(8, raw_map({{"base", cbor::value(cbor::array{cbor::value::make_map()})}, {"zz", 1}}));
    const std::size_t at = b.last_frame();
    b.data_frame(be32({f1, f2}), f32_descriptor());
    rows.push_back(canonical_row("preceder keys base, zz", issue_code::preceder_cbor_non_canonical,
                                 b.finish(), std::nullopt, at));
  }
  {
    tgtest::message_builder b(k_flags | 0x0040);
    b.frame(1, tgtest::metadata_with_base(1));
    b.frame(8, tgtest::metadata_with_base(2));
    const std::size_t at = b.last_frame();
    b.data_frame(be32({f1, f2}), f32_descriptor());
    rows.push_back(row("preceder with 2 entries", issue_code::preceder_base_count_wrong, L::metadata,
                       b.finish(), std::nullopt, at));
  }
  {
    tgtest::message_builder b(k_flags);
    b.frame(1, tgtest::metadata_with_base(2));
    b.data_frame(be32({f1, f2}), f32_descriptor());
    rows.push_back(row("base of 2, one object", issue_code::base_count_exceeds_objects, L::metadata,
                       b.finish(), std::nullopt, std::nullopt));
  }
  auto with = [&](const char* key, cbor::value v) {
    cbor::value d = f32_descriptor();
    d.set(key, std::move(v));
    return one_object(enc(d), be32({f1, f2})).msg;
  };
  {
    cbor::value d = f32_descriptor();
    d.erase("dtype");
    rows.push_back(row("descriptor without dtype", issue_code::descriptor_cbor_parse_failed, L::metadata,
                       one_object(enc(d), be32({f1, f2})).msg, 0, std::nullopt));
  }
  {
    const bytes d = raw_map({{"type", "ntensor"},
                             {"ndim", 1},
                             {"shape", cbor::value(cbor::array{cbor::value(2)})},
                             {"strides", cbor::value(cbor::array{cbor::value(1)})},
                             {"dtype", "float32"},
                             {"byte_order", "big"},
                             {"encoding", "none"},
                             {"filter", "none"},
                             {"compression", "none"}});
    rows.push_back(canonical_row("descriptor type before ndim", issue_code::descriptor_cbor_non_canonical,
                                 one_object(d, be32({f1, f2})).msg, 0, std::nullopt));
  }
  rows.push_back(row("ndim 2, shape [2]", issue_code::ndim_shape_mismatch, L::metadata, with("ndim", 2), 0,
                     std::nullopt));
  rows.push_back(row("strides [1, 1]", issue_code::strides_shape_mismatch, L::metadata,
                     with("strides", cbor::value(cbor::array{cbor::value(1), cbor::value(1)})), 0,
                     std::nullopt));
  {
    cbor::value d = f32_descriptor();
    d.set("ndim", 2);
    d.set("shape",
          cbor::value(cbor::array{cbor::value(std::uint64_t{1} << 40), cbor::value(std::uint64_t{1} << 40)}));
    d.set("strides", cbor::value(cbor::array{cbor::value(std::uint64_t{1} << 40), cbor::value(1)}));
    rows.push_back(row("shape 2^80", issue_code::shape_overflow, L::metadata,
                       one_object(enc(d), be32({f1, f2})).msg, 0, std::nullopt));
  }
  rows.push_back(row("encoding fancy", issue_code::unknown_encoding, L::metadata, with("encoding", "fancy"),
                     0, std::nullopt));
  rows.push_back(
      row("filter bogus", issue_code::unknown_filter, L::metadata, with("filter", "bogus"), 0, std::nullopt));
  rows.push_back(row("compression gzip", issue_code::unknown_compression, L::metadata,
                     with("compression", "gzip"), 0, std::nullopt));
  rows.push_back(
      row("type \"\"", issue_code::empty_obj_type, L::metadata, with("type", ""), 0, std::nullopt));
  {
    tgtest::message_builder b(k_flags);
    b.frame(1, cbor::value::make_map(
                   {{"base", cbor::value(cbor::array{cbor::value::make_map({{"_reserved_", 5}})})}}));
    b.data_frame(be32({f1, f2}), f32_descriptor());
    rows.push_back(
        row("_reserved_ 5", issue_code::reserved_not_a_map, L::metadata, b.finish(), 0, std::nullopt));
  }
  {
    tgtest::message_builder b(k_flags);
    b.frame(1, cbor::value::make_map({{"base", cbor::value(cbor::array{cbor::value::make_map(
                                                   {{"_reserved_", cbor::value::make_map()}})})}}));
    b.data_frame(be32({f1, f2}), f32_descriptor());
    rows.push_back(
        row("_reserved_ {}", issue_code::reserved_missing_tensor, L::metadata, b.finish(), 0, std::nullopt));
  }
  {
    // Mask blobs said to start beyond the payload region.
    cbor::value d = f32_descriptor();
    d.set("masks",
          cbor::value::make_map(
              {{"nan", cbor::value::make_map({{"method", "none"}, {"offset", 100}, {"length", 1}})}}));
    const crafted c = one_object(enc(d), be32({f1, f2}));
    rows.push_back(row("mask offset 100", issue_code::descriptor_cbor_parse_failed, L::metadata, c.msg, 0,
                       c.data_frame));
  }

  // -- integrity --
  {
    bytes m = base.msg;
    m[df + 16] ^= std::byte{0x01};
    rows.push_back(row("payload bit flip", issue_code::hash_mismatch, L::integrity, m, 0, df));
  }
  {
    // The hash frame's entry disagrees with the object's (correct) slot.
    tgtest::message_builder b(k_flags | 0x0010);
    b.frame(1, tgtest::metadata_with_base(1));
    const std::uint64_t wrong[] = {0x0123456789abcdef};
    b.frame(3, tg::format::encode_hash_body(wrong));
    const std::size_t at = b.last_frame();
    b.data_frame(be32({f1, f2}), f32_descriptor());
    rows.push_back(row("aggregate entry", issue_code::hash_mismatch, L::integrity, b.finish(), 0, at));
  }
  rows.push_back(row("HASH_PRESENT clear", issue_code::hash_verification_error, L::integrity,
                     one_object(enc(f32_descriptor()), be32({f1, f2}), k_flags, false).msg, 0, df));
  {
    tgtest::message_builder b(k_flags | 0x0010);
    b.frame(1, tgtest::metadata_with_base(1));
    b.frame(3,
            cbor::value::make_map({{"algorithm", "md5"},
                                   {"hashes", cbor::value(cbor::array{cbor::value("0000000000000000")})}}));
    const std::size_t at = b.last_frame();
    b.data_frame(be32({f1, f2}), f32_descriptor());
    rows.push_back(
        row("algorithm md5", issue_code::unknown_hash_algorithm, L::integrity, b.finish(), std::nullopt, at));
  }
  rows.push_back(row("HASHES_PRESENT clear", issue_code::no_hash_available, L::integrity,
                     one_object(enc(f32_descriptor()), be32({f1, f2}), 0x0001, false).msg, 0, std::nullopt));
  rows.push_back(row("zstd garbage", issue_code::decode_pipeline_failed, L::integrity,
                     with("compression", "zstd"), 0, df));
  rows.push_back(row("sz3 without parameters", issue_code::pipeline_config_failed, L::integrity,
                     with("compression", "sz3"), 0, df));

  // -- fidelity --
  {
    cbor::value d = f32_descriptor();
    d.set("masks",
          cbor::value::make_map(
              {{"nan", cbor::value::make_map({{"method", "bogus"}, {"offset", 8}, {"length", 1}})}}));
    bytes payload = be32({0, f2});
    payload.push_back(std::byte{0x80});
    const crafted c = one_object(enc(d), payload);
    rows.push_back(
        row("mask method bogus", issue_code::decode_object_failed, L::fidelity, c.msg, 0, c.data_frame));
  }
  rows.push_back(row("12 bytes for [2] float32", issue_code::decoded_size_mismatch, L::fidelity,
                     one_object(enc(f32_descriptor()), be32({f1, f2, f1})).msg, 0, df));
  rows.push_back(row("NaN", issue_code::nan_detected, L::fidelity,
                     one_object(enc(f32_descriptor()), be32({f1, fnan})).msg, 0, df));
  rows.push_back(row("Inf", issue_code::inf_detected, L::fidelity,
                     one_object(enc(f32_descriptor()), be32({finf, f2})).msg, 0, df));
  return rows;
}

TEST(ValidateCatalogue, EachCodeAtItsLevelAndNotBelow) {
  for (const catalogue_case& c : catalogue()) {
    SCOPED_TRACE(std::string(c.name) + " → " + std::string(tg::issue_code_name(c.code)));
    const tg::message_report r = check(c.msg, c.at);
    const tg::validation_issue* hit = nullptr;
    for (const tg::validation_issue& i : r.issues) {
      if (i.code == c.code && i.level == c.level) hit = &i;
    }
    ASSERT_NE(hit, nullptr) << summary(r);
    EXPECT_EQ(hit->object_index, c.object) << summary(r);
    EXPECT_EQ(hit->byte_offset, c.offset) << summary(r);
    EXPECT_FALSE(hit->description.empty());
    EXPECT_EQ(r.ok(), hit->severity == tg::issue_severity::warning ? r.error_count() == 0 : false);
    if (hit->severity == tg::issue_severity::error) {
      EXPECT_FALSE(r.hash_verified);
    }
    if (c.below) {
      const tg::message_report lower = check(c.msg, *c.below);
      EXPECT_FALSE(has_at(lower, c.code, c.level)) << summary(lower);
    }
  }
}

TEST(ValidateCatalogue, EveryReachableCodeIsCoveredWithItsSeverity) {
  const std::set<issue_code> warnings = {issue_code::footer_offset_mismatch,
                                         issue_code::non_zero_padding,
                                         issue_code::flag_mismatch,
                                         issue_code::metadata_cbor_non_canonical,
                                         issue_code::preceder_cbor_non_canonical,
                                         issue_code::descriptor_cbor_non_canonical,
                                         issue_code::reserved_missing_tensor,
                                         issue_code::unknown_hash_algorithm,
                                         issue_code::no_hash_available};
  std::set<issue_code> seen;
  for (const catalogue_case& c : catalogue()) {
    const tg::message_report r = check(c.msg, c.at);
    for (const tg::validation_issue& i : r.issues) {
      if (i.code != c.code) continue;
      seen.insert(i.code);
      EXPECT_EQ(i.severity == tg::issue_severity::warning, warnings.count(i.code) == 1) << c.name;
    }
  }
  for (issue_code code : tg::all_issue_codes()) {
    // total_length does not overflow a 64-bit size_t.
    if (code == issue_code::total_length_overflow && sizeof(std::size_t) == 8) continue;
    EXPECT_EQ(seen.count(code), 1u) << tg::issue_code_name(code);
  }
}

TEST(ValidateCatalogue, NamesAreTheSpecsSnakeCase) {
  EXPECT_EQ(tg::all_issue_codes().size(), 55u);
  EXPECT_EQ(tg::issue_code_name(issue_code::buffer_too_short), "buffer_too_short");
  EXPECT_EQ(tg::issue_code_name(issue_code::preceder_not_followed_by_object),
            "preceder_not_followed_by_object");
  EXPECT_EQ(tg::issue_code_name(issue_code::reserved_missing_tensor), "reserved_missing_tensor");
  EXPECT_EQ(tg::issue_code_name(issue_code::pipeline_config_failed), "pipeline_config_failed");
  EXPECT_EQ(tg::issue_code_name(issue_code::inf_detected), "inf_detected");
  std::set<std::string_view> names;
  for (issue_code c : tg::all_issue_codes()) names.insert(tg::issue_code_name(c));
  EXPECT_EQ(names.size(), 55u);
}

TEST(ValidateDetails, IndexCountMismatchIsReportedTwiceLikeTheReference) {
  for (const catalogue_case& c : catalogue()) {
    if (c.code != issue_code::index_count_mismatch) continue;
    const tg::message_report r = check(c.msg);
    EXPECT_EQ(issues_with(r, issue_code::index_count_mismatch).size(), 2u) << summary(r);
    // The first offset is the data frame's real position.
    EXPECT_TRUE(issues_with(r, issue_code::index_offset_mismatch).empty()) << summary(r);
  }
}

TEST(ValidateDetails, HashFrameParseFailureAtBothLevels) {
  for (const catalogue_case& c : catalogue()) {
    if (c.code != issue_code::hash_frame_cbor_parse_failed) continue;
    const tg::message_report r = check(c.msg);
    EXPECT_TRUE(has_at(r, c.code, validation_level::metadata)) << summary(r);
    EXPECT_TRUE(has_at(r, c.code, validation_level::integrity)) << summary(r);
    // Checksum mode runs no metadata level.
    const tg::message_report cs = check(c.msg, mode(validation_mode::checksum));
    EXPECT_FALSE(has_at(cs, c.code, validation_level::metadata)) << summary(cs);
    EXPECT_TRUE(has_at(cs, c.code, validation_level::integrity)) << summary(cs);
  }
}

}  // namespace

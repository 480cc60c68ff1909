// Validation's individual checks in detail (spec 02 §15): hash digests and
// frames, parse failures, canonical checks, non-finite scans per dtype and
// byte order, streaming messages, and bytes between frames.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "tensogram/format/aggregate_frames.hpp"
#include "validate_support.hpp"

namespace {

using namespace tgtest::validation;
using tgtest::bytes;

// ---- details of individual checks ---------------------------------------------

TEST(ValidateDetails, HashMismatchNamesBothDigests) {
  crafted c = good();
  c.msg[c.data_frame + 16] ^= std::byte{0x01};
  const tg::message_report r = check(c.msg);
  const auto hits = issues_with(r, issue_code::hash_mismatch);
  ASSERT_EQ(hits.size(), 1u) << summary(r);
  const std::uint64_t slot = tgtest::be64(c.msg, c.data_frame + tgtest::be64(c.msg, c.data_frame + 8) - 12);
  const tgtest::wire_frame f = tgtest::wire_frames(c.msg).back();
  const std::uint64_t actual = tg::format::xxh3_64(tgtest::frame_body(c.msg, f));
  EXPECT_EQ(hits[0]->description,
            "frame hash mismatch (expected " + tg::hex16(slot) + ", got " + tg::hex16(actual) + ")");
  EXPECT_FALSE(r.hash_verified);
  // Checksum mode sees it too; quick mode does not.
  EXPECT_EQ(issues_with(check(c.msg, mode(validation_mode::checksum)), issue_code::hash_mismatch).size(), 1u);
  EXPECT_TRUE(check(c.msg, mode(validation_mode::quick)).issues.empty());
}

TEST(ValidateDetails, FixtureTamperingNamesTheObject) {
  // fixtures/tgm/README.md: flipping a byte in object N's body of
  // multi_object_xxh3 gives HashMismatch for object N.
  const bytes file = tgtest::read_fixture("multi_object_xxh3.tgm");
  const std::size_t frames[] = {616, 776, 944};
  for (std::size_t n = 0; n < 3; ++n) {
    bytes m = file;
    m[frames[n] + 20] ^= std::byte{0xFF};
    const tg::message_report r = check(m);
    ASSERT_EQ(r.issues.size(), 1u) << summary(r);
    EXPECT_EQ(r.issues[0].code, issue_code::hash_mismatch);
    EXPECT_EQ(r.issues[0].object_index, opt_u64(n));
    EXPECT_EQ(r.issues[0].byte_offset, opt_u64(frames[n]));
    // Clearing HASH_PRESENT of object N instead: hash_verification_error.
    bytes cleared = file;
    cleared[frames[n] + 7] &= std::byte{0xFD};
    const tg::message_report r2 = check(cleared);
    ASSERT_EQ(r2.issues.size(), 1u) << summary(r2);
    EXPECT_EQ(r2.issues[0].code, issue_code::hash_verification_error);
    EXPECT_EQ(r2.issues[0].object_index, opt_u64(n));
  }
}

TEST(ValidateDetails, HeaderAndFooterHashFramesMustAgree) {
  const bytes d = enc(f32_descriptor());
  tgtest::message_builder b(k_flags | 0x0010 | 0x0020);
  b.frame(1, tgtest::metadata_with_base(1));
  b.data_frame(be32({f1, f2}), d);
  const std::uint64_t slot = [&] {
    bytes tmp = b.finish();
    const tgtest::wire_frame f = tgtest::wire_frames(tmp).back();
    return f.slot;
  }();
  // Rebuild with both hash frames: the header one right, the footer one not.
  tgtest::message_builder m(k_flags | 0x0010 | 0x0020);
  m.frame(1, tgtest::metadata_with_base(1));
  const std::uint64_t right[] = {slot};
  const std::uint64_t wrong[] = {slot ^ 1};
  m.frame(3, tg::format::encode_hash_body(right));
  m.data_frame(be32({f1, f2}), d);
  m.frame(5, tg::format::encode_hash_body(wrong));
  const std::size_t footer = m.last_frame();
  const tg::message_report r = check(m.finish());
  const auto hits = issues_with(r, issue_code::hash_mismatch);
  ASSERT_EQ(hits.size(), 2u) << summary(r);
  // Header vs footer, then the footer entry vs the slot.
  EXPECT_EQ(hits[0]->object_index, std::nullopt);
  EXPECT_EQ(hits[0]->byte_offset, opt_u64(footer));
  EXPECT_EQ(hits[1]->object_index, opt_u64(0));
  EXPECT_EQ(hits[1]->byte_offset, opt_u64(footer));
  EXPECT_FALSE(r.hash_verified);
}

TEST(ValidateDetails, MetadataParseFailureStopsFurtherMetadataChecks) {
  tgtest::message_builder b(k_flags);
  b.frame(1, tgtest::B({0xFF}));
  cbor::value d = f32_descriptor();
  d.set("ndim", 7);
  b.data_frame(be32({f1, f2}), d);
  const tg::message_report r = check(b.finish());
  EXPECT_EQ(issues_with(r, issue_code::metadata_cbor_parse_failed).size(), 1u) << summary(r);
  EXPECT_TRUE(issues_with(r, issue_code::ndim_shape_mismatch).empty()) << summary(r);
  EXPECT_EQ(r.issues[0].description.rfind("failed to parse metadata CBOR: ", 0), 0u);
}

TEST(ValidateDetails, CanonicalCheckAlsoFlagsUnparsableBodies) {
  tgtest::message_builder b(k_flags);
  b.frame(1, tgtest::B({0xFF}));
  const bytes m = b.finish();
  const tg::message_report r = check(m, mode(validation_mode::standard, true));
  EXPECT_EQ(issues_with(r, issue_code::metadata_cbor_non_canonical).size(), 1u) << summary(r);
  EXPECT_EQ(issues_with(r, issue_code::metadata_cbor_parse_failed).size(), 1u) << summary(r);
}

TEST(ValidateDetails, QuickWithCanonicalRunsTheMetadataLevel) {
  // Spec 02 §15.1: the metadata level runs when check_canonical is set,
  // whatever the mode.
  cbor::value d = f32_descriptor();
  d.set("ndim", 3);
  const bytes m = one_object(enc(d), be32({f1, f2})).msg;
  EXPECT_TRUE(issues_with(check(m, mode(validation_mode::quick)), issue_code::ndim_shape_mismatch).empty());
  EXPECT_EQ(issues_with(check(m, mode(validation_mode::quick, true)), issue_code::ndim_shape_mismatch).size(),
            1u);
  EXPECT_EQ(
      issues_with(check(m, mode(validation_mode::checksum, true)), issue_code::ndim_shape_mismatch).size(),
      1u);
}

TEST(ValidateDetails, ChecksumModeParsesDescriptorsItself) {
  cbor::value d = f32_descriptor();
  d.erase("shape");
  const bytes m = one_object(enc(d), be32({f1, f2})).msg;
  const tg::message_report r = check(m, mode(validation_mode::checksum));
  const auto hits = issues_with(r, issue_code::hash_verification_error);
  ASSERT_EQ(hits.size(), 1u) << summary(r);
  EXPECT_EQ(hits[0]->object_index, opt_u64(0));
  EXPECT_EQ(hits[0]->description.rfind("failed to parse descriptor: ", 0), 0u);
  // With level 2 it is a descriptor_cbor_parse_failed, not repeated at level 3.
  const tg::message_report std_r = check(m);
  EXPECT_EQ(issues_with(std_r, issue_code::descriptor_cbor_parse_failed).size(), 1u) << summary(std_r);
  EXPECT_TRUE(issues_with(std_r, issue_code::hash_verification_error).empty()) << summary(std_r);
}

TEST(ValidateDetails, NoHashAvailableIsAWarningPerObject) {
  tgtest::message_builder b(0x0001);
  b.frame(1, tgtest::metadata_with_base(2), false);
  b.data_frame(be32({f1, f2}), f32_descriptor(), true, false);
  b.data_frame(be32({f1, f2}), f32_descriptor(), true, false);
  const tg::message_report r = check(b.finish());
  const auto hits = issues_with(r, issue_code::no_hash_available);
  ASSERT_EQ(hits.size(), 2u) << summary(r);
  EXPECT_EQ(hits[1]->object_index, opt_u64(1));
  EXPECT_TRUE(r.ok());
  EXPECT_FALSE(r.hash_verified);
}

TEST(ValidateDetails, ZeroObjectsIsNeverHashVerified) {
  tgtest::message_builder b(k_flags);
  b.frame(1, tgtest::metadata_with_base(0));
  const tg::message_report r = check(b.finish());
  EXPECT_TRUE(r.issues.empty()) << summary(r);
  EXPECT_EQ(r.object_count, 0u);
  EXPECT_FALSE(r.hash_verified);
}

TEST(ValidateDetails, StreamingMessageEndsAtTheBufferEnd) {
  tgtest::message_builder b(k_flags);
  b.frame(1, tgtest::metadata_with_base(1));
  b.data_frame(be32({f1, f2}), f32_descriptor());
  bytes m = b.finish(true);
  EXPECT_TRUE(check(m).issues.empty()) << summary(check(m));
  m.resize(m.size() - 3);
  const tg::message_report r = check(m);
  ASSERT_FALSE(r.issues.empty());
  EXPECT_EQ(r.issues[0].code, issue_code::postamble_invalid);
  EXPECT_EQ(r.object_count, 0u);
}

TEST(ValidateDetails, StructuralFailureKeepsObjectsFoundBeforeIt) {
  // A frame running into the postamble stops the walk; the object before it
  // is still checked (and verified, but the error forbids hash_verified).
  tgtest::message_builder b(k_flags);
  b.frame(1, tgtest::metadata_with_base(1));
  b.data_frame(be32({f1, f2}), f32_descriptor());
  b.data_frame(be32({f1, f2}), f32_descriptor());
  const std::size_t second = b.last_frame();
  bytes m = b.finish();
  tgtest::put_be64(m, second + 8, 1000);
  const tg::message_report r = check(m);
  EXPECT_EQ(r.object_count, 1u);
  EXPECT_EQ(issues_with(r, issue_code::frame_exceeds_message).size(), 1u) << summary(r);
  EXPECT_TRUE(issues_with(r, issue_code::hash_mismatch).empty()) << summary(r);
  EXPECT_FALSE(r.hash_verified);
}

TEST(ValidateDetails, MaskedNonFiniteValuesAreExpected) {
  // NaN at element 0 recorded in a `none` mask: fine; NaN at element 1 is not.
  cbor::value d = f32_descriptor();
  d.set("masks", cbor::value::make_map(
                     {{"nan", cbor::value::make_map({{"method", "none"}, {"offset", 8}, {"length", 1}})}}));
  bytes payload = be32({fnan, f2});
  payload.push_back(std::byte{0x80});
  EXPECT_TRUE(check(one_object(enc(d), payload).msg, mode(validation_mode::full)).issues.empty());
  payload = be32({fnan, fnan});
  payload.push_back(std::byte{0x80});
  const tg::message_report r = check(one_object(enc(d), payload).msg, mode(validation_mode::full));
  const auto hits = issues_with(r, issue_code::nan_detected);
  ASSERT_EQ(hits.size(), 1u) << summary(r);
  EXPECT_EQ(hits[0]->description, "unexpected NaN at element 1 (not recorded in mask)");
}

TEST(ValidateDetails, OnlyTheFirstNonFiniteElementIsReported) {
  const tg::message_report r = check(one_object(enc(f32_descriptor({4})), be32({f1, finf, fnan, finf})).msg,
                                     mode(validation_mode::full));
  ASSERT_EQ(r.issues.size(), 1u) << summary(r);
  EXPECT_EQ(r.issues[0].code, issue_code::inf_detected);
  EXPECT_EQ(r.issues[0].description, "unexpected Inf at element 1 (not recorded in mask)");
}

TEST(ValidateDetails, ComplexScanReportsTheRealComponentFirst) {
  // complex64 element 0 = (Inf, NaN): the real component decides.
  const bytes m = one_object(enc(tgtest::descriptor_value("complex64", {1})), be32({finf, fnan})).msg;
  const tg::message_report r = check(m, mode(validation_mode::full));
  ASSERT_EQ(r.issues.size(), 1u) << summary(r);
  EXPECT_EQ(r.issues[0].code, issue_code::inf_detected);
  EXPECT_EQ(r.issues[0].description, "unexpected Inf at element 0 (real component, not recorded in mask)");
  const bytes m2 = one_object(enc(tgtest::descriptor_value("complex64", {1})), be32({f1, fnan})).msg;
  const tg::message_report r2 = check(m2, mode(validation_mode::full));
  ASSERT_EQ(r2.issues.size(), 1u) << summary(r2);
  EXPECT_EQ(r2.issues[0].description,
            "unexpected NaN at element 0 (imaginary component, not recorded in mask)");
}

TEST(ValidateDetails, LittleEndianAndHalfFloatsAreScannedInTheirOrder) {
  // float64 little-endian NaN, float16 big-endian -Inf (0xFC00).
  bytes le_nan = {std::byte{0}, std::byte{0}, std::byte{0},    std::byte{0},
                  std::byte{0}, std::byte{0}, std::byte{0xF8}, std::byte{0x7F}};
  const tg::message_report r =
      check(one_object(enc(tgtest::descriptor_value("float64", {1}, "little")), le_nan).msg,
            mode(validation_mode::full));
  EXPECT_EQ(issues_with(r, issue_code::nan_detected).size(), 1u) << summary(r);
  const tg::message_report h = check(
      one_object(enc(tgtest::descriptor_value("float16", {2})), tgtest::B({0x3C, 0x00, 0xFC, 0x00})).msg,
      mode(validation_mode::full));
  ASSERT_EQ(issues_with(h, issue_code::inf_detected).size(), 1u) << summary(h);
  EXPECT_EQ(h.issues[0].description, "unexpected Inf at element 1 (not recorded in mask)");
  // Integers with all-ones bytes are never NaN.
  EXPECT_TRUE(check(one_object(enc(tgtest::descriptor_value("uint32", {1})), be32({fnan})).msg,
                    mode(validation_mode::full))
                  .issues.empty());
}

TEST(ValidateDetails, CompressedObjectsAreDecodedAtIntegrityAndScannedAtFidelity) {
  // zstd-compressed objects decode cleanly at every level; a damaged one
  // gives its hash mismatch and then its decode failure.
  tg::data_object_descriptor d =
      tg::data_object_descriptor::contiguous(tg::dtype::float32, {3}, tg::byte_order::big);
  d.compression = "zstd";
  const bytes values = be32({f1, f2, f1});
  std::vector<tg::object_input> in = {{d, values}, {d, values}};
  bytes m = tg::encode(tg::global_metadata{}, in);
  EXPECT_TRUE(check(m, mode(validation_mode::full)).issues.empty())
      << summary(check(m, mode(validation_mode::full)));
  // Replace object 1's payload by an undecodable one (and keep its slot).
  const std::vector<tgtest::wire_frame> frames = tgtest::wire_frames(m);
  const tgtest::wire_frame last = frames.back();
  m[last.offset + 16] ^= std::byte{0xFF};
  const tg::message_report r = check(m, mode(validation_mode::full));
  ASSERT_GE(r.issues.size(), 2u) << summary(r);
  EXPECT_EQ(r.issues[0].code, issue_code::hash_mismatch);
  EXPECT_EQ(r.issues[1].code, issue_code::decode_pipeline_failed);
  EXPECT_EQ(r.issues[1].object_index, opt_u64(1));
}

TEST(ValidateDetails, GarbageBetweenFramesWarns) {
  crafted c = good();
  // Bytes 60..63 are the metadata frame's padding.
  c.msg[60] = std::byte{'x'};
  const tg::message_report r = check(c.msg);
  const auto hits = issues_with(r, issue_code::non_zero_padding);
  ASSERT_EQ(hits.size(), 1u) << summary(r);
  EXPECT_TRUE(r.ok());
  // Checksum mode drops structural warnings.
  EXPECT_TRUE(check(c.msg, mode(validation_mode::checksum)).issues.empty());
}

}  // namespace

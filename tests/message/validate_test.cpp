// Validation (spec 02 §15): fixture reports as fixtures/tgm/README.md
// describes them, one crafted message per issue code at the level that
// must report it (and absent below it), file issues, JSON shapes, the
// string API, and robustness against mutated input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <tensogram.hpp>
#include "tensogram/format/aggregate_frames.hpp"
#include "test_support.hpp"

namespace {

namespace tg = tensogram;
namespace cbor = tensogram::cbor;
using tg::issue_code;
using tg::validation_level;
using tg::validation_mode;
using tgtest::bytes;
using opt_u64 = std::optional<std::uint64_t>;

tg::validate_options mode(validation_mode m, bool canonical = false) {
  return tg::validate_options::for_mode(m, canonical);
}

tg::validate_options up_to(validation_level l) {
  tg::validate_options o;
  o.max_level = l;
  return o;
}

// "code@level(severity)#object@offset; ..." for failure messages.
std::string summary(const tg::message_report& r) {
  std::string s;
  for (const tg::validation_issue& i : r.issues) {
    s += std::string(tg::issue_code_name(i.code)) + "@" + std::string(tg::validation_level_name(i.level)) +
         "(" + std::string(tg::issue_severity_name(i.severity)) + ")";
    if (i.object_index) s += "#" + std::to_string(*i.object_index);
    if (i.byte_offset) s += "@" + std::to_string(*i.byte_offset);
    s += ": " + i.description + "; ";
  }
  return s;
}

std::vector<const tg::validation_issue*> issues_with(const tg::message_report& r, issue_code c) {
  std::vector<const tg::validation_issue*> out;
  for (const tg::validation_issue& i : r.issues) {
    if (i.code == c) out.push_back(&i);
  }
  return out;
}

bool has_at(const tg::message_report& r, issue_code c, validation_level l) {
  return std::any_of(r.issues.begin(), r.issues.end(),
                     [&](const tg::validation_issue& i) { return i.code == c && i.level == l; });
}

tg::message_report check(std::span<const std::byte> msg, const tg::validate_options& o = {}) {
  return tg::validate_message(msg, o);
}

// ---- fixtures (fixtures/tgm/README.md) -------------------------------------

enum class family { hash_flagged, legacy_header, legacy_footer, streaming_tail };

struct fixture_case {
  const char* name;
  std::size_t messages;
  std::size_t objects;
  family kind;
};

const std::vector<fixture_case>& fixture_cases() {
  static const std::vector<fixture_case> cases = {
      {"simple_f32.tgm", 1, 1, family::hash_flagged},
      {"hash_xxh3.tgm", 1, 1, family::hash_flagged},
      {"mars_metadata.tgm", 1, 1, family::hash_flagged},
      {"multi_message.tgm", 2, 2, family::hash_flagged},
      {"multi_object.tgm", 1, 3, family::hash_flagged},
      {"multi_object_xxh3.tgm", 1, 3, family::hash_flagged},
      {"metadata_parity.tgm", 1, 2, family::hash_flagged},
      {"single-msg.tgm", 1, 1, family::legacy_header},
      {"two-msg.tgm", 2, 2, family::legacy_header},
      {"ten-msg.tgm", 10, 10, family::legacy_header},
      {"hundred-msg.tgm", 100, 100, family::legacy_header},
      {"thousand-msg.tgm", 1000, 1000, family::legacy_header},
      {"single-msg-footer.tgm", 1, 1, family::legacy_footer},
      {"ten-msg-footer.tgm", 10, 10, family::legacy_footer},
      {"hundred-msg-footer.tgm", 100, 100, family::legacy_footer},
      {"thousand-msg-footer.tgm", 1000, 1000, family::legacy_footer},
      {"streaming-tail.tgm", 10, 10, family::streaming_tail},
  };
  return cases;
}

const std::string k_missing_hash_text =
    "frame hash verification error: hash verification requested but object 0 has no inline hash recorded "
    "(HASH_PRESENT flag clear); re-encode with hashing enabled or decode without verify_hash";

// Legacy messages (producer 0.19.0): the per-frame HASH_PRESENT bit is clear,
// so default validation reports one hash_verification_error per object at
// the data frame; footer-indexed ones also warn that PRECEDER_METADATA is set
// without a preceder.
void expect_legacy_message(const tg::message_report& r, bool footer, std::size_t data_frame) {
  SCOPED_TRACE(summary(r));
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.hash_verified);
  EXPECT_EQ(r.object_count, 1u);
  ASSERT_EQ(r.issues.size(), footer ? 2u : 1u);
  std::size_t k = 0;
  if (footer) {
    const tg::validation_issue& w = r.issues[k++];
    EXPECT_EQ(w.code, issue_code::flag_mismatch);
    EXPECT_EQ(w.level, validation_level::structure);
    EXPECT_EQ(w.severity, tg::issue_severity::warning);
    EXPECT_EQ(w.byte_offset, opt_u64(10));
    EXPECT_EQ(w.object_index, std::nullopt);
    EXPECT_NE(w.description.find("PRECEDER_METADATA"), std::string::npos);
  }
  const tg::validation_issue& e = r.issues[k];
  EXPECT_EQ(e.code, issue_code::hash_verification_error);
  EXPECT_EQ(e.level, validation_level::integrity);
  EXPECT_EQ(e.severity, tg::issue_severity::error);
  EXPECT_EQ(e.object_index, opt_u64(0));
  EXPECT_EQ(e.byte_offset, opt_u64(data_frame));
  EXPECT_EQ(e.description, k_missing_hash_text);
}

TEST(ValidateFixtures, DefaultReportsMatchTheReadme) {
  for (const fixture_case& c : fixture_cases()) {
    SCOPED_TRACE(c.name);
    const tg::file_report r = tg::validate_file(tgtest::fixture_path(c.name));
    EXPECT_TRUE(r.file_issues.empty());
    ASSERT_EQ(r.messages.size(), c.messages);
    EXPECT_EQ(r.object_count(), c.objects);
    for (std::size_t m = 0; m < r.messages.size(); ++m) {
      SCOPED_TRACE(m);
      const tg::message_report& mr = r.messages[m];
      switch (c.kind) {
        case family::hash_flagged:
          EXPECT_TRUE(mr.issues.empty()) << summary(mr);
          EXPECT_TRUE(mr.hash_verified);
          break;
        case family::legacy_header: expect_legacy_message(mr, false, 400); break;
        case family::legacy_footer: expect_legacy_message(mr, true, m < 24 ? 88 : 96); break;
        case family::streaming_tail: expect_legacy_message(mr, m == 9, m == 9 ? 88 : 400); break;
      }
    }
    const bool good = c.kind == family::hash_flagged;
    EXPECT_EQ(r.ok(), good);
    EXPECT_EQ(r.hash_verified(), good);
    EXPECT_EQ(r.status(), good ? "ok" : "failed");
    EXPECT_EQ(r.problem_count(), good ? 0u : c.messages);
  }
}

TEST(ValidateFixtures, EveryModeOnHashFlaggedFilesIsClean) {
  for (const fixture_case& c : fixture_cases()) {
    if (c.kind != family::hash_flagged) continue;
    for (validation_mode m : {validation_mode::quick, validation_mode::standard, validation_mode::checksum,
                              validation_mode::full}) {
      for (bool canonical : {false, true}) {
        SCOPED_TRACE(std::string(c.name) + " " + std::string(tg::validation_mode_name(m)) +
                     (canonical ? " canonical" : ""));
        const tg::file_report r = tg::validate_file(tgtest::fixture_path(c.name), mode(m, canonical));
        EXPECT_TRUE(r.ok());
        for (const tg::message_report& mr : r.messages) EXPECT_TRUE(mr.issues.empty()) << summary(mr);
        // Quick mode verifies no hash.
        EXPECT_EQ(r.hash_verified(), m != validation_mode::quick);
      }
    }
  }
}

TEST(ValidateFixtures, LegacyFilesByMode) {
  const bytes footer = tgtest::read_fixture("single-msg-footer.tgm");
  // Quick: structure only, the flag warning stays; no hash is checked.
  tg::message_report r = check(footer, mode(validation_mode::quick));
  ASSERT_EQ(r.issues.size(), 1u) << summary(r);
  EXPECT_EQ(r.issues[0].code, issue_code::flag_mismatch);
  EXPECT_TRUE(r.ok());
  EXPECT_FALSE(r.hash_verified);
  // Checksum: structural warnings dropped, the hash error kept.
  r = check(footer, mode(validation_mode::checksum));
  ASSERT_EQ(r.issues.size(), 1u) << summary(r);
  EXPECT_EQ(r.issues[0].code, issue_code::hash_verification_error);
  EXPECT_EQ(r.issues[0].description, k_missing_hash_text);
  // Full: nothing beyond default (raw float32 values are finite).
  r = check(footer, mode(validation_mode::full));
  expect_legacy_message(r, true, 88);
  // Canonical: the reference wrote canonical CBOR everywhere.
  r = check(footer, mode(validation_mode::standard, true));
  expect_legacy_message(r, true, 88);
}

TEST(ValidateFixtures, FileAndBufferReportsAgree) {
  for (const char* name : {"multi_message.tgm", "streaming-tail.tgm", "ten-msg-footer.tgm"}) {
    SCOPED_TRACE(name);
    const bytes b = tgtest::read_fixture(name);
    const tg::validate_options o = mode(validation_mode::full, true);
    EXPECT_EQ(tg::to_json(tg::validate_buffer(b, o)),
              tg::to_json(tg::validate_file(tgtest::fixture_path(name), o)));
  }
}

TEST(ValidateFixtures, ProgressIsReportedPerMessage) {
  std::vector<std::pair<std::size_t, std::size_t>> calls;
  (void)tg::validate_file(tgtest::fixture_path("ten-msg.tgm"), {},
                          [&](std::size_t done, std::size_t total) { calls.emplace_back(done, total); });
  ASSERT_EQ(calls.size(), 10u);
  for (std::size_t i = 0; i < 10; ++i) EXPECT_EQ(calls[i], std::make_pair(i + 1, std::size_t{10}));
}

// ---- crafted messages --------------------------------------------------------

// Big-endian float32 bit patterns.
bytes be32(std::initializer_list<std::uint32_t> words) {
  bytes out;
  for (std::uint32_t w : words) {
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<std::byte>((w >> s) & 0xFF));
  }
  return out;
}

constexpr std::uint32_t f1 = 0x3F800000;  // 1.0f
constexpr std::uint32_t f2 = 0x40000000;  // 2.0f
constexpr std::uint32_t fnan = 0x7FC00000;
constexpr std::uint32_t finf = 0x7F800000;

// A CBOR map written in exactly the given key order (cbor::encode would
// sort it canonically).
bytes raw_map(const std::vector<std::pair<std::string, cbor::value>>& entries) {
  bytes out{static_cast<std::byte>(0xA0 + entries.size())};
  for (const auto& [k, v] : entries) {
    const bytes key = cbor::encode(cbor::value(k));
    const bytes val = cbor::encode(v);
    out.insert(out.end(), key.begin(), key.end());
    out.insert(out.end(), val.begin(), val.end());
  }
  return out;
}

bytes enc(const cbor::value& v) {
  return cbor::encode(v);
}

cbor::value f32_descriptor(std::vector<std::uint64_t> shape = {2}) {
  return tgtest::descriptor_value("float32", std::move(shape));
}

// HEADER_METADATA | HASHES_PRESENT: what a header metadata frame and hashed
// data frames declare.
constexpr std::uint16_t k_flags = 0x0081;

struct crafted {
  bytes msg;
  std::size_t data_frame = 0;  // offset of the (last) data frame
};

// Header metadata frame ({"base": [{}]}, 36 bytes at 24, padded to 64) and
// one data-object frame at 64.
crafted one_object(const bytes& descriptor, const bytes& payload, std::uint16_t flags = k_flags,
                   bool hashed = true) {
  tgtest::message_builder b(flags);
  b.frame(1, tgtest::metadata_with_base(1));
  b.data_frame(payload, descriptor, true, hashed);
  crafted c;
  c.data_frame = b.last_frame();
  c.msg = b.finish();
  return c;
}

crafted good() {
  return one_object(enc(f32_descriptor()), be32({f1, f2}));
}

TEST(ValidateCrafted, GoodMessageIsCleanAtEveryLevel) {
  const crafted c = good();
  ASSERT_EQ(c.data_frame, 64u);
  for (validation_mode m : {validation_mode::quick, validation_mode::standard, validation_mode::checksum,
                            validation_mode::full}) {
    const tg::message_report r = check(c.msg, mode(m, true));
    EXPECT_TRUE(r.issues.empty()) << summary(r);
    EXPECT_EQ(r.object_count, 1u);
    EXPECT_EQ(r.hash_verified, m != validation_mode::quick);
  }
  // The library's own encoder output validates cleanly too, NaN masks included.
  tg::encode_options o;
  o.allow_nan = true;
  o.allow_inf = true;
  const bytes values = be32({f1, fnan, finf, f2});
  std::vector<tg::object_input> in = {
      {tg::data_object_descriptor::contiguous(tg::dtype::float32, {4}, tg::byte_order::big), values}};
  const bytes encoded = tg::encode(tg::global_metadata{}, in, o);
  const tg::message_report r = check(encoded, mode(validation_mode::full, true));
  EXPECT_TRUE(r.issues.empty()) << summary(r);
  EXPECT_TRUE(r.hash_verified);
}

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

// ---- files and buffers ------------------------------------------------------

TEST(ValidateFiles, GapsAndTrailingBytesBecomeFileIssues) {
  const bytes two = tgtest::read_fixture("multi_message.tgm");
  bytes m = tgtest::B({'j', 'u', 'n', 'k'});
  m.insert(m.end(), two.begin(), two.begin() + 584);
  const bytes garbage(5, std::byte{0x55});
  m.insert(m.end(), garbage.begin(), garbage.end());
  m.insert(m.end(), two.begin() + 584, two.end());
  m.insert(m.end(), garbage.begin(), garbage.begin() + 3);
  const tg::file_report r = tg::validate_buffer(m);
  ASSERT_EQ(r.messages.size(), 2u);
  for (const tg::message_report& mr : r.messages) EXPECT_TRUE(mr.ok()) << summary(mr);
  ASSERT_EQ(r.file_issues.size(), 3u);
  EXPECT_EQ(r.file_issues[0], (tg::file_issue{0, 4, "4 unrecognized bytes at offset 0"}));
  EXPECT_EQ(r.file_issues[1], (tg::file_issue{588, 5, "5 unrecognized bytes at offset 588"}));
  EXPECT_EQ(r.file_issues[2],
            (tg::file_issue{1177, 3, "3 trailing bytes after last message at offset 1177"}));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.problem_count(), 3u);
  EXPECT_TRUE(r.hash_verified());
}

TEST(ValidateFiles, TruncatedFiles) {
  const bytes two = tgtest::read_fixture("multi_message.tgm");
  // The second message cut short: it is no message at all, only tail bytes.
  tg::file_report r = tg::validate_buffer(std::span<const std::byte>(two).first(two.size() - 10));
  ASSERT_EQ(r.messages.size(), 1u);
  ASSERT_EQ(r.file_issues.size(), 1u);
  EXPECT_EQ(r.file_issues[0],
            (tg::file_issue{584, 574, "574 trailing bytes after last message at offset 584"}));
  // Nothing recognisable at all.
  r = tg::validate_buffer(std::span<const std::byte>(two).first(500));
  EXPECT_TRUE(r.messages.empty());
  ASSERT_EQ(r.file_issues.size(), 1u);
  EXPECT_EQ(r.file_issues[0], (tg::file_issue{0, 500, "500 bytes with no valid messages"}));
  EXPECT_FALSE(r.hash_verified());
  // An empty buffer has neither messages nor issues.
  r = tg::validate_buffer({});
  EXPECT_TRUE(r.messages.empty());
  EXPECT_TRUE(r.file_issues.empty());
  EXPECT_TRUE(r.ok());
}

TEST(ValidateFiles, MissingFileIsAnIoError) {
  EXPECT_THROW((void)tg::validate_file(std::filesystem::path("/nonexistent/dir/x.tgm")), tg::io_error);
  EXPECT_THROW((void)tg::validate_file("/nonexistent/dir/x.tgm"), tg::io_error);
}

// ---- JSON and the string API --------------------------------------------------

TEST(ValidateJson, ReportShapeAndMemberOrder) {
  crafted c = good();
  c.msg[c.data_frame + 16] ^= std::byte{0x01};
  const tg::message_report r = check(c.msg);
  const std::string text = tg::to_json(r);
  const nlohmann::json j = nlohmann::json::parse(text);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j.size(), 3u);
  EXPECT_EQ(j["object_count"], 1);
  EXPECT_EQ(j["hash_verified"], false);
  ASSERT_EQ(j["issues"].size(), 1u);
  const nlohmann::json& i = j["issues"][0];
  EXPECT_EQ(i["code"], "hash_mismatch");
  EXPECT_EQ(i["level"], "integrity");
  EXPECT_EQ(i["severity"], "error");
  EXPECT_EQ(i["object_index"], 0);
  EXPECT_EQ(i["byte_offset"], 64);
  EXPECT_EQ(i["description"], r.issues[0].description);
  // CLI member order: code, level, severity, object_index, byte_offset, description.
  std::size_t last = 0;
  for (const char* key :
       {"\"code\"", "\"level\"", "\"severity\"", "\"object_index\"", "\"byte_offset\"", "\"description\""}) {
    const std::size_t at = text.find(key);
    ASSERT_NE(at, std::string::npos) << key;
    EXPECT_GT(at, last) << key;
    last = at;
  }
  EXPECT_LT(text.find("\"issues\""), text.find("\"object_count\""));
  EXPECT_LT(text.find("\"object_count\""), text.find("\"hash_verified\""));
}

TEST(ValidateJson, AbsentOptionalsAreOmittedNotNull) {
  tgtest::message_builder b(0x0080);
  b.data_frame(be32({f1, f2}), f32_descriptor());
  const nlohmann::json j = nlohmann::json::parse(tg::to_json(check(b.finish())));
  bool found = false;
  for (const nlohmann::json& i : j["issues"]) {
    if (i["code"] != "no_metadata_frame") continue;
    found = true;
    EXPECT_FALSE(i.contains("object_index"));
    EXPECT_FALSE(i.contains("byte_offset"));
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(tg::to_json(tg::message_report{}), R"({"issues":[],"object_count":0,"hash_verified":false})");
}

TEST(ValidateJson, FileReportShape) {
  bytes m = tgtest::read_fixture("single-msg.tgm");
  m.push_back(std::byte{7});
  const nlohmann::json j = nlohmann::json::parse(tg::to_json(tg::validate_buffer(m), 2));
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(
      j["file_issues"],
      nlohmann::json::parse(
          R"([{"byte_offset": 592, "length": 1, "description": "1 trailing bytes after last message at offset 592"}])"));
  ASSERT_EQ(j["messages"].size(), 1u);
  const nlohmann::json expected = nlohmann::json::parse(R"({"issues": [{"code": "hash_verification_error",
      "level": "integrity", "severity": "error", "object_index": 0, "byte_offset": 400,
      "description": ")" + k_missing_hash_text + R"("}], "object_count": 1, "hash_verified": false})");
  EXPECT_EQ(j["messages"][0], expected);
}

TEST(ValidateJson, DescriptionsWithForeignBytesStayValidJson) {
  bytes m = good().msg;
  m[0] = std::byte{0xFF};
  m[1] = std::byte{'"'};
  const std::string text = tg::to_json(check(m));
  const nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(j["issues"][0]["code"], "invalid_magic");
  EXPECT_EQ(j["issues"][0]["description"], R"(invalid magic bytes: expected TENSOGRM, got "\xff\x22NSOGRM")");
}

TEST(ValidateStringApi, LevelsAndErrors) {
  const bytes f = tgtest::read_fixture("single-msg-footer.tgm");
  const auto* p = reinterpret_cast<const std::uint8_t*>(f.data());
  nlohmann::json j = nlohmann::json::parse(tg::validate(p, f.size()));
  EXPECT_EQ(j["issues"].size(), 2u);
  j = nlohmann::json::parse(tg::validate(p, f.size(), "quick"));
  EXPECT_EQ(j["issues"].size(), 1u);
  j = nlohmann::json::parse(tg::validate(p, f.size(), "checksum"));
  ASSERT_EQ(j["issues"].size(), 1u);
  EXPECT_EQ(j["issues"][0]["code"], "hash_verification_error");
  j = nlohmann::json::parse(tg::validate(p, f.size(), nullptr, true));
  EXPECT_EQ(j["issues"].size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(tg::validate(p, f.size(), "full")),
            nlohmann::json::parse(tg::validate(p, f.size())));
  EXPECT_THROW((void)tg::validate(p, f.size(), "thorough"), tg::invalid_arg_error);
  EXPECT_THROW((void)tg::validate(p, f.size(), "Default"), tg::invalid_arg_error);
  EXPECT_THROW((void)tg::validate(nullptr, 3), tg::invalid_arg_error);
  j = nlohmann::json::parse(tg::validate(nullptr, 0));
  EXPECT_EQ(j["issues"][0]["code"], "buffer_too_short");

  const std::string path = tgtest::fixture_path("two-msg.tgm");
  j = nlohmann::json::parse(tg::validate_file(path.c_str()));
  EXPECT_EQ(j["file_issues"].size(), 0u);
  EXPECT_EQ(j["messages"].size(), 2u);
  j = nlohmann::json::parse(tg::validate_file(path.c_str(), "quick"));
  EXPECT_EQ(j["messages"][1]["issues"].size(), 0u);
  EXPECT_THROW((void)tg::validate_file(path.c_str(), "slow"), tg::invalid_arg_error);
  EXPECT_EQ(tg::parse_validation_mode("default"), validation_mode::standard);
}

TEST(ValidateOptions, ModesMapToLevels) {
  const tg::validate_options q = mode(validation_mode::quick);
  EXPECT_EQ(q.max_level, validation_level::structure);
  EXPECT_FALSE(q.checksum_only);
  const tg::validate_options d = tg::validate_options{};
  EXPECT_EQ(d.max_level, validation_level::integrity);
  EXPECT_FALSE(d.check_canonical);
  const tg::validate_options c = mode(validation_mode::checksum, true);
  EXPECT_EQ(c.max_level, validation_level::integrity);
  EXPECT_TRUE(c.checksum_only);
  EXPECT_TRUE(c.check_canonical);
  EXPECT_EQ(mode(validation_mode::full).max_level, validation_level::fidelity);
  // checksum_only lifts a lower max_level to integrity.
  tg::validate_options low = up_to(validation_level::structure);
  low.checksum_only = true;
  crafted bad = good();
  bad.msg[bad.data_frame + 16] ^= std::byte{1};
  EXPECT_EQ(issues_with(check(bad.msg, low), issue_code::hash_mismatch).size(), 1u);
}

// ---- robustness ---------------------------------------------------------------

TEST(ValidateRobustness, RandomMutationsNeverThrow) {
  std::vector<bytes> seeds;
  for (const char* name : {"simple_f32.tgm", "multi_object.tgm", "metadata_parity.tgm",
                           "single-msg-footer.tgm", "multi_message.tgm"}) {
    seeds.push_back(tgtest::read_fixture(name));
  }
  {
    // A message with masks and a compressed object, for the deeper levels.
    tg::encode_options o;
    o.allow_nan = true;
    tg::data_object_descriptor d =
        tg::data_object_descriptor::contiguous(tg::dtype::float32, {4}, tg::byte_order::big);
    const bytes values = be32({f1, fnan, f2, fnan});
    tg::data_object_descriptor z = d;
    z.compression = "zstd";
    std::vector<tg::object_input> in = {{d, values}, {z, values}};
    seeds.push_back(tg::encode(tg::global_metadata{}, in, o));
  }
  std::mt19937_64 rng(20240531);
  const tg::validate_options deepest = mode(validation_mode::full, true);
  std::size_t reports_with_errors = 0;
  for (int iter = 0; iter < 1000; ++iter) {
    bytes m = seeds[static_cast<std::size_t>(rng() % seeds.size())];
    const int kind = static_cast<int>(rng() % 4);
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !m.empty(); ++e) {
      const std::size_t at = static_cast<std::size_t>(rng() % m.size());
      switch (kind) {
        case 0: m[at] = static_cast<std::byte>(rng() & 0xFF); break;        // overwrite
        case 1: m[at] ^= static_cast<std::byte>(1U << (rng() % 8)); break;  // bit flip
        case 2: m.resize(at); break;                                        // truncate
        default: m.insert(m.begin() + static_cast<std::ptrdiff_t>(at), static_cast<std::byte>(rng() & 0xFF));
      }
    }
    // Also hit the length fields that steer the walk.
    if (rng() % 8 == 0 && m.size() >= 24) tgtest::put_be64(m, 16, rng() % (m.size() + 64));
    SCOPED_TRACE(iter);
    tg::message_report r;
    ASSERT_NO_THROW(r = tg::validate_message(m, deepest));
    ASSERT_NO_THROW((void)tg::validate_buffer(m, deepest));
    ASSERT_NO_THROW((void)tg::validate_message(m, mode(validation_mode::checksum)));
    nlohmann::json parsed;
    ASSERT_NO_THROW(parsed = nlohmann::json::parse(tg::to_json(r)));
    if (!r.ok()) ++reports_with_errors;
  }
  // The mutations do damage: most reports must find something.
  EXPECT_GT(reports_with_errors, 500u);
}

}  // namespace

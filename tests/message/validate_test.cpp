// Validation (spec 02 §15): fixture reports as fixtures/tgm/README.md
// describes them, a good crafted message at every level, file issues, JSON
// shapes, the string API, and robustness against mutated input. One crafted
// message per issue code is in validate_catalogue_test.cpp, the details of
// individual checks in validate_details_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include "validate_support.hpp"

namespace {

using namespace tgtest::validation;
using tgtest::bytes;

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

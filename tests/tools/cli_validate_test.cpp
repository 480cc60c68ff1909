// `tensogram validate` (spec 04 §A.5, spec 02 §15): human and JSON output on
// the fixtures (texts written out from the spec and fixtures/tgm/README.md),
// corrupted files, exclusive mode flags and exit codes.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <tensogram.hpp>
#include <tensogram/format/hash.hpp>

#include "commands.hpp"
#include "test_support.hpp"

namespace tensogram::cli::test {
namespace {

using nlohmann::json;

const std::string k_missing_hash =
    "frame hash verification error: hash verification requested but object 0 has no inline hash recorded "
    "(HASH_PRESENT flag clear); re-encode with hashing enabled or decode without verify_hash";
const std::string k_preceder_flag = "PRECEDER_METADATA flag mismatch: declared set, observed absent";

void expect_ok(const run_result& r, const std::string& out) {
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, out);
  EXPECT_EQ(r.err, "");
}

void expect_usage_error(const run_result& r) {
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
}

// ---- human output on the fixtures --------------------------------------------

TEST(CliValidate, HashFlaggedFixturesAreOk) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"simple_f32.tgm", "1 messages, 1 objects"},     {"hash_xxh3.tgm", "1 messages, 1 objects"},
      {"mars_metadata.tgm", "1 messages, 1 objects"},  {"multi_message.tgm", "2 messages, 2 objects"},
      {"multi_object.tgm", "1 messages, 3 objects"},   {"multi_object_xxh3.tgm", "1 messages, 3 objects"},
      {"metadata_parity.tgm", "1 messages, 2 objects"}};
  for (const auto& [name, counts] : cases) {
    SCOPED_TRACE(name);
    const std::string p = fixture(name);
    expect_ok(run_cli({"validate", p}), p + ": OK (" + counts + ", hash verified)\n");
    expect_ok(run_cli({"validate", "--full", "--canonical", p}),
              p + ": OK (" + counts + ", hash verified)\n");
    expect_ok(run_cli({"validate", "--checksum", p}), p + ": OK (" + counts + ", hash verified)\n");
    // Quick mode verifies no hash.
    expect_ok(run_cli({"validate", "--quick", p}), p + ": OK (" + counts + ")\n");
  }
}

TEST(CliValidate, SeveralFilesOneLineEach) {
  const std::string a = fixture("simple_f32.tgm");
  const std::string b = fixture("multi_object.tgm");
  expect_ok(run_cli({"validate", a, b}), a + ": OK (1 messages, 1 objects, hash verified)\n" + b +
                                             ": OK (1 messages, 3 objects, hash verified)\n");
}

TEST(CliValidate, LegacyHeaderFileFails) {
  // fixtures/tgm/README.md: HASH_PRESENT clear in every frame → one
  // hash_verification_error per object, at the data frame (400).
  const std::string p = fixture("single-msg.tgm");
  const run_result r = run_cli({"validate", p});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, p + ": FAILED — message 1, object 1: " + k_missing_hash + " (at byte 400)\n" + p +
                       ": FAILED (1 error, 1 messages, 1 objects)\n");
  const std::string two = fixture("two-msg.tgm");
  const run_result r2 = run_cli({"validate", two});
  EXPECT_EQ(r2.exit_code, 1);
  EXPECT_EQ(r2.err, two + ": FAILED — message 1, object 1: " + k_missing_hash + " (at byte 400)\n" + two +
                        ": FAILED — message 2, object 1: " + k_missing_hash + " (at byte 400)\n" + two +
                        ": FAILED (2 errors, 2 messages, 2 objects)\n");
}

TEST(CliValidate, LegacyFooterFileByMode) {
  const std::string p = fixture("single-msg-footer.tgm");
  const std::string warning = p + ": WARNING — message 1: " + k_preceder_flag + " (at byte 10)\n";
  const std::string failed = p + ": FAILED — message 1, object 1: " + k_missing_hash + " (at byte 88)\n";
  // Default: on failure errors and warnings are listed, in report order.
  run_result r = run_cli({"validate", p});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, warning + failed + p + ": FAILED (1 error, 1 messages, 1 objects)\n");
  // Quick: structure only; success lists the warning.
  r = run_cli({"validate", "--quick", p});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, p + ": OK (1 messages, 1 objects)\n");
  EXPECT_EQ(r.err, warning);
  // Checksum: structural warnings suppressed.
  r = run_cli({"validate", "--checksum", p});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, failed + p + ": FAILED (1 error, 1 messages, 1 objects)\n");
}

TEST(CliValidate, StreamingTailFile) {
  const std::string p = fixture("streaming-tail.tgm");
  const run_result r = run_cli({"validate", "--quick", p});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, p + ": OK (10 messages, 10 objects)\n");
  EXPECT_EQ(r.err, p + ": WARNING — message 10: " + k_preceder_flag + " (at byte 10)\n");
}

// ---- JSON ----------------------------------------------------------------------

TEST(CliValidate, JsonOfACleanFile) {
  const std::string p = fixture("simple_f32.tgm");
  const run_result r = run_cli({"validate", "--json", p});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "");
  // Pretty-printed, members in the reference's order.
  EXPECT_EQ(r.out,
            "[\n"
            "  {\n"
            "    \"file\": \"" +
                p +
                "\",\n"
                "    \"status\": \"ok\",\n"
                "    \"messages\": 1,\n"
                "    \"objects\": 1,\n"
                "    \"hash_verified\": true,\n"
                "    \"file_issues\": [],\n"
                "    \"message_reports\": [\n"
                "      {\n"
                "        \"issues\": [],\n"
                "        \"object_count\": 1,\n"
                "        \"hash_verified\": true\n"
                "      }\n"
                "    ]\n"
                "  }\n"
                "]\n");
}

TEST(CliValidate, JsonOfFailingFiles) {
  const std::string a = fixture("single-msg-footer.tgm");
  const std::string b = fixture("multi_message.tgm");
  const run_result r = run_cli({"validate", "--json", a, b});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "");
  const json j = json::parse(r.out);
  const json expected = json::parse(R"([
    {"file": ")" + a + R"(", "status": "failed", "messages": 1, "objects": 1, "hash_verified": false,
     "file_issues": [],
     "message_reports": [{"issues": [
        {"code": "flag_mismatch", "level": "structure", "severity": "warning", "byte_offset": 10,
         "description": ")" + k_preceder_flag +
                                    R"("},
        {"code": "hash_verification_error", "level": "integrity", "severity": "error", "object_index": 0,
         "byte_offset": 88, "description": ")" +
                                    k_missing_hash + R"("}],
       "object_count": 1, "hash_verified": false}]},
    {"file": ")" + b + R"(", "status": "ok", "messages": 2, "objects": 2, "hash_verified": true,
     "file_issues": [],
     "message_reports": [{"issues": [], "object_count": 1, "hash_verified": true},
                         {"issues": [], "object_count": 1, "hash_verified": true}]}
  ])");
  EXPECT_EQ(j, expected);
  // Issue members in CLI order.
  const std::size_t code = r.out.find("\"code\": \"hash_verification_error\"");
  ASSERT_NE(code, std::string::npos);
  const std::string issue = r.out.substr(code, r.out.find('}', code) - code);
  EXPECT_LT(issue.find("\"level\""), issue.find("\"severity\""));
  EXPECT_LT(issue.find("\"severity\""), issue.find("\"object_index\""));
  EXPECT_LT(issue.find("\"object_index\""), issue.find("\"byte_offset\""));
  EXPECT_LT(issue.find("\"byte_offset\""), issue.find("\"description\""));
}

// ---- corrupted files ------------------------------------------------------------

std::vector<std::byte> fixture_bytes(const std::string& name) {
  return read_file(fixture(name));
}

TEST(CliValidate, GarbageBetweenMessagesAndTrailingBytes) {
  const scratch_dir dir;
  std::vector<std::byte> two = fixture_bytes("multi_message.tgm");
  two.insert(two.begin() + 584, 5, std::byte{0x55});
  two.insert(two.end(), 3, std::byte{0});
  const std::string p = (dir / "gaps.tgm").string();
  write_file(p, two);
  const run_result r = run_cli({"validate", p});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            p + ": WARNING — 5 unrecognized bytes at offset 584 (at byte offset 584, 5 bytes)\n" + p +
                ": WARNING — 3 trailing bytes after last message at offset 1173 (at byte offset 1173, 3 "
                "bytes)\n" +
                p + ": FAILED (2 errors, 2 messages, 2 objects)\n");
  const json j = json::parse(run_cli({"validate", "--json", p}).out);
  EXPECT_EQ(j[0]["status"], "failed");
  EXPECT_EQ(j[0]["hash_verified"], true);
  EXPECT_EQ(
      j[0]["file_issues"],
      json::parse(R"([{"byte_offset": 584, "length": 5, "description": "5 unrecognized bytes at offset 584"},
              {"byte_offset": 1173, "length": 3, "description": "3 trailing bytes after last message at offset 1173"}])"));
}

TEST(CliValidate, TruncatedFiles) {
  const scratch_dir dir;
  const std::vector<std::byte> two = fixture_bytes("multi_message.tgm");
  const std::string cut = (dir / "cut.tgm").string();
  write_file(cut, std::vector<std::byte>(two.begin(), two.end() - 10));
  run_result r = run_cli({"validate", cut});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            cut +
                ": WARNING — 574 trailing bytes after last message at offset 584 (at byte offset 584, 574 "
                "bytes)\n" +
                cut + ": FAILED (1 error, 1 messages, 1 objects)\n");
  const std::string stub = (dir / "stub.tgm").string();
  write_file(stub, std::vector<std::byte>(two.begin(), two.begin() + 100));
  r = run_cli({"validate", stub});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, stub + ": WARNING — 100 bytes with no valid messages (at byte offset 0, 100 bytes)\n" +
                       stub + ": FAILED (1 error, 0 messages, 0 objects)\n");
  // An empty file has nothing wrong with it.
  const std::string empty = (dir / "empty.tgm").string();
  write_file(empty, {});
  expect_ok(run_cli({"validate", empty}), empty + ": OK (0 messages, 0 objects)\n");
}

TEST(CliValidate, TamperedPayloadIsAHashMismatch) {
  const scratch_dir dir;
  std::vector<std::byte> b = fixture_bytes("simple_f32.tgm");
  b[416] ^= std::byte{0x01};  // first payload byte of the data frame at 400
  const std::string p = (dir / "tampered.tgm").string();
  write_file(p, b);
  const std::uint64_t actual = tensogram::format::xxh3_64(std::span<const std::byte>(b).subspan(416, 126));
  const run_result r = run_cli({"validate", p});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            p + ": FAILED — message 1, object 1: frame hash mismatch (expected 3aeac8603f519c1d, got " +
                tensogram::hex16(actual) + ") (at byte 400)\n" + p +
                ": FAILED (1 error, 1 messages, 1 objects)\n");
  // --quick does not look at hashes.
  expect_ok(run_cli({"validate", "--quick", p}), p + ": OK (1 messages, 1 objects)\n");
}

TEST(CliValidate, FullModeFindsNaN) {
  // Pre-encoded payloads are stored verbatim, NaN included.
  const scratch_dir dir;
  const std::vector<std::byte> values = {std::byte{0x3F}, std::byte{0x80}, std::byte{0}, std::byte{0},
                                         std::byte{0x7F}, std::byte{0xC0}, std::byte{0}, std::byte{0}};
  std::vector<object_input> in = {
      {data_object_descriptor::contiguous(dtype::float32, {2}, byte_order::big), values}};
  const std::string p = (dir / "nan.tgm").string();
  write_file(p, encode_pre_encoded(global_metadata{}, in));
  expect_ok(run_cli({"validate", p}), p + ": OK (1 messages, 1 objects, hash verified)\n");
  const run_result r = run_cli({"validate", "--full", p});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(
      r.err.find(p + ": FAILED — message 1, object 1: unexpected NaN at element 1 (not recorded in mask) (at "
                     "byte "),
      std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(p + ": FAILED (1 error, 1 messages, 1 objects)\n"), std::string::npos) << r.err;
  const json j = json::parse(run_cli({"validate", "--full", "--json", p}).out);
  EXPECT_EQ(j[0]["message_reports"][0]["issues"][0]["code"], "nan_detected");
  EXPECT_EQ(j[0]["message_reports"][0]["issues"][0]["level"], "fidelity");
}

TEST(CliValidate, CanonicalFlagReportsKeyOrder) {
  // A hand-made message whose metadata map lists "zz" before "a".
  std::vector<std::byte> m;
  auto put = [&](std::initializer_list<unsigned> bytes) {
    for (unsigned b : bytes) m.push_back(static_cast<std::byte>(b));
  };
  auto put64 = [&](std::uint64_t v) {
    for (int s = 56; s >= 0; s -= 8) m.push_back(static_cast<std::byte>((v >> s) & 0xFF));
  };
  put({'T', 'E', 'N', 'S', 'O', 'G', 'R', 'M', 0, 3, 0, 1, 0, 0, 0, 0});
  put64(0);  // total_length, patched below
  const std::vector<unsigned> body = {0xA2, 0x62, 'z', 'z', 0x01, 0x61, 'a', 0x02};
  put({'F', 'R', 0, 1, 0, 1, 0, 0});
  put64(16 + body.size() + 12);
  for (unsigned b : body) m.push_back(static_cast<std::byte>(b));
  put64(0);
  put({'E', 'N', 'D', 'F'});
  while (m.size() % 8 != 0) m.push_back(std::byte{0});
  const std::uint64_t post = m.size();
  put64(post);
  put64(post + 24);
  put({'3', '9', '2', '7', '7', '7', '7', '7'});
  for (int i = 0; i < 8; ++i)
    m[16 + static_cast<std::size_t>(i)] = static_cast<std::byte>(((post + 24) >> (56 - 8 * i)) & 0xFF);

  const scratch_dir dir;
  const std::string p = (dir / "noncanonical.tgm").string();
  write_file(p, m);
  expect_ok(run_cli({"validate", p}), p + ": OK (1 messages, 0 objects)\n");
  for (const char* extra : {"--quick", "--checksum", "--full"}) {
    SCOPED_TRACE(extra);
    const run_result r = run_cli({"validate", extra, "--canonical", p});
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_EQ(r.out, p + ": OK (1 messages, 0 objects)\n");
    EXPECT_EQ(r.err,
              p + ": WARNING — message 1: metadata CBOR is not canonical: CBOR map keys not in canonical "
                  "order (or duplicated)\n");
  }
}

// ---- flags and exit codes ---------------------------------------------------------

TEST(CliValidate, ModeFlagsAreMutuallyExclusive) {
  const std::string p = fixture("simple_f32.tgm");
  expect_usage_error(run_cli({"validate", "--quick", "--full", p}));
  expect_usage_error(run_cli({"validate", "--quick", "--checksum", p}));
  expect_usage_error(run_cli({"validate", "--checksum", "--full", p}));
  expect_usage_error(run_cli({"validate", "--full", "--quick", "--canonical", p}));
}

TEST(CliValidate, UsageErrors) {
  expect_usage_error(run_cli({"validate"}));
  expect_usage_error(run_cli({"validate", "--level", "full", fixture("simple_f32.tgm")}));
  expect_usage_error(run_cli({"validate", "--json"}));
}

TEST(CliValidate, ExitCodeIsOneIfAnyFileFails) {
  const std::string good = fixture("simple_f32.tgm");
  const std::string bad = fixture("single-msg.tgm");
  const run_result r = run_cli({"validate", good, bad});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, good + ": OK (1 messages, 1 objects, hash verified)\n");
  // No `error:` line for a failed validation (§A.1).
  EXPECT_NE(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find("\nerror: "), std::string::npos) << r.err;
  EXPECT_EQ(r.err, bad + ": FAILED — message 1, object 1: " + k_missing_hash + " (at byte 400)\n" + bad +
                       ": FAILED (1 error, 1 messages, 1 objects)\n");
  // Global options are accepted after the subcommand.
  EXPECT_EQ(run_cli({"validate", "--threads", "2", good}).exit_code, 0);
  EXPECT_EQ(run_cli({"--threads", "2", "validate", good}).exit_code, 0);
}

TEST(CliValidate, UnopenableFileIsAPlainError) {
  const std::string good = fixture("simple_f32.tgm");
  run_result r = run_cli({"validate", good, "/nonexistent/missing.tgm"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, good + ": OK (1 messages, 1 objects, hash verified)\n");
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("/nonexistent/missing.tgm"), std::string::npos) << r.err;
  // In JSON mode nothing is printed before the error.
  r = run_cli({"validate", "--json", good, "/nonexistent/missing.tgm"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  // A directory cannot be validated either.
  r = run_cli({"validate", "/"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
}

// ---- progress (run_validate directly: the binary's stderr is no terminal here) ----

TEST(CliValidate, ProgressOnlyForLargeFilesAndWhenAsked) {
  const scratch_dir dir;
  const std::vector<std::byte> one = fixture_bytes("simple_f32.tgm");
  std::vector<std::byte> big;
  const std::size_t copies = (std::size_t{33} << 20) / one.size();
  big.reserve(copies * one.size());
  for (std::size_t i = 0; i < copies; ++i) big.insert(big.end(), one.begin(), one.end());
  const std::string p = (dir / "big.tgm").string();
  write_file(p, big);
  validate_args args;
  args.quick = true;
  args.files = {p};
  {
    std::ostringstream out, err;
    EXPECT_EQ(run_validate(args, out, err, true), 0);
    EXPECT_EQ(out.str(),
              p + ": OK (" + std::to_string(copies) + " messages, " + std::to_string(copies) + " objects)\n");
    const std::string bar = err.str();
    EXPECT_EQ(bar.rfind("\rvalidate big.tgm [", 0), 0u) << bar.substr(0, 80);
    EXPECT_NE(bar.find(std::to_string(copies) + "/" + std::to_string(copies) + " 100%"), std::string::npos);
    EXPECT_EQ(bar.back(), '\n');
  }
  {
    std::ostringstream out, err;
    EXPECT_EQ(run_validate(args, out, err, false), 0);
    EXPECT_EQ(err.str(), "");
  }
  {
    // Small files never get a bar.
    validate_args small = args;
    small.files = {fixture("simple_f32.tgm")};
    std::ostringstream out, err;
    EXPECT_EQ(run_validate(small, out, err, true), 0);
    EXPECT_EQ(err.str(), "");
  }
}

}  // namespace
}  // namespace tensogram::cli::test

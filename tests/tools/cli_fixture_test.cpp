// The `tensogram` binary on the reference-written fixtures: info, ls, dump,
// -w, -p, -j, exit codes and error text (spec 04 §A.1–§A.5). Expected
// output is written out in full from the spec and the fixtures' README.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <tensogram/message/metadata.hpp>

#include "test_support.hpp"

namespace tensogram::cli::test {
namespace {

void expect_success(const run_result& r, const std::string& out) {
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, out);
  EXPECT_EQ(r.err, "");
}

void expect_usage_error(const run_result& r) {
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
}

// ---- program-wide behaviour (§A.1) -----------------------------------------

TEST(CliProgram, VersionPrintsReferenceVersion) {
  const std::string expected = "tensogram 0.24.0\n";  // spec 08 §10
  expect_success(run_cli({"--version"}), expected);
  expect_success(run_cli({"-V"}), expected);
}

TEST(CliProgram, HelpSaysThisIsTensogramCpp) {
  const run_result r = run_cli({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("tensogram-cpp"), std::string::npos);
  for (const char* cmd : {"info", "ls", "dump", "convert-npy", "to-npy"}) {
    EXPECT_NE(r.out.find(cmd), std::string::npos) << cmd;
    const run_result sub = run_cli({cmd, "--help"});
    EXPECT_EQ(sub.exit_code, 0) << cmd;
    EXPECT_NE(sub.out.find("Usage"), std::string::npos) << cmd;
  }
}

TEST(CliProgram, UsageErrorsExitTwo) {
  // No arguments at all: the help on stderr, exit 2 (cli_clap_test.cpp).
  expect_usage_error(run_cli({"bogus"}));
  expect_usage_error(run_cli({"ls", "--no-such-flag"}));
  expect_usage_error(run_cli({"ls", "-w"}));
  expect_usage_error(run_cli({"info", "-x"}));
  expect_usage_error(run_cli({"--threads", "lots", "info"}));
  expect_usage_error(run_cli({"info", "--allow-nan=maybe"}));
  expect_usage_error(run_cli({"--nan-mask-method", "gzip", "info"}));
  expect_usage_error(run_cli({"convert-npy", "a.npy"}));  // -o missing
  expect_usage_error(run_cli({"to-npy", "-o", "dir"}));   // input missing
  expect_usage_error(run_cli({"info"}, {"TENSOGRAM_ALLOW_INF=sometimes"}));
  expect_usage_error(run_cli({"info"}, {"TENSOGRAM_THREADS=x"}));
  expect_usage_error(run_cli({"info"}, {"TENSOGRAM_POS_INF_MASK_METHOD=gzip"}));
}

TEST(CliProgram, GlobalOptionsBeforeOrAfterSubcommand) {
  const std::string f = fixture("multi_message.tgm");
  const std::string expected = "version\n3\n3\n";
  expect_success(run_cli({"--threads", "4", "--allow-nan", "ls", f}), expected);
  expect_success(run_cli({"ls", "--threads", "4", "--allow-inf=off", f, "--small-mask-threshold", "0"}),
                 expected);
  expect_success(run_cli({"ls", "--allow-nan=YES", "--nan-mask-method", "rle", "--pos-inf-mask-method",
                          "none", "--neg-inf-mask-method", "zstd", f}),
                 expected);
  expect_success(run_cli({"ls", f}, {"TENSOGRAM_THREADS=2", "TENSOGRAM_ALLOW_NAN=t", "TENSOGRAM_ALLOW_INF=0",
                                     "TENSOGRAM_SMALL_MASK_THRESHOLD=64", "TENSOGRAM_NAN_MASK_METHOD=lz4"}),
                 expected);
}

TEST(CliProgram, MissingFileIsRuntimeError) {
  const run_result r = run_cli({"dump", "/nonexistent/nope.tgm"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "error: io error: file not found: /nonexistent/nope.tgm\n");
}

TEST(CliProgram, OutputBeforeAFailureStaysPrinted) {
  const std::string good = fixture("mars_metadata.tgm");
  const run_result r = run_cli({"info", good, "/nonexistent/nope.tgm"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "File: " + good + "\n  Messages: 1\n  Size: 624 bytes\n  Version: 3\n\n");
  EXPECT_EQ(r.err, "error: io error: file not found: /nonexistent/nope.tgm\n");

  // ls prints its header before opening any file.
  const run_result ls = run_cli({"ls", "/nonexistent/nope.tgm"});
  EXPECT_EQ(ls.exit_code, 1);
  EXPECT_EQ(ls.out, "version\n");
}

TEST(CliProgram, DirectoryIsRuntimeError) {
  const scratch_dir dir;
  const run_result r = run_cli({"info", dir.path().string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "error: io error: " + dir.path().string() + ": not a regular file\n");
}

// ---- info ------------------------------------------------------------------

TEST(CliInfo, BlocksPerFile) {
  const std::string a = fixture("multi_message.tgm");
  const std::string b = fixture("streaming-tail.tgm");
  expect_success(run_cli({"info", a, b}),
                 "File: " + a + "\n  Messages: 2\n  Size: 1168 bytes\n  Version: 3\n\n" + "File: " + b +
                     "\n  Messages: 10\n  Size: 5984 bytes\n  Version: 3\n\n");
}

TEST(CliInfo, NoFilesPrintsNothing) {
  expect_success(run_cli({"info"}), "");
}

TEST(CliInfo, EmptyAndGarbageFilesHaveNoMessagesAndNoVersion) {
  const scratch_dir dir;
  write_file(dir / "empty.tgm", {});
  const std::string junk = "this is not a tensogram file TENSOGRM but close 39277777";
  write_file(dir / "junk.tgm", bytes_of(junk));
  const std::string e = (dir / "empty.tgm").string();
  const std::string j = (dir / "junk.tgm").string();
  expect_success(run_cli({"info", e, j}), "File: " + e + "\n  Messages: 0\n  Size: 0 bytes\n\nFile: " + j +
                                              "\n  Messages: 0\n  Size: " + std::to_string(junk.size()) +
                                              " bytes\n\n");
}

// Garbage before, between and after messages is skipped silently.
class CliGarbage : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<std::byte> bytes = bytes_of("leading garbage TENSOGRM\x01\x02");
    const auto a = read_file(fixture("multi_message.tgm"));
    const auto b = read_file(fixture("mars_metadata.tgm"));
    bytes.insert(bytes.end(), a.begin(), a.end());
    const auto mid = bytes_of(std::string(37, '\xAB'));
    bytes.insert(bytes.end(), mid.begin(), mid.end());
    bytes.insert(bytes.end(), b.begin(), b.end());
    const auto tail = bytes_of("39277777 trailing");
    bytes.insert(bytes.end(), tail.begin(), tail.end());
    size_ = bytes.size();
    write_file(dir_ / "garbage.tgm", bytes);
    path_ = (dir_ / "garbage.tgm").string();
  }
  scratch_dir dir_;
  std::string path_;
  std::size_t size_ = 0;
};

TEST_F(CliGarbage, Info) {
  expect_success(run_cli({"info", path_}), "File: " + path_ + "\n  Messages: 3\n  Size: " +
                                               std::to_string(size_) + " bytes\n  Version: 3\n\n");
}

TEST_F(CliGarbage, Ls) {
  expect_success(run_cli({"ls", "-p", "product,mars.step", path_}),
                 "product\tmars.step\nefi\tN/A\nefi\tN/A\nN/A\t12\n");
}

TEST_F(CliGarbage, DumpNumbersMessagesInFileOrder) {
  const run_result r = run_cli({"dump", "-w", "mars.step=12", path_});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("=== Message 2 ===\n", 0), 0u) << r.out;
}

// ---- ls --------------------------------------------------------------------

TEST(CliLs, DefaultKeyIsVersion) {
  expect_success(run_cli({"ls", fixture("multi_message.tgm")}), "version\n3\n3\n");
}

TEST(CliLs, HeaderAlwaysPrinted) {
  expect_success(run_cli({"ls"}), "version\n");
  expect_success(run_cli({"ls", "-p", "a, b ,c"}), "a\tb\tc\n");
  expect_success(run_cli({"ls", "-w", "product=none", "-p", "product", fixture("multi_object.tgm")}),
                 "product\n");
  // JSON mode has no header.
  expect_success(run_cli({"ls", "-j"}), "");
}

TEST(CliLs, TableAcrossFilesWithNA) {
  const run_result r =
      run_cli({"ls", "-p", "product,parameter,mars.class,source,version", fixture("metadata_parity.tgm"),
               fixture("mars_metadata.tgm"), fixture("multi_object.tgm")});
  expect_success(r,
                 "product\tparameter\tmars.class\tsource\tversion\n"
                 "N/A\tN/A\tod\tparity-fixture\t3\n"
                 "N/A\tN/A\tod\tN/A\t3\n"
                 "efi\ttemperature\tN/A\tN/A\t3\n");
}

TEST(CliLs, ValueTextForms) {
  // §A.2: text as is, integers in decimal, 0.5 (a half float on the wire),
  // bools, first match across base entries, extra fallback.
  expect_success(
      run_cli({"ls", "-p", "shortName,count,big,ratio,flag,level,note,only0,extra.source,_extra_.source",
               fixture("metadata_parity.tgm")}),
      "shortName\tcount\tbig\tratio\tflag\tlevel\tnote\tonly0\textra.source\t_extra_.source\n"
      "2t\t-5\t2147483648\t0.5\ttrue\t0\t\tx\tparity-fixture\tparity-fixture\n");
}

TEST(CliLs, ReservedAndDescriptorFieldsAreHidden) {
  expect_success(run_cli({"ls", "-p", "_reserved_.tensor.dtype,shape,dtype,_reserved_,extra,_extra_",
                          fixture("metadata_parity.tgm")}),
                 "_reserved_.tensor.dtype\tshape\tdtype\t_reserved_\textra\t_extra_\n"
                 "N/A\tN/A\tN/A\tN/A\tN/A\tN/A\n");
}

TEST(CliLs, JsonObjectsPrettyWithStringValues) {
  const std::string f = fixture("multi_message.tgm");
  expect_success(run_cli({"ls", "-j", "-p", "version,product,missing", f}),
                 "{\n  \"product\": \"efi\",\n  \"version\": \"3\"\n}\n"
                 "{\n  \"product\": \"efi\",\n  \"version\": \"3\"\n}\n");
  expect_success(run_cli({"ls", "-j", f}), "{\n  \"version\": \"3\"\n}\n{\n  \"version\": \"3\"\n}\n");
  expect_success(run_cli({"ls", "-j", "-p", "missing", fixture("mars_metadata.tgm")}), "{}\n");
}

TEST(CliLs, JsonNumbersAndBoolsBecomeStrings) {
  expect_success(run_cli({"ls", "-j", "-p", "mars.step,mars.type", fixture("mars_metadata.tgm")}),
                 "{\n  \"mars.step\": \"12\",\n  \"mars.type\": \"fc\"\n}\n");
  expect_success(run_cli({"ls", "-j", "-p", "flag,ratio,count", fixture("metadata_parity.tgm")}),
                 "{\n  \"count\": \"-5\",\n  \"flag\": \"true\",\n  \"ratio\": \"0.5\"\n}\n");
}

TEST(CliLs, StreamingTailMessages) {
  std::string expected = "fixture.msg_index\tfixture.shape\n";
  for (int i = 0; i < 10; ++i) expected += std::to_string(i) + "\t[4]\n";
  expect_success(run_cli({"ls", "-p", "fixture.msg_index,fixture.shape", fixture("streaming-tail.tgm")}),
                 expected);
}

// ---- -w (§A.3) -----------------------------------------------------------

TEST(CliWhere, EqualAlternativesAndFirstMatch) {
  const std::vector<std::string> files = {fixture("metadata_parity.tgm"), fixture("mars_metadata.tgm"),
                                          fixture("multi_object.tgm")};
  auto ls = [&](const std::string& where, const std::string& keys) {
    std::vector<std::string> args = {"ls", "-w", where, "-p", keys};
    args.insert(args.end(), files.begin(), files.end());
    return run_cli(args);
  };
  // metadata_parity's mars.class is "od" (first match wins over base[1]'s "ea").
  expect_success(ls("mars.class=od", "shortName,mars.step"), "shortName\tmars.step\n2t\tN/A\nN/A\t12\n");
  expect_success(ls("mars.class=ea", "shortName"), "shortName\n");
  expect_success(ls("mars.class=xx/od", "mars.step"), "mars.step\nN/A\n12\n");
  // Missing key: = fails, != passes.
  expect_success(ls("mars.class!=od", "parameter"), "parameter\ntemperature\n");
  expect_success(ls("mars.class!=xx/yy", "version"), "version\n3\n3\n3\n");
  expect_success(ls("mars.class!=xx/od", "version"), "version\n3\n");
  // Text comparison: 12 matches, 012 does not.
  expect_success(ls("mars.step=12", "mars.type"), "mars.type\nfc\n");
  expect_success(ls("mars.step=012", "mars.type"), "mars.type\n");
  expect_success(ls("ratio=0.5", "shortName"), "shortName\n2t\n");
  expect_success(ls("flag=true", "shortName"), "shortName\n2t\n");
  expect_success(ls("version=3", "parameter"), "parameter\nN/A\nN/A\ntemperature\n");
  expect_success(ls("version!=3", "parameter"), "parameter\n");
  expect_success(ls("source=parity-fixture", "shortName"), "shortName\n2t\n");
}

TEST(CliWhere, BadClauseIsRuntimeErrorWithReferenceText) {
  for (const char* cmd : {"ls", "dump"}) {
    const run_result r = run_cli({cmd, "-w", "mars.param", fixture("multi_message.tgm")});
    EXPECT_EQ(r.exit_code, 1) << cmd;
    EXPECT_EQ(r.out, "") << cmd;
    EXPECT_EQ(r.err,
              "error: invalid where clause: invalid where-clause: mars.param (expected key=value or "
              "key!=value)\n")
        << cmd;
  }
}

// ---- dump (§A.5) -----------------------------------------------------------

TEST(CliDump, HumanMetadataParity) {
  expect_success(
      run_cli({"dump", fixture("metadata_parity.tgm")}),
      "=== Message 0 ===\n"
      "version: 3\n"
      "objects: 2\n"
      "  object[0]: type=ntensor, dtype=float32, shape=[2, 3]\n"
      "  object[1]: type=ntensor, dtype=float64, shape=[4]\n"
      "  base[0]:\n"
      "    _reserved_: {\"tensor\":{\"dtype\":\"float32\",\"ndim\":2,\"shape\":[2,3],\"strides\":[3,1]}}\n"
      "    big: 2147483648\n"
      "    count: -5\n"
      "    flag: true\n"
      "    level: 0\n"
      "    levels: [1000,850,500]\n"
      "    mars: {\"class\":\"od\",\"stream\":\"oper\"}\n"
      "    note: \"\"\n"
      "    only0: \"x\"\n"
      "    ratio: 0.5\n"
      "    shortName: \"2t\"\n"
      "  base[1]:\n"
      "    _reserved_: {\"tensor\":{\"dtype\":\"float64\",\"ndim\":1,\"shape\":[4],\"strides\":[1]}}\n"
      "    mars: {\"class\":\"ea\"}\n"
      "    shortName: \"msl\"\n"
      "  extra:\n"
      "    source: \"parity-fixture\"\n"
      "\n");
}

TEST(CliDump, NumberingRestartsPerFile) {
  const std::string msg_block =
      "version: 3\n"
      "objects: 1\n"
      "  object[0]: type=ntensor, dtype=float32, shape=[2]\n"
      "  base[0]:\n"
      "    _reserved_: {\"tensor\":{\"dtype\":\"float32\",\"ndim\":1,\"shape\":[2],\"strides\":[1]}}\n"
      "    parameter: \"pressure\"\n"
      "    product: \"efi\"\n"
      "\n";
  expect_success(run_cli({"dump", fixture("multi_message.tgm"), fixture("mars_metadata.tgm")}),
                 "=== Message 0 ===\n" + msg_block + "=== Message 1 ===\n" + msg_block +
                     "=== Message 0 ===\n"
                     "version: 3\n"
                     "objects: 1\n"
                     "  object[0]: type=ntensor, dtype=float64, shape=[2, 3]\n"
                     "  base[0]:\n"
                     "    _reserved_: "
                     "{\"tensor\":{\"dtype\":\"float64\",\"ndim\":2,\"shape\":[2,3],\"strides\":[3,1]}}\n"
                     "    mars: {\"class\":\"od\",\"step\":12,\"type\":\"fc\"}\n"
                     "\n");
}

TEST(CliDump, MultiObject) {
  const run_result r = run_cli({"dump", fixture("multi_object.tgm")});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("objects: 3\n"
                       "  object[0]: type=ntensor, dtype=float32, shape=[2]\n"
                       "  object[1]: type=ntensor, dtype=int64, shape=[3]\n"
                       "  object[2]: type=ntensor, dtype=uint8, shape=[5]\n"
                       "  base[0]:\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(
      r.out.find(
          "  base[2]:\n"
          "    _reserved_: {\"tensor\":{\"dtype\":\"uint8\",\"ndim\":1,\"shape\":[5],\"strides\":[1]}}\n"
          "    parameter: \"humidity\"\n"
          "    product: \"efi\"\n\n"),
      std::string::npos)
      << r.out;
}

TEST(CliDump, WhereKeepsFileMessageIndex) {
  expect_success(
      run_cli({"dump", "-w", "fixture.msg_index=9", fixture("streaming-tail.tgm")}),
      "=== Message 9 ===\n"
      "version: 3\n"
      "objects: 1\n"
      "  object[0]: type=ntensor, dtype=float32, shape=[4]\n"
      "  base[0]:\n"
      "    _reserved_: {\"tensor\":{\"dtype\":\"float32\",\"ndim\":1,\"shape\":[4],\"strides\":[1]}}\n"
      "    fixture: {\"msg_index\":9,\"shape\":[4]}\n"
      "\n");
  expect_success(run_cli({"dump", "-w", "mars.class=ea", fixture("metadata_parity.tgm")}), "");
}

TEST(CliDump, HumanModeIgnoresKeys) {
  const std::string f = fixture("mars_metadata.tgm");
  EXPECT_EQ(run_cli({"dump", "-p", "mars.step", f}).out, run_cli({"dump", f}).out);
}

TEST(CliDump, JsonMarsMetadata) {
  expect_success(run_cli({"dump", "-j", fixture("mars_metadata.tgm")}),
                 R"({
  "base": [
    {
      "_reserved_": {
        "tensor": {
          "dtype": "float64",
          "ndim": 2,
          "shape": [
            2,
            3
          ],
          "strides": [
            3,
            1
          ]
        }
      },
      "mars": {
        "class": "od",
        "step": 12,
        "type": "fc"
      }
    }
  ],
  "objects": [
    {
      "dtype": "float64",
      "shape": [
        2,
        3
      ],
      "type": "ntensor"
    }
  ],
  "version": 3
}
)");
}

TEST(CliDump, JsonWithExtraAndSeveralObjects) {
  const run_result r = run_cli({"dump", "-j", fixture("metadata_parity.tgm")});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("  \"extra\": {\n    \"source\": \"parity-fixture\"\n  },\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("      \"ratio\": 0.5,\n"), std::string::npos);
  EXPECT_NE(r.out.find("      \"levels\": [\n        1000,\n        850,\n        500\n      ],\n"),
            std::string::npos);
  EXPECT_NE(
      r.out.find(
          "  \"objects\": [\n    {\n      \"dtype\": \"float32\",\n      \"shape\": [\n        2,\n"
          "        3\n      ],\n      \"type\": \"ntensor\"\n    },\n    {\n      \"dtype\": \"float64\","),
      std::string::npos);
  EXPECT_EQ(r.out.find("strides\": [\n        3"), std::string::npos) << "objects carry no strides";
  EXPECT_EQ(r.out.find("byte_order"), std::string::npos);
  EXPECT_EQ(r.out.find("encoding"), std::string::npos);
  EXPECT_EQ(r.out.find("\"uuid\""), std::string::npos) << "message-level _reserved_ is not shown";
  EXPECT_EQ(r.out.substr(r.out.size() - 17), "  \"version\": 3\n}\n");
}

TEST(CliDump, JsonWithKeys) {
  expect_success(run_cli({"dump", "-j", "-p", "mars.class,source,_reserved_.tensor,extra.source,version",
                          fixture("metadata_parity.tgm")}),
                 "{\n  \"extra.source\": \"parity-fixture\",\n  \"mars.class\": \"od\",\n"
                 "  \"source\": \"parity-fixture\",\n  \"version\": \"3\"\n}\n");
}

TEST(CliDump, JsonOnePerMatchingMessage) {
  const run_result r = run_cli({"dump", "-j", "-p", "fixture.msg_index", fixture("two-msg.tgm")});
  expect_success(r, "{\n  \"fixture.msg_index\": \"0\"\n}\n{\n  \"fixture.msg_index\": \"1\"\n}\n");
}

}  // namespace
}  // namespace tensogram::cli::test

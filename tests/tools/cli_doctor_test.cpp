// `tensogram doctor` (spec 04 §A.5) through the built binary, and the
// library's report (tensogram::run_doctor) it is built from: section layout,
// column widths, feature and self-test rows in the spec's order with their
// exact labels, the JSON shape, HEALTHY/exit 0 on this build, and the
// UNHEALTHY/exit 1 path on a report with a failed row.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <tensogram.hpp>
#if TENSOGRAM_HAS_IMPORTERS
#include <tensogram/importers/doctor_checks.hpp>
#endif

#include "commands.hpp"
#include "test_support.hpp"

namespace tensogram::cli::test {
namespace {

using ordered_json = nlohmann::ordered_json;

const std::vector<std::string> core_features = {"szip", "szip-pure", "zstd",    "zstd-pure", "lz4",  "blosc2",
                                                "zfp",  "sz3",       "threads", "remote",    "mmap", "async"};
const std::vector<std::string> core_labels = {"encode/decode  none/none/none",
                                              "decode_metadata round-trip",
                                              "scan multi-message buffer",
                                              "hash xxh3 verify",
                                              "pipeline       simple_packing+szip",
                                              "pipeline       shuffle+zstd",
                                              "pipeline       lz4",
                                              "pipeline       blosc2",
                                              "pipeline       zfp (fixed-rate)",
                                              "pipeline       sz3 (absolute error)"};
const std::vector<std::string> converter_labels = {"convert        grib    (sanity.grib2)",
                                                   "convert        netcdf3 (sanity-classic.nc)",
                                                   "convert        netcdf4 (sanity-hdf5.nc)"};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// "  " + label padded with spaces to `width` (never cut), as {:<width}.
std::string padded(const std::string& label, std::size_t width) {
  std::string s = "  " + label;
  if (label.size() < width) s.append(width - label.size(), ' ');
  return s;
}

// The codec each pipeline row needs (spec 04 §A.5), empty for core rows.
std::string codec_of(const std::string& label) {
  for (const char* c : {"szip", "zstd", "lz4", "blosc2", "zfp", "sz3"}) {
    if (label.find(c) != std::string::npos && label.starts_with("pipeline")) return c;
  }
  return {};
}

TEST(CliDoctor, HumanReportLayout) {
  const run_result r = run_cli({"doctor"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.err, "");
  const std::vector<std::string> l = lines_of(r.out);
  const doctor_report lib = tensogram::run_doctor();

  std::vector<std::string> want = {"tensogram doctor",
                                   "================",
                                   "",
                                   "Build",
                                   padded("tensogram", 22) + std::string(library_version()),
                                   padded("wire-format", 22) + "3",
                                   padded("target", 22) + lib.build.target,
                                   padded("profile", 22) + lib.build.profile,
                                   "",
                                   "Compiled-in features"};
  for (const feature_status& f : lib.features) {
    want.push_back(padded(f.name, 22) +
                   (f.on
                        ? "on  (" + f.backend + (f.linkage == feature_linkage::ffi ? " FFI " : " built-in ") +
                              f.version.value_or("unknown") + ")"
                        : "off"));
  }
#if TENSOGRAM_HAS_IMPORTERS
  want.push_back(padded("grib", 22) + "on  (libeccodes FFI " + tensogram::importers::grib_library_version() +
                 ")");
  want.push_back(padded("netcdf", 22) + "on  (libnetcdf FFI " +
                 tensogram::importers::netcdf_library_version() + ")");
#else
  want.push_back(padded("grib", 22) + "off");
  want.push_back(padded("netcdf", 22) + "off");
#endif
  want.push_back("");
  want.push_back("Self-test");
  for (const std::string& label : core_labels) {
    const std::string codec = codec_of(label);
    if (codec.empty() || is_compression_built_in(codec)) {
      want.push_back(padded(label, 42) + "ok");
    } else {
      want.push_back(padded(label, 42) + "skipped (feature '" + codec + "' not built in)");
    }
  }
#if TENSOGRAM_HAS_IMPORTERS
  // The sanity conversions run (files generated like fixtures/doctor's).
  want.push_back(padded(converter_labels[0], 42) + "ok");
  // 42 characters: like the reference's {:<42}, nothing separates label and value.
  want.push_back("  convert        netcdf3 (sanity-classic.nc)ok");
  want.push_back(padded(converter_labels[2], 42) + "ok");
#else
  want.push_back(padded(converter_labels[0], 42) + "skipped (feature 'grib' not built in)");
  want.push_back("  convert        netcdf3 (sanity-classic.nc)skipped (feature 'netcdf' not built in)");
  want.push_back(padded(converter_labels[2], 42) + "skipped (feature 'netcdf' not built in)");
#endif
  want.push_back("");
  want.push_back("Status: HEALTHY");
  EXPECT_EQ(l, want);
  EXPECT_TRUE(r.out.ends_with("Status: HEALTHY\n"));
}

TEST(CliDoctor, BuildInformation) {
  const doctor_report r = tensogram::run_doctor();
  EXPECT_EQ(r.build.version, library_version());
  EXPECT_EQ(r.build.wire_version, 3);
#ifdef NDEBUG
  EXPECT_EQ(r.build.profile, "release");
#else
  EXPECT_EQ(r.build.profile, "debug");
#endif
#if defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__)
  EXPECT_EQ(r.build.target, "x86_64-unknown-linux-gnu");
#elif defined(__aarch64__) && defined(__linux__) && defined(__GLIBC__)
  EXPECT_EQ(r.build.target, "aarch64-unknown-linux-gnu");
#endif
}

TEST(CliDoctor, FeatureRowsFollowTheRegistry) {
  const doctor_report r = tensogram::run_doctor();
  std::vector<std::string> names;
  for (const feature_status& f : r.features) names.push_back(f.name);
  EXPECT_EQ(names, core_features);  // the library omits grib and netcdf
  for (const feature_status& f : r.features) {
    SCOPED_TRACE(f.name);
    if (f.name == "szip" || f.name == "zstd" || f.name == "lz4" || f.name == "blosc2" || f.name == "zfp" ||
        f.name == "sz3") {
      EXPECT_EQ(f.kind, feature_kind::compression);
      EXPECT_EQ(f.on, is_compression_built_in(f.name));
    } else if (f.name == "threads") {
      EXPECT_EQ(f.kind, feature_kind::threading);
      EXPECT_TRUE(f.on);
    } else if (f.name == "szip-pure" || f.name == "zstd-pure") {
      EXPECT_FALSE(f.on);  // no pure re-implementations in this library
    } else {
      EXPECT_EQ(f.kind, feature_kind::io);
      EXPECT_TRUE(f.on);
    }
  }
  // Codecs this library always has (docs/pipeline.md); blosc2 and sz3 are
  // whatever the registry says (rows above), and unknown names never exist.
  EXPECT_TRUE(is_compression_built_in("szip"));
  EXPECT_TRUE(is_compression_built_in("zstd"));
  EXPECT_TRUE(is_compression_built_in("lz4"));
  EXPECT_TRUE(is_compression_built_in("zfp"));
  EXPECT_TRUE(is_compression_built_in("sz3"));
  EXPECT_TRUE(is_compression_built_in("none"));
  EXPECT_TRUE(is_compression_built_in("rle"));
  EXPECT_FALSE(is_compression_built_in("gzip"));
  for (const feature_status& f : r.features) {
    if (f.name == "zstd") {
      EXPECT_EQ(f.backend, "libzstd");
    }
    if (f.name == "zstd" || f.name == "lz4" || f.name == "remote") {
      ASSERT_TRUE(f.version.has_value()) << f.name;
      EXPECT_EQ(std::count(f.version->begin(), f.version->end(), '.'), 2) << *f.version;
    }
  }
}

TEST(CliDoctor, SelfTestPassesOnThisBuild) {
  const doctor_report r = tensogram::run_doctor();
  std::vector<std::string> labels;
  for (const self_test_result& t : r.self_test) {
    labels.push_back(t.label);
    const std::string codec = codec_of(t.label);
    if (!codec.empty() && !is_compression_built_in(codec)) {
      EXPECT_EQ(t.outcome, self_test_outcome::skipped) << t.label;
      EXPECT_EQ(t.detail, "feature '" + codec + "' not built in");
    } else {
      EXPECT_EQ(t.outcome, self_test_outcome::ok) << t.label << ": " << t.detail;
    }
  }
  EXPECT_EQ(labels, core_labels);
  EXPECT_TRUE(r.healthy());
}

TEST(CliDoctor, JsonShape) {
  const run_result r = run_cli({"doctor", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  ASSERT_TRUE(r.out.ends_with("}\n"));
  // serde_json::to_string_pretty layout: two-space indent, "key": value.
  EXPECT_TRUE(
      r.out.starts_with("{\n  \"build\": {\n    \"version\": \"" + std::string(library_version()) + "\",\n"))
      << r.out.substr(0, 80);
  const ordered_json j = ordered_json::parse(r.out);

  std::vector<std::string> top;
  for (const auto& [k, v] : j.items()) top.push_back(k);
  EXPECT_EQ(top, (std::vector<std::string>{"build", "features", "self_test"}));
  std::vector<std::string> build_keys;
  for (const auto& [k, v] : j["build"].items()) build_keys.push_back(k);
  EXPECT_EQ(build_keys, (std::vector<std::string>{"version", "wire_version", "target", "profile"}));
  EXPECT_EQ(j["build"]["wire_version"], 3);

  std::vector<std::string> names = core_features;
  names.push_back("grib");
  names.push_back("netcdf");
  ASSERT_EQ(j["features"].size(), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    const ordered_json& f = j["features"][i];
    SCOPED_TRACE(names[i]);
    EXPECT_EQ(f["name"], names[i]);
    std::vector<std::string> keys;
    for (const auto& [k, v] : f.items()) keys.push_back(k);
    if (f["state"] == "on") {
      EXPECT_EQ(keys, (std::vector<std::string>{"name", "kind", "state", "backend", "linkage", "version"}));
      EXPECT_TRUE(f["linkage"] == "ffi" || f["linkage"] == "pure-rust");
      EXPECT_TRUE(f["version"].is_string() || f["version"].is_null());
    } else {
      EXPECT_EQ(f["state"], "off");
      EXPECT_EQ(keys, (std::vector<std::string>{"name", "kind", "state"}));
    }
    const std::string kind = i < 8 ? "compression" : i == 8 ? "threading" : i < 12 ? "io" : "converter";
    EXPECT_EQ(f["kind"], kind);
  }
#if TENSOGRAM_HAS_IMPORTERS
  EXPECT_EQ(j["features"][12]["state"], "on");
  EXPECT_EQ(j["features"][12]["backend"], "libeccodes");
  EXPECT_EQ(j["features"][13]["state"], "on");
  EXPECT_EQ(j["features"][13]["backend"], "libnetcdf");
#else
  EXPECT_EQ(j["features"][12]["state"], "off");
  EXPECT_EQ(j["features"][13]["state"], "off");
#endif

  std::vector<std::string> labels = core_labels;
  labels.insert(labels.end(), converter_labels.begin(), converter_labels.end());
  ASSERT_EQ(j["self_test"].size(), labels.size());
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const ordered_json& t = j["self_test"][i];
    EXPECT_EQ(t["label"], labels[i]);
    std::vector<std::string> keys;
    for (const auto& [k, v] : t.items()) keys.push_back(k);
    if (t["outcome"] == "ok") {
      EXPECT_EQ(keys, (std::vector<std::string>{"label", "outcome"}));
    } else {
      EXPECT_EQ(t["outcome"], "skipped") << t.dump();
      EXPECT_EQ(keys, (std::vector<std::string>{"label", "outcome", "reason"}));
    }
  }
#if TENSOGRAM_HAS_IMPORTERS
  for (std::size_t i = 10; i < 13; ++i)
    EXPECT_EQ(j["self_test"][i]["outcome"], "ok") << j["self_test"][i].dump();
#else
  EXPECT_EQ(j["self_test"][10]["reason"], "feature 'grib' not built in");
  EXPECT_EQ(j["self_test"][11]["reason"], "feature 'netcdf' not built in");
#endif
}

TEST(CliDoctor, LibraryJsonIsTheCliJsonWithoutConverterRows) {
  const run_result r = run_cli({"doctor", "--json"});
  ASSERT_EQ(r.exit_code, 0);
  ordered_json cli = ordered_json::parse(r.out);
  cli["features"].erase(cli["features"].end() - 2, cli["features"].end());
  cli["self_test"].erase(cli["self_test"].end() - 3, cli["self_test"].end());
  const std::string lib = doctor_json();
  EXPECT_EQ(ordered_json::parse(lib), cli);
  EXPECT_EQ(lib, cli.dump(2));  // same pretty layout, no trailing newline
}

TEST(CliDoctor, FailedRowMakesTheReportUnhealthy) {
  doctor_report r = cli_doctor_report();
  ASSERT_TRUE(r.healthy());
  r.self_test.push_back(self_test_result::failed("pipeline       lz4", "decoded data does not match input"));
  EXPECT_FALSE(r.healthy());

  std::ostringstream human;
  EXPECT_EQ(write_doctor_report(r, false, human), 1);
  const std::vector<std::string> l = lines_of(human.str());
  ASSERT_GE(l.size(), 3U);
  EXPECT_EQ(l[l.size() - 3],
            padded("pipeline       lz4", 42) + "FAILED  (decoded data does not match input)");
  EXPECT_EQ(l.back(), "Status: UNHEALTHY");

  std::ostringstream json;
  EXPECT_EQ(write_doctor_report(r, true, json), 1);
  const ordered_json j = ordered_json::parse(json.str());
  const ordered_json& last = j["self_test"].back();
  EXPECT_EQ(last, ordered_json::parse(R"({"label": "pipeline       lz4", "outcome": "failed",
                                          "error": "decoded data does not match input"})"));

  // A skipped row alone keeps the report healthy (spec: "skips are fine").
  doctor_report skipped = cli_doctor_report();
  skipped.self_test.push_back(self_test_result::not_built_in("x", "y"));
  std::ostringstream out;
  EXPECT_EQ(write_doctor_report(skipped, false, out), 0);
  EXPECT_TRUE(out.str().ends_with("Status: HEALTHY\n"));
}

TEST(CliDoctor, JsonEscapesErrorTexts) {
  doctor_report r;
  r.build.version = "0";
  r.build.target = "t";
  r.build.profile = "debug";
  r.self_test.push_back(self_test_result::failed("a\"b", std::string("bad\n\x01 \xff")));
  const ordered_json j = ordered_json::parse(r.to_json());  // must stay valid JSON
  EXPECT_EQ(j["self_test"][0]["label"], "a\"b");
  EXPECT_EQ(j["self_test"][0]["error"], "bad\n\x01 \xEF\xBF\xBD");  // invalid UTF-8 replaced
  EXPECT_EQ(j["features"], ordered_json::array());
}

TEST(CliDoctor, UnknownFlagIsAUsageError) {
  const run_result r = run_cli({"doctor", "--yaml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("--yaml"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tensogram::cli::test

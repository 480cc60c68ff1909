// `convert-grib`, `convert-netcdf`, `to-grib`, `to-netcdf` (spec 04 §A.5,
// spec 05) through the built tool: outputs, messages, and that a failing
// input never leaves a partial output file or replaces an existing one.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <tensogram.hpp>

#include "test_support.hpp"

namespace {

using tensogram::cli::test::read_file;
using tensogram::cli::test::run_cli;
using tensogram::cli::test::run_result;
using tensogram::cli::test::scratch_dir;
using tensogram::cli::test::write_file;

std::string shared(const std::string& rel) {
  return std::string(TENSOGRAM_FIXTURES) + "/" + rel;
}

std::size_t files_in(const std::filesystem::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

TEST(CliConvert, GribToTensogramAndBack) {
  const scratch_dir dir;
  const std::string out = (dir / "fields.tgm").string();
  const run_result r =
      run_cli({"convert-grib", "--encoding", "simple_packing", "--bits", "24", "--compression", "szip", "-o",
               out, shared("grib/2t.grib2"), shared("grib/q_150.grib2")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Converted 2 message(s) to " + out + "\n");
  tensogram::file f = tensogram::file::open(out);
  ASSERT_EQ(f.message_count(), 2u);  // one message per input file
  const auto [meta, descriptors] = f.decode_descriptors(1);
  ASSERT_EQ(descriptors.size(), 1u);
  EXPECT_EQ(descriptors[0].shape, (std::vector<std::uint64_t>{721, 1440}));
  EXPECT_EQ(descriptors[0].encoding, "simple_packing");
  EXPECT_EQ(descriptors[0].compression, "szip");
  EXPECT_EQ(meta.try_get_int("mars.levelist"), 150);

  const std::string grib = (dir / "back.grib2").string();
  const run_result back = run_cli({"to-grib", out, "-o", grib});
  ASSERT_EQ(back.exit_code, 0) << back.err;
  const auto bytes = read_file(grib);
  EXPECT_EQ(back.out, "Wrote GRIB (" + std::to_string(bytes.size()) + " bytes) to " + grib + "\n");
  ASSERT_GE(bytes.size(), 8u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(bytes.data()), 4), "GRIB");

  // --split: one message per GRIB message; stdout without -o.
  const run_result split = run_cli({"convert-grib", "--split", grib});
  ASSERT_EQ(split.exit_code, 0) << split.err;
  const auto entries = tensogram::scan(std::as_bytes(std::span(split.out.data(), split.out.size())));
  EXPECT_EQ(entries.size(), 2u);
}

TEST(CliConvert, NetcdfToTensogramAndBack) {
  const scratch_dir dir;
  const std::string out = (dir / "vars.tgm").string();
  const run_result r =
      run_cli({"convert-netcdf", "--split-by", "variable", "--cf", "-o", out, shared("netcdf/multi_var.nc")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: skipping variable 'description'"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "Converted 3 message(s) to " + out + "\n");

  const std::string nc = (dir / "back.nc").string();
  const run_result back = run_cli({"to-netcdf", out, "-o", nc});
  ASSERT_EQ(back.exit_code, 0) << back.err;
  EXPECT_EQ(back.out, "Wrote NetCDF to " + nc + "\n");
  const run_result again = run_cli({"convert-netcdf", "-o", (dir / "again.tgm").string(), nc});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(tensogram::file::open(dir / "again.tgm").decode_descriptors(0).second.size(), 3u);
}

TEST(CliConvert, BadInputLeavesExistingOutputUntouched) {
  const scratch_dir dir;
  const auto keep = tensogram::cli::test::bytes_of("precious data");
  const std::filesystem::path out = dir / "out.tgm";
  write_file(out, keep);

  auto grib = read_file(shared("grib/2t.grib2"));
  grib.resize(grib.size() / 2);  // truncated in the data section
  write_file(dir / "broken.grib2", grib);
  const run_result g = run_cli(
      {"convert-grib", "-o", out.string(), shared("grib/lsm.grib2"), (dir / "broken.grib2").string()});
  EXPECT_EQ(g.exit_code, 1);
  EXPECT_NE(g.err.find("broken.grib2"), std::string::npos) << g.err;
  EXPECT_EQ(read_file(out), keep);

  auto nc = read_file(shared("netcdf/cf_temperature.nc"));
  nc.resize(nc.size() / 2);
  write_file(dir / "broken.nc", nc);
  const run_result n = run_cli({"convert-netcdf", "-o", out.string(), (dir / "broken.nc").string()});
  EXPECT_EQ(n.exit_code, 1);
  EXPECT_NE(n.err.find("error: "), std::string::npos) << n.err;
  EXPECT_EQ(read_file(out), keep);
  EXPECT_EQ(files_in(dir.path()), 3u);  // out.tgm and the two inputs: no temporary file left

  const run_result bad_mode =
      run_cli({"convert-netcdf", "--split-by", "month", "-o", out.string(), shared("netcdf/simple_2d.nc")});
  EXPECT_EQ(bad_mode.exit_code, 1);
  EXPECT_NE(bad_mode.err.find("unknown --split-by value 'month'; expected file, variable, or record"),
            std::string::npos)
      << bad_mode.err;
  EXPECT_EQ(read_file(out), keep);
}

TEST(CliConvert, ToGribNeedsGribProvenance) {
  const scratch_dir dir;
  const run_result r =
      run_cli({"to-grib", tensogram::cli::test::fixture("simple_f32.tgm"), "-o", (dir / "x.grib2").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("grib_repro"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "x.grib2"));
  const run_result missing = run_cli({"convert-grib", (dir / "nope.grib2").string()});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("nope.grib2"), std::string::npos) << missing.err;
}

}  // namespace

// The PIPELINE flags of `convert-npy` (spec 04 §A.5, mapping of spec 05
// §1.1, extended set of tools/tensogram/pipeline_flags.hpp) through the
// built binary: every pipeline's output decodes to the input (bit for bit
// when lossless, within half a quantum for simple_packing, within the
// tolerance for zfp fixed_accuracy), the descriptor records the requested
// stages and parameters, `to-npy` decodes every pipeline, and flag
// combinations no data can satisfy are usage errors (exit 2) while data the
// pipeline cannot take is a runtime error naming the file (exit 1).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <tensogram.hpp>

#include "global_options.hpp"
#include "npy.hpp"
#include "pipeline_flags.hpp"
#include "test_support.hpp"

namespace tensogram::cli::test {
namespace {

constexpr bool host_little = std::endian::native == std::endian::little;

// 1000 smooth but not compressible-to-nothing values, with a sign change.
std::vector<double> field() {
  std::vector<double> v(1000);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto x = static_cast<double>(i);
    v[i] = 250.0 + 30.0 * std::sin(x / 37.0) - 0.01 * x + 1e-3 * std::cos(x * 1.7);
  }
  return v;
}

template <typename T>
std::vector<std::byte> bytes_in_order(const std::vector<T>& values, bool little) {
  std::vector<std::byte> out(values.size() * sizeof(T));
  std::memcpy(out.data(), values.data(), out.size());
  if (little != host_little) {
    for (std::size_t i = 0; i < out.size(); i += sizeof(T)) {
      const auto at = out.begin() + static_cast<std::ptrdiff_t>(i);
      std::reverse(at, at + static_cast<std::ptrdiff_t>(sizeof(T)));
    }
  }
  return out;
}

std::vector<double> as_doubles(std::span<const std::byte> b) {
  std::vector<double> v(b.size() / 8);
  std::memcpy(v.data(), b.data(), v.size() * 8);
  return v;
}

std::int64_t int_param(const data_object_descriptor& d, std::string_view key) {
  const cbor::value* v = d.params.find(key);
  if (v == nullptr || !v->as_int64()) throw std::runtime_error("no integer parameter " + std::string(key));
  return *v->as_int64();
}

class PipelineFlags : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::vector<double> f = field();
    std::vector<float> f32(f.begin(), f.end());
    std::vector<std::int16_t> i16(f.size());
    std::vector<std::uint8_t> u8(f.size());
    std::vector<std::int32_t> i32(f.size());
    for (std::size_t i = 0; i < f.size(); ++i) {
      i16[i] = static_cast<std::int16_t>(std::lround(f[i] * 100.0) - 25000);
      u8[i] = static_cast<std::uint8_t>(std::lround(f[i]) % 256);
      i32[i] = static_cast<std::int32_t>(std::lround(f[i] * 1e5));
    }
    const std::vector<std::uint64_t> shape = {25, 40};
    write_file(dir_ / "f8.npy", make_npy(npy_dict("<f8", shape), bytes_in_order(f, true)));
    write_file(dir_ / "f8be.npy", make_npy(npy_dict(">f8", shape), bytes_in_order(f, false)));
    write_file(dir_ / "f4.npy", make_npy(npy_dict("<f4", shape), bytes_in_order(f32, true)));
    write_file(dir_ / "i2.npy", make_npy(npy_dict(">i2", shape), bytes_in_order(i16, false)));
    write_file(dir_ / "u1.npy", make_npy(npy_dict("|u1", shape), bytes_in_order(u8, true)));
    write_file(dir_ / "i4.npy", make_npy(npy_dict("<i4", shape), bytes_in_order(i32, true)));
    native_["f8"] = bytes_in_order(f, host_little);
    native_["f8be"] = native_["f8"];
    native_["f4"] = bytes_in_order(f32, host_little);
    native_["i2"] = bytes_in_order(i16, host_little);
    native_["u1"] = bytes_in_order(u8, host_little);
    native_["i4"] = bytes_in_order(i32, host_little);
  }

  // Runs convert-npy on `input` (a stem above) with `flags`; returns the one
  // decoded object (host byte order) after checking the command's output.
  decoded_object convert(const std::string& input, const std::vector<std::string>& flags) {
    const std::string tgm = (dir_ / (input + ".tgm")).string();
    std::vector<std::string> args = {"convert-npy", (dir_ / (input + ".npy")).string(), "-o", tgm};
    args.insert(args.end(), flags.begin(), flags.end());
    const run_result r = run_cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "Wrote 1 object to " + tgm + "\n");
    EXPECT_EQ(r.err, "");
    decode_options verify;
    verify.verify_hash = true;
    const message m = decode(buffer::map_file(tgm), verify);
    if (m.num_objects() != 1) throw std::runtime_error("expected one object");
    check_to_npy(tgm, m.object(0));
    return m.object(0);
  }

  // `to-npy` writes what the library decodes.
  void check_to_npy(const std::string& tgm, const decoded_object& o) {
    const std::filesystem::path out = dir_ / "npy_out";
    std::filesystem::remove_all(out);
    const run_result r = run_cli({"to-npy", tgm, "-o", out.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::vector<std::byte> file = read_file(out / "0_0.npy");
    const npy::array a = npy::parse(file);
    EXPECT_EQ(a.element.type, o.descriptor().dtype);
    EXPECT_EQ(a.hdr.shape, o.descriptor().shape);
    EXPECT_TRUE(std::equal(a.data.begin(), a.data.end(), o.bytes().begin(), o.bytes().end()));
  }

  void expect_lossless(const std::string& input, const std::vector<std::string>& flags,
                       const std::string& encoding, const std::string& filter,
                       const std::string& compression) {
    SCOPED_TRACE(input + " " + ::testing::PrintToString(flags));
    const decoded_object o = convert(input, flags);
    EXPECT_EQ(o.descriptor().encoding, encoding);
    EXPECT_EQ(o.descriptor().filter, filter);
    EXPECT_EQ(o.descriptor().compression, compression);
    EXPECT_EQ(o.descriptor().shape, (std::vector<std::uint64_t>{25, 40}));
    const std::vector<std::byte>& want = native_[input];
    EXPECT_TRUE(std::equal(o.bytes().begin(), o.bytes().end(), want.begin(), want.end()));
  }

  // Runs convert-npy expecting failure with `code`; stderr must contain
  // `message`, stdout stay empty and no output file appear.
  void expect_failure(const std::string& input, const std::vector<std::string>& flags, int code,
                      const std::string& message) {
    SCOPED_TRACE(::testing::PrintToString(flags));
    const std::filesystem::path tgm = dir_ / "fail.tgm";
    std::vector<std::string> args = {"convert-npy", (dir_ / (input + ".npy")).string(), "-o", tgm.string()};
    args.insert(args.end(), flags.begin(), flags.end());
    const run_result r = run_cli(args);
    EXPECT_EQ(r.exit_code, code) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("error: " + message), std::string::npos) << r.err;
    if (code == 2) {
      EXPECT_NE(r.err.find("\n\nFor more information, try '--help'.\n"), std::string::npos) << r.err;
    }
    EXPECT_FALSE(std::filesystem::exists(tgm));
  }

  scratch_dir dir_;
  std::map<std::string, std::vector<std::byte>> native_;
};

TEST_F(PipelineFlags, LosslessPipelinesRoundTripExactly) {
  expect_lossless("f8", {}, "none", "none", "none");
  expect_lossless("f8", {"--compression", "none"}, "none", "none", "none");
  expect_lossless("f8", {"--compression", "lz4"}, "none", "none", "lz4");
  expect_lossless("f8", {"--filter", "shuffle"}, "none", "shuffle", "none");
  expect_lossless("f8", {"--filter", "shuffle", "--compression", "zstd"}, "none", "shuffle", "zstd");
  expect_lossless("f8", {"--filter", "shuffle", "--compression", "szip"}, "none", "shuffle", "szip");
  expect_lossless("f8be", {"--filter", "shuffle", "--compression", "lz4"}, "none", "shuffle", "lz4");
  expect_lossless("f4", {"--compression", "szip"}, "none", "none", "szip");
  expect_lossless("f4", {"--compression", "zstd", "--compression-level", "19"}, "none", "none", "zstd");
  expect_lossless("i2", {"--compression", "szip"}, "none", "none", "szip");
  expect_lossless("i2", {"--filter", "shuffle", "--compression", "zstd"}, "none", "shuffle", "zstd");
  expect_lossless("u1", {"--compression", "szip", "--szip-flags", "8"}, "none", "none", "szip");
  expect_lossless("i4", {"--compression", "szip", "--szip-flags", "9"}, "none", "none", "szip");
  if (is_compression_built_in("blosc2")) {
    expect_lossless("f8", {"--compression", "blosc2"}, "none", "none", "blosc2");
    expect_lossless("f4", {"--filter", "shuffle", "--compression", "blosc2", "--compression-level", "9"},
                    "none", "shuffle", "blosc2");
  }
}

TEST_F(PipelineFlags, DescriptorRecordsCodecParameters) {
  {
    const decoded_object o = convert("f8", {"--compression", "zstd"});
    EXPECT_EQ(int_param(o.descriptor(), "zstd_level"), 3);  // spec 05 §1.1 default
  }
  {
    const decoded_object o = convert("f8", {"--compression", "zstd", "--compression-level", "-5"});
    EXPECT_EQ(int_param(o.descriptor(), "zstd_level"), -5);
  }
  {
    const decoded_object o = convert("f8", {"--filter", "shuffle", "--compression", "szip"});
    EXPECT_EQ(int_param(o.descriptor(), "shuffle_element_size"), 8);  // dtype width
    EXPECT_EQ(int_param(o.descriptor(), "szip_rsi"), 128);
    EXPECT_EQ(int_param(o.descriptor(), "szip_block_size"), 16);
    EXPECT_EQ(int_param(o.descriptor(), "szip_flags"), 8);
    EXPECT_TRUE(o.descriptor().params.contains("szip_block_offsets"));
  }
  {
    const decoded_object o = convert(
        "i2", {"--compression", "szip", "--szip-rsi", "32", "--szip-block-size", "32", "--szip-flags", "9"});
    EXPECT_EQ(int_param(o.descriptor(), "szip_rsi"), 32);
    EXPECT_EQ(int_param(o.descriptor(), "szip_block_size"), 32);
    EXPECT_EQ(int_param(o.descriptor(), "szip_flags"), 9);
  }
  {
    const decoded_object o = convert("f8", {"--compression", "lz4"});
    EXPECT_FALSE(o.descriptor().params.contains("zstd_level"));
  }
  if (is_compression_built_in("blosc2")) {
    const decoded_object o = convert("f8", {"--compression", "blosc2", "--compression-level", "7"});
    EXPECT_EQ(int_param(o.descriptor(), "blosc2_clevel"), 7);
    EXPECT_EQ(*o.descriptor().params.find("blosc2_codec")->as_text(), "lz4");  // spec 05 §1.1
  }
}

TEST_F(PipelineFlags, SimplePackingStaysWithinHalfAQuantum) {
  const std::vector<double> want = field();
  struct packing_case {
    std::string input;
    std::vector<std::string> flags;
    std::uint32_t bits;
    std::string filter, compression;
  };
  const std::vector<packing_case> cases = {
      {"f8", {"--encoding", "simple_packing"}, 16, "none", "none"},
      {"f8", {"--encoding", "simple_packing", "--bits", "12", "--compression", "zstd"}, 12, "none", "zstd"},
      {"f8", {"--encoding", "simple_packing", "--bits", "24", "--compression", "szip"}, 24, "none", "szip"},
      {"f8",
       {"--encoding", "simple_packing", "--bits", "8", "--filter", "shuffle", "--compression", "szip"},
       8,
       "shuffle",
       "szip"},
      {"f8be",
       {"--encoding", "simple_packing", "--bits", "24", "--filter", "shuffle", "--compression", "lz4"},
       24,
       "shuffle",
       "lz4"},
      {"f8", {"--encoding", "simple_packing", "--bits", "12", "--filter", "shuffle"}, 12, "shuffle", "none"},
      {"f8", {"--encoding", "simple_packing", "--bits", "32", "--compression", "szip"}, 32, "none", "szip"},
  };
  for (const packing_case& c : cases) {
    SCOPED_TRACE(::testing::PrintToString(c.flags));
    const decoded_object o = convert(c.input, c.flags);
    const data_object_descriptor& d = o.descriptor();
    EXPECT_EQ(d.encoding, "simple_packing");
    EXPECT_EQ(d.filter, c.filter);
    EXPECT_EQ(d.compression, c.compression);
    EXPECT_EQ(d.dtype, dtype::float64);
    EXPECT_EQ(int_param(d, "sp_bits_per_value"), c.bits);
    EXPECT_EQ(int_param(d, "sp_decimal_scale_factor"), 0);
    if (c.filter == "shuffle") {
      EXPECT_EQ(int_param(d, "shuffle_element_size"), (c.bits + 7) / 8);
    }
    const double quantum = std::exp2(static_cast<double>(int_param(d, "sp_binary_scale_factor")));
    const std::vector<double> got = as_doubles(o.bytes());
    ASSERT_EQ(got.size(), want.size());
    double worst = 0;
    for (std::size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::fabs(got[i] - want[i]));
    EXPECT_LE(worst, 0.5 * quantum * (1 + 1e-9));
    // The values really went through packing: 12 bits over a range of ~70
    // cannot be exact.
    if (c.bits == 12) {
      EXPECT_GT(worst, 0.0);
    }
  }
}

TEST_F(PipelineFlags, ZfpModes) {
  const std::vector<double> want = field();
  const auto worst_error = [&](const decoded_object& o) {
    const std::vector<double> got = as_doubles(o.bytes());
    EXPECT_EQ(got.size(), want.size());
    double worst = 0;
    for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i)
      worst = std::max(worst, std::fabs(got[i] - want[i]));
    return worst;
  };
  {
    const decoded_object o = convert("f8", {"--compression", "zfp", "--zfp-tolerance", "1e-4"});
    EXPECT_EQ(o.descriptor().compression, "zfp");
    EXPECT_EQ(*o.descriptor().params.find("zfp_mode")->as_text(), "fixed_accuracy");
    EXPECT_EQ(*o.descriptor().params.find("zfp_tolerance")->as_double(), 1e-4);
    EXPECT_LE(worst_error(o), 1e-4);  // fixed_accuracy bounds the absolute error
  }
  {
    const decoded_object o =
        convert("f8be", {"--compression", "zfp", "--zfp-mode", "fixed_accuracy", "--zfp-tolerance", "0.01"});
    EXPECT_LE(worst_error(o), 0.01);
  }
  {
    const decoded_object o = convert("f8", {"--compression", "zfp", "--zfp-rate", "32"});
    EXPECT_EQ(*o.descriptor().params.find("zfp_mode")->as_text(), "fixed_rate");
    EXPECT_EQ(*o.descriptor().params.find("zfp_rate")->as_double(), 32.0);
    // Fixed rate bounds the size, not the error; 32 bits per value keep this
    // smooth field (range ~70) far below 1e-3.
    EXPECT_LE(worst_error(o), 1e-3);
    EXPECT_GT(worst_error(o), 0.0);
  }
  {
    const decoded_object o = convert("f8", {"--compression", "zfp", "--zfp-precision", "40"});
    EXPECT_EQ(*o.descriptor().params.find("zfp_mode")->as_text(), "fixed_precision");
    EXPECT_EQ(int_param(o.descriptor(), "zfp_precision"), 40);
    EXPECT_LE(worst_error(o), 1e-3);
  }
  {
    // sz3: abs by default; the bound holds exactly.
    const decoded_object o = convert("f8", {"--compression", "sz3", "--sz3-bound", "1e-3"});
    EXPECT_EQ(o.descriptor().compression, "sz3");
    EXPECT_EQ(*o.descriptor().params.find("sz3_error_bound_mode")->as_text(), "abs");
    EXPECT_EQ(*o.descriptor().params.find("sz3_error_bound")->as_double(), 1e-3);
    EXPECT_LE(worst_error(o), 1e-3);
  }
  {
    const decoded_object o =
        convert("f8be", {"--compression", "sz3", "--sz3-mode", "rel", "--sz3-bound", "1e-4"});
    EXPECT_EQ(*o.descriptor().params.find("sz3_error_bound_mode")->as_text(), "rel");
    const auto [lo, hi] = std::minmax_element(want.begin(), want.end());
    EXPECT_LE(worst_error(o), 1e-4 * (*hi - *lo));
  }
}

TEST_F(PipelineFlags, AppliedToEveryArray) {
  const std::string tgm = (dir_ / "two.tgm").string();
  const run_result r = run_cli({"convert-npy", (dir_ / "f8.npy").string(), (dir_ / "f8be.npy").string(), "-o",
                                tgm, "--encoding", "simple_packing", "--compression", "zstd"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const message m = decode(buffer::map_file(tgm));
  ASSERT_EQ(m.num_objects(), 2U);
  for (const decoded_object& o : m) {
    EXPECT_EQ(o.descriptor().encoding, "simple_packing");
    EXPECT_EQ(o.descriptor().compression, "zstd");
  }
}

TEST_F(PipelineFlags, ImpossibleCombinationsAreUsageErrors) {
  expect_failure(
      "f8", {"--compression", "gzip"}, 2,
      "invalid value 'gzip' for '--compression <CODEC>'\n  [possible values: none, szip, zstd, lz4");
  expect_failure(
      "f8", {"--encoding", "grib_ccsds"}, 2,
      "invalid value 'grib_ccsds' for '--encoding <ENC>'\n  [possible values: none, simple_packing]\n");
  expect_failure("f8", {"--filter", "bitshuffle"}, 2,
                 "invalid value 'bitshuffle' for '--filter <FILTER>'\n  [possible values: none, shuffle]\n");
  expect_failure("f8", {"--encoding", "simple_packing", "--bits", "65"}, 2,
                 "invalid value '65' for '--bits <N>': Value 65 not in range 0 to 64");
  expect_failure("f8", {"--bits", "16"}, 2, "--bits applies to --encoding simple_packing only");
  expect_failure("f8", {"--compression", "lz4", "--compression-level", "5"}, 2,
                 "--compression-level applies to --compression zstd or blosc2 only");
  expect_failure("f8", {"--compression", "zstd", "--compression-level", "high"}, 2,
                 "invalid value 'high' for '--compression-level <L>': invalid digit found in string");
  expect_failure("f8", {"--compression", "zfp"}, 2,
                 "--compression zfp needs one of --zfp-rate, --zfp-precision or --zfp-tolerance");
  expect_failure("f8", {"--zfp-rate", "8"}, 2, "--zfp-rate requires --compression zfp");
  expect_failure("f8", {"--compression", "zstd", "--zfp-mode", "fixed_rate"}, 2,
                 "--zfp-mode requires --compression zfp");
  expect_failure("f8", {"--compression", "zfp", "--zfp-rate", "8", "--zfp-tolerance", "0.1"}, 2,
                 "--zfp-rate and --zfp-tolerance cannot be used together");
  expect_failure("f8", {"--compression", "zfp", "--zfp-mode", "fixed_precision", "--zfp-rate", "8"}, 2,
                 "--zfp-rate does not apply to --zfp-mode fixed_precision");
  expect_failure("f8", {"--compression", "zfp", "--zfp-mode", "fixed_accuracy"}, 2,
                 "--zfp-mode fixed_accuracy needs --zfp-tolerance");
  expect_failure("f8", {"--compression", "zfp", "--zfp-mode", "lossless"}, 2,
                 "invalid value 'lossless' for '--zfp-mode <MODE>'\n  [possible values: ");
  expect_failure("f8", {"--compression", "zfp", "--zfp-tolerance", "0"}, 2,
                 "invalid value '0' for '--zfp-tolerance <T>'");
  expect_failure("f8", {"--compression", "zfp", "--zfp-rate", "886737121"}, 2,
                 "invalid value '886737121' for '--zfp-rate <R>': Value 886737121 not in range 0 to 4164.5: "
                 "fixed-rate zfp blocks are limited to 16658 bits");
  // NaN was let through to the codec (exit 1 after reading the input).
  expect_failure("f8", {"--compression", "zfp", "--zfp-rate", "nan"}, 2,
                 "invalid value 'nan' for '--zfp-rate <R>': Value nan is not a finite number > 0");
  expect_failure("f8", {"--compression", "zfp", "--zfp-tolerance", "nan"}, 2,
                 "invalid value 'nan' for '--zfp-tolerance <T>': Value nan is not a finite number > 0");
  expect_failure("f8", {"--compression", "zfp", "--zfp-tolerance", "inf"}, 2,
                 "invalid value 'inf' for '--zfp-tolerance <T>': Value inf is not a finite number > 0");
  expect_failure("f8", {"--compression", "sz3", "--sz3-bound", "nan"}, 2,
                 "invalid value 'nan' for '--sz3-bound <B>': Value nan is not a finite number >= 0");
  expect_failure("f8", {"--compression", "sz3", "--sz3-bound", "-1e-3"}, 2,
                 "invalid value '-1e-3' for '--sz3-bound <B>': Value -1e-3 is not a finite number >= 0");
  expect_failure("f8", {"--compression", "zfp", "--zfp-precision", "0"}, 2,
                 "invalid value '0' for '--zfp-precision <P>'");
  expect_failure("f8", {"--compression", "zfp", "--zfp-rate", "8", "--encoding", "simple_packing"}, 2,
                 "--compression zfp cannot follow --encoding simple_packing");
  expect_failure("f8", {"--compression", "zfp", "--zfp-rate", "8", "--filter", "shuffle"}, 2,
                 "--compression zfp cannot follow --filter shuffle");
  expect_failure("f8", {"--compression", "szip", "--encoding", "simple_packing", "--bits", "12"}, 2,
                 "--compression szip after --encoding simple_packing needs --bits 8, 16, 24 or 32, got 12");
  expect_failure("f8", {"--compression", "szip", "--szip-block-size", "12", "--filter", "shuffle"}, 2,
                 "invalid szip options: block_size must be 8, 16, 32 or 64, got 12");
  expect_failure("f8", {"--compression", "szip", "--szip-rsi", "0", "--filter", "shuffle"}, 2,
                 "invalid szip options: rsi must be 1..=4096, got 0");
  expect_failure("f8", {"--compression", "szip", "--szip-flags", "128", "--filter", "shuffle"}, 2,
                 "--szip-flags 128 has bits outside the 7 libaec flags (0..127)");
  expect_failure("f8", {"--szip-rsi", "64"}, 2, "--szip-rsi requires --compression szip");
  expect_failure("f8", {"--compression", "sz3"}, 2, "--compression sz3 needs --sz3-bound");
  expect_failure("f8", {"--sz3-bound", "0.1"}, 2, "--sz3-bound requires --compression sz3");
  expect_failure("f8", {"--compression", "zstd", "--sz3-mode", "rel"}, 2,
                 "--sz3-mode requires --compression sz3");
  expect_failure("f8", {"--compression", "sz3", "--sz3-bound", "0.1", "--sz3-mode", "pwrel"}, 2,
                 "invalid value 'pwrel' for '--sz3-mode <MODE>'\n  [possible values: ");
  expect_failure("f8", {"--compression", "sz3", "--sz3-bound", "-1"}, 2,
                 "invalid value '-1' for '--sz3-bound <B>'");
  expect_failure("f8", {"--compression", "sz3", "--sz3-bound", "0.1", "--filter", "shuffle"}, 2,
                 "--compression sz3 cannot follow --filter shuffle");
  // A codec the spec lists but this build lacks gets its own message.
  for (const char* codec : {"blosc2"}) {
    if (!is_compression_built_in(codec)) {
      expect_failure("f8", {"--compression", codec}, 2,
                     "invalid value for '--compression <CODEC>': codec '" + std::string(codec) +
                         "' is not built into this tensogram");
    }
  }
}

TEST_F(PipelineFlags, DataThePipelineCannotTakeIsARuntimeError) {
  const std::string i4 = (dir_ / "i4.npy").string();
  const std::string f4 = (dir_ / "f4.npy").string();
  const std::string f8 = (dir_ / "f8.npy").string();
  expect_failure("i4", {"--encoding", "simple_packing"}, 1,
                 i4 + ": --encoding simple_packing needs float64 data, got int32");
  expect_failure("f4", {"--compression", "zfp", "--zfp-rate", "16"}, 1,
                 f4 + ": --compression zfp needs float64 data, got float32");
  expect_failure("f4", {"--compression", "sz3", "--sz3-bound", "0.1"}, 1,
                 f4 + ": --compression sz3 needs float64 data, got float32");
  // 1000 values x 20 bits = 2500 bytes, not whole 3-byte elements.
  expect_failure(
      "f8", {"--encoding", "simple_packing", "--bits", "20", "--filter", "shuffle"}, 1,
      f8 + ": --filter shuffle after --encoding simple_packing --bits 20 needs the packed size (2500 bytes) "
           "to be a multiple of 3; use a multiple of 8 for --bits");
  expect_failure(
      "f8", {"--compression", "szip"}, 1,
      f8 + ": --compression szip cannot code float64 samples directly (at most 32 bits); add --filter "
           "shuffle or --encoding simple_packing");
}

TEST(PipelineFlagSets, ChoicesComeFromTheRegistry) {
  const std::vector<std::string> ext = compression_choices(pipeline_flag_set::extended);
  const std::vector<std::string> ref = compression_choices(pipeline_flag_set::reference);
  for (const std::string& c : ext) EXPECT_TRUE(is_compression_built_in(c)) << c;
  EXPECT_NE(std::find(ext.begin(), ext.end(), "zfp"), ext.end());
  EXPECT_NE(std::find(ext.begin(), ext.end(), "sz3"), ext.end());
  // spec 04 §A.5: the converters do not offer zfp or sz3.
  EXPECT_EQ(std::find(ref.begin(), ref.end(), "zfp"), ref.end());
  EXPECT_EQ(std::find(ref.begin(), ref.end(), "sz3"), ref.end());
  EXPECT_EQ(ref.front(), "none");
  EXPECT_EQ(std::find(ref.begin(), ref.end(), "blosc2") != ref.end(), is_compression_built_in("blosc2"));
}

TEST(PipelineFlagSets, ReferenceSetIgnoresWhatTheReferenceIgnores) {
  // spec 05 §1.1: `bits` and `compression_level` are otherwise ignored.
  pipeline_flags f;
  f.bits = 12;
  f.compression = "lz4";
  f.compression_level = 9;
  EXPECT_NO_THROW(validate_pipeline_flags(f, pipeline_flag_set::reference));
  EXPECT_THROW(validate_pipeline_flags(f, pipeline_flag_set::extended), usage_error);

  data_object_descriptor d = data_object_descriptor::contiguous(dtype::float32, {4});
  apply_pipeline_flags(f, d, "x");
  EXPECT_EQ(d.encoding, "none");
  EXPECT_EQ(d.compression, "lz4");
  EXPECT_EQ(d.params.size(), 0U);

  // blosc2's parameters (spec 05 §1.1), whether or not this build has it.
  pipeline_flags b;
  b.compression = "blosc2";
  data_object_descriptor db = data_object_descriptor::contiguous(dtype::float32, {4});
  apply_pipeline_flags(b, db, "x");
  EXPECT_EQ(*db.params.find("blosc2_clevel")->as_int64(), 5);
  EXPECT_EQ(*db.params.find("blosc2_codec")->as_text(), "lz4");
}

}  // namespace
}  // namespace tensogram::cli::test

// GRIB importer (spec 05 §2, §6; issue 9): every fixture is converted and
// compared with ecCodes' own reading of the same file; metadata, grouping,
// pipelines, errors and the MARS area rule. The exporter is in
// grib_export_test.cpp.
#include <eccodes.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "grib_support.hpp"

namespace {

using namespace tgtest::grib;

// ---- values, shapes, masks (spec 05 §2.3, §6; issue 9) ---------------------

TEST(GribImport, EveryFixtureMatchesEcCodes) {
  std::size_t compared = 0;
  for (const auto& name : value_fixtures) {
    SCOPED_TRACE(name);
    const auto input = read_bytes(fixture(name));
    const auto oracle = ecc_fields(input);
    ASSERT_EQ(oracle.size(), 1u);
    ti::grib_options opts;
    std::vector<std::string> warnings;
    opts.conversion.on_warning = [&](std::string_view w) { warnings.emplace_back(w); };
    const auto messages = ti::convert_grib_file(fixture(name), opts);
    ASSERT_EQ(messages.size(), 1u);
    // The bitmap's own count of missing points agrees with the NaN count.
    EXPECT_TRUE(warnings.empty()) << warnings.front();
    const auto msg = decode_message(messages[0]);
    ASSERT_EQ(msg.num_objects(), 1u);
    const auto& o = msg.object(0);
    EXPECT_EQ(o.descriptor().dtype, tensogram::dtype::float64);
    EXPECT_EQ(o.descriptor().byte_order, tensogram::byte_order::little);
    EXPECT_EQ(o.descriptor().type, "ntensor");
    EXPECT_EQ(o.shape(), (std::vector<std::uint64_t>{static_cast<std::uint64_t>(oracle[0].nj),
                                                     static_cast<std::uint64_t>(oracle[0].ni)}));
    EXPECT_EQ(o.strides(), (std::vector<std::uint64_t>{static_cast<std::uint64_t>(oracle[0].ni), 1}));
    EXPECT_EQ(o.encoding(), "none");
    EXPECT_EQ(o.compression(), "none");
    compared += expect_same_values(o, oracle[0]);

    // The NaN mask exists exactly when a bitmap masks points.
    const auto masks = tensogram::decode_object_masks(messages[0]);
    ASSERT_EQ(masks.size(), 1u);
    EXPECT_EQ(masks[0][0].has_value(), oracle[0].missing_count != 0);
    if (name == "grib/lsm_bitmap.grib2") {
      EXPECT_EQ(oracle[0].missing_count, 679322u);
      const auto values = object_values(o);
      EXPECT_EQ(std::count_if(values.begin(), values.end(), [](double v) { return std::isnan(v); }), 679322);
      EXPECT_EQ(std::count(values.begin(), values.end(), 9999.0), 0);
    }
  }
  EXPECT_EQ(compared, 6 * 1038240u + 16u);
}

TEST(GribImport, SanityGridShapeAndValues) {
  ti::grib_options opts;
  opts.grouping = ti::grib_grouping::one_to_one;
  const auto messages = ti::convert_grib_file(fixture("doctor/sanity.grib2"), opts);
  ASSERT_EQ(messages.size(), 1u);
  const auto msg = decode_message(messages[0]);
  ASSERT_EQ(msg.num_objects(), 1u);
  EXPECT_EQ(msg.object(0).shape(), (std::vector<std::uint64_t>{4, 4}));
  const auto values = object_values(msg.object(0));
  for (std::size_t i = 0; i < values.size(); ++i)
    EXPECT_NEAR(values[i], 273.15 + static_cast<double>(i), 1e-3);
}

// Spec 05 §2.3 pitfall: reduced Gaussian grids (Ni missing) are 1-D.
TEST(GribImport, ReducedGridIsOneDimensional) {
  handle_ptr h(codes_grib_handle_new_from_samples(nullptr, "reduced_gg_pl_32_grib2"));
  ASSERT_TRUE(h);
  const auto bytes = ecc_message_bytes(h.get());
  ASSERT_FALSE(bytes.empty());
  const long points = ecc_long(h.get(), "numberOfPoints");
  long ni = 0;
  codes_get_long(h.get(), "Ni", &ni);
  EXPECT_EQ(ni, 2147483647);  // the sentinel the pitfall is about

  const auto messages = ti::convert_grib_buffer(bytes);
  ASSERT_EQ(messages.size(), 1u);
  const auto msg = decode_message(messages[0]);
  EXPECT_EQ(msg.object(0).shape(), (std::vector<std::uint64_t>{static_cast<std::uint64_t>(points)}));
  const auto oracle = ecc_fields(bytes);
  expect_same_values(msg.object(0), oracle[0]);
  const auto& mars = at(msg.global().base[0], "mars");
  EXPECT_EQ(text_of(at(mars, "grid")), "reduced_gg");
  EXPECT_FALSE(mars.contains("area"));  // area is for regular_ll only
}

// ---- metadata (spec 05 §2.5, §6) -------------------------------------------

TEST(GribImport, MarsKeysOfTheFixtures) {
  {
    SCOPED_TRACE("2t");
    expect_ecmwf_mars(at(base0("grib/2t.grib2"), "mars"), 167, "sfc", std::nullopt);
  }
  {
    SCOPED_TRACE("q_150");
    expect_ecmwf_mars(at(base0("grib/q_150.grib2"), "mars"), 133, "pl", 150);
  }
  {
    SCOPED_TRACE("t_600");
    expect_ecmwf_mars(at(base0("grib/t_600.grib2"), "mars"), 130, "pl", 600);
  }
  {
    SCOPED_TRACE("lsm");
    expect_ecmwf_mars(at(base0("grib/lsm.grib2"), "mars"), 172, "sfc", std::nullopt);
  }
  {
    SCOPED_TRACE("lsm_bitmap");
    expect_ecmwf_mars(at(base0("grib/lsm_bitmap.grib2"), "mars"), 172, "sfc", std::nullopt);
  }
}

TEST(GribImport, SanityMarsHasNoAreaAndNoLocalKeys) {
  const auto base = base0("doctor/sanity.grib2");
  const auto& mars = at(base, "mars");
  EXPECT_EQ(map_keys(mars), (std::vector<std::string>{"date", "grid", "levtype", "param", "step", "time"}));
  EXPECT_EQ(int_of(at(mars, "date")), 20260101);
  EXPECT_EQ(int_of(at(mars, "time")), 0);
  EXPECT_EQ(int_of(at(mars, "step")), 0);
  EXPECT_EQ(text_of(at(mars, "levtype")), "sfc");
  EXPECT_EQ(int_of(at(mars, "param")), 167);
  EXPECT_EQ(text_of(at(mars, "grid")), "regular_ll");
}

TEST(GribImport, GribReproAlwaysPresent) {
  const auto base = base0("grib/2t.grib2");
  EXPECT_FALSE(base.contains("grib"));  // only with preserve_all_keys
  const auto& repro = at(base, "grib_repro");
  EXPECT_EQ(int_of(at(repro, "Ni")), 1440);
  EXPECT_EQ(int_of(at(repro, "Nj")), 721);
  EXPECT_EQ(text_of(at(repro, "packingType")), "grid_ccsds");
  EXPECT_EQ(int_of(at(repro, "bitsPerValue")), 12);
  EXPECT_EQ(text_of(at(repro, "centre")), "ecmf");
  EXPECT_EQ(text_of(at(repro, "marsClass")), "od");
  EXPECT_EQ(int_of(at(repro, "edition")), 2);
  EXPECT_EQ(int_of(at(repro, "paramId")), 167);
  EXPECT_EQ(text_of(at(repro, "shortName")), "2t");
  EXPECT_EQ(text_of(at(repro, "typeOfLevel")), "heightAboveGround");
  EXPECT_EQ(int_of(at(repro, "level")), 2);
  EXPECT_EQ(int_of(at(repro, "dataDate")), 20260404);
  EXPECT_EQ(int_of(at(repro, "bitmapPresent")), 0);
  EXPECT_EQ(text_of(at(repro, "gridType")), "regular_ll");
  EXPECT_EQ(*at(repro, "longitudeOfFirstGridPointInDegrees").as_float(), 180.0);
  EXPECT_EQ(*at(repro, "iDirectionIncrementInDegrees").as_float(), 0.25);
  EXPECT_FALSE(repro.contains("max"));  // statistics are not replayed
  for (const auto& key : map_keys(repro)) {
    const auto& v = at(repro, key.c_str());
    if (v.is_integer()) {
      EXPECT_NE(int_of(v), 2147483647) << key;
      EXPECT_NE(int_of(v), -2147483647) << key;
    }
    if (v.is_text()) {
      EXPECT_NE(text_of(v), "MISSING") << key;
      EXPECT_NE(text_of(v), "not_found") << key;
    }
  }
  EXPECT_EQ(int_of(at(at(base0("grib/lsm_bitmap.grib2"), "grib_repro"), "bitmapPresent")), 1);
}

TEST(GribImport, AllKeysNamespaces) {
  ti::grib_options opts;
  opts.preserve_all_keys = true;
  const auto base = base0("grib/2t.grib2", opts);
  const auto& grib = at(base, "grib");
  EXPECT_EQ(map_keys(grib),
            (std::vector<std::string>{"geography", "ls", "parameter", "statistics", "time", "vertical"}));
  EXPECT_EQ(map_keys(at(grib, "ls")),
            (std::vector<std::string>{"centre", "dataType", "date", "edition", "gridType", "level",
                                      "packingType", "shortName", "stepRange", "typeOfLevel"}));
  EXPECT_EQ(text_of(at(at(grib, "ls"), "shortName")), "2t");
  EXPECT_EQ(map_keys(at(grib, "vertical")),
            (std::vector<std::string>{"bottomLevel", "level", "topLevel", "typeOfLevel"}));
  EXPECT_EQ(map_keys(at(grib, "parameter")),
            (std::vector<std::string>{"centre", "name", "paramId", "shortName", "units"}));
  EXPECT_EQ(text_of(at(at(grib, "parameter"), "units")), "K");
  EXPECT_EQ(map_keys(at(grib, "statistics")),
            (std::vector<std::string>{"avg", "const", "kurt", "max", "min", "sd", "skew"}));
  EXPECT_NEAR(*at(at(grib, "statistics"), "max").as_double(), 311.03, 0.01);
  const auto geography = map_keys(at(grib, "geography"));
  for (const char* key :
       {"Ni", "Nj", "iScansNegatively", "jScansPositively", "jPointsAreConsecutive",
        "latitudeOfFirstGridPointInDegrees", "longitudeOfLastGridPointInDegrees",
        "iDirectionIncrementInDegrees", "jDirectionIncrementInDegrees", "gridType", "bitmapPresent"}) {
    EXPECT_TRUE(std::find(geography.begin(), geography.end(), key) != geography.end()) << key;
  }
  const auto time = map_keys(at(grib, "time"));
  for (const char* key : {"dataDate", "dataTime", "stepType", "stepUnits", "startStep", "endStep",
                          "stepRange", "validityDate", "validityTime"}) {
    EXPECT_TRUE(std::find(time.begin(), time.end(), key) != time.end()) << key;
  }
  // The mars map is unchanged by --all-keys.
  expect_ecmwf_mars(at(base, "mars"), 167, "sfc", std::nullopt);
}

// ---- grouping and progress (spec 05 §2.2) ----------------------------------

TEST(GribImport, MergeAllVersusOneToOne) {
  const auto input = four_real_fields();
  const auto oracle = ecc_fields(input);
  ASSERT_EQ(oracle.size(), 4u);
  const std::vector<std::int64_t> params = {167, 133, 172, 130};

  ti::grib_options merged;
  std::vector<std::pair<std::size_t, std::size_t>> progress;
  merged.conversion.on_progress = [&](std::size_t done, std::size_t total) {
    progress.emplace_back(done, total);
  };
  const auto one = ti::convert_grib_buffer(input, merged);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(progress, (std::vector<std::pair<std::size_t, std::size_t>>{{1, 4}, {2, 4}, {3, 4}, {4, 4}}));
  const auto msg = decode_message(one[0]);
  ASSERT_EQ(msg.num_objects(), 4u);
  ASSERT_EQ(msg.global().base.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    expect_same_values(msg.object(i), oracle[i]);
    // base[i] holds message i's metadata only (no factoring).
    EXPECT_EQ(int_of(at(at(msg.global().base[i], "mars"), "param")), params[i]);
    EXPECT_TRUE(msg.global().base[i].contains("grib_repro"));
  }

  ti::grib_options split;
  split.grouping = ti::grib_grouping::one_to_one;
  const auto four = ti::convert_grib_buffer(input, split);
  ASSERT_EQ(four.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    const auto m = decode_message(four[i]);
    ASSERT_EQ(m.num_objects(), 1u);
    EXPECT_EQ(int_of(at(at(m.global().base[0], "mars"), "param")), params[i]);
    expect_same_values(m.object(0), oracle[i]);
  }
}

// ---- pipeline (spec 05 §1.1) -----------------------------------------------

tensogram::message convert_with(const std::string& name, const ti::pipeline_options& p,
                                std::vector<std::byte>& storage) {
  ti::grib_options opts;
  opts.conversion.pipeline = p;
  auto messages = ti::convert_grib_file(fixture(name), opts);
  EXPECT_EQ(messages.size(), 1u);
  storage = std::move(messages[0]);
  return decode_message(storage);
}

TEST(GribImport, SimplePacking24WithSzip) {
  ti::pipeline_options p;
  p.encoding = "simple_packing";
  p.bits = 24;
  p.compression = "szip";
  std::vector<std::byte> storage;
  const auto msg = convert_with("grib/2t.grib2", p, storage);
  const auto& d = msg.object(0).descriptor();
  EXPECT_EQ(d.encoding, "simple_packing");
  EXPECT_EQ(d.compression, "szip");
  EXPECT_EQ(int_of(at(d.params, "sp_bits_per_value")), 24);
  EXPECT_EQ(int_of(at(d.params, "sp_decimal_scale_factor")), 0);
  EXPECT_TRUE(at(d.params, "sp_reference_value").is_float());
  EXPECT_TRUE(at(d.params, "sp_binary_scale_factor").is_integer());
  EXPECT_EQ(int_of(at(d.params, "szip_rsi")), 128);
  EXPECT_EQ(int_of(at(d.params, "szip_block_size")), 16);
  EXPECT_EQ(int_of(at(d.params, "szip_flags")), 8);
  const auto oracle = ecc_fields(read_bytes(fixture("grib/2t.grib2")));
  const auto got = object_values(msg.object(0));
  ASSERT_EQ(got.size(), oracle[0].values.size());
  // 24-bit packing of a ~98 K range: step 2^(binary scale) ≤ 98/2^24·2.
  const double step = std::ldexp(1.0, static_cast<int>(int_of(at(d.params, "sp_binary_scale_factor"))));
  double max_err = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    max_err = std::max(max_err, std::fabs(got[i] - oracle[0].values[i]));
  EXPECT_LE(max_err, step);
  EXPECT_LT(max_err, 1e-5);
}

TEST(GribImport, ShuffleZstdAndOtherCodecs) {
  const auto oracle = ecc_fields(read_bytes(fixture("grib/q_150.grib2")));
  {
    ti::pipeline_options p;
    p.filter = "shuffle";
    p.compression = "zstd";
    std::vector<std::byte> storage;
    const auto msg = convert_with("grib/q_150.grib2", p, storage);
    const auto& d = msg.object(0).descriptor();
    EXPECT_EQ(d.encoding, "none");
    EXPECT_EQ(d.filter, "shuffle");
    EXPECT_EQ(int_of(at(d.params, "shuffle_element_size")), 8);  // float64 width
    EXPECT_EQ(d.compression, "zstd");
    EXPECT_EQ(int_of(at(d.params, "zstd_level")), 3);
    expect_same_values(msg.object(0), oracle[0]);  // lossless
  }
  {
    ti::pipeline_options p;
    p.compression = "zstd";
    p.compression_level = 9;
    std::vector<std::byte> storage;
    const auto msg = convert_with("grib/q_150.grib2", p, storage);
    EXPECT_EQ(int_of(at(msg.object(0).descriptor().params, "zstd_level")), 9);
    expect_same_values(msg.object(0), oracle[0]);
  }
  {
    ti::pipeline_options p;
    p.encoding = "simple_packing";  // bits default 16
    p.filter = "shuffle";
    p.compression = "blosc2";
    std::vector<std::byte> storage;
    const auto msg = convert_with("grib/q_150.grib2", p, storage);
    const auto& d = msg.object(0).descriptor();
    EXPECT_EQ(int_of(at(d.params, "sp_bits_per_value")), 16);
    EXPECT_EQ(int_of(at(d.params, "shuffle_element_size")), 2);  // ceil(16/8)
    EXPECT_EQ(int_of(at(d.params, "blosc2_clevel")), 5);
    EXPECT_EQ(text_of(at(d.params, "blosc2_codec")), "lz4");
    const auto got = object_values(msg.object(0));
    const double step = std::ldexp(1.0, static_cast<int>(int_of(at(d.params, "sp_binary_scale_factor"))));
    for (std::size_t i = 0; i < got.size(); i += 997) EXPECT_NEAR(got[i], oracle[0].values[i], step);
  }
  {
    ti::pipeline_options p;
    p.compression = "lz4";
    std::vector<std::byte> storage;
    const auto msg = convert_with("grib/q_150.grib2", p, storage);
    EXPECT_EQ(msg.object(0).descriptor().compression, "lz4");
    expect_same_values(msg.object(0), oracle[0]);
  }
}

TEST(GribImport, LosslessCodecsKeepTheNaNMask) {
  ti::pipeline_options p;
  p.filter = "shuffle";
  p.compression = "zstd";
  std::vector<std::byte> storage;
  const auto msg = convert_with("grib/lsm_bitmap.grib2", p, storage);
  const auto oracle = ecc_fields(read_bytes(fixture("grib/lsm_bitmap.grib2")));
  expect_same_values(msg.object(0), oracle[0]);
}

TEST(GribImport, SimplePackingOnBitmapDataFails) {
  ti::grib_options opts;
  opts.conversion.pipeline.encoding = "simple_packing";
  try {
    (void)ti::convert_grib_file(fixture("grib/lsm_bitmap.grib2"), opts);
    FAIL() << "expected conversion_error";
  } catch (const ti::conversion_error& e) {
    EXPECT_EQ(e.kind(), ti::conversion_failure::invalid_data);
    const std::string text = e.what();
    EXPECT_EQ(text.rfind("invalid GRIB data: simple_packing failed for GRIB message 1: ", 0), 0u) << text;
    const std::string tail =
        ". Pre-process the data or choose a different encoding (e.g. encoding=\"none\").";
    ASSERT_GE(text.size(), tail.size());
    EXPECT_EQ(text.substr(text.size() - tail.size()), tail) << text;
  }
}

TEST(GribImport, SzipOnRawFloat64IsAnEncodeError) {
  ti::grib_options opts;
  opts.conversion.pipeline.compression = "szip";
  try {
    (void)ti::convert_grib_file(fixture("doctor/sanity.grib2"), opts);
    FAIL() << "expected conversion_error";
  } catch (const ti::conversion_error& e) {
    EXPECT_EQ(e.kind(), ti::conversion_failure::encode);
    EXPECT_EQ(std::string(e.what()).rfind("encode error: ", 0), 0u) << e.what();
  }
}

TEST(GribImport, UnknownCodecIsAUsageError) {
  ti::grib_options opts;
  opts.conversion.pipeline.compression = "gzip";
  try {
    (void)ti::convert_grib_file(fixture("doctor/sanity.grib2"), opts);
    FAIL() << "expected conversion_error";
  } catch (const ti::conversion_error& e) {
    EXPECT_EQ(e.kind(), ti::conversion_failure::usage);
  }
}

// ---- errors (spec 05 §2.1, §2.6) -------------------------------------------

ti::conversion_failure failure_of_buffer(const std::vector<std::byte>& bytes, std::string* text = nullptr) {
  try {
    (void)ti::convert_grib_buffer(bytes);
  } catch (const ti::conversion_error& e) {
    if (text != nullptr) *text = e.what();
    return e.kind();
  }
  ADD_FAILURE() << "expected conversion_error";
  return ti::conversion_failure::usage;
}

TEST(GribImport, NoMessages) {
  std::string text;
  EXPECT_EQ(failure_of_buffer({}, &text), ti::conversion_failure::no_data);
  EXPECT_EQ(text, "no GRIB messages found in input");
  std::vector<std::byte> junk(4096, std::byte{0x42});
  EXPECT_EQ(failure_of_buffer(junk, &text), ti::conversion_failure::no_data);
  EXPECT_EQ(text, "no GRIB messages found in input");

  // A file without GRIB content: same error through the file entry point.
  const auto path = std::filesystem::temp_directory_path() /
                    ("tensogram_grib_test_empty_" +
                     std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + ".grib2");
  { std::ofstream(path, std::ios::binary) << "not a grib file"; }
  try {
    (void)ti::convert_grib_file(path);
    ADD_FAILURE() << "expected conversion_error";
  } catch (const ti::conversion_error& e) {
    EXPECT_EQ(e.kind(), ti::conversion_failure::no_data);
    EXPECT_STREQ(e.what(), "no GRIB messages found in input");
  }
  std::filesystem::remove(path);
}

TEST(GribImport, MissingFileIsAnIoError) {
  const std::string path = fixture("grib/does_not_exist.grib2");
  try {
    (void)ti::convert_grib_file(path);
    FAIL() << "expected io_error";
  } catch (const tensogram::io_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)ti::convert_grib_file(fixture("grib")), tensogram::io_error);  // a directory
}

TEST(GribImport, TruncatedAndCorruptedGribAreErrors) {
  const auto good = read_bytes(fixture("grib/2t.grib2"));
  std::string text;

  const std::vector<std::byte> truncated(good.begin(), good.begin() + 1000);
  EXPECT_EQ(failure_of_buffer(truncated, &text), ti::conversion_failure::library);
  EXPECT_EQ(text.rfind("ecCodes error: ", 0), 0u) << text;

  const std::vector<std::byte> no_end_marker(good.begin(), good.end() - 4);
  EXPECT_EQ(failure_of_buffer(no_end_marker, &text), ti::conversion_failure::library);
  EXPECT_EQ(text.rfind("ecCodes error: ", 0), 0u) << text;

  auto overwritten_marker = good;
  std::memcpy(overwritten_marker.data() + overwritten_marker.size() - 4, "XXXX", 4);
  EXPECT_EQ(failure_of_buffer(overwritten_marker, &text), ti::conversion_failure::library);

  // Section 7 (the data section) starts at offset 191 in this file; a
  // corrupted length makes the data run past the message end.
  auto bad_section7 = good;
  ASSERT_EQ(std::to_integer<int>(bad_section7[191 + 4]), 7);
  bad_section7[191] = std::byte{0x00};
  bad_section7[192] = std::byte{0xFF};
  EXPECT_NE(failure_of_buffer(bad_section7, &text), ti::conversion_failure::no_data);
  EXPECT_FALSE(text.empty());

  // A good message followed by a truncated one fails as a whole.
  auto good_then_truncated = good;
  good_then_truncated.insert(good_then_truncated.end(), truncated.begin(), truncated.end());
  EXPECT_EQ(failure_of_buffer(good_then_truncated, &text), ti::conversion_failure::library);
}

TEST(GribImport, InconsistentIeeeFixtureIsRejected) {
  try {
    (void)ti::convert_grib_file(fixture("grib/2t_ieee.grib2"));
    FAIL() << "expected conversion_error";
  } catch (const ti::conversion_error& e) {
    EXPECT_EQ(e.kind(), ti::conversion_failure::invalid_data);
    const std::string text = e.what();
    EXPECT_EQ(text.rfind("invalid GRIB data: GRIB message 1: ", 0), 0u) << text;
    EXPECT_NE(text.find("165099"), std::string::npos) << text;
    EXPECT_NE(text.find("1038240"), std::string::npos) << text;
  }
}

// A GRIB2 message built from ecCodes' regular_ll sample with some keys
// changed and values 0..n-1, for the area rule of spec 05 §2.5.
struct key_setting {
  const char* key;
  double value;
  bool integer;
};

std::vector<std::byte> sample_grib(const std::vector<key_setting>& settings) {
  handle_ptr h(codes_grib_handle_new_from_samples(nullptr, "regular_ll_sfc_grib2"));
  EXPECT_TRUE(h);
  for (const auto& s : settings) {
    const int err = s.integer ? codes_set_long(h.get(), s.key, static_cast<long>(s.value))
                              : codes_set_double(h.get(), s.key, s.value);
    EXPECT_EQ(err, CODES_SUCCESS) << s.key;
  }
  const auto n = static_cast<std::size_t>(ecc_long(h.get(), "Ni") * ecc_long(h.get(), "Nj"));
  std::vector<double> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<double>(i % 100);
  EXPECT_EQ(codes_set_double_array(h.get(), "values", values.data(), values.size()), CODES_SUCCESS);
  return ecc_message_bytes(h.get());
}

cbor::value sample_mars(const std::vector<key_setting>& settings) {
  const auto messages = ti::convert_grib_buffer(sample_grib(settings));
  EXPECT_EQ(messages.size(), 1u);
  return *decode_message(messages[0]).global().base[0].find("mars");
}

TEST(GribImport, AreaRuleSteps) {
  // The sample as is: 60°N..0°, 0°E..30°E, 2° steps, scan flags 0.
  expect_area(sample_mars({}), {60.0, 0.0, 0.0, 30.0});
  // Step 1: any scan flag other than 0 omits the area.
  EXPECT_FALSE(sample_mars({{"iScansNegatively", 1, true}}).contains("area"));
  EXPECT_FALSE(sample_mars({{"jScansPositively", 1, true}}).contains("area"));
  // Step 3: W > E on a regional grid is refused...
  EXPECT_FALSE(sample_mars({{"longitudeOfFirstGridPointInDegrees", 350, false},
                            {"longitudeOfLastGridPointInDegrees", 30, false},
                            {"Ni", 21, true}})
                   .contains("area"));
  // ... but a dateline-first global grid is shifted to W - 360.
  const std::vector<key_setting> global = {{"Ni", 360, true},
                                           {"Nj", 181, true},
                                           {"iDirectionIncrementInDegrees", 1, false},
                                           {"jDirectionIncrementInDegrees", 1, false},
                                           {"latitudeOfFirstGridPointInDegrees", 90, false},
                                           {"latitudeOfLastGridPointInDegrees", -90, false},
                                           {"longitudeOfFirstGridPointInDegrees", 180, false},
                                           {"longitudeOfLastGridPointInDegrees", 179, false}};
  expect_area(sample_mars(global), {90.0, -180.0, -90.0, 179.0});
  auto greenwich_first = global;
  greenwich_first[6].value = 0;
  greenwich_first[7].value = 359;
  expect_area(sample_mars(greenwich_first), {90.0, 0.0, -90.0, 359.0});
  // Step 4: N <= S (latitudes running south to north with jScansPositively 0).
  EXPECT_FALSE(sample_mars({{"latitudeOfFirstGridPointInDegrees", 0, false},
                            {"latitudeOfLastGridPointInDegrees", 60, false}})
                   .contains("area"));
}

}  // namespace

// GRIB exporter (spec 05 §3): Tensogram → GRIB round trips checked against
// ecCodes' reading of the fixtures, merged messages, NaN as bitmap-missing,
// and objects it must refuse with a typed error.
#include <eccodes.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "grib_support.hpp"

namespace {

using namespace tgtest::grib;

// ---- Tensogram → GRIB (spec 05 §3) -----------------------------------------

struct round_trip_report {
  double max_error = 0;
  std::size_t compared = 0;
};

// GRIB → tgm → GRIB, then compares the output's ecCodes values and keys with
// the input's.
round_trip_report round_trip(const std::string& name, double tolerance) {
  SCOPED_TRACE(name);
  const auto input = read_bytes(fixture(name));
  ti::grib_options opts;
  opts.grouping = ti::grib_grouping::one_to_one;
  const auto tgm = ti::convert_grib_buffer(input, opts);
  std::vector<std::byte> output;
  for (const auto& m : tgm) {
    const auto g = ti::to_grib(m);
    output.insert(output.end(), g.begin(), g.end());
  }
  auto in_handles = ecc_handles(input);
  auto out_handles = ecc_handles(output);
  round_trip_report report;
  EXPECT_EQ(out_handles.size(), in_handles.size());
  if (out_handles.size() != in_handles.size()) return report;
  for (std::size_t k = 0; k < in_handles.size(); ++k) {
    codes_handle* a = in_handles[k].get();
    codes_handle* b = out_handles[k].get();
    for (const char* key : {"shortName", "packingType", "typeOfLevel", "centre", "gridType",
                            "typeOfProcessedData", "stepType", "units", "dataType", "name"}) {
      EXPECT_EQ(ecc_string(b, key), ecc_string(a, key)) << key;
    }
    for (const char* key : {"paramId", "Ni", "Nj", "dataDate", "dataTime", "level", "bitsPerValue", "edition",
                            "bitmapPresent", "iScansNegatively", "jScansPositively", "step"}) {
      EXPECT_EQ(ecc_long(b, key), ecc_long(a, key)) << key;
    }
    for (const char* key : {"latitudeOfFirstGridPointInDegrees", "longitudeOfFirstGridPointInDegrees",
                            "latitudeOfLastGridPointInDegrees", "longitudeOfLastGridPointInDegrees"}) {
      double x = 0, y = 0;
      codes_get_double(a, key, &x);
      codes_get_double(b, key, &y);
      EXPECT_EQ(y, x) << key;
    }
    const auto fa = ecc_read(a);
    const auto fb = ecc_read(b);
    EXPECT_EQ(fb.values.size(), fa.values.size());
    if (fb.values.size() != fa.values.size()) continue;
    EXPECT_EQ(fb.missing, fa.missing);  // bitmap points are still missing
    EXPECT_EQ(fb.missing_count, fa.missing_count);
    for (std::size_t i = 0; i < fa.values.size(); ++i) {
      if (fa.missing[i]) continue;
      report.max_error = std::max(report.max_error, std::fabs(fb.values[i] - fa.values[i]));
      ++report.compared;
    }
  }
  EXPECT_LE(report.max_error, tolerance);
  return report;
}

TEST(GribExport, RoundTripCcsds) {
  const auto r = round_trip("grib/2t.grib2", 1e-2);
  EXPECT_EQ(r.compared, 1038240u);
  std::printf("2t.grib2 round trip: %zu values, max |error| %.3g\n", r.compared, r.max_error);
}

TEST(GribExport, RoundTripSimplePacking) {
  const auto r = round_trip("grib/2t_simple.grib2", 1e-2);
  std::printf("2t_simple.grib2 round trip: %zu values, max |error| %.3g\n", r.compared, r.max_error);
}

TEST(GribExport, RoundTripBitmapStaysMissing) {
  const auto r = round_trip("grib/lsm_bitmap.grib2", 1e-2);
  EXPECT_EQ(r.compared, 1038240u - 679322u);
  std::printf("lsm_bitmap.grib2 round trip: %zu present values, max |error| %.3g\n", r.compared, r.max_error);
}

TEST(GribExport, RoundTripPressureLevelAndSanity) {
  const auto q = round_trip("grib/q_150.grib2", 1e-6);  // kg/kg values, 12 bits
  std::printf("q_150.grib2 round trip: %zu values, max |error| %.3g\n", q.compared, q.max_error);
  const auto t = round_trip("grib/t_600.grib2", 1e-2);
  EXPECT_EQ(t.compared, 1038240u);
  const auto s = round_trip("doctor/sanity.grib2", 1e-2);
  EXPECT_EQ(s.compared, 16u);
}

TEST(GribExport, MergedMessageGivesConcatenatedGrib) {
  const auto input = four_real_fields();
  const auto tgm = ti::convert_grib_buffer(input);
  ASSERT_EQ(tgm.size(), 1u);
  const auto output = ti::to_grib(tgm[0]);
  auto handles = ecc_handles(output);
  ASSERT_EQ(handles.size(), 4u);
  const std::vector<long> params = {167, 133, 172, 130};
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(ecc_long(handles[i].get(), "paramId"), params[i]);
}

TEST(GribExport, NaNBecomesBitmapMissing) {
  // A converted sanity field with two values replaced by NaN.
  const auto tgm = ti::convert_grib_file(fixture("doctor/sanity.grib2"));
  auto msg = decode_message(tgm[0]);
  auto values = object_values(msg.object(0));
  values[3] = std::nan("");
  values[10] = std::nan("");
  auto d = msg.object(0).descriptor();
  d.masks.reset();
  tensogram::global_metadata meta;
  meta.base.push_back(msg.global().base[0]);
  meta.base[0].erase("_reserved_");
  tensogram::encode_options eo;
  eo.allow_nan = true;
  std::vector<std::byte> raw(values.size() * sizeof(double));
  std::memcpy(raw.data(), values.data(), raw.size());
  const tensogram::object_input obj{d, raw};
  const auto edited = tensogram::encode(meta, std::span(&obj, 1), eo);

  const auto grib = ti::to_grib(edited);
  auto handles = ecc_handles(grib);
  ASSERT_EQ(handles.size(), 1u);
  const auto f = ecc_read(handles[0].get());
  EXPECT_EQ(f.bitmap_present, 1);
  EXPECT_EQ(f.missing_count, 2u);
  EXPECT_TRUE(f.missing[3]);
  EXPECT_TRUE(f.missing[10]);
  EXPECT_NEAR(f.values[4], values[4], 1e-2);

  // And back again: NaN at the same two points.
  const auto again = ti::convert_grib_buffer(grib);
  const auto back = object_values(decode_message(again[0]).object(0));
  for (std::size_t i = 0; i < back.size(); ++i) EXPECT_EQ(std::isnan(back[i]), i == 3 || i == 10) << i;
}

// One message of `values` (shape `shape`, dtype of T) under `base0` as its
// metadata, for the to_grib error cases.
template <typename T>
std::vector<std::byte> message_with(cbor::value base0, tensogram::dtype t, std::vector<std::uint64_t> shape,
                                    const std::vector<T>& values) {
  tensogram::global_metadata meta;
  meta.base.push_back(std::move(base0));
  const tensogram::object_input obj{tensogram::data_object_descriptor::contiguous(t, std::move(shape)),
                                    std::as_bytes(std::span(values))};
  return tensogram::encode(meta, std::span(&obj, 1));
}

// base[0] of the sanity field as convert_grib writes it, without _reserved_.
cbor::value sanity_base() {
  const auto tgm = ti::convert_grib_file(fixture("doctor/sanity.grib2"));
  cbor::value base = decode_message(tgm[0]).global().base[0];
  base.erase("_reserved_");
  return base;
}

// The conversion_error to_grib throws for `bytes` (a failure if none).
ti::conversion_error to_grib_failure(const std::vector<std::byte>& bytes) {
  try {
    (void)ti::to_grib(bytes);
  } catch (const ti::conversion_error& e) {
    return e;
  }
  ADD_FAILURE() << "expected conversion_error";
  return ti::conversion_error(ti::conversion_failure::usage, "(none)");
}

TEST(GribExport, ObjectWithoutGribReproIsRejected) {
  const auto bytes =
      message_with(cbor::value::make_map({{"mars", cbor::value::make_map({{"param", cbor::value(167)}})}}),
                   tensogram::dtype::float64, {4, 4}, std::vector<double>(16, 1.0));
  EXPECT_STREQ(to_grib_failure(bytes).what(),
               "object 0 has no 'grib_repro' key-set; was it produced by convert-grib?");
}

TEST(GribExport, NonFloat64ObjectIsRejected) {
  const auto bytes =
      message_with(sanity_base(), tensogram::dtype::float32, {4, 4}, std::vector<float>(16, 1.0f));
  EXPECT_STREQ(to_grib_failure(bytes).what(), "to-grib expects float64 objects, got float32");
}

// An object whose element count does not fit the grid its grib_repro
// describes (Ni = Nj = 4 but 20 values) is refused, not written.
TEST(GribExport, ValueCountMismatchIsAnError) {
  const auto bytes =
      message_with(sanity_base(), tensogram::dtype::float64, {4, 5}, std::vector<double>(20, 280.0));
  const ti::conversion_error e = to_grib_failure(bytes);
  EXPECT_EQ(e.kind(), ti::conversion_failure::invalid_data);
  EXPECT_STREQ(
      e.what(),
      "invalid GRIB data: object 0 has 20 values but the grid rebuilt from its grib_repro has Nj x Ni = "
      "4 x 4 points");
}

// A reduced Gaussian field cannot be rebuilt on the regular_ll template
// (its `pl` array is not replayed): a clear error, never a crash.
TEST(GribExport, ReducedGridGivesAnErrorNotACrash) {
  handle_ptr h(codes_grib_handle_new_from_samples(nullptr, "reduced_gg_pl_32_grib2"));
  ASSERT_TRUE(h);
  const auto bytes = ecc_message_bytes(h.get());
  ASSERT_FALSE(bytes.empty());
  const auto tgm = ti::convert_grib_buffer(bytes);
  try {
    (void)ti::to_grib(tgm[0]);
    FAIL() << "expected conversion_error";
  } catch (const ti::conversion_error& e) {
    EXPECT_EQ(e.kind(), ti::conversion_failure::invalid_data);
    EXPECT_STREQ(e.what(),
                 "invalid GRIB data: object 0: its grid (gridType reduced_gg) has no Ni x Nj points; to-grib "
                 "rebuilds regular grids only");
  }
}

}  // namespace

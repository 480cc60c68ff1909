// The typed codec boundary: descriptor parameters read once into a
// `codecs::pipeline_spec` (spec 03 §2), the stage tables' names and dtype
// rules (spec 02 §17, spec 03 §3.2), and what `pipeline::decode` hands back
// for an object stored as is (a view of the payload, spec 02 §14).
#include <gtest/gtest.h>

#include <variant>
#include <vector>

#include "codec_support.hpp"

namespace {

using namespace codectest;
namespace cx = tg::codecs;

TEST(PipelineParams, DescriptorKeysBecomeTypedParameters) {
  tg::data_object_descriptor d = f64_desc(64);
  d.encoding = "simple_packing";
  d.filter = "shuffle";
  d.compression = "szip";
  d.params.set("sp_bits_per_value", cbor::value(16));
  d.params.set("sp_reference_value", cbor::value(2));  // "num": an integer is a number
  d.params.set("sp_binary_scale_factor", cbor::value(-3));
  d.params.set("sp_decimal_scale_factor", cbor::value(1));
  d.params.set("shuffle_element_size", cbor::value(2));
  d.params.set("szip_rsi", cbor::value(32));
  d.params.set("szip_block_size", cbor::value(16));
  d.params.set("szip_flags", cbor::value(8));
  d.params.set("szip_block_offsets", cbor::value(cbor::array{cbor::value(0), cbor::value(77)}));
  const cx::pipeline_spec s = tg::read_pipeline_spec(d);
  EXPECT_EQ(s.element_type, tg::dtype::float64);
  const auto& sp = std::get<tg::simple_packing_params>(s.encoding);
  EXPECT_EQ(sp.bits_per_value, 16U);
  EXPECT_EQ(sp.reference_value, 2.0);
  EXPECT_EQ(sp.binary_scale_factor, -3);
  EXPECT_EQ(sp.decimal_scale_factor, 1);
  EXPECT_EQ(std::get<cx::shuffle_params>(s.filter).element_size, 2U);
  const auto& sz = std::get<cx::szip_stage_params>(s.compression);
  EXPECT_EQ(sz.rsi, 32U);
  EXPECT_EQ(sz.block_size, 16U);
  EXPECT_EQ(sz.flags, 8U);
  EXPECT_EQ(sz.block_offsets, (std::vector<std::uint64_t>{0, 77}));
}

TEST(PipelineParams, DefaultsApplyOnlyWhenAKeyIsAbsent) {
  tg::data_object_descriptor d = f64_desc(4);
  d.compression = "zstd";
  EXPECT_EQ(std::get<cx::zstd_params>(tg::read_pipeline_spec(d).compression).level, 3);
  d.params.set("zstd_level", cbor::value(-5));
  EXPECT_EQ(std::get<cx::zstd_params>(tg::read_pipeline_spec(d).compression).level, -5);
  d.params.set("zstd_level", cbor::value(3.0));
  expect_error<tg::metadata_error>([&] { (void)tg::read_pipeline_spec(d); },
                                   "expected integer for zstd_level, got float");

  tg::data_object_descriptor b = f64_desc(4);
  b.compression = "blosc2";
  const auto defaults = std::get<cx::blosc2_stage_params>(tg::read_pipeline_spec(b).compression);
  EXPECT_EQ(defaults.codec, cx::blosc2_codec::lz4);
  EXPECT_EQ(defaults.clevel, 5);
  b.params.set("blosc2_codec", cbor::value("zstd"));
  b.params.set("blosc2_clevel", cbor::value(9));
  const auto given = std::get<cx::blosc2_stage_params>(tg::read_pipeline_spec(b).compression);
  EXPECT_EQ(given.codec, cx::blosc2_codec::zstd);
  EXPECT_EQ(given.clevel, 9);
}

TEST(PipelineParams, ModesSelectTheirKeys) {
  tg::data_object_descriptor z = f64_desc(4);
  z.compression = "zfp";
  expect_error<tg::metadata_error>([&] { (void)tg::read_pipeline_spec(z); },
                                   "missing required parameter: zfp_mode");
  z.params.set("zfp_mode", cbor::value("fixed_precision"));
  expect_error<tg::metadata_error>([&] { (void)tg::read_pipeline_spec(z); },
                                   "missing required parameter: zfp_precision");
  z.params.set("zfp_precision", cbor::value(20));
  const auto zp = std::get<cx::zfp_params>(tg::read_pipeline_spec(z).compression);
  EXPECT_EQ(zp.mode, cx::zfp_mode::fixed_precision);
  EXPECT_EQ(zp.precision, 20U);
  z.params.set("zfp_mode", cbor::value("fixed_size"));
  expect_error<tg::encoding_error>([&] { (void)tg::read_pipeline_spec(z); }, "unknown zfp_mode: fixed_size");

  tg::data_object_descriptor s = f64_desc(4);
  s.compression = "sz3";
  s.params.set("sz3_error_bound_mode", cbor::value("psnr"));
  s.params.set("sz3_error_bound", cbor::value(60));
  const auto sp = std::get<cx::sz3_params>(tg::read_pipeline_spec(s).compression);
  EXPECT_EQ(sp.mode, cx::sz3_error_bound_mode::psnr);
  EXPECT_EQ(sp.bound, 60.0);
}

TEST(PipelineParams, StageNamesAndTheDtypesTheyTake) {
  for (const char* name : {"none", "szip", "zstd", "lz4", "blosc2", "zfp", "sz3", "rle", "roaring"}) {
    EXPECT_TRUE(cx::is_known_compression(name)) << name;
  }
  EXPECT_FALSE(cx::is_known_compression("snappy"));
  EXPECT_TRUE(cx::is_known_encoding("simple_packing"));
  EXPECT_FALSE(cx::is_known_encoding("grib_ccsds"));
  EXPECT_TRUE(cx::is_known_filter("shuffle"));
  EXPECT_FALSE(cx::is_known_filter("delta"));
  expect_error<tg::encoding_error>([] { (void)cx::select_encoding("grib", tg::dtype::float64); },
                                   "unknown encoding: grib");
  expect_error<tg::encoding_error>([] { (void)cx::select_filter("delta"); }, "unknown filter: delta");
  expect_error<tg::encoding_error>([] { (void)cx::select_compression("snappy", tg::dtype::uint8); },
                                   "unknown compression: snappy");
  expect_error<tg::encoding_error>([] { (void)cx::select_encoding("simple_packing", tg::dtype::float32); },
                                   "simple_packing only supports float64 dtype; got float32");
  expect_error<tg::encoding_error>([] { (void)cx::select_compression("roaring", tg::dtype::uint8); },
                                   "compression \"roaring\" only supports dtype=bitmask, got dtype=uint8");
  EXPECT_TRUE(std::holds_alternative<cx::rle_params>(cx::select_compression("rle", tg::dtype::bitmask)));
}

TEST(PipelineParams, WriteBackGoesThroughTheSamePlace) {
  tg::data_object_descriptor d = f64_desc(3);
  d.encoding = "simple_packing";
  d.params.set("sp_bits_per_value", cbor::value(8));
  const bytes raw = f64_bytes({1.0, 2.0, 3.0}, tg::native_byte_order());
  EXPECT_TRUE(tg::resolve_simple_packing_params(d, raw));
  const auto sp = std::get<tg::simple_packing_params>(tg::read_pipeline_spec(d).encoding);
  EXPECT_EQ(sp.bits_per_value, 8U);
  EXPECT_EQ(sp.reference_value, 1.0);
  tg::write_szip_block_offsets(d, std::vector<std::uint64_t>{0, 12});
  ASSERT_NE(d.params.find("szip_block_offsets"), nullptr);
  EXPECT_EQ(d.params.find("szip_block_offsets")->as_array()->size(), 2U);
}

TEST(PipelineDecode, AnObjectStoredAsIsComesBackAsItsPayload) {
  const bytes stored = f64_bytes({1.0, -2.0}, tg::byte_order::little);
  const tg::buffer payload = tg::buffer::borrowed(stored);
  const cx::pipeline pl = tg::build_pipeline(f64_desc(2, tg::byte_order::little));
  ASSERT_TRUE(pl.is_identity());
  const tg::buffer same = pl.decode(payload, 2, tg::byte_order::little, tg::byte_order::little);
  EXPECT_EQ(same.data(), stored.data());  // a view, no copy
  cx::decode_settings writable;
  writable.writable = true;
  const tg::buffer copy = pl.decode(payload, 2, tg::byte_order::little, tg::byte_order::little, writable);
  EXPECT_NE(copy.data(), stored.data());
  EXPECT_EQ(to_bytes(copy), stored);
  const tg::buffer swapped = pl.decode(payload, 2, tg::byte_order::little, tg::byte_order::big);
  EXPECT_EQ(to_bytes(swapped), f64_bytes({1.0, -2.0}, tg::byte_order::big));
}

TEST(PipelineDecode, SizeGateTextsNameWhatTheCallerKnows) {
  const bytes stored(12);
  const cx::pipeline pl = tg::build_pipeline(
      tg::data_object_descriptor::contiguous(tg::dtype::float32, {2}, tg::byte_order::little));
  expect_error<tg::encoding_error>(
      [&] {
        (void)pl.decode(tg::buffer::borrowed(stored), 2, tg::byte_order::little, tg::byte_order::little);
      },
      "descriptor claims 8 decoded byte(s) but frame payload is 12 byte(s) (encoding none, dtype width 4)");
  cx::decode_settings located;
  located.payload_offset = 40;
  expect_error<tg::encoding_error>(
      [&] {
        (void)pl.decode(tg::buffer::borrowed(stored), 2, tg::byte_order::little, tg::byte_order::little,
                        located);
      },
      "descriptor claims 8 decoded byte(s) but frame payload is 12 byte(s) (payload at offset 40)");
}

}  // namespace

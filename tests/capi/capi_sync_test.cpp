// The C ABI's synchronous core: errors and byte buffers, encode, decode,
// message accessors and metadata (spec 04 Part C, spec 07 C2.3–C2.4).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "capi_test_support.hpp"
#include "tensogram/cbor/value.hpp"
#include "tensogram/message/encode.hpp"
#include "tensogram/message/metadata.hpp"

namespace {

using namespace capi_test;

TEST(CapiErrors, ErrorStringsAndCodes) {
  EXPECT_STREQ(tgm_error_string(TGM_ERROR_OK), "ok");
  EXPECT_STREQ(tgm_error_string(TGM_ERROR_FRAMING), "framing error");
  EXPECT_STREQ(tgm_error_string(TGM_ERROR_IO), "I/O error");
  EXPECT_STREQ(tgm_error_string(TGM_ERROR_END_OF_ITER), "end of iteration");
  EXPECT_STREQ(tgm_error_string(TGM_ERROR_TIMEOUT), "async task timed out");
  EXPECT_STREQ(tgm_error_string(TGM_ERROR_CANCELLED), "async task cancelled");
  // Values past the last code. (The C test also passes 99, which a C caller
  // may do; in C++ only values within the enumeration's range are valid.)
  EXPECT_STREQ(tgm_error_string(static_cast<tgm_error>(14)), "unknown error");
  EXPECT_STREQ(tgm_error_string(static_cast<tgm_error>(15)), "unknown error");
  EXPECT_EQ(TGM_WIRE_VERSION, 3);
  EXPECT_EQ(TGM_ERROR_MISSING_HASH, 11);
  EXPECT_EQ(TGM_VALUE_TYPE_MAP, 7);
  EXPECT_EQ(TGM_OBJECT_COUNT_STATUS_FINISHED, 3);
}

TEST(CapiErrors, LastErrorIsPerThreadAndSticky) {
  std::string other;
  std::thread([&] {
    EXPECT_EQ(tgm_last_error(), nullptr);  // nothing failed on this thread yet
    tgm_message_t* m = nullptr;
    EXPECT_EQ(tgm_decode(nullptr, 0, 1, 0, 0, &m), TGM_ERROR_INVALID_ARG);
    other = last_error();
  }).join();
  EXPECT_NE(other.find("tgm_decode: null argument 'buf'"), std::string::npos) << other;
  tgm_metadata_t* meta = nullptr;
  EXPECT_EQ(tgm_decode_metadata(nullptr, 1, &meta), TGM_ERROR_INVALID_ARG);
  const std::string failure = last_error();
  // Sticky: a success leaves the previous failure's text (the reference's rule).
  const std::vector<uint8_t> msg = encode_two();
  ASSERT_TGM_OK(tgm_decode_metadata(msg.data(), msg.size(), &meta));
  tgm_metadata_free(meta);
  EXPECT_EQ(last_error(), failure);
}

TEST(CapiErrors, BytesFreeAcceptsNullAndRefusesForeignOrFreedBuffers) {
  tgm_bytes_free(tgm_bytes_t{nullptr, 0});
  tgm_multi_bytes_free(nullptr, 0);
  const std::vector<uint8_t> msg = encode_two();
  tgm_bytes_t h{nullptr, 0};
  ASSERT_TGM_OK(tgm_compute_hash(msg.data(), msg.size(), "xxh3", &h));
  tgm_bytes_free(h);
  tgm_bytes_free(h);  // second free: refused
  EXPECT_NE(last_error().find("tgm_bytes_free"), std::string::npos);
  std::vector<uint8_t> mine(64, 1);
  tgm_bytes_free(tgm_bytes_t{mine.data() + 32, 16});  // not the library's
  EXPECT_NE(last_error().find("not filled by the library"), std::string::npos);
}

TEST(CapiEncode, EncodeDecodeRoundTripWithEveryAccessor) {
  const std::vector<uint8_t> msg = encode_two();
  tgm_message_t* raw = nullptr;
  ASSERT_TGM_OK(tgm_decode(msg.data(), msg.size(), 1, 0, 1, &raw));
  const message_ptr m(raw);
  EXPECT_EQ(tgm_message_version(m.get()), 3U);
  EXPECT_EQ(tgm_message_num_objects(m.get()), 2U);
  EXPECT_EQ(tgm_message_num_decoded(m.get()), 2U);
  EXPECT_EQ(tgm_object_ndim(m.get(), 0), 2U);
  EXPECT_EQ(tgm_object_shape(m.get(), 0)[1], 3U);
  EXPECT_EQ(tgm_object_strides(m.get(), 0)[0], 3U);
  EXPECT_STREQ(tgm_object_dtype(m.get(), 0), "float32");
  EXPECT_STREQ(tgm_object_type(m.get(), 0), "ntensor");
  EXPECT_STREQ(tgm_object_byte_order(m.get(), 0),
               std::endian::native == std::endian::little ? "little" : "big");
  EXPECT_STREQ(tgm_payload_encoding(m.get(), 1), "none");
  EXPECT_STREQ(tgm_object_filter(m.get(), 1), "none");
  EXPECT_STREQ(tgm_object_compression(m.get(), 1), "zstd");
  // The extension: the whole descriptor, codec parameters included.
  const std::string desc = tgm_object_descriptor_json(m.get(), 1);
  EXPECT_NE(desc.find("\"compression\":\"zstd\""), std::string::npos) << desc;
  EXPECT_NE(desc.find("\"zstd_level\""), std::string::npos) << desc;
  EXPECT_NE(desc.find("\"dtype\":\"int16\""), std::string::npos) << desc;
  EXPECT_EQ(tgm_object_descriptor_json(m.get(), 2), nullptr);
  EXPECT_EQ(tgm_payload_has_hash(m.get(), 0), 1);
  EXPECT_STREQ(tgm_object_hash_type(m.get(), 0), "xxh3");
  ASSERT_NE(tgm_object_hash_value(m.get(), 0), nullptr);
  EXPECT_EQ(std::strlen(tgm_object_hash_value(m.get(), 0)), 16U);
  size_t len = 0;
  const uint8_t* data = tgm_object_data(m.get(), 1, &len);
  ASSERT_EQ(len, i16_values.size() * sizeof(int16_t));
  EXPECT_EQ(std::memcmp(data, i16_values.data(), len), 0);
  EXPECT_NE(tgm_object_data(m.get(), 0, nullptr), nullptr);  // out_len may be NULL

  // Out of range and NULL handles: NULL / 0.
  EXPECT_EQ(tgm_object_ndim(m.get(), 2), 0U);
  EXPECT_EQ(tgm_object_shape(m.get(), 2), nullptr);
  EXPECT_EQ(tgm_object_hash_value(nullptr, 0), nullptr);
  EXPECT_EQ(tgm_message_version(nullptr), 0U);
  len = 99;
  EXPECT_EQ(tgm_object_data(nullptr, 0, &len), nullptr);
  EXPECT_EQ(len, 0U);
}

TEST(CapiEncode, NoHashMeansNoHashAccessors) {
  const std::vector<uint8_t> msg = encode_two(nullptr);
  tgm_message_t* raw = nullptr;
  ASSERT_TGM_OK(tgm_decode(msg.data(), msg.size(), 1, 0, 0, &raw));
  const message_ptr m(raw);
  EXPECT_EQ(tgm_payload_has_hash(m.get(), 0), 0);
  EXPECT_EQ(tgm_object_hash_type(m.get(), 0), nullptr);
  EXPECT_EQ(tgm_object_hash_value(m.get(), 0), nullptr);
  // verify_hash on an unhashed message: the reference's missing-hash error.
  tgm_message_t* v = nullptr;
  EXPECT_EQ(tgm_decode(msg.data(), msg.size(), 1, 0, 1, &v), TGM_ERROR_MISSING_HASH);
  EXPECT_NE(last_error().find("no inline hash"), std::string::npos) << last_error();
}

TEST(CapiEncode, DecodeObjectReportsItsOwnHashSlot) {
  const std::vector<uint8_t> msg = encode_two();
  tgm_message_t* all = nullptr;
  tgm_message_t* one = nullptr;
  ASSERT_TGM_OK(tgm_decode(msg.data(), msg.size(), 1, 0, 0, &all));
  ASSERT_TGM_OK(tgm_decode_object(msg.data(), msg.size(), 1, 1, 0, 1, &one));
  const message_ptr a(all);
  const message_ptr o(one);
  EXPECT_EQ(tgm_message_num_objects(o.get()), 1U);
  EXPECT_STREQ(tgm_object_dtype(o.get(), 0), "int16");
  // The reference reports object 0's slot here; this library object k's.
  EXPECT_STREQ(tgm_object_hash_value(o.get(), 0), tgm_object_hash_value(a.get(), 1));
  EXPECT_STRNE(tgm_object_hash_value(o.get(), 0), tgm_object_hash_value(a.get(), 0));
  tgm_metadata_t* meta = nullptr;
  ASSERT_TGM_OK(tgm_message_metadata(o.get(), &meta));
  const metadata_ptr md(meta);
  EXPECT_EQ(tgm_metadata_num_objects(md.get()), 2U);  // the whole message's metadata
  EXPECT_EQ(tgm_decode_object(msg.data(), msg.size(), 2, 1, 0, 0, &one), TGM_ERROR_OBJECT);
  EXPECT_NE(last_error().find("object index 2 out of range"), std::string::npos) << last_error();
}

TEST(CapiEncode, PreEncodedAndPackingParameters) {
  // A simple_packing object whose payload is packed by hand from the
  // computed parameters: the values decode back within half a step.
  const std::vector<double> values{250.0, 260.5, 271.25, 300.0};
  double ref = 0;
  int32_t bsf = 0;
  ASSERT_TGM_OK(tgm_simple_packing_compute_params(values.data(), values.size(), 16, 0, &ref, &bsf));
  EXPECT_DOUBLE_EQ(ref, 250.0);
  const double step = std::ldexp(1.0, bsf);
  std::vector<uint8_t> packed;
  for (const double v : values) {
    const auto q = static_cast<uint16_t>(std::lround((v - ref) / step));
    packed.push_back(static_cast<uint8_t>(q >> 8));
    packed.push_back(static_cast<uint8_t>(q & 0xff));
  }
  const std::string json = R"({"descriptors":[{"type":"ntensor","ndim":1,"shape":[4],"strides":[1],
      "dtype":"float64","encoding":"simple_packing","filter":"none","compression":"none",
      "sp_bits_per_value":16,"sp_decimal_scale_factor":0,"sp_reference_value":)" +
                           std::to_string(ref) + R"(,"sp_binary_scale_factor":)" + std::to_string(bsf) +
                           "}]}";
  const uint8_t* ptrs[1] = {packed.data()};
  const size_t lens[1] = {packed.size()};
  bytes out;
  ASSERT_TGM_OK(tgm_encode_pre_encoded(json.c_str(), ptrs, lens, 1, "xxh3", 0, out.out()));
  tgm_message_t* raw = nullptr;
  ASSERT_TGM_OK(tgm_decode(out.data(), out.size(), 1, 0, 1, &raw));
  const message_ptr m(raw);
  size_t len = 0;
  const auto* decoded = reinterpret_cast<const double*>(tgm_object_data(m.get(), 0, &len));
  ASSERT_EQ(len, 32U);
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(decoded[i], values[i], step / 2 + 1e-9);

  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(tgm_simple_packing_compute_params(&nan, 1, 16, 0, &ref, &bsf), TGM_ERROR_ENCODING);
  EXPECT_EQ(tgm_simple_packing_compute_params(values.data(), 4, 65, 0, &ref, &bsf), TGM_ERROR_ENCODING);
  EXPECT_EQ(tgm_simple_packing_compute_params(nullptr, 4, 16, 0, &ref, &bsf), TGM_ERROR_INVALID_ARG);
  EXPECT_EQ(tgm_simple_packing_compute_params(values.data(), 4, 16, 0, nullptr, &bsf), TGM_ERROR_INVALID_ARG);
}

TEST(CapiEncode, NonFiniteValuesAndMaskOptions) {
  const std::vector<float> with_nan{1.0f, std::numeric_limits<float>::quiet_NaN(), 3.0f,
                                    std::numeric_limits<float>::infinity()};
  const char* json = R"({"descriptors":[{"type":"ntensor","ndim":1,"shape":[4],"strides":[1],
      "dtype":"float32","encoding":"none","filter":"none","compression":"none"}]})";
  const uint8_t* ptrs[1] = {reinterpret_cast<const uint8_t*>(with_nan.data())};
  const size_t lens[1] = {with_nan.size() * sizeof(float)};
  bytes out;
  EXPECT_EQ(tgm_encode(json, ptrs, lens, 1, nullptr, 0, out.out()), TGM_ERROR_ENCODING);
  EXPECT_EQ(tgm_encode_with_options(json, ptrs, lens, 1, nullptr, 0, nullptr, out.out()), TGM_ERROR_ENCODING);

  TgmEncodeMaskOptions opts{true, true, "rle", nullptr, "zstd", 0};
  ASSERT_TGM_OK(tgm_encode_with_options(json, ptrs, lens, 1, nullptr, 0, &opts, out.out()));
  tgm_message_t* raw = nullptr;
  ASSERT_TGM_OK(tgm_decode(out.data(), out.size(), 1, 0, 0, &raw));
  message_ptr m(raw);
  const auto* v = reinterpret_cast<const float*>(tgm_object_data(m.get(), 0, nullptr));
  EXPECT_TRUE(std::isnan(v[1]));
  EXPECT_TRUE(std::isinf(v[3]));
  // Without restoration the substituted zeros come back.
  const TgmDecodeMaskOptions keep{false};
  ASSERT_TGM_OK(tgm_decode_with_options(out.data(), out.size(), 1, 0, 0, &keep, &raw));
  m.reset(raw);
  v = reinterpret_cast<const float*>(tgm_object_data(m.get(), 0, nullptr));
  EXPECT_EQ(v[1], 0.0f);
  ASSERT_TGM_OK(tgm_decode_with_options(out.data(), out.size(), 1, 0, 0, nullptr, &raw));  // NULL = restore
  m.reset(raw);
  EXPECT_TRUE(std::isnan(reinterpret_cast<const float*>(tgm_object_data(m.get(), 0, nullptr))[1]));

  TgmEncodeMaskOptions bad{true, true, "gzip", nullptr, nullptr, -1};
  EXPECT_EQ(tgm_encode_with_options(json, ptrs, lens, 1, nullptr, 0, &bad, out.out()), TGM_ERROR_INVALID_ARG);
  EXPECT_NE(last_error().find("unknown mask method 'gzip' for nan_mask_method"), std::string::npos)
      << last_error();
}

TEST(CapiEncode, JsonRules) {
  bytes out;
  // Legacy "version" and free keys go to _extra_; _extra_ wins on collisions.
  ASSERT_TGM_OK(tgm_encode(R"({"version": 2, "a": 1, "_extra_": {"a": 2}})", nullptr, nullptr, 0, "none", 0,
                           out.out()));
  tgm_metadata_t* raw = nullptr;
  ASSERT_TGM_OK(tgm_decode_metadata(out.data(), out.size(), &raw));
  const metadata_ptr meta(raw);
  EXPECT_EQ(tgm_metadata_get_int(meta.get(), "extra.a", 0), 2);
  EXPECT_EQ(tgm_metadata_get_int(meta.get(), "_extra_.version", 0), 2);
  EXPECT_EQ(tgm_metadata_get_int(meta.get(), "version", 0), 3);  // the pseudo-key wins

  EXPECT_EQ(tgm_encode(R"({"extra": {}, "_extra_": {}})", nullptr, nullptr, 0, nullptr, 0, out.out()),
            TGM_ERROR_METADATA);
  EXPECT_EQ(tgm_encode(R"({"base": [{"_reserved_": {}}]})", nullptr, nullptr, 0, nullptr, 0, out.out()),
            TGM_ERROR_METADATA);
  EXPECT_EQ(tgm_encode("[1, 2]", nullptr, nullptr, 0, nullptr, 0, out.out()), TGM_ERROR_METADATA);
  EXPECT_EQ(tgm_encode("{", nullptr, nullptr, 0, nullptr, 0, out.out()), TGM_ERROR_METADATA);
  EXPECT_NE(last_error().find("invalid metadata JSON"), std::string::npos) << last_error();
}

TEST(CapiDecode, RangesSplitAndJoined) {
  const std::vector<uint8_t> msg = encode_two();
  const uint64_t offsets[2] = {0, 2};
  const uint64_t counts[2] = {1, 2};
  tgm_bytes_t parts[2];
  size_t n = 0;
  ASSERT_TGM_OK(tgm_decode_range(msg.data(), msg.size(), 0, offsets, counts, 2, 1, 0, 0, parts, &n));
  ASSERT_EQ(n, 2U);
  ASSERT_EQ(parts[0].len, 4U);
  ASSERT_EQ(parts[1].len, 8U);
  EXPECT_EQ(std::memcmp(parts[1].data, &f32_values[2], 8), 0);
  tgm_bytes_free(parts[0]);
  tgm_bytes_free(parts[1]);
  // Object 1 is zstd-compressed: no range decode for that codec (spec 03).
  EXPECT_EQ(tgm_decode_range(msg.data(), msg.size(), 1, offsets, counts, 2, 1, 0, 0, parts, &n),
            TGM_ERROR_ENCODING);
  EXPECT_NE(last_error().find("range decode not supported"), std::string::npos) << last_error();
  ASSERT_TGM_OK(tgm_decode_range(msg.data(), msg.size(), 0, offsets, counts, 2, 1, 0, 1, parts, &n));
  ASSERT_EQ(n, 1U);
  ASSERT_EQ(parts[0].len, 12U);
  const float expect[3] = {f32_values[0], f32_values[2], f32_values[3]};
  EXPECT_EQ(std::memcmp(parts[0].data, expect, 12), 0);
  tgm_bytes_free(parts[0]);
  // No ranges: range arrays may be NULL.
  ASSERT_TGM_OK(tgm_decode_range(msg.data(), msg.size(), 0, nullptr, nullptr, 0, 1, 0, 0, parts, &n));
  EXPECT_EQ(n, 0U);
  EXPECT_EQ(tgm_decode_range(msg.data(), msg.size(), 0, nullptr, counts, 1, 1, 0, 0, parts, &n),
            TGM_ERROR_INVALID_ARG);
  EXPECT_EQ(tgm_decode_range(msg.data(), msg.size(), 0, offsets, counts, 1, 1, 0, 0, parts, nullptr),
            TGM_ERROR_INVALID_ARG);
  const uint64_t far[1] = {100};
  EXPECT_NE(tgm_decode_range(msg.data(), msg.size(), 0, far, counts, 1, 1, 0, 0, parts, &n), TGM_ERROR_OK);
  EXPECT_EQ(tgm_decode_range(msg.data(), msg.size(), 7, offsets, counts, 1, 1, 0, 0, parts, &n),
            TGM_ERROR_OBJECT);
}

TEST(CapiDecode, CorruptAndTruncatedMessagesFailCleanly) {
  std::vector<uint8_t> msg = encode_two();
  tgm_message_t* m = nullptr;
  EXPECT_EQ(tgm_decode(msg.data(), 10, 1, 0, 0, &m), TGM_ERROR_FRAMING);
  EXPECT_EQ(m, nullptr);
  EXPECT_EQ(tgm_decode(msg.data(), 0, 1, 0, 0, &m), TGM_ERROR_FRAMING);
  // A flipped payload byte: only hash verification notices.
  tgm_message_t* all = nullptr;
  ASSERT_TGM_OK(tgm_decode(msg.data(), msg.size(), 1, 0, 0, &all));
  size_t len = 0;
  const uint8_t* p = tgm_object_data(all, 0, &len);
  const auto at = static_cast<size_t>(std::search(msg.begin(), msg.end(), p, p + len) -
                                      msg.begin());  // zero-copy: bytes of the payload
  tgm_message_free(all);
  ASSERT_LT(at, msg.size());
  msg[at] ^= 0x40;
  EXPECT_EQ(tgm_decode(msg.data(), msg.size(), 1, 0, 1, &m), TGM_ERROR_HASH_MISMATCH);
  EXPECT_NE(last_error().find("hash mismatch on object 0"), std::string::npos) << last_error();
  ASSERT_TGM_OK(tgm_decode(msg.data(), msg.size(), 1, 0, 0, &m));
  tgm_message_free(m);
  std::vector<uint8_t> noise(1000, 0xAB);
  EXPECT_EQ(tgm_decode_metadata(noise.data(), noise.size(), nullptr), TGM_ERROR_INVALID_ARG);
  tgm_metadata_t* meta = nullptr;
  EXPECT_EQ(tgm_decode_metadata(noise.data(), noise.size(), &meta), TGM_ERROR_FRAMING);
}

TEST(CapiMetadata, LegacyGetters) {
  const std::vector<uint8_t> msg = encode_two();
  tgm_metadata_t* raw = nullptr;
  ASSERT_TGM_OK(tgm_decode_metadata(msg.data(), msg.size(), &raw));
  const metadata_ptr meta(raw);
  tgm_metadata_t* m = meta.get();
  EXPECT_EQ(tgm_metadata_version(m), 3U);
  EXPECT_EQ(tgm_metadata_num_objects(m), 2U);
  EXPECT_STREQ(tgm_metadata_get_string(m, "mars.param"), "2t");  // first match: base[0]
  EXPECT_STREQ(tgm_metadata_get_string(m, "mars.step"), "12");
  EXPECT_STREQ(tgm_metadata_get_string(m, "ratio"), "0.5");
  EXPECT_STREQ(tgm_metadata_get_string(m, "flag"), "true");
  EXPECT_STREQ(tgm_metadata_get_string(m, "note"), "");
  EXPECT_STREQ(tgm_metadata_get_string(m, "version"), "3");
  EXPECT_STREQ(tgm_metadata_get_string(m, "experiment"), "exp01");  // from _extra_
  EXPECT_EQ(tgm_metadata_get_string(m, "mars"), nullptr);           // a container
  EXPECT_EQ(tgm_metadata_get_string(m, "levels"), nullptr);
  EXPECT_EQ(tgm_metadata_get_string(m, ""), nullptr);
  EXPECT_EQ(tgm_metadata_get_string(m, nullptr), nullptr);
  EXPECT_EQ(tgm_metadata_get_string(m, "_reserved_.encoder.name"), nullptr);
  // Repeated calls return the same pointer.
  EXPECT_EQ(tgm_metadata_get_string(m, "mars.param"), tgm_metadata_get_string(m, "mars.param"));
  EXPECT_EQ(tgm_metadata_get_int(m, "mars.step", -1), 12);
  EXPECT_EQ(tgm_metadata_get_int(m, "ratio", -1), -1);  // never truncates floats
  EXPECT_EQ(tgm_metadata_get_int(m, "version", -1), 3);
  EXPECT_DOUBLE_EQ(tgm_metadata_get_float(m, "ratio", -1), 0.5);
  EXPECT_DOUBLE_EQ(tgm_metadata_get_float(m, "mars.step", -1), 12.0);  // integers widen
  EXPECT_DOUBLE_EQ(tgm_metadata_get_float(m, "mars.param", -1), -1.0);
  EXPECT_STREQ(tgm_metadata_get_string_at(m, 1, "mars.param"), "msl");
  EXPECT_EQ(tgm_metadata_get_string_at(m, 1, "experiment"), nullptr);  // no _extra_ fallback
  EXPECT_EQ(tgm_metadata_get_string_at(m, 1, "version"), nullptr);     // no pseudo-key
  EXPECT_EQ(tgm_metadata_get_string_at(m, 5, "mars.param"), nullptr);
  EXPECT_EQ(tgm_metadata_get_int_at(m, 0, "mars.step", 0), 12);
  EXPECT_EQ(tgm_metadata_get_int_at(m, 1, "mars.step", 7), 7);
  EXPECT_DOUBLE_EQ(tgm_metadata_get_float_at(m, 0, "ratio", 0), 0.5);
  EXPECT_DOUBLE_EQ(tgm_metadata_get_float_at(m, 9, "ratio", 2.5), 2.5);
  const std::string json = tgm_metadata_to_json(m);
  EXPECT_EQ(json.rfind("{\"_extra_\":{\"experiment\":\"exp01\"}", 0), 0U) << json;
  EXPECT_NE(json.find("\"base\":["), std::string::npos);
  EXPECT_NE(std::string(tgm_metadata_object_to_json(m, 1)).find("\"_reserved_\""), std::string::npos);
  EXPECT_EQ(tgm_metadata_object_to_json(m, 2), nullptr);
  EXPECT_EQ(tgm_metadata_to_json(nullptr), nullptr);
  EXPECT_EQ(tgm_metadata_version(nullptr), 0U);
  EXPECT_EQ(tgm_metadata_get_int(nullptr, "x", 4), 4);
}

TEST(CapiMetadata, CursorApi) {
  const std::vector<uint8_t> msg = encode_two();
  tgm_metadata_t* raw = nullptr;
  ASSERT_TGM_OK(tgm_decode_metadata(msg.data(), msg.size(), &raw));
  const metadata_ptr meta(raw);
  tgm_metadata_t* m = meta.get();

  const tgm_value_t* levels = tgm_metadata_get(m, "levels");
  ASSERT_EQ(tgm_value_get_type(levels), TGM_VALUE_TYPE_ARRAY);
  EXPECT_EQ(tgm_value_array_len(levels), 2U);
  uint64_t u = 0;
  EXPECT_TRUE(tgm_value_as_u64(tgm_value_array_get(levels, 1), &u));
  EXPECT_EQ(u, 850U);
  EXPECT_EQ(tgm_value_array_get(levels, 2), nullptr);
  EXPECT_EQ(tgm_metadata_get_at(m, 0, "levels"), nullptr);
  EXPECT_NE(tgm_metadata_get_at(m, 1, "levels"), nullptr);

  bool b = false;
  EXPECT_TRUE(tgm_value_as_bool(tgm_metadata_get(m, "flag"), &b));
  EXPECT_TRUE(b);
  int64_t i = 0;
  EXPECT_FALSE(tgm_value_as_i64(tgm_metadata_get(m, "ratio"), &i));  // no truncation
  double d = 0;
  EXPECT_TRUE(tgm_value_as_f64(tgm_metadata_get(m, "ratio"), &d));
  EXPECT_EQ(d, 0.5);
  d = -1;
  EXPECT_FALSE(tgm_value_as_f64(tgm_metadata_get(m, "flag"), &d));
  EXPECT_EQ(d, -1);  // untouched on failure
  size_t len = 7;
  const char* note = tgm_value_as_string(tgm_metadata_get(m, "note"), &len);
  EXPECT_NE(note, nullptr);  // zero length, non-NULL
  EXPECT_EQ(len, 0U);
  EXPECT_EQ(tgm_value_as_string(tgm_metadata_get(m, "note"), nullptr), nullptr);
  EXPECT_EQ(tgm_value_as_bytes(tgm_metadata_get(m, "note"), &len), nullptr);
  EXPECT_TRUE(tgm_metadata_has(m, "mars.class"));
  EXPECT_FALSE(tgm_metadata_has(m, "mars.nope"));
  EXPECT_TRUE(tgm_metadata_has_at(m, 1, "mars.param"));
  EXPECT_FALSE(tgm_metadata_has_at(m, 1, "ratio"));
  EXPECT_EQ(tgm_metadata_get(m, "version"), nullptr);  // no pseudo-key here

  // Sections enumerate in sorted key order and include _reserved_.
  const tgm_value_t* obj0 = tgm_metadata_object(m, 0);
  ASSERT_EQ(tgm_value_get_type(obj0), TGM_VALUE_TYPE_MAP);
  std::vector<std::string> keys;
  for (size_t k = 0; k < tgm_value_map_len(obj0); ++k) {
    const char* key = tgm_value_map_key_at(obj0, k, &len);
    ASSERT_NE(key, nullptr);
    keys.emplace_back(key, len);
    EXPECT_NE(tgm_value_map_value_at(obj0, k), nullptr);
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"_reserved_", "flag", "mars", "note", "ratio"}));
  EXPECT_EQ(tgm_value_map_key_at(obj0, 99, &len), nullptr);
  EXPECT_EQ(tgm_value_map_value_at(obj0, 99), nullptr);
  const tgm_value_t* mars = tgm_value_map_get(obj0, "mars");
  EXPECT_EQ(tgm_value_map_len(mars), 3U);
  EXPECT_EQ(tgm_value_map_get(obj0, "mars.param"), nullptr);  // one segment only
  EXPECT_NE(tgm_value_map_get(obj0, "_reserved_"), nullptr);
  EXPECT_EQ(tgm_metadata_object(m, 2), nullptr);
  EXPECT_EQ(tgm_value_map_len(tgm_metadata_extra(m)), 1U);
  EXPECT_GE(tgm_value_map_len(tgm_metadata_reserved(m)), 3U);  // encoder, time, uuid
  // NULL cursors behave as absent values.
  EXPECT_EQ(tgm_value_get_type(nullptr), TGM_VALUE_TYPE_NULL);
  EXPECT_EQ(tgm_value_array_len(nullptr), 0U);
  EXPECT_EQ(tgm_value_map_len(levels), 0U);
  EXPECT_FALSE(tgm_value_as_bool(nullptr, &b));
}

TEST(CapiMetadata, BytesAndBigIntegersThroughCursors) {
  // JSON has no byte strings: the message is encoded through the C++ API.
  namespace cbor = tensogram::cbor;
  tensogram::global_metadata g;
  g.base.push_back(cbor::value::make_map({{"blob", cbor::byte_string{std::byte{1}, std::byte{2}}},
                                          {"empty", cbor::byte_string{}},
                                          {"big", std::numeric_limits<std::uint64_t>::max()},
                                          {"neg", std::int64_t{-5}}}));
  const std::byte one{7};
  const tensogram::object_input in{
      tensogram::data_object_descriptor::contiguous(tensogram::dtype::uint8, {1}),
      std::span<const std::byte>(&one, 1)};
  const std::vector<std::byte> bytes_msg =
      tensogram::encode(g, std::span<const tensogram::object_input>(&in, 1));
  tgm_metadata_t* raw = nullptr;
  ASSERT_TGM_OK(
      tgm_decode_metadata(reinterpret_cast<const uint8_t*>(bytes_msg.data()), bytes_msg.size(), &raw));
  const metadata_ptr meta(raw);
  size_t len = 0;
  const tgm_value_t* blob = tgm_metadata_get(meta.get(), "blob");
  EXPECT_EQ(tgm_value_get_type(blob), TGM_VALUE_TYPE_BYTES);
  const uint8_t* b = tgm_value_as_bytes(blob, &len);
  ASSERT_EQ(len, 2U);
  EXPECT_EQ(b[1], 2);
  EXPECT_NE(tgm_value_as_bytes(tgm_metadata_get(meta.get(), "empty"), &len), nullptr);
  EXPECT_EQ(len, 0U);
  EXPECT_EQ(tgm_metadata_get_string(meta.get(), "blob"), nullptr);  // bytes have no legacy text
  const tgm_value_t* big = tgm_metadata_get(meta.get(), "big");
  uint64_t u = 0;
  int64_t i = 0;
  EXPECT_TRUE(tgm_value_as_u64(big, &u));
  EXPECT_EQ(u, std::numeric_limits<std::uint64_t>::max());
  EXPECT_FALSE(tgm_value_as_i64(big, &i));
  EXPECT_EQ(tgm_metadata_get_int(meta.get(), "big", 9), 9);
  EXPECT_STREQ(tgm_metadata_get_string(meta.get(), "big"), "18446744073709551615");
  EXPECT_FALSE(tgm_value_as_u64(tgm_metadata_get(meta.get(), "neg"), &u));
  EXPECT_TRUE(tgm_value_as_i64(tgm_metadata_get(meta.get(), "neg"), &i));
  EXPECT_EQ(i, -5);
  // The encoder's provenance sits in _reserved_, reachable by cursor only.
  EXPECT_EQ(tgm_metadata_get(meta.get(), "_reserved_"), nullptr);
  const tgm_value_t* encoder = tgm_value_map_get(tgm_metadata_reserved(meta.get()), "encoder");
  const char* name = tgm_value_as_string(tgm_value_map_get(encoder, "name"), &len);
  EXPECT_EQ(std::string(name, len), "tensogram-cpp");
}

}  // namespace

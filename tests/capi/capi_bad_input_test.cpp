// Bad input at the C boundary (issue 24 "Bad input"): NULL pointers, zero
// lengths, stale handles, non-UTF-8 and non-JSON strings, out-of-range
// indices. Each is an error code plus a last-error text naming the function
// and the argument — never a crash, never an exception.
#include <string>
#include <vector>

#include "capi_test_support.hpp"

namespace {

using namespace capi_test;

// Expects `code` and a last error containing every one of `parts`.
void expect_failure(tgm_error got, tgm_error code, std::initializer_list<const char*> parts) {
  EXPECT_EQ(got, code) << last_error();
  const std::string text = last_error();
  for (const char* p : parts) EXPECT_NE(text.find(p), std::string::npos) << "'" << p << "' not in: " << text;
}

// The one extension (docs/c-api.md): bindings report their own refusals
// through the last-error slot; the text gets the code's category prefix.
TEST(CapiBadInput, SetLastErrorForBindings) {
  EXPECT_EQ(tgm_set_last_error(TGM_ERROR_OBJECT, "tensogram_to_array: object 1 has dtype float64"),
            TGM_ERROR_OBJECT);
  EXPECT_EQ(last_error(), "object error: tensogram_to_array: object 1 has dtype float64");
  EXPECT_EQ(tgm_set_last_error(TGM_ERROR_FRAMING, nullptr), TGM_ERROR_FRAMING);
  EXPECT_EQ(last_error(), "framing error: (no message)");
  // A code outside the enumeration (refused with TGM_ERROR_INVALID_ARG) is
  // tested from C, capi_c_test.c: C++ cannot hold one in a tgm_error.
}

TEST(CapiBadInput, NullRequiredPointers) {
  const std::vector<uint8_t> msg = encode_two();
  const uint8_t* d = msg.data();
  const size_t n = msg.size();
  tgm_message_t* m = nullptr;
  tgm_metadata_t* meta = nullptr;
  tgm_bytes_t b{nullptr, 0};
  expect_failure(tgm_encode(nullptr, nullptr, nullptr, 0, nullptr, 0, &b), TGM_ERROR_INVALID_ARG,
                 {"tgm_encode", "'metadata_json'"});
  expect_failure(tgm_encode("{}", nullptr, nullptr, 0, nullptr, 0, nullptr), TGM_ERROR_INVALID_ARG,
                 {"'out'"});
  expect_failure(tgm_encode(two_objects_json(), nullptr, nullptr, 2, nullptr, 0, &b), TGM_ERROR_INVALID_ARG,
                 {"'data_ptrs'"});
  const uint8_t* ptrs[2] = {nullptr, nullptr};
  const size_t lens[2] = {24, 8};
  expect_failure(tgm_encode(two_objects_json(), ptrs, lens, 2, nullptr, 0, &b), TGM_ERROR_INVALID_ARG,
                 {"data_ptrs[0] is NULL but data_lens[0] is 24"});
  expect_failure(tgm_encode_pre_encoded(nullptr, nullptr, nullptr, 0, nullptr, 0, &b), TGM_ERROR_INVALID_ARG,
                 {"tgm_encode_pre_encoded"});
  expect_failure(tgm_encode_with_options(nullptr, nullptr, nullptr, 0, nullptr, 0, nullptr, &b),
                 TGM_ERROR_INVALID_ARG, {"tgm_encode_with_options"});
  expect_failure(tgm_decode(nullptr, n, 1, 0, 0, &m), TGM_ERROR_INVALID_ARG, {"tgm_decode", "'buf'"});
  expect_failure(tgm_decode_with_options(d, n, 1, 0, 0, nullptr, nullptr), TGM_ERROR_INVALID_ARG, {"'out'"});
  expect_failure(tgm_decode_object(nullptr, n, 0, 1, 0, 0, &m), TGM_ERROR_INVALID_ARG, {"tgm_decode_object"});
  expect_failure(tgm_decode_metadata(d, n, nullptr), TGM_ERROR_INVALID_ARG, {"tgm_decode_metadata", "'out'"});
  expect_failure(tgm_decode_range(d, n, 0, nullptr, nullptr, 0, 1, 0, 0, nullptr, nullptr),
                 TGM_ERROR_INVALID_ARG, {"'out_count'"});
  expect_failure(tgm_message_metadata(nullptr, &meta), TGM_ERROR_INVALID_ARG, {"tgm_message_metadata"});
  expect_failure(tgm_file_create(nullptr, nullptr), TGM_ERROR_INVALID_ARG, {"tgm_file_create"});
  expect_failure(tgm_file_append_raw(nullptr, d, n), TGM_ERROR_INVALID_ARG, {"tgm_file_append_raw"});
  expect_failure(tgm_file_read_message(nullptr, 0, &b), TGM_ERROR_INVALID_ARG, {"tgm_file_read_message"});
  expect_failure(tgm_file_decode_message(nullptr, 0, 1, 0, 0, &m), TGM_ERROR_INVALID_ARG,
                 {"tgm_file_decode_message"});
  expect_failure(tgm_file_append(nullptr, "{}", nullptr, nullptr, 0, nullptr, 0), TGM_ERROR_INVALID_ARG,
                 {"tgm_file_append"});
  expect_failure(tgm_file_append_with_options(nullptr, "{}", nullptr, nullptr, 0, nullptr, 0, nullptr),
                 TGM_ERROR_INVALID_ARG, {"tgm_file_append_with_options"});
  expect_failure(tgm_file_iter_create(nullptr, nullptr), TGM_ERROR_INVALID_ARG, {"tgm_file_iter_create"});
  expect_failure(tgm_file_iter_next(nullptr, &b), TGM_ERROR_INVALID_ARG, {"tgm_file_iter_next"});
  expect_failure(tgm_buffer_iter_create(nullptr, 0, nullptr), TGM_ERROR_INVALID_ARG,
                 {"tgm_buffer_iter_create"});
  const uint8_t* slice = nullptr;
  size_t len = 0;
  expect_failure(tgm_buffer_iter_next(nullptr, &slice, &len), TGM_ERROR_INVALID_ARG,
                 {"tgm_buffer_iter_next"});
  tgm_object_iter_t* oit = nullptr;
  expect_failure(tgm_object_iter_create(nullptr, n, 1, 0, &oit), TGM_ERROR_INVALID_ARG,
                 {"tgm_object_iter_create"});
  expect_failure(tgm_object_iter_next(nullptr, &m), TGM_ERROR_INVALID_ARG, {"tgm_object_iter_next"});
  tgm_streaming_encoder_t* enc = nullptr;
  expect_failure(tgm_streaming_encoder_create(nullptr, "{}", nullptr, 0, &enc), TGM_ERROR_INVALID_ARG,
                 {"'path'"});
  expect_failure(tgm_streaming_encoder_write_preceder(nullptr, "{}"), TGM_ERROR_INVALID_ARG,
                 {"tgm_streaming_encoder_write_preceder"});
  expect_failure(tgm_streaming_encoder_write_pre_encoded(nullptr, "{}", d, 1), TGM_ERROR_INVALID_ARG,
                 {"tgm_streaming_encoder_write_pre_encoded"});
  expect_failure(tgm_streaming_encoder_finish(nullptr), TGM_ERROR_INVALID_ARG,
                 {"tgm_streaming_encoder_finish"});
  expect_failure(tgm_validate_file(nullptr, nullptr, 0, &b), TGM_ERROR_INVALID_ARG,
                 {"tgm_validate_file", "'path'"});
  // Accessors and frees: NULL is harmless.
  EXPECT_EQ(tgm_streaming_encoder_count(nullptr), 0U);
  tgm_streaming_encoder_free(nullptr);
  tgm_message_free(nullptr);
  tgm_metadata_free(nullptr);
  tgm_file_close(nullptr);
  tgm_buffer_iter_free(nullptr);
}

TEST(CapiBadInput, StaleHandlesAreRefused) {
  const std::vector<uint8_t> msg = encode_two();
  tgm_message_t* m = nullptr;
  ASSERT_TGM_OK(tgm_decode(msg.data(), msg.size(), 1, 0, 0, &m));
  tgm_message_free(m);
  EXPECT_EQ(tgm_message_num_objects(m), 0U);
  EXPECT_NE(last_error().find("tgm_message_num_objects: 'tgm_message_t' is not a live handle"),
            std::string::npos)
      << last_error();
  EXPECT_EQ(tgm_object_dtype(m, 0), nullptr);
  tgm_message_free(m);  // double free: refused
  EXPECT_NE(last_error().find("tgm_message_free"), std::string::npos);

  tgm_metadata_t* meta = nullptr;
  ASSERT_TGM_OK(tgm_decode_metadata(msg.data(), msg.size(), &meta));
  tgm_metadata_free(meta);
  EXPECT_EQ(tgm_metadata_get_string(meta, "mars.param"), nullptr);
  EXPECT_EQ(tgm_metadata_object(meta, 0), nullptr);
  tgm_metadata_free(meta);

  const auto path = scratch_dir("stale") / "f.tgm";
  write_file(path, 1);
  tgm_file_t* f = nullptr;
  ASSERT_TGM_OK(tgm_file_open(path.c_str(), &f));
  tgm_file_close(f);
  size_t count = 0;
  expect_failure(tgm_file_message_count(f, &count), TGM_ERROR_INVALID_ARG,
                 {"tgm_file_message_count", "not a live handle"});
  tgm_file_close(f);

  tgm_scan_result_t* scan = nullptr;
  ASSERT_TGM_OK(tgm_scan(msg.data(), msg.size(), &scan));
  tgm_scan_free(scan);
  EXPECT_EQ(tgm_scan_count(scan), 0U);
  tgm_scan_free(scan);

  tgm_streaming_encoder_t* enc = nullptr;
  ASSERT_TGM_OK(tgm_streaming_encoder_create((path.string() + ".s").c_str(), "{}", nullptr, 0, &enc));
  tgm_streaming_encoder_free(enc);
  expect_failure(tgm_streaming_encoder_finish(enc), TGM_ERROR_INVALID_ARG, {"not a live handle"});
  tgm_streaming_encoder_free(enc);

  tgm_buffer_iter_t* bit = nullptr;
  ASSERT_TGM_OK(tgm_buffer_iter_create(msg.data(), msg.size(), &bit));
  tgm_buffer_iter_free(bit);
  EXPECT_EQ(tgm_buffer_iter_count(bit), 0U);

  // A handle of another type.
  ASSERT_TGM_OK(tgm_decode(msg.data(), msg.size(), 1, 0, 0, &m));
  auto* wrong = reinterpret_cast<tgm_metadata_t*>(m);
  EXPECT_EQ(tgm_metadata_num_objects(wrong), 0U);
  tgm_metadata_free(wrong);  // refused: not a metadata handle
  EXPECT_EQ(tgm_message_num_objects(m), 2U);
  tgm_message_free(m);
}

TEST(CapiBadInput, StringsThatAreNotUtf8OrNotJson) {
  tgm_bytes_t b{nullptr, 0};
  const std::string bad = std::string("{\"a\":\"") + char(0xC3) + char(0x28) + "\"}";
  expect_failure(tgm_encode(bad.c_str(), nullptr, nullptr, 0, nullptr, 0, &b), TGM_ERROR_INVALID_ARG,
                 {"tgm_encode", "'metadata_json' is not valid UTF-8 (byte 6)"});
  expect_failure(tgm_encode("{\"a\": nope}", nullptr, nullptr, 0, nullptr, 0, &b), TGM_ERROR_METADATA,
                 {"invalid metadata JSON"});
  tgm_file_t* f = nullptr;
  const std::string bad_path = std::string("/tmp/") + char(0xFF) + ".tgm";
  expect_failure(tgm_file_open(bad_path.c_str(), &f), TGM_ERROR_INVALID_ARG, {"'path' is not valid UTF-8"});
  const std::vector<uint8_t> msg = encode_two();
  tgm_metadata_t* meta = nullptr;
  ASSERT_TGM_OK(tgm_decode_metadata(msg.data(), msg.size(), &meta));
  EXPECT_EQ(tgm_metadata_get_string(meta, bad.c_str()), nullptr);
  EXPECT_NE(last_error().find("'key' is not valid UTF-8"), std::string::npos);
  EXPECT_EQ(tgm_metadata_get(meta, bad.c_str()), nullptr);
  EXPECT_EQ(tgm_value_map_get(tgm_metadata_object(meta, 0), bad.c_str()), nullptr);
  tgm_metadata_free(meta);
  expect_failure(tgm_validate(msg.data(), msg.size(), bad.c_str(), 0, &b), TGM_ERROR_INVALID_ARG,
                 {"'level'"});
}

TEST(CapiBadInput, ZeroLengthsAndEmptyObjects) {
  tgm_bytes_t b{nullptr, 0};
  // An empty object: a NULL pointer with length 0 is allowed.
  const char* json = R"({"descriptors":[{"type":"ntensor","ndim":1,"shape":[0],"strides":[1],
      "dtype":"float32","encoding":"none","filter":"none","compression":"none"}]})";
  const uint8_t* ptrs[1] = {nullptr};
  const size_t lens[1] = {0};
  ASSERT_TGM_OK(tgm_encode(json, ptrs, lens, 1, nullptr, 0, &b));
  tgm_message_t* m = nullptr;
  ASSERT_TGM_OK(tgm_decode(b.data, b.len, 1, 0, 0, &m));
  size_t len = 5;
  (void)tgm_object_data(m, 0, &len);
  EXPECT_EQ(len, 0U);
  EXPECT_EQ(tgm_object_shape(m, 0)[0], 0U);
  tgm_message_free(m);
  tgm_bytes_free(b);
  // No objects at all.
  ASSERT_TGM_OK(tgm_encode("{}", nullptr, nullptr, 0, nullptr, 0, &b));
  ASSERT_TGM_OK(tgm_decode(b.data, b.len, 1, 0, 0, &m));
  EXPECT_EQ(tgm_message_num_objects(m), 0U);
  tgm_message_free(m);
  tgm_bytes_free(b);
  // Data length that does not match the shape.
  const uint8_t four[4] = {0, 0, 0, 0};
  const uint8_t* p4[1] = {four};
  const size_t l4[1] = {4};
  EXPECT_EQ(tgm_encode(json, p4, l4, 1, nullptr, 0, &b), TGM_ERROR_METADATA);
}

}  // namespace

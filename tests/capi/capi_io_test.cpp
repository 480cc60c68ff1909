// The C ABI's scan, files, iterators, streaming encoder, validation, doctor
// and hashing (spec 04 Part C, spec 07 C2.4).
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "capi_test_support.hpp"

namespace {

using namespace capi_test;
namespace fs = std::filesystem;

std::vector<uint8_t> read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

TEST(CapiScan, FindsMessagesAndSkipsGarbage) {
  const std::vector<uint8_t> msg = encode_two();
  std::vector<uint8_t> buf{'x', 'y', 'z'};
  buf.insert(buf.end(), msg.begin(), msg.end());
  buf.insert(buf.end(), 5, 0);
  buf.insert(buf.end(), msg.begin(), msg.end());
  tgm_scan_result_t* scan = nullptr;
  ASSERT_TGM_OK(tgm_scan(buf.data(), buf.size(), &scan));
  ASSERT_EQ(tgm_scan_count(scan), 2U);
  EXPECT_EQ(tgm_scan_entry(scan, 0).offset, 3U);
  EXPECT_EQ(tgm_scan_entry(scan, 1).offset, 3U + msg.size() + 5);
  EXPECT_EQ(tgm_scan_entry(scan, 1).length, msg.size());
  const tgm_scan_entry_t bad = tgm_scan_entry(scan, 2);
  EXPECT_EQ(bad.offset, SIZE_MAX);
  EXPECT_EQ(bad.length, 0U);
  EXPECT_NE(last_error().find("index 2 out of range (count=2)"), std::string::npos) << last_error();
  tgm_scan_free(scan);
  EXPECT_EQ(tgm_scan_count(nullptr), 0U);
  EXPECT_EQ(tgm_scan_entry(nullptr, 0).offset, SIZE_MAX);
  tgm_scan_free(nullptr);
  // Garbage only: no message, no error.
  std::vector<uint8_t> noise(333, 0x5A);
  ASSERT_TGM_OK(tgm_scan(noise.data(), noise.size(), &scan));
  EXPECT_EQ(tgm_scan_count(scan), 0U);
  tgm_scan_free(scan);
  EXPECT_EQ(tgm_scan(nullptr, 4, &scan), TGM_ERROR_INVALID_ARG);
  EXPECT_EQ(tgm_scan(noise.data(), noise.size(), nullptr), TGM_ERROR_INVALID_ARG);
}

TEST(CapiFile, CreateAppendOpenDecodeRead) {
  const fs::path dir = scratch_dir("file");
  const fs::path path = dir / "nested" / "deeper" / "f.tgm";  // parents are created
  tgm_file_t* raw = nullptr;
  ASSERT_TGM_OK(tgm_file_create(path.c_str(), &raw));
  file_ptr f(raw);
  EXPECT_STREQ(tgm_file_path(f.get()), path.c_str());
  const uint8_t* ptrs[2] = {reinterpret_cast<const uint8_t*>(f32_values.data()),
                            reinterpret_cast<const uint8_t*>(i16_values.data())};
  const size_t lens[2] = {24, 8};
  ASSERT_TGM_OK(tgm_file_append(f.get(), two_objects_json(), ptrs, lens, 2, "xxh3", 0));
  const TgmEncodeMaskOptions opts{true, false, nullptr, nullptr, nullptr, -1};
  ASSERT_TGM_OK(tgm_file_append_with_options(f.get(), two_objects_json(), ptrs, lens, 2, nullptr, 1, &opts));
  const std::vector<uint8_t> msg = encode_two();
  ASSERT_TGM_OK(tgm_file_append_raw(f.get(), msg.data(), msg.size()));
  size_t count = 0;
  ASSERT_TGM_OK(tgm_file_message_count(f.get(), &count));
  EXPECT_EQ(count, 3U);
  f.reset();

  ASSERT_TGM_OK(tgm_file_open(path.c_str(), &raw));
  f.reset(raw);
  ASSERT_TGM_OK(tgm_file_message_count(f.get(), &count));
  EXPECT_EQ(count, 3U);
  tgm_message_t* m = nullptr;
  ASSERT_TGM_OK(tgm_file_decode_message(f.get(), 0, 1, 0, 1, &m));
  EXPECT_EQ(tgm_message_num_objects(m), 2U);
  EXPECT_EQ(tgm_payload_has_hash(m, 1), 1);  // file decode reports the hash slots
  tgm_message_free(m);
  ASSERT_TGM_OK(tgm_file_decode_message(f.get(), 1, 1, 0, 0, &m));
  EXPECT_EQ(tgm_payload_has_hash(m, 0), 0);  // appended without a hash
  tgm_message_free(m);
  bytes out;
  ASSERT_TGM_OK(tgm_file_read_message(f.get(), 2, out.out()));
  EXPECT_EQ(out.vec(), msg);

  EXPECT_EQ(tgm_file_decode_message(f.get(), 3, 1, 0, 0, &m), TGM_ERROR_FRAMING);
  EXPECT_NE(last_error().find("message index 3 out of range (count=3)"), std::string::npos) << last_error();
  EXPECT_EQ(tgm_file_read_message(f.get(), 10, out.out()), TGM_ERROR_FRAMING);
  // Not one whole message: refused (the reference would append anything).
  EXPECT_EQ(tgm_file_append_raw(f.get(), msg.data(), msg.size() - 1), TGM_ERROR_INVALID_ARG);
  EXPECT_EQ(tgm_file_append(f.get(), "{}", ptrs, lens, 2, nullptr, 0), TGM_ERROR_INVALID_ARG);
  ASSERT_TGM_OK(tgm_file_message_count(f.get(), &count));
  EXPECT_EQ(count, 3U);
  EXPECT_EQ(tgm_file_path(nullptr), nullptr);
}

TEST(CapiFile, OpenErrors) {
  tgm_file_t* f = nullptr;
  const fs::path dir = scratch_dir("open");
  EXPECT_EQ(tgm_file_open((dir / "missing.tgm").c_str(), &f), TGM_ERROR_IO);
  EXPECT_EQ(f, nullptr);
  EXPECT_NE(last_error().find("missing.tgm"), std::string::npos) << last_error();
  EXPECT_EQ(tgm_file_open(nullptr, &f), TGM_ERROR_INVALID_ARG);
  EXPECT_EQ(tgm_file_open("x.tgm", nullptr), TGM_ERROR_INVALID_ARG);
  EXPECT_EQ(tgm_file_create((dir / "missing.tgm" / "sub").c_str(), &f), TGM_ERROR_OK);  // dir made as needed
  tgm_file_close(f);
  // A regular file where a directory is needed.
  EXPECT_EQ(tgm_file_create((dir / "missing.tgm" / "sub" / "x.tgm").c_str(), &f), TGM_ERROR_IO);
  size_t n = 0;
  EXPECT_EQ(tgm_file_message_count(nullptr, &n), TGM_ERROR_INVALID_ARG);
}

TEST(CapiIterators, BufferFileAndObjectIterators) {
  const fs::path path = scratch_dir("iter") / "three.tgm";
  write_file(path, 3);
  const std::vector<uint8_t> all = read_all(path);

  tgm_buffer_iter_t* bit = nullptr;
  ASSERT_TGM_OK(tgm_buffer_iter_create(all.data(), all.size(), &bit));
  EXPECT_EQ(tgm_buffer_iter_count(bit), 3U);
  const uint8_t* slice = nullptr;
  size_t len = 0;
  size_t seen = 0;
  while (tgm_buffer_iter_next(bit, &slice, &len) == TGM_ERROR_OK) {
    EXPECT_EQ(slice, all.data() + seen * len);  // borrowed slices of the caller's buffer
    ++seen;
  }
  EXPECT_EQ(seen, 3U);
  tgm_metadata_t* meta = nullptr;
  EXPECT_EQ(tgm_decode_metadata(nullptr, 0, &meta), TGM_ERROR_INVALID_ARG);
  const std::string before = last_error();
  EXPECT_EQ(tgm_buffer_iter_next(bit, &slice, &len), TGM_ERROR_END_OF_ITER);
  EXPECT_EQ(last_error(), before);  // the end does not write the last error
  EXPECT_EQ(tgm_buffer_iter_next(bit, nullptr, &len), TGM_ERROR_INVALID_ARG);
  tgm_buffer_iter_free(bit);
  EXPECT_EQ(tgm_buffer_iter_count(nullptr), 0U);

  tgm_file_t* f = nullptr;
  ASSERT_TGM_OK(tgm_file_open(path.c_str(), &f));
  tgm_file_iter_t* fit = nullptr;
  ASSERT_TGM_OK(tgm_file_iter_create(f, &fit));
  tgm_file_close(f);  // the iterator keeps what it needs
  bytes b;
  seen = 0;
  while (tgm_file_iter_next(fit, b.out()) == TGM_ERROR_OK) {
    EXPECT_EQ(b.size(), all.size() / 3);
    ++seen;
  }
  EXPECT_EQ(seen, 3U);
  EXPECT_EQ(tgm_file_iter_next(fit, b.out()), TGM_ERROR_END_OF_ITER);
  tgm_file_iter_free(fit);

  std::vector<uint8_t> one = encode_two();
  tgm_object_iter_t* oit = nullptr;
  ASSERT_TGM_OK(tgm_object_iter_create(one.data(), one.size(), 1, 1, &oit));
  std::fill(one.begin(), one.end(), 0);  // the iterator copied the message
  std::vector<std::string> dtypes;
  tgm_message_t* m = nullptr;
  while (tgm_object_iter_next(oit, &m) == TGM_ERROR_OK) {
    EXPECT_EQ(tgm_message_num_objects(m), 1U);
    dtypes.emplace_back(tgm_object_dtype(m, 0));
    EXPECT_NE(tgm_object_hash_value(m, 0), nullptr);  // the frame's hash (the reference: none)
    tgm_metadata_t* md = nullptr;
    ASSERT_TGM_OK(tgm_message_metadata(m, &md));
    EXPECT_EQ(tgm_metadata_num_objects(md), 2U);
    tgm_metadata_free(md);
    tgm_message_free(m);
  }
  EXPECT_EQ(dtypes, (std::vector<std::string>{"float32", "int16"}));
  tgm_object_iter_free(oit);
  std::vector<uint8_t> noise(100, 1);
  EXPECT_NE(tgm_object_iter_create(noise.data(), noise.size(), 1, 0, &oit), TGM_ERROR_OK);
  tgm_file_iter_free(nullptr);
  tgm_object_iter_free(nullptr);
}

TEST(CapiStreaming, WritesOneMessageObjectByObject) {
  const fs::path path = scratch_dir("stream") / "s.tgm";
  tgm_streaming_encoder_t* enc = nullptr;
  ASSERT_TGM_OK(tgm_streaming_encoder_create(path.c_str(), R"({"experiment":"stream"})", "xxh3", 0, &enc));
  EXPECT_EQ(tgm_streaming_encoder_count(enc), 0U);
  ASSERT_TGM_OK(tgm_streaming_encoder_write_preceder(enc, R"({"mars":{"param":"2t"},"units":"K"})"));
  ASSERT_TGM_OK(tgm_streaming_encoder_write(enc, int16_descriptor_json(),
                                            reinterpret_cast<const uint8_t*>(i16_values.data()), 8));
  ASSERT_TGM_OK(tgm_streaming_encoder_write_pre_encoded(
      enc, int16_descriptor_json(), reinterpret_cast<const uint8_t*>(i16_values.data()), 8));
  EXPECT_EQ(tgm_streaming_encoder_count(enc), 2U);
  EXPECT_EQ(tgm_streaming_encoder_write_preceder(enc, "[1]"), TGM_ERROR_METADATA);
  EXPECT_EQ(tgm_streaming_encoder_write(enc, "{", reinterpret_cast<const uint8_t*>(i16_values.data()), 8),
            TGM_ERROR_METADATA);
  EXPECT_EQ(tgm_streaming_encoder_write(enc, int16_descriptor_json(), nullptr, 0), TGM_ERROR_INVALID_ARG);
  ASSERT_TGM_OK(tgm_streaming_encoder_finish(enc));
  EXPECT_EQ(tgm_streaming_encoder_count(enc), 0U);  // after finish
  EXPECT_EQ(tgm_streaming_encoder_finish(enc), TGM_ERROR_INVALID_ARG);
  EXPECT_NE(last_error().find("streaming encoder already finished"), std::string::npos) << last_error();
  EXPECT_EQ(tgm_streaming_encoder_write(enc, int16_descriptor_json(),
                                        reinterpret_cast<const uint8_t*>(i16_values.data()), 8),
            TGM_ERROR_INVALID_ARG);
  tgm_streaming_encoder_free(enc);

  const std::vector<uint8_t> msg = read_all(path);
  tgm_message_t* m = nullptr;
  ASSERT_TGM_OK(tgm_decode(msg.data(), msg.size(), 1, 0, 1, &m));
  EXPECT_EQ(tgm_message_num_objects(m), 2U);
  tgm_metadata_t* meta = nullptr;
  ASSERT_TGM_OK(tgm_message_metadata(m, &meta));
  EXPECT_STREQ(tgm_metadata_get_string_at(meta, 0, "units"), "K");
  EXPECT_STREQ(tgm_metadata_get_string(meta, "experiment"), "stream");
  tgm_metadata_free(meta);
  tgm_message_free(m);
}

TEST(CapiStreaming, OptionsAreCheckedBeforeTheFileIsCreated) {
  const fs::path path = scratch_dir("stream_opts") / "never.tgm";
  tgm_streaming_encoder_t* enc = nullptr;
  const TgmEncodeMaskOptions bad{true, true, nullptr, "bogus", nullptr, -1};
  EXPECT_EQ(tgm_streaming_encoder_create_with_options(path.c_str(), "{}", nullptr, 0, &bad, &enc),
            TGM_ERROR_INVALID_ARG);
  EXPECT_FALSE(fs::exists(path));  // the reference leaves an empty file behind
  EXPECT_EQ(tgm_streaming_encoder_create(path.c_str(), "{}", "sha1", 0, &enc), TGM_ERROR_INVALID_ARG);
  EXPECT_EQ(tgm_streaming_encoder_create(path.c_str(), R"({"descriptors":[{}]})", nullptr, 0, &enc),
            TGM_ERROR_METADATA);
  EXPECT_FALSE(fs::exists(path));

  // NaN allowed through the options variant.
  const TgmEncodeMaskOptions ok{true, false, "rle", nullptr, nullptr, 0};
  ASSERT_TGM_OK(tgm_streaming_encoder_create_with_options(path.c_str(), "{}", nullptr, 0, &ok, &enc));
  const std::vector<double> v{1.0, std::nan(""), 3.0};
  const char* desc = R"({"type":"ntensor","ndim":1,"shape":[3],"strides":[1],"dtype":"float64",
                         "encoding":"none","filter":"none","compression":"none"})";
  ASSERT_TGM_OK(tgm_streaming_encoder_write(enc, desc, reinterpret_cast<const uint8_t*>(v.data()), 24));
  ASSERT_TGM_OK(tgm_streaming_encoder_finish(enc));
  tgm_streaming_encoder_free(enc);
  EXPECT_TRUE(fs::exists(path));
  // Freed without finish: the destination is never touched.
  const fs::path other = path.parent_path() / "unfinished.tgm";
  ASSERT_TGM_OK(tgm_streaming_encoder_create(other.c_str(), "{}", nullptr, 0, &enc));
  tgm_streaming_encoder_free(enc);
  EXPECT_FALSE(fs::exists(other));
}

TEST(CapiTools, ValidateDoctorHash) {
  const std::vector<uint8_t> msg = encode_two();
  bytes out;
  ASSERT_TGM_OK(tgm_validate(msg.data(), msg.size(), nullptr, 0, out.out()));
  EXPECT_NE(out.text().find("\"hash_verified\":true"), std::string::npos) << out.text();
  ASSERT_TGM_OK(tgm_validate(msg.data(), msg.size(), "quick", 1, out.out()));
  ASSERT_TGM_OK(tgm_validate(msg.data(), msg.size(), "checksum", 0, out.out()));
  ASSERT_TGM_OK(tgm_validate(msg.data(), msg.size() - 3, "full", 0, out.out()));
  EXPECT_NE(out.text().find("\"issues\":[{"), std::string::npos) << out.text();  // OK with issues
  EXPECT_EQ(tgm_validate(msg.data(), msg.size(), "deep", 0, out.out()), TGM_ERROR_INVALID_ARG);
  EXPECT_EQ(tgm_validate(nullptr, 5, nullptr, 0, out.out()), TGM_ERROR_INVALID_ARG);
  EXPECT_EQ(tgm_validate(msg.data(), msg.size(), nullptr, 0, nullptr), TGM_ERROR_INVALID_ARG);

  const fs::path path = scratch_dir("validate") / "v.tgm";
  write_file(path, 2);
  ASSERT_TGM_OK(tgm_validate_file(path.c_str(), "default", 0, out.out()));
  EXPECT_EQ(out.text().rfind("{\"file_issues\":[]", 0), 0U) << out.text();
  EXPECT_EQ(tgm_validate_file((path.string() + ".missing").c_str(), nullptr, 0, out.out()), TGM_ERROR_IO);

  ASSERT_TGM_OK(tgm_doctor_to_json(out.out()));
  EXPECT_NE(out.text().find("\"self_test\""), std::string::npos);
  EXPECT_EQ(tgm_doctor_to_json(nullptr), TGM_ERROR_INVALID_ARG);

  bytes h1;
  bytes h2;
  ASSERT_TGM_OK(tgm_compute_hash(msg.data(), msg.size(), "xxh3", h1.out()));
  ASSERT_TGM_OK(tgm_compute_hash(msg.data(), msg.size(), "none", h2.out()));  // still xxh3
  EXPECT_EQ(h1.size(), 16U);
  EXPECT_EQ(h1.text(), h2.text());
  EXPECT_EQ(tgm_compute_hash(msg.data(), msg.size(), "md5", h1.out()), TGM_ERROR_INVALID_ARG);
  EXPECT_EQ(tgm_compute_hash(nullptr, 0, nullptr, h1.out()), TGM_ERROR_INVALID_ARG);
  const uint8_t zero = 0;
  ASSERT_TGM_OK(tgm_compute_hash(&zero, 0, nullptr, h1.out()));
  EXPECT_EQ(h1.text(), "2d06800538d394c2");  // xxh3-64 of the empty input
}

}  // namespace

// The C ABI extensions for callers that do their own I/O
// (src/capi/random_access.cpp): buffer validation against the file
// validation, the preamble reader, the layout loader over fetched regions
// (asks for the bytes it lacks, then agrees with a whole-message decode) and
// single-frame decoding against the whole-message decoders; the in-memory
// streaming encoder (src/capi/streaming.cpp).
#include <cstring>
#include <fstream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "capi_test_support.hpp"
#include "tensogram/cbor/json.hpp"
#include "tensogram/cbor/value.hpp"

namespace {

using namespace capi_test;

// A message whose float32 object is bigger than the 256 KiB layout region,
// so the layout loader cannot read it whole.
std::vector<uint8_t> encode_big(std::vector<float>& values) {
  values.resize(100000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 977) * 0.25f;
  const char* json = R"({"descriptors": [
      {"type":"ntensor","ndim":1,"shape":[100000],"strides":[1],"dtype":"float32",
       "encoding":"none","filter":"none","compression":"none"},
      {"type":"ntensor","ndim":1,"shape":[4],"strides":[1],"dtype":"int16",
       "encoding":"none","filter":"none","compression":"zstd","zstd_level":3}],
    "base": [{"name":"big"}, {"name":"small"}]})";
  const uint8_t* ptrs[2] = {reinterpret_cast<const uint8_t*>(values.data()),
                            reinterpret_cast<const uint8_t*>(i16_values.data())};
  const size_t lens[2] = {values.size() * sizeof(float), i16_values.size() * sizeof(int16_t)};
  bytes out;
  EXPECT_TGM_OK(tgm_encode(json, ptrs, lens, 2, "xxh3", 0, out.out()));
  return out.vec();
}

// doc[key], failing the test when absent.
const tensogram::cbor::value& at(const tensogram::cbor::value& doc, std::string_view key) {
  const tensogram::cbor::value* v = doc.find(key);
  EXPECT_NE(v, nullptr) << key;
  static const tensogram::cbor::value null_value;
  return v != nullptr ? *v : null_value;
}

struct layout_call {
  std::string json;
  uint64_t need_offset = 0;
  uint64_t need_length = 0;
};

layout_call layout(const std::vector<uint8_t>& msg, const std::vector<std::pair<uint64_t, uint64_t>>& have) {
  std::vector<uint64_t> offsets;
  std::vector<const uint8_t*> ptrs;
  std::vector<size_t> lens;
  for (const auto& [off, len] : have) {
    offsets.push_back(off);
    ptrs.push_back(msg.data() + off);
    lens.push_back(static_cast<size_t>(len));
  }
  layout_call c;
  bytes out;
  EXPECT_TGM_OK(tgm_layout_from_regions(msg.size(), -1, offsets.data(), ptrs.data(), lens.data(), have.size(),
                                        out.out(), &c.need_offset, &c.need_length));
  c.json = out.text();
  return c;
}

TEST(CapiRandomAccess, ValidateBufferMatchesValidateFileAndReportsGaps) {
  const std::vector<uint8_t> msg = encode_two();
  std::vector<uint8_t> buf = {'x', 'y', 'z'};
  buf.insert(buf.end(), msg.begin(), msg.end());
  buf.insert(buf.end(), msg.begin(), msg.end());
  buf.insert(buf.end(), 5, 0);
  bytes report;
  ASSERT_TGM_OK(tgm_validate_buffer(buf.data(), buf.size(), "full", 0, report.out()));
  const std::string text = report.text();
  EXPECT_NE(text.find("3 unrecognized bytes at offset 0"), std::string::npos) << text;
  EXPECT_NE(text.find("5 trailing bytes after last message at offset " + std::to_string(3 + 2 * msg.size())),
            std::string::npos)
      << text;
  const auto path = scratch_dir("validate") / "gaps.tgm";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(buf.data()), std::ssize(buf));
  bytes from_file;
  ASSERT_TGM_OK(tgm_validate_file(path.c_str(), "full", 0, from_file.out()));
  EXPECT_EQ(text, from_file.text());
  // No message at all, and a bad level.
  const std::vector<uint8_t> junk(10, 7);
  ASSERT_TGM_OK(tgm_validate_buffer(junk.data(), junk.size(), nullptr, 0, report.out()));
  EXPECT_NE(report.text().find("10 bytes with no valid messages"), std::string::npos) << report.text();
  EXPECT_EQ(tgm_validate_buffer(junk.data(), junk.size(), "thorough", 0, report.out()),
            TGM_ERROR_INVALID_ARG);
}

TEST(CapiRandomAccess, ReadPreamble) {
  const std::vector<uint8_t> msg = encode_two();
  uint64_t total = 0;
  uint16_t flags = 0;
  ASSERT_TGM_OK(tgm_read_preamble(msg.data(), 24, &total, &flags));
  EXPECT_EQ(total, msg.size());
  EXPECT_NE(flags, 0);
  EXPECT_EQ(tgm_read_preamble(msg.data(), 23, &total, &flags), TGM_ERROR_FRAMING);
  std::vector<uint8_t> bad(msg.begin(), msg.begin() + 24);
  bad[0] = 'X';
  EXPECT_EQ(tgm_read_preamble(bad.data(), bad.size(), &total, &flags), TGM_ERROR_FRAMING);
}

TEST(CapiRandomAccess, LayoutAsksForTheHeaderRegionThenAgreesWithDecode) {
  std::vector<float> values;
  const std::vector<uint8_t> msg = encode_big(values);
  ASSERT_GT(msg.size(), 256u * 1024u);
  const layout_call first = layout(msg, {});
  EXPECT_TRUE(first.json.empty());
  EXPECT_EQ(first.need_offset, 0u);
  EXPECT_EQ(first.need_length, 256u * 1024u);
  const layout_call second = layout(msg, {{first.need_offset, first.need_length}});
  ASSERT_EQ(second.need_length, 0u);
  const auto doc = tensogram::cbor::from_json_text(second.json);
  EXPECT_EQ(at(doc, "whole").as_bool(), false);
  ASSERT_TRUE(at(doc, "objects").is_array());
  const auto& objects = *at(doc, "objects").as_array();
  ASSERT_EQ(objects.size(), 2u);
  EXPECT_EQ(at(at(doc, "metadata"), "base").size(), 2u);

  // Each frame on its own decodes to what tgm_decode_object gives.
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_EQ(objects[i].size(), 2u);
    const auto off = static_cast<size_t>((*objects[i].as_array())[0].as_uint64().value_or(0));
    const auto len = static_cast<size_t>((*objects[i].as_array())[1].as_uint64().value_or(0));
    ASSERT_LE(off + len, msg.size());
    tgm_message_t* raw = nullptr;
    ASSERT_TGM_OK(tgm_decode_data_frame(msg.data() + off, len, i, 1, 1, &raw));
    const message_ptr one(raw);
    ASSERT_TGM_OK(tgm_decode_object(msg.data(), msg.size(), i, 1, 0, 1, &raw));
    const message_ptr ref(raw);
    size_t a = 0;
    size_t b = 0;
    const uint8_t* da = tgm_object_data(one.get(), 0, &a);
    const uint8_t* db = tgm_object_data(ref.get(), 0, &b);
    ASSERT_EQ(a, b);
    EXPECT_EQ(std::memcmp(da, db, a), 0);
    bytes desc;
    ASSERT_TGM_OK(tgm_data_frame_descriptor_json(msg.data() + off, len, i, desc.out()));
    EXPECT_EQ(desc.text(), tgm_object_descriptor_json(ref.get(), 0));
    if (i == 0) {
      const uint64_t offs[2] = {10, 99990};
      const uint64_t counts[2] = {3, 10};
      tgm_bytes_t parts[2] = {};
      size_t n = 0;
      ASSERT_TGM_OK(tgm_decode_data_frame_range(msg.data() + off, len, 0, offs, counts, 2, 0, parts, &n));
      ASSERT_EQ(n, 2u);
      ASSERT_EQ(parts[1].len, 10 * sizeof(float));
      EXPECT_EQ(std::memcmp(parts[0].data, values.data() + 10, 3 * sizeof(float)), 0);
      EXPECT_EQ(std::memcmp(parts[1].data, values.data() + 99990, 10 * sizeof(float)), 0);
      tgm_bytes_free(parts[0]);
      tgm_bytes_free(parts[1]);
      ASSERT_TGM_OK(tgm_decode_data_frame_range(msg.data() + off, len, 0, offs, counts, 2, 1, parts, &n));
      EXPECT_EQ(n, 1u);
      EXPECT_EQ(parts[0].len, 13 * sizeof(float));
      tgm_bytes_free(parts[0]);
    }
  }
  // A small message is read whole.
  const std::vector<uint8_t> small = encode_two();
  const layout_call s1 = layout(small, {});
  EXPECT_EQ(s1.need_length, small.size());
  const layout_call s2 = layout(small, {{0, small.size()}});
  EXPECT_EQ(at(tensogram::cbor::from_json_text(s2.json), "whole").as_bool(), true);
}

// tgm_data_frame_descriptor_from_regions over `frame`, fetching what it
// asks for until it answers; the ranges asked for, in order.
std::string descriptor_by_regions(std::span<const uint8_t> frame, size_t index,
                                  std::vector<std::pair<uint64_t, uint64_t>>& asked) {
  std::vector<uint64_t> offsets;
  std::vector<const uint8_t*> ptrs;
  std::vector<size_t> lens;
  for (int round = 0; round < 5; ++round) {
    bytes out;
    uint64_t need_off = 0;
    uint64_t need_len = 0;
    EXPECT_TGM_OK(tgm_data_frame_descriptor_from_regions(frame.size(), offsets.data(), ptrs.data(),
                                                         lens.data(), offsets.size(), index, out.out(),
                                                         &need_off, &need_len));
    if (need_len == 0) return out.text();
    EXPECT_LE(need_off + need_len, frame.size());
    asked.emplace_back(need_off, need_len);
    offsets.push_back(need_off);
    ptrs.push_back(frame.data() + need_off);
    lens.push_back(static_cast<size_t>(need_len));
  }
  ADD_FAILURE() << "no answer after 5 rounds";
  return {};
}

TEST(CapiRandomAccess, DescriptorFromRegionsReadsOnlyHeaderAndTailOfABigFrame) {
  std::vector<float> values;
  const std::vector<uint8_t> msg = encode_big(values);
  const layout_call head = layout(msg, {{0, 256 * 1024}});
  const auto doc = tensogram::cbor::from_json_text(head.json);
  const auto& objects = *at(doc, "objects").as_array();
  for (size_t i = 0; i < 2; ++i) {
    const auto off = static_cast<size_t>((*objects[i].as_array())[0].as_uint64().value_or(0));
    const auto len = static_cast<size_t>((*objects[i].as_array())[1].as_uint64().value_or(0));
    const std::span<const uint8_t> frame(msg.data() + off, len);
    bytes whole;
    ASSERT_TGM_OK(tgm_data_frame_descriptor_json(frame.data(), frame.size(), i, whole.out()));
    std::vector<std::pair<uint64_t, uint64_t>> asked;
    EXPECT_EQ(descriptor_by_regions(frame, i, asked), whole.text());
    if (i == 0) {
      // 400 KB frame: its last 8 KiB (footer and descriptor CBOR), then its header.
      ASSERT_GT(len, 64u * 1024u);
      const std::vector<std::pair<uint64_t, uint64_t>> expected = {{len - 8192, 8192}, {0, 16}};
      EXPECT_EQ(asked, expected);
    } else {
      const std::vector<std::pair<uint64_t, uint64_t>> expected = {{0, len}};
      EXPECT_EQ(asked, expected);  // a small frame whole
    }
  }
  // A frame whose header is not a data-object frame's fails once its bytes are there.
  std::vector<uint8_t> bad(msg.begin(), msg.begin() + 100 * 1024);
  std::vector<std::pair<uint64_t, uint64_t>> asked;
  bytes out;
  uint64_t o = 0;
  uint64_t l = 0;
  const uint64_t offs[2] = {0, bad.size() - 8192};
  const uint8_t* ptrs[2] = {bad.data(), bad.data() + bad.size() - 8192};
  const size_t lens[2] = {16, 8192};
  EXPECT_EQ(tgm_data_frame_descriptor_from_regions(bad.size(), offs, ptrs, lens, 2, 0, out.out(), &o, &l),
            TGM_ERROR_FRAMING);
}

TEST(CapiRandomAccess, BadFramesFail) {
  const std::vector<uint8_t> msg = encode_two();
  tgm_message_t* raw = nullptr;
  // The preamble is not a data-object frame.
  EXPECT_NE(tgm_decode_data_frame(msg.data(), 40, 0, 0, 1, &raw), TGM_ERROR_OK);
  EXPECT_EQ(raw, nullptr);
  bytes out;
  EXPECT_NE(tgm_data_frame_descriptor_json(msg.data(), 40, 0, out.out()), TGM_ERROR_OK);
  EXPECT_EQ(tgm_decode_data_frame(nullptr, 0, 0, 0, 1, &raw), TGM_ERROR_INVALID_ARG);
  uint64_t o = 0;
  uint64_t l = 0;
  EXPECT_EQ(tgm_layout_from_regions(msg.size(), -1, nullptr, nullptr, nullptr, 0, nullptr, &o, &l),
            TGM_ERROR_INVALID_ARG);
}

}  // namespace

namespace {

using namespace capi_test;

// Drains an in-memory streaming encoder.
std::vector<uint8_t> take(tgm_streaming_encoder_t* enc) {
  bytes out;
  EXPECT_TGM_OK(tgm_streaming_encoder_take(enc, out.out()));
  return out.vec();
}

TEST(CapiMemoryStreaming, SeekableGivesTheBackFilledMessageAfterFinish) {
  tgm_streaming_encoder_t* enc = nullptr;
  ASSERT_TGM_OK(tgm_streaming_encoder_create_in_memory(R"({"base":[{"a":1}]})", "xxh3", nullptr, 1, &enc));
  ASSERT_TGM_OK(tgm_streaming_encoder_write(enc, int16_descriptor_json(),
                                            reinterpret_cast<const uint8_t*>(i16_values.data()),
                                            i16_values.size() * sizeof(int16_t)));
  EXPECT_EQ(tgm_streaming_encoder_count(enc), 1u);
  EXPECT_GT(tgm_streaming_encoder_bytes_written(enc), 24u);
  EXPECT_TRUE(take(enc).empty());  // nothing before finish
  ASSERT_TGM_OK(tgm_streaming_encoder_finish(enc));
  const std::vector<uint8_t> msg = take(enc);
  EXPECT_EQ(tgm_streaming_encoder_bytes_written(enc), msg.size());
  EXPECT_TRUE(take(enc).empty());  // handed out once
  tgm_streaming_encoder_free(enc);
  uint64_t total = 0;
  uint16_t flags = 0;
  ASSERT_TGM_OK(tgm_read_preamble(msg.data(), msg.size(), &total, &flags));
  EXPECT_EQ(total, msg.size());
  tgm_message_t* raw = nullptr;
  ASSERT_TGM_OK(tgm_decode(msg.data(), msg.size(), 1, 0, 1, &raw));
  const message_ptr m(raw);
  size_t n = 0;
  const uint8_t* d = tgm_object_data(m.get(), 0, &n);
  ASSERT_EQ(n, i16_values.size() * sizeof(int16_t));
  EXPECT_EQ(std::memcmp(d, i16_values.data(), n), 0);
}

TEST(CapiMemoryStreaming, NotSeekableHandsOutEachFrameAsWritten) {
  tgm_streaming_encoder_t* enc = nullptr;
  ASSERT_TGM_OK(
      tgm_streaming_encoder_create_in_memory(R"({"base":[{"a":1},{"b":2}]})", nullptr, nullptr, 0, &enc));
  std::vector<uint8_t> all = take(enc);
  EXPECT_GE(all.size(), 24u);  // preamble and header metadata
  const auto* data = reinterpret_cast<const uint8_t*>(i16_values.data());
  ASSERT_TGM_OK(tgm_streaming_encoder_write_preceder(enc, R"({"c":3})"));
  ASSERT_TGM_OK(tgm_streaming_encoder_write(enc, int16_descriptor_json(), data, 8));
  const std::vector<uint8_t> frame = take(enc);
  EXPECT_GT(frame.size(), 8u);
  all.insert(all.end(), frame.begin(), frame.end());
  ASSERT_TGM_OK(tgm_streaming_encoder_write_pre_encoded(enc, int16_descriptor_json(), data, 8));
  ASSERT_TGM_OK(tgm_streaming_encoder_finish(enc));
  const std::vector<uint8_t> rest = take(enc);
  all.insert(all.end(), rest.begin(), rest.end());
  EXPECT_EQ(tgm_streaming_encoder_bytes_written(enc), all.size());
  tgm_streaming_encoder_free(enc);
  uint64_t total = 1;
  uint16_t flags = 0;
  ASSERT_TGM_OK(tgm_read_preamble(all.data(), all.size(), &total, &flags));
  EXPECT_EQ(total, 0u);  // not back-filled
  tgm_message_t* raw = nullptr;
  ASSERT_TGM_OK(tgm_decode(all.data(), all.size(), 1, 0, 0, &raw));
  const message_ptr m(raw);
  EXPECT_EQ(tgm_message_num_objects(m.get()), 2u);
  // A file-backed encoder has nothing to take; a NULL handle is refused.
  bytes out;
  EXPECT_EQ(tgm_streaming_encoder_take(nullptr, out.out()), TGM_ERROR_INVALID_ARG);
  EXPECT_EQ(tgm_streaming_encoder_bytes_written(nullptr), 0u);
}

}  // namespace

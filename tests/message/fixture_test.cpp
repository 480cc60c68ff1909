// Fixture conformance: every reference-written file in fixtures/tgm decodes
// to exactly what fixtures/tgm/README.md lists.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <tensogram.hpp>
#include "tensogram/cbor/json.hpp"
#include "tensogram/format/aggregate_frames.hpp"
#include "test_support.hpp"

namespace {

namespace tg = tensogram;
namespace cbor = tensogram::cbor;
using nlohmann::json;
using tgtest::bytes;
using tgtest::wire_frame;

struct frame_row {
  std::size_t offset;
  std::uint16_t type;
  std::uint64_t total_length;
  std::uint16_t flags;
  const char* slot;  // nullptr: not checked
};

// --- generic helpers --------------------------------------------------------

std::span<const std::byte> message_at(const bytes& file, const tg::scan_entry& e) {
  return std::span<const std::byte>(file).subspan(e.offset, e.length);
}

tg::message decode_span(std::span<const std::byte> msg, bool verify = false, bool native = true) {
  tg::decode_options o;
  o.verify_hash = verify;
  o.native_byte_order = native;
  return tg::decode(tg::buffer::borrowed(msg), o);
}

template <typename T>
std::vector<T> values_of(const tg::decoded_object& o) {
  std::vector<T> out(o.data_size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), o.data(), o.data_size());
  return out;
}

void expect_frames(std::span<const std::byte> msg, const std::vector<frame_row>& rows) {
  const std::vector<wire_frame> frames = tgtest::wire_frames(msg);
  ASSERT_EQ(frames.size(), rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "frame " << i);
    EXPECT_EQ(frames[i].offset, rows[i].offset);
    EXPECT_EQ(frames[i].type, rows[i].type);
    EXPECT_EQ(frames[i].total_length, rows[i].total_length);
    EXPECT_EQ(frames[i].flags, rows[i].flags);
    if (rows[i].slot != nullptr) {
      EXPECT_EQ(tg::hex16(frames[i].slot), rows[i].slot);
    }
  }
}

void expect_preamble(std::span<const std::byte> msg, std::uint16_t flags, std::uint64_t total,
                     std::uint64_t first_footer) {
  EXPECT_EQ(tgtest::be16(msg, 8), 3u);
  EXPECT_EQ(tgtest::be16(msg, 10), flags);
  EXPECT_EQ(tgtest::be64(msg, 16), total);
  const std::size_t post = msg.size() - 24;
  EXPECT_EQ(tgtest::be64(msg, post), first_footer);
  EXPECT_EQ(tgtest::be64(msg, post + 8), total);
}

const wire_frame& frame_of_type(const std::vector<wire_frame>& frames, std::uint16_t type) {
  for (const auto& f : frames) {
    if (f.type == type) return f;
  }
  throw std::runtime_error("no frame of type " + std::to_string(type));
}

void expect_index(std::span<const std::byte> msg, std::uint16_t type, std::vector<std::uint64_t> lengths,
                  std::vector<std::uint64_t> offsets) {
  const auto frames = tgtest::wire_frames(msg);
  const auto idx = tg::format::parse_index_body(tgtest::frame_body(msg, frame_of_type(frames, type)));
  EXPECT_EQ(idx.lengths, lengths);
  EXPECT_EQ(idx.offsets, offsets);
}

void expect_hashes(std::span<const std::byte> msg, std::uint16_t type, std::vector<std::string> hashes) {
  const auto frames = tgtest::wire_frames(msg);
  const auto h = tg::format::parse_hash_body(tgtest::frame_body(msg, frame_of_type(frames, type)));
  EXPECT_EQ(h.algorithm, "xxh3");
  EXPECT_EQ(h.hashes, hashes);
}

void expect_metadata_json(const tg::metadata& m, const char* expected) {
  EXPECT_EQ(json::parse(m.to_json()), json::parse(expected)) << m.to_json();
}

std::vector<std::string> keys_of(const cbor::value& v) {
  std::vector<std::string> out;
  for (const auto& e : *v.as_map()) out.push_back(*e.key.as_text());
  return out;
}

void expect_same_object(const tg::decoded_object& a, const tg::decoded_object& b) {
  EXPECT_EQ(a.descriptor(), b.descriptor());
  EXPECT_EQ(bytes(a.bytes().begin(), a.bytes().end()), bytes(b.bytes().begin(), b.bytes().end()));
  EXPECT_EQ(a.hash_slot(), b.hash_slot());
  EXPECT_EQ(a.hash_value(), b.hash_value());
  EXPECT_EQ(a.data_byte_order(), b.data_byte_order());
}

// Every object of the message decoded alone equals the full decode's.
void expect_decode_object_matches(std::span<const std::byte> msg) {
  const tg::message full = decode_span(msg);
  const tg::buffer buf = tg::buffer::borrowed(msg);
  for (std::size_t i = 0; i < full.num_objects(); ++i) {
    SCOPED_TRACE(testing::Message() << "object " << i);
    const tg::message one = tg::decode_object(buf, i);
    ASSERT_EQ(one.num_objects(), 1u);
    expect_same_object(one.object(0), full.object(i));
    EXPECT_EQ(one.global(), full.global());
  }
  try {
    (void)tg::decode_object(buf, full.num_objects());
    ADD_FAILURE() << "decode_object past the end succeeded";
  } catch (const tg::object_error& e) {
    EXPECT_NE(
        std::string(e.what()).find("object index " + std::to_string(full.num_objects()) +
                                   " out of range (num_objects=" + std::to_string(full.num_objects()) + ")"),
        std::string::npos)
        << e.what();
  }
}

// --- Quick checks: scan results ---------------------------------------------

std::vector<tg::scan_entry> legacy_offsets(std::size_t count, bool footer) {
  std::vector<tg::scan_entry> out;
  std::size_t pos = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t len = footer ? (i < 24 ? 656 : 664) : 592;
    out.push_back({pos, len});
    pos += len;
  }
  return out;
}

TEST(FixtureScan, QuickChecks) {
  using V = std::vector<tg::scan_entry>;
  EXPECT_EQ(tg::scan(tgtest::read_fixture("simple_f32.tgm")), (V{{0, 592}}));
  EXPECT_EQ(tg::scan(tgtest::read_fixture("hash_xxh3.tgm")), (V{{0, 592}}));
  EXPECT_EQ(tg::scan(tgtest::read_fixture("single-msg.tgm")), (V{{0, 592}}));
  EXPECT_EQ(tg::scan(tgtest::read_fixture("mars_metadata.tgm")), (V{{0, 624}}));
  EXPECT_EQ(tg::scan(tgtest::read_fixture("metadata_parity.tgm")), (V{{0, 1008}}));
  EXPECT_EQ(tg::scan(tgtest::read_fixture("multi_object.tgm")), (V{{0, 1120}}));
  EXPECT_EQ(tg::scan(tgtest::read_fixture("multi_object_xxh3.tgm")), (V{{0, 1120}}));
  EXPECT_EQ(tg::scan(tgtest::read_fixture("multi_message.tgm")), (V{{0, 584}, {584, 584}}));
  EXPECT_EQ(tg::scan(tgtest::read_fixture("single-msg-footer.tgm")), (V{{0, 656}}));
}

TEST(FixtureScan, LegacyFamilyOffsets) {
  EXPECT_EQ(tg::scan(tgtest::read_fixture("two-msg.tgm")), legacy_offsets(2, false));
  EXPECT_EQ(tg::scan(tgtest::read_fixture("ten-msg.tgm")), legacy_offsets(10, false));
  EXPECT_EQ(tg::scan(tgtest::read_fixture("hundred-msg.tgm")), legacy_offsets(100, false));
  EXPECT_EQ(tg::scan(tgtest::read_fixture("thousand-msg.tgm")), legacy_offsets(1000, false));
  EXPECT_EQ(tg::scan(tgtest::read_fixture("ten-msg-footer.tgm")), legacy_offsets(10, true));
  const auto hundred = tg::scan(tgtest::read_fixture("hundred-msg-footer.tgm"));
  EXPECT_EQ(hundred, legacy_offsets(100, true));
  ASSERT_EQ(hundred.size(), 100u);
  EXPECT_EQ(hundred[24].offset, 15744u);
  EXPECT_EQ(hundred[99].offset, 15744u + 664u * 75u);
  const auto thousand = tg::scan(tgtest::read_fixture("thousand-msg-footer.tgm"));
  EXPECT_EQ(thousand, legacy_offsets(1000, true));
  ASSERT_EQ(thousand.size(), 1000u);
  EXPECT_EQ(thousand[999].offset + thousand[999].length, 663808u);
}

TEST(FixtureScan, StreamingTail) {
  const auto file = tgtest::read_fixture("streaming-tail.tgm");
  std::vector<tg::scan_entry> expected = legacy_offsets(9, false);
  expected.push_back({5328, 656});
  EXPECT_EQ(tg::scan(file), expected);
  EXPECT_EQ(tg::format::forward_scan(file, 0, file.size()), expected);
  // The raw C++-wrapper signature agrees.
  EXPECT_EQ(tg::scan(reinterpret_cast<const std::uint8_t*>(file.data()), file.size()), expected);
}

// --- simple_f32 / hash_xxh3 -------------------------------------------------

constexpr const char* k_simple_meta = R"({"base": [{"product": "efi", "parameter": "pressure",
  "_reserved_": {"tensor": {"ndim": 1, "dtype": "float32", "shape": [4], "strides": [1]}}}],
  "_reserved_": {"time": "2026-04-29T18:12:46Z", "uuid": "%UUID%",
                 "encoder": {"name": "tensogram", "version": "0.20.0"}}})";

std::string with_uuid(const char* tmpl, const std::string& uuid) {
  std::string s = tmpl;
  s.replace(s.find("%UUID%"), 6, uuid);
  return s;
}

void check_simple_f32_like(const char* name, const char* uuid, const char* meta_slot) {
  SCOPED_TRACE(name);
  const auto file = tgtest::read_fixture(name);
  ASSERT_EQ(file.size(), 592u);
  expect_preamble(file, 0x0095, 592, 568);
  expect_frames(file, {{24, 1, 245, 0x0002, meta_slot},
                       {272, 2, 52, 0x0002, "0ff45fc0f9ff4638"},
                       {328, 3, 69, 0x0002, "8b56353cce8fa1e2"},
                       {400, 9, 162, 0x0003, "3aeac8603f519c1d"}});
  expect_index(file, 2, {162}, {400});
  expect_hashes(file, 3, {"3aeac8603f519c1d"});

  const tg::message m = decode_span(file);
  ASSERT_EQ(m.num_objects(), 1u);
  const tg::decoded_object& o = m.object(0);
  EXPECT_EQ(o.dtype_string(), "float32");
  EXPECT_EQ(o.shape(), (std::vector<std::uint64_t>{4}));
  EXPECT_EQ(o.strides(), (std::vector<std::uint64_t>{1}));
  EXPECT_EQ(o.ndim(), 1u);
  EXPECT_EQ(o.object_type(), "ntensor");
  EXPECT_EQ(o.encoding(), "none");
  EXPECT_EQ(o.filter(), "none");
  EXPECT_EQ(o.compression(), "none");
  EXPECT_EQ(o.descriptor().byte_order, tg::byte_order::big);
  EXPECT_EQ(values_of<float>(o), (std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f}));
  EXPECT_TRUE(o.has_hash());
  EXPECT_EQ(o.hash_type(), "xxh3");
  EXPECT_EQ(o.hash_value(), "3aeac8603f519c1d");
  expect_metadata_json(m.get_metadata(), with_uuid(k_simple_meta, uuid).c_str());
  expect_metadata_json(tg::decode_metadata(file), with_uuid(k_simple_meta, uuid).c_str());
  EXPECT_EQ(keys_of(m.global().base[0]), (std::vector<std::string>{"product", "parameter", "_reserved_"}));
  EXPECT_EQ(keys_of(m.global().reserved), (std::vector<std::string>{"time", "uuid", "encoder"}));

  // Stored order is big endian: with native_byte_order=false the bytes are
  // exactly the payload.
  const tg::message raw = decode_span(file, false, false);
  EXPECT_EQ(tgtest::to_hex(raw.object(0).bytes()), "3f800000400000004040000040800000");
  EXPECT_EQ(raw.object(0).byte_order_string(), "big");
  // Converted to the host's order, the object still reports the declared
  // order (issue 24; spec 07 C2.4 tgm_object_byte_order).
  EXPECT_EQ(o.data_byte_order(), tg::native_byte_order());
  EXPECT_EQ(o.byte_order_string(), "big");

  EXPECT_NO_THROW((void)decode_span(file, true));
  EXPECT_NO_THROW(tg::verify_hashes(file));
  EXPECT_NO_THROW(tg::verify_hashes(file, 0));
  expect_decode_object_matches(file);
}

TEST(Fixture, SimpleF32) {
  check_simple_f32_like("simple_f32.tgm", "dca6fc66-2daf-4742-ba5f-db69ccb69eac", "0a23ff60cb2ee306");
}
TEST(Fixture, HashXxh3) {
  check_simple_f32_like("hash_xxh3.tgm", "269132fe-d5bd-4882-8136-99149de0a855", "65ee51433d4656bd");
}

TEST(Fixture, SimpleF32DataFrameBytesIdenticalInHashXxh3) {
  const auto a = tgtest::read_fixture("simple_f32.tgm");
  const auto b = tgtest::read_fixture("hash_xxh3.tgm");
  EXPECT_EQ(tgtest::slice(a, 272, 592 - 272), tgtest::slice(b, 272, 592 - 272));
}

// --- mars_metadata ----------------------------------------------------------

TEST(Fixture, MarsMetadata) {
  const auto file = tgtest::read_fixture("mars_metadata.tgm");
  ASSERT_EQ(file.size(), 624u);
  expect_preamble(file, 0x0095, 624, 600);
  expect_frames(file, {{24, 1, 245, 0x0002, "64dd88e5b6090b81"},
                       {272, 2, 52, 0x0002, "0222161d34684a69"},
                       {328, 3, 69, 0x0002, "337c8921617a89be"},
                       {400, 9, 196, 0x0003, "f7900060cb273635"}});
  expect_index(file, 2, {196}, {400});
  expect_hashes(file, 3, {"f7900060cb273635"});
  const tg::message m = decode_span(file);
  ASSERT_EQ(m.num_objects(), 1u);
  const auto& o = m.object(0);
  EXPECT_EQ(o.dtype_string(), "float64");
  EXPECT_EQ(o.shape(), (std::vector<std::uint64_t>{2, 3}));
  EXPECT_EQ(o.strides(), (std::vector<std::uint64_t>{3, 1}));
  EXPECT_EQ(o.descriptor().byte_order, tg::byte_order::big);
  EXPECT_EQ(o.data_size(), 48u);
  EXPECT_EQ(values_of<double>(o), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(o.hash_value(), "f7900060cb273635");
  expect_metadata_json(m.get_metadata(), R"({"base": [{"mars": {"step": 12, "type": "fc", "class": "od"},
      "_reserved_": {"tensor": {"ndim": 2, "dtype": "float64", "shape": [2, 3], "strides": [3, 1]}}}],
      "_reserved_": {"time": "2026-04-29T18:12:46Z", "uuid": "72eaa915-3e0d-4b23-9f7f-88fd56226903",
                     "encoder": {"name": "tensogram", "version": "0.20.0"}}})");
  EXPECT_EQ(keys_of(*m.global().base[0].find("mars")), (std::vector<std::string>{"step", "type", "class"}));
  EXPECT_EQ(m.get_metadata().get_string("mars.class"), "od");
  EXPECT_EQ(m.get_metadata().get_int("mars.step"), 12);
  EXPECT_NO_THROW((void)decode_span(file, true));
  expect_decode_object_matches(file);
}

// --- multi_message ------------------------------------------------------------

TEST(Fixture, MultiMessage) {
  const auto file = tgtest::read_fixture("multi_message.tgm");
  ASSERT_EQ(file.size(), 1168u);
  const auto entries = tg::scan(file);
  ASSERT_EQ(entries.size(), 2u);
  const char* data_slots[] = {"8bf8d227c9d389b5", "b171799d18bb401b"};
  const char* meta_slots[] = {"089d8445cd31a124", "aa4ad01ff60c7fa0"};
  const char* uuids[] = {"f2e6d91c-00ac-4cdf-b2fa-3fc8ea928304", "deed781d-f299-4c8c-a921-b2b94fc32081"};
  const std::vector<float> values[] = {{1.0f, 2.0f}, {3.0f, 4.0f}};
  for (std::size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE(i);
    const auto msg = message_at(file, entries[i]);
    expect_preamble(msg, 0x0095, 584, 560);
    expect_frames(msg, {{24, 1, 245, 0x0002, meta_slots[i]},
                        {272, 2, 52, 0x0002, nullptr},
                        {328, 3, 69, 0x0002, nullptr},
                        {400, 9, 154, 0x0003, data_slots[i]}});
    expect_index(msg, 2, {154}, {400});
    expect_hashes(msg, 3, {data_slots[i]});
    const tg::message m = decode_span(msg, true);
    ASSERT_EQ(m.num_objects(), 1u);
    EXPECT_EQ(values_of<float>(m.object(0)), values[i]);
    EXPECT_EQ(m.object(0).shape(), (std::vector<std::uint64_t>{2}));
    EXPECT_EQ(m.object(0).hash_value(), data_slots[i]);
    expect_metadata_json(m.get_metadata(), with_uuid(R"({"base": [{"product": "efi", "parameter": "pressure",
      "_reserved_": {"tensor": {"ndim": 1, "dtype": "float32", "shape": [2], "strides": [1]}}}],
      "_reserved_": {"time": "2026-04-29T18:12:46Z", "uuid": "%UUID%",
                     "encoder": {"name": "tensogram", "version": "0.20.0"}}})",
                                                     uuids[i])
                                               .c_str());
  }
  // Decoding the whole file decodes its first message only.
  const tg::message first = decode_span(file);
  EXPECT_EQ(values_of<float>(first.object(0)), values[0]);
}

// --- multi_object / multi_object_xxh3 ---------------------------------------------

constexpr const char* k_multi_meta = R"({"base": [
  {"product": "efi", "parameter": "temperature",
   "_reserved_": {"tensor": {"ndim": 1, "dtype": "float32", "shape": [2], "strides": [1]}}},
  {"product": "efi", "parameter": "pressure",
   "_reserved_": {"tensor": {"ndim": 1, "dtype": "int64", "shape": [3], "strides": [1]}}},
  {"product": "efi", "parameter": "humidity",
   "_reserved_": {"tensor": {"ndim": 1, "dtype": "uint8", "shape": [5], "strides": [1]}}}],
  "_reserved_": {"time": "2026-04-29T18:12:46Z", "uuid": "%UUID%",
                 "encoder": {"name": "tensogram", "version": "0.20.0"}}})";

void check_multi_object(const char* name, const char* uuid, const char* meta_slot) {
  SCOPED_TRACE(name);
  const auto file = tgtest::read_fixture(name);
  ASSERT_EQ(file.size(), 1120u);
  expect_preamble(file, 0x0095, 1120, 1096);
  expect_frames(file, {{24, 1, 424, 0x0002, meta_slot},
                       {448, 2, 62, 0x0002, "66c1c82f4ebf9343"},
                       {512, 3, 103, 0x0002, "3e3f2710e45d0e90"},
                       {616, 9, 154, 0x0003, "5070b59b0b67dfe8"},
                       {776, 9, 168, 0x0003, "909a18335778f3de"},
                       {944, 9, 149, 0x0003, "dca3a5038096aed3"}});
  expect_index(file, 2, {154, 168, 149}, {616, 776, 944});
  expect_hashes(file, 3, {"5070b59b0b67dfe8", "909a18335778f3de", "dca3a5038096aed3"});

  const tg::message m = decode_span(file, true);
  ASSERT_EQ(m.num_objects(), 3u);
  EXPECT_EQ(m.object(0).dtype_string(), "float32");
  EXPECT_EQ(values_of<float>(m.object(0)), (std::vector<float>{1.5f, 2.5f}));
  EXPECT_EQ(m.object(1).dtype_string(), "int64");
  EXPECT_EQ(values_of<std::int64_t>(m.object(1)), (std::vector<std::int64_t>{100, -200, 300}));
  EXPECT_EQ(m.object(2).dtype_string(), "uint8");
  EXPECT_EQ(values_of<std::uint8_t>(m.object(2)), (std::vector<std::uint8_t>{10, 20, 30, 40, 50}));
  const char* slots[] = {"5070b59b0b67dfe8", "909a18335778f3de", "dca3a5038096aed3"};
  const std::vector<std::uint64_t> shapes[] = {{2}, {3}, {5}};
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(m.object(i).hash_value(), slots[i]);
    EXPECT_EQ(m.object(i).shape(), shapes[i]);
    EXPECT_EQ(m.object(i).strides(), (std::vector<std::uint64_t>{1}));
    EXPECT_EQ(m.object(i).descriptor().byte_order, tg::byte_order::big);
  }
  // Descriptor CBOR lengths 110, 108, 108 (frame = 16 + payload + cbor + 20).
  EXPECT_EQ(154u - 36u - 8u, 110u);
  EXPECT_EQ(cbor::encode(m.object(0).descriptor().to_cbor()).size(), 110u);
  EXPECT_EQ(cbor::encode(m.object(1).descriptor().to_cbor()).size(), 108u);
  EXPECT_EQ(cbor::encode(m.object(2).descriptor().to_cbor()).size(), 108u);
  expect_metadata_json(m.get_metadata(), with_uuid(k_multi_meta, uuid).c_str());
  // The uint8 object needs no conversion: a zero-copy view into the input.
  EXPECT_TRUE(m.object(2).is_view());
  expect_decode_object_matches(file);
}

TEST(Fixture, MultiObject) {
  check_multi_object("multi_object.tgm", "b294748b-ed13-496e-b05a-62d13b6ecee7", "68be2f8d4e30fdbe");
}
TEST(Fixture, MultiObjectXxh3) {
  check_multi_object("multi_object_xxh3.tgm", "120c8c09-6cda-43b8-99af-87de8f293c29", "d6e7ad74a47844a8");
  const auto a = tgtest::read_fixture("multi_object.tgm");
  const auto b = tgtest::read_fixture("multi_object_xxh3.tgm");
  EXPECT_EQ(tgtest::slice(a, 448, 1120 - 448), tgtest::slice(b, 448, 1120 - 448));
}

TEST(Fixture, ComputeCommonOverMultiObject) {
  const tg::message m = decode_span(tgtest::read_fixture("multi_object.tgm"));
  const tg::common_split split = tg::compute_common(m.global().base);
  EXPECT_EQ(split.common, cbor::value::make_map({{"product", "efi"}}));
  ASSERT_EQ(split.remaining.size(), 3u);
  EXPECT_EQ(split.remaining[0], cbor::value::make_map({{"parameter", "temperature"}}));
  EXPECT_EQ(split.remaining[1], cbor::value::make_map({{"parameter", "pressure"}}));
  EXPECT_EQ(split.remaining[2], cbor::value::make_map({{"parameter", "humidity"}}));
}

// --- metadata_parity ----------------------------------------------------------

TEST(Fixture, MetadataParityLayoutAndValues) {
  const auto file = tgtest::read_fixture("metadata_parity.tgm");
  ASSERT_EQ(file.size(), 1008u);
  expect_preamble(file, 0x0095, 1008, 984);
  expect_frames(file, {{24, 1, 444, 0x0002, "567d9e3ad1a0e6c8"},
                       {472, 2, 57, 0x0002, "14be06d4e6d8cc02"},
                       {536, 3, 86, 0x0002, "3e112343f3877d5b"},
                       {624, 9, 175, 0x0003, "cc95ba98e6c565bd"},
                       {800, 9, 181, 0x0003, "23dc4589556b96f1"}});
  expect_index(file, 2, {175, 181}, {624, 800});
  expect_hashes(file, 3, {"cc95ba98e6c565bd", "23dc4589556b96f1"});
  const tg::message m = decode_span(file, true);
  ASSERT_EQ(m.num_objects(), 2u);
  EXPECT_EQ(m.object(0).dtype_string(), "float32");
  EXPECT_EQ(m.object(0).shape(), (std::vector<std::uint64_t>{2, 3}));
  EXPECT_EQ(m.object(0).strides(), (std::vector<std::uint64_t>{3, 1}));
  EXPECT_EQ(m.object(0).descriptor().byte_order, tg::byte_order::little);
  EXPECT_EQ(values_of<float>(m.object(0)), std::vector<float>(6, 0.0f));
  EXPECT_EQ(m.object(1).dtype_string(), "float64");
  EXPECT_EQ(m.object(1).shape(), (std::vector<std::uint64_t>{4}));
  EXPECT_EQ(m.object(1).descriptor().byte_order, tg::byte_order::little);
  EXPECT_EQ(values_of<double>(m.object(1)), std::vector<double>(4, 0.0));
  EXPECT_EQ(m.object(0).hash_value(), "cc95ba98e6c565bd");
  EXPECT_EQ(m.object(1).hash_value(), "23dc4589556b96f1");
  expect_metadata_json(m.get_metadata(), R"({"base": [{"big": 2147483648, "flag": true,
      "mars": {"class": "od", "stream": "oper"}, "note": "", "count": -5, "level": 0, "only0": "x",
      "ratio": 0.5, "levels": [1000, 850, 500], "shortName": "2t",
      "_reserved_": {"tensor": {"ndim": 2, "dtype": "float32", "shape": [2, 3], "strides": [3, 1]}}},
     {"mars": {"class": "ea"}, "shortName": "msl",
      "_reserved_": {"tensor": {"ndim": 1, "dtype": "float64", "shape": [4], "strides": [1]}}}],
     "_extra_": {"source": "parity-fixture"},
     "_reserved_": {"time": "2026-07-21T16:02:55Z", "uuid": "3f2fd670-97c3-4e1a-8bac-83ca3e36b177",
                    "encoder": {"name": "tensogram", "version": "0.23.0"}}})");
  EXPECT_EQ(keys_of(m.global().base[0]),
            (std::vector<std::string>{"big", "flag", "mars", "note", "count", "level", "only0", "ratio",
                                      "levels", "shortName", "_reserved_"}));
  // Wire encodings called out by the README.
  const std::string body = tgtest::to_hex(tgtest::frame_body(file, tgtest::wire_frames(file)[0]));
  EXPECT_NE(body.find("65726174696ff93800"), std::string::npos);    // "ratio": f9 38 00
  EXPECT_NE(body.find("636269671a80000000"), std::string::npos);    // "big": 1a 80 00 00 00
  EXPECT_NE(body.find("65636f756e7424"), std::string::npos);        // "count": 24
  EXPECT_NE(body.find("646e6f746560"), std::string::npos);          // "note": 60
  EXPECT_NE(body.find("64666c6167f5"), std::string::npos);          // "flag": f5
  EXPECT_NE(body.find("831903e81903521901f4"), std::string::npos);  // levels
  // Little-endian payloads are zero-copy views on a little-endian host.
  if (tg::native_byte_order() == tg::byte_order::little) {
    EXPECT_TRUE(m.object(0).is_view());
    EXPECT_TRUE(tg::buffer::borrowed(file).contains(m.object(0).bytes()));
  }
  expect_decode_object_matches(file);
}

TEST(Fixture, MetadataParityLookups) {
  const tg::message msg = decode_span(tgtest::read_fixture("metadata_parity.tgm"));
  const tg::metadata md = msg.get_metadata();
  // Dotted paths, first match across base, then _extra_.
  ASSERT_TRUE(md.get("mars.class").has_value());
  EXPECT_EQ(md.get("mars.class")->as_string(), "od");
  EXPECT_EQ(md.get("mars.stream")->as_string(), "oper");
  EXPECT_EQ(md.get_at(1, "mars.class")->as_string(), "ea");
  EXPECT_EQ(md.get_at(0, "mars.class")->as_string(), "od");
  EXPECT_FALSE(md.get_at(1, "mars.stream").has_value());
  EXPECT_FALSE(md.get_at(2, "mars.class").has_value());
  EXPECT_EQ(md.get("source")->as_string(), "parity-fixture");
  EXPECT_EQ(md.get("_extra_.source")->as_string(), "parity-fixture");
  EXPECT_EQ(md.get("extra.source")->as_string(), "parity-fixture");
  EXPECT_FALSE(md.get("_extra_").has_value());
  EXPECT_FALSE(md.get("extra").has_value());
  EXPECT_FALSE(md.get_at(0, "source").has_value());  // no fallback per object
  EXPECT_EQ(md.get("only0")->as_string(), "x");
  EXPECT_TRUE(md.contains("only0"));
  EXPECT_TRUE(md.contains_at(0, "only0"));
  EXPECT_FALSE(md.contains_at(1, "only0"));
  EXPECT_EQ(md.get("shortName")->as_string(), "2t");
  EXPECT_EQ(md.get_at(1, "shortName")->as_string(), "msl");
  // _reserved_ is not reachable by path.
  EXPECT_FALSE(md.get("_reserved_.tensor").has_value());
  EXPECT_FALSE(md.get("_reserved_").has_value());
  EXPECT_FALSE(md.get("_reserved_.time").has_value());
  EXPECT_FALSE(md.get_at(0, "_reserved_.tensor").has_value());
  EXPECT_FALSE(md.get_at(0, "_reserved_").has_value());
  EXPECT_FALSE(md.contains("tensor"));
  // Arrays are not addressable; empty paths find nothing.
  EXPECT_FALSE(md.get("levels.0").has_value());
  EXPECT_FALSE(md.get("").has_value());
  EXPECT_FALSE(md.get(".mars").has_value());
  EXPECT_FALSE(md.get("mars.").has_value());
  EXPECT_FALSE(md.get("mars.class.x").has_value());
  EXPECT_FALSE(md.get("missing").has_value());

  // Typed accessors.
  EXPECT_EQ(md.try_get_int("count"), -5);
  EXPECT_FALSE(md.try_get_uint("count").has_value());
  EXPECT_EQ(md.try_get_uint("big"), 2147483648u);
  EXPECT_EQ(md.try_get_int("big"), 2147483648);
  EXPECT_EQ(md.try_get_int("level"), 0);
  EXPECT_EQ(md.try_get_double("ratio"), 0.5);
  EXPECT_EQ(md.try_get_double("count"), -5.0);  // integer widened
  EXPECT_FALSE(md.try_get_int("ratio").has_value());
  EXPECT_EQ(md.try_get_string("note"), "");
  EXPECT_EQ(md.try_get_string("shortName"), "2t");
  EXPECT_FALSE(md.try_get_string("count").has_value());
  EXPECT_EQ(md.try_get_bool("flag"), true);
  EXPECT_FALSE(md.try_get_bool("note").has_value());
  EXPECT_FALSE(md.try_get_double("note").has_value());
  EXPECT_FALSE(md.try_get_int("missing").has_value());

  // Legacy getters: `version` pseudo-key, coercing string getter, defaults.
  EXPECT_EQ(md.version(), 3u);
  EXPECT_EQ(md.get_string("version"), "3");
  EXPECT_EQ(md.get_int("version"), 3);
  EXPECT_EQ(md.get_string("mars.class"), "od");
  EXPECT_EQ(md.get_string("count"), "-5");
  EXPECT_EQ(md.get_string("big"), "2147483648");
  EXPECT_EQ(md.get_string("ratio"), "0.5");
  EXPECT_EQ(md.get_string("flag"), "true");
  EXPECT_EQ(md.get_string("mars"), "");
  EXPECT_EQ(md.get_string("missing"), "");
  EXPECT_EQ(md.get_int("count"), -5);
  EXPECT_EQ(md.get_int("missing", 7), 7);
  EXPECT_EQ(md.get_int("ratio", 9), 9);
  EXPECT_EQ(md.get_int("shortName", 11), 11);
  EXPECT_EQ(md.get_float("ratio"), 0.5);
  EXPECT_EQ(md.get_float("count"), -5.0);
  EXPECT_EQ(md.get_float("missing", 1.25), 1.25);
  EXPECT_EQ(md.get_string_at(1, "mars.class"), "ea");
  EXPECT_EQ(md.get_string_at(5, "mars.class"), "");
  EXPECT_EQ(md.get_int_at(0, "big"), 2147483648);
  EXPECT_EQ(md.get_int_at(1, "count", -1), -1);
  EXPECT_EQ(md.get_float_at(0, "ratio"), 0.5);

  // meta_value cursors.
  const tg::meta_value levels = *md.get("levels");
  EXPECT_TRUE(levels.is_array());
  ASSERT_EQ(levels.size(), 3u);
  EXPECT_EQ(levels.at(1)->as_int(), 850);
  EXPECT_FALSE(levels.at(3).has_value());
  EXPECT_EQ(levels[2].as_int(), 500);
  EXPECT_FALSE(levels[3].valid());
  std::vector<std::int64_t> seen;
  for (const tg::meta_value v : levels) seen.push_back(*v.as_int());
  EXPECT_EQ(seen, (std::vector<std::int64_t>{1000, 850, 500}));
  const tg::meta_value mars = *md.get("mars");
  EXPECT_TRUE(mars.is_map());
  EXPECT_EQ(mars.size(), 2u);
  EXPECT_EQ(mars.key_at(0), "class");
  EXPECT_EQ(mars.value_at(1)->as_string(), "oper");
  EXPECT_FALSE(mars.key_at(2).has_value());
  EXPECT_FALSE(mars.value_at(2).has_value());
  EXPECT_TRUE(mars.contains("stream"));
  EXPECT_FALSE(mars.contains("param"));
  EXPECT_FALSE(mars.get("param").has_value());
  EXPECT_FALSE(levels.get("class").has_value());  // not a map
  EXPECT_FALSE(mars.at(0).has_value());           // not an array
  EXPECT_EQ(md.get("ratio")->type(), tg::value_type::floating);
  EXPECT_EQ(md.get("flag")->type(), tg::value_type::boolean);
  EXPECT_EQ(md.get("count")->type(), tg::value_type::integer);
  // Enumerating an object includes _reserved_.
  const tg::meta_value obj0 = md.object(0);
  EXPECT_EQ(obj0.size(), 11u);
  EXPECT_EQ(obj0.key_at(10), "_reserved_");
  EXPECT_EQ(obj0.get("_reserved_")->get("tensor")->get("ndim")->as_int(), 2);
  EXPECT_FALSE(md.object(2).valid());
  EXPECT_EQ(md.extra().get("source")->as_string(), "parity-fixture");
  EXPECT_EQ(md.reserved().get("uuid")->as_string(), "3f2fd670-97c3-4e1a-8bac-83ca3e36b177");
  EXPECT_EQ(md.num_objects(), 2u);
  EXPECT_EQ(json::parse(md.object_to_json(1)), json::parse(R"({"mars": {"class": "ea"}, "shortName": "msl",
                "_reserved_": {"tensor": {"ndim": 1, "dtype": "float64", "shape": [4], "strides": [1]}}})"));
  EXPECT_EQ(md.object_to_json(2), "");
}

TEST(Fixture, MetadataParityComputeCommon) {
  const tg::message m = decode_span(tgtest::read_fixture("metadata_parity.tgm"));
  const tg::common_split split = tg::compute_common(m.global().base);
  EXPECT_EQ(split.common.size(), 0u);  // mars and shortName differ; the rest is only in base[0]
  ASSERT_EQ(split.remaining.size(), 2u);
  EXPECT_EQ(split.remaining[0].size(), 10u);  // everything but _reserved_
  EXPECT_EQ(split.remaining[1], cbor::value::make_map({{"mars", cbor::value::make_map({{"class", "ea"}})},
                                                       {"shortName", "msl"}}));
}

// --- legacy-hash family -----------------------------------------------------------

std::string legacy_base_json(std::size_t i, bool with_reserved) {
  std::string s = R"({"fixture": {"shape": [4], "msg_index": )" + std::to_string(i) + "}";
  if (with_reserved)
    s += R"(, "_reserved_": {"tensor": {"ndim": 1, "dtype": "float32", "shape": [4], "strides": [1]}})";
  return s + "}";
}

// Full checks of message i of a legacy file.
void check_legacy_message(std::span<const std::byte> msg, std::size_t i, bool footer,
                          bool streaming = false) {
  SCOPED_TRACE(testing::Message() << "message " << i);
  const std::uint64_t len = footer ? (i < 24 ? 656 : 664) : 592;
  ASSERT_EQ(msg.size(), len);
  const std::uint64_t meta_len = i < 24 ? 242 : (i < 256 ? 243 : 244);
  if (!footer) {
    expect_preamble(msg, 0x0095, 592, 568);
    expect_frames(msg, {{24, 1, meta_len, 0x0000, nullptr},
                        {272, 2, 52, 0x0000, nullptr},
                        {328, 3, 69, 0x0000, nullptr},
                        {400, 9, 165, 0x0001, nullptr}});
    expect_index(msg, 2, {165}, {400});
  } else {
    const std::size_t shift = i < 24 ? 0 : 8;
    const std::uint64_t header_len = i < 24 ? 64 : (i < 256 ? 65 : 66);
    expect_preamble(msg, 0x00EB, streaming ? 0 : len, 256 + shift);
    expect_frames(msg, {{24, 1, header_len, 0x0000, nullptr},
                        {88 + shift, 9, 165, 0x0001, nullptr},
                        {256 + shift, 7, meta_len, 0x0000, nullptr},
                        {504 + shift, 5, 69, 0x0000, nullptr},
                        {576 + shift, 6, i < 24 ? 51u : 51u, 0x0000, nullptr}});
    expect_index(msg, 6, {165}, {88 + shift});
  }
  const auto frames = tgtest::wire_frames(msg);
  const wire_frame& data = frame_of_type(frames, 9);
  expect_hashes(msg, footer ? 5 : 3, {tg::hex16(data.slot)});
  // The legacy slot is a correct digest even though the flag is clear.
  EXPECT_EQ(data.slot, tg::format::xxh3_64(tgtest::frame_body(msg, data)));

  const tg::message m = decode_span(msg);
  ASSERT_EQ(m.num_objects(), 1u);
  const tg::decoded_object& o = m.object(0);
  EXPECT_EQ(o.dtype_string(), "float32");
  EXPECT_EQ(o.shape(), (std::vector<std::uint64_t>{4}));
  EXPECT_EQ(o.descriptor().byte_order, tg::byte_order::little);
  const auto f = static_cast<float>(i);
  EXPECT_EQ(values_of<float>(o), (std::vector<float>{f, f + 1, f + 2, f + 3}));
  EXPECT_FALSE(o.has_hash());
  EXPECT_EQ(o.hash_value(), "");
  EXPECT_EQ(o.hash_type(), "");
  EXPECT_EQ(cbor::encode(o.descriptor().to_cbor()).size(), 113u);

  const tg::global_metadata& g = m.global();
  ASSERT_EQ(g.base.size(), 1u);
  EXPECT_EQ(cbor::to_json(g.base[0]), json::parse(legacy_base_json(i, true)));
  EXPECT_EQ(*g.reserved.find("time")->as_text(), "2026-04-26T01:40:38Z");
  EXPECT_EQ(cbor::to_json(*g.reserved.find("encoder")),
            json::parse(R"({"name": "tensogram", "version": "0.19.0"})"));
  EXPECT_EQ(g.reserved.find("uuid")->as_text()->size(), 36u);
  EXPECT_EQ(keys_of(*g.base[0].find("fixture")), (std::vector<std::string>{"shape", "msg_index"}));

  const tg::metadata header = tg::decode_metadata(msg);
  if (footer) {
    // Metadata-only decode returns the header frame: the caller's metadata.
    EXPECT_EQ(json::parse(header.to_json()), json::parse("{\"base\": [" + legacy_base_json(i, false) + "]}"));
    EXPECT_EQ(header.global().reserved.size(), 0u);
    EXPECT_NE(header.global(), g);
  } else {
    EXPECT_EQ(header.global(), g);
  }

  try {
    (void)decode_span(msg, true);
    ADD_FAILURE() << "verify_hash accepted a legacy message";
  } catch (const tg::missing_hash_error& e) {
    EXPECT_EQ(e.object_index(), 0u);
    EXPECT_NE(std::string(e.what()).find("object 0 has no inline hash recorded"), std::string::npos);
  }
  EXPECT_THROW(tg::verify_hashes(msg), tg::missing_hash_error);
  tg::decode_options verify;
  verify.verify_hash = true;
  EXPECT_THROW((void)tg::decode_object(tg::buffer::borrowed(msg), 0, verify), tg::missing_hash_error);
  expect_decode_object_matches(msg);
}

void check_legacy_file(const char* name, std::size_t count, bool footer) {
  SCOPED_TRACE(name);
  const auto file = tgtest::read_fixture(name);
  const auto entries = tg::scan(file);
  ASSERT_EQ(entries, legacy_offsets(count, footer));
  for (std::size_t i = 0; i < count; ++i) check_legacy_message(message_at(file, entries[i]), i, footer);
}

TEST(FixtureLegacy, SingleMsg) {
  check_legacy_file("single-msg.tgm", 1, false);
  const auto file = tgtest::read_fixture("single-msg.tgm");
  expect_frames(file, {{24, 1, 242, 0, "23736e45f1c7c92c"},
                       {272, 2, 52, 0, "d5b2ec625aeaff94"},
                       {328, 3, 69, 0, "a67aefe756829841"},
                       {400, 9, 165, 0x0001, "21070680e38be39e"}});
  EXPECT_EQ(*decode_span(file).global().reserved.find("uuid")->as_text(),
            "7771f01c-c1f4-4f7c-a797-1e4b20471a91");
  EXPECT_EQ(tgtest::to_hex(tgtest::slice(file, 416, 16)), "000000000000803f0000004000004040");
}
TEST(FixtureLegacy, TwoMsg) {
  check_legacy_file("two-msg.tgm", 2, false);
  const auto file = tgtest::read_fixture("two-msg.tgm");
  EXPECT_EQ(tg::hex16(tgtest::wire_frames(tgtest::slice(file, 0, 592))[3].slot), "21070680e38be39e");
  EXPECT_EQ(tg::hex16(tgtest::wire_frames(tgtest::slice(file, 592, 592))[3].slot), "724b4d5b2b51066f");
}
TEST(FixtureLegacy, TenMsg) {
  check_legacy_file("ten-msg.tgm", 10, false);
}
TEST(FixtureLegacy, HundredMsg) {
  check_legacy_file("hundred-msg.tgm", 100, false);
}
TEST(FixtureLegacy, ThousandMsg) {
  check_legacy_file("thousand-msg.tgm", 1000, false);
}
TEST(FixtureLegacy, SingleMsgFooter) {
  check_legacy_file("single-msg-footer.tgm", 1, true);
  const auto file = tgtest::read_fixture("single-msg-footer.tgm");
  expect_frames(file, {{24, 1, 64, 0, "13db4dda9495f009"},
                       {88, 9, 165, 0x0001, "21070680e38be39e"},
                       {256, 7, 242, 0, "be156ec2d84842b1"},
                       {504, 5, 69, 0, "a67aefe756829841"},
                       {576, 6, 51, 0, "3ade8952f7490621"}});
  EXPECT_EQ(*decode_span(file).global().reserved.find("uuid")->as_text(),
            "d0f56dfb-081a-494e-ad8b-397525ad825d");
}
TEST(FixtureLegacy, TenMsgFooter) {
  check_legacy_file("ten-msg-footer.tgm", 10, true);
}
TEST(FixtureLegacy, HundredMsgFooter) {
  check_legacy_file("hundred-msg-footer.tgm", 100, true);
}
TEST(FixtureLegacy, ThousandMsgFooter) {
  check_legacy_file("thousand-msg-footer.tgm", 1000, true);
}

TEST(FixtureLegacy, StreamingTail) {
  const auto file = tgtest::read_fixture("streaming-tail.tgm");
  const auto entries = tg::scan(file);
  ASSERT_EQ(entries.size(), 10u);
  for (std::size_t i = 0; i < 9; ++i) check_legacy_message(message_at(file, entries[i]), i, false);
  const auto tail = message_at(file, entries[9]);
  EXPECT_EQ(tgtest::be64(tail, 16), 0u);        // total_length 0 in the preamble ...
  EXPECT_EQ(tgtest::be64(tail, 656 - 16), 0u);  // ... and in the postamble
  check_legacy_message(tail, 9, true, true);
  EXPECT_EQ(tg::hex16(frame_of_type(tgtest::wire_frames(tail), 9).slot), "9fd8ea796031e621");
  EXPECT_EQ(values_of<float>(decode_span(tail).object(0)), (std::vector<float>{9, 10, 11, 12}));
}

// --- hash verification tamper tests (multi_object_xxh3) -------------------------

constexpr std::size_t k_obj_offsets[] = {616, 776, 944};
constexpr std::size_t k_obj_lengths[] = {154, 168, 149};
constexpr const char* k_obj_slots[] = {"5070b59b0b67dfe8", "909a18335778f3de", "dca3a5038096aed3"};

TEST(FixtureTamper, FlippedBodyByteGivesHashMismatchForThatObject) {
  const auto original = tgtest::read_fixture("multi_object_xxh3.tgm");
  for (std::size_t n = 0; n < 3; ++n) {
    // A payload byte, a descriptor byte: both are hashed.
    for (std::size_t rel : {std::size_t{16}, k_obj_lengths[n] - 21}) {
      SCOPED_TRACE(testing::Message() << "object " << n << " byte " << rel);
      auto file = original;
      file[k_obj_offsets[n] + rel] ^= std::byte{0x01};
      const std::uint64_t actual = tg::format::xxh3_64(
          std::span<const std::byte>(file).subspan(k_obj_offsets[n] + 16, k_obj_lengths[n] - 36));
      try {
        (void)decode_span(file, true);
        ADD_FAILURE() << "no hash mismatch";
      } catch (const tg::hash_mismatch_error& e) {
        EXPECT_EQ(e.object_index(), n);
        EXPECT_EQ(tg::hex16(e.expected()), k_obj_slots[n]);
        EXPECT_EQ(e.actual(), actual);
        EXPECT_EQ(std::string(e.what()), "hash mismatch on object " + std::to_string(n) + ": expected " +
                                             k_obj_slots[n] + ", got " + tg::hex16(actual));
      }
      // Only the tampered object fails when objects are verified one by one.
      tg::decode_options verify;
      verify.verify_hash = true;
      for (std::size_t k = 0; k < 3; ++k) {
        if (k == n) {
          EXPECT_THROW((void)tg::decode_object(tg::buffer::borrowed(file), k, verify),
                       tg::hash_mismatch_error);
          EXPECT_THROW(tg::verify_hashes(file, k), tg::hash_mismatch_error);
        } else {
          EXPECT_NO_THROW((void)tg::decode_object(tg::buffer::borrowed(file), k, verify));
          EXPECT_NO_THROW(tg::verify_hashes(file, k));
        }
      }
      // Without verification a payload flip still decodes.
      if (rel == 16) {
        EXPECT_NO_THROW((void)decode_span(file));
      }
    }
  }
}

TEST(FixtureTamper, ClearedHashFlagGivesMissingHashForThatObject) {
  const auto original = tgtest::read_fixture("multi_object_xxh3.tgm");
  for (std::size_t n = 0; n < 3; ++n) {
    SCOPED_TRACE(n);
    auto file = original;
    ASSERT_EQ(tgtest::be16(file, k_obj_offsets[n] + 6), 0x0003);
    tgtest::put_be16(file, k_obj_offsets[n] + 6, 0x0001);
    try {
      (void)decode_span(file, true);
      ADD_FAILURE() << "no missing hash";
    } catch (const tg::missing_hash_error& e) {
      EXPECT_EQ(e.object_index(), n);
      EXPECT_NE(std::string(e.what()).find("object " + std::to_string(n) + " has no inline hash"),
                std::string::npos);
    }
    const tg::message m = decode_span(file);  // plain decode still works
    EXPECT_FALSE(m.object(n).has_hash());
    EXPECT_EQ(m.object(n).hash_value(), "");
    for (std::size_t k = 0; k < 3; ++k) {
      if (k != n) {
        EXPECT_EQ(m.object(k).hash_value(), k_obj_slots[k]);
      }
    }
  }
}

TEST(FixtureTamper, MetadataFrameIsNotVerified) {
  // Only data-object frames are checked (spec 01 §14.3).
  auto file = tgtest::read_fixture("multi_object_xxh3.tgm");
  file[24 + 16 + 60] ^= std::byte{0x20};  // inside a text value of the metadata body
  EXPECT_NO_THROW(tg::verify_hashes(file));
}

}  // namespace

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <tensogram.hpp>

namespace {
std::vector<std::byte> read_file(const std::string& name) {
  std::ifstream f(std::string(TENSOGRAM_FIXTURES) + "/tgm/" + name, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(c.size());
  std::memcpy(out.data(), c.data(), c.size());
  return out;
}
}  // namespace

class Reencode : public ::testing::TestWithParam<std::string> {};
TEST_P(Reencode, ByteExact) {
  const auto file = read_file(GetParam());
  for (const auto& e : tensogram::scan(file)) {
    std::vector<std::byte> bytes(file.begin() + e.offset, file.begin() + e.offset + e.length);
    tensogram::decode_options raw;
    raw.native_byte_order = false;
    const auto m2 = tensogram::decode(tensogram::buffer::borrowed(bytes), raw);
    tensogram::global_metadata g = m2.global();
    tensogram::provenance p;
    p.encoder_name = "tensogram";
    p.encoder_version = *g.reserved.find("encoder")->find("version")->as_text();
    p.time = *g.reserved.find("time")->as_text();
    p.uuid = *g.reserved.find("uuid")->as_text();
    g.reserved = tensogram::cbor::value::make_map();
    for (auto& b : g.base) b.erase("_reserved_");
    std::vector<tensogram::object_input> in;
    for (const auto& o : m2) in.push_back({o.descriptor(), o.bytes()});
    tensogram::encode_options opts;
    opts.fixed_provenance = p;
    const auto again = tensogram::encode(g, in, opts);
    EXPECT_EQ(again, bytes) << GetParam() << " @" << e.offset;
  }
}
INSTANTIATE_TEST_SUITE_P(F, Reencode,
                         ::testing::Values("simple_f32.tgm", "multi_object.tgm", "mars_metadata.tgm",
                                           "metadata_parity.tgm", "hash_xxh3.tgm", "multi_object_xxh3.tgm",
                                           "multi_message.tgm"));

TEST(Smoke, SimpleF32RoundTrip) {
  const auto bytes = read_file("simple_f32.tgm");
  ASSERT_EQ(bytes.size(), 592u);
  const auto msg = tensogram::decode(tensogram::buffer::borrowed(bytes));
  ASSERT_EQ(msg.num_objects(), 1u);
  const auto& o = msg.object(0);
  ASSERT_EQ(o.data_size(), 16u);
  EXPECT_EQ(o.data_as<float>()[2], 3.0f);

  // Big-endian on the wire, so a little-endian host gets a converted copy.
  EXPECT_EQ(o.is_view(), tensogram::native_byte_order() == tensogram::byte_order::big);
  EXPECT_EQ(msg.get_metadata().get_string("product"), "efi");
}

// The JSON-driven API (`encode(metadata_json, objects, options)`) given the
// fixture's descriptor, metadata, payload and provenance reproduces
// simple_f32.tgm byte for byte.
TEST(Smoke, JsonApiReencodesSimpleF32) {
  const auto bytes = read_file("simple_f32.tgm");
  ASSERT_EQ(bytes.size(), 592u);
  const std::string metadata_json = R"({
    "descriptors": [{"type": "ntensor", "ndim": 1, "shape": [4], "strides": [1], "dtype": "float32",
                     "byte_order": "big", "encoding": "none", "filter": "none", "compression": "none"}],
    "base": [{"product": "efi", "parameter": "pressure"}]})";
  // Payload exactly as stored: big-endian 1.0, 2.0, 3.0, 4.0.
  const std::uint8_t payload[] = {0x3f, 0x80, 0, 0, 0x40, 0, 0, 0, 0x40, 0x40, 0, 0, 0x40, 0x80, 0, 0};
  tensogram::encode_options opts;
  tensogram::provenance p;
  p.encoder_name = "tensogram";
  p.encoder_version = "0.20.0";
  p.time = "2026-04-29T18:12:46Z";
  p.uuid = "dca6fc66-2daf-4742-ba5f-db69ccb69eac";
  opts.fixed_provenance = p;
  const std::vector<std::uint8_t> out = tensogram::encode(metadata_json, {{payload, sizeof payload}}, opts);
  ASSERT_EQ(out.size(), bytes.size());
  EXPECT_EQ(std::memcmp(out.data(), bytes.data(), bytes.size()), 0);
}

// Spec 07 D2.2: <tensogram.hpp> gives C++ code the C header's macro and the
// tgm_* functions the wrapper has no C++ form of.
TEST(Umbrella, WireVersionAndCApi) {
  static_assert(TGM_WIRE_VERSION == 3);
  static_assert(tensogram::wire_version == TGM_WIRE_VERSION);
  EXPECT_STREQ(tgm_error_string(TGM_ERROR_IO), "I/O error");
}

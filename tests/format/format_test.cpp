// Wire-format building blocks (spec 01 §3–§13, §16) exercised directly.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <tensogram.hpp>
#include "tensogram/format/aggregate_frames.hpp"
#include "tensogram/format/data_frame.hpp"
#include "tensogram/format/frame.hpp"
#include "tensogram/format/hash.hpp"
#include "tensogram/format/preamble.hpp"
#include "tensogram/format/scan.hpp"
#include "tensogram/format/wire.hpp"
#include "test_support.hpp"

namespace {

namespace tg = tensogram;
namespace fmt = tensogram::format;
namespace cbor = tensogram::cbor;
using tgtest::B;
using tgtest::bytes;
using tgtest::from_hex;

TEST(Xxh3, CheckValues) {
  EXPECT_EQ(fmt::xxh3_64({}), 0x2D06800538D394C2ULL);
  const auto file = tgtest::read_fixture("simple_f32.tgm");
  EXPECT_EQ(fmt::xxh3_64(std::span<const std::byte>(file).subspan(416, 126)), 0x3AEAC8603F519C1DULL);
  EXPECT_EQ(fmt::xxh3_64(std::span<const std::byte>(file).subspan(40, 217)), 0x0A23FF60CB2EE306ULL);
  // Incremental hashing over arbitrary splits agrees.
  for (std::size_t split : {0u, 1u, 63u, 100u, 126u}) {
    fmt::xxh3_stream s;
    s.update(std::span<const std::byte>(file).subspan(416, split));
    s.update(std::span<const std::byte>(file).subspan(416 + split, 126 - split));
    EXPECT_EQ(s.digest(), 0x3AEAC8603F519C1DULL) << split;
  }
  bytes big(100000);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::byte>(i * 31);
  bytes copy(big.size());
  fmt::xxh3_stream s;
  EXPECT_EQ(fmt::copy_and_hash(big, copy.data(), s), fmt::xxh3_64(big));
  EXPECT_EQ(copy, big);
}

TEST(Preamble, ReadWriteRoundTrip) {
  std::array<std::byte, 24> buf{};
  fmt::preamble p;
  p.flags = 0x0095;
  p.total_length = 592;
  fmt::write_preamble(buf, p);
  const auto file = tgtest::read_fixture("simple_f32.tgm");
  EXPECT_EQ(bytes(buf.begin(), buf.end()), tgtest::slice(file, 0, 24));
  const fmt::preamble q = fmt::read_preamble(buf);
  EXPECT_EQ(q.version, 3);
  EXPECT_EQ(q.flags, 0x0095);
  EXPECT_EQ(q.reserved, 0u);
  EXPECT_EQ(q.total_length, 592u);
  std::array<std::byte, 24> post{};
  fmt::write_postamble(post, {568, 592});
  EXPECT_EQ(bytes(post.begin(), post.end()), tgtest::slice(file, 568, 24));
  const fmt::postamble r = fmt::read_postamble(post);
  EXPECT_EQ(r.first_footer_offset, 568u);
  EXPECT_EQ(r.total_length, 592u);
  EXPECT_TRUE(fmt::has_start_magic(file));
  EXPECT_TRUE(fmt::has_end_magic(std::span<const std::byte>(file).subspan(584)));
  EXPECT_FALSE(fmt::has_end_magic(std::span<const std::byte>(file).subspan(585)));
}

TEST(Preamble, MessageExtent) {
  const auto file = tgtest::read_fixture("multi_message.tgm");
  const fmt::message_extent e = fmt::read_message_extent(file);
  EXPECT_EQ(e.message_end, 584u);  // bytes after total_length are ignored
  EXPECT_EQ(e.frames_end, 560u);
  const auto stream = tgtest::read_fixture("streaming-tail.tgm");
  const auto tail = std::span<const std::byte>(stream).subspan(5328);
  const fmt::message_extent t = fmt::read_message_extent(tail);
  EXPECT_EQ(t.head.total_length, 0u);
  EXPECT_EQ(t.message_end, 656u);
  EXPECT_EQ(t.frames_end, 632u);
}

TEST(FrameHeader, ReadWriteAndErrors) {
  const auto file = tgtest::read_fixture("simple_f32.tgm");
  const fmt::frame_header h = fmt::read_frame_header(std::span<const std::byte>(file).subspan(400), 400);
  EXPECT_EQ(h.type, fmt::frame_type::ntensor);
  EXPECT_EQ(h.version, 1);
  EXPECT_EQ(h.flags, 0x0003);
  EXPECT_EQ(h.total_length, 162u);
  std::array<std::byte, 16> out{};
  fmt::write_frame_header(out, h);
  EXPECT_EQ(bytes(out.begin(), out.end()), tgtest::slice(file, 400, 16));
  // Not at a frame start (§19.2 #11).
  try {
    (void)fmt::read_frame_header(std::span<const std::byte>(file).subspan(401), 401);
    FAIL();
  } catch (const tg::framing_error& e) {
    EXPECT_NE(std::string(e.what()).find("invalid frame magic at offset 401"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)fmt::read_frame_header(std::span<const std::byte>(file).subspan(400, 15), 400),
               tg::framing_error);
  for (std::uint16_t t : {1, 2, 3, 5, 6, 7, 8, 9}) {
    bytes b = tgtest::slice(file, 400, 16);
    tgtest::put_be16(b, 2, t);
    EXPECT_EQ(static_cast<std::uint16_t>(fmt::read_frame_header(b, 0).type), t);
  }
}

TEST(FrameNames, PhasesAndFooters) {
  EXPECT_EQ(fmt::phase_of(fmt::frame_type::header_hash), fmt::phase::header);
  EXPECT_EQ(fmt::phase_of(fmt::frame_type::preceder_metadata), fmt::phase::body);
  EXPECT_EQ(fmt::phase_of(fmt::frame_type::footer_metadata), fmt::phase::footer);
  EXPECT_EQ(fmt::footer_size(fmt::frame_type::ntensor), 20u);
  EXPECT_EQ(fmt::footer_size(fmt::frame_type::footer_index), 12u);
  EXPECT_EQ(fmt::frame_type_name(fmt::frame_type::preceder_metadata), "PrecederMetadata");
  EXPECT_EQ(fmt::align8(0), 0u);
  EXPECT_EQ(fmt::align8(1), 8u);
  EXPECT_EQ(fmt::align8(569), 576u);
}

TEST(Frame, WriteFrameMatchesFixture) {
  // The HeaderIndex frame of simple_f32 (spec 01 §20.3).
  const auto file = tgtest::read_fixture("simple_f32.tgm");
  const bytes body = fmt::encode_index_body({{400}, {162}});
  EXPECT_EQ(body, tgtest::slice(file, 288, 24));
  std::vector<std::byte> out(8, std::byte{0xAA});
  fmt::append_frame(out, 8, fmt::frame_type::header_index, body, true);
  EXPECT_EQ(out.size(), 8u + 56u);
  EXPECT_EQ(tgtest::slice(out, 8, 52), tgtest::slice(file, 272, 52));
  EXPECT_EQ(tgtest::slice(out, 60, 4), bytes(4, std::byte{0}));
  // Hashing off: flags 0 and a zero slot.
  std::vector<std::byte> off;
  fmt::append_frame(off, 0, fmt::frame_type::header_index, body, false);
  EXPECT_EQ(tgtest::be16(off, 6), 0u);
  EXPECT_EQ(tgtest::be64(off, 40), 0u);
  std::vector<std::byte> pad(3);
  fmt::pad_to_8(pad, 0);
  EXPECT_EQ(pad.size(), 8u);
  fmt::pad_to_8(pad, 0);
  EXPECT_EQ(pad.size(), 8u);
}

TEST(Frame, LocateFrameBodyAndSlot) {
  const auto file = tgtest::read_fixture("simple_f32.tgm");
  const std::span<const std::byte> m(file);
  const auto h = fmt::read_frame_header(m.subspan(400), 400);
  const fmt::frame_view f = fmt::locate_frame(m, 400, h, 568);
  EXPECT_EQ(f.body().size(), 126u);
  EXPECT_EQ(f.body().data(), file.data() + 416);
  EXPECT_EQ(f.hash_slot(), 0x3AEAC8603F519C1DULL);
  EXPECT_TRUE(f.hash_present());
  const fmt::data_frame_parts parts = fmt::split_data_frame(f);
  EXPECT_TRUE(parts.cbor_after_payload);
  EXPECT_EQ(parts.region_offset, 16u);
  EXPECT_EQ(parts.payload_region.size(), 16u);
  EXPECT_EQ(*parts.descriptor.find("dtype")->as_text(), "float32");
  // Frames must end at or before the limit (the postamble start).
  EXPECT_THROW((void)fmt::locate_frame(m, 400, h, 561), tg::framing_error);
  EXPECT_NO_THROW((void)fmt::locate_frame(m, 400, h, 562));
}

TEST(AggregateBodies, IndexParseAndEncode) {
  const auto idx = fmt::parse_index_body(from_hex("a2 676c656e67746873 81 18a2 676f666673657473 81 190190"));
  EXPECT_EQ(idx.lengths, (std::vector<std::uint64_t>{162}));
  EXPECT_EQ(idx.offsets, (std::vector<std::uint64_t>{400}));
  // Unknown keys ignored, missing keys empty, any key order and width.
  const auto other = fmt::parse_index_body(
      from_hex("a3 6178 01 676f666673657473 81 1b0000000000000190 676c656e67746873 81 01"));
  EXPECT_EQ(other.offsets, (std::vector<std::uint64_t>{400}));
  EXPECT_EQ(other.lengths, (std::vector<std::uint64_t>{1}));
  const auto empty = fmt::parse_index_body(from_hex("a0"));
  EXPECT_TRUE(empty.offsets.empty());
  EXPECT_EQ(tgtest::to_hex(fmt::encode_index_body({})), "a2676c656e6774687380676f66667365747380");
  const std::uint64_t big = std::uint64_t{1} << 40;
  const auto wide = fmt::parse_index_body(fmt::encode_index_body({{big, 24, 65536}, {1, 2, 3}}));
  EXPECT_EQ(wide.offsets, (std::vector<std::uint64_t>{big, 24, 65536}));
}

TEST(AggregateBodies, HashParseAndEncode) {
  const std::uint64_t digests[] = {0x3aeac8603f519c1dULL, 0x1ULL};
  const bytes body = fmt::encode_hash_body(digests);
  const auto h = fmt::parse_hash_body(body);
  EXPECT_EQ(h.algorithm, "xxh3");
  EXPECT_EQ(h.hashes, (std::vector<std::string>{"3aeac8603f519c1d", "0000000000000001"}));
  const auto file = tgtest::read_fixture("simple_f32.tgm");
  EXPECT_EQ(fmt::encode_hash_body(std::span(digests).first(1)), tgtest::slice(file, 344, 41));
  // Unknown algorithm is not an error; missing keys default.
  EXPECT_EQ(fmt::parse_hash_body(from_hex("a1 69616c676f726974686d 636d6435")).algorithm, "md5");
  EXPECT_TRUE(fmt::parse_hash_body(from_hex("a0")).hashes.empty());
}

TEST(Scan, ForwardHopAndGarbage) {
  const auto one = tgtest::read_fixture("simple_f32.tgm");
  bytes file;
  const bytes junk = B({'T', 'E', 'N', 'S', 'O', 'G', 'R', 'M', 0, 2, 0, 0});  // a v2-looking preamble
  file.insert(file.end(), junk.begin(), junk.end());
  file.insert(file.end(), 5, std::byte{0});
  const std::size_t a = file.size();
  file.insert(file.end(), one.begin(), one.end());
  file.insert(file.end(), one.begin(), one.begin() + 100);  // truncated copy
  const std::size_t b = file.size();
  file.insert(file.end(), one.begin(), one.end());
  file.insert(file.end(), 7, std::byte{0x39});
  const std::vector<tg::scan_entry> expected = {{a, 592}, {b, 592}};
  EXPECT_EQ(tg::scan(file), expected);
  EXPECT_EQ(fmt::forward_scan(file, 0, file.size()), expected);
  EXPECT_EQ(fmt::forward_hop(file, a, file.size()), (tg::scan_entry{a, 592}));
  EXPECT_FALSE(fmt::forward_hop(file, a + 1, file.size()).has_value());
  EXPECT_FALSE(fmt::forward_hop(file, a, a + 591).has_value());  // bound cuts the message
  EXPECT_TRUE(tg::scan({}).empty());
  EXPECT_TRUE(tg::scan(tgtest::slice(one, 0, 47)).empty());
}

TEST(Scan, WrongDeclaredLengthIsSkipped) {
  auto file = tgtest::read_fixture("two-msg.tgm");
  tgtest::put_be64(file, 16, 600);  // first message claims 600 bytes: no end magic there
  EXPECT_EQ(tg::scan(file), (std::vector<tg::scan_entry>{{592, 592}}));
  auto v2 = tgtest::read_fixture("two-msg.tgm");
  tgtest::put_be16(v2, 592 + 8, 2);  // second message: version 2
  EXPECT_EQ(tg::scan(v2), (std::vector<tg::scan_entry>{{0, 592}}));
}

TEST(Scan, StreamingMessageEndsAtFirstEndMagic) {
  const auto file = tgtest::read_fixture("streaming-tail.tgm");
  const auto tail = tgtest::slice(file, 5328, 656);
  bytes two = tail;
  two.insert(two.end(), tail.begin(), tail.end());
  EXPECT_EQ(tg::scan(two), (std::vector<tg::scan_entry>{{0, 656}, {656, 656}}));
  // Backward scanning from a streaming end hands over to the forward scan,
  // also when a back-filled message follows.
  const auto single = tgtest::read_fixture("single-msg.tgm");
  bytes mixed = two;
  mixed.insert(mixed.end(), single.begin(), single.end());
  EXPECT_EQ(tg::scan(mixed), (std::vector<tg::scan_entry>{{0, 656}, {656, 656}, {1312, 592}}));
  bytes mixed2 = single;
  mixed2.insert(mixed2.end(), tail.begin(), tail.end());
  mixed2.insert(mixed2.end(), single.begin(), single.end());
  EXPECT_EQ(tg::scan(mixed2), (std::vector<tg::scan_entry>{{0, 592}, {592, 656}, {1248, 592}}));
}

TEST(Scan, BackwardCapStillFindsMessagesForward) {
  const auto file = tgtest::read_fixture("ten-msg.tgm");
  EXPECT_EQ(fmt::scan(file, 100).size(), 10u);  // cap below the message size
}

}  // namespace

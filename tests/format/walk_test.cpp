// The frame walker (format/walk.hpp) on its own: each variant of the rules
// (spec 01 §6–§8, §14.1–§14.3, §15; spec 02 §15.1), each finding action, and
// walks of a message read piecewise. The readers built on it (decode,
// validate, file access) are tested through their own APIs elsewhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <tensogram.hpp>
#include "tensogram/format/walk.hpp"
#include "test_support.hpp"

namespace {

namespace tg = tensogram;
namespace fmt = tensogram::format;
using tgtest::bytes;
using tgtest::message_builder;

// Records what a walk passes on.
class recorder final : public fmt::walk_sink {
 public:
  bool frame(const fmt::frame_view& f) override {
    frames.push_back({f.offset, f.header.type, f.bytes.size()});
    return stop_after == 0 || frames.size() < stop_after;
  }
  void finding(fmt::walk_finding f) override { findings.push_back(std::move(f)); }

  struct seen {
    std::size_t offset;
    fmt::frame_type type;
    std::size_t size;
  };
  std::vector<seen> frames;
  std::vector<fmt::walk_finding> findings;
  std::size_t stop_after = 0;
};

fmt::walk_region whole(std::span<const std::byte> msg) {
  return {msg, 0, fmt::preamble_size, msg.size() - fmt::postamble_size};
}

bytes payload(std::size_t n) {
  return bytes(n, std::byte{0x42});
}

// Header metadata, a preceder, one object, footer hash: every phase.
struct sample {
  bytes msg;
  std::vector<std::size_t> offsets;
};

sample sample_message() {
  message_builder b(0x0001 | 0x0020 | 0x0040);
  sample s;
  b.frame(1, tgtest::metadata_with_base(1));
  s.offsets.push_back(b.last_frame());
  b.frame(8, tgtest::metadata_with_base(1));
  s.offsets.push_back(b.last_frame());
  b.data_frame(payload(8), tgtest::descriptor_value("float32", {2}));
  s.offsets.push_back(b.last_frame());
  b.frame(5,
          tg::cbor::value::make_map({{"algorithm", "xxh3"}, {"hashes", tg::cbor::value(tg::cbor::array{})}}));
  s.offsets.push_back(b.last_frame());
  s.msg = b.finish();
  return s;
}

std::string raised(const fmt::walk_region& r, fmt::walk_policy p) {
  recorder sink;
  try {
    (void)fmt::walk(r, p, sink);
  } catch (const tg::framing_error& e) {
    return e.what();
  }
  return "";
}

TEST(FrameWalk, DecoderPassesEveryFrameInWireOrder) {
  const sample s = sample_message();
  recorder sink;
  const fmt::walk_outcome o = fmt::walk(whole(s.msg), fmt::walk_policy::decoder(), sink);
  EXPECT_EQ(o.end, fmt::walk_end::frames_end);
  ASSERT_EQ(sink.frames.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(sink.frames[i].offset, s.offsets[i]);
  EXPECT_EQ(sink.frames[1].type, fmt::frame_type::preceder_metadata);
  EXPECT_EQ(sink.frames[2].type, fmt::frame_type::ntensor);
  EXPECT_TRUE(sink.findings.empty());
}

TEST(FrameWalk, SinkEndsTheWalk) {
  const sample s = sample_message();
  recorder sink;
  sink.stop_after = 2;
  const fmt::walk_outcome o = fmt::walk(whole(s.msg), fmt::walk_policy::decoder(), sink);
  EXPECT_EQ(o.end, fmt::walk_end::sink);
  EXPECT_EQ(o.position, s.offsets[1]);
  EXPECT_EQ(sink.frames.size(), 2u);
}

// §6: the decoder judges a frame's place as soon as its header is read, the
// validator only once the frame is located.
TEST(FrameWalk, DecoderChecksOrderBeforeTheFrameValidatorAfter) {
  message_builder b;
  b.data_frame(payload(8), tgtest::descriptor_value("float32", {2}));
  b.frame(1, tgtest::metadata_with_base(1));
  const std::size_t meta_at = b.last_frame();
  bytes msg = b.finish();
  const std::uint64_t len = tgtest::be64(msg, meta_at + 8);
  msg[meta_at + len - 1] = std::byte{'X'};  // no ENDF either
  EXPECT_NE(raised(whole(msg), fmt::walk_policy::decoder())
                .find("unexpected HeaderMetadata frame at offset " + std::to_string(meta_at)),
            std::string::npos);
  recorder sink;
  (void)fmt::walk(whole(msg), fmt::walk_policy::validator(), sink);
  ASSERT_FALSE(sink.findings.empty());
  EXPECT_EQ(sink.findings[0].issue, fmt::walk_issue::missing_end_marker);
  EXPECT_EQ(sink.findings[0].offset, meta_at + len - 4);
  for (const fmt::walk_finding& f : sink.findings) EXPECT_NE(f.issue, fmt::walk_issue::frame_order_violation);
}

TEST(FrameWalk, CollectedFindingsCarryIssueSeverityOffsetAndText) {
  const sample s = sample_message();
  // Drop the data-object frame's marker: the preceder dangles into the hash
  // frame, and the validator skips the bytes (not zero) to the next 8.
  bytes msg = s.msg;
  msg[s.offsets[2]] = std::byte{'X'};
  recorder sink;
  (void)fmt::walk(whole(msg), fmt::walk_policy::validator(), sink);
  std::vector<fmt::walk_issue> issues;
  for (const fmt::walk_finding& f : sink.findings) issues.push_back(f.issue);
  ASSERT_GE(sink.findings.size(), 2u);
  EXPECT_EQ(sink.findings[0].issue, fmt::walk_issue::non_zero_padding);
  EXPECT_EQ(sink.findings[0].severity, fmt::walk_severity::warning);
  EXPECT_EQ(sink.findings[0].offset, s.offsets[2]);
  const auto pairing =
      std::find(issues.begin(), issues.end(), fmt::walk_issue::preceder_not_followed_by_object);
  ASSERT_NE(pairing, issues.end());
  const fmt::walk_finding& p = sink.findings[static_cast<std::size_t>(pairing - issues.begin())];
  EXPECT_EQ(p.severity, fmt::walk_severity::error);
  EXPECT_EQ(p.offset, s.offsets[3]);
  EXPECT_EQ(p.message, "PrecederMetadata must be followed by a data-object frame, got FooterHash at offset " +
                           std::to_string(s.offsets[3]));
  // The decoder's words for the same condition.
  EXPECT_NE(raised(whole(msg), fmt::walk_policy::decoder())
                .find("got FooterHash (preceder at offset " + std::to_string(s.offsets[1])),
            std::string::npos);
}

TEST(FrameWalk, StopActionReturnsTheFirstFinding) {
  const sample s = sample_message();
  bytes msg = s.msg;
  tgtest::put_be16(msg, s.offsets[0] + 2, 4);  // obsolete v2 frame type
  recorder sink;
  const fmt::walk_outcome o = fmt::walk(whole(msg), fmt::walk_policy::region(fmt::phase::header), sink);
  EXPECT_EQ(o.end, fmt::walk_end::finding);
  ASSERT_TRUE(o.finding);
  EXPECT_EQ(o.finding->issue, fmt::walk_issue::invalid_frame_header);
  EXPECT_EQ(o.finding->offset, 24u);
  EXPECT_NE(o.finding->message.find("reserved frame type 4"), std::string::npos);
  EXPECT_TRUE(sink.frames.empty());
}

// §8: the decoder steps over stray bytes one at a time (and finds a frame
// at an odd offset); the validator goes to the next multiple of 8.
TEST(FrameWalk, BytesBetweenFramesPerRules) {
  message_builder b;
  b.frame(1, tgtest::metadata_with_base(1));
  b.raw(tgtest::B({'j', 'u'}));
  const std::size_t odd = b.size();
  b.data_frame(payload(8), tgtest::descriptor_value("float32", {2}));
  const bytes msg = b.finish();
  recorder decoder;
  (void)fmt::walk(whole(msg), fmt::walk_policy::decoder(), decoder);
  ASSERT_EQ(decoder.frames.size(), 2u);
  EXPECT_EQ(decoder.frames[1].offset, odd);
  recorder validator;
  (void)fmt::walk(whole(msg), fmt::walk_policy::validator(), validator);
  EXPECT_EQ(validator.frames.size(), 1u);
  ASSERT_FALSE(validator.findings.empty());
  EXPECT_EQ(validator.findings[0].issue, fmt::walk_issue::non_zero_padding);
  EXPECT_EQ(validator.findings[0].offset, odd - 2);
  // A phase region expects its frames exactly where the previous one ends.
  recorder region;
  const fmt::walk_outcome o = fmt::walk(whole(msg), fmt::walk_policy::region(fmt::phase::header), region);
  EXPECT_EQ(o.end, fmt::walk_end::finding);
  EXPECT_EQ(o.position, odd - 2);
}

// §14.2 and §14.3 pass on only the frames they look at.
TEST(FrameWalk, MetadataOnlyAndHashPrepassVariants) {
  const sample s = sample_message();
  recorder meta;
  (void)fmt::walk(whole(s.msg), fmt::walk_policy::decoder(fmt::walk_rules::decode_metadata), meta);
  ASSERT_EQ(meta.frames.size(), 1u);
  EXPECT_EQ(meta.frames[0].type, fmt::frame_type::header_metadata);
  recorder prepass;
  (void)fmt::walk(whole(s.msg), fmt::walk_policy::decoder(fmt::walk_rules::hash_prepass), prepass);
  ASSERT_EQ(prepass.frames.size(), 1u);
  EXPECT_EQ(prepass.frames[0].offset, s.offsets[2]);
  // No ordering rules in either: a dangling preceder is not theirs to find.
  bytes msg = s.msg;
  msg[s.offsets[2]] = std::byte{'X'};
  EXPECT_EQ(raised(whole(msg), fmt::walk_policy::decoder(fmt::walk_rules::hash_prepass)), "");
  EXPECT_NE(raised(whole(msg), fmt::walk_policy::decoder()).find("PrecederMetadata must be followed"),
            std::string::npos);
}

// §15: a phase region stops at the first frame of another phase.
TEST(FrameWalk, PhaseRegionStopsAtTheNextPhase) {
  const sample s = sample_message();
  recorder header;
  const fmt::walk_outcome h = fmt::walk(whole(s.msg), fmt::walk_policy::region(fmt::phase::header), header);
  EXPECT_EQ(h.end, fmt::walk_end::other_phase);
  EXPECT_EQ(h.position, s.offsets[1]);
  EXPECT_EQ(header.frames.size(), 1u);
  fmt::walk_region footer_region = whole(s.msg);
  footer_region.begin = s.offsets[3];
  recorder footer;
  const fmt::walk_outcome f = fmt::walk(footer_region, fmt::walk_policy::region(fmt::phase::footer), footer);
  EXPECT_EQ(f.end, fmt::walk_end::frames_end);
  ASSERT_EQ(footer.frames.size(), 1u);
  EXPECT_EQ(footer.frames[0].type, fmt::frame_type::footer_hash);
}

// A message read piecewise: the walk asks for the bytes it lacks and goes
// on from there with a new window.
TEST(FrameWalk, WindowsAskForTheBytesTheyLack) {
  message_builder b(0x0001 | 0x0004);
  b.frame(1, tgtest::metadata_with_base(1));
  b.frame(2, tg::cbor::value::make_map({{"offsets", tg::cbor::value(tg::cbor::array{})},
                                        {"lengths", tg::cbor::value(tg::cbor::array{})}}));
  const std::size_t index_at = b.last_frame();
  const bytes msg = b.finish();
  const std::size_t end = msg.size() - fmt::postamble_size;
  recorder sink;
  // Only the first frame and half of the second one's header.
  std::span<const std::byte> window = std::span<const std::byte>(msg).first(index_at + 8);
  fmt::walk_outcome o =
      fmt::walk({window, 0, fmt::preamble_size, end}, fmt::walk_policy::region(fmt::phase::header), sink);
  ASSERT_EQ(o.end, fmt::walk_end::needs_bytes);
  EXPECT_EQ(o.position, index_at);
  EXPECT_EQ(o.needed, fmt::frame_header_size);
  ASSERT_EQ(sink.frames.size(), 1u);
  // Just the header: now the walk asks for the whole frame.
  window = std::span<const std::byte>(msg).subspan(index_at, fmt::frame_header_size);
  o = fmt::walk({window, index_at, index_at, end}, fmt::walk_policy::region(fmt::phase::header), sink);
  ASSERT_EQ(o.end, fmt::walk_end::needs_bytes);
  const std::uint64_t len = tgtest::be64(msg, index_at + 8);
  EXPECT_EQ(o.needed, len);
  window = std::span<const std::byte>(msg).subspan(index_at, static_cast<std::size_t>(len));
  o = fmt::walk({window, index_at, index_at, end}, fmt::walk_policy::region(fmt::phase::header), sink);
  ASSERT_EQ(sink.frames.size(), 2u);
  EXPECT_EQ(sink.frames[1].offset, index_at);
  EXPECT_EQ(sink.frames[1].type, fmt::frame_type::header_index);
  EXPECT_EQ(o.end, fmt::walk_end::frames_end);
  EXPECT_EQ(o.position, end);
}

// §7: first_footer_offset names the first footer frame (validator only).
TEST(FrameWalk, FooterOffsetIsCheckedByTheValidator) {
  const sample s = sample_message();
  bytes msg = s.msg;
  const std::size_t post = msg.size() - fmt::postamble_size;
  tgtest::put_be64(msg, post, s.offsets[2]);
  recorder sink;
  (void)fmt::walk(whole(msg), fmt::walk_policy::validator(), sink);
  ASSERT_EQ(sink.findings.size(), 1u);
  EXPECT_EQ(sink.findings[0].issue, fmt::walk_issue::footer_offset_mismatch);
  EXPECT_FALSE(sink.findings[0].offset);
  tgtest::put_be64(msg, post, 8);
  recorder out_of_range;
  (void)fmt::walk(whole(msg), fmt::walk_policy::validator(), out_of_range);
  ASSERT_EQ(out_of_range.findings.size(), 2u);
  EXPECT_EQ(out_of_range.findings[0].issue, fmt::walk_issue::footer_offset_out_of_range);
  EXPECT_EQ(out_of_range.findings[0].offset, post);
  EXPECT_EQ(raised(whole(msg), fmt::walk_policy::decoder()), "");
}

}  // namespace

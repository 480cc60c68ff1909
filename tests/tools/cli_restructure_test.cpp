// The rewriting subcommands of the `tensogram` binary that restructure
// messages — merge, split, reshuffle (spec 04 §A.5) — and a lossy,
// compressed and masked file taken through merge → split → copy →
// reshuffle with every object kept bit for bit.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <tensogram.hpp>

#include "cli_rewrite_support.hpp"

namespace tensogram::cli::test {
namespace {

namespace fs = std::filesystem;

// ---- merge -----------------------------------------------------------------

// Two one-object files whose `_extra_` share key `k` with different values.
struct merge_inputs {
  scratch_dir dir;
  fs::path a = dir / "a.tgm";
  fs::path b = dir / "b.tgm";
  merge_inputs() {
    std::vector<float> v{1.0f, 2.0f};
    const data_object_descriptor d = data_object_descriptor::contiguous(dtype::float32, {2});
    const std::vector<object_input> objs{{d, raw(v)}};
    global_metadata ga;
    ga.base.push_back(cbor::value::make_map({{"param", "2t"}}));
    ga.extra.set("k", "a");
    ga.extra.set("same", 1);
    ga.extra.set("only_a", true);
    global_metadata gb;
    gb.base.push_back(cbor::value::make_map({{"param", "msl"}}));
    gb.extra.set("k", "b");
    gb.extra.set("same", 1);
    gb.extra.set("only_b", 2.5);
    write_file(a, encode(ga, objs));
    write_file(b, encode(gb, objs));
  }
};

TEST(CliMerge, ConcatenatesObjectsAndBaseEntries) {
  const scratch_dir dir;
  const fs::path out = dir / "m.tgm";
  expect_success(run_cli({"merge", "-o", out.string(), fixture("multi_message.tgm"),
                          fixture("multi_object.tgm"), fixture("metadata_parity.tgm")}),
                 "Merged 7 objects from 3 file(s) into " + out.string() + " (strategy: first)\n");
  const auto msgs = messages_of(out);
  ASSERT_EQ(msgs.size(), 1u);
  const global_metadata g = full_metadata(msgs[0]);
  ASSERT_EQ(g.base.size(), 7u);
  const std::vector<std::string> params = {"pressure", "pressure", "temperature", "pressure", "humidity"};
  for (std::size_t i = 0; i < params.size(); ++i) EXPECT_EQ(text_at(g, i, "parameter"), params[i]) << i;
  EXPECT_EQ(text_at(g, 5, "shortName"), "2t");
  EXPECT_EQ(text_at(g, 6, "shortName"), "msl");
  EXPECT_EQ(extra_text(g, "source"), "parity-fixture");
  std::vector<object_image> expected;
  for (const char* f : {"multi_message.tgm", "multi_object.tgm", "metadata_parity.tgm"}) {
    const auto o = objects_of_file(fixture(f));
    expected.insert(expected.end(), o.begin(), o.end());
  }
  expect_same_objects(expected, objects_of(msgs[0]));
  expect_all_hashed(out);
  // Header-indexed output.
  const format::preamble pre = format::read_preamble(msgs[0]);
  EXPECT_NE(pre.flags & format::message_flags::header_index, 0);
}

TEST(CliMerge, Strategies) {
  const merge_inputs in;
  const fs::path out = in.dir / "m.tgm";
  auto merged_extra = [&](const std::string& strategy) {
    const run_result r = run_cli({"merge", "-s", strategy, "-o", out.string(), in.a.string(), in.b.string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out,
              "Merged 2 objects from 2 file(s) into " + out.string() + " (strategy: " + strategy + ")\n");
    return full_metadata(read_file(out));
  };
  global_metadata g = merged_extra("first");
  EXPECT_EQ(extra_text(g, "k"), "a");
  EXPECT_NE(g.extra.find("only_a"), nullptr);
  EXPECT_NE(g.extra.find("only_b"), nullptr);
  EXPECT_EQ(text_at(g, 0, "param"), "2t");
  EXPECT_EQ(text_at(g, 1, "param"), "msl");
  g = merged_extra("last");
  EXPECT_EQ(extra_text(g, "k"), "b");
  EXPECT_NE(g.extra.find("only_a"), nullptr);
  // The default is `first`; --strategy is the long form.
  expect_success(run_cli({"merge", "-o", out.string(), in.a.string(), in.b.string()}),
                 "Merged 2 objects from 2 file(s) into " + out.string() + " (strategy: first)\n");
  expect_success(
      run_cli({"merge", "--strategy", "last", "--output", out.string(), in.b.string(), in.a.string()}),
      "Merged 2 objects from 2 file(s) into " + out.string() + " (strategy: last)\n");
  EXPECT_EQ(extra_text(full_metadata(read_file(out)), "k"), "a");
  // Equal values never conflict.
  expect_success(run_cli({"merge", "-s", "error", "-o", out.string(), in.a.string(), in.a.string()}),
                 "Merged 2 objects from 2 file(s) into " + out.string() + " (strategy: error)\n");
}

TEST(CliMerge, ConflictWritesNothing) {
  const merge_inputs in;
  const std::vector<std::byte> a = read_file(in.a);
  const fs::path out = in.dir / "m.tgm";
  expect_runtime_error(run_cli({"merge", "-s", "error", "-o", out.string(), in.a.string(), in.b.string()}),
                       "error: conflicting values for key 'k' (use --strategy first or last to resolve)\n");
  EXPECT_FALSE(fs::exists(out));
  write_file(out, bytes_of("keep me"));
  expect_runtime_error(run_cli({"merge", "-s", "error", "-o", out.string(), in.a.string(), in.b.string()}),
                       "error: conflicting values for key 'k' (use --strategy first or last to resolve)\n");
  EXPECT_EQ(read_file(out), bytes_of("keep me"));
  EXPECT_EQ(read_file(in.a), a);
  EXPECT_EQ(dir_listing(in.dir.path()), (std::vector<std::string>{"a.tgm", "b.tgm", "m.tgm"}));
}

TEST(CliMerge, Errors) {
  const scratch_dir dir;
  const std::string out = (dir / "m.tgm").string();
  expect_runtime_error(run_cli({"merge", "-o", out}), "error: no input files specified\n");
  expect_runtime_error(run_cli({"merge", "-s", "bogus", "-o", out, fixture("simple_f32.tgm")}),
                       "error: unknown merge strategy 'bogus': expected first, last, or error\n");
  // Missing inputs are reported before a bad strategy, as in the reference.
  expect_runtime_error(run_cli({"merge", "-s", "bogus", "-o", out}), "error: no input files specified\n");
  expect_usage_error(run_cli({"merge", fixture("simple_f32.tgm")}));  // -o required
  expect_usage_error(run_cli({"merge", "-o"}));
  const run_result missing = run_cli({"merge", "-o", out, fixture("simple_f32.tgm"), "/nonexistent/x.tgm"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(dir_listing(dir.path()).empty());
}

TEST(CliMerge, OutputMayBeAnInput) {
  const scratch_dir dir;
  const fs::path f = copy_fixture(dir, "multi_message.tgm");
  const auto before = objects_of_file(f);
  expect_success(run_cli({"merge", "-o", f.string(), f.string()}),
                 "Merged 2 objects from 1 file(s) into " + f.string() + " (strategy: first)\n");
  const auto msgs = messages_of(f);
  ASSERT_EQ(msgs.size(), 1u);
  expect_same_objects(before, objects_of(msgs[0]));
}

TEST(CliMerge, DamagedInputIsNotRehashed) {
  // Flip a payload byte of an object whose frame is hashed: merge must fail
  // rather than write a message whose new hash vouches for the damage.
  const scratch_dir dir;
  std::vector<std::byte> bytes = read_file(fixture("simple_f32.tgm"));
  // Data frame at 400 (README); its payload follows the 16-byte header.
  bytes[400 + 16] ^= std::byte{0x01};
  write_file(dir / "bad.tgm", bytes);
  const run_result r = run_cli({"merge", "-o", (dir / "m.tgm").string(), (dir / "bad.tgm").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("hash"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "m.tgm"));
}

// ---- split -----------------------------------------------------------------

TEST(CliSplit, OneFilePerObject) {
  const scratch_dir dir;
  expect_success(run_cli({"split", "-o", (dir / "part_[index].tgm").string(), fixture("multi_object.tgm")}),
                 "Split into 3 message(s)\n");
  EXPECT_EQ(dir_listing(dir.path()),
            (std::vector<std::string>{"part_0000.tgm", "part_0001.tgm", "part_0002.tgm"}));
  const auto objects = objects_of_file(fixture("multi_object.tgm"));
  const std::vector<std::string> params = {"temperature", "pressure", "humidity"};
  for (std::size_t k = 0; k < 3; ++k) {
    const fs::path p = dir / ("part_000" + std::to_string(k) + ".tgm");
    const auto msgs = messages_of(p);
    ASSERT_EQ(msgs.size(), 1u);
    const global_metadata g = full_metadata(msgs[0]);
    ASSERT_EQ(g.base.size(), 1u);
    EXPECT_EQ(text_at(g, 0, "parameter"), params[k]);
    expect_same_objects({objects[k]}, objects_of(msgs[0]));
    expect_all_hashed(p);
  }
}

TEST(CliSplit, ExtraIsKeptAndSingleObjectMessagesPassThrough) {
  const scratch_dir dir;
  const fs::path in = dir / "in.tgm";
  write_file(in, concat({read_file(fixture("metadata_parity.tgm")), read_file(fixture("simple_f32.tgm"))}));
  expect_success(run_cli({"split", "-o", (dir / "out.tgm").string(), in.string()}),
                 "Split into 3 message(s)\n");
  EXPECT_EQ(dir_listing(dir.path()),
            (std::vector<std::string>{"in.tgm", "out_0000.tgm", "out_0001.tgm", "out_0002.tgm"}));
  EXPECT_EQ(extra_text(full_metadata(read_file(dir / "out_0000.tgm")), "source"), "parity-fixture");
  EXPECT_EQ(extra_text(full_metadata(read_file(dir / "out_0001.tgm")), "source"), "parity-fixture");
  EXPECT_EQ(text_at(full_metadata(read_file(dir / "out_0001.tgm")), 0, "mars.class"), "ea");
  // The counter runs across messages; a one-object message is copied as is.
  EXPECT_EQ(read_file(dir / "out_0002.tgm"), read_file(fixture("simple_f32.tgm")));
}

TEST(CliSplit, Naming) {
  const scratch_dir dir;
  expect_success(run_cli({"split", "-o", (dir / "noext").string(), fixture("two-msg.tgm")}),
                 "Split into 2 message(s)\n");
  expect_success(
      run_cli({"split", "-o", (dir / "[index]-[index].x.tgm").string(), fixture("single-msg.tgm")}),
      "Split into 1 message(s)\n");
  EXPECT_EQ(dir_listing(dir.path()),
            (std::vector<std::string>{"0000-0000.x.tgm", "noext_0000", "noext_0001"}));
  const auto two = messages_of(fixture("two-msg.tgm"));
  EXPECT_EQ(read_file(dir / "noext_0000"), two[0]);
  EXPECT_EQ(read_file(dir / "noext_0001"), two[1]);

  EXPECT_EQ(expand_index_template("out.tgm", 0), "out_0000.tgm");
  EXPECT_EQ(expand_index_template("dir/out.tgm", 5), "dir/out_0005.tgm");
  EXPECT_EQ(expand_index_template("a.b.c", 12), "a.b_0012.c");
  EXPECT_EQ(expand_index_template(".hidden", 1), ".hidden_0001");
  EXPECT_EQ(expand_index_template("dir.d/out", 1), "dir.d/out_0001");
  EXPECT_EQ(expand_index_template("out/", 2), "out_0002");
  EXPECT_EQ(expand_index_template("", 3), "split_0003");
  EXPECT_EQ(expand_index_template("f_[index].tgm", 123456), "f_123456.tgm");
  EXPECT_EQ(expand_index_template("[index]/[index]", 7), "0007/0007");
}

TEST(CliSplit, Errors) {
  expect_usage_error(run_cli({"split", fixture("multi_object.tgm")}));  // -o required
  expect_usage_error(run_cli({"split", "-o", "x.tgm"}));                // INPUT required
  const scratch_dir dir;
  const run_result r = run_cli({"split", "-o", (dir / "x.tgm").string(), "/nonexistent/in.tgm"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(dir_listing(dir.path()).empty());
}

// ---- reshuffle -------------------------------------------------------------

TEST(CliReshuffle, FooterIndexedBecomesHeaderIndexed) {
  const scratch_dir dir;
  const fs::path in = copy_fixture(dir, "ten-msg-footer.tgm");
  const std::vector<std::byte> input = read_file(in);
  const fs::path out = dir / "r.tgm";
  expect_success(run_cli({"reshuffle", "-o", out.string(), in.string()}),
                 "Reshuffled 10 message(s) from " + in.string() + " to " + out.string() + "\n");
  EXPECT_EQ(read_file(in), input);
  const auto before = messages_of(in);
  const auto after = messages_of(out);
  ASSERT_EQ(after.size(), 10u);
  for (std::size_t i = 0; i < 10; ++i) {
    const format::preamble old_pre = format::read_preamble(before[i]);
    EXPECT_NE(old_pre.flags & format::message_flags::footer_index, 0);
    const format::preamble pre = format::read_preamble(after[i]);
    EXPECT_NE(pre.flags & format::message_flags::header_index, 0) << i;
    EXPECT_NE(pre.flags & format::message_flags::header_hashes, 0) << i;
    EXPECT_EQ(pre.flags & format::message_flags::footer_index, 0) << i;
    EXPECT_EQ(pre.flags & format::message_flags::footer_metadata, 0) << i;
    EXPECT_EQ(pre.total_length, after[i].size());
    // Same content: base entries and objects.
    global_metadata g0 = full_metadata(before[i]);
    global_metadata g1 = full_metadata(after[i]);
    EXPECT_TRUE(g0.base == g1.base) << i;
    EXPECT_TRUE(g0.extra == g1.extra) << i;
    expect_same_objects(objects_of(before[i]), objects_of(after[i]));
  }
  // The header metadata now carries everything (ls reads it).
  expect_success(run_cli({"get", "-p", "fixture.msg_index", out.string()}), "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n");
  expect_all_hashed(out);
}

TEST(CliReshuffle, NonBackfilledStreamingTailAndInPlace) {
  const scratch_dir dir;
  const fs::path f = copy_fixture(dir, "streaming-tail.tgm");
  const auto before = objects_of_file(f);
  expect_success(run_cli({"reshuffle", "-o", f.string(), f.string()}),
                 "Reshuffled 10 message(s) from " + f.string() + " to " + f.string() + "\n");
  const auto msgs = messages_of(f);
  ASSERT_EQ(msgs.size(), 10u);
  EXPECT_NE(format::read_preamble(msgs[9]).total_length, 0u);
  expect_same_objects(before, objects_of_file(f));
  EXPECT_EQ(dir_listing(dir.path()), (std::vector<std::string>{"streaming-tail.tgm"}));
}

TEST(CliReshuffle, Errors) {
  expect_usage_error(run_cli({"reshuffle", fixture("single-msg.tgm")}));
  expect_usage_error(run_cli({"reshuffle", "-o", "x.tgm"}));
  const scratch_dir dir;
  const fs::path out = dir / "r.tgm";
  write_file(out, bytes_of("old"));
  const run_result r = run_cli({"reshuffle", "-o", out.string(), "/nonexistent/x.tgm"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(read_file(out), bytes_of("old"));
}

// ---- every object survives merge → split → copy → reshuffle ----------------

TEST(CliRoundTrip, LossyCompressedAndMaskedObjectsBitForBit) {
  const scratch_dir dir;
  const fs::path in = dir / "codecs.tgm";
  write_file(in, codec_file());
  const std::vector<std::byte> input = read_file(in);
  const auto original = objects_of_file(in);
  ASSERT_EQ(original.size(), 5u);
  ASSERT_EQ(original[0].descriptor.encoding, "simple_packing");
  ASSERT_EQ(original[1].descriptor.compression, "zstd");
  ASSERT_EQ(original[2].descriptor.compression, "zfp");
  ASSERT_TRUE(original[3].descriptor.masks.has_value());  // NaN mask

  const fs::path merged = dir / "merged.tgm";
  // No --allow-nan needed: the masked object is carried over, not re-encoded.
  expect_success(run_cli({"merge", "-o", merged.string(), in.string()}),
                 "Merged 5 objects from 1 file(s) into " + merged.string() + " (strategy: first)\n");
  expect_same_objects(original, objects_of_file(merged));

  fs::create_directory(dir / "parts");
  expect_success(
      run_cli({"--threads", "2", "split", "-o", (dir / "parts/p_[index].tgm").string(), merged.string()}),
      "Split into 5 message(s)\n");
  fs::create_directory(dir / "rt");
  for (int k = 0; k < 5; ++k) {
    const fs::path part = dir / ("parts/p_000" + std::to_string(k) + ".tgm");
    expect_success(run_cli({"copy", part.string(), (dir / "rt/[campaign].tgm").string()}), "");
  }
  const fs::path all = dir / "rt/rt.tgm";
  const auto msgs = messages_of(all);
  ASSERT_EQ(msgs.size(), 5u);
  expect_same_objects(original, objects_of_file(all));
  const std::vector<std::string> names = {"sp", "zstd", "zfp", "nan", "lz4"};
  for (std::size_t k = 0; k < 5; ++k) {
    const global_metadata g = full_metadata(msgs[k]);
    EXPECT_EQ(text_at(g, 0, "name"), names[k]);
    EXPECT_EQ(extra_text(g, "campaign"), "rt");
    ASSERT_NE(g.extra.find("second"), nullptr);  // merged into the one message
  }
  expect_all_hashed(all);

  const fs::path reshuffled = dir / "reshuffled.tgm";
  expect_success(run_cli({"reshuffle", "-o", reshuffled.string(), all.string()}),
                 "Reshuffled 5 message(s) from " + all.string() + " to " + reshuffled.string() + "\n");
  expect_same_objects(original, objects_of_file(reshuffled));
  const fs::path set = dir / "set.tgm";
  expect_success(run_cli({"set", "-s", "name=renamed", reshuffled.string(), set.string()}), "");
  expect_same_objects(original, objects_of_file(set));
  EXPECT_EQ(read_file(in), input);

  // The NaNs come back where they were.
  const message nan_msg = decode(buffer::borrowed(messages_of(set)[3]));
  const auto* values = nan_msg.object(0).data_as<double>();
  for (std::size_t i = 0; i < 50; ++i) EXPECT_EQ(std::isnan(values[i]), i % 7 == 3) << i;
}

}  // namespace
}  // namespace tensogram::cli::test

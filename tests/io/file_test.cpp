// tensogram::file over local, mapped and in-memory sources: every fixture
// reads the same through each path as through the buffer API.
#include <gtest/gtest.h>

#include <set>

#include "io_test_support.hpp"
#include "tensogram/format/aggregate_frames.hpp"

namespace {

using tgtest::bytes;

enum class path_kind { local, mapped, local_forward };

tensogram::file open_as(path_kind k, const std::string& path) {
  switch (k) {
    case path_kind::local: return tensogram::file::open(path);
    case path_kind::mapped: return tensogram::file::open_mmap(path);
    case path_kind::local_forward: return tensogram::file::open(path, tensogram::scan_mode::forward);
  }
  throw std::logic_error("unreachable");
}

class FileFixtures : public ::testing::TestWithParam<path_kind> {};

TEST_P(FileFixtures, EveryFixtureReadsAsTheBufferApi) {
  for (const std::string& name : tgtest::all_fixtures()) {
    SCOPED_TRACE(name);
    const bytes whole = tgtest::read_fixture(name);
    const std::vector<tensogram::scan_entry> expected = tensogram::scan(whole);
    tensogram::file f = open_as(GetParam(), tgtest::fixture_path(name));
    ASSERT_EQ(f.message_count(), expected.size());
    EXPECT_EQ(f.message_extents(), expected);
    for (std::size_t i = 0; i < expected.size(); ++i) {
      SCOPED_TRACE("message " + std::to_string(i));
      const tensogram::buffer msg = tensogram::buffer::owned(
          bytes(whole.begin() + static_cast<std::ptrdiff_t>(expected[i].offset),
                whole.begin() + static_cast<std::ptrdiff_t>(expected[i].offset + expected[i].length)));
      const tensogram::buffer got = f.message_bytes(i);
      ASSERT_EQ(got.size(), msg.size());
      EXPECT_EQ(0, std::memcmp(got.data(), msg.data(), msg.size()));
      EXPECT_EQ(f.read_message(i).size(), msg.size());

      const tensogram::message full = tensogram::decode(msg);
      tgtest::expect_same_message(f.decode_message(i), full);
      EXPECT_EQ(f.decode_metadata(i).global(), tensogram::decode_metadata(msg.bytes()).global());
      const auto [meta, descriptors] = f.decode_descriptors(i);
      EXPECT_EQ(meta.global(), full.global());
      ASSERT_EQ(descriptors.size(), full.num_objects());
      for (std::size_t k = 0; k < full.num_objects(); ++k) {
        SCOPED_TRACE("object " + std::to_string(k));
        EXPECT_EQ(descriptors[k], full.object(k).descriptor());
        const tensogram::message one = f.decode_object(i, k);
        const tensogram::message ref = tensogram::decode_object(msg, k);
        tgtest::expect_same_message(one, ref);
        const std::uint64_t n = full.object(k).descriptor().element_count();
        const std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges = {{0, n}, {n / 2, n - n / 2}};
        const std::vector<tensogram::buffer> parts = f.decode_range(i, k, ranges);
        const std::vector<tensogram::buffer> ref_parts = tensogram::decode_range(msg, k, ranges);
        ASSERT_EQ(parts.size(), ref_parts.size());
        for (std::size_t r = 0; r < parts.size(); ++r) {
          ASSERT_EQ(parts[r].size(), ref_parts[r].size());
          EXPECT_EQ(0, std::memcmp(parts[r].data(), ref_parts[r].data(), parts[r].size()));
        }
      }
      EXPECT_THROW((void)f.decode_object(i, full.num_objects()), tensogram::object_error);
    }
    EXPECT_THROW((void)f.message_bytes(expected.size()), tensogram::framing_error);
  }
}

INSTANTIATE_TEST_SUITE_P(Paths, FileFixtures,
                         ::testing::Values(path_kind::local, path_kind::mapped, path_kind::local_forward));

// The reference opens its file handle eagerly and scans lazily (issue 24):
// a missing path fails `open`, an existing one is not read by it.
TEST(File, OpenIsEagerScanIsLazy) {
  tgtest::temp_dir dir;
  const auto missing = dir / "missing.tgm";
  for (const bool mapped : {false, true}) {
    try {
      (void)(mapped ? tensogram::file::open_mmap(missing) : tensogram::file::open(missing));
      ADD_FAILURE() << "open of a missing path succeeded";
    } catch (const tensogram::io_error& e) {
      EXPECT_EQ(e.detail(), "file not found: " + missing.string());
    }
  }
  tensogram::file f = tensogram::file::open(tgtest::fixture_path("thousand-msg.tgm"));
  EXPECT_EQ(f.source().stats().requests, 0U);
  EXPECT_EQ(f.message_count(), 1000U);
  // A file removed after open stays readable through the open descriptor.
  const auto gone = dir / "gone.tgm";
  std::filesystem::copy_file(tgtest::fixture_path("thousand-msg.tgm"), gone);
  tensogram::file g = tensogram::file::open(gone);
  std::filesystem::remove(gone);
  EXPECT_EQ(g.message_count(), 1000U);
}

TEST(File, ScanReadsOnlyProbes) {
  // Thousand messages: a bidirectional listing is one batched read per two
  // messages, and never the bulk of the file.
  tensogram::file f = tensogram::file::open(tgtest::fixture_path("thousand-msg.tgm"));
  ASSERT_EQ(f.message_count(), 1000U);
  const tensogram::io::source_stats s = f.source().stats();
  EXPECT_LE(s.round_trips, 1000U / 2 + 2);
  EXPECT_LE(s.bytes, 1000U * 40 + 64);
  tensogram::file g =
      tensogram::file::open(tgtest::fixture_path("thousand-msg.tgm"), tensogram::scan_mode::forward);
  ASSERT_EQ(g.message_count(), 1000U);
  EXPECT_LE(g.source().stats().round_trips, 1000U + 2);
}

TEST(File, MappedNativeObjectsAreViewsIntoTheMapping) {
  // metadata_parity.tgm stores little-endian objects: native on x86-64.
  if (tensogram::native_byte_order() != tensogram::byte_order::little) GTEST_SKIP() << "big-endian host";
  tensogram::file f = tensogram::file::open_mmap(tgtest::fixture_path("metadata_parity.tgm"));
  const tensogram::buffer whole = f.message_bytes(0);
  EXPECT_EQ(whole.kind(), tensogram::buffer::ownership::mapped);
  const tensogram::message m = f.decode_message(0);
  ASSERT_EQ(m.num_objects(), 2U);
  for (const tensogram::decoded_object& o : m) {
    EXPECT_TRUE(o.is_view());
    EXPECT_TRUE(whole.contains(o.bytes()));
  }
  const tensogram::message one = f.decode_object(0, 1);
  EXPECT_TRUE(one.object(0).is_view());
  EXPECT_TRUE(whole.contains(one.object(0).bytes()));
}

TEST(File, CreateMakesMissingParentDirectories) {
  tgtest::temp_dir dir;
  const auto p = dir / "a" / "b" / "out.tgm";
  tensogram::file f = tensogram::file::create(p);
  EXPECT_TRUE(std::filesystem::is_regular_file(p));
  EXPECT_EQ(f.message_count(), 0U);
  // A regular file where a directory is needed: io_error naming the path.
  try {
    (void)tensogram::file::create(p / "c.tgm");
    ADD_FAILURE() << "expected io_error";
  } catch (const tensogram::io_error& e) {
    EXPECT_NE(std::string(e.what()).find("c.tgm"), std::string::npos) << e.what();
  }
}

TEST(File, CreateAppendAndReadBack) {
  tgtest::temp_dir dir;
  const auto p = dir / "out.tgm";
  {
    tensogram::file f = tensogram::file::create(p);
    EXPECT_EQ(f.message_count(), 0U);
    f.append_raw(tgtest::make_message(1));
    // Typed append.
    tensogram::global_metadata meta;
    meta.extra.set("step", tensogram::cbor::value(std::uint64_t{2}));
    const std::vector<float> v = {1.5F, 2.5F};
    tensogram::object_input in{tensogram::data_object_descriptor::contiguous(tensogram::dtype::float32, {2}),
                               std::as_bytes(std::span<const float>(v))};
    f.append(meta, std::span<const tensogram::object_input>(&in, 1));
    // JSON append (reference wrapper API).
    const std::vector<std::int32_t> w = {7, 8, 9};
    f.append(
        R"({"descriptors": [{"type": "ntensor", "ndim": 1, "shape": [3], "strides": [1], "dtype": "int32",
                   "byte_order": "little", "encoding": "none", "filter": "none", "compression": "none"}],
                   "step": 3})",
        {{reinterpret_cast<const std::uint8_t*>(w.data()), w.size() * 4}});
    EXPECT_EQ(f.message_count(), 3U);
    const tensogram::message m = f.decode_message(1);
    ASSERT_EQ(m.num_objects(), 1U);
    EXPECT_EQ(m.object(0).data_as<float>()[1], 2.5F);
  }
  tensogram::file g = tensogram::file::open(p);
  ASSERT_EQ(g.message_count(), 3U);
  EXPECT_EQ(g.decode_object(0, 0).object(0).data_as<float>()[3], tgtest::expected_value(1, 0, 3));
  EXPECT_EQ(g.decode_message(2).object(0).data_as<std::int32_t>()[2], 9);
  EXPECT_EQ(g.decode_metadata(2).get_int("step"), 3);
}

TEST(File, AppendRejectsAnythingButOneWholeMessage) {
  tgtest::temp_dir dir;
  const auto p = dir / "out.tgm";
  tensogram::file f = tensogram::file::create(p);
  bytes one = tgtest::make_message(1);
  bytes two = one;
  two.insert(two.end(), one.begin(), one.end());
  EXPECT_THROW(f.append_raw(two), tensogram::invalid_arg_error);
  EXPECT_THROW(f.append_raw(bytes(one.begin(), one.end() - 1)), tensogram::invalid_arg_error);
  bytes junk = one;
  junk.push_back(std::byte{0});
  EXPECT_THROW(f.append_raw(junk), tensogram::invalid_arg_error);
  EXPECT_THROW(f.append_raw(nullptr, 3), tensogram::invalid_arg_error);
  EXPECT_EQ(std::filesystem::file_size(p), 0U);
  tensogram::file r = tensogram::file::open_mmap(tgtest::fixture_path("two-msg.tgm"));
  EXPECT_EQ(r.message_count(), 2U);
}

TEST(File, AppendToMappedFileRemaps) {
  tgtest::temp_dir dir;
  const auto p = dir / "out.tgm";
  tgtest::write_bytes(p, tgtest::make_message(1));
  tensogram::file f = tensogram::file::open_mmap(p);
  ASSERT_EQ(f.message_count(), 1U);
  const tensogram::message before = f.decode_message(0);  // keeps the old mapping alive
  f.append_raw(tgtest::make_message(2));
  ASSERT_EQ(f.message_count(), 2U);
  EXPECT_EQ(f.decode_message(1).object(0).data_as<float>()[0], tgtest::expected_value(2, 0, 0));
  EXPECT_EQ(before.object(0).data_as<float>()[0], tgtest::expected_value(1, 0, 0));
}

TEST(File, AppendAfterGarbageTailRescans) {
  tgtest::temp_dir dir;
  const auto p = dir / "out.tgm";
  bytes content = tgtest::make_message(1);
  const bytes second = tgtest::make_message(2);
  content.insert(content.end(), second.begin(), second.begin() + 50);  // interrupted append
  tgtest::write_bytes(p, content);
  tensogram::file f = tensogram::file::open(p);
  ASSERT_EQ(f.message_count(), 1U);
  f.append_raw(tgtest::make_message(3));
  ASSERT_EQ(f.message_count(), 2U);
  EXPECT_EQ(f.message_extent(1).offset, content.size());
  EXPECT_EQ(f.decode_message(1).object(0).data_as<float>()[0], tgtest::expected_value(3, 0, 0));
}

// Messages above the 256 KiB layout region: decode_object reads the header
// region once, then only the object's frame.
TEST(File, LargeMessageObjectAccessReadsOnlyWhatItNeeds) {
  tgtest::temp_dir dir;
  const auto p = dir / "big.tgm";
  constexpr std::size_t elements = 200000;  // 800 KB per object
  const bytes msg = tgtest::make_message(5, 3, elements);
  tgtest::write_bytes(p, msg);
  tensogram::file f = tensogram::file::open(p);
  ASSERT_EQ(f.message_count(), 1U);
  const tensogram::io::source_stats s0 = f.source().stats();
  const tensogram::message m = f.decode_object(0, 2);
  const tensogram::io::source_stats s1 = f.source().stats();
  EXPECT_EQ(s1.requests - s0.requests, 2U);  // header region + frame
  EXPECT_LT(s1.bytes - s0.bytes, 256 * 1024 + elements * 4 + 1024);
  EXPECT_EQ(m.object(0).data_as<float>()[elements - 1], tgtest::expected_value(5, 2, elements - 1));
  EXPECT_EQ(m.global(), tensogram::decode(tensogram::buffer::borrowed(msg)).global());
  const tensogram::message m1 = f.decode_object(0, 1);
  EXPECT_EQ(f.source().stats().requests - s1.requests, 1U);  // layout cached
  EXPECT_EQ(m1.object(0).data_as<float>()[7], tgtest::expected_value(5, 1, 7));
  const std::pair<std::uint64_t, std::uint64_t> r[] = {{10, 5}};
  const std::vector<tensogram::buffer> part = f.decode_range(0, 0, r);
  ASSERT_EQ(part.size(), 1U);
  EXPECT_EQ(reinterpret_cast<const float*>(part[0].data())[0], tgtest::expected_value(5, 0, 10));
  EXPECT_EQ(f.decode_metadata(0).get_int("step"), 5);
}

// Header frames beyond the layout region are read on their own; a damaged
// one is reported as the in-memory decoder reports it (message offsets).
TEST(File, LargeMessageHeaderFramesBeyondTheLayoutRegion) {
  tgtest::temp_dir dir;
  const auto p = dir / "big_meta.tgm";
  tensogram::global_metadata meta;
  meta.extra.set("note", tensogram::cbor::value(std::string(300 * 1024, 'n')));
  const std::vector<float> values(1000, 2.5f);
  const tensogram::object_input in{
      tensogram::data_object_descriptor::contiguous(tensogram::dtype::float32, {1000}),
      std::as_bytes(std::span<const float>(values))};
  bytes msg = tensogram::encode(meta, std::span(&in, 1));
  tgtest::write_bytes(p, msg);
  {
    tensogram::file f = tensogram::file::open(p);
    EXPECT_EQ(f.decode_object(0, 0).object(0).data_as<float>()[999], 2.5f);
    EXPECT_EQ(f.decode_metadata(0).global(), tensogram::decode_metadata(msg).global());
  }
  // No ENDF at the end of the metadata frame (the first frame, at 24).
  const std::uint64_t len = tgtest::be64(msg, 24 + 8);
  msg[24 + len - 1] = std::byte{'X'};
  tgtest::write_bytes(p, msg);
  std::string expected;
  try {
    (void)tensogram::decode_object(tensogram::buffer::borrowed(msg), 0);
  } catch (const tensogram::framing_error& e) {
    expected = e.what();
  }
  ASSERT_NE(expected.find("missing ENDF marker at offset " + std::to_string(24 + len - 4)),
            std::string::npos);
  tensogram::file f = tensogram::file::open(p);
  try {
    (void)f.decode_object(0, 0);
    ADD_FAILURE() << "no error";
  } catch (const tensogram::framing_error& e) {
    EXPECT_EQ(e.what(), expected);
  }
}

TEST(File, HashVerificationThroughTheFile) {
  tgtest::temp_dir dir;
  const auto p = dir / "big.tgm";
  bytes msg = tgtest::make_message(5, 2, 100000);
  // Corrupt one payload byte of object 1 (the last frame): its hash fails.
  const tensogram::message_layout layout = tensogram::read_message_layout(msg);
  msg[layout.objects[1].offset + 40] ^= std::byte{1};
  tgtest::write_bytes(p, msg);
  tensogram::decode_options verify;
  verify.verify_hash = true;
  std::vector<tensogram::file> files;
  files.push_back(tensogram::file::open(p));
  files.push_back(tensogram::file::open_mmap(p));
  for (tensogram::file& f : files) {
    EXPECT_NO_THROW((void)f.decode_object(0, 0, verify));
    EXPECT_THROW((void)f.decode_object(0, 1, verify), tensogram::hash_mismatch_error);
    EXPECT_NO_THROW((void)f.decode_object(0, 1));
  }
}

}  // namespace

namespace {

// A footer-indexed (streaming) message above the layout region: the scan
// kept its preamble flags, so the header and footer regions come in one
// round trip, then the frame.
TEST(File, LargeStreamingMessageReadsHeadAndTailInOneRoundTrip) {
  tgtest::temp_dir dir;
  const auto p = dir / "stream.tgm";
  constexpr std::size_t elements = 200000;
  std::vector<std::vector<float>> values(3, std::vector<float>(elements));
  {
    tensogram::global_metadata meta;
    meta.extra.set("step", tensogram::cbor::value(std::uint64_t{4}));
    tensogram::streaming_encoder enc(p, meta);
    for (std::size_t k = 0; k < 3; ++k) {
      for (std::size_t e = 0; e < elements; ++e) values[k][e] = static_cast<float>(k * 1000000 + e);
      enc.write_object(tensogram::data_object_descriptor::contiguous(tensogram::dtype::float32, {elements}),
                       std::as_bytes(std::span<const float>(values[k])));
    }
    (void)enc.finish();
  }
  tensogram::file f = tensogram::file::open(p);
  ASSERT_EQ(f.message_count(), 1U);
  const tensogram::io::source_stats s0 = f.source().stats();
  const tensogram::message m = f.decode_object(0, 1);
  const tensogram::io::source_stats s1 = f.source().stats();
  EXPECT_EQ(s1.round_trips - s0.round_trips, 2U);
  EXPECT_EQ(s1.requests - s0.requests, 3U);
  EXPECT_EQ(m.object(0).data_as<float>()[elements - 1], static_cast<float>(1000000 + elements - 1));
  const tgtest::bytes whole = tgtest::read_bytes(p);
  tgtest::expect_same_message(m, tensogram::decode_object(tensogram::buffer::borrowed(whole), 1));
  EXPECT_EQ(f.decode_metadata(0).global(), tensogram::decode_metadata(whole).global());
}

}  // namespace

namespace {

// The preamble's index flags are advisory (spec 01 §3.1): they only choose
// between the index fast path and the full frame walk. A message whose
// flags deny its (present) index frame must give the same layout, metadata
// and objects, in memory and through a file that is not a mapping.
TEST(File, IndexFlagsOnlyChooseThePath) {
  const bytes indexed = tgtest::make_message(7, 3, 16);
  ASSERT_NE(tgtest::be16(indexed, 10) & tensogram::format::message_flags::header_index, 0);
  bytes denied = indexed;
  const auto flags = static_cast<std::uint16_t>(
      tgtest::be16(indexed, 10) &
      ~(tensogram::format::message_flags::header_index | tensogram::format::message_flags::footer_index));
  tgtest::put_be16(denied, 10, flags);

  const tensogram::message_layout a = tensogram::read_message_layout(indexed);
  const tensogram::message_layout b = tensogram::read_message_layout(denied);
  EXPECT_EQ(a.metadata, b.metadata);
  ASSERT_EQ(a.objects.size(), b.objects.size());
  for (std::size_t k = 0; k < a.objects.size(); ++k) {
    EXPECT_EQ(a.objects[k].offset, b.objects[k].offset);
    EXPECT_EQ(a.objects[k].length, b.objects[k].length);
  }

  tgtest::temp_dir dir;
  const auto p = dir / "denied.tgm";
  tgtest::write_bytes(p, denied);
  tensogram::file f = tensogram::file::open(p);
  EXPECT_EQ(f.decode_metadata(0).global(), tensogram::decode_metadata(indexed).global());
  for (std::size_t k = 0; k < 3; ++k) {
    const tensogram::message m = f.decode_object(0, k);
    EXPECT_EQ(m.global(), a.metadata);
    const auto* v = reinterpret_cast<const float*>(m.object(0).bytes().data());
    for (std::size_t e = 0; e < 16; ++e) EXPECT_EQ(v[e], tgtest::expected_value(7, k, e));
  }
}

}  // namespace

namespace {

tensogram::cbor::value metadata_map(std::uint64_t step, std::size_t base_entries) {
  tensogram::cbor::value m = tgtest::metadata_with_base(base_entries);
  m.set("step", tensogram::cbor::value(step));
  return m;
}

// A header-indexed message whose metadata base has one entry for two objects,
// built by hand (our encoder pads the base itself): the layout reader's index
// path pads it. The index is rebuilt until it names the data frames where
// they ended up (its own size moves them).
bytes indexed_short_base(std::span<const std::byte> payload, const tensogram::cbor::value& desc) {
  namespace fmt = tensogram::format;
  fmt::index_body index;
  bytes msg;
  for (int round = 0; round < 4; ++round) {
    msg = tgtest::message_builder(fmt::message_flags::header_metadata | fmt::message_flags::header_index)
              .frame(1, metadata_map(1, 1))
              .frame(2, fmt::encode_index_body(index))
              .data_frame(payload, desc)
              .data_frame(payload, desc)
              .finish();
    fmt::index_body found;
    for (const tgtest::wire_frame& f : tgtest::wire_frames(msg)) {
      if (f.type != 9) continue;
      found.offsets.push_back(f.offset);
      found.lengths.push_back(f.total_length);
    }
    if (found.offsets == index.offsets && found.lengths == index.lengths) return msg;
    index = std::move(found);
  }
  ADD_FAILURE() << "the index did not settle";
  return msg;
}

// A file read through a byte source caches, per message, the metadata of a
// full decode (its layout's) and the first metadata frame's (what
// `decode_metadata` returns), from one parse of the frames. Where the two
// differ (a later metadata frame, a base padded to the object count,
// preceders merged: spec 01 §14.1, §14.2) each must still be what the buffer
// API returns; where they are the same, both are one shared value.
TEST(File, FirstAndFullMetadataThroughASource) {
  namespace tg = tensogram;
  using tgtest::message_builder;
  const bytes payload(8, std::byte{0x3F});
  const tg::cbor::value desc = tgtest::descriptor_value("float32", {2});
  const tg::cbor::value preceder =
      tg::cbor::value::make_map({{"base", tg::cbor::value(tg::cbor::array{tg::cbor::value::make_map(
                                              {{"p", tg::cbor::value(std::uint64_t{9})}})})}});
  struct sample {
    std::string name;
    bytes msg;
    bool differ;  // decode_metadata and decode disagree on this message
  };
  std::vector<sample> samples;
  samples.push_back({"one metadata frame",
                     message_builder()
                         .frame(1, metadata_map(1, 2))
                         .data_frame(payload, desc)
                         .data_frame(payload, desc)
                         .finish(),
                     false});
  samples.push_back({"base padded to the object count",
                     message_builder()
                         .frame(1, metadata_map(1, 1))
                         .data_frame(payload, desc)
                         .data_frame(payload, desc)
                         .finish(),
                     true});
  samples.push_back({"base padded by the index path", indexed_short_base(payload, desc), true});
  samples.push_back({"header and footer metadata",
                     message_builder(0x0003)
                         .frame(1, metadata_map(1, 2))
                         .data_frame(payload, desc)
                         .data_frame(payload, desc)
                         .frame(7, metadata_map(2, 2))
                         .finish(),
                     true});
  samples.push_back({"preceder merged",
                     message_builder(0x0041)
                         .frame(1, metadata_map(1, 2))
                         .data_frame(payload, desc)
                         .frame(8, preceder)
                         .data_frame(payload, desc)
                         .finish(),
                     true});
  // An index that does not account for the data frames: the layout reader
  // falls back to the full walk, which takes the metadata frames the index
  // read parsed (the first and the last) instead of parsing them again.
  namespace fmt = tensogram::format;
  // Header metadata frames with steps `header_steps`, an empty index, two
  // objects, then a footer metadata frame with step `footer_step` (if not 0).
  const auto not_tiled = [&](std::vector<std::uint64_t> header_steps, std::uint64_t footer_step) {
    std::uint16_t flags = fmt::message_flags::header_metadata | fmt::message_flags::header_index;
    if (footer_step != 0) flags |= fmt::message_flags::footer_metadata;
    message_builder b(flags);
    for (std::uint64_t step : header_steps) b.frame(1, metadata_map(step, 2));
    b.frame(2, fmt::encode_index_body(fmt::index_body{})).data_frame(payload, desc).data_frame(payload, desc);
    if (footer_step != 0) b.frame(7, metadata_map(footer_step, 2));
    return b.finish();
  };
  samples.push_back({"index that does not tile the body", not_tiled({1}, 0), false});
  samples.push_back(
      {"header and footer metadata, index that does not tile the body", not_tiled({1}, 2), true});
  samples.push_back({"three metadata frames, index that does not tile the body", not_tiled({1, 3}, 2), true});
  tgtest::temp_dir dir;
  {
    // Streamed: header metadata without a base, footer metadata and index
    // (the index path of the layout reader).
    const auto p = dir / "streamed.tgm";
    tg::global_metadata meta;
    meta.extra.set("step", tg::cbor::value(std::uint64_t{4}));
    tg::streaming_encoder enc(p, meta);
    const std::vector<float> values(16, 1.0f);
    for (int k = 0; k < 2; ++k) {
      enc.write_object(tg::data_object_descriptor::contiguous(tg::dtype::float32, {16}),
                       std::as_bytes(std::span<const float>(values)));
    }
    (void)enc.finish();
    samples.push_back({"streamed", tgtest::read_bytes(p), true});
  }
  for (const sample& s : samples) {
    SCOPED_TRACE(s.name);
    const tg::buffer msg = tg::buffer::borrowed(s.msg);
    const tg::global_metadata first = tg::decode_metadata(msg.bytes()).global();
    const tg::global_metadata full = tg::decode(msg).global();
    EXPECT_EQ(first != full, s.differ);
    EXPECT_EQ(tg::read_message_layout(msg.bytes()).metadata, full);
    const auto p = dir / "sample.tgm";
    tgtest::write_bytes(p, s.msg);
    ASSERT_EQ(tg::file::open(p).message_count(), 1U);
    // Both orders of first use: the layout is cached by whichever call comes first.
    for (int order = 0; order < 2; ++order) {
      tg::file g = tg::file::open(p);
      if (order == 0) {
        EXPECT_EQ(g.decode_metadata(0).global(), first);
      }
      for (std::size_t k = 0; k < 2; ++k) EXPECT_EQ(g.decode_object(0, k).global(), full);
      EXPECT_EQ(g.decode_metadata(0).global(), first);
    }
  }
}

}  // namespace

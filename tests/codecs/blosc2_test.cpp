// blosc2 (spec 03 §8.4, §8.5, §11.3): the frames c-blosc2 2.21.3 wrote in
// fixtures/blosc2 decode to their .raw bytes; our frames equal the
// reference's where the spec fixes every byte (§8.5 example, an all-zero
// chunk); round trips over codec × filter × typesize × size × data kind;
// hand-assembled frames for the chunk forms c-blosc2 may write (special
// chunks and index entries, zero and run streams, split streams); hostile
// frames; range decode. blosclz on its own, the pipeline and the mask
// method are in blosc2_pipeline_test.cpp.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>

#include <lz4.h>

#include "blosc2_support.hpp"
#include "tensogram/codecs/blosclz.hpp"

namespace {

using namespace tgtest::blosc2;

TEST(Blosc2Fixtures, EveryFrameDecodesToItsRawBytes) {
  // The directory holds exactly the README's files.
  std::size_t frames = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(TENSOGRAM_FIXTURES) + "/blosc2")) {
    frames += e.path().extension() == ".b2frame" ? 1 : 0;
  }
  EXPECT_EQ(frames, k_rows.size());
  for (const fixture& f : fixtures()) {
    SCOPED_TRACE(f.row.name);
    ASSERT_EQ(f.frame.size(), f.row.frame_bytes);
    ASSERT_EQ(f.raw.size(), f.row.input_bytes);
    EXPECT_EQ(cx::blosc2_decompress(f.frame, f.raw.size()), f.raw);
    EXPECT_EQ(cx::blosc2_decompress(f.frame, f.raw.size(), 3), f.raw);
    // In place, on 0 and 2 threads, into an odd offset between guard bytes.
    for (std::uint32_t threads : {0U, 2U}) {
      bytes out(f.raw.size() + 2, std::byte{0xA5});
      cx::blosc2_decompress_into(f.frame, {out.data() + 1, f.raw.size()}, threads);
      EXPECT_EQ(out.front(), std::byte{0xA5});
      EXPECT_EQ(out.back(), std::byte{0xA5});
      EXPECT_TRUE(std::equal(f.raw.begin(), f.raw.end(), out.begin() + 1));
    }
    // A destination of another size than the frame's is refused before
    // anything is decoded.
    bytes larger(f.raw.size() + 1);
    expect_error<tg::encoding_error>(
        [&] { cx::blosc2_decompress_into(f.frame, larger); },
        "decompressed " + std::to_string(f.raw.size()) + " bytes, expected " + std::to_string(larger.size()));
    const cx::blosc2_frame_info info = cx::blosc2_inspect(f.frame);
    EXPECT_EQ(info.nbytes, f.row.input_bytes);
    EXPECT_EQ(info.typesize, f.row.typesize);
    EXPECT_EQ(info.codec_byte, static_cast<unsigned>(f.row.codec) | (f.row.clevel << 4));
    EXPECT_EQ(info.chunksize, std::min<std::size_t>(f.row.chunk_bytes, f.row.input_bytes));
    EXPECT_EQ(info.nchunks, (f.row.input_bytes + f.row.chunk_bytes - 1) / f.row.chunk_bytes);
    // A frame holding more than the caller expects is refused up front.
    expect_error<tg::encoding_error>([&] { (void)cx::blosc2_decompress(f.frame, f.raw.size() - 1); },
                                     "more than the");
  }
  // What the README says the inputs are.
  const bytes& tiny = fixture_named("tiny_lz4_ts1").raw;
  EXPECT_EQ(tiny, tgtest::B({1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(fixture_named("zeros_lz4_ts8").raw, bytes(100000));
  EXPECT_EQ(cx::blosc2_inspect(fixture_named("zeros_lz4_ts8").frame).special_chunks, 1U);
  const bytes& text = fixture_named("text_lz4_noshuffle_ts1").raw;
  for (std::size_t i = 25; i < text.size(); ++i) ASSERT_EQ(text[i], text[i - 25]) << i;
  const bytes& f64 = fixture_named("f64_lz4_shuffle_ts8").raw;
  const std::vector<double> v = f64_values(f64, tg::byte_order::little);
  for (std::size_t i : {0UL, 1UL, 12345UL, 39999UL}) {
    const double x = static_cast<double>(i);
    EXPECT_NEAR(v[i], 280 + 30 * std::sin(0.001 * x) * std::cos(0.00037 * x), 1e-9) << i;
  }
}

TEST(Blosc2Fixtures, RangesEqualFullDecode) {
  std::mt19937_64 rng(8404);
  for (const fixture& f : fixtures()) {
    SCOPED_TRACE(f.row.name);
    const std::uint64_t n = f.raw.size();
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges = {{0, n}, {0, 0}, {n - 1, 1}, {0, 1}};
    if (n > 65537) ranges.push_back({65530, 20});  // across the multichunk fixture's first boundary
    for (int i = 0; i < 12; ++i) {
      const std::uint64_t pos = rng() % n;
      ranges.push_back({pos, rng() % (n - pos + 1)});
    }
    for (const auto& [pos, size] : ranges) {
      EXPECT_EQ(cx::blosc2_decompress_range(f.frame, pos, size, n), tgtest::slice(f.raw, pos, size))
          << pos << "+" << size;
    }
    expect_error<tg::encoding_error>([&] { (void)cx::blosc2_decompress_range(f.frame, n - 1, 2, n); },
                                     "exceeds");
  }
}

TEST(Blosc2Writer, SpecExampleIsByteIdentical) {
  // Spec 03 §8.5: 8 bytes 01..08, lz4, clevel 5, typesize 1.
  const bytes expected = tgtest::from_hex(
      // header (97 bytes)
      "9EA862326672616D6500D200000061CF00000000000000D4"
      "A412005103D30000000000000008D30000000000000028D2"
      "00000001D200000008D200000008D10000D10001C2D80600"
      "00000000010100000000000000000093CD0007DE0000DC00"
      "00"
      // memcpyed data chunk (40)
      "050107010800000008000000280000000000000000010100"
      "00000000000000000102030405060708"
      // index chunk, entry 0 (40)
      "050107080800000008000000280000000000000000010000"
      "00000000000000000000000000000000"
      // trailer (35)
      "940193CD0006DE0000DC0000CE00000023D800"
      "00000000000000000000000000000000");
  ASSERT_EQ(expected.size(), 212U);
  const bytes frame = cx::blosc2_compress(tgtest::B({1, 2, 3, 4, 5, 6, 7, 8}), params(C::lz4, 5, 1));
  EXPECT_EQ(tgtest::to_hex(frame), tgtest::to_hex(expected));
  EXPECT_EQ(frame, fixture_named("tiny_lz4_ts1").frame);
}

cx::blosc2_params fixture_params(const fixture& f) {
  cx::blosc2_params p = params(f.row.codec, f.row.clevel, f.row.typesize, f.row.filter);
  if (f.row.chunk_bytes != k_one_chunk) p.chunk_bytes = f.row.chunk_bytes;
  return p;
}

TEST(Blosc2Writer, ByteIdenticalToCBlosc2WhereTheCodecsAgree) {
  // Framing, chunking, block sizes, split decisions, zero/run streams,
  // memcpyed and special chunks all follow c-blosc2 2.21.3; where the inner
  // codec also produces the same bytes (liblz4 1.9.4 for lz4/lz4hc, and for
  // these inputs Debian 12's zlib and libzstd), the whole frame is the
  // reference's. blosclz (our own match finder), zlib (c-blosc2 bundles
  // zlib-ng) and zstd on larger inputs (library versions) differ.
  const std::vector<std::string> identical = {"f64_lz4_shuffle_ts8",
                                              "f32_lz4_shuffle_ts4",
                                              "u16_lz4_bitshuffle_ts2",
                                              "text_lz4_noshuffle_ts1",
                                              "f64_lz4hc_shuffle_ts8",
                                              "f32_lz4hc_shuffle_ts4",
                                              "u16_lz4hc_bitshuffle_ts2",
                                              "text_lz4hc_noshuffle_ts1",
                                              "text_zlib_noshuffle_ts1",
                                              "text_zstd_noshuffle_ts1",
                                              "noise_lz4_ts1",
                                              "zeros_lz4_ts8",
                                              "tiny_lz4_ts1",
                                              "f64_lz4_clevel0_ts8",
                                              "f64_lz4_multichunk_ts8",
                                              "f64_zstd_multichunk_ts8",
                                              "f64_lz4_threads2_ts8"};
  for (const fixture& f : fixtures()) {
    SCOPED_TRACE(f.row.name);
    const bytes ours = cx::blosc2_compress(f.raw, fixture_params(f));
    EXPECT_EQ(cx::blosc2_decompress(ours, f.raw.size()), f.raw);
    if (std::find(identical.begin(), identical.end(), f.row.name) != identical.end()) {
      EXPECT_EQ(ours, f.frame);
      EXPECT_EQ(cx::blosc2_compress(f.raw, fixture_params(f), 2), f.frame);
    } else {
      // Same structure; sizes within 5 % (blosclz: ours is smaller).
      EXPECT_LT(ours.size(), f.frame.size() * 105 / 100);
    }
  }
}

TEST(Blosc2Writer, LayoutMatchesTheReferenceFrames) {
  // Where the bytes differ, the frame header (sizes aside), the chunk
  // headers' flags, the index chunk's header and the trailer still agree.
  for (const char* name : {"f64_blosclz_shuffle_ts8", "u16_blosclz_bitshuffle_ts2", "f64_zlib_shuffle_ts8",
                           "f64_zstd_shuffle_ts8", "f64_zstd_clevel9_ts8"}) {
    SCOPED_TRACE(name);
    const fixture& f = fixture_named(name);
    const bytes ours = cx::blosc2_compress(f.raw, fixture_params(f));
    const cx::blosc2_frame_info a = cx::blosc2_inspect(ours);
    const cx::blosc2_frame_info b = cx::blosc2_inspect(f.frame);
    EXPECT_EQ(a.nchunks, b.nchunks);
    EXPECT_EQ(a.blocksize, b.blocksize);
    for (std::size_t i = 0; i < 97; ++i) {
      const bool size_field = (i >= 16 && i < 24) || (i >= 39 && i < 47);
      if (!size_field) {
        EXPECT_EQ(ours[i], f.frame[i]) << "header byte " << i;
      }
    }
    EXPECT_EQ(tgtest::slice(ours, 97, 12), tgtest::slice(f.frame, 97, 12)) << "first chunk header";
    EXPECT_EQ(tgtest::slice(ours, 97 + a.cbytes, 32), tgtest::slice(f.frame, 97 + b.cbytes, 32))
        << "index chunk";
    EXPECT_EQ(tgtest::slice(ours, ours.size() - 35, 35), tgtest::slice(f.frame, f.frame.size() - 35, 35));
  }
  // The multichunk fixture's frame block size is its short last chunk's.
  EXPECT_EQ(cx::blosc2_inspect(fixture_named("f64_lz4_multichunk_ts8").frame).blocksize, 57856U);
}

TEST(Blosc2Writer, ReferenceChunkBytes) {
  EXPECT_EQ(cx::blosc2_reference_chunk_bytes(1), 268435456U);
  EXPECT_EQ(cx::blosc2_reference_chunk_bytes(3), 268435455U);
  EXPECT_EQ(cx::blosc2_reference_chunk_bytes(8), 268435456U);
  EXPECT_EQ(cx::blosc2_reference_chunk_bytes(255), 268435456U / 255 * 255);
}

TEST(Blosc2Writer, RoundTripMatrix) {
  std::mt19937_64 rng(2024);
  std::size_t cases = 0;
  for (blosc2_codec codec : {C::blosclz, C::lz4, C::lz4hc, C::zlib, C::zstd}) {
    for (blosc2_filter filter : {F::none, F::shuffle, F::bitshuffle}) {
      for (std::size_t ts = 1; ts <= 16; ++ts) {
        const std::size_t block = 64 * ts + (ts % 3 == 0 ? 8 : 0);
        const std::size_t chunk = 3 * block + ts;  // blocks with a short last one
        cx::blosc2_params p =
            params(codec, static_cast<int>(1 + (ts + static_cast<int>(codec)) % 9), ts, filter);
        p.blocksize = block;
        p.chunk_bytes = chunk;
        const std::vector<std::size_t> sizes = {1, ts, 31, 32, 33, 257, block + 1, 2 * chunk + block + 7};
        for (std::size_t n : sizes) {
          for (kind k : {kind::smooth, kind::noise, kind::constant, kind::zeros}) {
            if (n <= 33 && k != kind::smooth) continue;
            SCOPED_TRACE(testing::Message()
                         << cx::blosc2_codec_name(codec) << " filter " << static_cast<int>(filter) << " ts "
                         << ts << " n " << n << " kind " << static_cast<int>(k));
            const bytes in = make_data(k, n, ts, rng);
            const bytes frame = cx::blosc2_compress(in, p);
            ASSERT_EQ(cx::blosc2_decompress(frame, n), in);
            ++cases;
          }
        }
        // Shuffled integers compress with the reference's default chunking.
        if (ts == 8 && filter == F::shuffle) {
          const bytes in = make_data(kind::smooth, 5000, ts, rng);
          const bytes frame = cx::blosc2_compress(in, params(codec, 5, ts, filter));
          EXPECT_LT(frame.size(), in.size()) << cx::blosc2_codec_name(codec);
          EXPECT_EQ(cx::blosc2_decompress(frame, in.size()), in);
        }
      }
    }
  }
  EXPECT_EQ(cases, 5U * 3U * 16U * 17U);
  // Several filters in a row, undone in reverse order.
  cx::blosc2_params p = params(C::lz4, 5, 4);
  p.filters = {F::bitshuffle, F::none, F::shuffle, F::none, F::shuffle, F::bitshuffle};
  p.blocksize = 1000;
  const bytes in = make_data(kind::smooth, 10007, 4, rng);
  EXPECT_EQ(cx::blosc2_decompress(cx::blosc2_compress(in, p), in.size()), in);
}

TEST(Blosc2Writer, SpecialAndMemcpyedChunks) {
  std::mt19937_64 rng(5);
  // All-zero chunks between data chunks: special entries, no bytes stored.
  cx::blosc2_params p = params(C::lz4, 5, 8);
  p.chunk_bytes = 4096;
  bytes in = make_data(kind::smooth, 4096 * 5 + 100, 8, rng);
  std::fill(in.begin() + 4096, in.begin() + 3 * 4096, std::byte{0});
  std::fill(in.end() - 100, in.end(), std::byte{0});
  const bytes frame = cx::blosc2_compress(in, p);
  const cx::blosc2_frame_info info = cx::blosc2_inspect(frame);
  EXPECT_EQ(info.nchunks, 6U);
  EXPECT_EQ(info.special_chunks, 3U);
  EXPECT_EQ(cx::blosc2_decompress(frame, in.size()), in);
  for (std::uint64_t pos : {0UL, 4000UL, 4096UL, 8000UL, 12000UL, 20280UL}) {
    EXPECT_EQ(cx::blosc2_decompress_range(frame, pos, 300, in.size()), tgtest::slice(in, pos, 300)) << pos;
  }
  // Incompressible: memcpyed, one stored copy plus the 32-byte header.
  const bytes noise = make_data(kind::noise, 50000, 1, rng);
  const bytes nf = cx::blosc2_compress(noise, params(C::zstd, 9, 1));
  EXPECT_EQ(cx::blosc2_inspect(nf).cbytes, 50000U + 32U);
  EXPECT_EQ(cx::blosc2_decompress(nf, noise.size()), noise);
  // clevel 0 stores.
  const bytes stored = cx::blosc2_compress(in, params(C::lz4, 0, 8));
  EXPECT_EQ(cx::blosc2_inspect(stored).cbytes, in.size() + 32U);
  EXPECT_EQ(cx::blosc2_decompress(stored, in.size()), in);
}

TEST(Blosc2Writer, ThreadsDoNotChangeBytes) {
  std::mt19937_64 rng(77);
  const bytes in = make_data(kind::smooth, 3 << 20, 8, rng);
  for (blosc2_codec codec : {C::lz4, C::zstd, C::blosclz}) {
    SCOPED_TRACE(cx::blosc2_codec_name(codec));
    cx::blosc2_params p = params(codec, 3, 8);
    p.blocksize = 64 * 1024;
    const bytes one = cx::blosc2_compress(in, p, 1);
    EXPECT_EQ(cx::blosc2_compress(in, p, 2), one);
    EXPECT_EQ(cx::blosc2_compress(in, p, 5), one);
    EXPECT_EQ(cx::blosc2_decompress(one, in.size(), 2), in);
    EXPECT_EQ(cx::blosc2_decompress(one, in.size(), 7), in);
  }
}

TEST(Blosc2Writer, RangesEqualFullDecode) {
  std::mt19937_64 rng(99);
  for (blosc2_filter filter : {F::none, F::shuffle, F::bitshuffle}) {
    cx::blosc2_params p = params(C::blosclz, 5, 4, filter);
    p.blocksize = 1000;
    p.chunk_bytes = 7000;
    bytes in = make_data(kind::smooth, 40000, 4, rng);
    std::fill(in.begin() + 7000, in.begin() + 14000, std::byte{0});  // a special chunk
    const bytes frame = cx::blosc2_compress(in, p);
    for (int i = 0; i < 200; ++i) {
      const std::uint64_t pos = rng() % in.size();
      const std::uint64_t size =
          rng() % std::min<std::uint64_t>(in.size() - pos + 1, i % 2 == 0 ? 50 : 20000);
      ASSERT_EQ(cx::blosc2_decompress_range(frame, pos, size, in.size()), tgtest::slice(in, pos, size))
          << pos << "+" << size;
    }
  }
}

TEST(Blosc2Writer, InvalidParameters) {
  const bytes in(100, std::byte{1});
  expect_error<tg::encoding_error>([&] { (void)cx::blosc2_compress(in, params(C::lz4, 10, 1)); },
                                   "clevel 10");
  expect_error<tg::encoding_error>([&] { (void)cx::blosc2_compress(in, params(C::lz4, -1, 1)); },
                                   "clevel -1");
  expect_error<tg::encoding_error>([&] { (void)cx::blosc2_compress(in, params(C::lz4, 5, 0)); },
                                   "typesize 0");
  expect_error<tg::encoding_error>([&] { (void)cx::blosc2_compress(in, params(C::lz4, 5, 256)); },
                                   "typesize 256");
  expect_error<tg::encoding_error>([&] { (void)cx::blosc2_compress({}, params(C::lz4, 5, 1)); }, "empty");
  EXPECT_EQ(cx::blosc2_codec_from_name("zstd"), C::zstd);
  EXPECT_FALSE(cx::blosc2_codec_from_name("snappy").has_value());
  EXPECT_FALSE(cx::blosc2_codec_from_name("LZ4").has_value());
}

// ---------------------------------------------------------------------------
// Hand-assembled frames: the chunk forms c-blosc2 may write that our writer
// does not (or not on purpose).

bytes chunk_header(std::uint8_t flags, std::uint8_t ts, std::uint32_t nbytes, std::uint32_t blocksize,
                   std::uint32_t cbytes, std::array<std::uint8_t, 6> filters = {}, std::uint8_t b2flags = 0,
                   std::uint8_t compcode = 1) {
  bytes h(32);
  h[0] = std::byte{5};
  h[1] = std::byte{1};
  h[2] = static_cast<std::byte>(flags);
  h[3] = static_cast<std::byte>(ts);
  wr_le(h, 4, nbytes, 4);
  wr_le(h, 8, blocksize, 4);
  wr_le(h, 12, cbytes, 4);
  for (std::size_t i = 0; i < 6; ++i) h[16 + i] = static_cast<std::byte>(filters[i]);
  h[22] = static_cast<std::byte>(compcode);
  h[31] = static_cast<std::byte>(b2flags);
  return h;
}

// A frame around `data` (the chunks back to back) with these index entries.
bytes assemble(const bytes& data, const std::vector<std::uint64_t>& index, std::uint64_t nbytes,
               std::uint32_t chunksize, std::uint32_t typesize) {
  bytes f = tgtest::slice(fixture_named("tiny_lz4_ts1").frame, 0, 97);
  f.insert(f.end(), data.begin(), data.end());
  const std::uint32_t n = static_cast<std::uint32_t>(8 * index.size());
  bytes ih = chunk_header(n < 32 ? 0x07 : 0x17, 8, n, n, 32 + n, {0, 0, 0, 0, 0, 1}, 0, 0);
  f.insert(f.end(), ih.begin(), ih.end());
  for (std::uint64_t e : index) append_le(f, e, 8);
  const bytes& tiny = fixture_named("tiny_lz4_ts1").frame;
  f.insert(f.end(), tiny.end() - 35, tiny.end());
  wr_be(f, 16, f.size(), 8);
  wr_be(f, 30, nbytes, 8);
  wr_be(f, 39, data.size(), 8);
  wr_be(f, 48, typesize, 4);
  wr_be(f, 58, chunksize, 4);
  return f;
}

TEST(Blosc2Reader, SpecialIndexEntries) {
  // Three chunks of 16 bytes (typesize 4): NaN, uninitialised, zeros.
  const bytes f = assemble({}, {0x82ULL << 56, 0x84ULL << 56, 0x81ULL << 56}, 40, 16, 4);
  bytes expect;
  for (int i = 0; i < 4; ++i)
    expect.insert(expect.end(), {std::byte{0}, std::byte{0}, std::byte{0xC0}, std::byte{0x7F}});
  expect.resize(40);
  EXPECT_EQ(cx::blosc2_decompress(f, 40), expect);
  EXPECT_EQ(cx::blosc2_decompress_range(f, 2, 20, 40), tgtest::slice(expect, 2, 20));
  // NaN of typesize 8.
  const bytes f8 = assemble({}, {0x82ULL << 56}, 16, 16, 8);
  EXPECT_EQ(tgtest::to_hex(cx::blosc2_decompress(f8, 16)), "000000000000f87f000000000000f87f");
  // NaN needs typesize 4 or 8; unknown special kinds are refused.
  expect_error<tg::encoding_error>(
      [&] { (void)cx::blosc2_decompress(assemble({}, {0x82ULL << 56}, 16, 16, 2), 16); }, "special");
  expect_error<tg::encoding_error>(
      [&] { (void)cx::blosc2_decompress(assemble({}, {0x83ULL << 56}, 16, 16, 4), 16); }, "special");
}

TEST(Blosc2Reader, SpecialChunks) {
  // Chunk-level specials (byte 31): zeros, NaN, repeated value, uninit.
  bytes data;
  std::vector<std::uint64_t> index;
  auto add = [&](const bytes& chunk) {
    index.push_back(data.size());
    data.insert(data.end(), chunk.begin(), chunk.end());
  };
  add(chunk_header(0x05, 4, 12, 12, 32, {}, 0x10));           // zeros
  add(chunk_header(0x05, 4, 12, 12, 32, {}, 0x20));           // NaN (float32)
  bytes value = chunk_header(0x05, 4, 12, 12, 36, {}, 0x30);  // value 01 02 03 04
  value.insert(value.end(), {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}});
  add(value);
  add(chunk_header(0x05, 4, 12, 12, 32, {}, 0x40));  // uninitialised
  const bytes f = assemble(data, index, 48, 12, 4);
  const bytes out = cx::blosc2_decompress(f, 48);
  EXPECT_EQ(tgtest::to_hex(out),
            "000000000000000000000000"
            "0000c07f0000c07f0000c07f"
            "010203040102030401020304"
            "000000000000000000000000");
  for (std::uint64_t pos = 0; pos < 48; ++pos) {
    EXPECT_EQ(cx::blosc2_decompress_range(f, pos, 48 - pos, 48), tgtest::slice(out, pos, 48 - pos));
  }
}

TEST(Blosc2Reader, ZeroRunRawAndSplitStreams) {
  // Unsplit, two blocks of 32: a zero stream and a run of 7s.
  {
    bytes c = chunk_header(0x05 | 0x10 | 0x20, 1, 64, 32, 0);
    append_le(c, 40, 4);
    append_le(c, 44, 4);
    append_le(c, 0, 4);                               // block 0: zeros
    append_le(c, static_cast<std::uint32_t>(-7), 4);  // block 1: run of 7
    c.push_back(std::byte{0x01});                     // token
    wr_le(c, 12, c.size(), 4);
    const bytes out = cx::blosc2_decompress(assemble(c, {0}, 64, 64, 1), 64);
    bytes expect(64);
    std::fill(expect.begin() + 32, expect.end(), std::byte{7});
    EXPECT_EQ(out, expect);
    // The run token must have bit 0 set.
    c.back() = std::byte{0x02};
    expect_error<tg::encoding_error>([&] { (void)cx::blosc2_decompress(assemble(c, {0}, 64, 64, 1), 64); },
                                     "token");
  }
  // Split (typesize 4, 64 bytes): zero, run, raw and lz4 streams of 16, then
  // byte-unshuffled (filter slot 5).
  for (bool shuffled : {false, true}) {
    bytes streams(64);
    std::fill(streams.begin() + 16, streams.begin() + 32, std::byte{0xAB});
    for (int i = 0; i < 16; ++i)
      streams[static_cast<std::size_t>(32 + i)] = static_cast<std::byte>(i * 7 + 1);
    for (int i = 0; i < 16; ++i)
      streams[static_cast<std::size_t>(48 + i)] = static_cast<std::byte>(i < 12 ? 3 : i);
    bytes c =
        chunk_header(0x05 | 0x20, 4, 64, 64, 0, {0, 0, 0, 0, 0, static_cast<std::uint8_t>(shuffled ? 1 : 0)});
    append_le(c, 36, 4);
    append_le(c, 0, 4);
    append_le(c, static_cast<std::uint32_t>(-0xAB), 4);
    c.push_back(std::byte{0x01});
    append_le(c, 16, 4);
    c.insert(c.end(), streams.begin() + 32, streams.begin() + 48);
    char lz[64];
    const int n = LZ4_compress_default(reinterpret_cast<const char*>(streams.data() + 48), lz, 16, 64);
    ASSERT_GT(n, 0);
    ASSERT_NE(n, 16);
    append_le(c, static_cast<std::uint32_t>(n), 4);
    for (int i = 0; i < n; ++i) c.push_back(static_cast<std::byte>(lz[i]));
    wr_le(c, 12, c.size(), 4);
    bytes expect = streams;
    if (shuffled) tg::codecs::unshuffle(streams, 4, expect);
    EXPECT_EQ(cx::blosc2_decompress(assemble(c, {0}, 64, 64, 4), 64), expect) << shuffled;
  }
}

TEST(Blosc2Reader, UnsupportedFeaturesFailClearly) {
  const fixture& f = fixture_named("f64_lz4_shuffle_ts8");
  auto patched = [&](std::size_t at, std::uint8_t v) {
    bytes b = f.frame;
    b[at] = static_cast<std::byte>(v);
    return b;
  };
  const std::size_t chunk = 97;
  struct tcase {
    std::size_t at;
    std::uint8_t v;
    const char* msg;
  };
  for (const tcase& t : std::vector<tcase>{{chunk + 21, 3, "delta"},
                                           {chunk + 16, 4, "trunc_prec"},
                                           {chunk + 21, 7, "unsupported filter 7"},
                                           {chunk + 2, 0x45, "snappy"},
                                           {chunk + 2, 0xC5, "user-defined codec"},
                                           {chunk + 2, 0x24, "extended"},
                                           {chunk + 31, 0x01, "dictionary"},
                                           {chunk + 31, 0x08, "unsupported blosc2 flags"},
                                           {chunk + 31, 0x50, "special"},
                                           {chunk + 0, 9, "version"},
                                           {26, 1, "contiguous"},
                                           {25, 0x13, "version"},
                                           {25, 0x02, "64-bit"},
                                           {1, 0xA9, "magic"},
                                           {10, 0xD3, "header length"}}) {
    SCOPED_TRACE(t.msg);
    expect_error<tg::encoding_error>([&] { (void)cx::blosc2_decompress(patched(t.at, t.v), f.raw.size()); },
                                     t.msg);
  }
}

// ---------------------------------------------------------------------------
// Hostile input: typed errors, never crashes, hangs or huge allocations.

TEST(Blosc2Hostile, Truncation) {
  for (const fixture& f : fixtures()) {
    SCOPED_TRACE(f.row.name);
    const std::size_t n = f.frame.size();
    std::vector<std::size_t> cuts;
    for (std::size_t c = 0; c < n; ++c) {
      if (n < 2000 || c < 400 || c + 400 > n || c % 211 == 0) cuts.push_back(c);
    }
    for (std::size_t c : cuts) {
      const std::span<const std::byte> cut(f.frame.data(), c);
      expect_error<tg::encoding_error>([&] { (void)cx::blosc2_decompress(cut, f.raw.size()); });
      // With the header's length patched to match, deeper checks must catch it.
      if (c >= 24) {
        bytes p(cut.begin(), cut.end());
        wr_be(p, 16, c, 8);
        const auto r = error_or_value([&] { return cx::blosc2_decompress(p, f.raw.size()); });
        if (r) {
          EXPECT_EQ(r->size(), f.raw.size());
        }
      }
    }
    // Cut the data region short while keeping index and trailer intact.
    const cx::blosc2_frame_info info = cx::blosc2_inspect(f.frame);
    for (std::uint64_t keep : {std::uint64_t{0}, info.cbytes / 2, info.cbytes - 1}) {
      if (keep >= info.cbytes) continue;
      bytes p = tgtest::slice(f.frame, 0, 97 + keep);
      p.insert(p.end(), f.frame.begin() + static_cast<std::ptrdiff_t>(97 + info.cbytes), f.frame.end());
      wr_be(p, 16, p.size(), 8);
      wr_be(p, 39, keep, 8);
      const auto r = error_or_value([&] { return cx::blosc2_decompress(p, f.raw.size()); });
      EXPECT_FALSE(r.has_value() && info.special_chunks == 0) << "keep " << keep;
    }
  }
}

TEST(Blosc2Hostile, BitFlips) {
  std::mt19937_64 rng(31337);
  std::size_t errors = 0;
  std::size_t decoded = 0;
  for (const fixture& f : fixtures()) {
    SCOPED_TRACE(f.row.name);
    const std::size_t n = f.frame.size();
    const int flips = n > 100000 ? 40 : 150;
    for (int i = 0; i < flips; ++i) {
      bytes p = f.frame;
      // Half of the flips hit the structure: header, first chunk header and
      // block offsets, index and trailer.
      std::size_t at = rng() % n;
      if (i % 2 == 0)
        at =
            i % 4 == 0 ? rng() % std::min<std::size_t>(n, 160) : n - 1 - rng() % std::min<std::size_t>(n, 80);
      p[at] ^= static_cast<std::byte>(1U << (rng() % 8));
      if (i % 5 == 0) p[rng() % n] = static_cast<std::byte>(rng() & 0xFF);
      const auto r = error_or_value([&] { return cx::blosc2_decompress(p, f.raw.size()); });
      if (r) {
        EXPECT_LE(r->size(), f.raw.size());
        ++decoded;
      } else {
        ++errors;
      }
      (void)error_or_value(
          [&] { return cx::blosc2_decompress_range(p, f.raw.size() / 3, 100, f.raw.size()); });
    }
  }
  EXPECT_GT(errors, 0U);
  EXPECT_GT(decoded, 0U);
}

TEST(Blosc2Hostile, HugeClaimsAreRefusedBeforeAllocating) {
  const fixture& f = fixture_named("f64_lz4_multichunk_ts8");
  {
    // nbytes 2^60 with chunksize 1: an index of 2^63 bytes.
    bytes p = f.frame;
    wr_be(p, 30, std::uint64_t{1} << 60, 8);
    wr_be(p, 58, 1, 4);
    expect_error<tg::encoding_error>([&] { (void)cx::blosc2_decompress_range(p, 0, 1, SIZE_MAX); },
                                     "implausibly large index");
    expect_error<tg::encoding_error>([&] { (void)cx::blosc2_inspect(p); }, "implausibly large index");
    expect_error<tg::encoding_error>([&] { (void)cx::blosc2_decompress(p, SIZE_MAX); },
                                     "implausibly large index");
    expect_error<tg::encoding_error>([&] { (void)cx::blosc2_decompress(p, 1 << 20); }, "more than the");
  }
  {
    // A chunk claiming 2 GiB of blocks in a few bytes.
    bytes c = chunk_header(0x05 | 0x10, 1, 0x7FFFFFFF, 0x7FFFFFFF, 0);
    append_le(c, 36, 4);
    append_le(c, 0, 4);
    wr_le(c, 12, c.size(), 4);
    const bytes p = assemble(c, {0}, 0x7FFFFFFF, 0x7FFFFFFF, 1);
    expect_error<tg::encoding_error>([&] { (void)cx::blosc2_decompress(p, 1 << 20); }, "more than the");
    // A range of it too: the 2 GiB block is never allocated.
    expect_error<tg::encoding_error>([&] { (void)cx::blosc2_decompress_range(p, 0, 16, 1 << 20); },
                                     "more than the");
  }
  {
    // Negative and oversized chunk fields.
    bytes p = f.frame;
    wr_le(p, 97 + 12, 0xFFFFFFF0, 4);
    expect_error<tg::encoding_error>([&] { (void)cx::blosc2_decompress(p, 320000); }, "invalid sizes");
    p = f.frame;
    wr_le(p, 97 + 8, 1, 4);  // blocksize 1: 65536 block offsets in a 45 kB chunk
    expect_error<tg::encoding_error>([&] { (void)cx::blosc2_decompress(p, 320000); }, "block offsets");
  }
}

}  // namespace

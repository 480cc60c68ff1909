// The native build's szip codec (src/codecs/szip.cpp): our own coder, with
// libaec (src/codecs/szip_libaec.hpp) wherever ours cannot promise libaec's
// answer (spec 03 §7). Corrupt streams must fail with exactly the error the
// libaec path gives (its text, never our decoder's), or decode to libaec's
// bytes when libaec accepts them; streams our decoder refuses for parity
// alone must still decode (through libaec); samples above bits_per_sample
// must still be coded as libaec codes them. fuzz/fuzz_szip_differential.cpp
// compares the two paths on arbitrary input.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "src/codecs/szip_decoder.hpp"
#include "src/codecs/szip_encoder.hpp"
#include "src/codecs/szip_libaec.hpp"
#include "szip_test_support.hpp"
#include "tensogram/codecs/szip.hpp"
#include "tensogram/core/error.hpp"

namespace {

using namespace szip_test;  // NOLINT(google-build-using-namespace): a test file's own helpers

// A call's bytes, or its error's text.
struct outcome {
  bool ok = false;
  std::string what;
  bytes data;
  bool operator==(const outcome&) const = default;
};

template <class F>
outcome run(F&& f) {
  outcome o;
  try {
    o.data = f();
    o.ok = true;
  } catch (const tensogram::error& e) {
    o.what = e.what();
  }
  return o;
}

// Smooth 24-bit samples in 3-byte big-endian containers: sp24's bytes.
bytes smooth24(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  bytes out(3 * n);
  std::int64_t x = 1 << 23;
  for (std::size_t i = 0; i < n; ++i) {
    x = std::clamp<std::int64_t>(x + static_cast<std::int64_t>(rng() % 2001) - 1000, 0, (1 << 24) - 1);
    for (std::size_t b = 0; b < 3; ++b) out[3 * i + b] = static_cast<std::byte>((x >> (16 - 8 * b)) & 0xFF);
  }
  return out;
}

const codecs::szip_params k_sp24{24, 16, 32, k_dp | k_msb | k_3byte};

// Every decode entry point, native and libaec path, on `stream`: the same
// outcome. Returns the native full decode's.
outcome same_as_libaec(const bytes& stream, const codecs::szip_params& p, std::size_t expected,
                       const std::string& what) {
  const outcome native = run([&] { return codecs::szip_decompress(stream, p, expected); });
  const outcome libaec = run([&] {
    bytes out(expected);
    codecs::szip_libaec::decompress_into(stream, p, out);
    return out;
  });
  EXPECT_EQ(native, libaec) << what << ": native '" << native.what << "', libaec '" << libaec.what << "'";
  for (const std::uint32_t threads : {1U, 2U}) {
    const auto chunked = [&](bool use_native) {
      return run([&] {
        bytes out(expected);
        const codecs::szip_chunk_sink sink = [&](std::uint64_t off, std::span<const std::byte> piece) {
          std::memcpy(out.data() + off, piece.data(), piece.size());
        };
        if (use_native) {
          codecs::szip_decompress_chunked(stream, p, expected, 3 * 16, sink, threads);
        } else {
          codecs::szip_libaec::decompress_chunked(stream, p, expected, 3 * 16, sink, threads);
        }
        return out;
      });
    };
    EXPECT_EQ(chunked(true), chunked(false)) << what << " (chunked, " << threads << " threads)";
  }
  const std::size_t rsi_bytes = static_cast<std::size_t>(p.rsi) * p.block_size * codecs::szip_sample_bytes(p);
  const std::vector<std::uint64_t> stored((expected + rsi_bytes - 1) / rsi_bytes, 0);
  const std::uint64_t pos = expected / 2 / 3 * 3;
  const std::uint64_t len = std::min<std::uint64_t>(expected - pos, 3 * 700);
  EXPECT_EQ(run([&] { return codecs::szip_decompress_range(stream, p, stored, expected, pos, len); }),
            run([&] { return codecs::szip_libaec::decompress_range(stream, p, stored, expected, pos, len); }))
      << what << " (range)";
  return native;
}

TEST(SzipFallback, CorruptStreamsFailWithLibaecsErrorOrDecodeToItsBytes) {
  const std::size_t n = 20000;
  const bytes data = smooth24(n, 7);
  const bytes good = libaec_encode(data, k_sp24);
  ASSERT_EQ(same_as_libaec(good, k_sp24, data.size(), "intact").data, data);
  std::mt19937_64 rng(11);
  int errors = 0;
  int decoded = 0;
  const auto check = [&](const bytes& s, std::size_t expected, const std::string& what) {
    const outcome o = same_as_libaec(s, k_sp24, expected, what);
    if (!o.ok) {
      ++errors;
      // libaec's words, never our decoder's (which the native path only
      // ever uses to accept).
      EXPECT_TRUE(o.what.find("aec_decode failed") != std::string::npos ||
                  o.what.find("stream decoded to") != std::string::npos)
          << what << ": " << o.what;
    } else {
      ++decoded;
    }
  };
  for (const std::size_t keep : {good.size() - 1, good.size() / 2, std::size_t{5}}) {
    check(bytes(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(keep)), data.size(),
          "truncated to " + std::to_string(keep));
  }
  check(good, data.size() + 3 * 16, "one block more expected");
  check(good, data.size() + 3 * 16 * 32 * 3, "three RSIs more expected");
  for (int i = 0; i < 40; ++i) {
    bytes s = good;
    const std::size_t bit = rng() % (8 * s.size());
    s[bit / 8] ^= static_cast<std::byte>(0x80U >> (bit % 8));
    check(s, data.size(), "bit " + std::to_string(bit) + " flipped");
  }
  for (int i = 0; i < 10; ++i) {
    bytes s = good;
    const std::size_t at = rng() % s.size();
    for (std::size_t k = at; k < std::min(s.size(), at + 8); ++k) s[k] = static_cast<std::byte>(rng() & 0xFF);
    check(s, data.size(), "8 bytes from " + std::to_string(at) + " replaced");
  }
  // Garbage after the stream: ignored by both when the output ends inside
  // an RSI... (this stream's last RSI is partial).
  bytes tail = good;
  for (int i = 0; i < 32; ++i) tail.push_back(static_cast<std::byte>(rng() & 0xFF));
  check(tail, data.size(), "32 random bytes appended");
  EXPECT_GT(errors, 5);
  EXPECT_GT(decoded, 0);
}

// Without preprocessing, libaec reads the next coded data set's header
// after the last requested sample: a zero-block run that would overrun its
// RSI fails there, although every requested byte was decoded. Our decoder
// must refuse that too (finish()), so the native call fails as libaec does.
TEST(SzipFallback, LibaecFailsOnTheCdsAfterTheOutput) {
  const codecs::szip_params p{8, 8, 2, 0};
  bytes data(16);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>(i * 37);
  const bytes stream = libaec_encode(data, p);  // one whole RSI of two blocks
  // Where its last CDS ends (libaec pads the rest of the byte with zeros).
  codecs::szip_stream_decoder dec(stream, p, data.size());
  bytes out(data.size());
  dec.next(out);
  ASSERT_EQ(out, data);
  std::vector<bool> bits;
  for (const std::byte b : stream)
    for (int k = 7; k >= 0; --k) bits.push_back(((static_cast<unsigned>(b) >> k) & 1U) != 0);
  bits.resize(static_cast<std::size_t>(dec.position()));
  // Then the CDS id 000, bit 0, FS(6): a zero-block run of 6 blocks in a
  // 2-block RSI.
  for (const bool b : {false, false, false, false, false, false, false, false, false, false, true})
    bits.push_back(b);
  bytes corrupt((bits.size() + 7) / 8);
  for (std::size_t i = 0; i < bits.size(); ++i)
    if (bits[i]) corrupt[i / 8] |= static_cast<std::byte>(0x80U >> (i % 8));
  const outcome o = same_as_libaec(corrupt, p, data.size(), "zero-block run after the output");
  EXPECT_FALSE(o.ok);
  EXPECT_NE(o.what.find("aec_decode failed"), std::string::npos) << o.what;
  // The intact stream, and the same run within the RSI (1 block): fine.
  EXPECT_EQ(same_as_libaec(stream, p, data.size(), "intact").data, data);
}

// A split block longer than the block uncompressed (libaec's encoder never
// writes one): our decoder refuses it for parity (libaec's buffered path
// reads such blocks differently near the end of its input), and the native
// decode still succeeds, through libaec, with libaec's bytes.
TEST(SzipFallback, RefusedForParityStillDecodes) {
  const codecs::szip_params p{8, 8, 1, 0};
  // id 001 (split, k = 0), then eight FS(20): 3 + 8 * 21 = 171 bits > 3 + 64.
  std::vector<bool> bits{false, false, true};
  for (int v = 0; v < 8; ++v) {
    for (int z = 0; z < 20; ++z) bits.push_back(false);
    bits.push_back(true);
  }
  bytes stream((bits.size() + 7) / 8);
  for (std::size_t i = 0; i < bits.size(); ++i)
    if (bits[i]) stream[i / 8] |= static_cast<std::byte>(0x80U >> (i % 8));
  bytes ours(8);
  EXPECT_THROW(codecs::szip_decode_into(stream, p, ours, true), tensogram::encoding_error);
  codecs::szip_decode_into(stream, p, ours, false);  // the lenient decoder (WebAssembly build)
  EXPECT_EQ(ours, bytes(8, std::byte{20}));
  const outcome o = same_as_libaec(stream, p, 8, "long split block");
  ASSERT_TRUE(o.ok) << o.what;
  EXPECT_EQ(o.data, bytes(8, std::byte{20}));
}

// Samples above bits_per_sample: ours masks them, libaec writes other bytes;
// the native encode gives libaec's.
TEST(SzipFallback, WideSamplesAreCodedAsLibaecCodesThem) {
  const codecs::szip_params p{12, 16, 8, k_dp};
  std::mt19937_64 rng(3);
  bytes data(2 * 4096);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>(rng() & 0xFF);
  const bytes libaec = libaec_encode(data, p);
  const codecs::szip_encoded native = codecs::szip_compress(data, p);
  EXPECT_EQ(native.payload, libaec);
  EXPECT_NE(codecs::szip_encode(data, p).payload, libaec);  // so the fallback is needed
  EXPECT_EQ(native.block_offsets, codecs::szip_libaec::compress(data, p).block_offsets);
  const codecs::szip_chunk_fill fill = [&](std::uint64_t off, std::span<std::byte> out) {
    std::memcpy(out.data(), data.data() + off, out.size());
  };
  EXPECT_EQ(codecs::szip_compress_chunked(data.size(), 2, fill, p, 2).payload, libaec);
}

// Blocks longer than 64 samples (AEC_NOT_ENFORCE) whose CDS can exceed
// libaec 1.0.6's 258-byte staging buffer (block_size x bits_per_sample >
// 64 x 32): fed in pieces, or into a buffer that runs low, its encoder
// writes past the buffer or into its own state (src/codecs/szip_libaec.cpp,
// takes_pieces), so these are coded in one call into room for the whole
// stream. Random bytes make every CDS uncompressed: 32-bit samples in
// 66-sample blocks code to 269 bytes each; the coded stream (~1 MB) is four
// times the 256 KiB buffer the libaec path uses for pieces. The 12-bit case
// has samples above 12 bits, which the native build codes through libaec
// too. The peer is one aec_buffer_encode call into room for twice the
// input, where libaec never runs low.
TEST(SzipFallback, LongBlocksOfWideCdsAreCodedAsLibaecCodesThem) {
  for (const codecs::szip_params p : {codecs::szip_params{32, 66, 32, k_dp | k_not_enforce},
                                      codecs::szip_params{32, 128, 12, k_dp | k_not_enforce},
                                      codecs::szip_params{24, 200, 3, k_dp | k_not_enforce | k_3byte},
                                      codecs::szip_params{12, 1024, 32, k_dp | k_not_enforce},
                                      codecs::szip_params{16, 8192, 2, k_not_enforce}}) {
    SCOPED_TRACE(describe(p, 0, kind::random));
    std::mt19937_64 rng(p.block_size);
    bytes data(std::size_t{1} << 20);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>(rng() & 0xFF);
    data.resize(data.size() / codecs::szip_sample_bytes(p) * codecs::szip_sample_bytes(p));
    const bytes libaec = libaec_encode(data, p);
    ASSERT_GT(libaec.size(), std::size_t{3} << 18);
    const codecs::szip_encoded direct = codecs::szip_libaec::compress(data, p);
    EXPECT_EQ(direct.payload, libaec);
    EXPECT_EQ(direct.block_offsets,
              codecs::szip_rsi_offsets(libaec, p, data.size() / codecs::szip_sample_bytes(p),
                                       direct.block_offsets.size()));
    const codecs::szip_chunk_fill fill = [&](std::uint64_t off, std::span<std::byte> out) {
      std::memcpy(out.data(), data.data() + off, out.size());
    };
    for (const std::uint32_t threads : {1U, 2U}) {
      const codecs::szip_encoded chunked =
          codecs::szip_libaec::compress_chunked(data.size(), codecs::szip_sample_bytes(p), fill, p, threads);
      EXPECT_EQ(chunked.payload, libaec);
      EXPECT_EQ(chunked.block_offsets, direct.block_offsets);
      EXPECT_EQ(
          codecs::szip_compress_chunked(data.size(), codecs::szip_sample_bytes(p), fill, p, threads).payload,
          libaec);
    }
    EXPECT_EQ(codecs::szip_compress(data, p).payload, libaec);
    if (p.bits_per_sample == 8 * codecs::szip_sample_bytes(p)) {  // no sample above bits_per_sample
      bytes back(data.size());
      codecs::szip_decompress_into(libaec, p, back);
      EXPECT_EQ(back, data);
    }
    // A few samples, the last block padded: the room is sized to blocks.
    const bytes few(data.begin(),
                    data.begin() + static_cast<std::ptrdiff_t>(codecs::szip_sample_bytes(p) * 100));
    EXPECT_EQ(codecs::szip_libaec::compress(few, p).payload, libaec_encode(few, p));
  }
}

// libaec sizes an RSI's buffer, and a block's bits, in 32-bit arithmetic:
// past 2^30 samples per RSI they wrap (its decoder crashed on this 64-byte
// payload with 2^30-sample blocks). The libaec path refuses RSIs of more
// than 2^25 samples with a typed error before libaec sees them, in both
// directions; 2^25 itself is taken.
TEST(SzipFallback, RsisLibaecCannotSizeAreRefused) {
  const bytes payload(64, std::byte{0x5A});
  for (const codecs::szip_params p :
       {codecs::szip_params{32, std::uint32_t{1} << 30, 4, k_dp | k_not_enforce},
        codecs::szip_params{32, std::uint32_t{1} << 20, 4096, k_dp | k_not_enforce},
        codecs::szip_params{8, (std::uint32_t{1} << 24) + 2, 2, k_not_enforce}}) {
    SCOPED_TRACE(describe(p, 0, kind::random));
    bytes out(64);
    const outcome decoded = run([&] {
      codecs::szip_decompress_into(payload, p, out);
      return out;
    });
    EXPECT_FALSE(decoded.ok);
    EXPECT_NE(decoded.what.find("samples per RSI exceeds 33554432"), std::string::npos) << decoded.what;
    const outcome encoded = run([&] { return codecs::szip_compress(payload, p).payload; });
    EXPECT_FALSE(encoded.ok);
    EXPECT_NE(encoded.what.find("samples per RSI exceeds"), std::string::npos) << encoded.what;
    const std::vector<std::uint64_t> stored{0};
    EXPECT_FALSE(run([&] { return codecs::szip_decompress_range(payload, p, stored, 64, 0, 8); }).ok);
  }
  const codecs::szip_params largest{8, std::uint32_t{1} << 13, std::uint32_t{1} << 12, k_not_enforce};
  const bytes values(std::size_t{1} << 14, std::byte{7});
  const codecs::szip_encoded e = codecs::szip_compress(values, largest);
  EXPECT_EQ(codecs::szip_decompress(e.payload, largest, values.size()), values);
}

}  // namespace

namespace {

// A range in an RSI that starts exactly at the end of the stream: our
// decoder fails, libaec's range decode gets an empty copy of the rest (which
// once reached memcpy with a null pointer, found by fuzz_szip_differential
// under UBSan) and fails too, with the same error.
TEST(SzipFallback, RangeInAnRsiStartingAtTheStreamsEnd) {
  const codecs::szip_params p{8, 8, 1, 0};
  // Eight RSIs of one zero block each: id 000, bit 0, FS(0) = 5 bits each,
  // 40 bits in all; the ninth RSI the range asks for would start at bit 40.
  bytes stream(5, std::byte{0});
  for (std::size_t i = 0; i < 8; ++i) {
    const std::size_t bit = 5 * i + 4;
    stream[bit / 8] |= static_cast<std::byte>(0x80U >> (bit % 8));
  }
  ASSERT_EQ(codecs::szip_decompress(stream, p, 64), bytes(64, std::byte{0}));
  const std::vector<std::uint64_t> stored(9, 0);
  const outcome native = run([&] { return codecs::szip_decompress_range(stream, p, stored, 72, 64, 8); });
  EXPECT_FALSE(native.ok);
  EXPECT_EQ(native, run([&] { return codecs::szip_libaec::decompress_range(stream, p, stored, 72, 64, 8); }));
}

}  // namespace

namespace {

// Why blocks longer than the block uncompressed are refused for parity:
// with room in its buffers (here 32 input bytes past the block's start)
// libaec reads fundamental sequences 7 bytes at a time and, within 7 bytes of
// its input's end, gives up on one (then checks the split option's low bits
// against a 9-byte margin). A 16-bit split block (id 0001, k = 0) of seven
// FS(0) and one FS(369) in a 48-byte stream (381 bits, against 4 + 8 * 16
// uncompressed): the grammar says 369 for the last sample, libaec fails.
TEST(SzipFallback, LongBlocksDecodeOtherwiseInLibaec) {
  const codecs::szip_params p{16, 8, 1, 0};
  std::vector<bool> bits{false, false, false, true};
  for (int v = 0; v < 7; ++v) bits.push_back(true);
  for (int z = 0; z < 369; ++z) bits.push_back(false);
  bits.push_back(true);
  bytes stream(48);
  for (std::size_t i = 0; i < bits.size(); ++i)
    if (bits[i]) stream[i / 8] |= static_cast<std::byte>(0x80U >> (i % 8));
  bytes grammar(16);
  codecs::szip_decode_into(stream, p, grammar, false);  // the lenient decoder
  bytes expected(16, std::byte{0});
  expected[14] = std::byte{0x71};  // 369, little-endian
  expected[15] = std::byte{0x01};
  EXPECT_EQ(grammar, expected);
  // libaec does not decode this block as the grammar does: it fails.
  bytes libaec(16);
  EXPECT_THROW(codecs::szip_libaec::decompress_into(stream, p, libaec), tensogram::encoding_error);
  // So our decoder must refuse it for parity, and the native call fail as
  // libaec does (same_as_libaec compares every entry point).
  bytes parity(16);
  EXPECT_THROW(codecs::szip_decode_into(stream, p, parity, true), tensogram::encoding_error);
  const outcome native = same_as_libaec(stream, p, 16, "long split block near the end");
  EXPECT_FALSE(native.ok);
  EXPECT_NE(native.what.find("aec_decode failed"), std::string::npos) << native.what;
}

}  // namespace

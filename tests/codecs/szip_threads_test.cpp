// szip on several threads (spec 03 §13: szip's bytes do not depend on the
// threads budget). The chunked calls split a stream into runs of whole RSIs:
// encoded apart and joined bit for bit, decoded apart from RSI starts found by
// walking the stream. Every result must equal the sequential call's: the
// stream bytes, the RSI offsets (§7.4), the decoded bytes, and for damaged
// streams the error.
#include <algorithm>
#include <mutex>
#include <random>
#include <set>
#include <string>

#include "codec_support.hpp"

namespace {

using namespace codectest;
namespace codecs = tensogram::codecs;

struct shape {
  std::uint32_t rsi, block, bits;
};

codecs::szip_params params_of(shape s) {
  codecs::szip_params p;
  p.bits_per_sample = s.bits;
  p.block_size = s.block;
  p.rsi = s.rsi;
  p.flags = codecs::szip_flags::data_preprocess | codecs::szip_flags::data_msb |
            (s.bits > 16 && s.bits <= 24 ? codecs::szip_flags::data_3byte : 0U);
  return p;
}

// `samples` big-endian samples of `bits` bits: zero runs (zero-block RSIs and
// "remainder of segment" runs, also at the very end), smooth stretches and
// noise, so that RSIs code to very different bit lengths.
bytes make_samples(const codecs::szip_params& p, std::size_t samples, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::size_t width = codecs::szip_sample_bytes(p);
  const std::uint64_t mask = p.bits_per_sample == 64 ? ~0ULL : (std::uint64_t{1} << p.bits_per_sample) - 1;
  bytes raw;
  raw.reserve(samples * width);
  for (std::size_t i = 0; i < samples; ++i) {
    const std::size_t phase = (i / 1'111) % 5;
    const bool tail = i + 300 >= samples && seed % 2 == 0;
    const std::uint64_t v = tail || phase == 0 ? 0 : phase == 1 ? (i % 50) : phase == 2 ? (i / 7) : rng();
    for (std::size_t k = 0; k < width; ++k) {
      raw.push_back(static_cast<std::byte>(((v & mask) >> (8 * (width - 1 - k))) & 0xFF));
    }
  }
  return raw;
}

codecs::szip_encoded encode(const bytes& raw, const codecs::szip_params& p, std::size_t unit,
                            std::uint32_t threads, std::set<std::uint64_t>* offsets = nullptr) {
  std::mutex m;
  return codecs::szip_compress_chunked(
      raw.size(), unit,
      [&](std::uint64_t offset, std::span<std::byte> out) {
        if (offsets != nullptr) {
          const std::lock_guard lock(m);
          offsets->insert(offset);
        }
        std::copy_n(raw.begin() + static_cast<std::ptrdiff_t>(offset), out.size(), out.begin());
      },
      p, threads);
}

// The decoded bytes, or the error text.
std::string decode(const bytes& payload, const codecs::szip_params& p, std::size_t expected, std::size_t unit,
                   std::uint32_t threads) {
  bytes back(expected);
  std::vector<int> seen(expected, 0);  // pieces cover every byte once
  try {
    codecs::szip_decompress_chunked(
        payload, p, expected, unit,
        [&](std::uint64_t offset, std::span<const std::byte> piece) {
          EXPECT_EQ(offset % unit, 0U);
          std::copy(piece.begin(), piece.end(), back.begin() + static_cast<std::ptrdiff_t>(offset));
          for (std::size_t i = 0; i < piece.size(); ++i) seen[offset + i] = 1;
        },
        threads);
  } catch (const tensogram::encoding_error& e) {
    return std::string("error: ") + e.what();
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 0), 0);
  return {reinterpret_cast<const char*>(back.data()), back.size()};
}

}  // namespace

TEST(SzipThreads, EncodeIsByteIdenticalForEveryThreadCount) {
  for (const shape s : {shape{128, 16, 24}, shape{128, 16, 16}, shape{64, 32, 32}, shape{1, 8, 8},
                        shape{3, 8, 12}, shape{17, 16, 24}, shape{32, 8, 20}, shape{100, 64, 32}}) {
    const codecs::szip_params p = params_of(s);
    const std::size_t width = codecs::szip_sample_bytes(p);
    const std::size_t per_rsi = std::size_t{s.rsi} * s.block;
    // Parts are whole steps of 64 KiB or more: sizes around one, two and
    // several steps, with a partial last block and a partial last RSI.
    const std::size_t step = std::lcm(per_rsi * width, std::size_t{64} << 10) / width;
    // Thread counts whose encode was split for at least one size: a part
    // whose lead-in finds no block split-coded alike by both encoders (noise
    // coded uncompressed, zero runs) makes the whole encode serial again,
    // which is correct but must not be the rule.
    std::set<std::uint32_t> split_for;
    for (const std::size_t samples : {std::size_t{1}, per_rsi, step - 1, step, step + 1, 2 * step,
                                      2 * step + per_rsi / 2 + 3, 5 * step + 7, 9 * step + per_rsi - 1}) {
      SCOPED_TRACE("rsi " + std::to_string(s.rsi) + " block " + std::to_string(s.block) + " bits " +
                   std::to_string(s.bits) + " samples " + std::to_string(samples));
      const bytes raw = make_samples(p, samples, samples + s.bits);
      std::set<std::uint64_t> serial_pieces;
      const codecs::szip_encoded want = encode(raw, p, width, 0, &serial_pieces);
      for (const std::uint32_t t : {2U, 3U, 4U, 8U}) {
        std::set<std::uint64_t> pieces;
        const codecs::szip_encoded got = encode(raw, p, width, t, &pieces);
        EXPECT_EQ(got.payload, want.payload) << "threads " << t;
        EXPECT_EQ(got.block_offsets, want.block_offsets) << "threads " << t;
        // The split happened: the parts start pieces of their own.
        if (samples >= 2 * step && pieces != serial_pieces) split_for.insert(t);
        EXPECT_EQ(decode(want.payload, p, raw.size(), width, t),
                  std::string(reinterpret_cast<const char*>(raw.data()), raw.size()))
            << "threads " << t;
      }
    }
    EXPECT_EQ(split_for, (std::set<std::uint32_t>{2, 3, 4, 8}))
        << "rsi " << s.rsi << " block " << s.block << " bits " << s.bits;
  }
}

TEST(SzipThreads, UnitsOfTheProducerAreKept) {
  // simple_packing pieces are whole values (3 bytes for 24 bits): parts
  // are whole RSIs and whole units at once.
  const codecs::szip_params p = params_of({128, 16, 16});
  const bytes raw = make_samples(p, 3 * 200'000, 5);
  const codecs::szip_encoded want = encode(raw, p, 3, 0);
  for (const std::uint32_t t : {2U, 3U}) {
    EXPECT_EQ(encode(raw, p, 3, t).payload, want.payload);
    EXPECT_EQ(decode(want.payload, p, raw.size(), 3, t),
              std::string(reinterpret_cast<const char*>(raw.data()), raw.size()));
  }
}

TEST(SzipThreads, DamagedStreamsDecodeOrFailAsSequentially) {
  // A damaged stream decodes to the same bytes, or fails with the same
  // error, for every thread count: the parts fall back to the sequential
  // decode when their walk or libaec fails.
  const codecs::szip_params p = params_of({128, 16, 24});
  const bytes raw = make_samples(p, 400'000, 3);
  const codecs::szip_encoded good = encode(raw, p, 3, 0);
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 40; ++trial) {
    bytes bad = good.payload;
    if (trial % 4 == 3) {
      bad.resize(bad.size() * static_cast<std::size_t>(rng() % 100) / 100);
    } else {
      for (int flips = 0; flips <= trial % 3; ++flips) {
        const std::size_t at = static_cast<std::size_t>(rng() % bad.size());
        bad[at] ^= static_cast<std::byte>(1U << (rng() % 8));
      }
    }
    if (bad.empty()) continue;
    const std::string want = decode(bad, p, raw.size(), 3, 0);
    for (const std::uint32_t t : {2U, 4U}) {
      EXPECT_EQ(decode(bad, p, raw.size(), 3, t), want) << "trial " << trial << " threads " << t;
    }
  }
}

TEST(SzipThreads, NonFiniteErrorIsTheSequentialOne) {
  // A failing producer (simple_packing meeting NaN) reports what the
  // sequential call reports, whichever part meets its error first.
  const codecs::szip_params p = params_of({128, 16, 24});
  const std::size_t size = 3 * 600'000;
  const auto run = [&](std::uint32_t threads) {
    try {
      (void)codecs::szip_compress_chunked(
          size, 3,
          [&](std::uint64_t offset, std::span<std::byte> out) {
            std::fill(out.begin(), out.end(), std::byte{1});
            for (const std::uint64_t bad : {std::uint64_t{3 * 500'000}, std::uint64_t{3 * 70'000}}) {
              if (bad >= offset && bad < offset + out.size()) {
                throw tensogram::encoding_error("value " + std::to_string(bad / 3));
              }
            }
          },
          p, threads);
    } catch (const tensogram::encoding_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string want = run(0);
  EXPECT_NE(want.find("value 70000"), std::string::npos) << want;  // the first bad value, not the second
  EXPECT_EQ(run(2), want);
  EXPECT_EQ(run(4), want);
}

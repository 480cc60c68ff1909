// libFuzzer target: the native szip codec (src/codecs/szip.cpp: our own
// CCSDS 121.0-B-3 coder, with libaec wherever ours cannot promise libaec's
// answer, spec 03 §7) against the libaec path alone (src/codecs/szip_libaec.cpp,
// what the native build used before), on arbitrary parameters and streams.
// The two must agree exactly: the same bytes (and RSI offsets) from every
// encode; from every decode — whole, piecewise on one and two threads, by
// range — the same bytes, or an error with the same text.
//
// Input: three bytes of parameters (bits per sample, block size, flags),
// two of RSI, a mode byte, then the body. Blocks are 8-64 samples, 2-128
// with AEC_NOT_ENFORCE, or 132-4290 with at most 8 per RSI. Mode bit 0
// clear: the body is the coded stream and two more bytes give the decoded
// size in samples. Set: the body is sample data, coded by both encoders
// (which must agree), then the stream corrupted by the body's first bytes
// (bit flips, a truncation or appended bytes) and decoded to the data's
// size, or a few samples more or fewer. Mode bit 1 set adds the two-thread
// runs of the chunked encode and decode. Our decoder refuses whatever it
// cannot decode as libaec does (src/codecs/szip_decoder.hpp); a
// disagreement aborts.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <tensogram.hpp>
#include <tensogram/codecs/szip.hpp>

#include "src/codecs/szip_libaec.hpp"

namespace {

namespace cx = tensogram::codecs;
using bytes = std::vector<std::byte>;

// Decoded sizes above this are cut (keeps an iteration cheap).
constexpr std::size_t k_max_samples = std::size_t{1} << 14;

class input {
 public:
  input(const std::uint8_t* d, std::size_t n) : d_(d), n_(n) {}
  std::uint8_t byte() {
    if (n_ == 0) return 0;
    --n_;
    return *d_++;
  }
  std::uint32_t u16() { return byte() | (static_cast<std::uint32_t>(byte()) << 8); }
  bytes rest() {
    bytes out(n_);
    if (n_ != 0) std::memcpy(out.data(), d_, n_);
    n_ = 0;
    return out;
  }

 private:
  const std::uint8_t* d_;
  std::size_t n_;
};

// A call's outcome: its bytes, or its error's text.
struct outcome {
  bool ok = false;
  std::string what;
  bytes data;
  std::vector<std::uint64_t> offsets;
  bool operator==(const outcome&) const = default;
};

template <class F>
outcome run(F&& f) {
  outcome o;
  try {
    f(o);
    o.ok = true;
  } catch (const tensogram::error& e) {
    o.what = e.what();
    o.data.clear();
    o.offsets.clear();
  }
  return o;
}

[[noreturn]] void disagree(const char* where, const cx::szip_params& p, const outcome& ours,
                           const outcome& theirs) {
  std::fprintf(
      stderr, "%s: bits %u block %u rsi %u flags %u: native %s '%s' (%zu bytes), libaec %s '%s' (%zu)\n",
      where, p.bits_per_sample, p.block_size, p.rsi, p.flags, ours.ok ? "ok" : "error", ours.what.c_str(),
      ours.data.size(), theirs.ok ? "ok" : "error", theirs.what.c_str(), theirs.data.size());
  std::abort();
}

void expect_same(const char* where, const cx::szip_params& p, const outcome& ours, const outcome& theirs) {
  if (!(ours == theirs)) disagree(where, p, ours, theirs);
}

cx::szip_params params_from(input& in) {
  cx::szip_params p;
  const std::uint8_t a = in.byte();
  const std::uint8_t b = in.byte();
  const std::uint8_t c = in.byte();
  p.bits_per_sample = 1 + a % 32;
  p.flags = c & 0x3FU;  // signed, 3byte, msb, preprocess, restricted, pad_rsi
  if ((p.flags & cx::szip_flags::restricted) != 0 && p.bits_per_sample > 4) {
    p.flags &= ~cx::szip_flags::restricted;
  }
  const std::uint16_t rsi = in.u16();
  p.rsi = 1 + rsi % 512;
  if ((b & 0xC0) == 0xC0) {
    // Long blocks, 132 to 4290 samples: our coder against libaec up to 4096
    // (where libaec's CDS outgrows its staging buffer, src/codecs/szip_libaec.cpp),
    // libaec alone above. Few blocks per RSI: libaec allocates and pads a
    // whole RSI per call.
    p.flags |= cx::szip_flags::not_enforce;
    p.block_size = 66 * (2 + (b & 0x3F));
    p.rsi = 1 + rsi % 8;
  } else if ((b & 0x80) != 0) {
    p.flags |= cx::szip_flags::not_enforce;
    p.block_size = 2 * (1 + (b & 0x3F));
  } else {
    static constexpr std::uint32_t k_sizes[] = {8, 16, 32, 64};
    p.block_size = k_sizes[b & 3];
  }
  return p;
}

// The two-thread runs are asked for by the input (mode bit 1), not made
// for every one: parallel_for starts its threads per call, and under
// AddressSanitizer a thread's start and exit (its shadow released with
// madvise, its bookkeeping unmapped, a TLB flush on both vCPUs each time)
// took about 40 % of the target's time (docs/fuzzing.md).
void decode_all(const bytes& stream, const cx::szip_params& p, std::size_t expected, input& knobs,
                bool two_threads) {
  const std::span<const std::byte> s(stream);
  // Whole.
  expect_same("decompress", p, run([&](outcome& o) { o.data = cx::szip_decompress(s, p, expected); }),
              run([&](outcome& o) {
                cx::szip_validate(p);
                o.data.assign(expected, std::byte{0});
                cx::szip_libaec::decompress_into(s, p, o.data);
              }));
  // Piecewise, one and two threads.
  const std::size_t unit = 1 + knobs.byte() % 64;
  for (const std::uint32_t threads : {1U, 2U}) {
    if (threads == 2 && !two_threads) break;
    const auto chunked = [&](bool native) {
      return run([&](outcome& o) {
        o.data.assign(expected, std::byte{0});
        const cx::szip_chunk_sink sink = [&](std::uint64_t off, std::span<const std::byte> piece) {
          std::memcpy(o.data.data() + off, piece.data(), piece.size());
        };
        if (native) {
          cx::szip_decompress_chunked(s, p, expected, unit, sink, threads);
        } else {
          cx::szip_libaec::decompress_chunked(s, p, expected, unit, sink, threads);
        }
      });
    };
    expect_same(threads == 1 ? "chunked/1" : "chunked/2", p, chunked(true), chunked(false));
  }
  // A range.
  const std::size_t sb = cx::szip_sample_bytes(p);
  const std::uint64_t per_rsi = static_cast<std::uint64_t>(p.rsi) * p.block_size;
  const std::uint64_t samples = expected / sb;
  const std::vector<std::uint64_t> stored(static_cast<std::size_t>((samples + per_rsi - 1) / per_rsi), 0);
  const std::uint64_t pos = samples == 0 ? 0 : (knobs.u16() % samples) * sb;
  const std::uint64_t size = samples == 0 ? 0 : (1 + knobs.u16() % samples) * sb;
  const std::uint64_t len = std::min<std::uint64_t>(size, expected - pos);
  expect_same(
      "range", p,
      run([&](outcome& o) { o.data = cx::szip_decompress_range(s, p, stored, expected, pos, len); }),
      run([&](outcome& o) { o.data = cx::szip_libaec::decompress_range(s, p, stored, expected, pos, len); }));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  input in(data, size);
  const cx::szip_params p = params_from(in);
  const std::uint8_t mode = in.byte();
  const std::size_t sb = cx::szip_sample_bytes(p);
  if ((mode & 1) == 0) {
    const std::size_t samples = in.u16() % (k_max_samples + 1);
    input knobs(data, std::min<std::size_t>(size, 8));
    decode_all(in.rest(), p, samples * sb, knobs, (mode & 2) != 0);
    return 0;
  }
  bytes raw = in.rest();
  raw.resize(std::min(raw.size() / sb, k_max_samples) * sb);
  // Both encoders, on the data as it is (samples may exceed bits_per_sample).
  const outcome ours = run([&](outcome& o) {
    cx::szip_encoded e = cx::szip_compress(raw, p);
    o.data = std::move(e.payload);
    o.offsets = std::move(e.block_offsets);
  });
  const outcome theirs = run([&](outcome& o) {
    cx::szip_encoded e = cx::szip_libaec::compress(raw, p);
    o.data = std::move(e.payload);
    o.offsets = std::move(e.block_offsets);
  });
  expect_same("compress", p, ours, theirs);
  // ... and on two threads, from pieces of a producer.
  const bool two_threads = (mode & 2) != 0;
  const std::size_t unit = sb * (1 + (mode >> 4));
  if (two_threads) {
    const outcome chunked = run([&](outcome& o) {
      const cx::szip_chunk_fill fill = [&](std::uint64_t off, std::span<std::byte> out) {
        std::memcpy(out.data(), raw.data() + off, out.size());
      };
      cx::szip_encoded e = cx::szip_compress_chunked(raw.size(), unit, fill, p, 2);
      o.data = std::move(e.payload);
      o.offsets = std::move(e.block_offsets);
    });
    expect_same("compress_chunked/2", p, chunked, theirs);
  }
  if (!theirs.ok || theirs.data.empty()) return 0;
  // Corrupt the stream as the data's first bytes say.
  bytes stream = theirs.data;
  input knobs(reinterpret_cast<const std::uint8_t*>(raw.data()), raw.size());
  const std::uint8_t how = knobs.byte();
  for (unsigned flips = how & 7U; flips != 0; --flips) {
    const std::size_t bit =
        (knobs.u16() | (static_cast<std::size_t>(knobs.byte()) << 16)) % (8 * stream.size());
    stream[bit / 8] ^= static_cast<std::byte>(0x80U >> (bit % 8));
  }
  if ((how & 0x08U) != 0)
    stream.resize(stream.size() - std::min<std::size_t>(stream.size(), knobs.byte() % 16));
  if ((how & 0x10U) != 0) {
    for (unsigned k = knobs.byte() % 16; k != 0; --k) stream.push_back(static_cast<std::byte>(knobs.byte()));
  }
  std::size_t expected = raw.size();
  if ((how & 0x20U) != 0) expected += sb * (knobs.byte() % 8);
  if ((how & 0x40U) != 0) expected -= std::min(expected, sb * (knobs.byte() % 8));
  decode_all(stream, p, expected, knobs, two_threads);
  return 0;
}

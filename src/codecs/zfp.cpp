#include "tensogram/codecs/zfp.hpp"

#include <zfp.h>

#include <cstring>
#include <memory>
#include <string>

#include "tensogram/core/error.hpp"
#include "tensogram/core/memory.hpp"

namespace tensogram::codecs {

namespace {

[[noreturn]] void fail(const std::string& what) {
  throw encoding_error("compression error: zfp error: " + what);
}

struct field_deleter {
  void operator()(zfp_field* f) const noexcept { zfp_field_free(f); }
};
struct stream_deleter {
  void operator()(zfp_stream* s) const noexcept { zfp_stream_close(s); }
};
struct bitstream_deleter {
  void operator()(bitstream* b) const noexcept { stream_close(b); }
};

// A configured zfp stream for `n` doubles over `buffer`.
struct zfp_session {
  std::unique_ptr<zfp_field, field_deleter> field;
  std::unique_ptr<zfp_stream, stream_deleter> stream;
  std::unique_ptr<bitstream, bitstream_deleter> bits;
};

void configure(zfp_stream* zs, const zfp_params& p) {
  switch (p.mode) {
    case zfp_mode::fixed_rate: zfp_stream_set_rate(zs, p.rate, zfp_type_double, 1, 0); break;
    case zfp_mode::fixed_precision: zfp_stream_set_precision(zs, p.precision); break;
    case zfp_mode::fixed_accuracy:
      if (zfp_stream_set_accuracy(zs, p.tolerance) == 0.0) {
        fail("zfp_stream_set_accuracy rejected tolerance " + std::to_string(p.tolerance));
      }
      break;
  }
  if (zfp_stream_set_execution(zs, zfp_exec_serial) == 0) fail("serial execution unavailable");
}

std::size_t max_size(std::uint64_t n, const zfp_params& p, double* scratch) {
  std::unique_ptr<zfp_field, field_deleter> field(
      zfp_field_1d(scratch, zfp_type_double, static_cast<std::size_t>(n)));
  std::unique_ptr<zfp_stream, stream_deleter> zs(zfp_stream_open(nullptr));
  if (!field || !zs) throw std::bad_alloc();
  configure(zs.get(), p);
  return zfp_stream_maximum_size(zs.get(), field.get());
}

}  // namespace

std::vector<std::byte> zfp_compress(std::span<const std::byte> in, const zfp_params& p) {
  if (in.size() % 8 != 0) fail("data length " + std::to_string(in.size()) + " is not a multiple of 8");
  const std::size_t n = in.size() / 8;
  if (n == 0) return {};
  // zfp reads through a non-const pointer but does not modify the input.
  auto* data = const_cast<void*>(static_cast<const void*>(in.data()));
  std::unique_ptr<zfp_field, field_deleter> field(zfp_field_1d(data, zfp_type_double, n));
  std::unique_ptr<zfp_stream, stream_deleter> zs(zfp_stream_open(nullptr));
  if (!field || !zs) throw std::bad_alloc();
  configure(zs.get(), p);
  const std::size_t cap = zfp_stream_maximum_size(zs.get(), field.get());
  std::vector<std::byte> out = make_advised_bytes(cap + 8);
  std::unique_ptr<bitstream, bitstream_deleter> bs(stream_open(out.data(), out.size()));
  if (!bs) throw std::bad_alloc();
  zfp_stream_set_bit_stream(zs.get(), bs.get());
  zfp_stream_rewind(zs.get());
  const std::size_t written = zfp_compress(zs.get(), field.get());
  if (written == 0) fail("zfp_compress failed");
  // Pad to whole 64-bit words like a 64-bit-word libzfp (spec 03 §8.6).
  const std::size_t padded = (written + 7) / 8 * 8;
  if (padded > out.size()) fail("compressed stream exceeds its bound");
  std::memset(out.data() + written, 0, padded - written);
  out.resize(padded);
  return out;
}

std::vector<std::byte> zfp_decompress(std::span<const std::byte> payload, std::uint64_t n,
                                      const zfp_params& p) {
  if (n == 0) {
    if (!payload.empty()) fail("non-empty payload for zero values");
    return {};
  }
  // The size checks of zfp_decompress_into, in its order, before the output
  // is allocated.
  if (payload.empty()) fail("empty payload for " + std::to_string(n) + " values");
  if (n > (std::uint64_t{1} << 60)) fail("value count too large");
  std::vector<std::byte> out = make_advised_bytes(static_cast<std::size_t>(n) * 8);
  zfp_decompress_into(payload, n, p, out);
  return out;
}

void zfp_decompress_into(std::span<const std::byte> payload, std::uint64_t n, const zfp_params& p,
                         std::span<std::byte> out) {
  if (n == 0) {
    if (!payload.empty()) fail("non-empty payload for zero values");
    if (!out.empty()) fail("output buffer of " + std::to_string(out.size()) + " bytes for zero values");
    return;
  }
  if (payload.empty()) fail("empty payload for " + std::to_string(n) + " values");
  if (n > (std::uint64_t{1} << 60)) fail("value count too large");
  double scratch = 0.0;
  const std::size_t cap = max_size(n, p, &scratch);
  // The reference refuses a stream longer than its libzfp's maximum for n
  // values; with 64-bit stream words that is Debian's 8-bit-word maximum
  // rounded up to whole words (spec 03 §8.6).
  const std::size_t reference_cap = (cap + 7) / 8 * 8;
  if (payload.size() > reference_cap) {
    fail("zfp stream length " + std::to_string(payload.size()) + " inconsistent with descriptor (max " +
         std::to_string(reference_cap) + " for " + std::to_string(n) +
         " values) — truncated or malformed payload");
  }
  // Decode from a zero-padded copy so a short payload cannot be over-read.
  std::vector<std::byte> padded = make_advised_bytes(reference_cap + 8);
  std::memcpy(padded.data(), payload.data(), payload.size());
  if (out.size() != static_cast<std::size_t>(n) * 8) {
    fail("output buffer of " + std::to_string(out.size()) + " bytes for " + std::to_string(n) + " values");
  }
  std::unique_ptr<zfp_field, field_deleter> field(
      zfp_field_1d(out.data(), zfp_type_double, static_cast<std::size_t>(n)));
  std::unique_ptr<zfp_stream, stream_deleter> zs(zfp_stream_open(nullptr));
  if (!field || !zs) throw std::bad_alloc();
  configure(zs.get(), p);
  std::unique_ptr<bitstream, bitstream_deleter> bs(stream_open(padded.data(), padded.size()));
  if (!bs) throw std::bad_alloc();
  zfp_stream_set_bit_stream(zs.get(), bs.get());
  zfp_stream_rewind(zs.get());
  if (zfp_decompress(zs.get(), field.get()) == 0) fail("zfp_decompress failed");
}

}  // namespace tensogram::codecs

// SZ3's lossless stage (docs/sz3-format.md §3).
#include "lossless.hpp"

#include <zstd.h>

#include <string>

#include "byte_io.hpp"
#include "tensogram/codecs/zstd.hpp"
#include "tensogram/core/error.hpp"

namespace tensogram::codecs::sz3 {

namespace {
// SZ3's Lossless_zstd default.
constexpr int zstd_level = 3;

std::uint64_t declared_length(std::span<const std::byte> in) {
  byte_reader r(in);
  return r.get<std::uint64_t>("lossless length");
}

void decompress_frame(std::span<const std::byte> frame, std::span<std::byte> out) {
  const std::size_t got = ZSTD_decompress(out.data(), out.size(), frame.data(), frame.size());
  if (ZSTD_isError(got) != 0) fail(std::string("lossless stage: zstd: ") + ZSTD_getErrorName(got));
  if (got != out.size()) {
    fail("lossless stage: zstd frame holds " + std::to_string(got) + " bytes, " + std::to_string(out.size()) +
         " declared");
  }
}
}  // namespace

void lossless_context::free_context::operator()(ZSTD_CCtx_s* c) const noexcept {
  ZSTD_freeCCtx(c);
}

lossless_context::lossless_context() : cctx_(ZSTD_createCCtx()) {
  if (!cctx_) fail("lossless stage: zstd: cannot allocate a compression context");
}

void lossless_context::compress(std::span<const std::byte> in, std::vector<std::byte>& out) {
  byte_writer w(out);
  w.put<std::uint64_t>(in.size());
  const std::size_t bound = ZSTD_compressBound(in.size());
  const std::size_t at = w.reserve(bound);
  const std::size_t n =
      ZSTD_compressCCtx(cctx_.get(), out.data() + at, bound, in.data(), in.size(), zstd_level);
  if (ZSTD_isError(n) != 0) fail(std::string("lossless stage: zstd: ") + ZSTD_getErrorName(n));
  out.resize(at + n);
}

std::vector<std::byte> lossless_decompress(std::span<const std::byte> in, std::uint64_t limit) {
  const std::uint64_t length = declared_length(in);
  if (length > limit) {
    fail("lossless stage declares " + std::to_string(length) + " bytes, more than the " +
         std::to_string(limit) + " this stream can hold");
  }
  // Not allocated from the declared length: the output grows with what
  // the zstd frame actually produces (tensogram::codecs::zstd_decompress),
  // so a stream claiming gigabytes over a few bytes of frame costs time and
  // memory in proportion to those bytes (docs/fuzzing.md, "Decode work").
  std::vector<std::byte> out;
  try {
    out = zstd_decompress(in.subspan(8), static_cast<std::size_t>(length));
  } catch (const tensogram::error& e) {
    fail(std::string("lossless stage: ") + e.what());
  }
  if (out.size() != length) {
    fail("lossless stage: zstd frame holds " + std::to_string(out.size()) + " bytes, " +
         std::to_string(length) + " declared");
  }
  return out;
}

void lossless_decompress_into(std::span<const std::byte> in, std::span<std::byte> out) {
  const std::uint64_t length = declared_length(in);
  if (length != out.size()) {
    fail("lossless stream declares " + std::to_string(length) + " bytes, expected " +
         std::to_string(out.size()));
  }
  decompress_frame(in.subspan(8), out);
}

}  // namespace tensogram::codecs::sz3

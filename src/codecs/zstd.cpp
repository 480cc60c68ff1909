#include "tensogram/codecs/zstd.hpp"

// ZSTD_customMem and ZSTD_create?Ctx_advanced: "experimental" API that
// Debian's shared libzstd exports.
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>

#include "tensogram/core/error.hpp"
#include "tensogram/core/memory.hpp"

namespace tensogram::codecs {

namespace {

struct cctx_deleter {
  void operator()(ZSTD_CCtx* c) const noexcept { ZSTD_freeCCtx(c); }
};
struct dctx_deleter {
  void operator()(ZSTD_DCtx* d) const noexcept { ZSTD_freeDCtx(d); }
};

// zstd's own working memory (window, tables; with workers, one input and
// one output buffer per job of several MiB) is fresh memory on every call:
// on 4 KiB pages its first touch cost more than the compression in our
// measurements (docs/benchmarks.md), so large blocks get huge pages.
void* advised_alloc(void* /*opaque*/, std::size_t size) noexcept {
  void* p = std::malloc(size);
  advise_huge_pages(p, size);
  return p;
}
void advised_free(void* /*opaque*/, void* p) noexcept {
  std::free(p);
}
constexpr ZSTD_customMem k_advised_mem{advised_alloc, advised_free, nullptr};

void check(std::size_t rc, const char* what) {
  if (ZSTD_isError(rc) != 0) {
    throw encoding_error(std::string("compression error: zstd error: ") + what + ": " +
                         ZSTD_getErrorName(rc));
  }
}

}  // namespace

std::vector<std::byte> zstd_compress(std::span<const std::byte> in, int level, std::uint32_t workers) {
  std::unique_ptr<ZSTD_CCtx, cctx_deleter> ctx(ZSTD_createCCtx_advanced(k_advised_mem));
  if (!ctx) throw std::bad_alloc();
  check(ZSTD_CCtx_setParameter(ctx.get(), ZSTD_c_compressionLevel, level), "set level");
  std::vector<std::byte> out = make_advised_bytes(ZSTD_compressBound(in.size()));
  if (workers > 0) {
    check(ZSTD_CCtx_setParameter(ctx.get(), ZSTD_c_nbWorkers, static_cast<int>(workers)), "set workers");
    const std::size_t n = ZSTD_compress2(ctx.get(), out.data(), out.size(), in.data(), in.size());
    check(n, "compress");
    out.resize(n);
    return out;
  }
  // Sequential path of the reference: e_continue over the whole input, then
  // e_end, with no pledged source size (so the frame has no content size).
  // (ZSTD_c_stableInBuffer would save zstd's copy of the input into its
  // window, but changes the frame header: spec_vectors_test pins it.)
  ZSTD_inBuffer input{in.data(), in.size(), 0};
  ZSTD_outBuffer output{out.data(), out.size(), 0};
  while (input.pos < input.size) {
    check(ZSTD_compressStream2(ctx.get(), &output, &input, ZSTD_e_continue), "compress");
    if (output.pos == output.size)
      out.resize(out.size() * 2), output.dst = out.data(), output.size = out.size();
  }
  for (;;) {
    const std::size_t remaining = ZSTD_compressStream2(ctx.get(), &output, &input, ZSTD_e_end);
    check(remaining, "finish");
    if (remaining == 0) break;
    out.resize(out.size() + remaining);
    output.dst = out.data();
    output.size = out.size();
  }
  out.resize(output.pos);
  return out;
}

std::vector<std::byte> zstd_decompress(std::span<const std::byte> in, std::size_t max_size) {
  std::unique_ptr<ZSTD_DCtx, dctx_deleter> ctx(ZSTD_createDCtx_advanced(k_advised_mem));
  if (!ctx) throw std::bad_alloc();
  if (in.empty()) return {};
  // The output grows with what the frames actually produce, up to
  // `max_size`: a descriptor claiming a huge shape over a tiny payload (a
  // decompression bomb in reverse) costs nothing. A frame header that
  // declares its content size bounds it further.
  std::size_t limit = max_size;
  if (ZSTD_findFrameCompressedSize(in.data(), in.size()) == in.size()) {  // one frame, as encoders write
    const unsigned long long declared = ZSTD_getFrameContentSize(in.data(), in.size());
    if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != ZSTD_CONTENTSIZE_ERROR && declared < limit) {
      limit = static_cast<std::size_t>(declared);
    }
  }
  constexpr std::size_t first_guess = 1U << 20;
  std::vector<std::byte> out = make_advised_bytes(std::min(limit, std::max(first_guess, in.size() * 8)));
  ZSTD_inBuffer input{in.data(), in.size(), 0};
  ZSTD_outBuffer output{out.data(), out.size(), 0};
  for (;;) {
    const std::size_t last = ZSTD_decompressStream(ctx.get(), &output, &input);
    check(last, "decompress");
    if (last == 0 && input.pos == input.size) break;  // every frame complete
    if (output.pos < output.size) {
      // Room left, yet no progress possible: the input ran out mid-frame.
      if (input.pos == input.size) throw encoding_error("compression error: zstd error: truncated frame");
      continue;
    }
    if (out.size() == limit) {
      // Full at the limit: any further byte is more than allowed.
      std::byte probe{};
      ZSTD_outBuffer extra{&probe, 1, 0};
      const std::size_t rc = ZSTD_decompressStream(ctx.get(), &extra, &input);
      check(rc, "decompress");
      if (extra.pos > 0) {
        if (limit < max_size) {
          throw encoding_error("compression error: zstd error: frame holds more than its declared " +
                               std::to_string(limit) + " bytes");
        }
        throw encoding_error("compression error: zstd error: decompressed data exceeds the expected " +
                             std::to_string(max_size) + " bytes");
      }
      if (rc == 0 && input.pos == input.size) break;
      if (input.pos == input.size) throw encoding_error("compression error: zstd error: truncated frame");
      continue;
    }
    out.resize(std::min(limit, out.size() * 2));
    output.dst = out.data();
    output.size = out.size();
  }
  out.resize(output.pos);
  return out;
}

void zstd_decompress_into(std::span<const std::byte> in, std::span<std::byte> out) {
  try {
    std::unique_ptr<ZSTD_DCtx, dctx_deleter> ctx(ZSTD_createDCtx_advanced(k_advised_mem));
    if (!ctx) throw std::bad_alloc();
    // One-shot: every frame decoded straight into `out` (the streaming API
    // would stage blocks in its window buffer and copy them out).
    const std::size_t got = ZSTD_decompressDCtx(ctx.get(), out.data(), out.size(), in.data(), in.size());
    check(got, "decompress");
    if (got != out.size()) throw encoding_error("zstd: short output");
  } catch (const encoding_error&) {
    // Errors are rare: let the growing decoder find and word them (its
    // messages tell a frame's declared size from the expected size apart).
    const std::vector<std::byte> v = zstd_decompress(in, out.size());
    if (v.size() != out.size()) {
      throw encoding_error("compression error: zstd error: decompressed " + std::to_string(v.size()) +
                           " bytes, expected " + std::to_string(out.size()));
    }
    std::copy(v.begin(), v.end(), out.begin());
  }
}

}  // namespace tensogram::codecs

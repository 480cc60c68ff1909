#include "chunk.hpp"

#include <lz4.h>
#include <lz4hc.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "filters.hpp"
#include "runner.hpp"

namespace tensogram::codecs::blosc2_detail {

namespace {

// Whether all n bytes equal p[0] (n > 0).
bool is_run(const std::byte* p, std::size_t n) noexcept {
  std::uint64_t pattern = 0x0101010101010101ULL * static_cast<std::uint8_t>(p[0]);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t v;
    std::memcpy(&v, p + i, 8);
    if (v != pattern) return false;
  }
  for (; i < n; ++i) {
    if (p[i] != p[0]) return false;
  }
  return true;
}

bool all_zero(const std::byte* p, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t v;
    std::memcpy(&v, p + i, 8);
    if (v != 0) return false;
  }
  for (; i < n; ++i) {
    if (p[i] != std::byte{0}) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------
// Codec streams.

std::uint8_t codec_format(blosc2_codec c) noexcept {
  switch (c) {
    case blosc2_codec::blosclz: return k_format_blosclz;
    case blosc2_codec::lz4:
    case blosc2_codec::lz4hc: return k_format_lz4;
    case blosc2_codec::zlib: return k_format_zlib;
    case blosc2_codec::zstd: return k_format_zstd;
  }
  return k_format_blosclz;
}

// The zstd level for a blosc2 clevel: 2·clevel − 1 below 9, the maximum
// (22) at 9 — what the fixtures' zstd streams were made with (found by
// recompressing them: level 9 for clevel 5, level 22 for clevel 9; the
// bytes then differ only where libzstd 1.5.4 and c-blosc2's copy do).
int zstd_level(int clevel) noexcept {
  return clevel < 9 ? 2 * clevel - 1 : ZSTD_maxCLevel();
}

// Compresses one stream into `dst` (capacity `cap` < n). Returns the size,
// or 0 when it does not fit (the caller stores the stream raw).
std::size_t compress_stream(worker& w, blosc2_codec codec, int clevel, const std::byte* src, std::size_t n,
                            std::byte* dst, std::size_t cap) {
  if (cap == 0) return 0;
  switch (codec) {
    case blosc2_codec::blosclz:
      if (!w.blz) w.blz = std::make_unique<blosclz_encoder>(clevel);
      return w.blz->compress(std::span(src, n), std::span(dst, cap));
    case blosc2_codec::lz4: {
      const int r = LZ4_compress_default(reinterpret_cast<const char*>(src), reinterpret_cast<char*>(dst),
                                         static_cast<int>(n), static_cast<int>(cap));
      return r > 0 ? static_cast<std::size_t>(r) : 0;
    }
    case blosc2_codec::lz4hc: {
      const int r = LZ4_compress_HC(reinterpret_cast<const char*>(src), reinterpret_cast<char*>(dst),
                                    static_cast<int>(n), static_cast<int>(cap), clevel);
      return r > 0 ? static_cast<std::size_t>(r) : 0;
    }
    case blosc2_codec::zlib: {
      uLongf len = static_cast<uLongf>(cap);
      const int rc = compress2(reinterpret_cast<Bytef*>(dst), &len, reinterpret_cast<const Bytef*>(src),
                               static_cast<uLong>(n), clevel);
      if (rc == Z_BUF_ERROR) return 0;
      if (rc != Z_OK) fail("zlib compress2 failed with code " + std::to_string(rc));
      return static_cast<std::size_t>(len);
    }
    case blosc2_codec::zstd: {
      if (!w.zc) {
        w.zc.reset(ZSTD_createCCtx());
        if (!w.zc) throw std::bad_alloc();
      }
      const std::size_t r = ZSTD_compressCCtx(w.zc.get(), dst, cap, src, n, zstd_level(clevel));
      if (ZSTD_isError(r) != 0) {
        if (ZSTD_getErrorCode(r) == ZSTD_error_dstSize_tooSmall) return 0;
        fail(std::string("zstd compress failed: ") + ZSTD_getErrorName(r));
      }
      return r;
    }
  }
  return 0;
}

// Decodes one codec stream into exactly `n` bytes.
bool decompress_stream(worker& w, std::uint8_t format, std::span<const std::byte> src, std::byte* dst,
                       std::size_t n) {
  switch (format) {
    case k_format_blosclz: return blosclz_decompress(src, std::span(dst, n)) == n;
    case k_format_lz4:
      return LZ4_decompress_safe(reinterpret_cast<const char*>(src.data()), reinterpret_cast<char*>(dst),
                                 static_cast<int>(src.size()), static_cast<int>(n)) == static_cast<int>(n);
    case k_format_zlib: {
      uLongf len = static_cast<uLongf>(n);
      const int rc = uncompress(reinterpret_cast<Bytef*>(dst), &len,
                                reinterpret_cast<const Bytef*>(src.data()), static_cast<uLong>(src.size()));
      return rc == Z_OK && len == n;
    }
    case k_format_zstd: {
      if (!w.zd) {
        w.zd.reset(ZSTD_createDCtx());
        if (!w.zd) throw std::bad_alloc();
      }
      const std::size_t r = ZSTD_decompressDCtx(w.zd.get(), dst, n, src.data(), src.size());
      return ZSTD_isError(r) == 0 && r == n;
    }
    default: return false;
  }
}

const char* format_name(std::uint8_t format) noexcept {
  switch (format) {
    case k_format_blosclz: return "blosclz";
    case k_format_lz4: return "lz4";
    case k_format_zlib: return "zlib";
    case k_format_zstd: return "zstd";
    default: return "?";
  }
}
// ---------------------------------------------------------------------------
// Writer.

// Block size: our choice, matching what c-blosc2 2.21.3 picks for the
// fixtures (whole 320 kB chunks for lz4/blosclz/zstd at level 5 and
// typesize 8, 256 KiB for lz4hc/zlib, 64 KiB for lz4 at typesize 1, 8 KiB
// at level 0 and typesize 8), not derived from its rules for other inputs.
// Fast codecs get more bytes per block as the typesize grows, so that each
// split stream keeps enough history; blocks are also the unit of threading.
std::size_t auto_blocksize(const blosc2_params& p, std::size_t nbytes) noexcept {
  std::size_t bs = 0;
  if (p.blocksize != 0) {
    bs = p.blocksize;
  } else {
    const std::size_t ts = std::min(p.typesize, k_max_streams);
    switch (p.codec) {
      case blosc2_codec::blosclz:
      case blosc2_codec::lz4: {
        const std::size_t kib = p.clevel == 0   ? 1
                                : p.clevel <= 3 ? 32
                                : p.clevel <= 6 ? 64
                                : p.clevel <= 8 ? 128
                                                : 256;
        bs = kib * 1024 * ts;
        break;
      }
      case blosc2_codec::lz4hc:
      case blosc2_codec::zlib: bs = (p.clevel <= 6 ? 256 : 512) * std::size_t{1024}; break;
      case blosc2_codec::zstd: bs = 512 * std::size_t{1024}; break;
    }
  }
  bs = std::min(bs, nbytes);
  if (bs >= p.typesize) bs -= bs % p.typesize;
  return std::max<std::size_t>(bs, 1);
}

// Whether blocks are split into `typesize` streams: what c-blosc2's
// default split mode (FORWARD_COMPAT) is seen to do in the fixtures —
// blosclz, lz4 and zstd up to level 5, with byte shuffle, typesize ≤ 16 —
// plus a minimum stream length of our own (spec §8.4.3 only fixes how a
// reader tells split from unsplit).
bool splits(const blosc2_params& p, std::size_t blocksize) noexcept {
  const bool codec_ok = p.codec == blosc2_codec::blosclz || p.codec == blosc2_codec::lz4 ||
                        (p.codec == blosc2_codec::zstd && p.clevel <= 5);
  const bool shuffled =
      std::find(p.filters.begin(), p.filters.end(), blosc2_filter::shuffle) != p.filters.end();
  return codec_ok && shuffled && p.typesize <= k_max_streams &&
         blocksize / p.typesize >= k_min_split_elements;
}
}  // namespace

void write_chunk_header(std::byte* h, std::uint8_t flags, const blosc2_params& p, std::size_t nbytes,
                        std::size_t blocksize, std::size_t cbytes) noexcept {
  std::memset(h, 0, k_chunk_header);
  h[0] = std::byte{5};  // chunk format version
  h[1] = std::byte{1};  // codec format version
  h[2] = static_cast<std::byte>(flags);
  h[3] = static_cast<std::byte>(p.typesize);
  put_le(h + 4, nbytes, 4);
  put_le(h + 8, blocksize, 4);
  put_le(h + 12, cbytes, 4);
  for (std::size_t i = 0; i < 6; ++i) h[16 + i] = static_cast<std::byte>(p.filters[i]);
  h[22] = static_cast<std::byte>(p.codec);
  // 23: codec meta, 24..29: filter meta, 30: reserved, 31: blosc2 flags — all 0.
}
namespace {

void append_memcpyed(std::vector<std::byte>& frame, std::uint8_t flags, const blosc2_params& p,
                     std::span<const std::byte> src, std::size_t blocksize) {
  const std::size_t at = frame.size();
  frame.resize(at + k_chunk_header);
  write_chunk_header(frame.data() + at, flags, p, src.size(), blocksize, k_chunk_header + src.size());
  frame.insert(frame.end(), src.begin(), src.end());
}

// Filters (slots in order) and codec streams of one block, into w.out.
void compress_block(worker& w, const blosc2_params& p, const std::byte* src, std::size_t bsize, bool split) {
  raw_buffer& sink = w.out;
  sink.clear();
  std::size_t nfilters = 0;
  for (blosc2_filter f : p.filters) nfilters += f != blosc2_filter::none ? 1 : 0;
  if (nfilters > 0) w.scratch(bsize, nfilters > 1);
  const std::byte* data = src;
  for (blosc2_filter f : p.filters) {
    if (f == blosc2_filter::none) continue;
    std::byte* dst = data == w.a.get() ? w.b.get() : w.a.get();
    run_filter(static_cast<std::uint8_t>(f), data, dst, bsize, p.typesize, true);
    data = dst;
  }
  const std::size_t nstreams = split ? p.typesize : 1;
  const std::size_t neblock = bsize / nstreams;
  for (std::size_t s = 0; s < nstreams; ++s) {
    const std::byte* piece = data + s * neblock;
    std::byte* out = sink.reserve_tail(4 + neblock);
    if (is_run(piece, neblock)) {
      // One byte value throughout, as c-blosc2 writes it (the f64_lz4
      // fixture): size 0 for zeros, else −value and a token byte 0x01.
      const auto v = static_cast<std::uint8_t>(piece[0]);
      put_le(out, v == 0 ? 0 : 0x100000000ULL - v, 4);
      if (v != 0) out[4] = std::byte{0x01};
      sink.commit(v == 0 ? 4 : 5);
      continue;
    }
    std::size_t csize = compress_stream(w, p.codec, p.clevel, piece, neblock, out + 4, neblock - 1);
    if (csize == 0) {  // does not compress: stored raw (csize == neblock)
      std::memcpy(out + 4, piece, neblock);
      csize = neblock;
    }
    put_le(out, csize, 4);
    sink.commit(4 + csize);
  }
}
}  // namespace

written_chunk write_chunk(std::vector<std::byte>& frame, std::span<const std::byte> src,
                          const blosc2_params& p, std::uint32_t threads) {
  const std::size_t nbytes = src.size();
  const std::uint8_t fmt_bits = static_cast<std::uint8_t>(codec_format(p.codec) << 5);
  if (nbytes < k_min_buffer) {
    // c-blosc2 never compresses buffers under 32 bytes (spec §8.4.2, §8.5).
    append_memcpyed(frame, k_flag_ext | k_flag_memcpyed, p, src, nbytes);
    return {false, nbytes};
  }
  const std::size_t bs = auto_blocksize(p, nbytes);
  if (p.clevel == 0) {
    append_memcpyed(frame, k_flag_ext | k_flag_memcpyed, p, src, bs);
    return {false, bs};
  }
  if (all_zero(src.data(), nbytes)) return {true, bs};
  const bool split = splits(p, bs);
  const std::size_t nblocks = (nbytes + bs - 1) / bs;
  const std::uint8_t flags = static_cast<std::uint8_t>(k_flag_ext | fmt_bits | (split ? 0 : k_flag_no_split));
  const std::size_t at = frame.size();
  frame.resize(at + k_chunk_header + 4 * nblocks);
  // Blocks are compressed in parallel into each worker's (warm) buffer and
  // appended in order; the chunk stops as soon as it would not be smaller
  // than memcpyed.
  bool incompressible = false;
  run_in_order<worker>(
      nblocks, threads,
      [&](std::size_t k, worker& w) {
        const std::size_t bsize = std::min(bs, nbytes - k * bs);
        // A short last block ("leftover") is never split (spec §8.4.3).
        compress_block(w, p, src.data() + k * bs, bsize, split && bsize == bs);
      },
      [&](std::size_t k, worker& w) {
        if (frame.size() - at + w.out.size() >= k_chunk_header + nbytes) {
          incompressible = true;
          return false;
        }
        put_le(frame.data() + at + k_chunk_header + 4 * k, frame.size() - at, 4);
        frame.insert(frame.end(), w.out.data(), w.out.data() + w.out.size());
        return true;
      });
  if (incompressible) {
    // Memcpyed, flagged with the codec and split mode as c-blosc2 does (the
    // `noise` fixture).
    frame.resize(at);
    append_memcpyed(frame, static_cast<std::uint8_t>(flags | k_flag_memcpyed), p, src, bs);
    return {false, bs};
  }
  write_chunk_header(frame.data() + at, flags, p, nbytes, bs, frame.size() - at);
  return {false, bs};
}

chunk_info parse_chunk(std::span<const std::byte> avail, std::size_t number, std::size_t frame_offset,
                       const std::string& name) {
  chunk_info c;
  c.number = number;
  c.frame_offset = frame_offset;
  const std::string where = name + " (frame offset " + std::to_string(frame_offset) + ")";
  if (avail.size() < k_chunk_header) {
    fail(where + ": only " + std::to_string(avail.size()) + " bytes left for its 32-byte header");
  }
  const std::uint8_t version = u8(avail, 0);
  if (version < 2 || version > 5)
    fail(where + ": unsupported chunk format version " + std::to_string(version));
  const std::uint8_t flags = u8(avail, 2);
  if ((flags & k_flag_ext) != k_flag_ext) {
    fail(where + ": chunk without the extended (blosc2) header, flags " + hex(flags));
  }
  c.typesize = u8(avail, 3);
  const std::int32_t nbytes = le_i32(avail, 4);
  const std::int32_t blocksize = le_i32(avail, 8);
  const std::int32_t cbytes = le_i32(avail, 12);
  if (nbytes < 0 || blocksize < 0 || cbytes < static_cast<std::int32_t>(k_chunk_header)) {
    fail(where + ": invalid sizes in header (nbytes " + std::to_string(nbytes) + ", blocksize " +
         std::to_string(blocksize) + ", cbytes " + std::to_string(cbytes) + ")");
  }
  if (static_cast<std::size_t>(cbytes) > avail.size()) {
    fail(where + ": cbytes " + std::to_string(cbytes) + " runs past the " + std::to_string(avail.size()) +
         " bytes available");
  }
  c.bytes = avail.first(static_cast<std::size_t>(cbytes));
  c.nbytes = static_cast<std::uint64_t>(nbytes);
  c.blocksize = static_cast<std::size_t>(blocksize);
  const std::uint8_t b2 = u8(avail, 31);
  if ((b2 & k_b2_dict) != 0) fail(where + ": chunks compressed with a dictionary are not supported");
  if ((b2 & ~(k_b2_dict | k_b2_special_mask)) != 0) {
    fail(where + ": unsupported blosc2 flags " + hex(b2) + " (lazy or instrumented chunk)");
  }
  const std::uint8_t special = static_cast<std::uint8_t>((b2 & k_b2_special_mask) >> 4);
  switch (special) {
    case 0: break;
    case k_special_zero: c.kind = chunk_kind::zeros; return c;
    case k_special_uninit: c.kind = chunk_kind::uninit; return c;
    case k_special_nan:
      if (c.typesize != 4 && c.typesize != 8) {
        fail(where + ": NaN special chunk with typesize " + std::to_string(c.typesize) + " (must be 4 or 8)");
      }
      c.kind = chunk_kind::nan;
      return c;
    case k_special_value:
      if (c.bytes.size() == k_chunk_header && c.nbytes > 0)
        fail(where + ": repeated-value chunk without a value");
      c.kind = chunk_kind::value;
      return c;
    default: fail(where + ": unknown special value " + std::to_string(special));
  }
  if ((flags & k_flag_memcpyed) != 0) {
    if (c.bytes.size() - k_chunk_header < c.nbytes) {
      fail(where + ": memcpyed chunk of " + std::to_string(c.nbytes) + " bytes has only " +
           std::to_string(c.bytes.size() - k_chunk_header) + " stored");
    }
    c.kind = chunk_kind::memcpyed;
    return c;
  }
  c.kind = chunk_kind::regular;
  c.format = static_cast<std::uint8_t>(flags >> 5);
  if (c.format != k_format_blosclz && c.format != k_format_lz4 && c.format != k_format_zlib &&
      c.format != k_format_zstd) {
    fail(where + ": unsupported codec format " + std::to_string(c.format) +
         (c.format == 2   ? " (snappy)"
          : c.format >= 5 ? " (user-defined codec)"
                          : ""));
  }
  for (std::size_t i = 0; i < 6; ++i) {
    c.filters[i] = u8(avail, 16 + i);
    if (c.filters[i] > static_cast<std::uint8_t>(blosc2_filter::bitshuffle)) {
      fail(where + ": unsupported filter " + filter_name(c.filters[i]) + " in slot " + std::to_string(i) +
           " (only shuffle and bitshuffle are supported)");
    }
  }
  if (c.typesize == 0) fail(where + ": typesize 0");
  if (c.nbytes == 0) return c;
  if (c.blocksize == 0) fail(where + ": blocksize 0 for " + std::to_string(c.nbytes) + " bytes");
  c.nblocks = static_cast<std::size_t>((c.nbytes + c.blocksize - 1) / c.blocksize);
  if (c.nblocks > (c.bytes.size() - k_chunk_header) / 4) {
    fail(where + ": " + std::to_string(c.nblocks) + " block offsets do not fit in " +
         std::to_string(c.bytes.size()) + " bytes");
  }
  c.split = (flags & k_flag_no_split) == 0 && c.typesize > 1;
  if (c.split && c.blocksize % c.typesize != 0) {
    fail(where + ": split blocks of " + std::to_string(c.blocksize) +
         " bytes are not a multiple of typesize " + std::to_string(c.typesize));
  }
  return c;
}

void fill_direct(const chunk_info& c, std::uint64_t from, std::size_t len, std::byte* dst) {
  switch (c.kind) {
    case chunk_kind::memcpyed: std::memcpy(dst, c.bytes.data() + k_chunk_header + from, len); return;
    case chunk_kind::zeros:
    case chunk_kind::uninit:  // any content is allowed; zeros are deterministic
      std::memset(dst, 0, len);
      return;
    case chunk_kind::nan:
    case chunk_kind::value: {
      // NaN: the host's (little-endian) quiet NaN of the typesize.
      static constexpr std::uint8_t nan4[4] = {0x00, 0x00, 0xC0, 0x7F};
      static constexpr std::uint8_t nan8[8] = {0, 0, 0, 0, 0, 0, 0xF8, 0x7F};
      std::span<const std::byte> pattern = c.bytes.subspan(std::min(c.bytes.size(), k_chunk_header));
      if (c.kind == chunk_kind::nan) {
        pattern = c.typesize == 4 ? std::span<const std::byte>(std::as_bytes(std::span(nan4)))
                                  : std::span<const std::byte>(std::as_bytes(std::span(nan8)));
      }
      const std::size_t period = pattern.size();
      for (std::size_t i = 0; i < len; ++i) dst[i] = pattern[static_cast<std::size_t>((from + i) % period)];
      return;
    }
    case chunk_kind::regular: break;
  }
}

void decode_block(const chunk_info& c, std::size_t k, std::byte* dst, worker& w) {
  const std::span<const std::byte> b = c.bytes;
  const std::size_t start = k * c.blocksize;
  const std::size_t bsize = static_cast<std::size_t>(std::min<std::uint64_t>(c.blocksize, c.nbytes - start));
  const bool leftover = bsize != c.blocksize;
  const std::size_t nstreams = c.split && !leftover ? c.typesize : 1;
  const std::size_t neblock = bsize / nstreams;
  auto where = [&](std::size_t s) {
    return c.where() + " block " + std::to_string(k) + (nstreams > 1 ? " stream " + std::to_string(s) : "");
  };
  const std::int32_t bstart = le_i32(b, k_chunk_header + 4 * k);
  const std::size_t first = k_chunk_header + 4 * c.nblocks;
  if (bstart < 0 || static_cast<std::size_t>(bstart) < first || static_cast<std::size_t>(bstart) > b.size()) {
    fail(where(0) + ": block offset " + std::to_string(bstart) + " outside the chunk's " +
         std::to_string(first) + ".." + std::to_string(b.size()));
  }
  std::size_t nfilters = 0;
  for (std::uint8_t f : c.filters) nfilters += f != 0 ? 1 : 0;
  if (nfilters > 0) w.scratch(bsize, nfilters > 1);
  std::byte* stage = nfilters > 0 ? w.a.get() : dst;
  std::size_t p = static_cast<std::size_t>(bstart);
  for (std::size_t s = 0; s < nstreams; ++s) {
    std::byte* out = stage + s * neblock;
    if (b.size() - p < 4) fail(where(s) + ": stream size field past the chunk end");
    const std::int32_t csize = le_i32(b, p);
    p += 4;
    if (csize == 0) {
      std::memset(out, 0, neblock);  // a zero stream
    } else if (csize < 0) {
      // A run of one byte value; a token byte with bit 0 set follows.
      if (b.size() - p < 1) fail(where(s) + ": run token past the chunk end");
      const std::uint8_t token = u8(b, p);
      p += 1;
      if ((token & 1) == 0) fail(where(s) + ": invalid run token " + hex(token));
      const auto value = static_cast<std::uint8_t>(0U - static_cast<std::uint32_t>(csize));
      std::memset(out, value, neblock);
    } else {
      const auto cs = static_cast<std::size_t>(csize);
      if (cs > b.size() - p) {
        fail(where(s) + ": stream of " + std::to_string(cs) + " bytes runs past the chunk end");
      }
      if (cs == neblock) {
        std::memcpy(out, b.data() + p, neblock);
      } else if (!decompress_stream(w, c.format, b.subspan(p, cs), out, neblock)) {
        fail(where(s) + ": corrupt " + format_name(c.format) + " stream (" + std::to_string(cs) +
             " bytes, expected to decode to " + std::to_string(neblock) + ")");
      }
      p += cs;
    }
  }
  if (nfilters == 0) return;
  // Undo the filters from slot 5 down to slot 0, the last one into dst.
  const std::byte* cur = stage;
  std::size_t left = nfilters;
  for (std::size_t i = 6; i-- > 0;) {
    if (c.filters[i] == 0) continue;
    std::byte* out = --left == 0 ? dst : (cur == w.a.get() ? w.b.get() : w.a.get());
    run_filter(c.filters[i], cur, out, bsize, c.typesize, false);
    cur = out;
  }
}

void read_chunk_range(const chunk_info& c, std::uint64_t from, std::size_t len, std::byte* dst, worker& w,
                      std::vector<std::byte>& block) {
  if (c.kind != chunk_kind::regular) {
    fill_direct(c, from, len, dst);
    return;
  }
  const std::uint64_t end = from + len;
  // 64-bit products: in a 32-bit build k·blocksize may pass 2^32 (two
  // int32 sizes) just past the last block.
  for (std::size_t k = static_cast<std::size_t>(from / c.blocksize);
       static_cast<std::uint64_t>(k) * c.blocksize < end; ++k) {
    const std::uint64_t b0 = static_cast<std::uint64_t>(k) * c.blocksize;
    const std::uint64_t b1 = std::min<std::uint64_t>(b0 + c.blocksize, c.nbytes);
    const std::uint64_t lo = std::max(b0, from);
    const std::uint64_t hi = std::min(b1, end);
    if (lo == b0 && hi == b1) {
      decode_block(c, k, dst + (b0 - from), w);
    } else {
      block.resize(static_cast<std::size_t>(b1 - b0));
      decode_block(c, k, block.data(), w);
      std::memcpy(dst + (lo - from), block.data() + (lo - b0), static_cast<std::size_t>(hi - lo));
    }
  }
}
}  // namespace tensogram::codecs::blosc2_detail

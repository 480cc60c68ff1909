#include "tensogram/codecs/blosc2.hpp"

#include <lz4.h>
#include <lz4hc.h>
#if defined(__linux__)
#endif
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <string>

#include "tensogram/codecs/blosclz.hpp"
#include "tensogram/codecs/shuffle.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/core/memory.hpp"
#include "tensogram/core/parallel.hpp"

namespace tensogram::codecs {

namespace {

static_assert(sizeof(std::size_t) == 8, "blosc2 offsets are 64-bit");

// ---------------------------------------------------------------------------
// Format constants (spec 03 §8.4.2, §8.4.3).

constexpr std::size_t k_header_len = 97;       // frame header as c-blosc2 2.21.3 writes it
constexpr std::size_t k_min_header_len = 69;   // the fields read here end at offset 68
constexpr std::size_t k_trailer_len = 35;      // trailer as written
constexpr std::size_t k_min_trailer_len = 23;  // CE, u32 length, D8 00, 16-byte fingerprint
constexpr std::size_t k_chunk_header = 32;     // extended chunk header
constexpr std::size_t k_min_buffer = 32;       // c-blosc2 stores smaller buffers memcpyed
constexpr std::size_t k_max_streams = 16;      // split blocks only up to this typesize
constexpr std::size_t k_min_split_elements = 32;
constexpr std::uint32_t k_max_i32 = 2147483647;

// Chunk header byte 2.
constexpr std::uint8_t k_flag_ext = 0x05;  // 0x01 | 0x04 together: extended header
constexpr std::uint8_t k_flag_memcpyed = 0x02;
constexpr std::uint8_t k_flag_no_split = 0x10;
// Chunk header byte 31.
constexpr std::uint8_t k_b2_dict = 0x01;
constexpr std::uint8_t k_b2_special_mask = 0x70;
// Special values (byte 31 bits 4..6; index entries: low 3 bits of byte 7).
constexpr std::uint8_t k_special_zero = 1;
constexpr std::uint8_t k_special_nan = 2;
constexpr std::uint8_t k_special_value = 3;
constexpr std::uint8_t k_special_uninit = 4;
// Codec formats (chunk header byte 2, bits 5..7).
constexpr std::uint8_t k_format_blosclz = 0;
constexpr std::uint8_t k_format_lz4 = 1;  // lz4 and lz4hc
constexpr std::uint8_t k_format_zlib = 3;
constexpr std::uint8_t k_format_zstd = 4;

// Largest index accepted beyond the frame's own size (see parse_frame).
constexpr std::uint64_t k_max_index_bytes = std::uint64_t{1} << 20;
// Granularity of memcpy/fill work items on the decode side.
constexpr std::size_t k_fill_piece = std::size_t{1} << 20;

[[noreturn]] void fail(const std::string& what) {
  throw encoding_error("compression error: blosc2 error: " + what);
}

std::string hex(std::uint64_t v) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), digits[v & 15]);
    v >>= 4;
  } while (v != 0);
  if (s.size() % 2 != 0) s.insert(s.begin(), '0');
  return "0x" + s;
}

// ---------------------------------------------------------------------------
// Byte access (chunk fields little-endian, msgpack header fields big-endian).

std::uint64_t le(std::span<const std::byte> b, std::size_t at, int n) noexcept {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i)
    v = (v << 8) | static_cast<std::uint8_t>(b[at + static_cast<std::size_t>(i)]);
  return v;
}
std::uint64_t be(std::span<const std::byte> b, std::size_t at, int n) noexcept {
  std::uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | static_cast<std::uint8_t>(b[at + static_cast<std::size_t>(i)]);
  return v;
}
std::int32_t le_i32(std::span<const std::byte> b, std::size_t at) noexcept {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(le(b, at, 4)));
}
std::uint8_t u8(std::span<const std::byte> b, std::size_t at) noexcept {
  return static_cast<std::uint8_t>(b[at]);
}
void put_le(std::byte* p, std::uint64_t v, int n) noexcept {
  for (int i = 0; i < n; ++i) p[i] = static_cast<std::byte>((v >> (8 * i)) & 0xFF);
}
void put_be(std::byte* p, std::uint64_t v, int n) noexcept {
  for (int i = 0; i < n; ++i) p[i] = static_cast<std::byte>((v >> (8 * (n - 1 - i))) & 0xFF);
}

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

// Growable byte buffer that does not zero what it hands out (compressed
// output is written exactly once).
class raw_buffer {
 public:
  std::byte* reserve_tail(std::size_t extra) {
    if (cap_ - size_ < extra) {
      const std::size_t cap = std::max(size_ + extra, cap_ + cap_ / 2);
      auto p = std::make_unique_for_overwrite<std::byte[]>(cap);
      if (size_ > 0) std::memcpy(p.get(), data_.get(), size_);
      data_ = std::move(p);
      cap_ = cap;
    }
    return data_.get() + size_;
  }
  void commit(std::size_t n) noexcept { size_ += n; }
  void clear() noexcept { size_ = 0; }
  [[nodiscard]] const std::byte* data() const noexcept { return data_.get(); }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  std::unique_ptr<std::byte[]> data_;
  std::size_t size_ = 0;
  std::size_t cap_ = 0;
};

// ---------------------------------------------------------------------------
// Filters (spec 03 §8.4.3): byte shuffle and bit shuffle over a block.

// Byte shuffle: byte j of element e goes to j·m + e (m = n / ts elements);
// the n mod ts trailing bytes are copied unchanged. The transposition is
// the `shuffle` filter's (codecs/shuffle.hpp, SIMD); blocks already run in
// parallel, so it runs on one thread here.
void byte_shuffle(const std::byte* in, std::byte* out, std::size_t n, std::size_t ts, bool forward) {
  const std::size_t m = ts == 0 ? 0 : n / ts;
  const std::size_t body = m * ts;
  if (ts <= 1 || m == 0) {
    std::memcpy(out, in, n);
    return;
  }
  if (forward) {
    shuffle({in, body}, ts, {out, body});
  } else {
    unshuffle({in, body}, ts, {out, body});
  }
  std::memcpy(out + body, in + body, n - body);
}

// Transposes an 8×8 bit matrix: bit b of byte i moves to bit i of byte b
// (bytes little-endian in the word).
std::uint64_t transpose8(std::uint64_t x) noexcept {
  std::uint64_t t = (x ^ (x >> 7)) & 0x00AA00AA00AA00AAULL;
  x = x ^ t ^ (t << 7);
  t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCCULL;
  x = x ^ t ^ (t << 14);
  t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0ULL;
  x = x ^ t ^ (t << 28);
  return x;
}

// Bit shuffle (the bitshuffle library's layout as c-blosc2 uses it): over
// the first m = floor(n / ts / 8) · 8 elements, row r = 8·j + b (byte j of
// the element, bit b) holds m / 8 bytes whose bit i of byte g is bit b of
// byte j of element 8g + i. Trailing bytes are copied unchanged.
void bit_shuffle(const std::byte* in, std::byte* out, std::size_t n, std::size_t ts, bool forward) noexcept {
  const std::size_t m = n / ts / 8 * 8;
  const std::size_t row = m / 8;
  for (std::size_t j = 0; j < ts; ++j) {
    for (std::size_t g = 0; g < row; ++g) {
      std::uint64_t x = 0;
      for (std::size_t i = 0; i < 8; ++i) {
        const std::byte v = forward ? in[(8 * g + i) * ts + j] : in[(8 * j + i) * row + g];
        x |= static_cast<std::uint64_t>(v) << (8 * i);
      }
      x = transpose8(x);
      for (std::size_t b = 0; b < 8; ++b) {
        const auto v = static_cast<std::byte>((x >> (8 * b)) & 0xFF);
        if (forward) {
          out[(8 * j + b) * row + g] = v;
        } else {
          out[(8 * g + b) * ts + j] = v;
        }
      }
    }
  }
  std::memcpy(out + m * ts, in + m * ts, n - m * ts);
}

void run_filter(std::uint8_t code, const std::byte* in, std::byte* out, std::size_t n, std::size_t ts,
                bool forward) {
  if (code == static_cast<std::uint8_t>(blosc2_filter::shuffle)) {
    byte_shuffle(in, out, n, ts, forward);
  } else {
    bit_shuffle(in, out, n, ts, forward);
  }
}

std::string filter_name(std::uint8_t code) {
  switch (code) {
    case 3: return "delta (3)";
    case 4: return "trunc_prec (4)";
    default: return std::to_string(code);
  }
}

// ---------------------------------------------------------------------------
// Per-thread state: scratch buffers and codec contexts.

struct zstd_cctx_deleter {
  void operator()(ZSTD_CCtx* c) const noexcept { ZSTD_freeCCtx(c); }
};
struct zstd_dctx_deleter {
  void operator()(ZSTD_DCtx* d) const noexcept { ZSTD_freeDCtx(d); }
};

struct worker {
  std::unique_ptr<std::byte[]> a;  // filter scratch, `cap` bytes each
  std::unique_ptr<std::byte[]> b;
  std::size_t cap = 0;
  std::unique_ptr<ZSTD_CCtx, zstd_cctx_deleter> zc;
  std::unique_ptr<ZSTD_DCtx, zstd_dctx_deleter> zd;
  std::unique_ptr<blosclz_encoder> blz;
  raw_buffer out;                // a compressed block
  std::vector<std::byte> block;  // a decompressed block

  // Scratch of n bytes in `a`, and in `b` too when two are needed.
  void scratch(std::size_t n, bool two) {
    if (cap < n) {
      a = std::make_unique_for_overwrite<std::byte[]>(n);
      b.reset();
      cap = n;
    }
    if (two && !b) b = std::make_unique_for_overwrite<std::byte[]>(cap);
  }
};

// Runs produce(k, w) for k = 0..n−1 on up to `threads` threads (each with
// its own worker state `w`), and consume(k, w) strictly in order k = 0, 1,
// … one at a time, on whichever thread produced k; consume returns false
// to stop early. Production overlaps with consumption, so the ordered part
// (appending to the one output vector) runs alongside the parallel part
// (the codecs), and the output never depends on the thread count. The error
// thrown is that of the first failing item in order, so errors do not
// depend on it either. `turn` is the next item to consume, or k_stop.
template <typename Produce, typename Consume>
void run_in_order(std::size_t n, std::uint32_t threads, Produce&& produce, Consume&& consume) {
  constexpr std::size_t k_stop = std::numeric_limits<std::size_t>::max();
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> turn{0};
  std::exception_ptr error;  // written by the thread holding the turn only
  const std::size_t nworkers = threads <= 1 ? 1 : std::min<std::size_t>(threads, n);
  parallel_for(nworkers, threads, [&](std::size_t) {
    worker w;
    for (std::size_t k = next.fetch_add(1); k < n && turn.load() != k_stop; k = next.fetch_add(1)) {
      std::exception_ptr e;
      try {
        produce(k, w);
      } catch (...) {
        e = std::current_exception();
      }
      for (std::size_t t = turn.load(); t != k; t = turn.load()) {
        if (t == k_stop) return;  // an earlier item failed or stopped
        turn.wait(t);
      }
      bool go = false;
      if (!e) {
        try {
          go = consume(k, w);
        } catch (...) {
          e = std::current_exception();
        }
      }
      if (e) error = e;
      turn.store(go ? k + 1 : k_stop);
      turn.notify_all();
      if (!go) return;
    }
  });
  if (error) std::rethrow_exception(error);
}

// Runs produce(k, w) for k = 0..n−1 on up to `threads` threads (each with
// its own worker state `w`) when the items are independent. The error
// thrown is that of the first failing item in order: items are taken in
// increasing order and every item before a failed one still runs, so errors
// do not depend on the thread count.
template <typename Produce>
void run_unordered(std::size_t n, std::uint32_t threads, Produce&& produce) {
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> failed_at{n};
  std::mutex error_lock;
  std::exception_ptr error;  // of item failed_at
  const std::size_t nworkers = threads <= 1 ? 1 : std::min<std::size_t>(threads, n);
  parallel_for(nworkers, threads, [&](std::size_t) {
    worker w;
    for (std::size_t k = next.fetch_add(1); k < n && k < failed_at.load(); k = next.fetch_add(1)) {
      try {
        produce(k, w);
      } catch (...) {
        const std::lock_guard<std::mutex> guard(error_lock);
        if (k < failed_at.load()) {
          failed_at.store(k);
          error = std::current_exception();
        }
      }
    }
  });
  if (error) std::rethrow_exception(error);
}

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

struct written_chunk {
  bool special_zero = false;
  std::size_t blocksize = 0;
};

// One chunk appended to `frame` (nothing for an all-zero chunk, which
// becomes a special index entry as in c-blosc2, spec §8.4.2).
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
  run_in_order(
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

// The 97-byte header of spec §8.4.2 (sizes are patched in afterwards).
void write_frame_header(std::byte* h, const blosc2_params& p) noexcept {
  auto set = [h](std::size_t at, std::initializer_list<std::uint8_t> v) {
    for (std::uint8_t x : v) h[at++] = static_cast<std::byte>(x);
  };
  std::memset(h, 0, k_header_len);
  set(0, {0x9E, 0xA8, 'b', '2', 'f', 'r', 'a', 'm', 'e', 0x00});  // fixarray(14), str(8) magic
  set(10, {0xD2});                                                // i32 header length
  put_be(h + 11, k_header_len, 4);
  set(15, {0xCF});  // u64 frame length
  set(24, {0xA4, 0x12, 0x00,
           static_cast<std::uint8_t>(static_cast<unsigned>(p.codec) | (static_cast<unsigned>(p.clevel) << 4)),
           0x03});  // str(4): version 2 + 64-bit offsets, contiguous, codec, split mode − 1
  set(29, {0xD3});  // i64 uncompressed bytes
  set(38, {0xD3});  // i64 compressed bytes
  set(47, {0xD2});  // i32 typesize
  put_be(h + 48, p.typesize, 4);
  set(52, {0xD2});                                // i32 blocksize
  set(57, {0xD2});                                // i32 chunksize
  set(62, {0xD1, 0x00, 0x00, 0xD1, 0x00, 0x01});  // i16 threads: 0 compression, 1 decompression
  set(68, {0xC2, 0xD8, 0x06});                    // no vl-metalayers; fixext16 with 6 filter slots
  for (std::size_t i = 0; i < 6; ++i) h[71 + i] = static_cast<std::byte>(p.filters[i]);
  h[77] = static_cast<std::byte>(p.codec);  // 78 codec meta, 79..84 filter meta, 85..86: 0
  set(87, {0x93, 0xCD, 0x00, 0x07, 0xDE, 0x00, 0x00, 0xDC, 0x00, 0x00});  // empty metalayer section
}

// ---------------------------------------------------------------------------
// Reader.

enum class chunk_kind : std::uint8_t { regular, memcpyed, zeros, nan, value, uninit };

struct chunk_info {
  std::size_t number = 0;  // chunk index in the frame (for messages)
  bool is_index = false;
  std::uint64_t out_pos = 0;  // decompressed offset in the frame
  std::uint64_t nbytes = 0;
  chunk_kind kind = chunk_kind::zeros;
  std::size_t frame_offset = 0;      // where the chunk starts in the frame (stored chunks)
  std::span<const std::byte> bytes;  // the stored chunk (cbytes)
  std::size_t typesize = 1;
  std::size_t blocksize = 0;
  std::size_t nblocks = 0;
  bool split = false;
  std::uint8_t format = 0;
  std::array<std::uint8_t, 6> filters{};

  [[nodiscard]] std::size_t piece_size() const noexcept {
    return kind == chunk_kind::regular ? blocksize : k_fill_piece;
  }
  [[nodiscard]] std::size_t pieces() const noexcept {
    return nbytes == 0 ? 0 : static_cast<std::size_t>((nbytes + piece_size() - 1) / piece_size());
  }
  [[nodiscard]] std::string where() const {
    return (is_index ? std::string("index chunk") : "chunk " + std::to_string(number)) + " (frame offset " +
           std::to_string(frame_offset) + ")";
  }
};

// Parses and validates a stored chunk's header. `avail` runs from the chunk
// start to the end of the region the chunk must lie in.
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

// Writes decompressed bytes [from, from + len) of a non-regular chunk.
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

// Decompresses block k of a regular chunk into dst (the block's size).
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

// Decompressed bytes [from, from + len) of any chunk (len > 0).
void read_chunk_range(const chunk_info& c, std::uint64_t from, std::size_t len, std::byte* dst, worker& w,
                      std::vector<std::byte>& block) {
  if (c.kind != chunk_kind::regular) {
    fill_direct(c, from, len, dst);
    return;
  }
  const std::uint64_t end = from + len;
  for (std::size_t k = static_cast<std::size_t>(from / c.blocksize); k * c.blocksize < end; ++k) {
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

struct frame_view {
  std::uint64_t header_len = 0;
  std::uint64_t nbytes = 0;
  std::uint64_t cbytes = 0;
  std::uint32_t typesize = 0;
  std::uint32_t blocksize = 0;
  std::uint32_t chunksize = 0;
  std::uint8_t codec_byte = 0;
  std::vector<chunk_info> chunks;
  std::size_t special_chunks = 0;
};

void expect_marker(std::span<const std::byte> b, std::size_t at, std::uint8_t marker, const char* field) {
  if (u8(b, at) != marker) {
    fail(std::string("frame header: ") + field + " marker at offset " + std::to_string(at) + " is " +
         hex(u8(b, at)) + ", expected msgpack " + hex(marker));
  }
}

// Parses and validates the whole frame: header, trailer, index, every
// chunk header, checking `nbytes <= max_size` first. The only allocation is
// the index: 8 bytes per chunk, at most max(frame size, 1 MiB).
frame_view parse_frame(std::span<const std::byte> b, std::uint64_t max_size) {
  frame_view f;
  if (b.size() < k_min_header_len) {
    fail("frame of " + std::to_string(b.size()) + " bytes is shorter than a frame header");
  }
  static constexpr std::uint8_t magic[10] = {0x9E, 0xA8, 'b', '2', 'f', 'r', 'a', 'm', 'e', 0x00};
  for (std::size_t i = 0; i < sizeof magic; ++i) {
    if (u8(b, i) != magic[i])
      fail("not a blosc2 contiguous frame (bad magic at offset " + std::to_string(i) + ")");
  }
  expect_marker(b, 10, 0xD2, "header length");
  expect_marker(b, 15, 0xCF, "frame length");
  expect_marker(b, 24, 0xA4, "flags");
  expect_marker(b, 29, 0xD3, "uncompressed size");
  expect_marker(b, 38, 0xD3, "compressed size");
  expect_marker(b, 47, 0xD2, "typesize");
  expect_marker(b, 52, 0xD2, "blocksize");
  expect_marker(b, 57, 0xD2, "chunksize");
  expect_marker(b, 62, 0xD1, "compression threads");
  expect_marker(b, 65, 0xD1, "decompression threads");
  if (u8(b, 68) != 0xC2 && u8(b, 68) != 0xC3)
    fail("frame header: metalayer flag at offset 68 is not a boolean");
  const std::uint64_t header_len = be(b, 11, 4);
  const std::uint64_t frame_len = be(b, 16, 8);
  if (frame_len != b.size()) {
    fail("frame header says " + std::to_string(frame_len) + " bytes but the frame has " +
         std::to_string(b.size()));
  }
  if (header_len < k_min_header_len || header_len > b.size()) {
    fail("frame header length " + std::to_string(header_len) + " outside " +
         std::to_string(k_min_header_len) + ".." + std::to_string(b.size()));
  }
  const std::uint8_t gflags = u8(b, 25);
  if ((gflags & 0x0F) > 2) fail("unsupported frame format version " + std::to_string(gflags & 0x0F));
  if ((gflags & 0x30) != 0x10) fail("frame without 64-bit offsets (flags " + hex(gflags) + ")");
  if (u8(b, 26) != 0)
    fail("unsupported frame type " + std::to_string(u8(b, 26)) + " (only contiguous frames)");
  f.header_len = header_len;
  f.codec_byte = u8(b, 27);
  f.nbytes = be(b, 30, 8);
  f.cbytes = be(b, 39, 8);
  f.typesize = static_cast<std::uint32_t>(be(b, 48, 4));
  f.blocksize = static_cast<std::uint32_t>(be(b, 53, 4));
  f.chunksize = static_cast<std::uint32_t>(be(b, 58, 4));
  if (f.nbytes > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) ||
      f.cbytes > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    fail("negative size in frame header");
  }
  if (f.nbytes > max_size) {
    fail("frame holds " + std::to_string(f.nbytes) + " bytes, more than the " + std::to_string(max_size) +
         " expected");
  }
  if (f.typesize == 0 || f.typesize > 255)
    fail("frame typesize " + std::to_string(f.typesize) + " outside 1..255");
  if (f.chunksize > k_max_i32) fail("negative chunksize in frame header");
  // Trailer: its length sits 22 bytes before the end, after a 0xCE marker.
  if (b.size() - header_len < k_chunk_header + k_min_trailer_len) {
    fail("frame too short for an index chunk and a trailer after its " + std::to_string(header_len) +
         "-byte header");
  }
  if (u8(b, b.size() - 23) != 0xCE)
    fail("trailer length marker missing at offset " + std::to_string(b.size() - 23));
  const std::uint64_t trailer_len = be(b, b.size() - 22, 4);
  if (trailer_len < k_min_trailer_len || trailer_len > b.size() - header_len - k_chunk_header) {
    fail("trailer length " + std::to_string(trailer_len) + " does not fit the frame");
  }
  const std::size_t trailer_at = b.size() - static_cast<std::size_t>(trailer_len);
  if ((u8(b, trailer_at) & 0xF0) != 0x90)
    fail("trailer at offset " + std::to_string(trailer_at) + " is not a msgpack array");
  // Data chunks, then the index chunk.
  if (f.cbytes > trailer_at - header_len - k_chunk_header) {
    fail("compressed size " + std::to_string(f.cbytes) + " leaves no room for the index chunk");
  }
  const std::size_t data_at = static_cast<std::size_t>(header_len);
  const std::size_t index_at = data_at + static_cast<std::size_t>(f.cbytes);
  chunk_info index = parse_chunk(b.subspan(index_at, trailer_at - index_at), 0, index_at, "index chunk");
  index.is_index = true;
  // Reference frames: every chunk holds `chunksize` bytes but the last.
  std::uint64_t nchunks = 0;
  if (f.nbytes > 0) {
    if (f.chunksize == 0) fail("chunksize 0 for " + std::to_string(f.nbytes) + " bytes");
    nchunks = (f.nbytes + f.chunksize - 1) / f.chunksize;
  }
  // Bound the index before decoding it: stored chunks take at least 32
  // bytes of the frame each, and even an index of special chunks only is
  // below 1 MiB up to 32 TiB of 256 MiB chunks.
  if (nchunks > std::max<std::uint64_t>(b.size(), k_max_index_bytes) / 8) {
    fail("frame claims " + std::to_string(nchunks) + " chunks of " + std::to_string(f.chunksize) +
         " bytes, an implausibly large index for a " + std::to_string(b.size()) + "-byte frame");
  }
  if (index.nbytes != 8 * nchunks) {
    fail("index chunk holds " + std::to_string(index.nbytes) + " bytes, expected 8 for each of the " +
         std::to_string(nchunks) + " chunks");
  }
  std::vector<std::byte> entries(static_cast<std::size_t>(index.nbytes));
  if (!entries.empty()) {
    worker w;
    std::vector<std::byte> block;
    read_chunk_range(index, 0, entries.size(), entries.data(), w, block);
  }
  const std::span<const std::byte> data = b.subspan(data_at, static_cast<std::size_t>(f.cbytes));
  f.chunks.resize(static_cast<std::size_t>(nchunks));
  for (std::size_t i = 0; i < f.chunks.size(); ++i) {
    const std::uint64_t out_pos = static_cast<std::uint64_t>(i) * f.chunksize;
    const std::uint64_t expect = std::min<std::uint64_t>(f.chunksize, f.nbytes - out_pos);
    const std::uint64_t entry = le(entries, 8 * i, 8);
    chunk_info c;
    if ((entry >> 63) != 0) {
      // Not stored: a special chunk (spec §8.4.2).
      const auto special = static_cast<std::uint8_t>((entry >> 56) & 0x07);
      c.number = i;
      c.typesize = f.typesize;
      if (special == k_special_zero) {
        c.kind = chunk_kind::zeros;
      } else if (special == k_special_uninit) {
        c.kind = chunk_kind::uninit;
      } else if (special == k_special_nan && (f.typesize == 4 || f.typesize == 8)) {
        c.kind = chunk_kind::nan;
      } else {
        fail("index entry " + std::to_string(i) + ": invalid special chunk " + hex(entry >> 56) +
             " (typesize " + std::to_string(f.typesize) + ")");
      }
      c.nbytes = expect;
      ++f.special_chunks;
    } else {
      if (entry >= data.size()) {
        fail("index entry " + std::to_string(i) + ": chunk offset " + std::to_string(entry) +
             " outside the " + std::to_string(data.size()) + "-byte data region");
      }
      const auto off = static_cast<std::size_t>(entry);
      c = parse_chunk(data.subspan(off), i, data_at + off, "chunk " + std::to_string(i));
      if (c.nbytes != expect) {
        fail(c.where() + ": holds " + std::to_string(c.nbytes) + " bytes, expected " +
             std::to_string(expect));
      }
    }
    c.out_pos = out_pos;
    f.chunks[i] = c;
  }
  return f;
}

}  // namespace

std::optional<blosc2_codec> blosc2_codec_from_name(std::string_view name) noexcept {
  if (name == "blosclz") return blosc2_codec::blosclz;
  if (name == "lz4") return blosc2_codec::lz4;
  if (name == "lz4hc") return blosc2_codec::lz4hc;
  if (name == "zlib") return blosc2_codec::zlib;
  if (name == "zstd") return blosc2_codec::zstd;
  return std::nullopt;
}

std::string_view blosc2_codec_name(blosc2_codec codec) noexcept {
  switch (codec) {
    case blosc2_codec::blosclz: return "blosclz";
    case blosc2_codec::lz4: return "lz4";
    case blosc2_codec::lz4hc: return "lz4hc";
    case blosc2_codec::zlib: return "zlib";
    case blosc2_codec::zstd: return "zstd";
  }
  return "?";
}

std::size_t blosc2_reference_chunk_bytes(std::size_t typesize) noexcept {
  const std::size_t ts = std::max<std::size_t>(typesize, 1);
  const std::size_t per = std::max<std::size_t>(1, (std::size_t{256} << 20) / ts);
  return std::min(blosc2_max_chunk_bytes, per * ts);
}

std::vector<std::byte> blosc2_compress(std::span<const std::byte> in, const blosc2_params& p,
                                       std::uint32_t threads) {
  if (p.clevel < 0 || p.clevel > 9) fail("clevel " + std::to_string(p.clevel) + " outside 0..9");
  if (p.typesize < 1 || p.typesize > 255) fail("typesize " + std::to_string(p.typesize) + " outside 1..255");
  if (!blosc2_codec_from_name(blosc2_codec_name(p.codec))) {
    fail("unknown codec code " + std::to_string(static_cast<unsigned>(p.codec)));
  }
  for (blosc2_filter f : p.filters) {
    if (f != blosc2_filter::none && f != blosc2_filter::shuffle && f != blosc2_filter::bitshuffle) {
      fail("unsupported filter " + filter_name(static_cast<std::uint8_t>(f)));
    }
  }
  if (in.empty()) fail("cannot compress an empty buffer (c-blosc2 refuses to append an empty chunk)");
  const std::size_t chunk_bytes = p.chunk_bytes != 0 ? std::min(p.chunk_bytes, blosc2_max_chunk_bytes)
                                                     : blosc2_reference_chunk_bytes(p.typesize);
  const std::size_t nchunks = (in.size() + chunk_bytes - 1) / chunk_bytes;
  std::vector<std::byte> frame;
  // Room for an incompressible input; pages are only touched when written.
  reserve_advised(frame, k_header_len + in.size() + (k_chunk_header + 8) * (nchunks + 1) + k_trailer_len);
  frame.resize(k_header_len);
  std::vector<std::uint64_t> index(nchunks);
  std::size_t last_blocksize = 0;
  for (std::size_t i = 0; i < nchunks; ++i) {
    const std::size_t start = i * chunk_bytes;
    const std::span<const std::byte> slice = in.subspan(start, std::min(chunk_bytes, in.size() - start));
    const std::size_t at = frame.size() - k_header_len;
    const written_chunk wc = write_chunk(frame, slice, p, threads);
    // A special zero chunk: sign bit and "zeros" in the top byte (00…0081).
    index[i] = wc.special_zero ? 0x81ULL << 56 : at;
    last_blocksize = wc.blocksize;
  }
  const std::size_t cbytes = frame.size() - k_header_len;
  // Index chunk: c-blosc2's defaults (blosclz, level 5, shuffle, typesize
  // 8); it never compresses 8–24 bytes and rarely more, so we always store
  // it memcpyed, with the split flag c-blosc2 sets (spec §8.4.2).
  {
    blosc2_params ip;
    ip.codec = blosc2_codec::blosclz;
    ip.typesize = 8;
    const std::size_t n = 8 * nchunks;
    const std::size_t at = frame.size();
    frame.resize(at + k_chunk_header + n);
    const std::uint8_t flags =
        n < k_min_buffer ? k_flag_ext | k_flag_memcpyed : k_flag_ext | k_flag_memcpyed | k_flag_no_split;
    write_chunk_header(frame.data() + at, flags, ip, n, n, k_chunk_header + n);
    for (std::size_t i = 0; i < nchunks; ++i) put_le(frame.data() + at + k_chunk_header + 8 * i, index[i], 8);
  }
  static constexpr std::uint8_t trailer[k_trailer_len] = {
      0x94, 0x01, 0x93, 0xCD, 0x00, 0x06, 0xDE, 0x00, 0x00, 0xDC, 0x00, 0x00,
      0xCE, 0x00, 0x00, 0x00, 0x23, 0xD8, 0x00, 0,    0,    0,    0,    0,
      0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0};
  for (std::uint8_t t : trailer) frame.push_back(static_cast<std::byte>(t));
  std::byte* h = frame.data();
  write_frame_header(h, p);
  put_be(h + 16, frame.size(), 8);
  put_be(h + 30, in.size(), 8);
  put_be(h + 39, cbytes, 8);
  put_be(h + 53, last_blocksize, 4);  // c-blosc2 records the last chunk's block size
  put_be(h + 58, std::min(chunk_bytes, in.size()), 4);
  return frame;
}

namespace {

// Decompresses every chunk of `f` into out (f.nbytes bytes). Each block or
// 1 MiB piece is decoded straight to its place in the output, in parallel:
// no ordered copy, and the output's first touch is shared by the threads.
void decompress_frame(const frame_view& f, std::byte* out, std::uint32_t threads) {
  // Work items: blocks of regular chunks, 1 MiB pieces of the others.
  struct item {
    std::size_t chunk;
    std::size_t piece;
  };
  std::vector<item> items;
  for (std::size_t i = 0; i < f.chunks.size(); ++i) {
    for (std::size_t k = 0; k < f.chunks[i].pieces(); ++k) items.push_back({i, k});
  }
  run_unordered(items.size(), threads, [&](std::size_t k, worker& w) {
    const chunk_info& c = f.chunks[items[k].chunk];
    const std::uint64_t from = static_cast<std::uint64_t>(items[k].piece) * c.piece_size();
    const auto len = static_cast<std::size_t>(std::min<std::uint64_t>(c.piece_size(), c.nbytes - from));
    std::byte* dst = out + static_cast<std::size_t>(c.out_pos + from);
    if (c.kind == chunk_kind::regular) {
      decode_block(c, items[k].piece, dst, w);
    } else {
      fill_direct(c, from, len, dst);
    }
  });
}

}  // namespace

std::vector<std::byte> blosc2_decompress(std::span<const std::byte> frame, std::size_t max_size,
                                         std::uint32_t threads) {
  const frame_view f = parse_frame(frame, max_size);
  std::vector<std::byte> out = make_advised_bytes(static_cast<std::size_t>(f.nbytes));
  decompress_frame(f, out.data(), threads);
  return out;
}

void blosc2_decompress_into(std::span<const std::byte> frame, std::span<std::byte> out,
                            std::uint32_t threads) {
  const frame_view f = parse_frame(frame, out.size());
  if (f.nbytes != out.size()) {
    fail("decompressed " + std::to_string(f.nbytes) + " bytes, expected " + std::to_string(out.size()));
  }
  decompress_frame(f, out.data(), threads);
}

std::vector<std::byte> blosc2_decompress_range(std::span<const std::byte> frame, std::uint64_t byte_pos,
                                               std::uint64_t byte_size, std::uint64_t max_size) {
  const frame_view f = parse_frame(frame, max_size);
  std::uint64_t end = 0;
  if (__builtin_add_overflow(byte_pos, byte_size, &end) || end > f.nbytes) {
    fail("range of " + std::to_string(byte_size) + " bytes at " + std::to_string(byte_pos) +
         " exceeds the frame's " + std::to_string(f.nbytes) + " bytes");
  }
  std::vector<std::byte> out(static_cast<std::size_t>(byte_size));
  if (byte_size == 0) return out;
  worker w;
  std::vector<std::byte> block;
  for (std::size_t i = static_cast<std::size_t>(byte_pos / f.chunksize); i < f.chunks.size(); ++i) {
    const chunk_info& c = f.chunks[i];
    if (c.out_pos >= end) break;
    const std::uint64_t lo = std::max(byte_pos, c.out_pos);
    const std::uint64_t hi = std::min(end, c.out_pos + c.nbytes);
    if (lo >= hi) continue;
    read_chunk_range(c, lo - c.out_pos, static_cast<std::size_t>(hi - lo), out.data() + (lo - byte_pos), w,
                     block);
  }
  return out;
}

blosc2_frame_info blosc2_inspect(std::span<const std::byte> frame) {
  const frame_view f = parse_frame(frame, std::numeric_limits<std::uint64_t>::max());
  blosc2_frame_info info;
  info.nbytes = f.nbytes;
  info.cbytes = f.cbytes;
  info.typesize = f.typesize;
  info.blocksize = f.blocksize;
  info.chunksize = f.chunksize;
  info.codec_byte = f.codec_byte;
  info.nchunks = f.chunks.size();
  info.special_chunks = f.special_chunks;
  return info;
}

}  // namespace tensogram::codecs

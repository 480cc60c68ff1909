// The blosc2 contiguous frame ("cframe", spec 03 §8.4.2) and the codec's
// public functions: a 97-byte msgpack header, the data chunks back to back
// (chunk.cpp), an index chunk (one int64 offset per data chunk, negative for
// special chunks that are not stored) and a 35-byte trailer.
#include "tensogram/codecs/blosc2.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>

#include "tensogram/core/memory.hpp"

#include "chunk.hpp"
#include "filters.hpp"
#include "format.hpp"
#include "runner.hpp"

namespace tensogram::codecs {

// The frame and chunk internals this file strings together.
using namespace blosc2_detail;

namespace {

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

// The header's fields (spec §8.4.2), checked; `nbytes <= max_size` first
// among the sizes, before anything is allocated.
frame_view parse_header(std::span<const std::byte> b, std::uint64_t max_size) {
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
  return f;
}

// Where the trailer starts: its length sits 22 bytes before the end, after
// a 0xCE marker.
std::size_t find_trailer(std::span<const std::byte> b, std::uint64_t header_len) {
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
  return trailer_at;
}

// The index chunk and every data chunk's header, between the header and the
// trailer. The only allocation is the index: 8 bytes per chunk, at most
// max(frame size, 1 MiB).
void parse_chunks(std::span<const std::byte> b, std::size_t trailer_at, frame_view& f) {
  const std::uint64_t header_len = f.header_len;
  // Data chunks, then the index chunk.
  if (f.cbytes > trailer_at - header_len - k_chunk_header) {
    fail("compressed size " + std::to_string(f.cbytes) + " leaves no room for the index chunk");
  }
  const std::size_t data_at = to_size(header_len, "frame header");
  const std::size_t index_at = data_at + to_size(f.cbytes, "data region");
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
  std::vector<std::byte> entries(to_size(index.nbytes, "index"));
  if (!entries.empty()) {
    worker w;
    std::vector<std::byte> block;
    read_chunk_range(index, 0, entries.size(), entries.data(), w, block);
  }
  const std::span<const std::byte> data = b.subspan(data_at, to_size(f.cbytes, "data region"));
  f.chunks.resize(to_size(nchunks, "chunk list"));
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
}

// Parses and validates the whole frame: header, trailer, index, every
// chunk header.
frame_view parse_frame(std::span<const std::byte> b, std::uint64_t max_size) {
  frame_view f = parse_header(b, max_size);
  parse_chunks(b, find_trailer(b, f.header_len), f);
  return f;
}

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
  run_unordered<worker>(items.size(), threads, [&](std::size_t k, worker& w) {
    const chunk_info& c = f.chunks[items[k].chunk];
    const std::uint64_t from = static_cast<std::uint64_t>(items[k].piece) * c.piece_size();
    const auto len = static_cast<std::size_t>(std::min<std::uint64_t>(c.piece_size(), c.nbytes - from));
    std::byte* dst = out + to_size(c.out_pos + from, "output offset");
    if (c.kind == chunk_kind::regular) {
      decode_block(c, items[k].piece, dst, w);
    } else {
      fill_direct(c, from, len, dst);
    }
  });
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

std::vector<std::byte> blosc2_decompress(std::span<const std::byte> frame, std::size_t max_size,
                                         std::uint32_t threads) {
  const frame_view f = parse_frame(frame, max_size);
  std::vector<std::byte> out = make_advised_bytes(to_size(f.nbytes, "decompressed frame"));
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
  std::vector<std::byte> out(to_size(byte_size, "requested range"));
  if (byte_size == 0) return out;
  worker w;
  std::vector<std::byte> block;
  for (std::size_t i = to_size(byte_pos / f.chunksize, "chunk number"); i < f.chunks.size(); ++i) {
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

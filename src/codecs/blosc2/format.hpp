// The blosc2 contiguous frame and chunk formats (spec 03 §8.4.2, §8.4.3):
// constants, errors and byte access shared by the chunk and frame code
// (chunk.cpp, frame.cpp). Internal to the codec.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>

#include "tensogram/core/endian.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/core/hex.hpp"

namespace tensogram::codecs::blosc2_detail {

// ---------------------------------------------------------------------------
// Format constants (spec 03 §8.4.2, §8.4.3).

inline constexpr std::size_t k_header_len = 97;       // frame header as c-blosc2 2.21.3 writes it
inline constexpr std::size_t k_min_header_len = 69;   // the fields read here end at offset 68
inline constexpr std::size_t k_trailer_len = 35;      // trailer as written
inline constexpr std::size_t k_min_trailer_len = 23;  // CE, u32 length, D8 00, 16-byte fingerprint
inline constexpr std::size_t k_chunk_header = 32;     // extended chunk header
inline constexpr std::size_t k_min_buffer = 32;       // c-blosc2 stores smaller buffers memcpyed
inline constexpr std::size_t k_max_streams = 16;      // split blocks only up to this typesize
inline constexpr std::size_t k_min_split_elements = 32;
inline constexpr std::uint32_t k_max_i32 = 2147483647;

// Chunk header byte 2.
inline constexpr std::uint8_t k_flag_ext = 0x05;  // 0x01 | 0x04 together: extended header
inline constexpr std::uint8_t k_flag_memcpyed = 0x02;
inline constexpr std::uint8_t k_flag_no_split = 0x10;
// Chunk header byte 31.
inline constexpr std::uint8_t k_b2_dict = 0x01;
inline constexpr std::uint8_t k_b2_special_mask = 0x70;
// Special values (byte 31 bits 4..6; index entries: low 3 bits of byte 7).
inline constexpr std::uint8_t k_special_zero = 1;
inline constexpr std::uint8_t k_special_nan = 2;
inline constexpr std::uint8_t k_special_value = 3;
inline constexpr std::uint8_t k_special_uninit = 4;
// Codec formats (chunk header byte 2, bits 5..7).
inline constexpr std::uint8_t k_format_blosclz = 0;
inline constexpr std::uint8_t k_format_lz4 = 1;  // lz4 and lz4hc
inline constexpr std::uint8_t k_format_zlib = 3;
inline constexpr std::uint8_t k_format_zstd = 4;

// Largest index accepted beyond the frame's own size (see frame.cpp).
inline constexpr std::uint64_t k_max_index_bytes = std::uint64_t{1} << 20;
// Granularity of memcpy/fill work items on the decode side.
inline constexpr std::size_t k_fill_piece = std::size_t{1} << 20;

/// Every failure: an `encoding_error` naming blosc2 (spec 03 §3.1).
[[noreturn]] inline void fail(const std::string& what) {
  throw encoding_error("compression error: blosc2 error: " + what);
}

/// A size or offset of the format (64-bit in frames, spec 03 §8.4.2, and
/// kept in std::uint64_t) narrowed to index memory. Checked: in a 32-bit
/// build (WebAssembly) a frame or a request may name more bytes than the
/// address space holds, which is an error, never a truncation. A no-op
/// where std::size_t has 64 bits.
inline std::size_t to_size(std::uint64_t v, const char* what) {
  if constexpr (sizeof(std::size_t) < sizeof(std::uint64_t)) {
    if (v > std::numeric_limits<std::size_t>::max()) {
      fail(std::string(what) + " of " + std::to_string(v) +
           " bytes does not fit in this build's address space");
    }
  }
  return static_cast<std::size_t>(v);
}

/// "0x" and an even number of lowercase hex digits, as c-blosc2 prints
/// header bytes in its messages.
inline std::string hex(std::uint64_t v) {
  std::string s = hex_digits(v);
  if (s.size() % 2 != 0) s.insert(s.begin(), '0');
  return "0x" + s;
}

// ---------------------------------------------------------------------------
// Byte access (chunk fields little-endian, msgpack header fields big-endian).

// Field readers over a span at an offset (the caller has checked the bounds),
// on core/endian.hpp's variable-width loads and stores.
inline std::uint64_t le(std::span<const std::byte> b, std::size_t at, int n) noexcept {
  return load_le_n(b.data() + at, static_cast<std::size_t>(n));
}
inline std::uint64_t be(std::span<const std::byte> b, std::size_t at, int n) noexcept {
  return load_be_n(b.data() + at, static_cast<std::size_t>(n));
}
inline std::int32_t le_i32(std::span<const std::byte> b, std::size_t at) noexcept {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(le(b, at, 4)));
}
inline std::uint8_t u8(std::span<const std::byte> b, std::size_t at) noexcept {
  return static_cast<std::uint8_t>(b[at]);
}
inline void put_le(std::byte* p, std::uint64_t v, int n) noexcept {
  store_le_n(p, v, static_cast<std::size_t>(n));
}
inline void put_be(std::byte* p, std::uint64_t v, int n) noexcept {
  store_be_n(p, v, static_cast<std::size_t>(n));
}

}  // namespace tensogram::codecs::blosc2_detail

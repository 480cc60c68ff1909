// Unaligned loads and stores of unsigned integers in a stated byte order: the
// one copy every layer uses (framing integers are big-endian, spec 01
// conventions; blosc2 chunk fields, LZ4/BloscLZ match words and .npy headers
// are little-endian). All are memcpy-based, so any alignment is fine and the
// compiler emits single moves (plus a byte swap where the host differs).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace tensogram {

#if defined(__cpp_lib_bit_cast)
using std::bit_cast;
#else
/// std::bit_cast for standard libraries without it (libc++ 14, which the
/// WebAssembly build's Emscripten ships, docs/wasm.md), on the compiler
/// builtin that implements it in both GCC and clang.
template <typename To, typename From>
requires(sizeof(To) == sizeof(From) && std::is_trivially_copyable_v<To> && std::is_trivially_copyable_v<From>)
    [[nodiscard]] constexpr To bit_cast(const From& from) noexcept {
  return __builtin_bit_cast(To, from);
}
#endif

/// An unsigned integer of the host's byte order from unaligned memory.
template <class T>
[[nodiscard]] inline T load_native(const std::byte* p) noexcept {
  static_assert(std::is_unsigned_v<T>);
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

/// Reverses the bytes of an unsigned integer (std::byteswap is C++23).
template <class T>
[[nodiscard]] constexpr T byteswap(T v) noexcept {
  static_assert(std::is_unsigned_v<T>);
  if constexpr (sizeof(T) == 1) {
    return v;
  } else if constexpr (sizeof(T) == 2) {
    return __builtin_bswap16(v);
  } else if constexpr (sizeof(T) == 4) {
    return __builtin_bswap32(v);
  } else {
    static_assert(sizeof(T) == 8);
    return __builtin_bswap64(v);
  }
}

template <class T>
[[nodiscard]] inline T load_be(const std::byte* p) noexcept {
  const T v = load_native<T>(p);
  return std::endian::native == std::endian::big ? v : byteswap(v);
}
template <class T>
[[nodiscard]] inline T load_le(const std::byte* p) noexcept {
  const T v = load_native<T>(p);
  return std::endian::native == std::endian::little ? v : byteswap(v);
}
template <class T>
inline void store_be(std::byte* p, T v) noexcept {
  if constexpr (std::endian::native != std::endian::big) v = byteswap(v);
  std::memcpy(p, &v, sizeof(T));
}
template <class T>
inline void store_le(std::byte* p, T v) noexcept {
  if constexpr (std::endian::native != std::endian::little) v = byteswap(v);
  std::memcpy(p, &v, sizeof(T));
}

// The fixed widths by name, as the framing code reads them.
[[nodiscard]] inline std::uint16_t load_be16(const std::byte* p) noexcept {
  return load_be<std::uint16_t>(p);
}
[[nodiscard]] inline std::uint32_t load_be32(const std::byte* p) noexcept {
  return load_be<std::uint32_t>(p);
}
[[nodiscard]] inline std::uint64_t load_be64(const std::byte* p) noexcept {
  return load_be<std::uint64_t>(p);
}
inline void store_be16(std::byte* p, std::uint16_t v) noexcept {
  store_be(p, v);
}
inline void store_be32(std::byte* p, std::uint32_t v) noexcept {
  store_be(p, v);
}
inline void store_be64(std::byte* p, std::uint64_t v) noexcept {
  store_be(p, v);
}

/// Variable-width fields (1 to 8 bytes): blosc2's 1/2/4/8-byte header fields
/// and msgpack integers, CBOR arguments, .npy header lengths.
[[nodiscard]] inline std::uint64_t load_le_n(const std::byte* p, std::size_t n) noexcept {
  std::uint64_t v = 0;
  for (std::size_t i = n; i-- > 0;) v = (v << 8) | static_cast<std::uint8_t>(p[i]);
  return v;
}
[[nodiscard]] inline std::uint64_t load_be_n(const std::byte* p, std::size_t n) noexcept {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<std::uint8_t>(p[i]);
  return v;
}
inline void store_le_n(std::byte* p, std::uint64_t v, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::byte>((v >> (8 * i)) & 0xFF);
}
inline void store_be_n(std::byte* p, std::uint64_t v, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::byte>((v >> (8 * (n - 1 - i))) & 0xFF);
}

}  // namespace tensogram

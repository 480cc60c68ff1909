// Little-endian field writer and bounds-checked reader for the SZ3 stream
// (spec 03 §8.7; docs/sz3-format.md). SZ3 stores every field as the raw
// little-endian bytes of its C++ type, so fixed-width types are spelled out
// here (`u64` for SZ3's `size_t`, `i32` for its `int`).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "tensogram/core/error.hpp"

namespace tensogram::codecs::sz3 {

static_assert(std::endian::native == std::endian::little, "the SZ3 codec assumes a little-endian host");

/// Thrown for every malformed SZ3 stream: says what was being read.
[[noreturn]] inline void fail(const std::string& what) {
  throw encoding_error("sz3: " + what);
}

/// Appends fields to a growing byte vector.
class byte_writer {
 public:
  explicit byte_writer(std::vector<std::byte>& out) : out_(out) {}

  template <class T>
  requires std::is_trivially_copyable_v<T>
  void put(T value) {
    const std::size_t at = out_.size();
    out_.resize(at + sizeof(T));
    std::memcpy(out_.data() + at, &value, sizeof(T));
  }

  template <class T>
  requires std::is_trivially_copyable_v<T>
  void put_array(std::span<const T> values) {
    if (values.empty()) return;
    const std::size_t at = out_.size();
    out_.resize(at + values.size_bytes());
    std::memcpy(out_.data() + at, values.data(), values.size_bytes());
  }

  void put_bytes(std::span<const std::byte> bytes) { put_array(bytes); }

  /// Reserves `n` bytes and returns their offset (for a size written later).
  std::size_t reserve(std::size_t n) {
    const std::size_t at = out_.size();
    out_.resize(at + n);
    return at;
  }

  template <class T>
  requires std::is_trivially_copyable_v<T>
  void put_at(std::size_t offset, T value) { std::memcpy(out_.data() + offset, &value, sizeof(T)); }

  [[nodiscard]] std::size_t size() const noexcept { return out_.size(); }
  [[nodiscard]] std::vector<std::byte>& bytes() noexcept { return out_; }

 private:
  std::vector<std::byte>& out_;
};

/// Reads fields from a byte span; every read is checked against the end and
/// names the field in its error.
class byte_reader {
 public:
  explicit byte_reader(std::span<const std::byte> in) : in_(in) {}

  template <class T>
  requires std::is_trivially_copyable_v<T>
  [[nodiscard]] T get(const char* field) {
    need(sizeof(T), field);
    T value;
    std::memcpy(&value, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }

  /// Reads `count` values; the count is checked against the bytes left
  /// before anything is allocated.
  template <class T>
  requires std::is_trivially_copyable_v<T>
  [[nodiscard]] std::vector<T> get_array(std::uint64_t count, const char* field) {
    if (count > remaining() / sizeof(T)) {
      fail(std::string(field) + ": " + std::to_string(count) + " values of " + std::to_string(sizeof(T)) +
           " bytes declared at offset " + std::to_string(pos_) + ", only " + std::to_string(remaining()) +
           " bytes left");
    }
    std::vector<T> values(static_cast<std::size_t>(count));
    if (count != 0)
      std::memcpy(values.data(), in_.data() + pos_, static_cast<std::size_t>(count) * sizeof(T));
    pos_ += static_cast<std::size_t>(count) * sizeof(T);
    return values;
  }

  [[nodiscard]] std::span<const std::byte> get_bytes(std::uint64_t n, const char* field) {
    need(n, field);
    auto s = in_.subspan(pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return s;
  }

  void need(std::uint64_t n, const char* field) const {
    if (n > remaining()) {
      fail(std::string("truncated stream: ") + field + " needs " + std::to_string(n) + " bytes at offset " +
           std::to_string(pos_) + ", " + std::to_string(remaining()) + " left");
    }
  }

  [[nodiscard]] std::size_t remaining() const noexcept { return in_.size() - pos_; }
  [[nodiscard]] std::size_t position() const noexcept { return pos_; }
  [[nodiscard]] std::span<const std::byte> rest() const noexcept { return in_.subspan(pos_); }
  void skip(std::size_t n, const char* field) {
    need(n, field);
    pos_ += n;
  }

 private:
  std::span<const std::byte> in_;
  std::size_t pos_ = 0;
};

}  // namespace tensogram::codecs::sz3

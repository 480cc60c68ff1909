// `buffer`: a read-only run of bytes that says who owns them.
//
// Three owners exist: the buffer itself (`owned`), the caller (`borrowed`:
// the caller keeps the memory alive for as long as the buffer and every
// slice of it are used) and the operating system (`mapped`: a read-only
// memory map of a file, unmapped when the last slice goes away). Slices share
// ownership with their parent, which is what lets decode return zero-copy
// views of payloads that stay valid on their own.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <vector>

namespace tensogram {

class buffer {
 public:
  enum class ownership { owned, borrowed, mapped };

  /// An empty owned buffer.
  buffer() = default;

  /// Takes ownership of `bytes`.
  [[nodiscard]] static buffer owned(std::vector<std::byte> bytes);
  /// Allocates `size` uninitialised bytes owned by the buffer; fill them
  /// through `mutable_data()` before sharing the buffer.
  [[nodiscard]] static buffer allocate(std::size_t size);
  /// Refers to memory the caller owns and keeps alive.
  [[nodiscard]] static buffer borrowed(std::span<const std::byte> bytes) noexcept;
  /// Maps `path` read-only. Throws `io_error` (message starts with the path).
  [[nodiscard]] static buffer map_file(const std::filesystem::path& path);

  [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return bytes_; }
  [[nodiscard]] const std::byte* data() const noexcept { return bytes_.data(); }
  [[nodiscard]] std::size_t size() const noexcept { return bytes_.size(); }
  [[nodiscard]] bool empty() const noexcept { return bytes_.empty(); }
  [[nodiscard]] ownership kind() const noexcept { return kind_; }

  /// Writable access to an `owned` buffer's bytes (nullptr otherwise).
  [[nodiscard]] std::byte* mutable_data() noexcept;

  /// A sub-range sharing this buffer's ownership. Throws `invalid_arg_error`
  /// when the range is not inside the buffer.
  [[nodiscard]] buffer slice(std::size_t offset, std::size_t length) const;

  /// True when `inner` lies entirely inside this buffer's bytes.
  [[nodiscard]] bool contains(std::span<const std::byte> inner) const noexcept;

 private:
  std::shared_ptr<const void> keep_alive_;
  std::span<const std::byte> bytes_;
  ownership kind_ = ownership::owned;
  bool writable_ = false;
};

}  // namespace tensogram

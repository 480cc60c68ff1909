// Iterators over messages in a buffer, messages in a file and objects in a
// message (spec 04 Part D): the reference wrapper's `next(...)` style, plus
// begin()/end() for range-for loops.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "tensogram/core/buffer.hpp"
#include "tensogram/format/scan.hpp"
#include "tensogram/io/file.hpp"
#include "tensogram/message/decode.hpp"
#include "tensogram/message/options.hpp"

namespace tensogram {

/// A minimal forward iterator over positions 0..n of a sequence whose
/// elements are produced on dereference by `Owner::at(i)`.
template <typename Owner, typename Value>
class index_iterator {
 public:
  using value_type = Value;
  using difference_type = std::ptrdiff_t;

  index_iterator() = default;
  index_iterator(Owner* owner, std::size_t i) noexcept : owner_(owner), i_(i) {}
  Value operator*() const { return owner_->at(i_); }
  index_iterator& operator++() noexcept {
    ++i_;
    return *this;
  }
  index_iterator operator++(int) noexcept {
    index_iterator old = *this;
    ++i_;
    return old;
  }
  friend bool operator==(const index_iterator& a, const index_iterator& b) noexcept { return a.i_ == b.i_; }

 private:
  Owner* owner_ = nullptr;
  std::size_t i_ = 0;
};

/// Messages of a buffer (scanned once, spec 01 §16). The buffer must outlive
/// the iterator; yielded spans point into it.
class buffer_iterator {
 public:
  explicit buffer_iterator(std::span<const std::byte> bytes);
  buffer_iterator(const std::uint8_t* buf, std::size_t len);

  /// Number of messages found.
  [[nodiscard]] std::size_t count() const noexcept { return entries_.size(); }
  /// The next message; false at the end.
  bool next(const std::uint8_t*& data, std::size_t& len);
  bool next(std::span<const std::byte>& message);

  [[nodiscard]] std::span<const std::byte> at(std::size_t i) const;
  [[nodiscard]] auto begin() const {
    return index_iterator<const buffer_iterator, std::span<const std::byte>>(this, 0);
  }
  [[nodiscard]] auto end() const {
    return index_iterator<const buffer_iterator, std::span<const std::byte>>(this, entries_.size());
  }

 private:
  std::span<const std::byte> bytes_;
  std::vector<scan_entry> entries_;
  std::size_t pos_ = 0;
};

/// Messages of a file, read one at a time (bounded memory).
class file_iterator {
 public:
  explicit file_iterator(file& f);

  [[nodiscard]] std::size_t count() const noexcept { return count_; }
  /// Copies the next message's bytes into `out`; false at the end.
  bool next(std::vector<std::uint8_t>& out);
  bool next(buffer& out);

  [[nodiscard]] buffer at(std::size_t i) const;
  [[nodiscard]] auto begin() const { return index_iterator<const file_iterator, buffer>(this, 0); }
  [[nodiscard]] auto end() const { return index_iterator<const file_iterator, buffer>(this, count_); }

 private:
  file* file_;
  std::size_t count_;
  std::size_t pos_ = 0;
};

/// Objects of the message at the start of a buffer, one decoded object per
/// step, each as a one-object `message` carrying the full metadata (spec 04
/// C.4 `tgm_object_iter`). `verify_hash` is ignored (spec 02 §14).
class object_iterator {
 public:
  object_iterator(const std::uint8_t* buf, std::size_t len, const decode_options& options = {});
  object_iterator(buffer msg, const decode_options& options = {});

  [[nodiscard]] std::size_t count() const noexcept { return count_; }
  bool next(message& out);

  [[nodiscard]] message at(std::size_t i) const;
  [[nodiscard]] auto begin() const { return index_iterator<const object_iterator, message>(this, 0); }
  [[nodiscard]] auto end() const { return index_iterator<const object_iterator, message>(this, count_); }

 private:
  buffer msg_;
  decode_options options_;
  std::size_t count_ = 0;
  std::size_t pos_ = 0;
};

}  // namespace tensogram

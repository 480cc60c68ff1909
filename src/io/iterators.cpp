#include "tensogram/io/iterators.hpp"

#include <cstring>
#include <string>

#include "tensogram/core/error.hpp"

namespace tensogram {

namespace {

std::span<const std::byte> as_bytes_checked(const std::uint8_t* buf, std::size_t len) {
  if (buf == nullptr && len != 0) throw invalid_arg_error("iterator: null buffer with non-zero length");
  return {reinterpret_cast<const std::byte*>(buf), len};
}

}  // namespace

buffer_iterator::buffer_iterator(std::span<const std::byte> bytes) : bytes_(bytes), entries_(scan(bytes)) {}

buffer_iterator::buffer_iterator(const std::uint8_t* buf, std::size_t len)
    : buffer_iterator(as_bytes_checked(buf, len)) {}

std::span<const std::byte> buffer_iterator::at(std::size_t i) const {
  if (i >= entries_.size()) {
    throw object_error("message index " + std::to_string(i) + " out of range (buffer has " +
                       std::to_string(entries_.size()) + " messages)");
  }
  return bytes_.subspan(entries_[i].offset, entries_[i].length);
}

bool buffer_iterator::next(std::span<const std::byte>& message) {
  if (pos_ >= entries_.size()) return false;
  message = at(pos_++);
  return true;
}

bool buffer_iterator::next(const std::uint8_t*& data, std::size_t& len) {
  std::span<const std::byte> m;
  if (!next(m)) return false;
  data = reinterpret_cast<const std::uint8_t*>(m.data());
  len = m.size();
  return true;
}

file_iterator::file_iterator(file& f) : file_(&f), count_(f.message_count()) {}

buffer file_iterator::at(std::size_t i) const {
  return file_->message_bytes(i);
}

bool file_iterator::next(buffer& out) {
  if (pos_ >= count_) return false;
  out = at(pos_++);
  return true;
}

bool file_iterator::next(std::vector<std::uint8_t>& out) {
  buffer b;
  if (!next(b)) return false;
  const auto* p = reinterpret_cast<const std::uint8_t*>(b.data());
  out.assign(p, p + b.size());
  return true;
}

object_iterator::object_iterator(buffer msg, const decode_options& options)
    : msg_(std::move(msg)), options_(options) {
  options_.verify_hash = false;
  count_ = read_message_layout(msg_.bytes()).objects.size();
}

object_iterator::object_iterator(const std::uint8_t* buf, std::size_t len, const decode_options& options)
    : object_iterator(buffer::borrowed(as_bytes_checked(buf, len)), options) {}

message object_iterator::at(std::size_t i) const {
  // Messages from a borrowed buffer own their bytes (they may outlive it).
  if (msg_.kind() == buffer::ownership::borrowed) {
    return decode_object(reinterpret_cast<const std::uint8_t*>(msg_.data()), msg_.size(), i, options_);
  }
  return decode_object(msg_, i, options_);
}

bool object_iterator::next(message& out) {
  if (pos_ >= count_) return false;
  out = at(pos_++);
  return true;
}

}  // namespace tensogram

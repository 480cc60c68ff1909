#include "tensogram/format/preamble.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "tensogram/core/byte_order.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/format/wire.hpp"

namespace tensogram::format {

bool has_start_magic(std::span<const std::byte> bytes) noexcept {
  return bytes.size() >= 8 && std::memcmp(bytes.data(), start_magic.data(), 8) == 0;
}

bool has_end_magic(std::span<const std::byte> bytes) noexcept {
  return bytes.size() >= 8 && std::memcmp(bytes.data(), end_magic.data(), 8) == 0;
}

preamble read_preamble(std::span<const std::byte> bytes) {
  if (bytes.size() < preamble_size) {
    throw framing_error("buffer too short for preamble: " + std::to_string(bytes.size()) + " bytes, need 24");
  }
  if (!has_start_magic(bytes)) {
    throw framing_error("invalid magic bytes: expected \"TENSOGRM\" at offset 0");
  }
  preamble p;
  p.version = load_be16(bytes.data() + 8);
  if (p.version != wire_version) {
    throw framing_error("unsupported message version " + std::to_string(p.version) + " (required = 3)");
  }
  p.flags = load_be16(bytes.data() + 10);
  p.reserved = load_be32(bytes.data() + 12);
  p.total_length = load_be64(bytes.data() + 16);
  return p;
}

void write_preamble(std::span<std::byte, 24> out, const preamble& p) noexcept {
  std::memcpy(out.data(), start_magic.data(), 8);
  store_be16(out.data() + 8, p.version);
  store_be16(out.data() + 10, p.flags);
  store_be32(out.data() + 12, p.reserved);
  store_be64(out.data() + 16, p.total_length);
}

postamble read_postamble(std::span<const std::byte> bytes) {
  if (bytes.size() < postamble_size || !has_end_magic(bytes.subspan(16))) {
    throw framing_error("invalid end magic in postamble");
  }
  return postamble{load_be64(bytes.data()), load_be64(bytes.data() + 8)};
}

void write_postamble(std::span<std::byte, 24> out, const postamble& p) noexcept {
  store_be64(out.data(), p.first_footer_offset);
  store_be64(out.data() + 8, p.total_length);
  std::memcpy(out.data() + 16, end_magic.data(), 8);
}

message_extent read_message_extent(std::span<const std::byte> bytes) {
  message_extent ext;
  ext.head = read_preamble(bytes);
  const std::uint64_t total = ext.head.total_length;
  if (total == 0) {
    // Streaming message: it runs to the end of the buffer.
    if (bytes.size() < min_message_size) {
      ext.message_end = bytes.size();
      ext.frames_end = preamble_size;  // empty frame area (§3.2)
      return ext;
    }
    if (!has_end_magic(bytes.subspan(bytes.size() - 8))) {
      throw framing_error("invalid end magic in postamble (streaming message of " +
                          std::to_string(bytes.size()) + " bytes)");
    }
    ext.message_end = bytes.size();
    ext.frames_end = bytes.size() - postamble_size;
    return ext;
  }
  if (total > bytes.size()) {
    throw framing_error("total_length " + std::to_string(total) + " exceeds buffer size " +
                        std::to_string(bytes.size()));
  }
  if (total < min_message_size) {
    throw framing_error("total_length " + std::to_string(total) +
                        " is smaller than the minimum message size 48");
  }
  const auto end = static_cast<std::size_t>(total);
  const std::string where = " (postamble at offset " + std::to_string(end - postamble_size) + ")";
  if (!has_end_magic(bytes.subspan(end - 8))) throw framing_error("invalid end magic in postamble" + where);
  const postamble post = read_postamble(bytes.subspan(end - postamble_size, postamble_size));
  if (post.total_length != 0 && post.total_length != total) {
    throw framing_error("postamble total_length (" + std::to_string(post.total_length) +
                        ") does not match preamble total_length (" + std::to_string(total) + ")" + where);
  }
  ext.message_end = end;
  ext.frames_end = end - postamble_size;
  return ext;
}

}  // namespace tensogram::format

#include "tensogram/format/data_frame.hpp"

#include <string>

#include "tensogram/cbor/codec.hpp"
#include "tensogram/core/byte_order.hpp"
#include "tensogram/core/error.hpp"

namespace tensogram::format {

data_frame_parts split_data_frame(const frame_view& frame) {
  const std::span<const std::byte> f = frame.bytes;
  const std::size_t p = f.size() - data_footer_size;  // end of body
  const std::uint64_t co = load_be64(f.data() + p);
  if (co < frame_header_size || co > p) {
    throw framing_error("cbor_offset " + std::to_string(co) + " out of valid range [16, " +
                        std::to_string(p) + "] in data object frame at offset " +
                        std::to_string(frame.offset));
  }
  const auto c = static_cast<std::size_t>(co);
  data_frame_parts parts;
  parts.cbor_after_payload = (frame.header.flags & frame_flags::cbor_after_payload) != 0;
  if (parts.cbor_after_payload) {
    try {
      parts.descriptor = cbor::decode(f.subspan(c, p - c));
    } catch (const metadata_error& e) {
      throw metadata_error("failed to parse descriptor CBOR in data object frame at offset " +
                           std::to_string(frame.offset) + ": " + std::string(e.detail()));
    }
    parts.region_offset = frame_header_size;
    parts.payload_region = f.subspan(frame_header_size, c - frame_header_size);
  } else {
    cbor::decoded_item item;
    try {
      item = cbor::decode_prefix(f.subspan(c, p - c));
    } catch (const metadata_error& e) {
      throw metadata_error("failed to parse object descriptor CBOR in data object frame at offset " +
                           std::to_string(frame.offset) + ": " + std::string(e.detail()));
    }
    parts.descriptor = std::move(item.item);
    parts.region_offset = c + item.consumed;
    parts.payload_region = f.subspan(parts.region_offset, p - parts.region_offset);
  }
  return parts;
}

}  // namespace tensogram::format

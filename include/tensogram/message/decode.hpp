// Decoding messages: whole, metadata only, descriptors only, one object,
// element ranges (spec 01 §14, spec 02 §14), plus the scan entry points.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tensogram/core/buffer.hpp"
#include "tensogram/format/scan.hpp"
#include "tensogram/message/descriptor.hpp"
#include "tensogram/message/metadata_view.hpp"
#include "tensogram/message/options.hpp"

namespace tensogram {

/// One decoded data object: its descriptor as stored on the wire and its
/// decoded bytes. When the stored payload already had the requested form
/// (no codec, no masks, byte order as requested) the bytes are a view into
/// the message buffer (`is_view()`), sharing its ownership.
class decoded_object {
 public:
  decoded_object() = default;
  decoded_object(data_object_descriptor descriptor, buffer data, tensogram::byte_order data_order,
                 std::optional<std::uint64_t> hash, bool is_view);

  [[nodiscard]] const data_object_descriptor& descriptor() const noexcept { return descriptor_; }
  [[nodiscard]] const buffer& data_buffer() const noexcept { return data_; }
  [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return data_.bytes(); }
  /// Byte order of `bytes()` (the host's unless decoded with
  /// `native_byte_order = false`).
  [[nodiscard]] tensogram::byte_order data_byte_order() const noexcept { return data_order_; }
  /// True when `bytes()` points into the message rather than a decoded copy.
  [[nodiscard]] bool is_view() const noexcept { return view_; }
  /// True when zfp or sz3 compressed this object's bytes as reinterpreted
  /// float64 (see data_object_descriptor::reinterpreted_as_float64): `bytes()`
  /// are what the reference decoder returns — for zfp 8·N bytes, whatever
  /// the dtype — not the values that were written.
  [[nodiscard]] bool reinterpreted_as_float64() const noexcept {
    return descriptor_.reinterpreted_as_float64();
  }

  // The reference C++ wrapper's accessors.
  [[nodiscard]] std::size_t ndim() const noexcept { return descriptor_.shape.size(); }
  [[nodiscard]] const std::vector<std::uint64_t>& shape() const noexcept { return descriptor_.shape; }
  [[nodiscard]] const std::vector<std::uint64_t>& strides() const noexcept { return descriptor_.strides; }
  [[nodiscard]] std::string dtype_string() const { return std::string(dtype_name(descriptor_.dtype)); }
  [[nodiscard]] const std::string& object_type() const noexcept { return descriptor_.type; }
  /// `"big"`/`"little"`: the descriptor's declared order (absent = host), as
  /// the reference wrapper reports it even when `bytes()` were converted to
  /// the host's order (spec 07 C2.4 `tgm_object_byte_order`); the order of
  /// `bytes()` is `data_byte_order()`.
  [[nodiscard]] std::string byte_order_string() const {
    return std::string(byte_order_name(descriptor_.effective_byte_order()));
  }
  [[nodiscard]] const std::string& encoding() const noexcept { return descriptor_.encoding; }
  [[nodiscard]] const std::string& filter() const noexcept { return descriptor_.filter; }
  [[nodiscard]] const std::string& compression() const noexcept { return descriptor_.compression; }
  [[nodiscard]] bool has_hash() const noexcept { return hash_.has_value(); }
  /// The frame's hash slot when its HASH_PRESENT flag is set.
  [[nodiscard]] std::optional<std::uint64_t> hash_slot() const noexcept { return hash_; }
  /// `"xxh3"`, or "" without a hash.
  [[nodiscard]] std::string hash_type() const { return hash_ ? "xxh3" : ""; }
  /// 16 lowercase hex digits of the frame's hash slot, or "".
  [[nodiscard]] std::string hash_value() const;
  [[nodiscard]] const std::uint8_t* data() const noexcept {
    return reinterpret_cast<const std::uint8_t*>(data_.data());
  }
  [[nodiscard]] std::size_t data_size() const noexcept { return data_.size(); }
  template <typename T>
  [[nodiscard]] const T* data_as() const noexcept {
    return reinterpret_cast<const T*>(data_.data());
  }
  template <typename T>
  [[nodiscard]] std::size_t element_count() const noexcept {
    return data_.size() / sizeof(T);
  }

 private:
  data_object_descriptor descriptor_;
  buffer data_;
  tensogram::byte_order data_order_ = native_byte_order();
  std::optional<std::uint64_t> hash_;
  bool view_ = false;
};

/// A decoded message: metadata plus objects.
class message {
 public:
  message() = default;
  message(tensogram::metadata meta, std::vector<decoded_object> objects)
      : meta_(std::move(meta)), objects_(std::move(objects)) {}

  [[nodiscard]] std::uint64_t version() const noexcept { return 3; }
  [[nodiscard]] std::size_t num_objects() const noexcept { return objects_.size(); }
  /// Throws `object_error` when `i` is out of range.
  [[nodiscard]] const decoded_object& object(std::size_t i) const;
  [[nodiscard]] tensogram::metadata get_metadata() const { return meta_; }
  [[nodiscard]] const global_metadata& global() const noexcept { return meta_.global(); }
  [[nodiscard]] const std::vector<decoded_object>& objects() const noexcept { return objects_; }

  [[nodiscard]] auto begin() const noexcept { return objects_.begin(); }
  [[nodiscard]] auto end() const noexcept { return objects_.end(); }

 private:
  tensogram::metadata meta_;
  std::vector<decoded_object> objects_;
};

// ---- typed, zero-copy entry points -----------------------------------------

/// Decodes the first message of `msg` (spec 01 §14.1). Objects that need no
/// decoding are views into `msg`.
[[nodiscard]] message decode(const buffer& msg, const decode_options& options = {});
/// The NaN/Inf companion masks of one object (spec 02 §9), indexed like
/// `mask_kind_names` (nan, inf+, inf-): the packed MSB-first bitmask of
/// ceil(N/8) bytes for each kind the object records, else nothing.
using object_masks = std::array<std::optional<std::vector<std::byte>>, 3>;
/// The masks of every object of the first message, in object order (what
/// the reference's `decode_with_masks` returns beside the stored payloads).
[[nodiscard]] std::vector<object_masks> decode_object_masks(std::span<const std::byte> msg);
/// Metadata of the first metadata frame, unmodified (spec 01 §14.2).
[[nodiscard]] metadata decode_metadata(std::span<const std::byte> msg);
/// Metadata (as a full decode assembles it) and every descriptor, without
/// decoding payloads.
[[nodiscard]] std::pair<metadata, std::vector<data_object_descriptor>> decode_descriptors(
    std::span<const std::byte> msg);
/// One object by index, located through the index frame when the message
/// has one (O(1) in the number of objects). Throws `object_error` when out
/// of range. The returned message holds that object at index 0 and the
/// message's full metadata.
[[nodiscard]] message decode_object(const buffer& msg, std::size_t index, const decode_options& options = {});
/// Element ranges `(offset, count)` of one object, one buffer per range
/// (spec 02 §8.6); hashes are never verified here.
[[nodiscard]] std::vector<buffer> decode_range(
    const buffer& msg, std::size_t object_index,
    std::span<const std::pair<std::uint64_t, std::uint64_t>> ranges, const decode_options& options = {});
/// Message boundaries in `bytes` (spec 01 §16).
/// Decodes one data-object frame on its own (spec 02 §14 "single-frame
/// decode"): `frame` holds exactly one type-9 frame, e.g. fetched through an
/// index. `object_index` only labels errors (hash errors name the object).
/// Uncompressed native-order payloads are views into `frame`.
[[nodiscard]] decoded_object decode_data_frame(const buffer& frame, std::size_t object_index,
                                               const decode_options& options = {});
/// Range decode (spec 02 §8.6) of one data-object frame.
[[nodiscard]] std::vector<buffer> decode_data_frame_range(
    const buffer& frame, std::size_t object_index,
    std::span<const std::pair<std::uint64_t, std::uint64_t>> ranges, const decode_options& options = {});
/// The descriptor of one data-object frame, without decoding its payload.
[[nodiscard]] data_object_descriptor decode_data_frame_descriptor(const buffer& frame,
                                                                  std::size_t object_index);

/// Where a message's data-object frames lie (offsets from the message start)
/// and the metadata a full decode returns: what random access needs to fetch
/// one object on its own (spec 01 §15).
struct object_frame_extent {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};
struct message_layout {
  global_metadata metadata;
  std::vector<object_frame_extent> objects;
};
/// Layout of a whole message in memory: from its index frame when the index
/// accounts for every frame, else from a full frame walk.
[[nodiscard]] message_layout read_message_layout(std::span<const std::byte> msg);

[[nodiscard]] std::vector<scan_entry> scan(std::span<const std::byte> bytes);
/// Verifies data-object frame digests of the first message (spec 01 §14.3):
/// all objects, or only `object_index`. Throws `missing_hash_error`,
/// `hash_mismatch_error` or `framing_error`.
void verify_hashes(std::span<const std::byte> msg, std::optional<std::size_t> object_index = std::nullopt);

// ---- the reference C++ wrapper's signatures (owning results) ---------------

[[nodiscard]] message decode(const std::uint8_t* buf, std::size_t len, const decode_options& options = {});
[[nodiscard]] metadata decode_metadata(const std::uint8_t* buf, std::size_t len);
[[nodiscard]] message decode_object(const std::uint8_t* buf, std::size_t len, std::size_t index,
                                    const decode_options& options = {});
[[nodiscard]] std::vector<std::vector<std::uint8_t>> decode_range(
    const std::uint8_t* buf, std::size_t len, std::size_t object_index,
    const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges, const decode_options& options = {});
[[nodiscard]] std::vector<std::uint8_t> decode_range_joined(
    const std::uint8_t* buf, std::size_t len, std::size_t object_index,
    const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges, const decode_options& options = {});
[[nodiscard]] std::vector<scan_entry> scan(const std::uint8_t* buf, std::size_t len);
/// Hex digest of `data` (`algo` "xxh3"); `invalid_arg_error` otherwise.
[[nodiscard]] std::string compute_hash(const std::uint8_t* data, std::size_t len,
                                       const std::string& algo = "xxh3");

}  // namespace tensogram

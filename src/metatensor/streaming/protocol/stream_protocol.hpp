// The metatensor streaming protocol over QUIC (spec 06 §10), transport-free:
// QUIC variable-length integers, frames, their JSON payloads, and the
// client's check of a tensor stream (§10.4); the error codes of §10.6 and
// byte ranges, which the client API shares, are in
// <metatensor/stream_types.hpp>. The QUIC connection (ngtcp2) feeds bytes in
// and sends the bytes these functions produce; everything here is pure and
// testable without a network. Not a public header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "metatensor/stream_types.hpp"

namespace metatensor::streaming {

// ---- QUIC variable-length integers (RFC 9000 §16) --------------------------

/// Largest value a varint holds (2^62 − 1).
inline constexpr std::uint64_t max_varint = (std::uint64_t{1} << 62) - 1;

/// Appends the shortest encoding of `v` (1, 2, 4 or 8 bytes); throws
/// std::invalid_argument above max_varint.
void append_varint(std::vector<std::byte>& out, std::uint64_t v);

struct varint_read {
  std::uint64_t value;
  std::size_t length;  // bytes consumed
};
/// Reads a varint at the start of `in`; nullopt when `in` holds only part of
/// it (wait for more bytes).
[[nodiscard]] std::optional<varint_read> read_varint(std::span<const std::byte> in) noexcept;

// ---- frames (§10.3) ----------------------------------------------------------

enum class frame_type : std::uint64_t {
  open = 0x01,
  opened = 0x02,
  header = 0x03,
  get = 0x04,
  response = 0x05,
  data = 0x06,
  priority_update = 0x07,
  error = 0x08,
  goaway = 0x09,
};

[[nodiscard]] std::string_view frame_type_name(frame_type t) noexcept;

struct frame {
  frame_type type;
  std::vector<std::byte> payload;
};

/// type | length | payload.
void append_frame(std::vector<std::byte>& out, frame_type type, std::span<const std::byte> payload);

/// Largest JSON payload a control stream accepts (§10.3).
inline constexpr std::uint64_t max_control_json = std::uint64_t{1} << 20;

/// Splits one stream's bytes into frames as they arrive. An unknown type
/// fails as soon as its varint is complete, an oversized JSON frame as soon
/// as its length is (before its payload is buffered), with MT_FRAME_ERROR.
class frame_reader {
 public:
  /// `max_payload` bounds every frame's payload (HEADER and DATA frames are
  /// checked against what was announced by the caller, see
  /// `expect_payload_limit`).
  explicit frame_reader(std::uint64_t max_payload = max_control_json) : max_payload_(max_payload) {}

  /// Buffers `bytes` (the next bytes of the stream).
  void feed(std::span<const std::byte> bytes);
  /// The next complete frame, or nullopt until more bytes arrive.
  [[nodiscard]] std::optional<frame> next();
  /// Raises the payload limit for the next binary frame (HEADER, DATA):
  /// their size is known from OPENED / the request.
  void expect_payload_limit(std::uint64_t limit) { binary_limit_ = limit; }
  /// Bytes buffered but not yet returned as frames (a stream that ends with
  /// this non-zero ended inside a frame).
  [[nodiscard]] std::size_t pending() const noexcept { return buffer_.size() - start_; }

 private:
  std::vector<std::byte> buffer_;
  std::size_t start_ = 0;
  std::uint64_t max_payload_;
  std::uint64_t binary_limit_ = 0;
};

// ---- JSON payloads (§10.3) ------------------------------------------------------

struct open_payload {
  std::string resource;
  std::vector<std::string> versions{"1"};
};

struct opened_payload {
  std::string version = "1";
  std::uint64_t file_size = 0;
  std::uint64_t header_size = 0;  // 8 + N
  std::optional<std::string> etag;
};

struct get_payload {
  std::string tensor;
  std::optional<byte_range> range;  // absent: the whole tensor
  std::uint8_t urgency = 3;         // 0 (highest) .. 7
  bool incremental = false;
};

struct response_payload {
  std::string tensor;
  byte_range range;
  std::uint64_t offset = 0;  // abs(t) + range.begin
};

struct priority_update_payload {
  std::uint64_t stream = 0;
  std::uint8_t urgency = 3;
  bool incremental = false;
};

struct error_payload {
  std::uint64_t code = 0;
  std::string message;
};

struct goaway_payload {
  std::uint64_t last_stream = 0;
};

/// Each payload as its frame's bytes (type, length and JSON).
[[nodiscard]] std::vector<std::byte> encode(const open_payload& p);
[[nodiscard]] std::vector<std::byte> encode(const opened_payload& p);
[[nodiscard]] std::vector<std::byte> encode(const get_payload& p);
[[nodiscard]] std::vector<std::byte> encode(const response_payload& p);
[[nodiscard]] std::vector<std::byte> encode(const priority_update_payload& p);
[[nodiscard]] std::vector<std::byte> encode(const error_payload& p);
[[nodiscard]] std::vector<std::byte> encode(const goaway_payload& p);

/// Parse a frame's JSON payload: strict UTF-8 JSON object without duplicate
/// keys, unknown members ignored, required members present with the right
/// types and ranges; anything else is MT_FRAME_ERROR naming the member.
[[nodiscard]] open_payload parse_open(std::span<const std::byte> json);
[[nodiscard]] opened_payload parse_opened(std::span<const std::byte> json);
[[nodiscard]] get_payload parse_get(std::span<const std::byte> json);
[[nodiscard]] response_payload parse_response(std::span<const std::byte> json);
[[nodiscard]] priority_update_payload parse_priority_update(std::span<const std::byte> json);
[[nodiscard]] error_payload parse_error(std::span<const std::byte> json);
[[nodiscard]] goaway_payload parse_goaway(std::span<const std::byte> json);

// ---- the client's side of one tensor stream (§10.4) -------------------------------

/// Checks what the server sends on one tensor stream against the request:
/// RESPONSE for the same tensor and range at abs(t) + b, then one DATA frame
/// of exactly e − b bytes, then the end of the stream — or an ERROR frame.
/// Violations are MT_PROTOCOL_ERROR; an ERROR frame from the server is
/// reported as a protocol_error with the server's code.
class tensor_stream_check {
 public:
  /// `tensor_offset` is abs(t), `tensor_size` bytes(t), from the header.
  tensor_stream_check(const get_payload& request, std::uint64_t tensor_offset, std::uint64_t tensor_size);

  /// The range actually requested (the whole tensor when GET had none);
  /// throws MT_BAD_RANGE when the request's range is not 0 <= b <= e <= bytes(t).
  [[nodiscard]] byte_range requested() const noexcept { return range_; }
  /// e − b: what the DATA frame must hold (give it to
  /// frame_reader::expect_payload_limit once RESPONSE has arrived).
  [[nodiscard]] std::uint64_t data_size() const noexcept { return range_.end - range_.begin; }

  /// Feeds the next frame; returns the DATA payload's destination offset
  /// (abs(t) + b) when `f` is the DATA frame.
  std::optional<std::uint64_t> on_frame(const frame& f);
  /// The type and length of the DATA frame, before its payload: a receiver
  /// that streams the payload to its destination (rather than buffering the
  /// frame) calls this instead of `on_frame`, with the same checks; returns
  /// the destination offset abs(t) + b.
  std::uint64_t on_data_header(std::uint64_t length);
  /// The server ended its side: fine only after the DATA frame.
  void on_fin() const;
  [[nodiscard]] bool complete() const noexcept { return state_ == state::data_received; }

 private:
  enum class state { awaiting_response, awaiting_data, data_received };
  std::string tensor_;
  byte_range range_;
  std::uint64_t offset_;
  state state_ = state::awaiting_response;
};

/// A file that the DATA payload goes to with pwrite(2) instead of the
/// memory destination (which is then that file's shared mapping, e.g. the
/// output of `metatensor fetch`): writing through the page cache costs no
/// page fault per 4 KiB page of the mapping (measured 3-10x faster into
/// ext4 and tmpfs files, docs/benchmarks.md).
struct file_target {
  int fd = -1;               ///< none when negative
  std::uint64_t offset = 0;  ///< file offset of the destination's first byte
};

/// Stores `bytes` at `at` bytes into the destination: into `memory`, or into
/// the file at `file.offset + at` when `file.fd >= 0`.  Throws
/// `tensogram::io_error` when the file cannot be written (e.g. ENOSPC).
void store_bytes(std::span<std::byte> memory, const file_target& file, std::uint64_t at,
                 std::span<const std::byte> bytes);

/// The client's receiving side of one tensor stream (§10.4): splits the
/// stream into frames without buffering DATA.  RESPONSE and ERROR (JSON, at
/// most 1 MiB) go through a `tensor_stream_check`; the DATA payload is
/// checked by its announced length first and then copied into `destination`
/// as it arrives, so a tensor is written once, straight to where it lives.
class tensor_stream_receiver {
 public:
  /// `destination` must hold exactly e − b bytes (std::invalid_argument
  /// otherwise); MT_BAD_RANGE as for `tensor_stream_check`.
  tensor_stream_receiver(const get_payload& request, std::uint64_t tensor_offset, std::uint64_t tensor_size,
                         std::span<std::byte> destination, file_target file = {});
  /// The next bytes of the stream.  Throws `protocol_error`: the server's
  /// ERROR (then `refused()` is true), or a violation of §10.3/§10.4.
  void feed(std::span<const std::byte> bytes);
  /// The server ended the stream: fine only after the whole DATA payload.
  void finish() const;
  /// DATA payload bytes written to the destination so far.
  [[nodiscard]] std::uint64_t data_received() const noexcept { return data_received_; }
  /// True when the stream carried the server's ERROR frame.
  [[nodiscard]] bool refused() const noexcept { return refused_; }

 private:
  void on_json_frame(frame_type type, std::vector<std::byte> payload);

  tensor_stream_check check_;
  std::span<std::byte> destination_;
  file_target file_;
  std::vector<std::byte> head_;  // partial type and length varints
  std::optional<frame_type> json_type_;
  std::vector<std::byte> json_;
  std::uint64_t length_ = 0;  // payload size of the current frame
  bool in_data_ = false;
  std::uint64_t data_received_ = 0;
  bool refused_ = false;
};

}  // namespace metatensor::streaming

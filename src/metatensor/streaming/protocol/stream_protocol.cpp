// The metatensor streaming protocol, transport-free (spec 06 §10.3–§10.6).
#include "stream_protocol.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

#include <unistd.h>
#include <cerrno>

#include "src/metatensor/strict_json.hpp"
#include "tensogram/core/error.hpp"

namespace metatensor::streaming {

namespace {

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(v));
  return buf;
}

constexpr std::array<const char*, 10> errc_names = {
    "MT_NO_ERROR",  "MT_PROTOCOL_ERROR",   "MT_INTERNAL_ERROR", "MT_CANCELLED",   "MT_NOT_FOUND",
    "MT_BAD_RANGE", "MT_VERSION_MISMATCH", "MT_LIMIT_EXCEEDED", "MT_FRAME_ERROR", "MT_INVALID_FILE"};

[[noreturn]] void frame_fail(const std::string& what) {
  throw protocol_error(stream_errc::frame_error, what);
}

bool is_json_frame(frame_type t) noexcept {
  return t != frame_type::header && t != frame_type::data;
}

std::vector<std::byte> frame_of(frame_type type, const nlohmann::json& j) {
  const std::string text = j.dump();
  std::vector<std::byte> out;
  append_frame(out, type, std::as_bytes(std::span(text.data(), text.size())));
  return out;
}

// The payload as a JSON object (§10.3: UTF-8, no duplicate keys).
nlohmann::json object_of(std::span<const std::byte> bytes, const char* frame) {
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  nlohmann::json j;
  try {
    j = parse_strict_json(text, {errc::mt_schema_json, errc::mt_schema_json, frame});
  } catch (const metatensor::error& e) {
    frame_fail(std::string(frame) + " payload: " + std::string(e.detail()));
  }
  if (!j.is_object()) frame_fail(std::string(frame) + " payload is not a JSON object");
  return j;
}

const nlohmann::json* member(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

std::string text_member(const nlohmann::json& j, const char* frame, const char* key) {
  const nlohmann::json* m = member(j, key);
  if (m == nullptr || !m->is_string()) frame_fail(std::string(frame) + ": \"" + key + "\" must be a string");
  return m->get<std::string>();
}

std::uint64_t uint_member(const nlohmann::json& j, const char* frame, const char* key) {
  const nlohmann::json* m = member(j, key);
  if (m == nullptr || !m->is_number_unsigned()) {
    frame_fail(std::string(frame) + ": \"" + key + "\" must be a non-negative integer");
  }
  return m->get<std::uint64_t>();
}

std::uint8_t urgency_member(const nlohmann::json& j, const char* frame) {
  const nlohmann::json* m = member(j, "urgency");
  if (m == nullptr) return 3;
  if (!m->is_number_unsigned() || m->get<std::uint64_t>() > 7) {
    frame_fail(std::string(frame) + ": \"urgency\" must be an integer 0..7");
  }
  return static_cast<std::uint8_t>(m->get<std::uint64_t>());
}

bool incremental_member(const nlohmann::json& j, const char* frame) {
  const nlohmann::json* m = member(j, "incremental");
  if (m == nullptr) return false;
  if (!m->is_boolean()) frame_fail(std::string(frame) + ": \"incremental\" must be a boolean");
  return m->get<bool>();
}

byte_range range_member(const nlohmann::json& m, const char* frame) {
  if (!m.is_array() || m.size() != 2 || !m[0].is_number_unsigned() || !m[1].is_number_unsigned()) {
    frame_fail(std::string(frame) + ": \"range\" must be [begin, end] of non-negative integers");
  }
  const byte_range r{m[0].get<std::uint64_t>(), m[1].get<std::uint64_t>()};
  if (r.begin > r.end) frame_fail(std::string(frame) + ": \"range\" begins after it ends");
  return r;
}

}  // namespace

std::string stream_errc_name(std::uint64_t code) {
  if (code < errc_names.size()) return errc_names[code];
  char buf[48];
  std::snprintf(buf, sizeof buf, "MT_UNKNOWN(0x%llx)", static_cast<unsigned long long>(code));
  return buf;
}

protocol_error::protocol_error(stream_errc code, std::string_view detail)
    : tensogram::framing_error(stream_errc_name(static_cast<std::uint64_t>(code)) + ": " +
                               std::string(detail)),
      code_(code) {}

// ---- varints ---------------------------------------------------------------

void append_varint(std::vector<std::byte>& out, std::uint64_t v) {
  if (v > max_varint) throw std::invalid_argument("varint value above 2^62 - 1");
  // The two high bits of the first byte give the length (RFC 9000 §16).
  const int length = v < (1u << 6) ? 1 : v < (1u << 14) ? 2 : v < (1u << 30) ? 4 : 8;
  const std::uint64_t prefix = length == 1 ? 0 : length == 2 ? 1 : length == 4 ? 2 : 3;
  const std::uint64_t word = v | (prefix << (8 * length - 2));
  for (int i = length - 1; i >= 0; --i) out.push_back(static_cast<std::byte>((word >> (8 * i)) & 0xFF));
}

std::optional<varint_read> read_varint(std::span<const std::byte> in) noexcept {
  if (in.empty()) return std::nullopt;
  const auto first = std::to_integer<std::uint8_t>(in[0]);
  const std::size_t length = std::size_t{1} << (first >> 6);
  if (in.size() < length) return std::nullopt;
  std::uint64_t v = first & 0x3F;
  for (std::size_t i = 1; i < length; ++i) v = (v << 8) | std::to_integer<std::uint8_t>(in[i]);
  return varint_read{v, length};
}

// ---- frames --------------------------------------------------------------------

std::string_view frame_type_name(frame_type t) noexcept {
  switch (t) {
    case frame_type::open: return "OPEN";
    case frame_type::opened: return "OPENED";
    case frame_type::header: return "HEADER";
    case frame_type::get: return "GET";
    case frame_type::response: return "RESPONSE";
    case frame_type::data: return "DATA";
    case frame_type::priority_update: return "PRIORITY_UPDATE";
    case frame_type::error: return "ERROR";
    case frame_type::goaway: return "GOAWAY";
  }
  return "UNKNOWN";
}

void append_frame(std::vector<std::byte>& out, frame_type type, std::span<const std::byte> payload) {
  append_varint(out, static_cast<std::uint64_t>(type));
  append_varint(out, payload.size());
  out.insert(out.end(), payload.begin(), payload.end());
}

void frame_reader::feed(std::span<const std::byte> bytes) {
  // Drop what earlier frames consumed before growing the buffer.
  if (start_ > 0 && start_ >= buffer_.size() / 2) {
    buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(start_));
    start_ = 0;
  }
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
}

std::optional<frame> frame_reader::next() {
  const std::span<const std::byte> rest = std::span(buffer_).subspan(start_);
  const auto type = read_varint(rest);
  if (!type) return std::nullopt;
  if (type->value < 0x01 || type->value > 0x09) {
    frame_fail("unknown frame type 0x" + hex(type->value));
  }
  const auto t = static_cast<frame_type>(type->value);
  const auto length = read_varint(rest.subspan(type->length));
  if (!length) return std::nullopt;
  const std::uint64_t limit = is_json_frame(t) ? max_payload_ : binary_limit_;
  if (length->value > limit) {
    frame_fail(std::string(frame_type_name(t)) + " frame of " + std::to_string(length->value) +
               " bytes exceeds the limit of " + std::to_string(limit));
  }
  const std::size_t head = type->length + length->length;
  if (rest.size() - head < length->value) return std::nullopt;
  frame f{t, std::vector<std::byte>(rest.begin() + static_cast<std::ptrdiff_t>(head),
                                    rest.begin() + static_cast<std::ptrdiff_t>(head + length->value))};
  start_ += head + static_cast<std::size_t>(length->value);
  if (!is_json_frame(t)) binary_limit_ = 0;  // each announced size serves one frame
  return f;
}

// ---- JSON payloads ---------------------------------------------------------------

std::vector<std::byte> encode(const open_payload& p) {
  return frame_of(frame_type::open, {{"resource", p.resource}, {"versions", p.versions}});
}

std::vector<std::byte> encode(const opened_payload& p) {
  nlohmann::json j = {{"version", p.version}, {"file_size", p.file_size}, {"header_size", p.header_size}};
  if (p.etag) j["etag"] = *p.etag;
  return frame_of(frame_type::opened, j);
}

std::vector<std::byte> encode(const get_payload& p) {
  nlohmann::json j = {{"tensor", p.tensor}, {"urgency", p.urgency}, {"incremental", p.incremental}};
  if (p.range) j["range"] = {p.range->begin, p.range->end};
  return frame_of(frame_type::get, j);
}

std::vector<std::byte> encode(const response_payload& p) {
  return frame_of(frame_type::response,
                  {{"tensor", p.tensor}, {"range", {p.range.begin, p.range.end}}, {"offset", p.offset}});
}

std::vector<std::byte> encode(const priority_update_payload& p) {
  return frame_of(frame_type::priority_update,
                  {{"stream", p.stream}, {"urgency", p.urgency}, {"incremental", p.incremental}});
}

std::vector<std::byte> encode(const error_payload& p) {
  return frame_of(frame_type::error, {{"code", p.code}, {"message", p.message}});
}

std::vector<std::byte> encode(const goaway_payload& p) {
  return frame_of(frame_type::goaway, {{"last_stream", p.last_stream}});
}

open_payload parse_open(std::span<const std::byte> json) {
  const nlohmann::json j = object_of(json, "OPEN");
  open_payload p;
  p.resource = text_member(j, "OPEN", "resource");
  const nlohmann::json* v = member(j, "versions");
  if (v == nullptr || !v->is_array() || v->empty() ||
      !std::all_of(v->begin(), v->end(), [](const nlohmann::json& e) { return e.is_string(); })) {
    frame_fail("OPEN: \"versions\" must be a non-empty array of strings");
  }
  p.versions = v->get<std::vector<std::string>>();
  return p;
}

opened_payload parse_opened(std::span<const std::byte> json) {
  const nlohmann::json j = object_of(json, "OPENED");
  opened_payload p;
  p.version = text_member(j, "OPENED", "version");
  p.file_size = uint_member(j, "OPENED", "file_size");
  p.header_size = uint_member(j, "OPENED", "header_size");
  if (p.header_size < 8 || p.header_size > p.file_size) {
    frame_fail("OPENED: header_size " + std::to_string(p.header_size) + " is not within 8.." +
               std::to_string(p.file_size) + " (file_size)");
  }
  if (member(j, "etag") != nullptr) p.etag = text_member(j, "OPENED", "etag");
  return p;
}

get_payload parse_get(std::span<const std::byte> json) {
  const nlohmann::json j = object_of(json, "GET");
  get_payload p;
  p.tensor = text_member(j, "GET", "tensor");
  if (const nlohmann::json* r = member(j, "range")) p.range = range_member(*r, "GET");
  p.urgency = urgency_member(j, "GET");
  p.incremental = incremental_member(j, "GET");
  return p;
}

response_payload parse_response(std::span<const std::byte> json) {
  const nlohmann::json j = object_of(json, "RESPONSE");
  response_payload p;
  p.tensor = text_member(j, "RESPONSE", "tensor");
  const nlohmann::json* r = member(j, "range");
  if (r == nullptr) frame_fail("RESPONSE: \"range\" is missing");
  p.range = range_member(*r, "RESPONSE");
  p.offset = uint_member(j, "RESPONSE", "offset");
  return p;
}

priority_update_payload parse_priority_update(std::span<const std::byte> json) {
  const nlohmann::json j = object_of(json, "PRIORITY_UPDATE");
  priority_update_payload p;
  p.stream = uint_member(j, "PRIORITY_UPDATE", "stream");
  p.urgency = urgency_member(j, "PRIORITY_UPDATE");
  p.incremental = incremental_member(j, "PRIORITY_UPDATE");
  return p;
}

error_payload parse_error(std::span<const std::byte> json) {
  const nlohmann::json j = object_of(json, "ERROR");
  return {uint_member(j, "ERROR", "code"), text_member(j, "ERROR", "message")};
}

goaway_payload parse_goaway(std::span<const std::byte> json) {
  const nlohmann::json j = object_of(json, "GOAWAY");
  return {uint_member(j, "GOAWAY", "last_stream")};
}

// ---- the client's side of a tensor stream ---------------------------------------------

tensor_stream_check::tensor_stream_check(const get_payload& request, std::uint64_t tensor_offset,
                                         std::uint64_t tensor_size)
    : tensor_(request.tensor), range_(request.range.value_or(byte_range{0, tensor_size})) {
  if (range_.begin > range_.end || range_.end > tensor_size) {
    throw protocol_error(stream_errc::bad_range, "tensor \"" + tensor_ + "\": range [" +
                                                     std::to_string(range_.begin) + ", " +
                                                     std::to_string(range_.end) + ") is not within its " +
                                                     std::to_string(tensor_size) + " bytes");
  }
  if (tensor_offset > std::numeric_limits<std::uint64_t>::max() - range_.end) {
    throw protocol_error(stream_errc::bad_range, "tensor \"" + tensor_ + "\": offset overflows");
  }
  offset_ = tensor_offset + range_.begin;
}

std::optional<std::uint64_t> tensor_stream_check::on_frame(const frame& f) {
  const std::string where = "tensor stream for \"" + tensor_ + "\": ";
  if (f.type == frame_type::error) {
    const error_payload e = parse_error(f.payload);
    const auto code = stream_errc_from(e.code);
    throw protocol_error(code, where + "server error " + stream_errc_name(e.code) + ": " + e.message);
  }
  switch (state_) {
    case state::awaiting_response: {
      if (f.type != frame_type::response) {
        throw protocol_error(stream_errc::protocol_error,
                             where + std::string(frame_type_name(f.type)) + " before RESPONSE");
      }
      const response_payload r = parse_response(f.payload);
      if (r.tensor != tensor_ || r.range != range_ || r.offset != offset_) {
        throw protocol_error(stream_errc::protocol_error,
                             where + "RESPONSE for \"" + r.tensor + "\" [" + std::to_string(r.range.begin) +
                                 ", " + std::to_string(r.range.end) + ") at " + std::to_string(r.offset) +
                                 " does not match the request [" + std::to_string(range_.begin) + ", " +
                                 std::to_string(range_.end) + ") at " + std::to_string(offset_));
      }
      state_ = state::awaiting_data;
      return std::nullopt;
    }
    case state::awaiting_data: {
      if (f.type != frame_type::data) {
        throw protocol_error(stream_errc::protocol_error,
                             where + std::string(frame_type_name(f.type)) + " where DATA was expected");
      }
      return on_data_header(f.payload.size());
    }
    case state::data_received:
      throw protocol_error(stream_errc::protocol_error,
                           where + std::string(frame_type_name(f.type)) + " after DATA");
  }
  return std::nullopt;
}

std::uint64_t tensor_stream_check::on_data_header(std::uint64_t length) {
  const std::string where = "tensor stream for \"" + tensor_ + "\": ";
  if (state_ != state::awaiting_data) {
    throw protocol_error(
        stream_errc::protocol_error,
        where + (state_ == state::awaiting_response ? "DATA before RESPONSE" : "DATA after DATA"));
  }
  if (length != range_.end - range_.begin) {
    throw protocol_error(stream_errc::protocol_error,
                         where + "DATA of " + std::to_string(length) + " bytes, " +
                             std::to_string(range_.end - range_.begin) + " requested");
  }
  state_ = state::data_received;
  return offset_;
}

void tensor_stream_check::on_fin() const {
  if (state_ != state::data_received) {
    throw protocol_error(stream_errc::protocol_error,
                         "tensor stream for \"" + tensor_ + "\" ended before " +
                             (state_ == state::awaiting_response ? "RESPONSE" : "its DATA"));
  }
}

// ---- tensor_stream_receiver ----------------------------------------------------------

void store_bytes(std::span<std::byte> memory, const file_target& file, std::uint64_t at,
                 std::span<const std::byte> bytes) {
  if (file.fd < 0) {
    std::memcpy(memory.data() + at, bytes.data(), bytes.size());
    return;
  }
  std::uint64_t pos = file.offset + at;
  while (!bytes.empty()) {
    const ssize_t n = ::pwrite(file.fd, bytes.data(), bytes.size(), static_cast<off_t>(pos));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw tensogram::io_error("cannot write the received bytes at offset " + std::to_string(pos) + ": " +
                                std::strerror(n < 0 ? errno : EIO));
    }
    pos += static_cast<std::uint64_t>(n);
    bytes = bytes.subspan(static_cast<std::size_t>(n));
  }
}

tensor_stream_receiver::tensor_stream_receiver(const get_payload& request, std::uint64_t tensor_offset,
                                               std::uint64_t tensor_size, std::span<std::byte> destination,
                                               file_target file)
    : check_(request, tensor_offset, tensor_size), destination_(destination), file_(file) {
  if (destination.size() != check_.data_size()) {
    throw std::invalid_argument("tensor_stream_receiver: destination of " +
                                std::to_string(destination.size()) + " bytes for a range of " +
                                std::to_string(check_.data_size()));
  }
}

void tensor_stream_receiver::on_json_frame(frame_type type, std::vector<std::byte> payload) {
  refused_ = type == frame_type::error;
  (void)check_.on_frame(frame{type, std::move(payload)});
}

void tensor_stream_receiver::feed(std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    if (in_data_) {
      const auto take =
          static_cast<std::size_t>(std::min<std::uint64_t>(bytes.size(), length_ - data_received_));
      store_bytes(destination_, file_, data_received_, bytes.first(take));
      data_received_ += take;
      bytes = bytes.subspan(take);
      if (data_received_ == length_) in_data_ = false;
      continue;
    }
    if (json_type_) {
      const auto take =
          static_cast<std::size_t>(std::min<std::uint64_t>(bytes.size(), length_ - json_.size()));
      json_.insert(json_.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(take));
      bytes = bytes.subspan(take);
      if (json_.size() == length_) {
        const frame_type t = *json_type_;
        json_type_.reset();
        on_json_frame(t, std::exchange(json_, {}));
      }
      continue;
    }
    // A frame head: type and length varints, 16 bytes at most.
    const std::size_t had = head_.size();
    const std::size_t take = std::min<std::size_t>(bytes.size(), 16 - had);
    head_.insert(head_.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(take));
    const auto type = read_varint(head_);
    const auto length =
        type ? read_varint(std::span<const std::byte>(head_).subspan(type->length)) : std::nullopt;
    if (!length) {
      bytes = bytes.subspan(take);
      continue;
    }
    // What `take` copied beyond the head belongs to the payload.
    bytes = bytes.subspan(type->length + length->length - had);
    head_.clear();
    if (type->value == static_cast<std::uint64_t>(frame_type::data)) {
      (void)check_.on_data_header(length->value);  // exactly e − b, after RESPONSE
      length_ = length->value;
      in_data_ = length_ > 0;
      continue;
    }
    if (type->value != static_cast<std::uint64_t>(frame_type::response) &&
        type->value != static_cast<std::uint64_t>(frame_type::error)) {
      const bool known = type->value >= 0x01 && type->value <= 0x09;
      throw protocol_error(
          known ? stream_errc::protocol_error : stream_errc::frame_error,
          "tensor stream: frame type 0x" + hex(type->value) + " is not RESPONSE, DATA or ERROR");
    }
    if (length->value > max_control_json) {
      throw protocol_error(stream_errc::frame_error,
                           "tensor stream: a JSON frame of " + std::to_string(length->value) + " bytes");
    }
    length_ = length->value;
    if (length_ == 0) {
      on_json_frame(static_cast<frame_type>(type->value), {});
    } else {
      json_type_ = static_cast<frame_type>(type->value);
    }
  }
}

void tensor_stream_receiver::finish() const {
  if (in_data_ || json_type_ || !head_.empty()) {
    throw protocol_error(
        stream_errc::protocol_error,
        "tensor stream ended inside a frame" + (in_data_ ? " (DATA " + std::to_string(data_received_) +
                                                               " of " + std::to_string(length_) + " bytes)"
                                                         : std::string()));
  }
  check_.on_fin();
}

}  // namespace metatensor::streaming

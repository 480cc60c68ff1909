// What the metatensor streaming client API shares with the wire protocol
// (spec 06 §10.3, §10.6): byte ranges of a tensor, the application error
// codes, and the exception that carries one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tensogram/core/error.hpp"

namespace metatensor::streaming {

/// Bytes [begin, end) of a tensor, relative to its first byte (§10.3 GET).
struct byte_range {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  bool operator==(const byte_range&) const = default;
};

/// Application error codes (§10.6), used in ERROR frames and as QUIC
/// application error codes.
enum class stream_errc : std::uint64_t {
  no_error = 0x0,
  protocol_error = 0x1,
  internal_error = 0x2,
  cancelled = 0x3,
  not_found = 0x4,
  bad_range = 0x5,
  version_mismatch = 0x6,
  limit_exceeded = 0x7,
  frame_error = 0x8,
  invalid_file = 0x9,
};

/// A code received from the peer (ERROR frame, RESET_STREAM, CONNECTION_CLOSE)
/// as a `stream_errc`; values outside §10.6 become MT_PROTOCOL_ERROR.
[[nodiscard]] constexpr stream_errc stream_errc_from(std::uint64_t code) noexcept {
  return code <= static_cast<std::uint64_t>(stream_errc::invalid_file) ? static_cast<stream_errc>(code)
                                                                       : stream_errc::protocol_error;
}

/// "MT_PROTOCOL_ERROR" etc.; "MT_UNKNOWN(0x…)" for other values.
[[nodiscard]] std::string stream_errc_name(std::uint64_t code);

/// A violation of §10 by the peer (or a refusal it sent): carries the code
/// to close the stream or connection with. `what()` reads
/// "framing error: MT_FRAME_ERROR: ...".
class protocol_error : public tensogram::framing_error {
 public:
  protocol_error(stream_errc code, std::string_view detail);
  [[nodiscard]] stream_errc code() const noexcept { return code_; }

 private:
  stream_errc code_;
};

}  // namespace metatensor::streaming

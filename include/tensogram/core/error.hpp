// The single error hierarchy of the library (spec 02 §16).
//
// Every failure the library reports is a `tensogram::error`. The categories
// mirror the reference implementation so that users can catch the same
// exception types as with the reference C++ wrapper; `what()` carries the
// reference's display prefix ("framing error: ...") followed by a message
// that says what went wrong and where.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "tensogram/core/tgm_error.h"

namespace tensogram {

/// Root of all exceptions thrown by the library.
class error : public std::runtime_error {
 public:
  error(tgm_error code, const std::string& what_text) : std::runtime_error(what_text), code_(code) {}
  /// The C API code of this error's category.
  [[nodiscard]] tgm_error code() const noexcept { return code_; }

 private:
  tgm_error code_;
};

/// Malformed bytes on the wire: magic, lengths, frame layout, ordering.
class framing_error : public error {
 public:
  explicit framing_error(std::string_view msg)
      : error(TGM_ERROR_FRAMING, "framing error: " + std::string(msg)) {}
};

/// CBOR bodies that do not parse or have the wrong shape; bad parameters.
class metadata_error : public error {
 public:
  explicit metadata_error(std::string_view msg)
      : error(TGM_ERROR_METADATA, "metadata error: " + std::string(msg)) {}
};

/// Pipeline failures: unknown codecs, non-finite input, size mismatches.
class encoding_error : public error {
 public:
  explicit encoding_error(std::string_view msg)
      : error(TGM_ERROR_ENCODING, "encoding error: " + std::string(msg)) {}
};

/// Only used for range decode of szip without block offsets (spec 02 §16.2).
class compression_error : public error {
 public:
  explicit compression_error(std::string_view msg)
      : error(TGM_ERROR_COMPRESSION, "compression error: " + std::string(msg)) {}
};

/// Object index out of range.
class object_error : public error {
 public:
  explicit object_error(std::string_view msg)
      : error(TGM_ERROR_OBJECT, "object error: " + std::string(msg)) {}
};

/// File system failures; the message starts with the path involved.
class io_error : public error {
 public:
  explicit io_error(std::string_view msg) : error(TGM_ERROR_IO, "io error: " + std::string(msg)) {}
};

/// Base of the two hash verification failures.
class integrity_error : public error {
 public:
  using error::error;
};

/// A data-object frame's stored xxh3 digest differs from its body's digest.
class hash_mismatch_error : public integrity_error {
 public:
  hash_mismatch_error(std::optional<std::uint64_t> object_index, std::uint64_t expected,
                      std::uint64_t actual);
  [[nodiscard]] std::optional<std::uint64_t> object_index() const noexcept { return object_; }
  [[nodiscard]] std::uint64_t expected() const noexcept { return expected_; }
  [[nodiscard]] std::uint64_t actual() const noexcept { return actual_; }

 private:
  std::optional<std::uint64_t> object_;
  std::uint64_t expected_;
  std::uint64_t actual_;
};

/// Hash verification was requested but the frame carries no digest.
class missing_hash_error : public integrity_error {
 public:
  explicit missing_hash_error(std::uint64_t object_index);
  [[nodiscard]] std::uint64_t object_index() const noexcept { return object_; }

 private:
  std::uint64_t object_;
};

/// A caller passed an argument the API cannot accept (C API code 8).
class invalid_arg_error : public error {
 public:
  explicit invalid_arg_error(std::string_view msg)
      : error(TGM_ERROR_INVALID_ARG, "invalid argument: " + std::string(msg)) {}
};

/// Failures of remote (HTTP) access.
class remote_error : public error {
 public:
  explicit remote_error(std::string_view msg)
      : error(TGM_ERROR_REMOTE, "remote error: " + std::string(msg)) {}
};

/// Text of a code as the reference's `tgm_error_string` prints it.
[[nodiscard]] std::string_view error_code_text(tgm_error code) noexcept;

}  // namespace tensogram

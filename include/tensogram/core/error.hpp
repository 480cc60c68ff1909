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
  /// `prefix` is the category's display prefix ("framing error: "), `detail`
  /// the message proper.
  error(tgm_error code, std::string_view prefix, std::string_view detail)
      : std::runtime_error(std::string(prefix) + std::string(detail)),
        code_(code),
        prefix_size_(prefix.size()) {}
  /// The C API code of this error's category.
  [[nodiscard]] tgm_error code() const noexcept { return code_; }
  /// The message without the category prefix, for wrapping in context.
  [[nodiscard]] std::string_view detail() const noexcept {
    return std::string_view(what()).substr(prefix_size_);
  }

 private:
  tgm_error code_;
  std::size_t prefix_size_;
};

/// Malformed bytes on the wire: magic, lengths, frame layout, ordering.
class framing_error : public error {
 public:
  explicit framing_error(std::string_view msg) : error(TGM_ERROR_FRAMING, "framing error: ", msg) {}
};

/// CBOR bodies that do not parse or have the wrong shape; bad parameters.
class metadata_error : public error {
 public:
  explicit metadata_error(std::string_view msg) : error(TGM_ERROR_METADATA, "metadata error: ", msg) {}
};

/// Pipeline failures: unknown codecs, non-finite input, size mismatches.
class encoding_error : public error {
 public:
  explicit encoding_error(std::string_view msg) : error(TGM_ERROR_ENCODING, "encoding error: ", msg) {}
};

/// Only used for range decode of szip without block offsets (spec 02 §16.2).
class compression_error : public error {
 public:
  explicit compression_error(std::string_view msg)
      : error(TGM_ERROR_COMPRESSION, "compression error: ", msg) {}
};

/// Object index out of range.
class object_error : public error {
 public:
  explicit object_error(std::string_view msg) : error(TGM_ERROR_OBJECT, "object error: ", msg) {}
};

/// File system failures; the message starts with the path involved.
class io_error : public error {
 public:
  explicit io_error(std::string_view msg) : error(TGM_ERROR_IO, "io error: ", msg) {}
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
      : error(TGM_ERROR_INVALID_ARG, "invalid argument: ", msg) {}
};

/// Failures of remote (HTTP) access.
class remote_error : public error {
 public:
  explicit remote_error(std::string_view msg) : error(TGM_ERROR_REMOTE, "remote error: ", msg) {}
};

/// An asynchronous operation did not complete before its deadline.
class timeout_error : public error {
 public:
  explicit timeout_error(std::string_view msg) : error(TGM_ERROR_TIMEOUT, "timeout: ", msg) {}
};

/// An asynchronous operation was cancelled through its cancellation token.
class cancelled_error : public error {
 public:
  explicit cancelled_error(std::string_view msg) : error(TGM_ERROR_CANCELLED, "cancelled: ", msg) {}
};

/// Text of a code as the reference's `tgm_error_string` prints it.
[[nodiscard]] std::string_view error_code_text(tgm_error code) noexcept;

}  // namespace tensogram

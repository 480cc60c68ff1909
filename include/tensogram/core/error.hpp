// The single error hierarchy of the library (spec 02 §16).
//
// Every failure the library reports is a `tensogram::error`. The categories
// mirror the reference implementation so that users can catch the same
// exception types as with the reference C++ wrapper; `what()` carries the
// reference's display prefix ("framing error: ...") followed by a message
// that says what went wrong and where.
//
// Every class also has the reference wrapper's constructor
// `X(tgm_error code, const std::string& msg)` (spec 07 D2.2): `what()` is
// `msg` verbatim (no prefix added) and `code()` the given code, as when the
// wrapper rethrows an error text it received from the C layer.
#pragma once

#include <cstdint>
#include <exception>
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
  /// The reference wrapper's form: `what()` is `msg` as given.
  error(tgm_error code, const std::string& msg) : std::runtime_error(msg), code_(code), prefix_size_(0) {}
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
  framing_error(tgm_error code, const std::string& msg) : error(code, msg) {}
};

/// CBOR bodies that do not parse or have the wrong shape; bad parameters.
class metadata_error : public error {
 public:
  explicit metadata_error(std::string_view msg) : error(TGM_ERROR_METADATA, "metadata error: ", msg) {}
  metadata_error(tgm_error code, const std::string& msg) : error(code, msg) {}
};

/// Pipeline failures: unknown codecs, non-finite input, size mismatches.
class encoding_error : public error {
 public:
  explicit encoding_error(std::string_view msg) : error(TGM_ERROR_ENCODING, "encoding error: ", msg) {}
  encoding_error(tgm_error code, const std::string& msg) : error(code, msg) {}
};

/// Only used for range decode of szip without block offsets (spec 02 §16.2).
class compression_error : public error {
 public:
  explicit compression_error(std::string_view msg)
      : error(TGM_ERROR_COMPRESSION, "compression error: ", msg) {}
  compression_error(tgm_error code, const std::string& msg) : error(code, msg) {}
};

/// Object index out of range.
class object_error : public error {
 public:
  explicit object_error(std::string_view msg) : error(TGM_ERROR_OBJECT, "object error: ", msg) {}
  object_error(tgm_error code, const std::string& msg) : error(code, msg) {}
};

/// File system failures; the message starts with the path involved.
class io_error : public error {
 public:
  explicit io_error(std::string_view msg) : error(TGM_ERROR_IO, "io error: ", msg) {}
  io_error(tgm_error code, const std::string& msg) : error(code, msg) {}
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
  /// No object index and zero digests: the text is all there is.
  hash_mismatch_error(tgm_error code, const std::string& msg)
      : integrity_error(code, msg), expected_(0), actual_(0) {}
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
  /// Object index 0: the text is all there is.
  missing_hash_error(tgm_error code, const std::string& msg) : integrity_error(code, msg), object_(0) {}
  [[nodiscard]] std::uint64_t object_index() const noexcept { return object_; }

 private:
  std::uint64_t object_;
};

/// A caller passed an argument the API cannot accept (C API code 8).
class invalid_arg_error : public error {
 public:
  explicit invalid_arg_error(std::string_view msg)
      : error(TGM_ERROR_INVALID_ARG, "invalid argument: ", msg) {}
  invalid_arg_error(tgm_error code, const std::string& msg) : error(code, msg) {}
};

/// Failures of remote (HTTP) access.
class remote_error : public error {
 public:
  explicit remote_error(std::string_view msg) : error(TGM_ERROR_REMOTE, "remote error: ", msg) {}
  remote_error(tgm_error code, const std::string& msg) : error(code, msg) {}
};

/// An asynchronous operation did not complete before its deadline.
class timeout_error : public error {
 public:
  explicit timeout_error(std::string_view msg) : error(TGM_ERROR_TIMEOUT, "timeout: ", msg) {}
  timeout_error(tgm_error code, const std::string& msg) : error(code, msg) {}
};

/// An asynchronous operation was cancelled through its cancellation token.
class cancelled_error : public error {
 public:
  explicit cancelled_error(std::string_view msg) : error(TGM_ERROR_CANCELLED, "cancelled: ", msg) {}
  cancelled_error(tgm_error code, const std::string& msg) : error(code, msg) {}
};

/// The exception the reference wrapper throws for a C error code and text
/// (spec 07 D2.2): FRAMING → framing_error, ..., MISSING_HASH →
/// missing_hash_error; END_OF_ITER and unknown codes → plain `error`. Each
/// is built with `(code, msg)`, so `what()` is `msg`.
[[nodiscard]] std::exception_ptr make_error(tgm_error code, const std::string& msg);

/// Text of a code as the reference's `tgm_error_string` prints it.
[[nodiscard]] std::string_view error_code_text(tgm_error code) noexcept;

}  // namespace tensogram

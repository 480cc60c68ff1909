// The streaming encoder (spec 01 §18, spec 02 §3.4, §10; spec 04 Part D
// `streaming_encoder`): writes one message object by object to a file, a
// std::ostream or a POSIX file descriptor, holding one object in memory at a
// time instead of the whole message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <memory>
#include <span>
#include <string>

#include "tensogram/cbor/value.hpp"
#include "tensogram/message/descriptor.hpp"
#include "tensogram/message/metadata.hpp"
#include "tensogram/message/options.hpp"

namespace tensogram {

/// Writes one message in the streaming layout of spec 01 §18:
///
///     preamble · HeaderMetadata(1) · { [PrecederMetadata(8)] NTensorFrame(9) }*
///     · FooterMetadata(7) · [FooterHash(5)] · FooterIndex(6) · postamble
///
/// The header metadata frame holds the caller's metadata as given; the
/// footer metadata frame holds it enriched like the buffered encoder's
/// (`_reserved_.tensor` per object, provenance) with the preceder entries
/// merged in, and is the one a full decode returns. Data-object frames are
/// byte-identical to the buffered encoder's. Memory use is bounded by one
/// object (its encoded payload) plus a few integers per object.
///
/// Sinks and `total_length` (spec 01 §3.2, §18 "Back-filled variant"):
/// * a path: written to a temporary file beside the destination, which
///   `finish()` back-fills and renames into place; an existing file is only
///   replaced by a complete message. Without `finish()` the temporary file is
///   removed and the destination is untouched.
/// * a `std::ostream`: back-filled when the stream can `tellp`/`seekp`
///   (files, string streams), else left 0. The stream is left positioned at
///   the end of the message.
/// * a file descriptor: back-filled when it is seekable and not in append
///   mode (a regular file), else left 0 (pipes, sockets, terminals). Writes
///   retry after EINTR and partial writes, and wait for a non-blocking
///   descriptor to become writable. The caller keeps ownership of the
///   descriptor. (Writing to a pipe whose reader is gone raises SIGPIPE
///   unless the process ignores it; then the write fails with an
///   `io_error`.)
///
/// The encoder owns its sink until `finish()`: bytes are buffered and
/// flushed after construction, after each object and by `finish()`, so a
/// reader of a pipe or socket sees every object as soon as it is written.
///
/// Errors: a failed call that wrote nothing (every validation, pipeline and
/// NaN/Inf error) leaves the encoder usable; after a failure while writing
/// (`io_error`) every further call throws `invalid_arg_error`, as does any
/// call after `finish()`. The destructor never throws.
///
/// Not thread-safe: one thread at a time.
class streaming_encoder {
 public:
  /// Starts a message in a new file at `path` (see the class comment).
  /// Throws `encoding_error` for the aggregate-hash policies `header` and
  /// `both` (the hashes are only known at the end), `metadata_error` for a
  /// client `_reserved_` (message level or in a `base` entry), a non-map
  /// `base` entry, an unknown hash name or mask method, `io_error` when the
  /// file cannot be created.
  streaming_encoder(const std::filesystem::path& path, const global_metadata& metadata,
                    const encode_options& options = {});
  /// Starts a message on `out`, which must outlive the encoder.
  streaming_encoder(std::ostream& out, const global_metadata& metadata, const encode_options& options = {});
  /// Starts a message on the open descriptor `fd` (not closed by the encoder).
  [[nodiscard]] static streaming_encoder to_fd(int fd, const global_metadata& metadata,
                                               const encode_options& options = {});

  // The reference wrapper's JSON forms (spec 04 Part D, §C.3): metadata as
  // in `encode`'s `metadata_json` without `descriptors` (a `descriptors` key
  // is a `metadata_error`).
  streaming_encoder(const std::filesystem::path& path, const std::string& metadata_json,
                    const encode_options& options = {});
  streaming_encoder(std::ostream& out, const std::string& metadata_json, const encode_options& options = {});
  [[nodiscard]] static streaming_encoder to_fd(int fd, const std::string& metadata_json,
                                               const encode_options& options = {});

  streaming_encoder(streaming_encoder&&) noexcept;
  streaming_encoder& operator=(streaming_encoder&&) noexcept;
  streaming_encoder(const streaming_encoder&) = delete;
  streaming_encoder& operator=(const streaming_encoder&) = delete;
  /// Without `finish()`: a path sink's temporary file is removed; bytes
  /// already sent to a stream or descriptor stay there as an incomplete
  /// message (no postamble), which scanners skip.
  ~streaming_encoder();

  /// Per-object metadata for the next object (a map with text keys), written
  /// as a PrecederMetadata frame `{"base": [entry]}` and merged into that
  /// object's `base` entry of the footer metadata, replacing whole top-level
  /// keys (spec 02 §10). Throws `metadata_error` for a non-map entry, a
  /// non-text key or a `_reserved_` key, `framing_error` when a preceder is
  /// already pending.
  void write_preceder(const cbor::value& entry);
  /// JSON form: a JSON object whose members become the entry.
  void write_preceder(const std::string& entry_json);
  void write_preceder(const char* entry_json) { write_preceder(std::string(entry_json)); }

  /// Encodes `data` (raw elements in the descriptor's byte order) through
  /// the descriptor's pipeline and writes it as the next data-object frame.
  /// Errors as for the buffered `encode`.
  void write_object(const data_object_descriptor& descriptor, std::span<const std::byte> data);
  /// Writes an already encoded payload verbatim (spec 02 §13, pre-encoded
  /// mode); the descriptor is still validated.
  void write_object_pre_encoded(const data_object_descriptor& descriptor, std::span<const std::byte> data);
  /// JSON forms: one descriptor object (spec 04 §C.3; `byte_order` defaults
  /// to host order).
  void write_object(const std::string& descriptor_json, const std::uint8_t* data, std::size_t len);
  void write_object_pre_encoded(const std::string& descriptor_json, const std::uint8_t* data,
                                std::size_t len);

  /// Objects written so far.
  [[nodiscard]] std::size_t object_count() const noexcept;
  /// Bytes of the message produced so far (including bytes still buffered).
  [[nodiscard]] std::uint64_t bytes_written() const noexcept;

  /// Writes the footer frames and the postamble, back-fills `total_length`
  /// where the sink allows, flushes (path sink: syncs and renames into
  /// place) and returns the message length in bytes. Throws
  /// `framing_error` when a preceder is pending and `metadata_error` when
  /// the constructor's metadata has more `base` entries than objects were
  /// written (the reference truncates silently; spec 01 §18 says a
  /// conforming encoder should refuse); both leave the encoder usable.
  std::uint64_t finish();

 private:
  struct state;
  explicit streaming_encoder(std::unique_ptr<state> s);
  /// The state, after checking the encoder is neither moved from, failed
  /// nor finished (`invalid_arg_error`).
  state& checked(const char* operation);
  std::unique_ptr<state> state_;
};

}  // namespace tensogram

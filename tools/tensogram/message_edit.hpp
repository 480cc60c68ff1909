// Rewriting messages without changing their objects (spec 04 §A.5 `set`,
// `merge`, `split`, `reshuffle`).
//
// The reference implements these commands as decode → re-encode of the raw
// values. For lossy pipelines (simple_packing, zfp, sz3) that quantises the
// already-quantised values a second time, and NaN/Inf masks need
// --allow-nan to get through at all, so its output is not guaranteed to
// hold the input's data. Here an object's stored bytes (encoded payload plus
// mask blobs) and descriptor are carried over verbatim with the library's
// pre-encoded mode (spec 02 §13) wherever that mode accepts them: only the
// metadata, the frame layout and the hashes are new.
//
// Pre-encoded mode keeps the reference's rule that an `encoding: "none"`
// payload is exactly N × width bytes long (spec 02 §13), so it refuses
// objects stored with a compressor (zstd, lz4, szip, blosc2, zfp, sz3) or
// with mask blobs behind `encoding: "none"`. A message holding such an
// object is re-encoded from its decoded values instead, with each object's
// own descriptor (same pipeline and parameters) and its mask methods, and
// every object of the result is decoded again and compared bit for bit
// with the input's values: a pipeline that would not reproduce them (a
// lossy compressor that is not idempotent) makes the command fail rather
// than change the data.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <tensogram/core/atomic_file.hpp>
#include <tensogram/core/buffer.hpp>
#include <tensogram/io/file.hpp>
#include <tensogram/message/descriptor.hpp>
#include <tensogram/message/metadata.hpp>
#include <tensogram/message/options.hpp>

namespace tensogram::cli {

/// One object as stored on the wire.
struct wire_object {
  /// The descriptor exactly as stored (pipeline parameters, byte order,
  /// mask table).
  data_object_descriptor descriptor;
  /// The frame's payload region: encoded bytes followed by any mask blobs,
  /// a view into the message buffer the object was read from.
  std::span<const std::byte> payload;
  /// The whole data-object frame (shares the message's buffer), for the
  /// decode-and-re-encode path.
  buffer frame;
  /// Position in its source message (labels errors).
  std::size_t index = 0;

  /// True when pre-encoded mode accepts the stored payload as it is.
  [[nodiscard]] bool storable_verbatim() const;
};

struct wire_message {
  /// The metadata a full decode returns: footer metadata for streaming
  /// messages, preceder metadata merged, one base entry per object.
  global_metadata metadata;
  std::vector<wire_object> objects;
};

/// Splits `msg` (one whole message) into metadata and stored objects. The
/// objects' spans point into `msg`, which must outlive the result.
///
/// Every object is checked before its bytes can be reused, so that a damaged
/// input is never re-hashed into an output that looks intact: an object whose
/// frame carries a hash must match it (`hash_mismatch_error`); an object
/// without one is decoded once (with `threads`) and must decode cleanly.
[[nodiscard]] wire_message read_wire_message(const buffer& msg, std::uint32_t threads);

/// Drops the library-managed `_reserved_` data (message provenance and each
/// base entry's `_reserved_`), which the encoder regenerates (spec 02 §3.3).
void strip_reserved(global_metadata& meta);

/// Encodes one message in the buffered layout (header metadata, index and
/// hash frames: random access, spec 01 §17) holding `objects` unchanged:
/// verbatim when every object allows it, else re-encoded and checked (see
/// the top of this file; throws `tool_error` when an object's values would
/// change). `options` supplies hashing and the thread budget; NaN/Inf
/// handling follows the objects' own masks, never the global options.
[[nodiscard]] std::vector<std::byte> encode_wire(const global_metadata& meta,
                                                 std::span<const wire_object> objects,
                                                 const encode_options& options);

// ---- output ------------------------------------------------------------------

/// Where a rewriting command writes. A regular file (or a new path) is
/// written to a temporary file next to it and renamed into place by
/// `commit()`: a failure part-way leaves no half-written output and an
/// existing file as it was, and the output may be one of the inputs (they
/// stay mapped). A path that exists but is not a regular file (`/dev/stdout`,
/// a FIFO) cannot be replaced by renaming and is written directly.
class output_file {
 public:
  explicit output_file(const std::string& path, atomic_write_options options = {});
  output_file(const output_file&) = delete;
  output_file& operator=(const output_file&) = delete;
  ~output_file();

  void write(std::span<const std::byte> bytes);
  /// Makes the output visible (renames the temporary file into place).
  void commit();

 private:
  std::string path_;
  std::optional<atomic_file_writer> atomic_;
  int direct_fd_ = -1;
};

/// Writes `bytes` as the whole content of `path` (see `output_file`).
void write_output(const std::string& path, std::span<const std::byte> bytes,
                  atomic_write_options options = {});

// ---- `set -s K=V[,K=V...]` (spec 04 §A.5) ----------------------------------

struct set_pair {
  std::string key;
  std::string value;
};

/// Splits the `-s` text at every comma, each pair at its first `=`, and trims
/// key and value. Throws `tool_error`: "invalid set value: <pair>" for a pair
/// without `=`; "cannot modify immutable key: <key>" when the last dotted
/// segment is a structural or codec key (or, for `objects.N.` keys, when the
/// first segment after N names a fixed descriptor field); "cannot modify
/// '_reserved_' — this namespace is managed by the library" for a first
/// segment `_reserved_`.
[[nodiscard]] std::vector<set_pair> parse_set_pairs(std::string_view text);

/// Applies one pair to a message: `objects.N.path` into object N's descriptor
/// parameters, `extra.path` / `_extra_.path` into `_extra_`, anything else
/// into every base entry (into `_extra_` for a message without objects).
/// Values are stored as text. Missing intermediate maps are created and a
/// non-map in the way is replaced by a map. Throws `tool_error` for a
/// malformed `objects.` or `extra.` key or an object index out of range.
void apply_set_pair(global_metadata& meta, std::vector<data_object_descriptor>& descriptors,
                    const set_pair& pair);

// ---- output names ------------------------------------------------------------

/// `copy` templates (§A.5): every `[key]` replaced by the message's text value
/// of `key` (spec 04 §A.2), or `unknown` when missing. Substituted text is not
/// scanned again. An `[` without a later `]` ends the expansion.
[[nodiscard]] std::string expand_key_template(std::string_view templ, const global_metadata& meta);

/// True when a `copy` OUTPUT is a template: it contains both `[` and `]`.
[[nodiscard]] bool is_key_template(std::string_view output);

/// `split` names (§A.5): every `[index]` replaced by `index` zero-padded to 4
/// digits; without `[index]`, `_NNNN` inserted before the extension of the
/// last path component (`out.tgm` → `out_0000.tgm`, `out` → `out_0000`).
[[nodiscard]] std::string expand_index_template(std::string_view templ, std::uint64_t index);

}  // namespace tensogram::cli

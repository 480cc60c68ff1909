// Multi-message Tensogram files (spec 04 Part D `file`, Part E.3 remote
// access): lazy scanning with bounded memory, message and object access by
// index, appends that never damage earlier messages, memory-mapped and
// remote (HTTP range) modes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tensogram/core/atomic_file.hpp"
#include "tensogram/core/buffer.hpp"
#include "tensogram/format/scan.hpp"
#include "tensogram/io/byte_source.hpp"
#include "tensogram/io/source_scan.hpp"
#include "tensogram/message/decode.hpp"
#include "tensogram/message/encode.hpp"
#include "tensogram/message/options.hpp"

namespace tensogram {

/// A file of concatenated messages. `open` and `open_mmap` fail at once for a
/// path that cannot be opened (`io_error`, as the reference's open does) but
/// read nothing: the message list is built by the first call that needs it, reading preambles and postambles
/// only (never the whole file). Every member function is safe to call from
/// many threads at once on one `file`; moving or destroying it is not.
class file {
 public:
  /// A local file read with positional reads.
  [[nodiscard]] static file open(const std::filesystem::path& path,
                                 scan_mode mode = scan_mode::bidirectional);
  /// A local file read through a read-only memory mapping: objects with no
  /// codec in native byte order decode as views into the mapping.
  [[nodiscard]] static file open_mmap(const std::filesystem::path& path,
                                      scan_mode mode = scan_mode::bidirectional);
  /// An HTTP(S) object read with range requests; read-only.
  [[nodiscard]] static file open_remote(const std::string& url, io::remote_options options = {},
                                        scan_mode mode = scan_mode::bidirectional);
  /// `open_remote` for http(s) URLs, `open` otherwise.
  [[nodiscard]] static file open_source(const std::string& source, scan_mode mode = scan_mode::bidirectional);
  /// Creates the file (and missing parent directories), truncating an
  /// existing one, ready for `append`.
  [[nodiscard]] static file create(const std::filesystem::path& path);
  /// Any byte source (tests, custom storage).
  [[nodiscard]] static file from_source(std::unique_ptr<io::byte_source> source,
                                        scan_mode mode = scan_mode::bidirectional);

  file(file&&) noexcept;
  file& operator=(file&&) noexcept;
  file(const file&) = delete;
  file& operator=(const file&) = delete;
  ~file();

  /// Number of messages (scans on first use).
  [[nodiscard]] std::size_t message_count();
  /// Position and length of message `i` in the file.
  [[nodiscard]] scan_entry message_extent(std::size_t i);
  /// Every message's position and length, in file order.
  [[nodiscard]] std::vector<scan_entry> message_extents();

  /// The raw bytes of message `i` (a slice of the mapping in mmap mode).
  [[nodiscard]] buffer message_bytes(std::size_t i);
  /// The raw bytes of message `i`, copied (reference wrapper API).
  [[nodiscard]] std::vector<std::uint8_t> read_message(std::size_t i);

  /// Decodes every object of message `i`.
  [[nodiscard]] message decode_message(std::size_t i, const decode_options& options = {});
  /// Metadata of message `i`, reading only its metadata frames.
  [[nodiscard]] metadata decode_metadata(std::size_t i);
  /// Metadata and descriptors of message `i` without decoding payloads.
  [[nodiscard]] std::pair<metadata, std::vector<data_object_descriptor>> decode_descriptors(std::size_t i);
  /// Decodes object `object_index` of message `i`, reading only the message's
  /// header (or footer) frames once, then just that object's frame.
  [[nodiscard]] message decode_object(std::size_t i, std::size_t object_index,
                                      const decode_options& options = {});
  /// Element ranges `(offset, count)` of one object (spec 02 §8.6).
  [[nodiscard]] std::vector<buffer> decode_range(
      std::size_t i, std::size_t object_index,
      std::span<const std::pair<std::uint64_t, std::uint64_t>> ranges, const decode_options& options = {});

  /// Appends one encoded message. The bytes are checked to be exactly one
  /// whole message first. On failure (disk full, file size limit) the file
  /// is cut back to its previous length, and a crash mid-append leaves a
  /// partial tail that scanning skips: earlier messages stay readable.
  /// The append holds an exclusive `flock(2)` on the file, so appends from
  /// several processes (or `file` objects) never interleave their bytes;
  /// readers need no lock (they see whole messages only). The data is not
  /// fsync'ed: after a power loss the last appends may be missing or torn,
  /// never earlier data that had reached the disk.
  void append_raw(std::span<const std::byte> message_bytes);
  void append_raw(const std::uint8_t* data, std::size_t len);
  void append_raw(const std::vector<std::uint8_t>& message_bytes);
  /// Encodes then appends one message.
  void append(const global_metadata& metadata, std::span<const object_input> objects,
              const encode_options& options = {});
  /// JSON form of `append` (reference wrapper API, spec 04 C.3).
  void append(const std::string& metadata_json,
              const std::vector<std::pair<const std::uint8_t*, std::size_t>>& objects,
              const encode_options& options = {});

  /// The local path (empty for remote files).
  [[nodiscard]] const std::filesystem::path& path() const noexcept;
  /// The path or URL the file reads.
  [[nodiscard]] std::string source_name() const;
  [[nodiscard]] bool is_remote() const noexcept;
  /// What the reference checks when it opens a remote file, done on demand
  /// because `open_remote` itself does no I/O: the object holds at least one
  /// minimal message (48 bytes) and starts with a valid preamble. Throws
  /// `remote_error` "remote file too small (<n> bytes)" or "no valid messages
  /// found in remote file" (and the source's own errors, e.g. HTTP 404). A
  /// no-op for local files, whose open checks existence only.
  void check_head();
  /// The byte source, for its I/O statistics.
  [[nodiscard]] io::byte_source& source();

 private:
  struct state;
  explicit file(std::unique_ptr<state> s);
  std::unique_ptr<state> state_;
};

}  // namespace tensogram

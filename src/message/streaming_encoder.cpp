// The streaming encoder (spec 01 §18, spec 02 §3.4, §10).
//
// Objects go through the same preparation (validation, pipeline, masks) and
// the same frame header/footer code as the buffered encoder (see
// encode_internal.hpp), so data-object frames are byte-identical in both
// modes. What differs is the output: bytes leave through a small buffer to a
// sink as soon as an object is framed, and the totals that buffered mode
// writes up front (index, hashes, enriched metadata) go into footer frames.
#include "tensogram/message/streaming_encoder.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <functional>
#include <ios>
#include <optional>
#include <ostream>
#include <system_error>
#include <utility>
#include <vector>

#include "tensogram/cbor/json.hpp"
#include "tensogram/core/atomic_file.hpp"
#include "tensogram/core/byte_order.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/format/aggregate_frames.hpp"
#include "tensogram/format/frame.hpp"
#include "tensogram/format/hash.hpp"
#include "tensogram/format/preamble.hpp"
#include "tensogram/format/wire.hpp"
#include "tensogram/message/json_encode.hpp"
#include "tensogram/message/non_finite.hpp"

#include "encode_internal.hpp"

namespace tensogram {

namespace {

using format::frame_type;

std::string errno_text(int err) {
  return std::error_code(err, std::generic_category()).message();
}

// ---- sinks -----------------------------------------------------------------

/// Where the message bytes go. `write` receives every byte in order;
/// `backfill` runs once after the postamble was written.
class sink {
 public:
  sink() = default;
  sink(const sink&) = delete;
  sink& operator=(const sink&) = delete;
  virtual ~sink() = default;

  virtual void write(std::span<const std::byte> bytes) = 0;
  /// Overwrites the two `total_length` fields (message offsets 16 and
  /// `total − 16`, spec 01 §18 "Back-filled variant") with `total`; returns
  /// false when this sink cannot seek, leaving both at 0.
  virtual bool backfill(std::uint64_t total) = 0;
  /// Makes the complete message durable/visible (flush, rename).
  virtual void complete() = 0;
};

// One kernel call moves at most this much (Linux caps a write at ~2 GiB).
constexpr std::size_t max_io_chunk = std::size_t{1} << 30;

// Blocks until a non-blocking `fd` can take more bytes.
void wait_writable(int fd, const std::string& where) {
  pollfd p{fd, POLLOUT, 0};
  for (;;) {
    const int r = ::poll(&p, 1, -1);
    if (r >= 0) return;  // ready, or an error condition the next write reports
    if (errno != EINTR) throw io_error(where + ": poll failed: " + errno_text(errno));
  }
}

// write(2) until every byte is out: retries after EINTR, continues after
// partial writes (pipes, sockets, signals), waits on EAGAIN.
void write_all(int fd, std::span<const std::byte> bytes, const std::string& where) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), std::min(bytes.size(), max_io_chunk));
    if (n > 0) {
      bytes = bytes.subspan(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      wait_writable(fd, where);
      continue;
    }
    throw io_error(where + ": write of " + std::to_string(bytes.size()) +
                   " bytes failed: " + (n == 0 ? std::string("no progress") : errno_text(errno)));
  }
}

// pwrite(2) of a whole span at `offset` (does not move the file position).
void pwrite_all(int fd, std::span<const std::byte> bytes, std::uint64_t offset, const std::string& where) {
  while (!bytes.empty()) {
    const ssize_t n = ::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset));
    if (n > 0) {
      bytes = bytes.subspan(static_cast<std::size_t>(n));
      offset += static_cast<std::uint64_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    throw io_error(where + ": back-filling total_length at offset " + std::to_string(offset) +
                   " failed: " + (n == 0 ? std::string("no progress") : errno_text(errno)));
  }
}

// Back-fill through positional writes on a descriptor whose message starts
// at file offset `start`.
void backfill_fd(int fd, std::uint64_t start, std::uint64_t total, const std::string& where) {
  std::array<std::byte, 8> v{};
  store_be64(v.data(), total);
  pwrite_all(fd, v, start + 16, where);
  pwrite_all(fd, v, start + total - 16, where);
}

/// A caller's descriptor; not closed here.
class fd_sink final : public sink {
 public:
  explicit fd_sink(int fd) : fd_(fd), where_("file descriptor " + std::to_string(fd)) {
    const int fl = ::fcntl(fd, F_GETFL);
    if (fl < 0) throw io_error(where_ + ": not an open file descriptor: " + errno_text(errno));
    if ((fl & O_ACCMODE) == O_RDONLY) throw io_error(where_ + ": not open for writing");
    // Seekable (regular files; lseek fails with ESPIPE on pipes, FIFOs,
    // sockets and terminals) → back-fill at the current offset, where the
    // message starts. In append mode pwrite(2) ignores the offset on Linux
    // and would append the fields instead: such descriptors are treated as
    // not seekable and keep total_length 0, which is still a valid message.
    const off_t pos = ::lseek(fd, 0, SEEK_CUR);
    if (pos >= 0 && (fl & O_APPEND) == 0) start_ = static_cast<std::uint64_t>(pos);
  }
  void write(std::span<const std::byte> bytes) override { write_all(fd_, bytes, where_); }
  bool backfill(std::uint64_t total) override {
    if (!start_) return false;
    backfill_fd(fd_, *start_, total, where_);
    return true;
  }
  void complete() override {}  // nothing buffered here; durability is the caller's business

 private:
  int fd_;
  std::string where_;
  std::optional<std::uint64_t> start_;
};

/// A caller's std::ostream; exceptions it is configured to throw are turned
/// into `io_error`s.
class ostream_sink final : public sink {
 public:
  explicit ostream_sink(std::ostream& os) : os_(os) {
    // tellp() is -1 for streams that cannot seek (std::cout on a pipe, a
    // streambuf without seekoff): those keep total_length 0.
    try {
      const std::streampos p = os_.tellp();
      if (p != std::streampos(-1)) start_ = static_cast<std::streamoff>(p);
    } catch (const std::ios_base::failure&) {
      // not seekable
    }
  }
  void write(std::span<const std::byte> bytes) override {
    try {
      os_.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    } catch (const std::ios_base::failure& e) {
      throw io_error("output stream: write of " + std::to_string(bytes.size()) +
                     " bytes failed: " + e.what());
    }
    if (!os_) throw io_error("output stream: write of " + std::to_string(bytes.size()) + " bytes failed");
  }
  bool backfill(std::uint64_t total) override {
    if (!start_) return false;
    const auto end = static_cast<std::streamoff>(*start_ + static_cast<std::streamoff>(total));
    std::array<std::byte, 8> v{};
    store_be64(v.data(), total);
    // A stream that reported a position may still refuse to seek: then the
    // fields stay 0 (nothing was overwritten yet, the message is valid).
    if (!seek(*start_ + 16)) {
      if (!seek(end)) throw io_error("output stream: cannot return to the end of the message");
      return false;
    }
    write(v);
    // A stream in append mode (std::ios::app, or std::cout redirected with
    // `>>`) accepts the seek but writes at the end anyway; no standard API
    // reveals the mode beforehand. Its position after the write exposes it:
    // the message before is complete (total_length 0) but 8 stray bytes now
    // follow it, so this is reported rather than ignored.
    if (!complete_and_tell(*start_ + 24)) {
      throw io_error(
          "output stream: the total_length back-fill was appended after the message instead of "
          "overwriting offset 16 (stream opened in append mode?); the message is complete with "
          "total_length 0 but is followed by 8 stray bytes — open the stream without std::ios::app, or "
          "use streaming_encoder::to_fd, which detects O_APPEND");
    }
    if (!seek(end - 16)) throw io_error("output stream: seek to the postamble for back-filling failed");
    write(v);
    if (!seek(end)) throw io_error("output stream: cannot return to the end of the message");
    return true;
  }
  void complete() override {
    try {
      os_.flush();
    } catch (const std::ios_base::failure& e) {
      throw io_error(std::string("output stream: flush failed: ") + e.what());
    }
    if (!os_) throw io_error("output stream: flush failed");
  }

 private:
  // Flushes, then whether the stream's position is `expected`.
  bool complete_and_tell(std::streamoff expected) {
    complete();
    try {
      return os_.tellp() == std::streampos(expected);
    } catch (const std::ios_base::failure&) {
      return false;
    }
  }
  // seekp that reports failure instead of leaving the stream failed.
  bool seek(std::streamoff pos) {
    try {
      os_.seekp(pos);
    } catch (const std::ios_base::failure&) {
      os_.clear();
      return false;
    }
    if (os_.fail()) {
      os_.clear();
      return false;
    }
    return true;
  }

  std::ostream& os_;
  std::optional<std::streamoff> start_;
};

/// A new file: a temporary file beside the destination, renamed into place
/// by `complete()`; removed by the writer's destructor otherwise.
class path_sink final : public sink {
 public:
  explicit path_sink(const std::filesystem::path& path) : writer_(path), where_(path.string()) {}
  void write(std::span<const std::byte> bytes) override { writer_.write(bytes); }
  bool backfill(std::uint64_t total) override {
    // The message starts at offset 0 of the temporary file.
    backfill_fd(writer_.fd(), 0, total, where_);
    return true;
  }
  void complete() override { writer_.commit(); }

 private:
  atomic_file_writer writer_;
  std::string where_;
};

// ---- buffered output ---------------------------------------------------------

/// Coalesces the many small pieces of a message (frame headers, footers,
/// padding, CBOR) into few sink writes; large pieces go straight through.
/// Tracks the message offset for the index and the padding (spec 01 §8).
class output {
 public:
  static constexpr std::size_t capacity = 64 * 1024;

  explicit output(std::unique_ptr<sink> s) : sink_(std::move(s)) { buf_.reserve(capacity); }

  void write(std::span<const std::byte> bytes) {
    if (buf_.size() + bytes.size() > capacity) {
      flush();
      if (bytes.size() >= capacity) {
        sink_->write(bytes);
        position_ += bytes.size();
        return;
      }
    }
    buf_.insert(buf_.end(), bytes.begin(), bytes.end());
    position_ += bytes.size();
  }
  /// Zero bytes up to the next multiple of 8 of the message offset.
  void pad8() {
    static constexpr std::array<std::byte, 8> zeros{};
    write(std::span<const std::byte>(zeros).first(format::align8(position_) - position_));
  }
  void flush() {
    if (buf_.empty()) return;
    sink_->write(buf_);
    buf_.clear();
  }
  [[nodiscard]] std::uint64_t position() const noexcept { return position_; }
  [[nodiscard]] sink& target() noexcept { return *sink_; }

 private:
  std::unique_ptr<sink> sink_;
  std::vector<std::byte> buf_;
  std::uint64_t position_ = 0;
};

// A complete non-data frame (spec 01 §9–§11) followed by its padding.
void write_frame(output& out, frame_type type, std::span<const std::byte> body, bool hashing) {
  std::vector<std::byte> frame(format::min_frame_size + body.size());
  (void)format::write_frame(frame, type, body, hashing);
  out.write(frame);
  out.pad8();
}

// A preceder entry must be a map with text keys and no `_reserved_`
// (spec 01 §18, spec 02 §3.4).
void validate_preceder(const cbor::value& entry, std::size_t object) {
  const std::string where = " (preceder of object " + std::to_string(object) + ")";
  const cbor::map* m = entry.as_map();
  if (m == nullptr) throw metadata_error("preceder metadata must be a map" + where);
  for (const cbor::map_entry& e : *m) {
    const std::string* key = e.key.as_text();
    if (key == nullptr) throw metadata_error("preceder metadata keys must be text" + where);
    if (*key == "_reserved_") throw metadata_error("client code must not write '_reserved_'" + where);
  }
}

}  // namespace

// ---- the encoder -------------------------------------------------------------

struct streaming_encoder::state {
  enum class status { open, failed, finished };

  explicit state(std::unique_ptr<sink> s) : out(std::move(s)) {}

  output out;
  /// The caller's metadata, enriched at `finish()`.
  global_metadata metadata;
  encode_options options;
  bool hashing = true;
  bool footer_hash = false;
  std::uint32_t budget = 0;

  // Per object, in order: what the footer frames need (a few integers and
  // the tensor shape; never the payload).
  std::vector<std::uint64_t> offsets;
  std::vector<std::uint64_t> lengths;
  std::vector<std::uint64_t> digests;
  std::vector<data_object_descriptor> tensors;
  std::vector<std::pair<std::size_t, cbor::value>> preceders;  // (object index, entry)
  std::optional<cbor::value> pending_preceder;

  status current = status::open;
  std::string failure;

  void check_usable(const char* operation) const {
    if (current == status::finished) {
      throw invalid_arg_error(std::string("streaming encoder already finished (") + operation + ")");
    }
    if (current == status::failed) {
      throw invalid_arg_error(std::string("streaming encoder is unusable after an earlier failure (") +
                              operation + "): " + failure);
    }
  }

  // Runs `f`, which sends bytes to the sink: if it fails part-way the sink
  // holds a partial frame, so the encoder refuses any further work.
  template <typename F>
  void writing(F&& f) {
    try {
      std::forward<F>(f)();
    } catch (const std::exception& e) {
      current = status::failed;
      failure = e.what();
      throw;
    }
  }

  static std::unique_ptr<state> start(const std::function<std::unique_ptr<sink>()>& open_sink,
                                      const global_metadata& metadata, const encode_options& options);
  void write_object(const data_object_descriptor& descriptor, std::span<const std::byte> data,
                    bool pre_encoded);
};

// Constructor work shared by every sink (spec 01 §18 "Construction writes").
// Options and metadata are checked before the sink is opened, so a rejected
// call creates no file.
std::unique_ptr<streaming_encoder::state> streaming_encoder::state::start(
    const std::function<std::unique_ptr<sink>()>& open_sink, const global_metadata& metadata,
    const encode_options& options) {
  const bool hashing = options.hashing();
  // The hash list is only known after the last object, so it can only go
  // into a footer frame (spec 02 §13). Rejected whether or not hashing is on:
  // the policy asks for a layout this mode cannot produce.
  if (options.aggregate_hash == aggregate_hash_policy::header ||
      options.aggregate_hash == aggregate_hash_policy::both) {
    // The reference's text (spec 08 §1.6, two spaces before "Use").
    throw encoding_error(
        std::string("AggregateHashPolicy::") +
        (options.aggregate_hash == aggregate_hash_policy::header ? "Header" : "Both") +
        " is not supported in streaming mode — the header is written before any data object, "
        "so per-object hashes are not yet known.  Use Auto (defaults to Footer in streaming) or "
        "Footer explicitly.");
  }
  detail::validate_mask_options(options);
  const std::uint32_t budget = detail::thread_budget(options);
  // The reference writes client `_reserved_` through unchecked; spec 01 §18
  // says a conforming encoder should refuse it, and so does this one, before
  // anything is written.
  detail::validate_client_metadata(metadata);

  auto st = std::make_unique<state>(open_sink());
  st->metadata = metadata;
  st->options = options;
  st->hashing = hashing;
  st->footer_hash = hashing && (options.aggregate_hash == aggregate_hash_policy::automatic ||
                                options.aggregate_hash == aggregate_hash_policy::footer);
  st->budget = budget;

  // Preamble: total_length 0 until back-filled. PRECEDER_METADATA is always
  // set and FOOTER_HASHES is set up front even if no hash frame ends up
  // written (zero objects): what the reference writes (spec 01 §18,
  // spec 02 §18 item 11). Typical value 0x00EB.
  std::uint16_t flags = format::message_flags::header_metadata | format::message_flags::footer_metadata |
                        format::message_flags::footer_index | format::message_flags::preceder_metadata;
  if (hashing) flags |= format::message_flags::hashes_present;
  if (st->footer_hash) flags |= format::message_flags::footer_hashes;
  format::preamble pre;
  pre.flags = flags;
  pre.total_length = 0;
  std::array<std::byte, format::preamble_size> p{};
  format::write_preamble(p, pre);

  state& s = *st;
  s.writing([&] {
    s.out.write(p);
    // Header metadata: the caller's metadata exactly as given, no
    // `_reserved_`, no base padding (spec 02 §3.4).
    write_frame(s.out, frame_type::header_metadata, metadata.to_cbor_bytes(), hashing);
    s.out.flush();
  });
  return st;
}

void streaming_encoder::state::write_object(const data_object_descriptor& descriptor,
                                            std::span<const std::byte> data, bool pre_encoded) {
  check_usable(pre_encoded ? "write_object_pre_encoded" : "write_object");
  const std::size_t index = offsets.size();
  // One object at a time: its codec may use the whole thread budget once
  // the payload is large enough (as buffered mode does for one object).
  const std::uint32_t intra = (budget > 0 && data.size() >= detail::parallel_threshold_bytes) ? budget : 0;
  const detail::prepared_object obj =
      detail::prepare_object(object_input{descriptor, data}, index, options, pre_encoded, intra);
  // The strict NaN/Inf check on bytes stored verbatim, done before the
  // first byte of the frame goes out so that a rejected object leaves the
  // sink untouched and the encoder usable (buffered mode fuses it into its
  // copy into the message buffer; here there is no such copy).
  if (obj.scan_nan || obj.scan_inf) {
    const dtype t = obj.descriptor.dtype;
    if (auto hit = find_non_finite(t, obj.descriptor.effective_byte_order(), obj.payload, obj.scan_nan,
                                   obj.scan_inf)) {
      throw encoding_error(strict_non_finite_message(t, *hit));
    }
  }

  const std::uint64_t offset = out.position();
  std::uint64_t digest = 0;
  writing([&] {
    std::array<std::byte, format::frame_header_size> header{};
    format::write_frame_header(header, detail::data_frame_header(obj, hashing));
    out.write(header);
    // Hash each block while it is in cache, right before it is written:
    // one read of the payload, no copy of it (spec 01 §12, §13).
    format::xxh3_stream stream;
    constexpr std::size_t block = 256 * 1024;
    for (std::size_t off = 0; off < obj.payload.size(); off += block) {
      const std::span<const std::byte> chunk =
          obj.payload.subspan(off, std::min(block, obj.payload.size() - off));
      if (hashing) stream.update(chunk);
      out.write(chunk);
    }
    if (hashing) {
      stream.update(obj.cbor);
      digest = stream.digest();
    }
    out.write(obj.cbor);
    out.write(detail::data_frame_footer(obj, digest));
    out.pad8();
    // Readers of a pipe or socket see each object as soon as it is written.
    out.flush();
  });

  offsets.push_back(offset);
  lengths.push_back(obj.frame_length);
  digests.push_back(digest);
  tensors.push_back(detail::tensor_fields(obj.descriptor));
  if (pending_preceder) {
    preceders.emplace_back(index, std::move(*pending_preceder));
    pending_preceder.reset();
  }
}

streaming_encoder::streaming_encoder(std::unique_ptr<state> s) : state_(std::move(s)) {}

streaming_encoder::streaming_encoder(const std::filesystem::path& path, const global_metadata& metadata,
                                     const encode_options& options)
    : state_(state::start([&] { return std::make_unique<path_sink>(path); }, metadata, options)) {}

streaming_encoder::streaming_encoder(std::ostream& out, const global_metadata& metadata,
                                     const encode_options& options)
    : state_(state::start([&] { return std::make_unique<ostream_sink>(out); }, metadata, options)) {}

streaming_encoder streaming_encoder::to_fd(int fd, const global_metadata& metadata,
                                           const encode_options& options) {
  return streaming_encoder(state::start([&] { return std::make_unique<fd_sink>(fd); }, metadata, options));
}

streaming_encoder::streaming_encoder(const std::filesystem::path& path, const std::string& metadata_json,
                                     const encode_options& options)
    : streaming_encoder(path, parse_streaming_metadata_json(metadata_json), options) {}

streaming_encoder::streaming_encoder(std::ostream& out, const std::string& metadata_json,
                                     const encode_options& options)
    : streaming_encoder(out, parse_streaming_metadata_json(metadata_json), options) {}

streaming_encoder streaming_encoder::to_fd(int fd, const std::string& metadata_json,
                                           const encode_options& options) {
  return to_fd(fd, parse_streaming_metadata_json(metadata_json), options);
}

streaming_encoder::streaming_encoder(streaming_encoder&&) noexcept = default;
streaming_encoder& streaming_encoder::operator=(streaming_encoder&&) noexcept = default;
streaming_encoder::~streaming_encoder() = default;

streaming_encoder::state& streaming_encoder::checked(const char* operation) {
  if (!state_) throw invalid_arg_error(std::string("streaming encoder was moved from (") + operation + ")");
  state_->check_usable(operation);
  return *state_;
}

void streaming_encoder::write_preceder(const cbor::value& entry) {
  state& s = checked("write_preceder");
  const std::size_t object = s.offsets.size();
  validate_preceder(entry, object);
  if (s.pending_preceder) {
    throw framing_error("write_preceder called twice for object " + std::to_string(object) +
                        ": a PrecederMetadata frame must be followed by a data object");
  }
  // Body `{"base": [entry]}`, nothing else (spec 01 §9).
  global_metadata body;
  body.base.push_back(entry);
  s.writing([&] { write_frame(s.out, frame_type::preceder_metadata, body.to_cbor_bytes(), s.hashing); });
  s.pending_preceder = entry;
}

void streaming_encoder::write_preceder(const std::string& entry_json) {
  const state& s = checked("write_preceder");
  const cbor::value entry = cbor::from_json_text(entry_json);
  if (!entry.is_map()) {
    throw metadata_error("preceder metadata JSON must be an object (preceder of object " +
                         std::to_string(s.offsets.size()) + ")");
  }
  write_preceder(entry);
}

void streaming_encoder::write_object(const data_object_descriptor& descriptor,
                                     std::span<const std::byte> data) {
  checked("write_object").write_object(descriptor, data, false);
}

void streaming_encoder::write_object_pre_encoded(const data_object_descriptor& descriptor,
                                                 std::span<const std::byte> data) {
  checked("write_object_pre_encoded").write_object(descriptor, data, true);
}

namespace {
std::span<const std::byte> object_bytes(const std::uint8_t* data, std::size_t len, std::size_t object) {
  if (data == nullptr && len != 0) {
    throw invalid_arg_error("object " + std::to_string(object) + " has a null pointer");
  }
  return {reinterpret_cast<const std::byte*>(data), len};
}
}  // namespace

void streaming_encoder::write_object(const std::string& descriptor_json, const std::uint8_t* data,
                                     std::size_t len) {
  state& s = checked("write_object");
  const auto bytes = object_bytes(data, len, s.offsets.size());
  s.write_object(parse_descriptor_json(descriptor_json), bytes, false);
}

void streaming_encoder::write_object_pre_encoded(const std::string& descriptor_json, const std::uint8_t* data,
                                                 std::size_t len) {
  state& s = checked("write_object_pre_encoded");
  const auto bytes = object_bytes(data, len, s.offsets.size());
  s.write_object(parse_descriptor_json(descriptor_json), bytes, true);
}

std::size_t streaming_encoder::object_count() const noexcept {
  return state_ ? state_->offsets.size() : 0;
}

std::uint64_t streaming_encoder::bytes_written() const noexcept {
  return state_ ? state_->out.position() : 0;
}

std::uint64_t streaming_encoder::finish() {
  state& s = checked("finish");
  const std::size_t count = s.offsets.size();
  if (s.pending_preceder) {
    throw framing_error("finish() with a pending preceder: the PrecederMetadata frame for object " +
                        std::to_string(count) + " has no data object after it");
  }
  // The reference silently truncates `base` to the object count; spec 01 §18
  // says a conforming encoder should refuse, as buffered mode does. Checked
  // before anything is written, so the caller may still write the missing
  // objects and call finish() again.
  if (s.metadata.base.size() > count) {
    throw metadata_error("metadata base has " + std::to_string(s.metadata.base.size()) +
                         " entries but only " + std::to_string(count) +
                         " objects were written; the streaming encoder does not drop base entries");
  }

  // Footer metadata (spec 02 §3.4): enriched as in buffered mode, then each
  // preceder entry replaces whole top-level keys of its base entry
  // (spec 02 §10).
  const provenance prov = s.options.fixed_provenance ? *s.options.fixed_provenance : provenance::current();
  global_metadata footer = enrich_metadata(s.metadata, s.tensors, prov);
  for (const auto& [index, entry] : s.preceders) {
    for (const cbor::map_entry& e : *entry.as_map()) footer.base[index].set(*e.key.as_text(), e.val);
  }
  const std::vector<std::byte> meta_body = footer.to_cbor_bytes();

  std::uint64_t total = 0;
  s.writing([&] {
    // Footer order 7, 5, 6 as the reference writes it (spec 01 §6, §18).
    const std::uint64_t footer_at = s.out.position();
    write_frame(s.out, frame_type::footer_metadata, meta_body, s.hashing);
    if (s.footer_hash && count > 0) {
      write_frame(s.out, frame_type::footer_hash, format::encode_hash_body(s.digests), s.hashing);
    }
    // Always written, even for zero objects (spec 01 §18).
    write_frame(s.out, frame_type::footer_index,
                format::encode_index_body(format::index_body{s.offsets, s.lengths}), s.hashing);
    format::postamble post;
    post.first_footer_offset = footer_at;
    post.total_length = 0;
    std::array<std::byte, format::postamble_size> p{};
    format::write_postamble(p, post);
    s.out.write(p);
    total = s.out.position();
    s.out.flush();
    (void)s.out.target().backfill(total);
    s.out.target().complete();
  });
  s.current = state::status::finished;
  return total;
}

}  // namespace tensogram

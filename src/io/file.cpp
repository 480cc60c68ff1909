// tensogram::file (include/tensogram/io/file.hpp).
#include "tensogram/io/file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "message_layout.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/format/preamble.hpp"
#include "tensogram/format/scan.hpp"
#include "tensogram/format/wire.hpp"
#include "tensogram/message/json_encode.hpp"

namespace tensogram {

namespace {

enum class file_kind { local, mapped, remote, custom };

std::string object_range_text(std::size_t index, std::size_t count) {
  return "object index " + std::to_string(index) + " out of range (num_objects=" + std::to_string(count) +
         ")";
}

// The reference's eager open checks (spec 08 §7.1/§7.2: one HEAD, one GET of
// the first 24 bytes); the scan itself stays lazy.
void check_source_head(io::byte_source& src) {
  const std::uint64_t size = src.size();
  if (size < format::min_message_size)
    throw remote_error(TGM_ERROR_REMOTE, "remote file too small (" + std::to_string(size) + " bytes)");
  const io::byte_range first{0, format::preamble_size};
  const std::vector<buffer> head = src.read(std::span<const io::byte_range>(&first, 1));
  try {
    (void)format::read_preamble(head.at(0).bytes());
  } catch (const framing_error&) {
    throw remote_error(TGM_ERROR_REMOTE, "no valid messages found in remote file");
  }
}
}  // namespace

struct file::state {
  file_kind kind = file_kind::local;
  std::filesystem::path path;
  std::string name;
  scan_mode mode = scan_mode::bidirectional;

  // Guards the members below. The source itself is thread-safe; it is
  // replaced only when an append invalidates a mapping, so readers take a
  // reference-counted copy of the pointer.
  std::mutex mu;
  std::shared_ptr<io::byte_source> src;
  std::optional<std::vector<scan_entry>> messages;
  std::vector<std::uint16_t> flags;  // preamble flags, parallel to `messages`
  std::unordered_map<std::size_t, std::shared_ptr<const io::cached_layout>> layouts;
  // Serialises appends (the message list is updated after each one).
  std::mutex append_mu;

  std::shared_ptr<io::byte_source> source() {
    const std::lock_guard lock(mu);
    return src;
  }

  // The message list, scanned on first use with the lock held (concurrent
  // first callers wait for one scan rather than running several).
  const std::vector<scan_entry>& list() {
    if (!messages) messages = io::scan_source(*src, mode, format::default_max_message_size, &flags);
    return *messages;
  }

  // Layout of message `i` at `e`: cached, or loaded without holding the
  // lock (two threads may load the same layout once each, harmlessly). When
  // loading read the whole message, `whole` carries it for this call.
  io::loaded_layout layout(std::size_t i, const scan_entry& e, io::byte_source& source) {
    std::optional<std::uint16_t> known_flags;
    {
      const std::lock_guard lock(mu);
      if (auto it = layouts.find(i); it != layouts.end()) return io::loaded_layout{it->second, {}};
      if (i < flags.size()) known_flags = flags[i];
    }
    io::loaded_layout l = io::load_message_layout(source, e, known_flags);
    const std::lock_guard lock(mu);
    layouts.emplace(i, l.layout);
    return l;
  }

  scan_entry extent(std::size_t i) {
    const std::lock_guard lock(mu);
    const std::vector<scan_entry>& l = list();
    if (i >= l.size()) {
      // The reference's category and text (spec 07 C2.6, spec 08 §1.8), so
      // code catching framing_error around file calls keeps working.
      throw framing_error("message index " + std::to_string(i) +
                          " out of range (count=" + std::to_string(l.size()) + ")");
    }
    return l[i];
  }
};

file::file(std::unique_ptr<state> s) : state_(std::move(s)) {}
file::file(file&&) noexcept = default;
file& file::operator=(file&&) noexcept = default;
file::~file() = default;

file file::open(const std::filesystem::path& path, scan_mode mode) {
  auto s = std::make_unique<state>();
  s->kind = file_kind::local;
  s->path = path;
  s->name = path.string();
  s->mode = mode;
  s->src = io::open_local_source(path);
  return file(std::move(s));
}

file file::open_mmap(const std::filesystem::path& path, scan_mode mode) {
  auto s = std::make_unique<state>();
  s->kind = file_kind::mapped;
  s->path = path;
  s->name = path.string();
  s->mode = mode;
  s->src = io::open_mapped_source(path);
  return file(std::move(s));
}

file file::open_remote(const std::string& url, io::remote_options options, scan_mode mode) {
  auto s = std::make_unique<state>();
  s->kind = file_kind::remote;
  s->mode = mode;
  s->src = io::open_http_source(url, std::move(options));
  // The source's description hides credentials given in the URL.
  s->name = s->src->describe();
  return file(std::move(s));
}

file file::open_source(const std::string& source, scan_mode mode) {
  if (io::is_remote_url(source)) return open_remote(source, {}, mode);
  return open(source, mode);
}

file file::create(const std::filesystem::path& path) {
  // Missing parent directories are created, as the reference's
  // TensogramFile::create does (spec 07 C2.4 `tgm_file_create`).
  if (const std::filesystem::path parent = path.parent_path(); !parent.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec)
      throw io_error("cannot create " + path.string() + ": cannot create directory " + parent.string() +
                     ": " + ec.message());
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) throw io_error("cannot create " + path.string() + ": " + std::strerror(errno));
  ::close(fd);
  file f = open(path);
  f.state_->messages.emplace();
  return f;
}

file file::from_source(std::unique_ptr<io::byte_source> source, scan_mode mode) {
  if (!source) throw invalid_arg_error("file::from_source: null source");
  auto s = std::make_unique<state>();
  s->kind = file_kind::custom;
  s->name = source->describe();
  s->mode = mode;
  s->src = std::move(source);
  return file(std::move(s));
}

std::size_t file::message_count() {
  const std::lock_guard lock(state_->mu);
  return state_->list().size();
}

scan_entry file::message_extent(std::size_t i) {
  return state_->extent(i);
}

std::vector<scan_entry> file::message_extents() {
  const std::lock_guard lock(state_->mu);
  return state_->list();
}

buffer file::message_bytes(std::size_t i) {
  const scan_entry e = state_->extent(i);
  return state_->source()->read_one({e.offset, e.length});
}

std::vector<std::uint8_t> file::read_message(std::size_t i) {
  const buffer b = message_bytes(i);
  const auto* p = reinterpret_cast<const std::uint8_t*>(b.data());
  return std::vector<std::uint8_t>(p, p + b.size());
}

message file::decode_message(std::size_t i, const decode_options& options) {
  return tensogram::decode(message_bytes(i), options);
}

metadata file::decode_metadata(std::size_t i) {
  if (state_->kind == file_kind::mapped) return tensogram::decode_metadata(message_bytes(i).bytes());
  const scan_entry e = state_->extent(i);
  return metadata(
      io::first_metadata_of(state_->layout(i, e, *state_->source()).layout));  // shared, not copied
}

std::pair<metadata, std::vector<data_object_descriptor>> file::decode_descriptors(std::size_t i) {
  return tensogram::decode_descriptors(message_bytes(i).bytes());
}

message file::decode_object(std::size_t i, std::size_t object_index, const decode_options& options) {
  if (state_->kind == file_kind::mapped)
    return tensogram::decode_object(message_bytes(i), object_index, options);
  const scan_entry e = state_->extent(i);
  const std::shared_ptr<io::byte_source> src = state_->source();
  const io::loaded_layout l = state_->layout(i, e, *src);
  if (!l.whole.empty()) return tensogram::decode_object(l.whole, object_index, options);
  const std::vector<object_frame_extent>& objects = l.layout->layout.objects;
  if (object_index >= objects.size()) throw object_error(object_range_text(object_index, objects.size()));
  const object_frame_extent& o = objects[object_index];
  const buffer frame = src->read_one({e.offset + o.offset, o.length});
  std::vector<decoded_object> one;
  one.push_back(decode_data_frame(frame, object_index, options));
  // The cached layout's metadata, shared (aliasing the layout's ownership).
  return message(metadata(std::shared_ptr<const global_metadata>(l.layout, &l.layout->layout.metadata)),
                 std::move(one));
}

std::vector<buffer> file::decode_range(std::size_t i, std::size_t object_index,
                                       std::span<const std::pair<std::uint64_t, std::uint64_t>> ranges,
                                       const decode_options& options) {
  if (state_->kind == file_kind::mapped) {
    return tensogram::decode_range(message_bytes(i), object_index, ranges, options);
  }
  const scan_entry e = state_->extent(i);
  const std::shared_ptr<io::byte_source> src = state_->source();
  const io::loaded_layout l = state_->layout(i, e, *src);
  if (!l.whole.empty()) return tensogram::decode_range(l.whole, object_index, ranges, options);
  const std::vector<object_frame_extent>& objects = l.layout->layout.objects;
  if (object_index >= objects.size()) throw object_error(object_range_text(object_index, objects.size()));
  const object_frame_extent& o = objects[object_index];
  return decode_data_frame_range(src->read_one({e.offset + o.offset, o.length}), object_index, ranges,
                                 options);
}

namespace {

// Writes all of `bytes` at the end of `fd`; on failure the file is cut back
// to `old_size` so a full disk or a size limit leaves no partial message.
void append_all(int fd, const std::string& name, std::uint64_t old_size, std::span<const std::byte> bytes) {
  const std::byte* p = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOSPC;
      // Best effort: if even the truncate fails, the partial tail is
      // skipped by every scan (spec 01 §16.2) and earlier messages stay.
      (void)::ftruncate(fd, static_cast<::off_t>(old_size));
      throw io_error("cannot append " + std::to_string(bytes.size()) + " bytes to " + name + " at offset " +
                     std::to_string(old_size) + ": " + std::strerror(err) +
                     " (file left at its previous length)");
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

}  // namespace

void file::append_raw(std::span<const std::byte> message_bytes) {
  state& s = *state_;
  if (s.kind == file_kind::remote || s.kind == file_kind::custom) {
    throw invalid_arg_error("cannot append to " + s.name + ": not a local file");
  }
  // Exactly one whole message, so the file stays a sequence of messages.
  const std::vector<scan_entry> found = format::forward_scan(message_bytes, 0, message_bytes.size());
  if (found.size() != 1 || found[0].offset != 0 || found[0].length != message_bytes.size()) {
    throw invalid_arg_error("append to " + s.name + ": the " + std::to_string(message_bytes.size()) +
                            " bytes given are not exactly one whole message");
  }
  const std::lock_guard append_lock(s.append_mu);
  const int fd = ::open(s.path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) throw io_error("cannot open " + s.name + " for appending: " + std::strerror(errno));
  struct closer {
    int fd;
    ~closer() { ::close(fd); }
  } guard{fd};
  // An exclusive advisory lock for the whole append, released by close:
  // another process appending to the same file (through this library, or
  // any program that takes flock(LOCK_EX) too) waits, so two messages never
  // interleave, and the cut-back below can only remove our own bytes. The
  // size is read under the lock. O_APPEND alone is not enough: a large
  // message takes several write(2) calls.
  // A file system without locks (ENOLCK, EOPNOTSUPP) still gets the
  // append, as before: one writer at a time is then the caller's affair.
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    if (errno == ENOLCK || errno == EOPNOTSUPP || errno == EINVAL) break;
    throw io_error("cannot lock " + s.name + " for appending: " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw io_error("cannot stat " + s.name + ": " + std::strerror(errno));
  const auto old_size = static_cast<std::uint64_t>(st.st_size);
  append_all(fd, s.name, old_size, message_bytes);

  const std::lock_guard lock(s.mu);
  if (s.messages) {
    // The new message follows the last one known; anything else before it
    // (a tail left by an interrupted append) calls for a fresh scan.
    const std::uint64_t known_end =
        s.messages->empty() ? 0 : s.messages->back().offset + s.messages->back().length;
    if (known_end == old_size) {
      s.messages->push_back(scan_entry{static_cast<std::size_t>(old_size), message_bytes.size()});
      s.flags.push_back(format::read_preamble(message_bytes).flags);
    } else {
      s.messages.reset();
      s.flags.clear();
    }
  }
  // A mapping covers the old length only: map again on next use.
  if (s.kind == file_kind::mapped) s.src = io::open_mapped_source(s.path);
}

void file::append_raw(const std::uint8_t* data, std::size_t len) {
  if (data == nullptr && len != 0) throw invalid_arg_error("append_raw: null buffer with non-zero length");
  append_raw(std::span<const std::byte>(reinterpret_cast<const std::byte*>(data), len));
}

void file::append_raw(const std::vector<std::uint8_t>& message_bytes) {
  append_raw(message_bytes.data(), message_bytes.size());
}

void file::append(const global_metadata& metadata, std::span<const object_input> objects,
                  const encode_options& options) {
  append_raw(encode(metadata, objects, options));
}

void file::append(const std::string& metadata_json,
                  const std::vector<std::pair<const std::uint8_t*, std::size_t>>& objects,
                  const encode_options& options) {
  append_raw(encode(metadata_json, objects, options));
}

const std::filesystem::path& file::path() const noexcept {
  return state_->path;
}

std::string file::source_name() const {
  return state_->name;
}

bool file::is_remote() const noexcept {
  return state_->kind == file_kind::remote;
}

void file::check_head() {
  if (is_remote()) check_source_head(*state_->source());
}

io::byte_source& file::source() {
  return *state_->source();
}

}  // namespace tensogram

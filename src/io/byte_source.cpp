// Local and in-memory byte sources (include/tensogram/io/byte_source.hpp).
#include "tensogram/io/byte_source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>

#include "src/core/unique_fd.hpp"
#include "tensogram/core/error.hpp"

namespace tensogram::io {

namespace {

std::string range_text(const byte_range& r) {
  return "[" + std::to_string(r.offset) + ", +" + std::to_string(r.length) + ")";
}

// Every range must lie inside the source: a caller asking past the end has
// mis-parsed a length, and a short read must not pass for data.
void check_ranges(std::span<const byte_range> ranges, std::uint64_t size, const std::string& name) {
  for (const byte_range& r : ranges) {
    if (r.offset > size || r.length > size - r.offset) {
      throw io_error("read of bytes " + range_text(r) + " past the end of " + name + " (" +
                     std::to_string(size) + " bytes)");
    }
  }
}

using tensogram::detail::unique_fd;

// The reference's texts for a local path that cannot be opened (spec 08
// §1.8, §7.1): "file not found: <path>", else the OS's reason.
[[noreturn]] void throw_open_error(const std::filesystem::path& path, int err) {
  if (err == ENOENT) throw io_error("file not found: " + path.string());
  throw io_error("cannot open " + path.string() + ": " + std::strerror(err));
}

// Positional reads (`pread`) on one descriptor: no shared file offset, so
// any number of threads read concurrently without locking.
class local_source final : public byte_source {
 public:
  // Opened at once, as the reference opens its file handle in `open` (a
  // missing path fails there, spec 08 §7.1); reading stays lazy.
  explicit local_source(std::filesystem::path path) : path_(std::move(path)) {
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw_open_error(path_, errno);
    fd_ = unique_fd(fd);
  }

  std::uint64_t size() override {
    struct stat st {};
    if (::fstat(fd(), &st) != 0) {
      throw io_error("cannot stat " + path_.string() + ": " + std::strerror(errno));
    }
    // Not cached: appends through `file` grow the file under us.
    return static_cast<std::uint64_t>(st.st_size);
  }

  std::vector<buffer> read(std::span<const byte_range> ranges) override {
    check_ranges(ranges, size(), path_.string());
    std::vector<buffer> out;
    out.reserve(ranges.size());
    std::uint64_t total = 0;
    for (const byte_range& r : ranges) {
      buffer b = buffer::allocate(static_cast<std::size_t>(r.length));
      std::size_t done = 0;
      while (done < r.length) {
        const ::ssize_t n = ::pread(fd(), b.mutable_data() + done, static_cast<std::size_t>(r.length) - done,
                                    static_cast<::off_t>(r.offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          throw io_error(
              "cannot read bytes " + range_text(r) + " of " + path_.string() + ": " +
              (n == 0 ? std::string("unexpected end of file") : std::string(std::strerror(errno))));
        }
        done += static_cast<std::size_t>(n);
      }
      total += r.length;
      out.push_back(std::move(b));
    }
    count(ranges.size(), 1, total);
    return out;
  }

  std::string describe() const override { return path_.string(); }

 private:
  int fd() const noexcept { return fd_.get(); }

  std::filesystem::path path_;
  unique_fd fd_;
};

// Reads served from a buffer already in memory: a mapping of a file or
// bytes given by the caller. Reads are slices sharing the buffer's lifetime,
// never copies.
class memory_source final : public byte_source {
 public:
  // The path must exist now (as for local_source); the mapping is made by
  // the first read.
  memory_source(std::filesystem::path path, std::string name)
      : path_(std::move(path)), name_(std::move(name)) {
    struct stat st {};
    if (::stat(path_.c_str(), &st) != 0) throw_open_error(path_, errno);
  }
  memory_source(buffer bytes, std::string name) : bytes_(std::move(bytes)), name_(std::move(name)) {
    std::call_once(mapped_, [] {});
  }

  std::uint64_t size() override { return whole().size(); }

  std::vector<buffer> read(std::span<const byte_range> ranges) override {
    const buffer& all = whole();
    check_ranges(ranges, all.size(), name_);
    std::vector<buffer> out;
    out.reserve(ranges.size());
    std::uint64_t total = 0;
    for (const byte_range& r : ranges) {
      out.push_back(all.slice(static_cast<std::size_t>(r.offset), static_cast<std::size_t>(r.length)));
      total += r.length;
    }
    count(ranges.size(), 1, total);
    return out;
  }

  const buffer* mapping() noexcept override {
    try {
      return &whole();
    } catch (const error&) {
      return nullptr;
    }
  }

  std::string describe() const override { return name_; }

 private:
  const buffer& whole() {
    std::call_once(mapped_, [&] { bytes_ = buffer::map_file(path_); });
    return bytes_;
  }

  std::filesystem::path path_;
  std::once_flag mapped_;
  buffer bytes_;
  std::string name_;
};

}  // namespace

std::unique_ptr<byte_source> open_local_source(std::filesystem::path path) {
  return std::make_unique<local_source>(std::move(path));
}

std::unique_ptr<byte_source> open_mapped_source(std::filesystem::path path) {
  std::string name = path.string();
  return std::make_unique<memory_source>(std::move(path), std::move(name));
}

std::unique_ptr<byte_source> open_memory_source(buffer bytes, std::string name) {
  return std::make_unique<memory_source>(std::move(bytes), std::move(name));
}

}  // namespace tensogram::io

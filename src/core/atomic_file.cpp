// Temp-file-and-rename writes (include/tensogram/core/atomic_file.hpp): a failure
// (full disk, bad input found late, a crash) never truncates or clobbers a
// file that was already there, and a killed writer leaves no temporary file
// that nobody removes.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <string_view>

#include "src/core/unique_fd.hpp"
#include "tensogram/core/atomic_file.hpp"
#include "tensogram/core/error.hpp"

namespace tensogram {

namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what, int err) {
  throw io_error("cannot write " + path.string() + ": " + what + ": " + std::strerror(err));
}

// `.<name>.tmp.`: the prefix of every temporary name for `destination`.
std::string temp_prefix(const std::filesystem::path& destination) {
  // Built by appending: GCC 12 at -O3 reports a false -Wrestrict for
  // `"." + std::string` (GCC bug 105329).
  std::string name = ".";
  name += destination.filename().string();
  name += ".tmp.";
  return name;
}

std::filesystem::path directory_of(const std::filesystem::path& destination) {
  return destination.has_parent_path() ? destination.parent_path() : std::filesystem::path(".");
}

// A fresh temporary name `.<name>.tmp.<pid>.<random>`; the pid lets a later
// writer tell a dead writer's file from a live one's.
std::string temp_name(const std::string& prefix, std::random_device& rd) {
  std::string name = prefix;
  name += std::to_string(::getpid());
  name += '.';
  name += std::to_string(rd());
  return name;
}

// The pid in `.<name>.tmp.<pid>.<n>`, or 0 when `entry` is not such a name.
::pid_t temp_owner(std::string_view entry, std::string_view prefix) {
  if (entry.substr(0, prefix.size()) != prefix) return 0;
  entry.remove_prefix(prefix.size());
  const std::size_t dot = entry.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == entry.size()) return 0;
  for (const char c : entry.substr(dot + 1)) {
    if (c < '0' || c > '9') return 0;
  }
  long pid = 0;
  const auto [end, ec] = std::from_chars(entry.data(), entry.data() + dot, pid);
  if (ec != std::errc() || end != entry.data() + dot || pid <= 0) return 0;
  return static_cast<::pid_t>(pid);
}

// Linux O_TMPFILE: an unnamed file in `dir`, linked in only at commit. Not
// every file system has it (EOPNOTSUPP, EISDIR or EINVAL from older
// kernels), and linking it needs /proc (see `link_unnamed`).
int open_unnamed(const std::filesystem::path& dir) {
#ifdef O_TMPFILE
  if (::access("/proc/self/fd", X_OK) != 0) return -1;
  // Mode 0666: the umask decides the final permissions, as for any new file.
  return ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
#else
  (void)dir;
  return -1;
#endif
}

// Gives the unnamed file `fd` the name `target`; false with errno set.
bool link_unnamed(int fd, const std::filesystem::path& target) {
  const std::string self = "/proc/self/fd/" + std::to_string(fd);
  return ::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, target.c_str(), AT_SYMLINK_FOLLOW) == 0;
}

// Makes a rename in `dir` durable (a power loss could otherwise undo it).
// File systems that cannot sync a directory (EINVAL) have nothing to do.
void sync_directory(const std::filesystem::path& dir, const std::filesystem::path& destination) {
  const detail::unique_fd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!d) fail(destination, "cannot open directory " + dir.string() + " to sync it", errno);
  if (::fsync(d.get()) != 0 && errno != EINVAL && errno != ENOTSUP) {
    fail(destination, "fsync of directory " + dir.string(), errno);
  }
}

}  // namespace

std::size_t remove_stale_temp_files(const std::filesystem::path& destination) {
  const std::filesystem::path dir = directory_of(destination);
  const std::string prefix = temp_prefix(destination);
  const std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), &::closedir);
  if (!d) return 0;
  std::size_t removed = 0;
  const ::pid_t self = ::getpid();
  while (const dirent* e = ::readdir(d.get())) {
    const ::pid_t owner = temp_owner(e->d_name, prefix);
    // Our own pid may be another thread's write in progress; a pid that
    // signals (or refuses with EPERM) is alive. Only ESRCH proves the
    // writer is gone — a reused pid merely keeps a stale file a while.
    if (owner == 0 || owner == self) continue;
    if (::kill(owner, 0) == 0 || errno != ESRCH) continue;
    if (::unlinkat(::dirfd(d.get()), e->d_name, 0) == 0) ++removed;
  }
  return removed;
}

atomic_file_writer::atomic_file_writer(std::filesystem::path destination, atomic_write_options options)
    : destination_(std::move(destination)), dir_(directory_of(destination_)), options_(options) {
  // A writer of this destination killed before its rename (any fallback
  // writer, or one killed between its link and its rename) left a named
  // temporary file: remove it now, before we take more space.
  (void)remove_stale_temp_files(destination_);
  fd_ = open_unnamed(dir_);
  if (fd_ >= 0) {
    unnamed_ = true;
    return;
  }
  std::random_device rd;
  const std::string prefix = temp_prefix(destination_);
  // O_EXCL plus a random suffix makes the name ours alone; a few retries
  // cover the (unlikely) collision.
  for (int attempt = 0; attempt < 16 && fd_ < 0; ++attempt) {
    temp_ = dir_ / temp_name(prefix, rd);
    fd_ = ::open(temp_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0 && errno != EEXIST) fail(destination_, "cannot create temporary file", errno);
  }
  if (fd_ < 0) fail(destination_, "cannot create temporary file", EEXIST);
}

atomic_file_writer::~atomic_file_writer() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temp_.empty()) ::unlink(temp_.c_str());
}

void atomic_file_writer::write(std::span<const std::byte> bytes) {
  if (fd_ < 0) throw io_error("cannot write " + destination_.string() + ": already committed");
  const std::byte* p = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(destination_, "write", errno);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

void atomic_file_writer::commit() {
  if (fd_ < 0) throw io_error("cannot write " + destination_.string() + ": already committed");
  // fsync before rename: otherwise a power loss can leave the new name
  // pointing at an empty file on some file systems (ext4 without
  // auto_da_alloc, xfs).
  if (options_.sync && ::fsync(fd_) != 0) fail(destination_, "fsync", errno);
  if (unnamed_) {
    // A destination that does not exist yet gets the file directly: no
    // name ever points at a partial file and no temporary name is needed.
    // Otherwise link it under a temporary name and rename that over the
    // destination (link(2) never replaces). A kill between the two leaves
    // a named temporary file, which the next writer removes.
    if (!link_unnamed(fd_, destination_)) {
      if (errno != EEXIST) fail(destination_, "cannot link the new file", errno);
      std::random_device rd;
      const std::string prefix = temp_prefix(destination_);
      bool linked = false;
      for (int attempt = 0; attempt < 16 && !linked; ++attempt) {
        temp_ = dir_ / temp_name(prefix, rd);
        linked = link_unnamed(fd_, temp_);
        if (!linked && errno != EEXIST) {
          const int err = errno;
          temp_.clear();
          fail(destination_, "cannot link the new file", err);
        }
      }
      if (!linked) {
        temp_.clear();
        fail(destination_, "cannot link the new file", EEXIST);
      }
    }
  }
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail(destination_, "close", errno);
  if (!temp_.empty()) {
    if (::rename(temp_.c_str(), destination_.c_str()) != 0) fail(destination_, "rename", errno);
  }
  committed_ = true;
  if (options_.sync) sync_directory(dir_, destination_);
}

void write_file_atomically(const std::filesystem::path& destination, std::span<const std::byte> bytes,
                           atomic_write_options options) {
  atomic_file_writer w(destination, options);
  w.write(bytes);
  w.commit();
}

}  // namespace tensogram

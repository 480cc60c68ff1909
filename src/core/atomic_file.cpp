// Temp-file-and-rename writes (include/tensogram/core/atomic_file.hpp): a failure
// (full disk, bad input found late, a crash) never truncates or clobbers a
// file that was already there.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <string>

#include "tensogram/core/atomic_file.hpp"
#include "tensogram/core/error.hpp"

namespace tensogram {

namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what, int err) {
  throw io_error("cannot write " + path.string() + ": " + what + ": " + std::strerror(err));
}

}  // namespace

atomic_file_writer::atomic_file_writer(std::filesystem::path destination)
    : destination_(std::move(destination)) {
  const std::filesystem::path dir = destination_.has_parent_path() ? destination_.parent_path() : ".";
  std::random_device rd;
  // O_EXCL plus a random suffix makes the name ours alone; a few retries
  // cover the (unlikely) collision. Mode 0666 lets the umask decide the
  // final permissions, as for any newly created file.
  for (int attempt = 0; attempt < 16 && fd_ < 0; ++attempt) {
    // Built by appending: GCC 12 at -O3 reports a false -Wrestrict for
    // `"." + std::string` (GCC bug 105329).
    std::string name = ".";
    name += destination_.filename().string();
    name += ".tmp.";
    name += std::to_string(::getpid());
    name += '.';
    name += std::to_string(rd());
    temp_ = dir / name;
    fd_ = ::open(temp_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0 && errno != EEXIST) fail(destination_, "cannot create temporary file", errno);
  }
  if (fd_ < 0) fail(destination_, "cannot create temporary file", EEXIST);
}

atomic_file_writer::~atomic_file_writer() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_.c_str());
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
  // fsync before rename: otherwise a crash can leave the new name pointing
  // at an empty file on some file systems.
  if (::fsync(fd_) != 0) fail(destination_, "fsync", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail(destination_, "close", errno);
  if (::rename(temp_.c_str(), destination_.c_str()) != 0) fail(destination_, "rename", errno);
  committed_ = true;
}

void write_file_atomically(const std::filesystem::path& destination, std::span<const std::byte> bytes) {
  atomic_file_writer w(destination);
  w.write(bytes);
  w.commit();
}

}  // namespace tensogram

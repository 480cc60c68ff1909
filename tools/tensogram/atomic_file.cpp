#include "atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <string>

#include "tool_error.hpp"

namespace tensogram::cli {

namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what, int err) {
  throw tool_error("cannot write " + path.string() + ": " + what + ": " + std::strerror(err));
}

// Owns the temp file until `commit()`: closes the descriptor and, unless
// committed, unlinks the temp path on every exit path.
class temp_file {
 public:
  explicit temp_file(const std::filesystem::path& target) : target_(target) {
    const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
    std::random_device rd;
    // O_EXCL plus a random suffix makes the name ours alone; a few retries
    // cover the (unlikely) collision. Mode 0666 lets the umask decide the
    // final permissions, as for any newly created file.
    for (int attempt = 0; attempt < 16 && fd_ < 0; ++attempt) {
      // Built by appending: GCC 12 at -O3 reports a false -Wrestrict for
      // `"." + std::string` (GCC bug 105329).
      std::string name = ".";
      name += target.filename().string();
      name += ".tmp.";
      name += std::to_string(::getpid());
      name += '.';
      name += std::to_string(rd());
      path_ = dir / name;
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ < 0 && errno != EEXIST) fail(target_, "cannot create temporary file", errno);
    }
    if (fd_ < 0) fail(target_, "cannot create temporary file", EEXIST);
  }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;
  ~temp_file() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(path_.c_str());
  }

  void write_all(std::span<const std::byte> bytes) {
    const std::byte* p = bytes.data();
    std::size_t left = bytes.size();
    while (left > 0) {
      const ssize_t n = ::write(fd_, p, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        fail(target_, "write", errno);
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
  }

  void commit() {
    // fsync before rename: otherwise a crash can leave the new name pointing
    // at an empty file on some file systems.
    if (::fsync(fd_) != 0) fail(target_, "fsync", errno);
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail(target_, "close", errno);
    if (::rename(path_.c_str(), target_.c_str()) != 0) fail(target_, "rename", errno);
    committed_ = true;
  }

 private:
  std::filesystem::path target_;
  std::filesystem::path path_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::span<const std::byte> bytes) {
  temp_file tmp(path);
  tmp.write_all(bytes);
  tmp.commit();
}

}  // namespace tensogram::cli

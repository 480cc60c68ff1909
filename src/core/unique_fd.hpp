// A POSIX file descriptor owned by one object and closed on destruction.
// Private to the project (not installed): used by the local byte source, the
// QUIC engine's UDP sockets and the tests' UDP proxy, so there is one copy.
#pragma once

#include <unistd.h>

#include <utility>

namespace tensogram::detail {

class unique_fd {
 public:
  unique_fd() = default;
  explicit unique_fd(int fd) noexcept : fd_(fd) {}
  unique_fd(unique_fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  unique_fd& operator=(unique_fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  unique_fd(const unique_fd&) = delete;
  unique_fd& operator=(const unique_fd&) = delete;
  ~unique_fd() { reset(); }
  [[nodiscard]] int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  void reset() noexcept {
    // close's result is ignored: the descriptor is released even when it
    // reports an error (POSIX leaves its state unspecified; Linux frees it),
    // and a retry could close a descriptor another thread just opened.
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

}  // namespace tensogram::detail

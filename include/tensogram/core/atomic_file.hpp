// Atomic file replacement: a new file is written beside its destination and
// renamed into place only when complete (rename(2) is atomic within a file
// system), so readers never see a half-written file and a crash never loses
// the previous one. Used by the message layer (the streaming encoder's path
// sink) and the io layer (file rewrites), hence its place in core.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>

namespace tensogram {

/// Writes a file next to its destination and renames it into place on
/// `commit()`: readers never see a half-written file and an existing file is
/// replaced only by a complete new one. Without `commit()` (an exception,
/// an early return) the temporary file is removed.
class atomic_file_writer {
 public:
  explicit atomic_file_writer(std::filesystem::path destination);
  atomic_file_writer(const atomic_file_writer&) = delete;
  atomic_file_writer& operator=(const atomic_file_writer&) = delete;
  ~atomic_file_writer();

  void write(std::span<const std::byte> bytes);
  /// The descriptor of the temporary file (for seeking writers).
  [[nodiscard]] int fd() const noexcept { return fd_; }
  [[nodiscard]] const std::filesystem::path& temp_path() const noexcept { return temp_; }
  /// Flushes to disk and renames over the destination.
  void commit();

 private:
  std::filesystem::path destination_;
  std::filesystem::path temp_;
  int fd_ = -1;
  bool committed_ = false;
};

/// Writes `bytes` to `destination` atomically (temp file + rename).
void write_file_atomically(const std::filesystem::path& destination, std::span<const std::byte> bytes);

}  // namespace tensogram

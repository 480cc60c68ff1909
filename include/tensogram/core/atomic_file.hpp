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

/// How hard a replacement works to survive a power loss (a killed process
/// is survived either way: the destination is always the old or the new
/// file).
struct atomic_write_options {
  /// fsync the new file before it is renamed into place and the directory
  /// after: once `commit()` returns, the new file survives a power loss.
  /// Without it (`--no-sync` in the CLIs) a power loss shortly after the
  /// commit may leave the old file, or on some file systems an empty or
  /// partial new one.
  bool sync = true;
};

/// Writes a file next to its destination and renames it into place on
/// `commit()`: readers never see a half-written file and an existing file is
/// replaced only by a complete new one. Without `commit()` (an exception,
/// an early return) the temporary file is removed.
///
/// Where the file system supports it (Linux `O_TMPFILE`: ext4, xfs, btrfs,
/// tmpfs) the new file has no name until `commit()` links it in, so a
/// process killed while writing leaves nothing behind. Elsewhere it is
/// `.<name>.tmp.<pid>.<n>`, and the next writer of the same destination
/// removes such files whose process is gone.
class atomic_file_writer {
 public:
  explicit atomic_file_writer(std::filesystem::path destination, atomic_write_options options = {});
  atomic_file_writer(const atomic_file_writer&) = delete;
  atomic_file_writer& operator=(const atomic_file_writer&) = delete;
  ~atomic_file_writer();

  void write(std::span<const std::byte> bytes);
  /// The descriptor of the temporary file (for seeking writers).
  [[nodiscard]] int fd() const noexcept { return fd_; }
  /// The temporary file's name; empty while it is an unnamed file.
  [[nodiscard]] const std::filesystem::path& temp_path() const noexcept { return temp_; }
  /// Flushes to disk (unless `sync` is off) and renames over the destination.
  void commit();

 private:
  std::filesystem::path destination_;
  std::filesystem::path dir_;
  std::filesystem::path temp_;
  atomic_write_options options_;
  int fd_ = -1;
  bool unnamed_ = false;
  bool committed_ = false;
};

/// Writes `bytes` to `destination` atomically (temp file + rename).
void write_file_atomically(const std::filesystem::path& destination, std::span<const std::byte> bytes,
                           atomic_write_options options = {});

/// Removes the temporary files `.<name>.tmp.<pid>.<n>` that writers of
/// `destination` killed before their rename left beside it: those whose
/// process no longer exists. Returns how many were removed. The writer calls
/// this itself; exposed for tools and tests.
std::size_t remove_stale_temp_files(const std::filesystem::path& destination);

}  // namespace tensogram

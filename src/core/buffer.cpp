#include "tensogram/core/buffer.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <string>

#include "tensogram/core/error.hpp"
#include "tensogram/core/memory.hpp"

namespace tensogram {

namespace {

// Owns one read-only mapping; unmaps on destruction.
class file_mapping {
 public:
  file_mapping(void* addr, std::size_t size) noexcept : addr_(addr), size_(size) {}
  file_mapping(const file_mapping&) = delete;
  file_mapping& operator=(const file_mapping&) = delete;
  ~file_mapping() {
    if (addr_ != nullptr) ::munmap(addr_, size_);
  }
  [[nodiscard]] const std::byte* data() const noexcept { return static_cast<const std::byte*>(addr_); }

 private:
  void* addr_;
  std::size_t size_;
};

// Closes a file descriptor on scope exit.
class fd_guard {
 public:
  explicit fd_guard(int fd) noexcept : fd_(fd) {}
  fd_guard(const fd_guard&) = delete;
  fd_guard& operator=(const fd_guard&) = delete;
  ~fd_guard() {
    if (fd_ >= 0) ::close(fd_);
  }
  [[nodiscard]] int get() const noexcept { return fd_; }

 private:
  int fd_;
};

[[noreturn]] void throw_io(const std::filesystem::path& path, const char* what, int err) {
  if (err == ENOENT) throw io_error("file not found: " + path.string());
  throw io_error(path.string() + ": " + what + ": " + std::strerror(err));
}

}  // namespace

buffer buffer::owned(std::vector<std::byte> bytes) {
  auto holder = std::make_shared<std::vector<std::byte>>(std::move(bytes));
  buffer b;
  b.bytes_ = std::span<const std::byte>(holder->data(), holder->size());
  b.keep_alive_ = std::move(holder);
  b.kind_ = ownership::owned;
  b.writable_ = true;
  return b;
}

buffer buffer::allocate(std::size_t size) {
// Rounded up so that the block starts just after a huge-page boundary
// (huge_page_capacity); the span is still `size` bytes.
#if defined(__cpp_lib_smart_ptr_for_overwrite)
  std::shared_ptr<std::byte[]> holder = std::make_shared_for_overwrite<std::byte[]>(huge_page_capacity(size));
#else
  // libc++ < 16 (the WebAssembly build): no make_shared_for_overwrite.
  std::shared_ptr<std::byte[]> holder(make_uninitialized_array<std::byte>(huge_page_capacity(size)));
#endif
  advise_huge_pages(holder.get(), size);  // before the caller's first touch
  buffer b;
  b.bytes_ = std::span<const std::byte>(holder.get(), size);
  b.keep_alive_ = std::move(holder);
  b.kind_ = ownership::owned;
  b.writable_ = true;
  return b;
}

buffer buffer::borrowed(std::span<const std::byte> bytes) noexcept {
  buffer b;
  b.bytes_ = bytes;
  b.kind_ = ownership::borrowed;
  return b;
}

buffer buffer::map_file(const std::filesystem::path& path) {
  fd_guard fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) throw_io(path, "open", errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw_io(path, "stat", errno);
  if (!S_ISREG(st.st_mode)) throw io_error(path.string() + ": not a regular file");
  const auto size = static_cast<std::size_t>(st.st_size);
  buffer b;
  b.kind_ = ownership::mapped;
  if (size == 0) return b;
  void* addr = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (addr == MAP_FAILED) throw_io(path, "mmap", errno);
  auto mapping = std::make_shared<file_mapping>(addr, size);
  b.bytes_ = std::span<const std::byte>(mapping->data(), size);
  b.keep_alive_ = std::move(mapping);
  return b;
}

std::byte* buffer::mutable_data() noexcept {
  // Owned buffers are created writable; their bytes live in memory this
  // object allocated, so casting away const is sound.
  return writable_ ? const_cast<std::byte*>(bytes_.data()) : nullptr;
}

buffer buffer::slice(std::size_t offset, std::size_t length) const {
  if (offset > bytes_.size() || length > bytes_.size() - offset) {
    throw invalid_arg_error("slice [" + std::to_string(offset) + ", +" + std::to_string(length) +
                            ") outside buffer of " + std::to_string(bytes_.size()) + " bytes");
  }
  buffer b = *this;
  b.bytes_ = bytes_.subspan(offset, length);
  b.writable_ = false;
  return b;
}

bool buffer::contains(std::span<const std::byte> inner) const noexcept {
  if (inner.empty()) return true;
  const auto lo = reinterpret_cast<std::uintptr_t>(bytes_.data());
  const auto hi = lo + bytes_.size();
  const auto p = reinterpret_cast<std::uintptr_t>(inner.data());
  return p >= lo && p + inner.size() <= hi;
}

}  // namespace tensogram

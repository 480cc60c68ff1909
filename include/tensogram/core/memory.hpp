// Large output buffers without the first-touch tax.
//
// A fresh multi-megabyte buffer is paid for page by page on its first
// touch; in the VMs we measure on a 4 KiB page fault costs microseconds, so
// zero-filling a new 128 MiB vector takes ~0.36 s against ~10 ms on 2 MiB
// transparent huge pages (docs/benchmarks.md, "Fresh allocations"). Linux's
// default THP mode is "madvise": a mapping gets huge pages only when asked.
// These helpers ask, before the first touch, for every buffer a codec or
// the encoder is about to fill. Contents and sizes are unaffected.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <new>
#include <vector>

namespace tensogram {

/// Buffers smaller than this are left alone (the advice is a system call):
/// one huge page, the least a buffer must span to hold one.
inline constexpr std::size_t huge_page_advice_threshold = std::size_t{2} << 20;

/// Advises transparent huge pages for the 2 MiB-aligned interior of
/// [data, data + size) when size >= huge_page_advice_threshold, and for the
/// huge page holding its first or last byte when the buffer begins less
/// than 4 KiB after a boundary or ends less than 8 KiB before one (as a
/// buffer sized by huge_page_capacity does). A no-op on other systems and
/// where THP is disabled; never fails.
void advise_huge_pages(void* data, std::size_t size) noexcept;

/// The allocation size to ask for a buffer of `size` bytes: from 4 MiB on,
/// size + 4 KiB rounded up to 2 MiB, less 4 KiB, so that glibc's mapping
/// for it (block and header) is a whole number of 2 MiB pages, which Linux
/// aligns to 2 MiB: the buffer then starts just after a huge-page boundary
/// and ends just before one, and advise_huge_pages covers its first and
/// last 2 MiB too. The extra capacity is never written, but the last huge
/// page is resident whole once touched, so smaller buffers keep their
/// size (a 2 MiB buffer would take 4; a 4 MiB one takes at most 6).
[[nodiscard]] std::size_t huge_page_capacity(std::size_t size) noexcept;

/// Reserves capacity for `size` bytes in `v` and advises huge pages for it,
/// so that the resize/insert that follows touches huge pages.
void reserve_advised(std::vector<std::byte>& v, std::size_t size);

/// Reserves room for `n` elements in `v` and advises huge pages for it, for
/// tables of hundreds of thousands of rows (a 200 k-tensor header's), so
/// that filling them takes few page faults. Only the new allocation is
/// advised; a vector with room for `n` is left as it is. A large table gets
/// the room of huge_page_capacity, so that its first and last 2 MiB are
/// huge pages too (without it, up to 1,024 small pages of a 10 MB table).
template <typename T>
void reserve_advised(std::vector<T>& v, std::size_t n) {
  if (v.capacity() >= n) return;
  v.reserve(n <= v.max_size() ? std::max(n, huge_page_capacity(n * sizeof(T)) / sizeof(T)) : n);
  advise_huge_pages(v.data(), v.capacity() * sizeof(T));
}

/// An allocator whose large blocks get huge_page_capacity and the advice
/// before anything touches them, for a table that is built at its full size
/// (`std::vector<T, advised_allocator<T>> v(n)`): its elements are
/// constructed as it is allocated, so reserve_advised cannot come between,
/// and elements that cannot move (holding an atomic) cannot be appended.
template <typename T>
struct advised_allocator {
  using value_type = T;
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "over-aligned elements are not supported");

  advised_allocator() noexcept = default;
  template <typename U>
  explicit(false) advised_allocator(const advised_allocator<U>& /*other*/) noexcept {}

  [[nodiscard]] T* allocate(std::size_t n) {
    if (n > std::size_t(-1) / 2 / sizeof(T)) throw std::bad_array_new_length();
    const std::size_t bytes = huge_page_capacity(n * sizeof(T));
    void* const p = ::operator new(bytes);
    advise_huge_pages(p, bytes);
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t /*n*/) noexcept { ::operator delete(p); }

  template <typename U>
  friend bool operator==(const advised_allocator& /*a*/, const advised_allocator<U>& /*b*/) noexcept {
    return true;
  }
};

/// Spare capacity a codec leaves after a payload it returns, so that the
/// buffered encoder can build a one-object message around the payload in
/// the same vector (message/encode.cpp) instead of copying it into a second
/// one. Capacity that is never touched costs no memory.
inline constexpr std::size_t message_headroom = std::size_t{64} << 10;

/// A vector of `size` zero bytes whose storage (with capacity for `size +
/// headroom`) was advised before the zero fill (the fill then runs at memset
/// speed).
[[nodiscard]] std::vector<std::byte> make_advised_bytes(std::size_t size, std::size_t headroom = 0);

/// std::make_unique_for_overwrite<T[]>(n) (C++20): n default-initialised
/// elements. Standard libraries without it (libc++ < 16, which the
/// WebAssembly build's Emscripten ships, docs/wasm.md) get the same thing
/// spelled out.
template <typename T>
[[nodiscard]] std::unique_ptr<T[]> make_uninitialized_array(std::size_t n) {
#if defined(__cpp_lib_smart_ptr_for_overwrite)
  return std::make_unique_for_overwrite<T[]>(n);
#else
  return std::unique_ptr<T[]>(new T[n]);  // default-initialised, as the standard function does
#endif
}

}  // namespace tensogram

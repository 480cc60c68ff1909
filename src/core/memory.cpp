#include "tensogram/core/memory.hpp"

#include <cerrno>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
// Linux >= 6.1 (uapi asm-generic/mman-common.h); glibc 2.36 lacks the name.
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#endif

namespace tensogram {

void advise_huge_pages(void* data, std::size_t size) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (data == nullptr || size < huge_page_advice_threshold) return;
  constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  // A buffer from reserve_advised/buffer::allocate starts a few bytes
  // after a 2 MiB boundary (huge_page_capacity): the allocator's header
  // before it is in the same 4 KiB page, so the huge page from that
  // boundary is ours too.
  const std::uintptr_t below = begin & ~(huge - 1);
  const bool head = begin - below < 4096;
  const std::uintptr_t first = head ? below : (begin + huge - 1) & ~(huge - 1);
  // And its end a little before the next boundary, where glibc's mapping
  // for it ends: less than 4 KiB of slack, plus less than one element of a
  // table whose room was rounded down to whole elements (reserve_advised).
  // Without this the last 2 MiB of every such buffer faulted page by page.
  const std::uintptr_t end = begin + size;
  const std::uintptr_t above = (end + huge - 1) & ~(huge - 1);
  const std::uintptr_t last = above - end < 8192 ? above : end & ~(huge - 1);
  if (last <= first) return;
  // Failure only means no huge pages: EINVAL without THP support; ENOMEM
  // when part of the range is not mapped (past a buffer that ends near a
  // boundary by chance), where the mapped part is advised all the same.
  if (::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE) != 0 && errno != ENOMEM) return;
#if defined(MADV_COLLAPSE)
  // The allocator wrote its header before the advice, so the first 2 MiB
  // already has small pages and would fault 512 times; collapsing it now
  // (Linux >= 6.1; a no-op error elsewhere) costs one 2 MiB copy instead.
  if (head) (void)::madvise(reinterpret_cast<void*>(first), huge, MADV_COLLAPSE);
#endif
#else
  (void)data;
  (void)size;
#endif
}

std::size_t huge_page_capacity(std::size_t size) noexcept {
  constexpr std::size_t huge = std::size_t{2} << 20;
  constexpr std::size_t page = 4096;
  constexpr std::size_t rounded_from = std::size_t{4} << 20;  // see the header
  if (size < rounded_from || size > SIZE_MAX / 2) return size;
  return (size + page + huge - 1) / huge * huge - page;
}

void reserve_advised(std::vector<std::byte>& v, std::size_t size) {
  if (v.capacity() >= size) return;
  v.reserve(huge_page_capacity(size));
  // Only the part not yet touched needs the advice, but the whole block is
  // fresh: reserve moved the contents into a new allocation.
  advise_huge_pages(v.data(), v.capacity());
}

std::vector<std::byte> make_advised_bytes(std::size_t size, std::size_t headroom) {
  std::vector<std::byte> v;
  reserve_advised(v, size + headroom);
  v.resize(size);
  return v;
}

}  // namespace tensogram

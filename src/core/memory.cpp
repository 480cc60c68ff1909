#include "tensogram/core/memory.hpp"

#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace tensogram {

void advise_huge_pages(void* data, std::size_t size) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (data == nullptr || size < huge_page_advice_threshold) return;
  constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t first = (begin + huge - 1) & ~(huge - 1);
  const std::uintptr_t last = (begin + size) & ~(huge - 1);
  // Failure (EINVAL without THP support) only means no huge pages.
  if (last > first) (void)::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
  (void)data;
  (void)size;
#endif
}

void reserve_advised(std::vector<std::byte>& v, std::size_t size) {
  if (v.capacity() >= size) return;
  v.reserve(size);
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

// BlobRefs (spec 06 §6.4): where a String or List element's bytes lie in
// its tensor's heap. Part of <metatensor/file.hpp>.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

namespace metatensor {

/// A BlobRef (§6.4): `offset` and `length` in bytes within the tensor's heap.
struct blob_ref {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

namespace detail {

/// Reads the BlobRef stored at `p` (two little-endian U64; the host is
/// little-endian, see src/metatensor/view/file.cpp).
[[nodiscard]] inline blob_ref read_blob_ref(const std::byte* p) noexcept {
  blob_ref r;
  std::memcpy(&r.offset, p, 8);
  std::memcpy(&r.length, p + 8, 8);
  return r;
}
/// The blob a BlobRef at `ref_at` designates in `heap` (checked at open, §6.4).
[[nodiscard]] inline std::span<const std::byte> blob_at(std::span<const std::byte> heap,
                                                        const std::byte* ref_at) noexcept {
  const blob_ref r = read_blob_ref(ref_at);
  return {heap.data() + r.offset, static_cast<std::size_t>(r.length)};
}
[[nodiscard]] inline std::string_view as_text(std::span<const std::byte> b) noexcept {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

}  // namespace detail

}  // namespace metatensor

#include "tensogram/format/scan.hpp"

#include <algorithm>
#include <cstring>

#include "tensogram/core/byte_order.hpp"
#include "tensogram/format/preamble.hpp"
#include "tensogram/format/wire.hpp"

namespace tensogram::format {

namespace {

bool valid_preamble_at(std::span<const std::byte> bytes, std::size_t pos) noexcept {
  return has_start_magic(bytes.subspan(pos)) && load_be16(bytes.data() + pos + 8) == wire_version;
}

// First end magic in [from, bound), searched with memmem-like stepping.
std::optional<std::size_t> find_end_magic(std::span<const std::byte> bytes, std::size_t from,
                                          std::size_t bound) noexcept {
  if (bound < from + 8) return std::nullopt;
  const auto* base = reinterpret_cast<const char*>(bytes.data());
  const char* hit =
      static_cast<const char*>(::memmem(base + from, bound - from, end_magic.data(), end_magic.size()));
  if (hit == nullptr) return std::nullopt;
  return static_cast<std::size_t>(hit - base);
}

enum class back_result { hit, streaming_stop, none };

back_result backward_hop(std::span<const std::byte> bytes, std::size_t region_start, std::size_t bound_end,
                         std::uint64_t max_message_size, scan_entry& out) noexcept {
  if (bound_end < region_start + min_message_size) return back_result::none;
  if (!has_end_magic(bytes.subspan(bound_end - 8))) return back_result::none;
  const std::uint64_t len = load_be64(bytes.data() + bound_end - 16);
  if (len == 0) return back_result::streaming_stop;
  if (len > max_message_size) return back_result::none;
  if (len < min_message_size || len > bound_end - region_start) return back_result::none;
  const std::size_t m = bound_end - static_cast<std::size_t>(len);
  if (!valid_preamble_at(bytes, m)) return back_result::none;
  // The preamble's own length must agree, or this is not the message's start.
  if (load_be64(bytes.data() + m + 16) != len) return back_result::none;
  out = scan_entry{m, static_cast<std::size_t>(len)};
  return back_result::hit;
}

}  // namespace

std::optional<scan_entry> forward_hop(std::span<const std::byte> bytes, std::size_t pos,
                                      std::size_t bound) noexcept {
  if (bound > bytes.size() || pos > bound || bound - pos < min_message_size) return std::nullopt;
  if (!valid_preamble_at(bytes, pos)) return std::nullopt;
  const std::uint64_t len = load_be64(bytes.data() + pos + 16);
  if (len > 0) {
    if (len < min_message_size || len > bound - pos) return std::nullopt;
    const auto end = pos + static_cast<std::size_t>(len);
    if (!has_end_magic(bytes.subspan(end - 8))) return std::nullopt;
    return scan_entry{pos, static_cast<std::size_t>(len)};
  }
  if (auto q = find_end_magic(bytes, pos + preamble_size, bound)) {
    return scan_entry{pos, *q + 8 - pos};
  }
  return std::nullopt;
}

std::vector<scan_entry> forward_scan(std::span<const std::byte> bytes, std::size_t begin, std::size_t end) {
  std::vector<scan_entry> out;
  end = std::min(end, bytes.size());
  std::size_t pos = begin;
  while (pos + min_message_size <= end) {
    if (auto r = forward_hop(bytes, pos, end)) {
      out.push_back(*r);
      pos = r->offset + r->length;
      continue;
    }
    // Skip to the next candidate start magic rather than stepping one byte
    // at a time through large garbage regions.
    const auto* base = reinterpret_cast<const char*>(bytes.data());
    const char* next = static_cast<const char*>(
        ::memmem(base + pos + 1, end - pos - 1, start_magic.data(), start_magic.size()));
    if (next == nullptr) break;
    pos = static_cast<std::size_t>(next - base);
  }
  return out;
}

std::vector<scan_entry> scan(std::span<const std::byte> bytes, std::uint64_t max_message_size) {
  std::vector<scan_entry> fwd;
  std::vector<scan_entry> bwd;
  std::size_t f = 0;
  std::size_t b = bytes.size();
  for (;;) {
    if (f + min_message_size > b) break;
    auto r = forward_hop(bytes, f, b);
    if (!r) {
      // Hand the rest to the forward scan, which skips garbage.
      break;
    }
    fwd.push_back(*r);
    f = r->offset + r->length;
    if (f + min_message_size > b) break;
    scan_entry h;
    if (backward_hop(bytes, f, b, max_message_size, h) != back_result::hit) break;
    bwd.push_back(h);
    b = h.offset;
  }
  std::vector<scan_entry> mid = forward_scan(bytes, f, b);
  fwd.insert(fwd.end(), mid.begin(), mid.end());
  fwd.insert(fwd.end(), bwd.rbegin(), bwd.rend());
  return fwd;
}

}  // namespace tensogram::format

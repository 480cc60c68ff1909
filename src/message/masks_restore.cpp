#include "masks_restore.hpp"

#include <string>
#include <string_view>
#include <vector>

#include "tensogram/cbor/value.hpp"
#include "tensogram/core/dtype.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/message/masks.hpp"

namespace tensogram::detail {

namespace {

std::uint64_t mask_field(const cbor::value& entry, std::string_view kind, const char* key) {
  const cbor::value* v = entry.find(key);
  const auto u = v != nullptr ? v->as_uint64() : std::nullopt;
  if (!u) {
    throw metadata_error("failed to deserialize descriptor: masks." + std::string(kind) + "." + key +
                         " must be an unsigned integer");
  }
  return *u;
}

// Canonical NaN/Inf patterns (spec 02 §9) of one component, indexed like
// mask_kind_names.
std::uint64_t canonical_pattern(dtype t, std::size_t kind) {
  static constexpr std::uint64_t f16[] = {0x7E00, 0x7C00, 0xFC00};
  static constexpr std::uint64_t bf16[] = {0x7FC0, 0x7F80, 0xFF80};
  static constexpr std::uint64_t f32[] = {0x7FC00000, 0x7F800000, 0xFF800000};
  static constexpr std::uint64_t f64[] = {0x7FF8000000000000, 0x7FF0000000000000, 0xFFF0000000000000};
  switch (t) {
    case dtype::float16: return f16[kind];
    case dtype::bfloat16: return bf16[kind];
    case dtype::float32:
    case dtype::complex64: return f32[kind];
    default: return f64[kind];
  }
}

void store_component(std::byte* p, std::size_t width, std::uint64_t v, bool big) {
  for (std::size_t i = 0; i < width; ++i) {
    const std::size_t shift = 8 * (big ? width - 1 - i : i);
    p[i] = static_cast<std::byte>((v >> shift) & 0xFF);
  }
}

}  // namespace

std::optional<mask_entry> parse_mask_entry(const data_object_descriptor& d, std::size_t kind,
                                           bool method_required) {
  if (!d.masks) return std::nullopt;
  const std::string_view name = mask_kind_names[kind];
  const cbor::value* entry = d.masks->find(name);
  if (entry == nullptr) return std::nullopt;
  if (!entry->is_map()) {
    throw metadata_error("failed to deserialize descriptor: masks." + std::string(name) + " must be a map");
  }
  mask_entry m;
  m.kind = kind;
  if (const cbor::value* method = entry->find("method"); method != nullptr) m.method = method->as_text();
  if (method_required && m.method == nullptr) {
    throw metadata_error("failed to deserialize descriptor: masks." + std::string(name) +
                         ".method must be text");
  }
  m.offset = mask_field(*entry, name, "offset");
  m.length = mask_field(*entry, name, "length");
  return m;
}

mask_entries parse_mask_entries(const data_object_descriptor& d, bool method_required) {
  mask_entries out;
  if (!d.masks) return out;
  for (std::size_t k = 0; k < mask_kind_names.size(); ++k) {
    if (std::optional<mask_entry> m = parse_mask_entry(d, k, method_required)) out.items[out.count++] = *m;
  }
  return out;
}

bool has_masks(const data_object_descriptor& d) noexcept {
  if (!d.masks) return false;
  for (const std::string_view kind : mask_kind_names) {
    if (d.masks->find(kind) != nullptr) return true;
  }
  return false;
}

object_masks decode_masks(const data_object_descriptor& d, std::span<const std::byte> region) {
  object_masks masks;
  const std::uint64_t n = d.element_count();
  for (const mask_entry& m : parse_mask_entries(d, false)) {
    if (m.method == nullptr) throw encoding_error("unknown mask method (missing)");
    if (m.offset > region.size() || m.length > region.size() - m.offset) {
      throw framing_error("mask_" + std::string(mask_kind_names[m.kind]) + " (offset " +
                          std::to_string(m.offset) + ", length " + std::to_string(m.length) +
                          ") exceeds the payload region");
    }
    masks[m.kind] = decode_mask_blob(
        region.subspan(static_cast<std::size_t>(m.offset), static_cast<std::size_t>(m.length)), n, *m.method);
  }
  return masks;
}

void restore_non_finite(const data_object_descriptor& d, std::span<const std::byte> region,
                        std::span<std::byte> out, byte_order out_order, std::uint64_t first,
                        std::optional<std::uint64_t> count) {
  if (d.dtype == dtype::bitmask) {
    throw framing_error("bitmask-companion masks cannot be restored on bitmask-dtype payloads");
  }
  const std::uint64_t n = count.value_or(d.element_count());
  const std::size_t width = dtype_width(d.dtype);
  if (out.size() != n * width) {
    throw framing_error("decoded payload length " + std::to_string(out.size()) + " does not match " +
                        std::to_string(n) + " element(s) × " + std::to_string(width));
  }
  const bool complex = d.dtype == dtype::complex64 || d.dtype == dtype::complex128;
  const std::size_t part = complex ? width / 2 : width;
  const object_masks masks = decode_masks(d, region);
  for (std::size_t k = 0; k < masks.size(); ++k) {
    if (!masks[k]) continue;
    const std::vector<std::byte>& bits = *masks[k];
    const std::uint64_t pattern = canonical_pattern(d.dtype, k);
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t b = first + i;
      if (((static_cast<unsigned>(bits[static_cast<std::size_t>(b / 8)]) >> (7 - b % 8)) & 1U) == 0) continue;
      std::byte* e = out.data() + i * width;
      store_component(e, part, pattern, out_order == byte_order::big);
      if (complex) store_component(e + part, part, pattern, out_order == byte_order::big);
    }
  }
}

}  // namespace tensogram::detail

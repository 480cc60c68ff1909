// Level 4, fidelity (spec 02 §15.2 fidelity rows): the decoded size, and
// NaN/Inf in the decoded values that no mask records.
#include <algorithm>
#include <string>
#include <vector>

#include "../masks_restore.hpp"
#include "tensogram/core/byte_order.hpp"
#include "tensogram/core/dtype.hpp"
#include "tensogram/message/non_finite.hpp"
#include "validate_internal.hpp"

namespace tensogram::validation {

namespace {

bool mask_bit(const std::vector<std::byte>& bits, std::uint64_t i) noexcept {
  return ((static_cast<unsigned>(bits[static_cast<std::size_t>(i / 8)]) >> (7 - i % 8)) & 1U) != 0;
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i == 0 ? "" : ", ") + str(shape[i]);
  return s + "]";
}

}  // namespace

// Decoded size, masks and NaN/Inf of one object (spec 02 §15.2 fidelity
// rows). `decoded` is in the declared byte order.
void check_fidelity(const object_ctx& o, std::size_t i, std::span<const std::byte> decoded, issue_list& out) {
  const data_object_descriptor& d = *o.descriptor;
  const std::optional<std::uint64_t> n = element_count(d.shape);
  if (!n) {
    out.error(issue_code::decoded_size_mismatch, k_fidelity, i, o.frame_offset,
              "shape product overflows, cannot verify decoded size");
    return;
  }
  const std::optional<std::uint64_t> expected = raw_byte_size(d.dtype, *n);
  if (!expected) {
    out.error(issue_code::decoded_size_mismatch, k_fidelity, i, o.frame_offset,
              "expected decoded size overflows usize");
    return;
  }
  if (decoded.size() != *expected) {
    out.error(issue_code::decoded_size_mismatch, k_fidelity, i, o.frame_offset,
              "decoded size " + str(decoded.size()) + " != expected " + str(*expected) + " (shape " +
                  shape_text(d.shape) + ", dtype " + std::string(dtype_name(d.dtype)) + ")");
    return;
  }

  // Positions the encoder recorded as non-finite are expected there.
  object_masks masks;
  try {
    masks = detail::decode_masks(d, o.region);
  } catch (const std::exception& e) {
    out.error(issue_code::decode_object_failed, k_fidelity, i, o.frame_offset,
              "bitmask decode failed: " + std::string(e.what()));
    return;
  }
  auto masked = [&](std::uint64_t e) {
    return std::any_of(masks.begin(), masks.end(),
                       [e](const std::optional<std::vector<std::byte>>& m) { return m && mask_bit(*m, e); });
  };

  const byte_order order = d.effective_byte_order();
  const std::size_t width = dtype_width(d.dtype);
  std::uint64_t from = 0;
  while (from < *n) {
    const auto start = static_cast<std::size_t>(from * width);
    const std::optional<non_finite_hit> hit =
        find_non_finite(d.dtype, order, decoded.subspan(start), true, true, from);
    if (!hit) return;
    if (masked(hit->element)) {
      from = hit->element + 1;
      continue;
    }
    non_finite_kind kind = hit->kind;
    std::string component;
    if (d.dtype == dtype::complex64 || d.dtype == dtype::complex128) {
      // Spec 02 §15.2: the real component is reported before the imaginary
      // one (whatever their kinds), unlike the encoder's priority.
      const dtype part = d.dtype == dtype::complex64 ? dtype::float32 : dtype::float64;
      const auto at = static_cast<std::size_t>(hit->element * width);
      const std::optional<non_finite_hit> c =
          find_non_finite(part, order, decoded.subspan(at, width), true, true);
      if (c) {
        kind = c->kind;
        component = c->element == 0 ? "real" : "imaginary";
      }
    }
    const bool nan = kind == non_finite_kind::nan;
    const std::string where = component.empty() ? " (not recorded in mask)"
                                                : " (" + component + " component, not recorded in mask)";
    out.error(
        nan ? issue_code::nan_detected : issue_code::inf_detected, k_fidelity, i, o.frame_offset,
        std::string("unexpected ") + (nan ? "NaN" : "Inf") + " at element " + str(hit->element) + where);
    return;  // first occurrence only
  }
}

}  // namespace tensogram::validation

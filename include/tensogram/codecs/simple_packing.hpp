// simple_packing: lossy quantisation of float64 values to B-bit unsigned
// integers packed MSB-first (spec 03 §4). The bit layout is GRIB 2's; the
// parameter semantics are the reference's (§4.8).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "tensogram/core/byte_order.hpp"

namespace tensogram {

struct simple_packing_params {
  double reference_value = 0.0;           // R
  std::int32_t binary_scale_factor = 0;   // E
  std::int32_t decimal_scale_factor = 0;  // D
  std::uint32_t bits_per_value = 0;       // B, 0..64
};

/// `powi(base, k)` by repeated squaring (spec 03 §4.2): the exact power
/// function the reference uses, which differs from `std::pow` for some k.
[[nodiscard]] double powi(double base, std::int32_t k) noexcept;

/// `compute_params(values, B, D)` (spec 03 §4.4). Throws `encoding_error` for
/// B > 64 or a NaN/±Inf value (naming its index).
[[nodiscard]] simple_packing_params simple_packing_compute_params(std::span<const double> values,
                                                                  std::uint32_t bits_per_value,
                                                                  std::int32_t decimal_scale_factor = 0);

/// The same from float64 values stored as bytes in `order` (8 per value),
/// read in place: no copy of the input. Same results and errors for every
/// `threads` (≥ 2 scans chunks in parallel).
[[nodiscard]] simple_packing_params simple_packing_compute_params(std::span<const std::byte> raw,
                                                                  byte_order order,
                                                                  std::uint32_t bits_per_value,
                                                                  std::int32_t decimal_scale_factor = 0,
                                                                  std::uint32_t threads = 0);

namespace codecs {

/// Packed size of `n` values: ceil(n·B/8) bytes (0 when B is 0).
[[nodiscard]] std::uint64_t simple_packing_size(std::uint64_t n, std::uint32_t bits_per_value) noexcept;

/// Packs the float64 values stored in `input` (8 bytes each, in `order`)
/// into `out` (exactly `simple_packing_size` bytes). Throws `encoding_error`
/// for invalid parameters (non-finite R, |E| > 256, B > 64) or a non-finite
/// value (spec 03 §4.5).
void simple_packing_encode(std::span<const std::byte> input, byte_order order, const simple_packing_params& p,
                           std::span<std::byte> out, std::uint32_t threads = 0);

/// Packs values [first, first + count) of `input` into `out` (exactly
/// simple_packing_size(count) bytes): the bytes of the whole stream from
/// byte first·B/8, for `first` a multiple of 8 (or B a multiple of 8). A
/// non-finite value is reported by its index in `input`.
void simple_packing_encode_part(std::span<const std::byte> input, std::uint64_t first, std::uint64_t count,
                                byte_order order, const simple_packing_params& p, std::span<std::byte> out);

/// Unpacks `n` values into `out` (8·n bytes) as float64 in `order`. Throws
/// `encoding_error` when `packed` is shorter than required (spec 03 §4.6).
void simple_packing_decode(std::span<const std::byte> packed, std::uint64_t n, const simple_packing_params& p,
                           byte_order order, std::span<std::byte> out, std::uint32_t threads = 0);

/// Unpacks `count` values whose fields start at stream bit `first_bit` of
/// `packed` (range decode from a byte-aligned excerpt, spec 03 §10).
void simple_packing_decode_bits(std::span<const std::byte> packed, std::uint64_t first_bit,
                                std::uint64_t count, const simple_packing_params& p, byte_order order,
                                std::span<std::byte> out);

/// Unpacks values `[first, first + count)` only (range decode, spec 03 §10).
void simple_packing_decode_range(std::span<const std::byte> packed, std::uint64_t first, std::uint64_t count,
                                 const simple_packing_params& p, byte_order order, std::span<std::byte> out);

}  // namespace codecs
}  // namespace tensogram

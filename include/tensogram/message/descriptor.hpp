// DataObjectDescriptor: the CBOR descriptor of an NTensorFrame (spec 02 §4).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tensogram/cbor/value.hpp"
#include "tensogram/core/byte_order.hpp"
#include "tensogram/core/dtype.hpp"

namespace tensogram {

struct data_object_descriptor {
  std::string type = "ntensor";
  std::uint64_t ndim = 0;
  std::vector<std::uint64_t> shape;
  /// Opaque metadata: only the count is checked (spec 02 §7).
  std::vector<std::uint64_t> strides;
  tensogram::dtype dtype = tensogram::dtype::float64;
  /// Declared order of the raw element bytes; absent means host order.
  std::optional<tensogram::byte_order> byte_order;
  std::string encoding = "none";
  std::string filter = "none";
  std::string compression = "none";
  /// Every other key (codec parameters etc.), written back flattened into
  /// the descriptor map. A CBOR map with text keys.
  cbor::value params = cbor::value::make_map();
  /// The `masks` sub-map (spec 02 §4.3), when present.
  std::optional<cbor::value> masks;

  /// A C-contiguous descriptor for `shape` with element strides.
  [[nodiscard]] static data_object_descriptor contiguous(tensogram::dtype t, std::vector<std::uint64_t> shape,
                                                         tensogram::byte_order order = native_byte_order());

  /// Element count (product of shape); throws `metadata_error` on overflow.
  [[nodiscard]] std::uint64_t element_count() const;
  /// Byte order, resolving "absent" to the host's.
  [[nodiscard]] tensogram::byte_order effective_byte_order() const noexcept {
    return byte_order.value_or(native_byte_order());
  }

  /// True for a zfp or sz3 object whose codec input was not float64: another
  /// dtype, or simple_packing or shuffle before the codec (spec 03 §3.3).
  /// The reference writes such objects; their bytes were lossily compressed
  /// as reinterpreted float64, so what decodes is the reference decoder's
  /// bytes, not the original data (for zfp not even N·W bytes but 8·N).
  /// A big-endian float64 object is not flagged: the reference compressed
  /// its bytes as little-endian doubles too, but this library swaps them
  /// first (exact values, decoded alike by both), and the descriptor does
  /// not say which of the two wrote it.
  [[nodiscard]] bool reinterpreted_as_float64() const noexcept;

  /// Parses a descriptor map; throws `metadata_error` ("failed to deserialize
  /// descriptor: ...") for missing/ill-typed fixed keys or an unknown dtype.
  [[nodiscard]] static data_object_descriptor from_cbor(const cbor::value& v);
  /// The same, moving params and masks out of `v` instead of copying them.
  [[nodiscard]] static data_object_descriptor from_cbor(cbor::value&& v);
  /// The descriptor map (fixed keys, params, masks), canonical on encode.
  [[nodiscard]] cbor::value to_cbor() const;

  friend bool operator==(const data_object_descriptor&, const data_object_descriptor&) = default;
};

/// Element strides of a C-contiguous array of `shape` (`[3, 1]` for `[2, 3]`).
[[nodiscard]] std::vector<std::uint64_t> contiguous_strides(std::span<const std::uint64_t> shape);

}  // namespace tensogram

// The logical value of a file (spec 06 §8.3): every element of a tensor
// projected to JSON, nested in arrays over the logical dims.
#include "logical_value.hpp"

#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "src/metatensor/strict_json.hpp"
#include "src/metatensor/text.hpp"
#include "tensogram/cbor/codec.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/core/utf8.hpp"

namespace metatensor {

namespace detail {

using json = nlohmann::json;

// "/" and the escaped token (RFC 6901).
std::string escape_token(std::string_view t) {
  std::string out;
  append_pointer_token(out, t);
  return out;
}

std::string index_token(std::uint64_t i) {
  // Appended, not "/" + std::string: GCC 12 -O3 false -Wrestrict (GCC bug 105329).
  std::string out = "/";
  out += std::to_string(i);
  return out;
}

// "/i0/i1/..." for the C-order element `i` of `dims`.
std::string index_pointer(std::span<const std::uint64_t> dims, std::uint64_t i) {
  std::vector<std::uint64_t> idx(dims.size());
  for (std::size_t k = dims.size(); k-- > 0;) {
    if (dims[k] == 0) break;
    idx[k] = i % dims[k];
    i /= dims[k];
  }
  std::string out;
  for (auto v : idx) out += index_token(v);
  return out;
}

[[noreturn]] void rethrow_as_error(const deep_failure& f, std::string_view tensor) {
  throw error(f.code, escape_token(tensor) + f.pointer + ": " + f.what);
}

// ---------------------------------------------------------------------------
// §8.3 scalar decoding.

namespace {

// A sign/exponent/mantissa minifloat without special values: exponent 0 is
// subnormal, every other exponent normal.
double minifloat(unsigned bits, int ebits, int mbits, int bias) {
  const unsigned sign = (bits >> (ebits + mbits)) & 1U;
  const int e = static_cast<int>((bits >> mbits) & ((1U << ebits) - 1));
  const int m = static_cast<int>(bits & ((1U << mbits) - 1));
  const double v = e == 0 ? std::ldexp(static_cast<double>(m), 1 - bias - mbits)
                          : std::ldexp(static_cast<double>(m + (1 << mbits)), e - bias - mbits);
  return sign != 0 ? -v : v;
}

constexpr double nan_value = std::numeric_limits<double>::quiet_NaN();
constexpr double inf_value = std::numeric_limits<double>::infinity();

}  // namespace

double decode_bf16(std::uint16_t h) {
  return static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16));
}

double decode_f8(dtype t, std::uint8_t b) {
  switch (t) {
    case dtype::f8_e4m3:  // OCP E4M3FN: no infinity, S.1111.111 is NaN
      return (b & 0x7F) == 0x7F ? nan_value : minifloat(b, 4, 3, 7);
    case dtype::f8_e5m2:  // IEEE-like: exponent 31 is infinity or NaN
      if (((b >> 2) & 0x1F) == 0x1F)
        return (b & 3) != 0 ? nan_value : ((b & 0x80) != 0 ? -inf_value : inf_value);
      return minifloat(b, 5, 2, 15);
    case dtype::f8_e8m0:  // unsigned power of two 2^(b-127); 0xFF is NaN
      return b == 0xFF ? nan_value : std::ldexp(1.0, static_cast<int>(b) - 127);
    case dtype::f8_e4m3fnuz:  // bias 8, no infinity, no negative zero: 0x80 is NaN
      return b == 0x80 ? nan_value : minifloat(b, 4, 3, 8);
    case dtype::f8_e5m2fnuz:  // bias 16, no infinity, 0x80 is NaN
      return b == 0x80 ? nan_value : minifloat(b, 5, 2, 16);
    default: return nan_value;
  }
}

// One scalar of a byte-sized dtype at `p` (§8.3). BOOL bytes other than 0/1
// cannot be projected [MT_BOOL].
json project_scalar(dtype t, const std::byte* p) {
  switch (t) {
    case dtype::boolean: {
      const auto b = std::to_integer<unsigned>(*p);
      if (b > 1) throw deep_failure{errc::mt_bool, "", "BOOL byte is " + std::to_string(b) + ", not 0 or 1"};
      return json(b == 1);
    }
    case dtype::u8: return json(static_cast<std::uint64_t>(load<std::uint8_t>(p)));
    case dtype::i8: return json(static_cast<std::int64_t>(load<std::int8_t>(p)));
    case dtype::u16: return json(static_cast<std::uint64_t>(load<std::uint16_t>(p)));
    case dtype::i16: return json(static_cast<std::int64_t>(load<std::int16_t>(p)));
    case dtype::u32: return json(static_cast<std::uint64_t>(load<std::uint32_t>(p)));
    case dtype::i32: return json(static_cast<std::int64_t>(load<std::int32_t>(p)));
    case dtype::u64: return json(load<std::uint64_t>(p));
    case dtype::i64: return json(load<std::int64_t>(p));
    case dtype::f16:
      return json(tensogram::cbor::half_to_double(load<std::uint16_t>(p)));  // shared with CBOR
    case dtype::bf16: return json(decode_bf16(load<std::uint16_t>(p)));
    case dtype::f32: return json(static_cast<double>(load<float>(p)));
    case dtype::f64: return json(load<double>(p));
    case dtype::c64:
      return json::array(
          {json(static_cast<double>(load<float>(p))), json(static_cast<double>(load<float>(p + 4)))});
    case dtype::f8_e4m3:
    case dtype::f8_e5m2:
    case dtype::f8_e8m0:
    case dtype::f8_e4m3fnuz:
    case dtype::f8_e5m2fnuz: return json(decode_f8(t, load<std::uint8_t>(p)));
    case dtype::f4:
    case dtype::f6_e2m3:
    case dtype::f6_e3m2: break;  // sub-byte: flat tensors only, see project_flat_element
  }
  return json();
}

// Element `i` of a flat tensor. Sub-byte elements are packed LSB first: F4
// element 2k is the low nibble of byte k; F6 element i occupies bits
// [6i, 6i + 6) of the little-endian bit stream.
json project_flat_element(dtype t, std::span<const std::byte> bytes, std::uint64_t i) {
  if (t == dtype::f4) {
    const auto b = std::to_integer<unsigned>(bytes[static_cast<std::size_t>(i / 2)]);
    return json(minifloat(i % 2 == 0 ? (b & 0xF) : (b >> 4), 2, 1, 1));
  }
  if (t == dtype::f6_e2m3 || t == dtype::f6_e3m2) {
    const std::uint64_t bit = 6 * i;
    const auto at = static_cast<std::size_t>(bit / 8);
    unsigned window = std::to_integer<unsigned>(bytes[at]);
    if (at + 1 < bytes.size()) window |= std::to_integer<unsigned>(bytes[at + 1]) << 8;
    const unsigned v = (window >> (bit % 8)) & 0x3F;
    return json(t == dtype::f6_e2m3 ? minifloat(v, 2, 3, 1) : minifloat(v, 3, 2, 3));
  }
  const auto size = static_cast<std::uint64_t>(safetensors::dtype_bits(t) / 8);
  return project_scalar(t, bytes.data() + i * size);
}

// ---------------------------------------------------------------------------
// Projection of record and List types (§8.3).

std::string_view checked_text(std::span<const std::byte> blob) {
  const std::string_view text(reinterpret_cast<const char*>(blob.data()), blob.size());
  if (const auto bad = tensogram::first_invalid_utf8(text); bad != std::string_view::npos) {
    throw deep_failure{errc::mt_utf8, "", "invalid UTF-8 at byte " + std::to_string(bad) + " of the string"};
  }
  return text;
}

namespace {

json project_type(const type_layout& t, const std::byte* p, std::span<const std::byte> heap);

json project_element(const type_layout& t, const std::byte* p, std::span<const std::byte> heap) {
  switch (t.type) {
    case value_type::scalar: return project_scalar(t.scalar, p);
    case value_type::record: {
      const auto& rec = *t.record;
      json out = rec.tuple ? json::array() : json::object();
      for (std::size_t k = 0; k < rec.fields.size(); ++k) {
        const auto& f = rec.fields[k];
        try {
          json v = project_type(f.type, p + f.offset, heap);
          if (rec.tuple) {
            out.push_back(std::move(v));
          } else {
            out[f.name] = std::move(v);
          }
        } catch (deep_failure& e) {
          e.pointer = escape_token(f.name) + e.pointer;
          throw;
        }
      }
      return out;
    }
    case value_type::string: return json(std::string(checked_text(blob_at(heap, p))));
    case value_type::list: {
      const auto blob = blob_at(heap, p);
      const auto& elem = *t.elem;
      json out = json::array();
      const std::uint64_t n = elem.size == 0 ? 0 : blob.size() / elem.size;
      for (std::uint64_t j = 0; j < n; ++j) {
        try {
          out.push_back(project_type(elem, blob.data() + j * elem.size, heap));
        } catch (deep_failure& e) {
          e.pointer = index_token(j) + e.pointer;
          throw;
        }
      }
      return out;
    }
  }
  return json();
}

// A value of type `t` (with its fixed-array dims) at `p`.
json project_dims(const type_layout& t, std::size_t dim, const std::byte* p, std::span<const std::byte> heap,
                  std::uint64_t stride) {
  if (dim == t.shape.size()) return project_element(t, p, heap);
  const std::uint64_t inner = stride / t.shape[dim];
  json out = json::array();
  for (std::uint64_t i = 0; i < t.shape[dim]; ++i) {
    try {
      out.push_back(project_dims(t, dim + 1, p + i * inner, heap, inner));
    } catch (deep_failure& e) {
      e.pointer = index_token(i) + e.pointer;
      throw;
    }
  }
  return out;
}

json project_type(const type_layout& t, const std::byte* p, std::span<const std::byte> heap) {
  if (t.shape.empty()) return project_element(t, p, heap);
  return project_dims(t, 0, p, heap, t.size);
}

}  // namespace

tensor_access::tensor_access(const file& f, const std::string& name)
    : layout(&f.layout(name)), dims(f.dims(name)), count(element_count(dims)), data(f.primary(name).bytes()) {
  if (const auto* h = f.heap(name)) heap = h->bytes();
  // The deferred BlobRef checks (§8.1) before any BlobRef is followed.
  f.check_blob_refs(name);
}

std::uint64_t tensor_access::element_size() const {
  switch (layout->kind) {
    case tensor_kind::flat: return safetensors::dtype_bits(layout->flat_dtype) / 8;
    case tensor_kind::record: return layout->record->size;
    case tensor_kind::blob: return 16;
  }
  return 0;
}

json tensor_access::element(std::uint64_t i) const {
  switch (layout->kind) {
    case tensor_kind::flat: return project_flat_element(layout->flat_dtype, data, i);
    case tensor_kind::record:
      return project_element(element_type(*layout), data.data() + i * layout->record->size, heap);
    case tensor_kind::blob: return project_element(layout->item, data.data() + i * 16, heap);
  }
  return json();
}

json tensor_access::subtree(std::size_t level, std::uint64_t first) const {
  if (level == dims.size()) return element(first);
  const std::uint64_t inner = element_count(dims.subspan(level + 1));
  json out = json::array();
  for (std::uint64_t i = 0; i < dims[level]; ++i) {
    try {
      out.push_back(subtree(level + 1, first + i * inner));
    } catch (deep_failure& e) {
      e.pointer = index_token(i) + e.pointer;
      throw;
    }
  }
  return out;
}

type_layout element_type(const tensor_layout& l) {
  if (l.kind != tensor_kind::record) return l.item;
  return type_layout{value_type::record, dtype::u8,          {}, l.record, nullptr, l.record->size,
                     l.record->align,    l.element_pointer()};
}

}  // namespace detail

using detail::deep_failure;
using detail::tensor_access;
using json = nlohmann::json;

json file::logical_value(std::string_view name) const {
  const std::string n(name);
  const tensor_access a(*this, n);
  try {
    return a.subtree(0, 0);
  } catch (const deep_failure& e) {
    detail::rethrow_as_error(e, n);
  }
}

json file::logical_elements(std::string_view name, std::uint64_t first, std::uint64_t count) const {
  const std::string n(name);
  const tensor_access a(*this, n);
  if (first > a.count || count > a.count - first) {
    throw tensogram::invalid_arg_error("tensor \"" + n + "\": elements [" + std::to_string(first) + ", +" +
                                       std::to_string(count) + ") exceed its " + std::to_string(a.count) +
                                       " elements");
  }
  json out = json::array();
  for (std::uint64_t i = first; i < first + count; ++i) {
    try {
      out.push_back(a.element(i));
    } catch (deep_failure& e) {
      e.pointer = detail::index_pointer(a.dims, i) + e.pointer;
      detail::rethrow_as_error(e, n);
    }
  }
  return out;
}

json flat_elements(const safetensors::tensor_view& t, std::uint64_t first, std::uint64_t count) {
  const std::uint64_t total = t.element_count();
  if (first > total || count > total - first) {
    throw tensogram::invalid_arg_error("tensor \"" + std::string(t.name()) + "\": elements [" +
                                       std::to_string(first) + ", +" + std::to_string(count) +
                                       ") exceed its " + std::to_string(total) + " elements");
  }
  json out = json::array();
  for (std::uint64_t i = first; i < first + count; ++i) {
    try {
      out.push_back(detail::project_flat_element(t.type(), t.bytes(), i));
    } catch (deep_failure& e) {
      e.pointer = detail::index_pointer(t.shape(), i) + e.pointer;
      detail::rethrow_as_error(e, t.name());
    }
  }
  return out;
}

json file::logical_value() const {
  json out = json::object();
  for (const auto& name : tensor_names()) out[name] = logical_value(name);
  return out;
}

}  // namespace metatensor

// Deep validation and the logical value of a file (spec 06 §8.1, §8.3).
//
// Deep validation runs four passes over the whole file, in this order, and
// reports the first failure:
//   1. BOOL bytes are 0 or 1 [MT_BOOL] (flat tensors, record fields, List
//      elements);
//   2. String bytes are UTF-8 [MT_UTF8];
//   3. record padding (inner and tail, nested records and records inside
//      List blobs included), heap bytes not covered by any blob, and padding
//      tensors are zero [MT_NONZERO_PADDING];
//   4. value keywords [MT_VALUE] with the JSON Schema evaluator.
// BOOL and UTF-8 come first because the projection of pass 4 needs them.
//
// Bounded memory in pass 4: the logical value of a tensor is never built as
// a whole unless the schema needs it. The dimension nodes of a root
// property are followed ($ref resolved) while they carry only structure
// keywords; each element (or each sub-array below the first dimension node
// that carries a value keyword such as `uniqueItems`) is projected on its
// own and evaluated with `validate_node` against its schema node, which is
// equivalent because a dimension node without value keywords only applies
// `items` to each element (its `minItems`/`maxItems` were checked
// structurally, §5.1). Only value keywords on the root itself force the
// projection of the whole file.
//
// Every message starts with the JSON Pointer of the offending value
// (§8.3), e.g. "/particles/1/mass: minimum: ...".
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "metatensor/file.hpp"
#include "metatensor/json_schema.hpp"
#include "strict_json.hpp"
#include "tensogram/cbor/codec.hpp"
#include "text.hpp"

namespace metatensor {
namespace {

using json = nlohmann::json;

// A failure found below a tensor; `pointer` grows as the exception unwinds
// through the walkers, each prepending its own path component.
struct deep_failure {
  errc code;
  std::string pointer;
  std::string what;
};

// "/" and the escaped token (RFC 6901).
std::string escape_token(std::string_view t) {
  std::string out;
  detail::append_pointer_token(out, t);
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

std::uint64_t product(std::span<const std::uint64_t> dims) {
  std::uint64_t n = 1;
  for (auto d : dims) n *= d;  // bounded by a validated tensor's byte size
  return n;
}

[[noreturn]] void rethrow_as_error(const deep_failure& f, std::string_view tensor) {
  throw error(f.code, escape_token(tensor) + f.pointer + ": " + f.what);
}

// ---------------------------------------------------------------------------
// §8.3 scalar decoding.

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

template <class T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
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

std::span<const std::byte> blob_of(std::span<const std::byte> heap, const std::byte* ref_at) {
  const auto ref = detail::read_blob_ref(ref_at);  // bounds checked at open (§6.4)
  return heap.subspan(static_cast<std::size_t>(ref.offset), static_cast<std::size_t>(ref.length));
}

std::string_view checked_text(std::span<const std::byte> blob) {
  const std::string_view text(reinterpret_cast<const char*>(blob.data()), blob.size());
  if (const auto bad = first_invalid_utf8(text); bad != std::string_view::npos) {
    throw deep_failure{errc::mt_utf8, "", "invalid UTF-8 at byte " + std::to_string(bad) + " of the string"};
  }
  return text;
}

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
    case value_type::string: return json(std::string(checked_text(blob_of(heap, p))));
    case value_type::list: {
      const auto blob = blob_of(heap, p);
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

// ---------------------------------------------------------------------------
// A logical tensor as seen by the deep passes.

struct tensor_access {
  const tensor_layout* layout;
  std::span<const std::uint64_t> dims;
  std::uint64_t count;
  std::span<const std::byte> data;
  std::span<const std::byte> heap;

  tensor_access(const file& f, const std::string& name)
      : layout(&f.layout(name)), dims(f.dims(name)), count(product(dims)), data(f.primary(name).bytes()) {
    if (const auto* h = f.heap(name)) heap = h->bytes();
  }

  [[nodiscard]] std::uint64_t element_size() const {
    switch (layout->kind) {
      case tensor_kind::flat: return safetensors::dtype_bits(layout->flat_dtype) / 8;
      case tensor_kind::record: return layout->record->size;
      case tensor_kind::blob: return 16;
    }
    return 0;
  }

  // Element `i` projected (§8.3).
  [[nodiscard]] json element(std::uint64_t i) const {
    switch (layout->kind) {
      case tensor_kind::flat: return project_flat_element(layout->flat_dtype, data, i);
      case tensor_kind::record:
        return project_element(type_layout{value_type::record,
                                           dtype::u8,
                                           {},
                                           layout->record,
                                           nullptr,
                                           layout->record->size,
                                           layout->record->align},
                               data.data() + i * layout->record->size, heap);
      case tensor_kind::blob: return project_element(layout->item, data.data() + i * 16, heap);
    }
    return json();
  }

  // The nested arrays of dims [level, rank) starting at element `first`.
  [[nodiscard]] json subtree(std::size_t level, std::uint64_t first) const {
    if (level == dims.size()) return element(first);
    const std::uint64_t inner = product(dims.subspan(level + 1));
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
};

// ---------------------------------------------------------------------------
// Passes 1–2: BOOL bytes and UTF-8, without projecting.

enum class scan { bools, utf8 };

bool type_contains(const type_layout& t, scan mode) {
  switch (t.type) {
    case value_type::scalar: return mode == scan::bools && t.scalar == dtype::boolean;
    case value_type::string: return mode == scan::utf8;
    case value_type::list: return t.elem && type_contains(*t.elem, mode);
    case value_type::record:
      return std::any_of(t.record->fields.begin(), t.record->fields.end(),
                         [&](const field_layout& f) { return type_contains(f.type, mode); });
  }
  return false;
}

void scan_type(scan mode, const type_layout& t, const std::byte* p, std::span<const std::byte> heap);

void scan_element(scan mode, const type_layout& t, const std::byte* p, std::span<const std::byte> heap) {
  switch (t.type) {
    case value_type::scalar:
      if (mode == scan::bools && t.scalar == dtype::boolean) (void)project_scalar(t.scalar, p);
      return;
    case value_type::string:
      if (mode == scan::utf8) (void)checked_text(blob_of(heap, p));
      return;
    case value_type::list: {
      if (!type_contains(*t.elem, mode)) return;
      const auto blob = blob_of(heap, p);
      const std::uint64_t n = t.elem->size == 0 ? 0 : blob.size() / t.elem->size;
      for (std::uint64_t j = 0; j < n; ++j) {
        try {
          scan_type(mode, *t.elem, blob.data() + j * t.elem->size, heap);
        } catch (deep_failure& e) {
          e.pointer = index_token(j) + e.pointer;
          throw;
        }
      }
      return;
    }
    case value_type::record:
      for (const auto& f : t.record->fields) {
        try {
          scan_type(mode, f.type, p + f.offset, heap);
        } catch (deep_failure& e) {
          e.pointer = escape_token(f.name) + e.pointer;
          throw;
        }
      }
      return;
  }
}

void scan_type(scan mode, const type_layout& t, const std::byte* p, std::span<const std::byte> heap) {
  if (t.type == value_type::scalar && !(mode == scan::bools && t.scalar == dtype::boolean)) return;
  if (t.type == value_type::string && mode != scan::utf8) return;
  const std::uint64_t n = product(t.shape);
  const std::uint64_t es = t.element_size();
  for (std::uint64_t i = 0; i < n; ++i) {
    try {
      scan_element(mode, t, p + i * es, heap);
    } catch (deep_failure& e) {
      e.pointer = index_pointer(t.shape, i) + e.pointer;
      throw;
    }
  }
}

void scan_tensor(scan mode, const std::string& name, const tensor_access& a) {
  const auto& l = *a.layout;
  try {
    if (l.kind == tensor_kind::flat) {
      if (mode != scan::bools || l.flat_dtype != dtype::boolean) return;
      for (std::uint64_t i = 0; i < a.count; ++i) {
        const auto b = std::to_integer<unsigned>(a.data[static_cast<std::size_t>(i)]);
        if (b > 1) {
          throw deep_failure{errc::mt_bool, index_pointer(a.dims, i),
                             "BOOL byte is " + std::to_string(b) + ", not 0 or 1"};
        }
      }
      return;
    }
    const type_layout rec_type = l.kind == tensor_kind::record
                                     ? type_layout{value_type::record, dtype::u8,      {}, l.record, nullptr,
                                                   l.record->size,     l.record->align}
                                     : l.item;
    if (!type_contains(rec_type, mode)) return;
    const std::uint64_t es = a.element_size();
    for (std::uint64_t i = 0; i < a.count; ++i) {
      try {
        scan_element(mode, rec_type, a.data.data() + i * es, a.heap);
      } catch (deep_failure& e) {
        e.pointer = index_pointer(a.dims, i) + e.pointer;
        throw;
      }
    }
  } catch (const deep_failure& e) {
    rethrow_as_error(e, name);
  }
}

// ---------------------------------------------------------------------------
// Pass 3: zero padding.

void expect_zero(std::span<const std::byte> bytes, std::uint64_t begin, std::uint64_t end, const char* what) {
  for (std::uint64_t k = begin; k < end; ++k) {
    const auto b = std::to_integer<unsigned>(bytes[static_cast<std::size_t>(k)]);
    if (b != 0) {
      throw deep_failure{
          errc::mt_nonzero_padding, "",
          std::string(what) + " byte " + std::to_string(k) + " is " + std::to_string(b) + ", not 0"};
    }
  }
}

// Inner and tail padding of the record at `p`, nested records included
// (§6.2: bytes not covered by a field are zero). List blobs of records are
// checked too: their records follow the same rule.
void check_record_padding(const record_layout& rec, const std::byte* p, std::span<const std::byte> heap) {
  const std::span<const std::byte> bytes(p, static_cast<std::size_t>(rec.size));
  std::uint64_t cursor = 0;
  for (const auto& f : rec.fields) {
    if (f.offset > cursor) expect_zero(bytes, cursor, f.offset, "record padding");
    try {
      const std::uint64_t n = product(f.type.shape);
      const std::uint64_t es = f.type.element_size();
      for (std::uint64_t i = 0; i < n; ++i) {
        try {
          const std::byte* at = p + f.offset + i * es;
          if (f.type.type == value_type::record) {
            check_record_padding(*f.type.record, at, heap);
          } else if (f.type.type == value_type::list && f.type.elem->type == value_type::record) {
            const auto blob = blob_of(heap, at);
            const std::uint64_t size = f.type.elem->size;
            const std::uint64_t elem_n = product(f.type.elem->shape);
            const std::uint64_t count = size == 0 ? 0 : blob.size() / size;
            const std::uint64_t rsize = f.type.elem->record->size;
            for (std::uint64_t j = 0; j < count * elem_n; ++j) {
              try {
                check_record_padding(*f.type.elem->record, blob.data() + j * rsize, heap);
              } catch (deep_failure& e) {
                e.pointer =
                    index_token(j / elem_n) + index_pointer(f.type.elem->shape, j % elem_n) + e.pointer;
                throw;
              }
            }
          }
        } catch (deep_failure& e) {
          e.pointer = index_pointer(f.type.shape, i) + e.pointer;
          throw;
        }
      }
    } catch (deep_failure& e) {
      e.pointer = escape_token(f.name) + e.pointer;
      throw;
    }
    cursor = f.offset + f.type.size;
  }
  if (rec.size > cursor) expect_zero(bytes, cursor, rec.size, "record tail padding");
}

// Every BlobRef of a record (nested records and fixed arrays included).
template <class F>
void for_each_ref(const type_layout& t, const std::byte* p, F& fn) {
  if (!t.has_blobs()) return;
  const std::uint64_t n = product(t.shape);
  const std::uint64_t es = t.element_size();
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::byte* at = p + i * es;
    if (t.type == value_type::string || t.type == value_type::list) {
      fn(detail::read_blob_ref(at));
    } else if (t.type == value_type::record) {
      for (const auto& f : t.record->fields) for_each_ref(f.type, at + f.offset, fn);
    }
  }
}

// Heap bytes not covered by any blob are zero (§6.4). Blobs in increasing
// offset order (what writers produce) are checked in one streaming pass;
// otherwise the ranges are collected and sorted.
void check_heap_gaps(const tensor_access& a) {
  const auto& l = *a.layout;
  const type_layout whole =
      l.kind == tensor_kind::record
          ? type_layout{value_type::record, dtype::u8, {}, l.record, nullptr, l.record->size, l.record->align}
          : l.item;
  const std::uint64_t es = a.element_size();
  const auto for_all = [&](auto& fn) {
    for (std::uint64_t i = 0; i < a.count; ++i) for_each_ref(whole, a.data.data() + i * es, fn);
  };
  // First pass: are the non-empty blobs in nondecreasing offset order? A gap
  // can only be judged once no later blob may cover it.
  std::uint64_t last = 0;
  bool sorted = true;
  auto order = [&](blob_ref r) {
    if (r.length == 0) return;
    if (r.offset < last) sorted = false;
    last = r.offset;
  };
  for_all(order);
  std::uint64_t covered = 0;
  if (sorted) {
    auto stream = [&](blob_ref r) {
      if (r.length == 0) return;
      if (r.offset > covered) expect_zero(a.heap, covered, r.offset, "heap gap");
      covered = std::max(covered, r.offset + r.length);
    };
    for_all(stream);
  } else {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
    auto collect = [&](blob_ref r) {
      if (r.length != 0) ranges.emplace_back(r.offset, r.offset + r.length);
    };
    for_all(collect);
    std::sort(ranges.begin(), ranges.end());
    for (const auto& [b, e] : ranges) {
      if (b > covered) expect_zero(a.heap, covered, b, "heap gap");
      covered = std::max(covered, e);
    }
  }
  expect_zero(a.heap, covered, a.heap.size(), "heap gap");
}

// ---------------------------------------------------------------------------
// Pass 4: value keywords.

bool is_value_keyword(std::string_view k) {
  static constexpr std::string_view keywords[] = {"enum",
                                                  "const",
                                                  "minimum",
                                                  "maximum",
                                                  "exclusiveMinimum",
                                                  "exclusiveMaximum",
                                                  "multipleOf",
                                                  "minLength",
                                                  "maxLength",
                                                  "pattern",
                                                  "uniqueItems",
                                                  "contains",
                                                  "minContains",
                                                  "maxContains",
                                                  "allOf",
                                                  "anyOf",
                                                  "oneOf",
                                                  "not",
                                                  "if",
                                                  "then",
                                                  "else"};
  return std::find(std::begin(keywords), std::end(keywords), k) != std::end(keywords);
}

// The `$ref` target of `node` in `doc` (JSON Pointer fragment or exact
// `$id`), or nullptr.
const json* find_id(const json& node, std::string_view id, std::size_t depth) {
  if (depth > 2 * max_schema_depth) return nullptr;
  if (node.is_object()) {
    if (const auto it = node.find("$id"); it != node.end() && it->is_string() && *it == id) return &node;
    for (const auto& [_, v] : node.items()) {
      if (const auto* hit = find_id(v, id, depth + 1)) return hit;
    }
  } else if (node.is_array()) {
    for (const auto& v : node) {
      if (const auto* hit = find_id(v, id, depth + 1)) return hit;
    }
  }
  return nullptr;
}

const json* resolve_ref(const json& doc, const std::string& ref) {
  if (!ref.empty() && ref.front() == '#') {
    try {
      const json::json_pointer ptr(ref.substr(1));
      return doc.contains(ptr) ? &doc.at(ptr) : nullptr;
    } catch (const json::exception&) {
      return nullptr;
    }
  }
  return find_id(doc, ref, 0);
}

// The nodes a schema node applies through `$ref` (itself first), or empty
// when a reference does not resolve.
std::vector<const json*> ref_chain(const json& doc, const json* node) {
  std::vector<const json*> chain{node};
  while (chain.back()->is_object()) {
    const auto it = chain.back()->find("$ref");
    if (it == chain.back()->end()) break;
    const json* next = it->is_string() ? resolve_ref(doc, it->get<std::string>()) : nullptr;
    if (next == nullptr || chain.size() > 2 * max_schema_depth) return {};
    chain.push_back(next);
  }
  return chain;
}

bool has_value_keywords(const json& node) {
  if (!node.is_object()) return !node.is_boolean() || !node.get<bool>();
  for (const auto& [k, _] : node.items()) {
    if (is_value_keyword(k)) return true;
  }
  return false;
}

// True when every array satisfies `node`'s `type` (absent, "array", or a
// list containing "array").
bool type_admits(const json& node, std::string_view type) {
  if (!node.is_object()) return true;
  const auto it = node.find("type");
  if (it == node.end()) return true;
  if (it->is_string()) return *it == type;
  if (it->is_array()) return std::find(it->begin(), it->end(), json(type)) != it->end();
  return false;
}

// JSON type names every projected element of a flat dtype satisfies.
bool flat_element_trivially_valid(const std::vector<const json*>& chain, dtype t) {
  for (const auto* n : chain) {
    if (has_value_keywords(*n)) return false;
    bool ok = false;
    switch (t) {
      case dtype::boolean: ok = type_admits(*n, "boolean"); break;
      case dtype::c64: ok = type_admits(*n, "array"); break;
      case dtype::u8:
      case dtype::i8:
      case dtype::u16:
      case dtype::i16:
      case dtype::u32:
      case dtype::i32:
      case dtype::u64:
      case dtype::i64: ok = type_admits(*n, "integer") || type_admits(*n, "number"); break;
      default: ok = type_admits(*n, "number"); break;  // "integer" on a float leaf is a value test
    }
    if (!ok) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------
// Fast path for the common case of numeric bounds on a flat tensor: the
// element schema carries only `minimum`/`maximum`/`exclusiveMinimum`/
// `exclusiveMaximum` (plus annotations, `type` and TypeDef keywords) and the
// dtype's values are exact binary64 numbers. Each element is compared in
// binary64 with the violation tests of §8.3 (NaN fails no bound: every
// comparison with it is false); an element that fails is handed to the
// evaluator, which produces the reported message. Integer dtypes wider than
// 32 bits and sub-byte floats take the general path.

struct numeric_bounds {
  std::vector<double> minimum, maximum, exclusive_minimum, exclusive_maximum;

  [[nodiscard]] bool admits(double v) const noexcept {
    for (const double b : minimum)
      if (v < b) return false;
    for (const double b : maximum)
      if (v > b) return false;
    for (const double b : exclusive_minimum)
      if (v <= b) return false;
    for (const double b : exclusive_maximum)
      if (v >= b) return false;
    return true;
  }
};

// A schema bound as an exact binary64 (integers beyond 2^53 are not).
std::optional<double> exact_bound(const json& v) {
  if (v.is_number_float()) return v.get<double>();
  constexpr std::uint64_t exact = std::uint64_t{1} << 53;
  if (v.is_number_unsigned() && v.get<std::uint64_t>() <= exact)
    return static_cast<double>(v.get<std::uint64_t>());
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (i >= -static_cast<std::int64_t>(exact) && i <= static_cast<std::int64_t>(exact))
      return static_cast<double>(i);
  }
  return std::nullopt;
}

std::optional<numeric_bounds> flat_numeric_bounds(const std::vector<const json*>& chain, dtype t) {
  switch (t) {
    case dtype::boolean:
    case dtype::c64:
    case dtype::u64:
    case dtype::i64:
    case dtype::f4:
    case dtype::f6_e2m3:
    case dtype::f6_e3m2: return std::nullopt;
    default: break;
  }
  const bool is_int = t == dtype::u8 || t == dtype::i8 || t == dtype::u16 || t == dtype::i16 ||
                      t == dtype::u32 || t == dtype::i32;
  numeric_bounds out;
  for (const auto* n : chain) {
    if (!n->is_object()) return std::nullopt;
    if (!(type_admits(*n, "number") || (is_int && type_admits(*n, "integer")))) return std::nullopt;
    for (const auto& [k, v] : n->items()) {
      std::vector<double>* into = k == "minimum"            ? &out.minimum
                                  : k == "maximum"          ? &out.maximum
                                  : k == "exclusiveMinimum" ? &out.exclusive_minimum
                                  : k == "exclusiveMaximum" ? &out.exclusive_maximum
                                                            : nullptr;
      if (into) {
        const auto b = exact_bound(v);
        if (!b) return std::nullopt;
        into->push_back(*b);
      } else if (is_value_keyword(k)) {
        return std::nullopt;
      }
    }
  }
  return out;
}

// Element `i` of a flat tensor of a byte-aligned numeric dtype as binary64.
double flat_number(dtype t, const std::byte* p) {
  switch (t) {
    case dtype::u8: return load<std::uint8_t>(p);
    case dtype::i8: return load<std::int8_t>(p);
    case dtype::u16: return load<std::uint16_t>(p);
    case dtype::i16: return load<std::int16_t>(p);
    case dtype::u32: return load<std::uint32_t>(p);
    case dtype::i32: return load<std::int32_t>(p);
    case dtype::f16: return tensogram::cbor::half_to_double(load<std::uint16_t>(p));
    case dtype::bf16: return decode_bf16(load<std::uint16_t>(p));
    case dtype::f32: return load<float>(p);
    case dtype::f64: return load<double>(p);
    default: return decode_f8(t, load<std::uint8_t>(p));
  }
}

template <class T>
std::uint64_t first_outside_typed(const std::byte* data, std::uint64_t n, const numeric_bounds& b) {
  for (std::uint64_t i = 0; i < n; ++i) {
    if (!b.admits(static_cast<double>(load<T>(data + i * sizeof(T))))) return i;
  }
  return n;
}

// Index of the first element outside the bounds, or `n`.
std::uint64_t first_outside(dtype t, const std::byte* data, std::uint64_t n, const numeric_bounds& b) {
  switch (t) {  // the common dtypes get a loop of their own (no per-element switch)
    case dtype::f32: return first_outside_typed<float>(data, n, b);
    case dtype::f64: return first_outside_typed<double>(data, n, b);
    case dtype::i32: return first_outside_typed<std::int32_t>(data, n, b);
    case dtype::u8: return first_outside_typed<std::uint8_t>(data, n, b);
    default: break;
  }
  const std::uint64_t size = safetensors::dtype_bits(t) / 8;
  for (std::uint64_t i = 0; i < n; ++i) {
    if (!b.admits(flat_number(t, data + i * size))) return i;
  }
  return n;
}

void check_values(const file& f, const json_schema_evaluator& ev, const std::string& name) {
  const json& doc = f.schema().document();
  const tensor_access a(f, name);
  const std::string root_ptr = escape_token(name);
  // Follow the dimension nodes while they carry structure keywords only.
  const json* node = &doc.at("properties").at(name);
  std::size_t level = 0;
  std::vector<const json*> chain = ref_chain(doc, node);
  while (level < a.dims.size() && !chain.empty()) {
    bool structural = true;
    for (const auto* n : chain)
      structural = structural && !has_value_keywords(*n) && type_admits(*n, "array");
    const json& last = *chain.back();
    if (!structural || !last.is_object() || !last.contains("items")) break;
    node = &last.at("items");
    chain = ref_chain(doc, node);
    ++level;
  }
  if (chain.empty()) {  // an unresolved reference: evaluate the whole tensor
    node = &doc.at("properties").at(name);
    level = 0;
  }
  if (level == a.dims.size() && a.layout->kind == tensor_kind::flat && !chain.empty() &&
      flat_element_trivially_valid(chain, a.layout->flat_dtype)) {
    return;
  }
  std::uint64_t start = 0;
  if (level == a.dims.size() && a.layout->kind == tensor_kind::flat && !chain.empty()) {
    if (const auto bounds = flat_numeric_bounds(chain, a.layout->flat_dtype)) {
      // Only the first element outside the bounds (if any) needs the
      // evaluator; the ones before it are known to pass.
      start = first_outside(a.layout->flat_dtype, a.data.data(), a.count, *bounds);
      if (start == a.count) return;
    }
  }
  const std::uint64_t outer = product(a.dims.first(level));
  const std::uint64_t inner = product(a.dims.subspan(level));
  for (std::uint64_t i = start; i < outer; ++i) {
    const std::string ptr = root_ptr + index_pointer(a.dims.first(level), i);
    json value;
    try {
      value = a.subtree(level, i * inner);
    } catch (const deep_failure& e) {
      throw error(e.code, ptr + e.pointer + ": " + e.what);
    }
    if (const auto v = ev.validate_node(*node, value, ptr)) {
      throw error(errc::mt_value, v->pointer + ": " + v->keyword + ": " + v->message);
    }
  }
}

// Value keywords on the root (or on what a root `$ref` points to) apply to
// the whole logical value.
bool root_has_value_keywords(const json& doc) {
  const auto chain = ref_chain(doc, &doc);
  if (chain.empty()) return true;  // unresolved: let the evaluator decide on the whole value
  return std::any_of(chain.begin(), chain.end(),
                     [](const json* n) { return n->is_object() && has_value_keywords(*n); });
}

}  // namespace

json file::logical_value(std::string_view name) const {
  const std::string n(name);
  const tensor_access a(*this, n);
  try {
    return a.subtree(0, 0);
  } catch (const deep_failure& e) {
    rethrow_as_error(e, n);
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
      e.pointer = index_pointer(a.dims, i) + e.pointer;
      rethrow_as_error(e, n);
    }
  }
  return out;
}

json file::logical_value() const {
  json out = json::object();
  for (const auto& name : tensor_names()) out[name] = logical_value(name);
  return out;
}

void file::validate_deep() const {
  const auto names = tensor_names();
  // Passes 1 and 2.
  for (const scan mode : {scan::bools, scan::utf8}) {
    for (const auto& name : names) scan_tensor(mode, name, tensor_access(*this, name));
  }
  // Pass 3.
  for (const auto& name : names) {
    const tensor_access a(*this, name);
    try {
      if (a.layout->kind == tensor_kind::record) {
        for (std::uint64_t i = 0; i < a.count; ++i) {
          try {
            check_record_padding(*a.layout->record, a.data.data() + i * a.layout->record->size, a.heap);
          } catch (deep_failure& e) {
            e.pointer = index_pointer(a.dims, i) + e.pointer;
            throw;
          }
        }
      } else if (a.layout->kind == tensor_kind::blob && a.layout->item.type == value_type::list &&
                 a.layout->item.elem->type == value_type::record) {
        const auto& elem = *a.layout->item.elem;
        const std::uint64_t elem_n = product(elem.shape);
        for (std::uint64_t i = 0; i < a.count; ++i) {
          const auto blob = blob_of(a.heap, a.data.data() + i * 16);
          const std::uint64_t count = elem.size == 0 ? 0 : blob.size() / elem.size;
          for (std::uint64_t j = 0; j < count * elem_n; ++j) {
            try {
              check_record_padding(*elem.record, blob.data() + j * elem.record->size, a.heap);
            } catch (deep_failure& e) {
              e.pointer = index_pointer(a.dims, i) + index_token(j / elem_n) +
                          index_pointer(elem.shape, j % elem_n) + e.pointer;
              throw;
            }
          }
        }
      }
      if (heap(name) != nullptr) {
        try {
          check_heap_gaps(a);
        } catch (const deep_failure& e) {
          // Heap offsets are not logical values: name the heap tensor instead.
          throw error(e.code, "tensor \"" + name + "#heap\": " + e.what);
        }
      }
    } catch (const deep_failure& e) {
      rethrow_as_error(e, name);
    }
  }
  for (const auto& t : base().tensors()) {
    if (!t.name().starts_with("__pad__")) continue;
    const auto b = t.bytes();
    for (std::size_t k = 0; k < b.size(); ++k) {
      if (b[k] != std::byte{0}) {
        throw error(errc::mt_nonzero_padding,
                    "padding tensor \"" + t.name() + "\" byte " + std::to_string(k) + " is " +
                        std::to_string(std::to_integer<unsigned>(b[k])) + ", not 0");
      }
    }
  }
  // Pass 4.
  const json_schema_evaluator ev(schema().document());
  if (root_has_value_keywords(schema().document())) {
    if (const auto v = ev.validate(logical_value())) {
      throw error(errc::mt_value, v->pointer + ": " + v->keyword + ": " + v->message);
    }
    return;
  }
  for (const auto& name : names) check_values(*this, ev, name);
}

}  // namespace metatensor

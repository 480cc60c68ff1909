// Writing metatensor files: values → §6 layout → §3.5 canonical bytes.
//
// Values are kept per logical tensor until `serialize`: fixed-size bytes
// (flat elements or records with their BlobRef slots still zero) plus the
// content of every blob, indexed by (record, slot). Heaps and BlobRefs are
// built only when serialising, in the order §6.4 recommends, so the output
// does not depend on the order in which fields were set.
#include "metatensor/writer.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <list>
#include <utility>

#include "metatensor/safetensors.hpp"
#include "src/metatensor/strict_json.hpp"
#include "src/metatensor/text.hpp"
#include "tensogram/core/error.hpp"

namespace metatensor {

// Element bytes are copied from host values: the format is little-endian
// (§3.1 `metatensor.endianness`), so the writer needs a little-endian host.
static_assert(std::endian::native == std::endian::little, "the metatensor writer needs a little-endian host");

namespace {

[[noreturn]] void fail(errc code, const std::string& detail) {
  throw error(code, detail);
}

[[noreturn]] void misuse(const std::string& msg) {
  throw tensogram::invalid_arg_error(msg);
}

std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const std::string& what) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a)
    fail(errc::st_overflow, what + ": size overflows");
  return a * b;
}

std::uint64_t product(std::span<const std::uint64_t> dims) {
  std::uint64_t n = 1;
  for (auto d : dims) n *= d;  // fixed-array dims come from a compiled schema (bounded by §8.4)
  return n;
}

void store_u64(std::byte* p, std::uint64_t v) {
  std::memcpy(p, &v, 8);  // little-endian host (static_assert above)
}

bool is_zero(std::span<const std::byte> bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0}; });
}

// ---------------------------------------------------------------------------
// Blob slots (§6.4): every BlobRef position inside one element, in the order
// heaps are filled (field order, depth-first into nested records and fixed
// arrays). In a C layout field offsets increase in field order, so the list
// is also sorted by offset.

struct blob_slot {
  std::uint64_t offset = 0;
  const type_layout* elem = nullptr;  // List element type; nullptr for a String
};

using slot_table = std::vector<blob_slot>;

void collect_slots(const type_layout& t, std::uint64_t base, slot_table& out) {
  if (!t.has_blobs()) return;
  const std::uint64_t n = product(t.shape);
  const std::uint64_t es = t.element_size();
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t off = base + i * es;
    switch (t.type) {
      case value_type::string: out.push_back({off, nullptr}); break;
      case value_type::list: out.push_back({off, t.elem.get()}); break;
      case value_type::record:
        for (const auto& f : t.record->fields) collect_slots(f.type, off + f.offset, out);
        break;
      case value_type::scalar: break;
    }
  }
}

slot_table slots_of(const tensor_layout& layout) {
  slot_table out;
  if (layout.kind == tensor_kind::record) {
    for (const auto& f : layout.record->fields) collect_slots(f.type, f.offset, out);
  } else if (layout.kind == tensor_kind::blob) {
    out.push_back({0, layout.item.type == value_type::list ? layout.item.elem.get() : nullptr});
  }
  return out;
}

// ---------------------------------------------------------------------------
// Fixed-size bytes given raw: BOOL bytes must be 0 or 1 [MT_BOOL] and record
// padding zero [MT_NONZERO_PADDING] (§6.2, §8.1), so that the file passes
// deep validation.

void check_fixed(const type_layout& t, std::size_t consumed, std::span<const std::byte> bytes,
                 const std::string& where);

void check_record(const record_layout& rec, std::span<const std::byte> bytes, const std::string& where) {
  std::uint64_t cursor = 0;
  for (const auto& f : rec.fields) {
    if (!is_zero(bytes.subspan(cursor, f.offset - cursor))) {
      fail(errc::mt_nonzero_padding,
           where + ": padding before field " + detail::quoted(f.name) + " is not zero (§6.2)");
    }
    check_fixed(f.type, 0, bytes.subspan(f.offset, f.type.size), where + "." + f.name);
    cursor = f.offset + f.type.size;
  }
  if (!is_zero(bytes.subspan(cursor, rec.size - cursor))) {
    fail(errc::mt_nonzero_padding, where + ": tail padding of the record is not zero (§6.2)");
  }
}

void check_fixed(const type_layout& t, std::size_t consumed, std::span<const std::byte> bytes,
                 const std::string& where) {
  const std::uint64_t es = t.element_size();
  const std::uint64_t n = product(std::span<const std::uint64_t>(t.shape).subspan(consumed));
  for (std::uint64_t i = 0; i < n; ++i) {
    const auto elem = bytes.subspan(i * es, es);
    if (t.type == value_type::scalar && t.scalar == dtype::boolean) {
      if (std::to_integer<unsigned>(elem[0]) > 1) {
        fail(errc::mt_bool, where + ": BOOL byte " + std::to_string(std::to_integer<unsigned>(elem[0])) +
                                " is neither 0 nor 1");
      }
    } else if (t.type == value_type::record) {
      check_record(*t.record, elem, where);
    }
  }
}

// ---------------------------------------------------------------------------
// Small floating-point formats (§4.4, §8.3): encoding a binary64 value with
// round-to-nearest-even. `kind` says how the format spends its top codes.

enum class special : std::uint8_t {
  ieee,  // exponent all ones: infinities and NaNs (F16, BF16, F8_E5M2)
  fn,    // no infinities, only S.1111.111 is NaN (F8_E4M3)
  fnuz,  // no infinities, no negative zero, 0x80 is NaN (the FNUZ types)
  none,  // every code is finite (F4, F6_*)
};

struct minifloat {
  unsigned exp_bits;
  unsigned man_bits;
  int bias;
  special kind;
  const char* name;
};

double round_half_even(double q) {
  const double fl = std::floor(q);
  const double diff = q - fl;
  if (diff > 0.5) return fl + 1;
  if (diff < 0.5) return fl;
  return std::fmod(fl, 2.0) == 0.0 ? fl : fl + 1;
}

std::uint32_t encode_minifloat(const minifloat& f, double d, const std::string& where) {
  const unsigned width = f.exp_bits + f.man_bits;  // without the sign
  const std::uint32_t sign = std::signbit(d) ? std::uint32_t{1} << width : 0;
  const std::uint32_t exp_all_ones = (std::uint32_t{1} << f.exp_bits) - 1;
  if (std::isnan(d)) {
    switch (f.kind) {
      case special::ieee: return (exp_all_ones << f.man_bits) | (std::uint32_t{1} << (f.man_bits - 1));
      case special::fn: return (std::uint32_t{1} << width) - 1;
      case special::fnuz: return std::uint32_t{1} << width;
      case special::none: break;
    }
    fail(errc::mt_value, where + ": " + f.name + " has no NaN");
  }
  if (std::isinf(d)) {
    if (f.kind == special::ieee) return sign | (exp_all_ones << f.man_bits);
    fail(errc::mt_value, where + ": " + f.name + " has no infinity");
  }
  const double x = std::fabs(d);
  std::uint32_t magnitude = 0;
  if (x != 0) {
    int e = 0;
    (void)std::frexp(x, &e);
    int exponent = e - 1;  // x = m * 2^exponent, 1 <= m < 2
    const int emin = 1 - f.bias;
    const int man = static_cast<int>(f.man_bits);
    if (exponent < emin) {
      // Subnormal range: multiples of 2^(emin - man). Rounding up to 2^man
      // gives the smallest normal, whose code is exactly 2^man.
      magnitude = static_cast<std::uint32_t>(round_half_even(std::ldexp(x, man - emin)));
    } else {
      double n = round_half_even(std::ldexp(x, man - exponent));  // in [2^man, 2^(man+1)]
      if (n >= std::ldexp(1.0, man + 1)) {
        n = std::ldexp(1.0, man);
        ++exponent;
      }
      const int biased = exponent + f.bias;
      if (biased > static_cast<int>(exp_all_ones)) {
        fail(errc::mt_value, where + ": " + std::to_string(d) + " is out of the range of " + f.name);
      }
      magnitude = (static_cast<std::uint32_t>(biased) << f.man_bits) |
                  (static_cast<std::uint32_t>(n) - (std::uint32_t{1} << f.man_bits));
    }
  }
  std::uint32_t max_finite = 0;
  switch (f.kind) {
    case special::ieee: max_finite = (exp_all_ones << f.man_bits) - 1; break;
    case special::fn: max_finite = (std::uint32_t{1} << width) - 2; break;
    case special::fnuz:
    case special::none: max_finite = (std::uint32_t{1} << width) - 1; break;
  }
  if (magnitude > max_finite) {
    fail(errc::mt_value, where + ": " + std::to_string(d) + " is out of the range of " + f.name);
  }
  if (f.kind == special::fnuz && magnitude == 0) return 0;  // no negative zero: 0x80 is NaN
  return sign | magnitude;
}

// F8_E8M0: an unsigned power of two 2^(code - 127), 0xFF is NaN, no zero.
std::uint32_t encode_e8m0(double d, const std::string& where) {
  if (std::isnan(d)) return 0xFF;
  if (!(d > 0) || std::isinf(d)) {
    fail(errc::mt_value, where + ": F8_E8M0 holds only finite positive powers of two");
  }
  int e = 0;
  (void)std::frexp(d, &e);
  int exponent = e - 1;
  if (round_half_even(std::ldexp(d, -exponent)) >= 2.0) ++exponent;
  const int code = exponent + 127;
  if (code < 0 || code > 254)
    fail(errc::mt_value, where + ": " + std::to_string(d) + " is out of F8_E8M0 range");
  return static_cast<std::uint32_t>(code);
}

const minifloat* minifloat_of(dtype t) {
  static constexpr minifloat f16{5, 10, 15, special::ieee, "F16"};
  static constexpr minifloat bf16{8, 7, 127, special::ieee, "BF16"};
  static constexpr minifloat e4m3{4, 3, 7, special::fn, "F8_E4M3"};
  static constexpr minifloat e5m2{5, 2, 15, special::ieee, "F8_E5M2"};
  static constexpr minifloat e4m3fnuz{4, 3, 8, special::fnuz, "F8_E4M3FNUZ"};
  static constexpr minifloat e5m2fnuz{5, 2, 16, special::fnuz, "F8_E5M2FNUZ"};
  static constexpr minifloat f4{2, 1, 1, special::none, "F4"};
  static constexpr minifloat f6_e2m3{2, 3, 1, special::none, "F6_E2M3"};
  static constexpr minifloat f6_e3m2{3, 2, 3, special::none, "F6_E3M2"};
  switch (t) {
    case dtype::f16: return &f16;
    case dtype::bf16: return &bf16;
    case dtype::f8_e4m3: return &e4m3;
    case dtype::f8_e5m2: return &e5m2;
    case dtype::f8_e4m3fnuz: return &e4m3fnuz;
    case dtype::f8_e5m2fnuz: return &e5m2fnuz;
    case dtype::f4: return &f4;
    case dtype::f6_e2m3: return &f6_e2m3;
    case dtype::f6_e3m2: return &f6_e3m2;
    default: return nullptr;
  }
}

// ---------------------------------------------------------------------------
// Logical values (§8.3) → bytes.

std::string json_kind(const nlohmann::json& v) {
  return v.type_name();
}

double json_number(const nlohmann::json& v, dtype t, const std::string& where) {
  if (!v.is_number()) {
    fail(errc::mt_value, where + ": expected a number for " + std::string(safetensors::dtype_name(t)) +
                             ", got " + json_kind(v));
  }
  return v.get<double>();
}

// An integer of `bits` bits as its two's-complement bit pattern.
std::uint64_t json_integer(const nlohmann::json& v, dtype t, const std::string& where) {
  const unsigned bits = safetensors::dtype_bits(t);
  const bool is_signed = t == dtype::i8 || t == dtype::i16 || t == dtype::i32 || t == dtype::i64;
  const std::string type_name(safetensors::dtype_name(t));
  const auto out_of_range = [&](const std::string& text) {
    fail(errc::mt_value, where + ": " + text + " is out of the range of " + type_name);
  };
  const std::uint64_t pos_max = is_signed    ? (std::uint64_t{1} << (bits - 1)) - 1
                                : bits == 64 ? std::numeric_limits<std::uint64_t>::max()
                                             : (std::uint64_t{1} << bits) - 1;
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > pos_max) out_of_range(std::to_string(u));
    return u;
  }
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (i >= 0) {
      if (static_cast<std::uint64_t>(i) > pos_max) out_of_range(std::to_string(i));
      return static_cast<std::uint64_t>(i);
    }
    const std::int64_t min =
        bits == 64 ? std::numeric_limits<std::int64_t>::min() : -(std::int64_t{1} << (bits - 1));
    if (!is_signed || i < min) out_of_range(std::to_string(i));
    return static_cast<std::uint64_t>(i);
  }
  if (v.is_number_float()) {
    // JSON does not distinguish 3 from 3.0; an integral float is accepted.
    const double d = v.get<double>();
    if (!std::isfinite(d) || std::trunc(d) != d) {
      fail(errc::mt_value, where + ": " + v.dump() + " is not an integer (" + type_name + ")");
    }
    const double lo = is_signed ? -std::ldexp(1.0, static_cast<int>(bits) - 1) : 0.0;
    const double hi = std::ldexp(1.0, static_cast<int>(is_signed ? bits - 1 : bits));
    if (d < lo || d >= hi) out_of_range(v.dump());
    if (d < 0) return static_cast<std::uint64_t>(static_cast<std::int64_t>(d));
    return static_cast<std::uint64_t>(d);
  }
  fail(errc::mt_value, where + ": expected an integer for " + type_name + ", got " + json_kind(v));
}

// The bits of one scalar element (sub-byte types in the low bits).
std::uint64_t scalar_bits(dtype t, const nlohmann::json& v, const std::string& where) {
  switch (t) {
    case dtype::boolean:
      if (!v.is_boolean())
        fail(errc::mt_value, where + ": expected true or false for BOOL, got " + json_kind(v));
      return v.get<bool>() ? 1 : 0;
    case dtype::u8:
    case dtype::i8:
    case dtype::u16:
    case dtype::i16:
    case dtype::u32:
    case dtype::i32:
    case dtype::u64:
    case dtype::i64: {
      const std::uint64_t bits = json_integer(v, t, where);
      const unsigned width = safetensors::dtype_bits(t);
      return width == 64 ? bits : bits & ((std::uint64_t{1} << width) - 1);
    }
    case dtype::f32: {
      const double d = json_number(v, t, where);
      const auto f = static_cast<float>(d);
      if (std::isfinite(d) && !std::isfinite(f)) {
        fail(errc::mt_value, where + ": " + v.dump() + " is out of the range of F32");
      }
      return std::bit_cast<std::uint32_t>(f);
    }
    case dtype::f64: return std::bit_cast<std::uint64_t>(json_number(v, t, where));
    case dtype::c64: {
      if (!v.is_array() || v.size() != 2) {
        fail(errc::mt_value, where + ": expected [real, imaginary] for C64, got " + json_kind(v));
      }
      const std::uint64_t re = scalar_bits(dtype::f32, v[0], where + "/0");
      const std::uint64_t im = scalar_bits(dtype::f32, v[1], where + "/1");
      return re | (im << 32);
    }
    case dtype::f8_e8m0: return encode_e8m0(json_number(v, t, where), where);
    default: {
      const minifloat* f = minifloat_of(t);
      return encode_minifloat(*f, json_number(v, t, where), where);
    }
  }
}

// Where String and List contents of one element go: consecutive slots.
struct blob_sink {
  std::vector<std::vector<std::byte>>* blobs = nullptr;
  std::size_t next = 0;
};

std::vector<std::byte> utf8_bytes(std::string_view text, const std::string& where) {
  const std::size_t bad = first_invalid_utf8(text);
  if (bad != std::string_view::npos) {
    fail(errc::mt_utf8, where + ": string is not valid UTF-8 (byte " + std::to_string(bad) + ")");
  }
  const auto* p = reinterpret_cast<const std::byte*>(text.data());
  return {p, p + text.size()};
}

void encode_type(const type_layout& t, std::size_t k, const nlohmann::json& v, std::byte* dst,
                 std::string& where, blob_sink& sink);

void encode_record(const record_layout& rec, const nlohmann::json& v, std::byte* dst, std::string& where,
                   blob_sink& sink) {
  const std::size_t mark = where.size();
  if (rec.tuple) {
    if (!v.is_array() || v.size() != rec.fields.size()) {
      fail(errc::mt_value, where + ": expected an array of " + std::to_string(rec.fields.size()) +
                               " items (tuple), got " +
                               (v.is_array() ? std::to_string(v.size()) + " items" : json_kind(v)));
    }
    for (std::size_t i = 0; i < rec.fields.size(); ++i) {
      where += '/';
      where += std::to_string(i);
      encode_type(rec.fields[i].type, 0, v[i], dst + rec.fields[i].offset, where, sink);
      where.resize(mark);
    }
    return;
  }
  if (!v.is_object()) fail(errc::mt_value, where + ": expected an object (record), got " + json_kind(v));
  for (const auto& [key, value] : v.items()) {
    if (rec.find(key) == nullptr) fail(errc::mt_value, where + ": unknown field " + detail::quoted(key));
    (void)value;
  }
  for (const auto& f : rec.fields) {
    const auto it = v.find(f.name);
    if (it == v.end()) fail(errc::mt_value, where + ": missing field " + detail::quoted(f.name));
    where += '/';
    where += detail::pointer_token(f.name);
    encode_type(f.type, 0, *it, dst + f.offset, where, sink);
    where.resize(mark);
  }
}

void encode_type(const type_layout& t, std::size_t k, const nlohmann::json& v, std::byte* dst,
                 std::string& where, blob_sink& sink) {
  if (k < t.shape.size()) {
    const std::uint64_t n = t.shape[k];
    if (!v.is_array() || v.size() != n) {
      fail(errc::mt_value, where + ": expected an array of " + std::to_string(n) +
                               " items (fixed array), got " +
                               (v.is_array() ? std::to_string(v.size()) + " items" : json_kind(v)));
    }
    const std::uint64_t stride =
        product(std::span<const std::uint64_t>(t.shape).subspan(k + 1)) * t.element_size();
    const std::size_t mark = where.size();
    for (std::uint64_t i = 0; i < n; ++i) {
      where += '/';
      where += std::to_string(i);
      encode_type(t, k + 1, v[i], dst + i * stride, where, sink);
      where.resize(mark);
    }
    return;
  }
  switch (t.type) {
    case value_type::scalar: {
      const std::uint64_t bits = scalar_bits(t.scalar, v, where);
      std::memcpy(dst, &bits, t.element_size());  // little-endian: the low bytes
      return;
    }
    case value_type::record: encode_record(*t.record, v, dst, where, sink); return;
    case value_type::string: {
      if (!v.is_string()) fail(errc::mt_value, where + ": expected a string, got " + json_kind(v));
      (*sink.blobs)[sink.next++] = utf8_bytes(v.get_ref<const std::string&>(), where);
      return;
    }
    case value_type::list: {
      if (!v.is_array()) fail(errc::mt_value, where + ": expected an array (list), got " + json_kind(v));
      const type_layout& elem = *t.elem;
      const std::uint64_t bytes = checked_mul(v.size(), elem.size, where);
      std::vector<std::byte> packed(bytes);
      blob_sink none;  // List elements hold no String or List (§4.4)
      const std::size_t mark = where.size();
      for (std::size_t i = 0; i < v.size(); ++i) {
        where += '/';
        where += std::to_string(i);
        encode_type(elem, 0, v[i], packed.data() + i * elem.size, where, none);
        where.resize(mark);
      }
      (*sink.blobs)[sink.next++] = std::move(packed);
      return;
    }
  }
}

}  // namespace

// ---------------------------------------------------------------------------

namespace detail {

struct tensor_values {
  const tensor_layout* layout = nullptr;
  std::shared_ptr<const slot_table> slots;  // struct and blob kinds
  std::vector<std::uint64_t> dims;
  std::uint64_t count = 0;                    // elements (records, strings, lists)
  std::uint64_t element_size = 0;             // struct: record size; blob: 16; flat: 0 (see data)
  std::vector<std::byte> data;                // flat: elements; struct: records, BlobRef bytes still zero
  std::vector<std::vector<std::byte>> blobs;  // count * slots->size(), row-major then slot order

  [[nodiscard]] std::size_t slot_count() const noexcept { return slots ? slots->size() : 0; }
};

}  // namespace detail

namespace {

using detail::tensor_values;

// The target of a field path inside a record (see writer.hpp).
struct field_target {
  std::uint64_t offset = 0;
  const type_layout* type = nullptr;
  std::size_t consumed = 0;  // fixed-array indices applied
  std::string path;          // for messages
};

field_target resolve_path(const record_layout& root, std::string_view path, const std::string& tensor) {
  const std::string what = "tensor " + detail::quoted(tensor) + ", field path " + detail::quoted(path);
  const record_layout* rec = &root;
  std::uint64_t base = 0;
  std::string_view rest = path;
  while (true) {
    const field_layout* best = nullptr;
    for (const auto& f : rec->fields) {
      if (!rest.starts_with(f.name)) continue;
      if (rest.size() != f.name.size() && rest[f.name.size()] != '.' && rest[f.name.size()] != '[') continue;
      if (best == nullptr || f.name.size() > best->name.size()) best = &f;
    }
    if (best == nullptr) misuse(what + ": no field matches " + detail::quoted(rest));
    rest.remove_prefix(best->name.size());
    field_target t{base + best->offset, &best->type, 0, std::string(path)};
    while (!rest.empty() && rest.front() == '[') {
      const std::size_t close = rest.find(']');
      if (close == std::string_view::npos || close == 1) misuse(what + ": malformed index");
      std::uint64_t index = 0;
      for (char c : rest.substr(1, close - 1)) {
        if (c < '0' || c > '9' || index > (std::numeric_limits<std::uint64_t>::max() - 9) / 10) {
          misuse(what + ": malformed index");
        }
        index = index * 10 + static_cast<std::uint64_t>(c - '0');
      }
      if (t.consumed >= t.type->shape.size()) misuse(what + ": too many indices (not a fixed array)");
      if (index >= t.type->shape[t.consumed]) {
        misuse(what + ": index " + std::to_string(index) + " out of range [0, " +
               std::to_string(t.type->shape[t.consumed]) + ")");
      }
      const std::uint64_t stride =
          product(std::span<const std::uint64_t>(t.type->shape).subspan(t.consumed + 1)) *
          t.type->element_size();
      t.offset += index * stride;
      ++t.consumed;
      rest.remove_prefix(close + 1);
    }
    if (rest.empty()) return t;
    if (rest.front() != '.') misuse(what + ": unexpected " + detail::quoted(rest));
    if (t.consumed != t.type->shape.size() || t.type->type != value_type::record) {
      misuse(what + ": '.' after a field that is not a record");
    }
    rec = t.type->record.get();
    base = t.offset;
    rest.remove_prefix(1);
  }
}

std::size_t slot_index(const slot_table& slots, std::uint64_t offset) {
  const auto it = std::lower_bound(slots.begin(), slots.end(), offset,
                                   [](const blob_slot& s, std::uint64_t off) { return s.offset < off; });
  return static_cast<std::size_t>(it - slots.begin());  // present: the path resolved to a String/List
}

}  // namespace

record_writer::record_writer(std::unique_ptr<detail::tensor_values> values) : values_(std::move(values)) {}
record_writer::~record_writer() = default;

std::size_t record_writer::size() const noexcept {
  return static_cast<std::size_t>(values_->count);
}

namespace {

struct located {
  field_target target;
  std::byte* record = nullptr;  // start of the record
  std::string where;            // "tensor "x", record 3, field "a.b""
};

located locate(detail::tensor_values& v, std::size_t record, std::string_view path) {
  const std::string& name = v.layout->name;
  if (record >= v.count) {
    misuse("tensor " + detail::quoted(name) + ": record " + std::to_string(record) + " out of range [0, " +
           std::to_string(v.count) + ")");
  }
  located l;
  l.target = resolve_path(*v.layout->record, path, name);
  l.record = v.data.data() + record * v.element_size;
  l.where = "tensor " + detail::quoted(name) + ", record " + std::to_string(record) + ", field " +
            detail::quoted(path);
  return l;
}

}  // namespace

void record_writer::set_scalar(std::size_t record, std::string_view field_path,
                               bool (*accepts)(dtype) noexcept, std::span<const std::byte> raw) {
  auto l = locate(*values_, record, field_path);
  const type_layout& t = *l.target.type;
  if (l.target.consumed != t.shape.size() || t.type != value_type::scalar) {
    misuse(l.where + ": not a scalar (use set_bytes, set_string or set_list_bytes)");
  }
  if (!accepts(t.scalar) || raw.size() != t.element_size()) {
    misuse(l.where + ": the C++ type does not match dtype " + std::string(safetensors::dtype_name(t.scalar)));
  }
  check_fixed(t, t.shape.size(), raw, l.where);
  std::memcpy(l.record + l.target.offset, raw.data(), raw.size());
}

void record_writer::set_bytes(std::size_t record, std::string_view field_path,
                              std::span<const std::byte> raw) {
  auto l = locate(*values_, record, field_path);
  const type_layout& t = *l.target.type;
  if (t.has_blobs()) misuse(l.where + ": holds a String or List (use set_string / set_list_bytes)");
  const std::uint64_t size =
      product(std::span<const std::uint64_t>(t.shape).subspan(l.target.consumed)) * t.element_size();
  if (raw.size() != size) {
    misuse(l.where + ": " + std::to_string(raw.size()) + " bytes given, the field has " +
           std::to_string(size));
  }
  check_fixed(t, l.target.consumed, raw, l.where);
  if (!raw.empty()) std::memcpy(l.record + l.target.offset, raw.data(), raw.size());
}

void record_writer::set_string(std::size_t record, std::string_view field_path, std::string_view text) {
  auto l = locate(*values_, record, field_path);
  const type_layout& t = *l.target.type;
  if (l.target.consumed != t.shape.size() || t.type != value_type::string) misuse(l.where + ": not a String");
  auto bytes = utf8_bytes(text, l.where);
  const std::size_t s = slot_index(*values_->slots, l.target.offset);
  values_->blobs[record * values_->slot_count() + s] = std::move(bytes);
}

void record_writer::set_list_bytes(std::size_t record, std::string_view field_path,
                                   std::span<const std::byte> packed) {
  auto l = locate(*values_, record, field_path);
  const type_layout& t = *l.target.type;
  if (l.target.consumed != t.shape.size() || t.type != value_type::list) misuse(l.where + ": not a List");
  const type_layout& elem = *t.elem;
  if (packed.size() % elem.size != 0) {
    misuse(l.where + ": " + std::to_string(packed.size()) + " bytes is not a whole number of " +
           std::to_string(elem.size) + "-byte elements");
  }
  for (std::size_t i = 0; i < packed.size(); i += elem.size) {
    check_fixed(elem, 0, packed.subspan(i, elem.size), l.where + "[" + std::to_string(i / elem.size) + "]");
  }
  const std::size_t s = slot_index(*values_->slots, l.target.offset);
  values_->blobs[record * values_->slot_count() + s].assign(packed.begin(), packed.end());
}

// ---------------------------------------------------------------------------

struct file_builder::impl {
  compiled_schema schema;
  writer_options options;
  std::map<std::string, std::shared_ptr<const slot_table>, std::less<>> slot_cache;
  std::map<std::string, std::unique_ptr<record_writer>, std::less<>> tensors;

  const tensor_layout& lookup(std::string_view name) const {
    const tensor_layout* t = schema.find(name);
    if (t == nullptr)
      fail(errc::mt_tensor_set,
           "tensor " + detail::quoted(name) + " is not a root property of the schema (§4.6)");
    return *t;
  }

  std::shared_ptr<const slot_table> slots(const tensor_layout& t) {
    auto it = slot_cache.find(t.name);
    if (it == slot_cache.end()) {
      it = slot_cache.emplace(t.name, std::make_shared<const slot_table>(slots_of(t))).first;
    }
    return it->second;
  }

  // New values for `t` with `dims` checked against the schema (§5.1) and
  // zero-filled storage.
  std::unique_ptr<tensor_values> make(const tensor_layout& t, std::vector<std::uint64_t> dims) {
    const std::string what = "tensor " + detail::quoted(t.name);
    if (dims.size() != t.rank()) {
      fail(errc::mt_shape, what + ": rank " + std::to_string(dims.size()) + " given, the schema has " +
                               std::to_string(t.rank()) + " dimensions (§5.1)");
    }
    std::uint64_t count = 1;
    for (std::size_t i = 0; i < dims.size(); ++i) {
      const auto& b = t.dims[i];
      if (dims[i] < b.min || (b.max && dims[i] > *b.max)) {
        fail(errc::mt_shape, what + ": dimension " + std::to_string(i) + " is " + std::to_string(dims[i]) +
                                 ", the schema allows [" + std::to_string(b.min) + ", " +
                                 (b.max ? std::to_string(*b.max) : std::string("inf")) + "] (§5.1)");
      }
      if (dims[i] > safetensors::max_json_integer) fail(errc::st_overflow, what + ": dimension above 2^53-1");
      count = checked_mul(count, dims[i], what);
    }
    auto v = std::make_unique<tensor_values>();
    v->layout = &t;
    v->dims = std::move(dims);
    v->count = count;
    std::uint64_t bytes = 0;
    switch (t.kind) {
      case tensor_kind::flat: {
        const std::uint64_t bits = checked_mul(count, safetensors::dtype_bits(t.flat_dtype), what);
        if (bits % 8 != 0) {
          fail(errc::st_subbyte, what + ": " + std::to_string(count) + " elements of " +
                                     std::string(safetensors::dtype_name(t.flat_dtype)) +
                                     " are not a whole number of bytes (§2 rule 8)");
        }
        bytes = bits / 8;
        break;
      }
      case tensor_kind::record:
        v->element_size = t.record->size;
        bytes = checked_mul(count, t.record->size, what);
        break;
      case tensor_kind::blob:
        v->element_size = 16;  // the index is built when serialising
        if (checked_mul(count, 16, what) > safetensors::max_json_integer) {
          fail(errc::st_overflow, what + ": more than 2^53-1 bytes");
        }
        break;
    }
    if (bytes > safetensors::max_json_integer) fail(errc::st_overflow, what + ": more than 2^53-1 bytes");
    v->data.resize(static_cast<std::size_t>(bytes));
    if (t.kind != tensor_kind::flat) {
      v->slots = slots(t);
      if (!v->slots->empty()) {
        v->blobs.resize(static_cast<std::size_t>(checked_mul(count, v->slots->size(), what)));
      }
    }
    return v;
  }

  record_writer& install(std::unique_ptr<tensor_values> v) {
    const std::string& name = v->layout->name;
    auto it = tensors.find(name);
    if (it != tensors.end()) {
      // Keep the record_writer object: references handed out stay valid.
      it->second->values_ = std::move(v);
      return *it->second;
    }
    auto w = std::unique_ptr<record_writer>(new record_writer(std::move(v)));
    return *tensors.emplace(name, std::move(w)).first->second;
  }
};

file_builder::file_builder(compiled_schema schema, writer_options options) : impl_(std::make_unique<impl>()) {
  const std::uint64_t a = options.alignment;
  if (a < 16 || a > 65536 || (a & (a - 1)) != 0) {
    fail(errc::mt_alignment_value,
         "alignment " + std::to_string(a) + " is not a power of two between 16 and 65536 (§3.1)");
  }
  for (const auto& [key, value] : options.user_metadata) {
    if (key.starts_with("metatensor.")) {
      fail(errc::mt_unknown_key,
           "user metadata key " + detail::quoted(key) + ": the \"metatensor.\" prefix is reserved (§3.1)");
    }
    if (first_invalid_utf8(key) != std::string::npos || first_invalid_utf8(value) != std::string::npos) {
      fail(errc::st_header_utf8,
           "user metadata key " + detail::quoted(key) + " or its value is not valid UTF-8 (§2 rule 3)");
    }
  }
  impl_->schema = std::move(schema);
  impl_->options = std::move(options);
}

file_builder::file_builder(file_builder&&) noexcept = default;
file_builder& file_builder::operator=(file_builder&&) noexcept = default;
file_builder::~file_builder() = default;

const compiled_schema& file_builder::schema() const noexcept {
  return impl_->schema;
}
const writer_options& file_builder::options() const noexcept {
  return impl_->options;
}

void file_builder::check_flat_type(std::string_view name, bool (*accepts)(dtype) noexcept,
                                   std::size_t size) const {
  const tensor_layout& t = impl_->lookup(name);
  if (t.kind != tensor_kind::flat)
    misuse("tensor " + detail::quoted(name) + " is a " + std::string(kind_name(t.kind)) + " tensor");
  if (!accepts(t.flat_dtype) || size * 8 != safetensors::dtype_bits(t.flat_dtype)) {
    misuse("tensor " + detail::quoted(name) + ": the C++ type does not match dtype " +
           std::string(safetensors::dtype_name(t.flat_dtype)));
  }
}

void file_builder::set_flat_bytes(std::string_view name, std::vector<std::uint64_t> dims,
                                  std::span<const std::byte> bytes) {
  const tensor_layout& t = impl_->lookup(name);
  if (t.kind != tensor_kind::flat)
    misuse("tensor " + detail::quoted(name) + " is a " + std::string(kind_name(t.kind)) + " tensor");
  auto v = impl_->make(t, std::move(dims));
  if (bytes.size() != v->data.size()) {
    misuse("tensor " + detail::quoted(name) + ": " + std::to_string(bytes.size()) +
           " bytes given, dtype x dims needs " + std::to_string(v->data.size()));
  }
  if (t.flat_dtype == dtype::boolean) {
    const auto it = std::find_if(bytes.begin(), bytes.end(),
                                 [](std::byte b) { return std::to_integer<unsigned>(b) > 1; });
    if (it != bytes.end()) {
      fail(errc::mt_bool, "tensor " + detail::quoted(name) + ": element " +
                              std::to_string(it - bytes.begin()) + " is a BOOL byte other than 0 or 1");
    }
  }
  if (!bytes.empty()) std::memcpy(v->data.data(), bytes.data(), bytes.size());
  impl_->install(std::move(v));
}

void file_builder::set_strings(std::string_view name, std::vector<std::uint64_t> dims,
                               std::span<const std::string> values) {
  const tensor_layout& t = impl_->lookup(name);
  if (t.kind != tensor_kind::blob || t.item.type != value_type::string) {
    misuse("tensor " + detail::quoted(name) + " is not a blob tensor of strings");
  }
  auto v = impl_->make(t, std::move(dims));
  if (values.size() != v->count) {
    misuse("tensor " + detail::quoted(name) + ": " + std::to_string(values.size()) +
           " strings given, dims need " + std::to_string(v->count));
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    v->blobs[i] = utf8_bytes(values[i], "tensor " + detail::quoted(name) + ", element " + std::to_string(i));
  }
  impl_->install(std::move(v));
}

void file_builder::set_list_bytes(std::string_view name, std::vector<std::uint64_t> dims,
                                  std::span<const std::vector<std::byte>> values) {
  const tensor_layout& t = impl_->lookup(name);
  if (t.kind != tensor_kind::blob || t.item.type != value_type::list) {
    misuse("tensor " + detail::quoted(name) + " is not a blob tensor of lists");
  }
  auto v = impl_->make(t, std::move(dims));
  if (values.size() != v->count) {
    misuse("tensor " + detail::quoted(name) + ": " + std::to_string(values.size()) +
           " lists given, dims need " + std::to_string(v->count));
  }
  const type_layout& elem = *t.item.elem;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::string where = "tensor " + detail::quoted(name) + ", element " + std::to_string(i);
    if (values[i].size() % elem.size != 0) {
      misuse(where + ": " + std::to_string(values[i].size()) + " bytes is not a whole number of " +
             std::to_string(elem.size) + "-byte elements");
    }
    const std::span<const std::byte> packed(values[i]);
    for (std::size_t j = 0; j < packed.size(); j += elem.size) {
      check_fixed(elem, 0, packed.subspan(j, elem.size), where + "[" + std::to_string(j / elem.size) + "]");
    }
    v->blobs[i] = values[i];
  }
  impl_->install(std::move(v));
}

record_writer& file_builder::set_records(std::string_view name, std::vector<std::uint64_t> dims) {
  const tensor_layout& t = impl_->lookup(name);
  if (t.kind != tensor_kind::record) misuse("tensor " + detail::quoted(name) + " is not a struct tensor");
  return impl_->install(impl_->make(t, std::move(dims)));
}

namespace {

// Dimension lengths of a logical value: the first array at each level; an
// empty array leaves the inner lengths at their lower bound.
std::vector<std::uint64_t> infer_dims(const tensor_layout& t, const nlohmann::json& value,
                                      const std::string& root) {
  std::vector<std::uint64_t> dims;
  const nlohmann::json* cur = &value;
  std::string where = root;
  for (std::size_t i = 0; i < t.rank(); ++i) {
    if (cur == nullptr) {
      dims.push_back(t.dims[i].min);
      continue;
    }
    if (!cur->is_array()) {
      fail(errc::mt_value,
           where + ": expected an array (dimension " + std::to_string(i) + "), got " + json_kind(*cur));
    }
    dims.push_back(cur->size());
    if (cur->empty()) {
      cur = nullptr;
    } else {
      cur = &(*cur)[0];
      where += "/0";
    }
  }
  return dims;
}

// Calls `leaf(element, flat_index, where)` for every element, row-major,
// checking that the arrays are not ragged [MT_SHAPE].
template <class F>
void walk_dims(const nlohmann::json& v, std::span<const std::uint64_t> dims, std::size_t level,
               std::uint64_t& index, std::string& where, F&& leaf) {
  if (level == dims.size()) {
    leaf(v, index++, where);
    return;
  }
  if (!v.is_array())
    fail(errc::mt_value, where + ": expected an array (dimension " + std::to_string(level) + ")");
  if (v.size() != dims[level]) {
    fail(errc::mt_shape, where + ": " + std::to_string(v.size()) + " items, dimension " +
                             std::to_string(level) + " has " + std::to_string(dims[level]) +
                             " (ragged array)");
  }
  const std::size_t mark = where.size();
  for (std::size_t i = 0; i < v.size(); ++i) {
    where += '/';
    where += std::to_string(i);
    walk_dims(v[i], dims, level + 1, index, where, leaf);
    where.resize(mark);
  }
}

}  // namespace

void file_builder::set_json(std::string_view name, const nlohmann::json& value) {
  const tensor_layout& t = impl_->lookup(name);
  std::string where = "/" + detail::pointer_token(name);
  auto v = impl_->make(t, infer_dims(t, value, where));
  std::uint64_t index = 0;
  const std::vector<std::uint64_t> dims = v->dims;
  switch (t.kind) {
    case tensor_kind::flat: {
      const unsigned bits = safetensors::dtype_bits(t.flat_dtype);
      walk_dims(value, dims, 0, index, where,
                [&](const nlohmann::json& e, std::uint64_t i, const std::string& w) {
                  const std::uint64_t code = scalar_bits(t.flat_dtype, e, w);
                  if (bits >= 8) {
                    std::memcpy(v->data.data() + i * (bits / 8), &code, bits / 8);
                    return;
                  }
                  // Sub-byte types: element i occupies bits [i*w, (i+1)*w) of the
                  // little-endian bit stream (LSB first within each byte).
                  for (unsigned b = 0; b < bits; ++b) {
                    if (((code >> b) & 1U) == 0) continue;
                    const std::uint64_t pos = i * bits + b;
                    v->data[pos / 8] |= std::byte{static_cast<std::uint8_t>(1U << (pos % 8))};
                  }
                });
      break;
    }
    case tensor_kind::record: {
      const std::size_t ns = v->slot_count();
      walk_dims(value, dims, 0, index, where,
                [&](const nlohmann::json& e, std::uint64_t i, const std::string& w) {
                  std::string p = w;
                  blob_sink sink{&v->blobs, static_cast<std::size_t>(i) * ns};
                  encode_record(*t.record, e, v->data.data() + i * t.record->size, p, sink);
                });
      break;
    }
    case tensor_kind::blob: {
      walk_dims(value, dims, 0, index, where,
                [&](const nlohmann::json& e, std::uint64_t i, const std::string& w) {
                  std::string p = w;
                  std::array<std::byte, 16> unused{};
                  blob_sink sink{&v->blobs, static_cast<std::size_t>(i)};
                  encode_type(t.item, 0, e, unused.data(), p, sink);
                });
      break;
    }
  }
  impl_->install(std::move(v));
}

void file_builder::set_logical_value(const nlohmann::json& object) {
  if (!object.is_object()) fail(errc::mt_value, "the logical value must be a JSON object (§8.3)");
  for (const auto& [key, value] : object.items()) set_json(key, value);
}

void file_builder::erase(std::string_view name) {
  const auto it = impl_->tensors.find(name);
  if (it != impl_->tensors.end()) impl_->tensors.erase(it);
}

bool file_builder::contains(std::string_view name) const noexcept {
  return impl_->tensors.find(name) != impl_->tensors.end();
}

// ---------------------------------------------------------------------------
// Layout (§6.4–§6.6) and the canonical form (§3.5).

namespace {

struct physical {
  std::string name;
  dtype type = dtype::u8;
  std::vector<std::uint64_t> shape;
  std::span<const std::byte> data;
  std::uint64_t placement = 1;  // R(t), §6.5
};

// Everything `safetensors::serialize`/`write_file` needs, with the storage
// that the spans point to.
struct prepared {
  std::list<std::vector<std::byte>> owned;  // built primaries and heaps (stable addresses)
  std::vector<std::byte> zeros;             // padding tensor content
  std::vector<safetensors::tensor_input> inputs;
  std::map<std::string, std::string> metadata;
  safetensors::write_options options;
};

// Heap and BlobRefs of a struct or blob tensor (§6.4): blobs appended in
// record order and slot order, List blobs aligned to align(E), empty blobs
// as (0, 0).
void build_heap(const tensor_values& v, std::vector<std::byte>& primary, std::vector<std::byte>& heap) {
  const slot_table& slots = *v.slots;
  const std::string what = "tensor " + detail::quoted(v.layout->name) + " heap";
  for (std::uint64_t r = 0; r < v.count; ++r) {
    for (std::size_t s = 0; s < slots.size(); ++s) {
      const auto& blob = v.blobs[static_cast<std::size_t>(r) * slots.size() + s];
      if (blob.empty()) continue;  // the BlobRef stays (0, 0)
      if (slots[s].elem != nullptr) heap.resize(detail::align_up(heap.size(), slots[s].elem->align));
      const std::uint64_t offset = heap.size();
      if (blob.size() > safetensors::max_json_integer - offset) {
        fail(errc::st_overflow, what + " exceeds 2^53-1 bytes");
      }
      heap.insert(heap.end(), blob.begin(), blob.end());
      std::byte* ref = primary.data() + r * v.element_size + slots[s].offset;
      store_u64(ref, offset);
      store_u64(ref + 8, blob.size());
    }
  }
}

// `tensors`: the values of every tensor set, sorted by name.
prepared prepare(const compiled_schema& schema, const writer_options& options,
                 std::span<const tensor_values* const> tensors) {
  for (const auto& name : schema.required()) {
    if (std::none_of(tensors.begin(), tensors.end(),
                     [&](const tensor_values* v) { return v->layout->name == name; })) {
      fail(errc::mt_tensor_set, "required tensor " + detail::quoted(name) + " has not been set (§4.6)");
    }
  }
  const std::uint64_t a = options.alignment;
  prepared p;
  std::vector<std::string> present;
  std::vector<physical> phys;
  for (const tensor_values* values : tensors) {
    const tensor_values& v = *values;
    const tensor_layout& t = *v.layout;
    present.push_back(t.name);
    physical primary{t.name, t.primary_dtype(), v.dims, v.data, t.primary_placement(a)};
    if (const auto trailing = t.trailing_dim()) primary.shape.push_back(*trailing);
    // Struct tensors with blobs and blob indexes get their BlobRefs filled
    // in a copy; other primaries are written from the stored bytes.
    std::vector<std::byte>* built = nullptr;
    if (t.kind == tensor_kind::blob) {
      built = &p.owned.emplace_back(static_cast<std::size_t>(v.count * 16));
    } else if (t.has_heap) {
      built = &p.owned.emplace_back(v.data);
    }
    if (built != nullptr) primary.data = *built;
    phys.push_back(primary);
    if (t.has_heap) {
      auto& heap = p.owned.emplace_back();
      build_heap(v, *built, heap);
      phys.push_back({t.heap_name(), dtype::u8, {heap.size()}, heap, t.heap_placement(a)});
    }
  }
  // §3.5: decreasing R(t), then name byte-wise (std::string compares as
  // unsigned char).
  std::sort(phys.begin(), phys.end(), [](const physical& x, const physical& y) {
    if (x.placement != y.placement) return x.placement > y.placement;
    return x.name < y.name;
  });
  std::uint64_t r_max = a;
  for (const auto& t : phys) r_max = std::max(r_max, t.placement);
  p.zeros.resize(static_cast<std::size_t>(r_max));

  // §6.6 step 2: a cursor relative to D; padding only before a non-empty
  // tensor that is not at a multiple of its R(t).
  std::uint64_t cursor = 0;
  std::size_t pads = 0;
  for (const auto& t : phys) {
    if (!t.data.empty() && cursor % t.placement != 0) {
      const std::uint64_t pad = detail::align_up(cursor, t.placement) - cursor;
      p.inputs.push_back({"__pad__" + std::to_string(pads++),
                          dtype::u8,
                          {pad},
                          std::span<const std::byte>(p.zeros).subspan(0, static_cast<std::size_t>(pad))});
      cursor += pad;
    }
    p.inputs.push_back({t.name, t.type, t.shape, t.data});
    if (t.data.size() > safetensors::max_json_integer - cursor) {
      fail(errc::st_overflow, "data section exceeds 2^53-1 bytes");
    }
    cursor += t.data.size();
  }

  // §3.1 keys; the std::map orders them byte-wise with the user's (§3.5).
  p.metadata = options.user_metadata;
  p.metadata["metatensor.alignment"] = std::to_string(a);
  p.metadata["metatensor.endianness"] = "little";
  p.metadata["metatensor.layout"] = layout_table_json(schema, present, a).dump();
  p.metadata["metatensor.schema"] = schema.document().dump();
  p.metadata["metatensor.version"] = "1";

  // §6.6 step 3: 8 + N a multiple of R_max, hence of every R(t) and of A.
  p.options.header_alignment = static_cast<std::size_t>(r_max);
  p.options.always_write_metadata = true;
  p.options.keep_order = true;
  return p;
}

}  // namespace

std::vector<const detail::tensor_values*> file_builder::values() const {
  std::vector<const detail::tensor_values*> out;
  for (const auto& [name, writer] : impl_->tensors) out.push_back(writer->values_.get());
  return out;
}

std::vector<std::byte> file_builder::serialize() const {
  const prepared p = prepare(impl_->schema, impl_->options, values());
  return safetensors::serialize(p.inputs, p.metadata, p.options);
}

void file_builder::write(const std::filesystem::path& path) const {
  const prepared p = prepare(impl_->schema, impl_->options, values());
  safetensors::write_file(path, p.inputs, p.metadata, p.options);
}

}  // namespace metatensor

// Elements of a logical tensor as bytes (spec 06 §6.1–§6.4, §8.3).
#include "element_encoding.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "scalar_encoding.hpp"
#include "src/metatensor/strict_json.hpp"
#include "src/metatensor/text.hpp"
#include "tensogram/core/utf8.hpp"
#include "tensor_values.hpp"

namespace metatensor::detail {

namespace {

bool is_zero(std::span<const std::byte> bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0}; });
}

}  // namespace

// ---------------------------------------------------------------------------
// Fixed-size bytes given raw: BOOL bytes must be 0 or 1 [MT_BOOL] and record
// padding zero [MT_NONZERO_PADDING] (§6.2, §8.1), so that the file passes
// deep validation.

void check_record(const record_layout& rec, std::span<const std::byte> bytes, const std::string& where) {
  std::uint64_t cursor = 0;
  for (const auto& f : rec.fields) {
    if (!is_zero(bytes.subspan(cursor, f.offset - cursor))) {
      writer_error(errc::mt_nonzero_padding,
                   where + ": padding before field " + detail::quoted(f.name) + " is not zero (§6.2)");
    }
    check_fixed(f.type, 0, bytes.subspan(f.offset, f.type.size), where + "." + f.name);
    cursor = f.offset + f.type.size;
  }
  if (!is_zero(bytes.subspan(cursor, rec.size - cursor))) {
    writer_error(errc::mt_nonzero_padding, where + ": tail padding of the record is not zero (§6.2)");
  }
}

void check_fixed(const type_layout& t, std::size_t consumed, std::span<const std::byte> bytes,
                 const std::string& where) {
  const std::uint64_t es = t.element_size();
  const std::uint64_t n = element_count(std::span<const std::uint64_t>(t.shape).subspan(consumed));
  for (std::uint64_t i = 0; i < n; ++i) {
    const auto elem = bytes.subspan(i * es, es);
    if (t.type == value_type::scalar && t.scalar == dtype::boolean) {
      if (std::to_integer<unsigned>(elem[0]) > 1) {
        writer_error(errc::mt_bool, where + ": BOOL byte " +
                                        std::to_string(std::to_integer<unsigned>(elem[0])) +
                                        " is neither 0 nor 1");
      }
    } else if (t.type == value_type::record) {
      check_record(*t.record, elem, where);
    }
  }
}

std::vector<std::byte> utf8_bytes(std::string_view text, const std::string& where) {
  const std::size_t bad = tensogram::first_invalid_utf8(text);
  if (bad != std::string_view::npos) {
    writer_error(errc::mt_utf8, where + ": string is not valid UTF-8 (byte " + std::to_string(bad) + ")");
  }
  const auto* p = reinterpret_cast<const std::byte*>(text.data());
  return {p, p + text.size()};
}

void encode_record(const record_layout& rec, const nlohmann::json& v, std::byte* dst, std::string& where,
                   blob_sink& sink) {
  const std::size_t mark = where.size();
  if (rec.tuple) {
    if (!v.is_array() || v.size() != rec.fields.size()) {
      writer_error(errc::mt_value, where + ": expected an array of " + std::to_string(rec.fields.size()) +
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
  if (!v.is_object())
    writer_error(errc::mt_value, where + ": expected an object (record), got " + json_kind(v));
  for (const auto& [key, value] : v.items()) {
    if (rec.find(key) == nullptr)
      writer_error(errc::mt_value, where + ": unknown field " + detail::quoted(key));
    (void)value;
  }
  for (const auto& f : rec.fields) {
    const auto it = v.find(f.name);
    if (it == v.end()) writer_error(errc::mt_value, where + ": missing field " + detail::quoted(f.name));
    where += '/';
    where += pointer_token(f.name);
    encode_type(f.type, 0, *it, dst + f.offset, where, sink);
    where.resize(mark);
  }
}

void encode_type(const type_layout& t, std::size_t k, const nlohmann::json& v, std::byte* dst,
                 std::string& where, blob_sink& sink) {
  if (k < t.shape.size()) {
    const std::uint64_t n = t.shape[k];
    if (!v.is_array() || v.size() != n) {
      writer_error(errc::mt_value, where + ": expected an array of " + std::to_string(n) +
                                       " items (fixed array), got " +
                                       (v.is_array() ? std::to_string(v.size()) + " items" : json_kind(v)));
    }
    const std::uint64_t stride =
        element_count(std::span<const std::uint64_t>(t.shape).subspan(k + 1)) * t.element_size();
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
      if (!v.is_string()) writer_error(errc::mt_value, where + ": expected a string, got " + json_kind(v));
      (*sink.blobs)[sink.next++] = utf8_bytes(v.get_ref<const std::string&>(), where);
      return;
    }
    case value_type::list: {
      if (!v.is_array())
        writer_error(errc::mt_value, where + ": expected an array (list), got " + json_kind(v));
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

}  // namespace metatensor::detail

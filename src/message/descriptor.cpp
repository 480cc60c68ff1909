#include "tensogram/message/descriptor.hpp"

#include <array>
#include <string>

#include "tensogram/core/error.hpp"

namespace tensogram {

namespace {

[[noreturn]] void bad(const std::string& what) {
  throw metadata_error("failed to deserialize descriptor: " + what);
}

constexpr std::array<std::string_view, 10> k_fixed_keys = {
    "type", "ndim", "shape", "strides", "dtype", "byte_order", "encoding", "filter", "compression", "masks"};

bool is_fixed_key(std::string_view k) {
  for (std::string_view f : k_fixed_keys) {
    if (f == k) return true;
  }
  return false;
}

// "'key'", built by appending: GCC 12 at -O3 reports a false -Wrestrict in
// `"'" + std::string(key)` (GCC bug 105651).
std::string quoted(std::string_view key) {
  std::string s = "'";
  s += key;
  s += '\'';
  return s;
}

std::string text_field(const cbor::value& v, std::string_view key) {
  const std::string* s = v.as_text();
  if (s == nullptr) bad(quoted(key) + " must be text");
  return *s;
}

std::uint64_t uint_field(const cbor::value& v, std::string_view key) {
  const auto u = v.as_uint64();
  if (!u) bad(quoted(key) + " must be an unsigned integer");
  return *u;
}

std::vector<std::uint64_t> uint_array_field(const cbor::value& v, std::string_view key) {
  const cbor::array* a = v.as_array();
  if (a == nullptr) bad(quoted(key) + " must be an array");
  std::vector<std::uint64_t> out;
  out.reserve(a->size());
  for (const cbor::value& item : *a) out.push_back(uint_field(item, key));
  return out;
}

cbor::value uint_array(const std::vector<std::uint64_t>& v) {
  cbor::array a;
  a.reserve(v.size());
  for (std::uint64_t x : v) a.emplace_back(x);
  return cbor::value(std::move(a));
}

}  // namespace

std::vector<std::uint64_t> contiguous_strides(std::span<const std::uint64_t> shape) {
  std::vector<std::uint64_t> strides(shape.size(), 1);
  for (std::size_t i = shape.size(); i > 1; --i) strides[i - 2] = strides[i - 1] * shape[i - 1];
  return strides;
}

data_object_descriptor data_object_descriptor::contiguous(tensogram::dtype t,
                                                          std::vector<std::uint64_t> shape,
                                                          tensogram::byte_order order) {
  data_object_descriptor d;
  d.dtype = t;
  d.ndim = shape.size();
  d.strides = contiguous_strides(shape);
  d.shape = std::move(shape);
  d.byte_order = order;
  return d;
}

std::uint64_t data_object_descriptor::element_count() const {
  const auto n = tensogram::element_count(shape);
  if (!n) throw metadata_error("shape product overflow");
  return *n;
}

bool data_object_descriptor::reinterpreted_as_float64() const noexcept {
  if (compression != "zfp" && compression != "sz3") return false;
  return dtype != tensogram::dtype::float64 || encoding != "none" || filter != "none";
}

data_object_descriptor data_object_descriptor::from_cbor(const cbor::value& v) {
  return from_cbor(cbor::value(v));
}

data_object_descriptor data_object_descriptor::from_cbor(cbor::value&& v) {
  cbor::map* m = v.as_map();
  if (m == nullptr) bad("descriptor is not a map");
  data_object_descriptor d;
  std::array<bool, k_fixed_keys.size()> seen{};
  cbor::text_map_builder params;  // linear in the number of (untrusted) keys, unlike value::set
  for (cbor::map_entry& e : *m) {
    std::string* key = e.key.as_text();
    if (key == nullptr) bad("non-text key");
    std::size_t idx = k_fixed_keys.size();
    for (std::size_t i = 0; i < k_fixed_keys.size(); ++i) {
      if (k_fixed_keys[i] == *key) idx = i;
    }
    if (idx == k_fixed_keys.size()) {
      params.set(std::move(*key), std::move(e.val));
      continue;
    }
    if (seen[idx]) bad("duplicate field '" + *key + "'");
    seen[idx] = true;
    if (*key == "type") {
      d.type = text_field(e.val, *key);
    } else if (*key == "ndim") {
      d.ndim = uint_field(e.val, *key);
    } else if (*key == "shape") {
      d.shape = uint_array_field(e.val, *key);
    } else if (*key == "strides") {
      d.strides = uint_array_field(e.val, *key);
    } else if (*key == "dtype") {
      const std::string name = text_field(e.val, *key);
      const auto t = parse_dtype(name);
      if (!t) bad("unknown dtype '" + name + "'");
      d.dtype = *t;
    } else if (*key == "byte_order") {
      const std::string name = text_field(e.val, *key);
      const auto o = parse_byte_order(name);
      if (!o) bad("unknown byte_order '" + name + "'");
      d.byte_order = *o;
    } else if (*key == "encoding") {
      d.encoding = text_field(e.val, *key);
    } else if (*key == "filter") {
      d.filter = text_field(e.val, *key);
    } else if (*key == "compression") {
      d.compression = text_field(e.val, *key);
    } else {  // masks
      if (!e.val.is_map()) bad("'masks' must be a map");
      d.masks = std::move(e.val);
    }
  }
  // byte_order (index 5) and masks (index 9) are optional.
  for (std::size_t i = 0; i < k_fixed_keys.size(); ++i) {
    if (!seen[i] && i != 5 && i != 9) bad("missing field '" + std::string(k_fixed_keys[i]) + "'");
  }
  d.params = params.take();
  return d;
}

cbor::value data_object_descriptor::to_cbor() const {
  cbor::value m = cbor::value::make_map();
  cbor::map& entries = *m.as_map();
  entries.reserve(9 + params.size() + 1);
  auto put = [&](std::string_view k, cbor::value v) {
    entries.push_back(cbor::map_entry{cbor::value(std::string(k)), std::move(v)});
  };
  put("type", cbor::value(type));
  put("ndim", cbor::value(ndim));
  put("shape", uint_array(shape));
  put("strides", uint_array(strides));
  put("dtype", cbor::value(std::string(dtype_name(dtype))));
  if (byte_order) put("byte_order", cbor::value(std::string(byte_order_name(*byte_order))));
  put("encoding", cbor::value(encoding));
  put("filter", cbor::value(filter));
  put("compression", cbor::value(compression));
  if (const cbor::map* p = params.as_map()) {
    for (const cbor::map_entry& e : *p) {
      // Params never shadow fixed keys (spec 02 §4.1 says they must not).
      if (const std::string* k = e.key.as_text(); k != nullptr && is_fixed_key(*k)) continue;
      entries.push_back(e);
    }
  }
  if (masks) put("masks", *masks);
  return m;
}

}  // namespace tensogram

#include "npy_records.hpp"

#include <algorithm>
#include <cstring>

#include "tool_error.hpp"

namespace metatensor::cli {
namespace npy = tensogram::cli::npy;
using tensogram::cli::tool_error;

namespace {

struct scalar_field {
  dtype type;
  std::size_t size;
  bool swap;  // stored big-endian
};

// A numeric .npy dtype string as a safetensors dtype.
scalar_field scalar_of(const std::string& descr, const std::string& where) {
  npy::element_type e;
  try {
    e = npy::parse_descr(descr);
  } catch (const npy::npy_error& ex) {
    throw tool_error(where + ": " + ex.what());
  }
  std::optional<dtype> t =
      e.is_bool ? std::optional<dtype>(dtype::boolean) : safetensors::from_tensogram(e.type);
  if (!t) throw tool_error(where + ": dtype '" + descr + "' has no safetensors equivalent");
  const bool big = e.itemsize > 1 && e.order == tensogram::byte_order::big;
  return {*t, e.itemsize, big};
}

bool is_text(const std::string& descr) {
  const std::size_t i = !descr.empty() && (descr[0] == '<' || descr[0] == '>' || descr[0] == '|') ? 1 : 0;
  return descr.size() > i && (descr[i] == 'S' || descr[i] == 'U');
}

nlohmann::json wrap_fixed(nlohmann::json node, const std::vector<std::uint64_t>& shape) {
  for (auto it = shape.rbegin(); it != shape.rend(); ++it) {
    node = {{"type", "array"}, {"minItems", *it}, {"maxItems", *it}, {"items", std::move(node)}};
  }
  return node;
}

nlohmann::json record_schema(const std::vector<npy::field>& fields, const std::string& where) {
  nlohmann::json props = nlohmann::json::object();
  nlohmann::json required = nlohmann::json::array();
  for (const auto& f : fields) {
    if (f.name.empty()) continue;  // padding of an aligned NumPy dtype
    const std::string at = where + "." + f.name;
    nlohmann::json node;
    if (!f.fields.empty()) {
      node = record_schema(f.fields, at);
    } else if (is_text(f.descr)) {
      node = {{"type", "string"}, {"TypeDef:String", true}};
    } else if (f.descr.find('V') != std::string::npos) {
      node = wrap_fixed(scalar_schema(dtype::u8), {f.size});  // named raw bytes
      props[f.name] = std::move(node);
      required.push_back(f.name);
      continue;
    } else {
      node = scalar_schema(scalar_of(f.descr, at).type);
    }
    props[f.name] = wrap_fixed(std::move(node), f.shape);
    required.push_back(f.name);
  }
  if (required.empty()) throw tool_error(where + ": a structured dtype without named fields");
  return {{"type", "object"}, {"TypeDef:Struct", true}, {"properties", props}, {"required", required}};
}

// Little-endian copy of `n` elements of `size` bytes.
void copy_le(std::byte* dst, const std::byte* src, std::size_t n, std::size_t size, bool swap) {
  if (!swap) {
    std::memcpy(dst, src, n * size);
    return;
  }
  for (std::size_t i = 0; i < n; ++i) std::reverse_copy(src + i * size, src + (i + 1) * size, dst + i * size);
}

// UTF-8 text of a fixed-width NumPy string field: `S<n>` bytes up to the
// first NUL (must be UTF-8), `U<n>` UTF-32 code points (trailing NULs cut).
std::string text_of(const std::string& descr, std::span<const std::byte> raw, const std::string& where) {
  const bool big = !descr.empty() && descr[0] == '>';
  const bool unicode = descr.find('U') != std::string::npos;
  std::string out;
  if (!unicode) {
    const auto* p = reinterpret_cast<const char*>(raw.data());
    out.assign(p, strnlen(p, raw.size()));
    return out;  // the writer refuses text that is not UTF-8 (spec 06 §6.4)
  }
  for (std::size_t i = 0; i + 4 <= raw.size(); i += 4) {
    std::uint32_t cp = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const auto b = std::to_integer<std::uint32_t>(raw[i + (big ? k : 3 - k)]);
      cp = (cp << 8) | b;
    }
    if (cp == 0) break;
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) throw tool_error(where + ": invalid code point");
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  return out;
}

// Copies every named field of one NumPy record into record `r`.
void fill_record(record_writer& w, std::size_t r, const std::vector<npy::field>& fields, const std::byte* rec,
                 const std::string& prefix, const std::string& where, std::vector<std::byte>& scratch) {
  for (const auto& f : fields) {
    if (f.name.empty()) continue;
    const std::string path = prefix.empty() ? f.name : prefix + "." + f.name;
    const std::byte* src = rec + f.offset;
    if (!f.fields.empty() || is_text(f.descr)) {
      // Records and strings are set one element at a time; a sub-array of
      // them is walked in C order with one "[i]" per dimension (writer paths).
      std::uint64_t count = 1;
      for (auto d : f.shape) count *= d;
      const std::uint64_t elem = count == 0 ? 0 : f.size / count;
      for (std::uint64_t k = 0; k < count; ++k) {
        std::string indexed = path;
        std::uint64_t rem = k;
        std::vector<std::uint64_t> idx(f.shape.size());
        for (std::size_t d = f.shape.size(); d-- > 0;) {
          idx[d] = rem % f.shape[d];
          rem /= f.shape[d];
        }
        for (auto i : idx) {
          indexed += '[';
          indexed += std::to_string(i);
          indexed += ']';
        }
        const std::byte* at = src + k * elem;
        if (!f.fields.empty()) {
          fill_record(w, r, f.fields, at, indexed, where, scratch);
        } else {
          w.set_string(r, indexed, text_of(f.descr, {at, elem}, where + "." + indexed));
        }
      }
    } else if (f.descr.find('V') != std::string::npos) {
      w.set_bytes(r, path, {src, f.size});
    } else {
      const scalar_field s = scalar_of(f.descr, where + "." + path);
      scratch.resize(f.size);
      copy_le(scratch.data(), src, f.size / s.size, s.size, s.swap);
      w.set_bytes(r, path, scratch);
    }
  }
}

}  // namespace

nlohmann::json npy_tensor_schema(const npy::array& a) {
  nlohmann::json node;
  if (a.element.text != 0) {
    node = {{"type", "string"}, {"TypeDef:String", true}};  // a blob tensor (spec 06 §5.1)
  } else {
    node = a.hdr.fields.empty() ? scalar_schema(scalar_of(a.hdr.descr, "dtype").type)
                                : record_schema(a.hdr.fields, "dtype");
  }
  for (std::size_t i = 0; i < a.hdr.shape.size(); ++i) node = {{"type", "array"}, {"items", std::move(node)}};
  return node;
}

void add_npy_tensor(file_builder& builder, const std::string& name, const npy::array& a,
                    std::span<const std::byte> data) {
  if (a.element.text != 0) {
    // One String per element, its text as `text_of` reads a text field.
    const std::size_t width = a.element.itemsize;
    std::vector<std::string> values(data.size() / width);
    for (std::size_t i = 0; i < values.size(); ++i) {
      values[i] = text_of(a.hdr.descr, data.subspan(i * width, width), name + "[" + std::to_string(i) + "]");
    }
    builder.set_strings(name, a.hdr.shape, values);
    return;
  }
  if (a.hdr.fields.empty()) {
    const scalar_field s = scalar_of(a.hdr.descr, name);
    if (!s.swap) {
      builder.set_flat_bytes(name, a.hdr.shape, data);
      return;
    }
    std::vector<std::byte> le(data.size());
    copy_le(le.data(), data.data(), data.size() / s.size, s.size, true);
    builder.set_flat_bytes(name, a.hdr.shape, le);
    return;
  }
  record_writer& w = builder.set_records(name, a.hdr.shape);
  const std::size_t itemsize = a.element.itemsize;
  std::vector<std::byte> scratch;
  for (std::size_t r = 0; r < w.size(); ++r) {
    fill_record(w, r, a.hdr.fields, data.data() + r * itemsize, "", name + "[" + std::to_string(r) + "]",
                scratch);
  }
}

}  // namespace metatensor::cli

#include "npy.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <optional>

#include <tensogram/core/endian.hpp>
#include <tensogram/core/hex.hpp>

namespace tensogram::cli::npy {

namespace {

// "\x93NUMPY": the magic string of every .npy file (NEP 1).
constexpr std::array<unsigned char, 6> magic = {0x93, 'N', 'U', 'M', 'P', 'Y'};
// NumPy aligns the start of the data to this many bytes.
constexpr std::size_t array_align = 64;

std::string quoted(std::string_view s) {
  // Appended rather than `"'" + std::string(s)`: GCC 12 at -O3 reports a
  // false -Wrestrict inside that operator+ (GCC bug 105651).
  std::string out = "'";
  out += s;
  out += '\'';
  return out;
}

// A strict reader for the Python dict literal NumPy writes as the header.
// Only the handful of token kinds that can appear in a valid header are
// understood; anything else is an error naming the offset.
class literal_parser {
 public:
  explicit literal_parser(std::string_view text) : s_(text) {}

  header parse() {
    // Control characters other than whitespace and non-ASCII bytes cannot
    // occur in a header this tool accepts; rejecting them up front keeps the
    // later error messages printable.
    for (std::size_t i = 0; i < s_.size(); ++i) {
      const auto c = static_cast<unsigned char>(s_[i]);
      if (c >= 0x80 || (c < 0x20 && !is_space(s_[i])) || c == 0x7F) {
        fail("unexpected byte 0x" + hex(c), i);
      }
    }
    header h;
    bool have_descr = false;
    bool have_order = false;
    bool have_shape = false;
    skip_space();
    expect('{');
    skip_space();
    while (!at('}')) {
      const std::size_t key_pos = pos_;
      const std::string key = parse_string();
      skip_space();
      expect(':');
      skip_space();
      if (key == "descr") {
        if (have_descr) fail("duplicate key 'descr'", key_pos);
        if (at('[')) {
          h.fields = parse_fields(0);
          if (h.fields.empty()) fail("empty structured dtype", key_pos);
        } else {
          h.descr = parse_string();
        }
        have_descr = true;
      } else if (key == "fortran_order") {
        if (have_order) fail("duplicate key 'fortran_order'", key_pos);
        h.fortran_order = parse_bool();
        have_order = true;
      } else if (key == "shape") {
        if (have_shape) fail("duplicate key 'shape'", key_pos);
        h.shape = parse_shape();
        have_shape = true;
      } else {
        fail("unexpected key " + quoted(key) + " (expected 'descr', 'fortran_order' and 'shape')", key_pos);
      }
      skip_space();
      if (at(',')) {
        ++pos_;
        skip_space();
      } else if (!at('}')) {
        fail("expected ',' or '}'", pos_);
      }
    }
    ++pos_;  // '}'
    skip_space();
    if (pos_ != s_.size()) fail("unexpected text after the closing '}'", pos_);
    if (!have_descr) throw npy_error("invalid header: missing key 'descr'");
    if (!have_order) throw npy_error("invalid header: missing key 'fortran_order'");
    if (!have_shape) throw npy_error("invalid header: missing key 'shape'");
    return h;
  }

 private:
  static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }
  static std::string hex(unsigned c) {
    std::string out;
    tensogram::append_hex_byte(out, static_cast<std::uint8_t>(c));
    return out;
  }
  [[noreturn]] static void fail(const std::string& what, std::size_t at) {
    throw npy_error("invalid header: " + what + " at offset " + std::to_string(at) + " of the header dict");
  }
  [[nodiscard]] bool at(char c) const { return pos_ < s_.size() && s_[pos_] == c; }
  void skip_space() {
    while (pos_ < s_.size() && is_space(s_[pos_])) ++pos_;
  }
  void expect(char c) {
    if (!at(c)) fail(std::string("expected '") + c + "'", pos_);
    ++pos_;
  }

  std::string parse_string() {
    if (!at('\'') && !at('"')) fail("expected a quoted string", pos_);
    const char quote = s_[pos_];
    const std::size_t start = ++pos_;
    while (pos_ < s_.size() && s_[pos_] != quote) {
      // Escapes and line breaks never occur in valid keys or dtype strings.
      if (s_[pos_] == '\\') fail("escape sequences are not supported", pos_);
      if (s_[pos_] == '\n' || s_[pos_] == '\r') fail("unterminated string", start - 1);
      ++pos_;
    }
    if (pos_ >= s_.size()) fail("unterminated string", start - 1);
    return std::string(s_.substr(start, pos_++ - start));
  }

  bool parse_bool() {
    if (s_.substr(pos_, 4) == "True" && !ident_continues(pos_ + 4)) {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False" && !ident_continues(pos_ + 5)) {
      pos_ += 5;
      return false;
    }
    fail("expected True or False for 'fortran_order'", pos_);
  }
  [[nodiscard]] bool ident_continues(std::size_t i) const {
    if (i >= s_.size()) return false;
    const char c = s_[i];
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  }

  std::uint64_t parse_dimension() {
    const std::size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
    if (pos_ == start) fail("expected a non-negative integer dimension", start);
    // Python 3 rejects leading zeros ("07"); so does this reader.
    if (s_[start] == '0' && pos_ - start > 1) fail("leading zeros in an integer", start);
    if (ident_continues(pos_)) fail("expected a non-negative integer dimension", start);
    std::uint64_t v = 0;
    const auto r = std::from_chars(s_.data() + start, s_.data() + pos_, v);
    if (r.ec != std::errc{}) fail("dimension does not fit in 64 bits", start);
    return v;
  }

  // `[(name, type[, shape]), ...]` with `type` a dtype string or a nested
  // list; offsets and sizes are filled in as the fields are read.
  std::vector<field> parse_fields(std::size_t depth) {
    if (depth >= max_field_depth) fail("structured dtype nested deeper than 16 levels", pos_);
    expect('[');
    skip_space();
    std::vector<field> out;
    std::uint64_t offset = 0;
    while (!at(']')) {
      const std::size_t start = pos_;
      expect('(');
      skip_space();
      field f;
      f.name = parse_string();
      skip_space();
      expect(',');
      skip_space();
      std::uint64_t elem = 0;
      if (at('[')) {
        f.fields = parse_fields(depth + 1);
        if (f.fields.empty()) fail("empty structured dtype", start);
        elem = f.fields.back().offset + f.fields.back().size;
      } else {
        const std::size_t type_pos = pos_;
        f.descr = parse_string();
        try {
          elem = field_descr_size(f.descr);
        } catch (const npy_error& e) {
          fail(std::string("field ") + quoted(f.name) + ": " + e.what(), type_pos);
        }
      }
      skip_space();
      if (at(',')) {
        ++pos_;
        skip_space();
        if (at('(')) {
          f.shape = parse_shape();
          skip_space();
        }
      }
      expect(')');
      std::uint64_t size = elem;
      for (auto d : f.shape) {
        if (d != 0 && size > (std::uint64_t{1} << 40) / d) fail("field size overflows", start);
        size *= d;
      }
      f.offset = offset;
      f.size = size;
      if (offset > (std::uint64_t{1} << 40) - size) fail("record size overflows", start);
      offset += size;
      for (const auto& g : out) {
        if (!f.name.empty() && g.name == f.name) fail("duplicate field name " + quoted(f.name), start);
      }
      out.push_back(std::move(f));
      skip_space();
      if (at(',')) {
        ++pos_;
        skip_space();
      } else if (!at(']')) {
        fail("expected ',' or ']' in a structured dtype", pos_);
      }
    }
    ++pos_;  // ']'
    return out;
  }

  std::vector<std::uint64_t> parse_shape() {
    if (!at('(')) fail("expected a tuple for 'shape'", pos_);
    const std::size_t open = pos_++;
    std::vector<std::uint64_t> shape;
    bool trailing_comma = false;
    skip_space();
    while (!at(')')) {
      if (shape.size() == max_rank) {
        throw npy_error("shape has more than " + std::to_string(max_rank) + " dimensions");
      }
      shape.push_back(parse_dimension());
      skip_space();
      trailing_comma = false;
      if (at(',')) {
        ++pos_;
        trailing_comma = true;
        skip_space();
      } else if (!at(')')) {
        fail("expected ',' or ')' in 'shape'", pos_);
      }
    }
    ++pos_;  // ')'
    // "(3)" is the integer 3 in Python, not a tuple.
    if (shape.size() == 1 && !trailing_comma) fail("'shape' is not a tuple (a 1-tuple needs a comma)", open);
    return shape;
  }

  std::string_view s_;
  std::size_t pos_ = 0;
};

}  // namespace

header parse_header_text(std::string_view text) {
  return literal_parser(text).parse();
}

std::uint64_t field_descr_size(std::string_view descr) {
  std::string_view d = descr;
  if (!d.empty() && (d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '=')) d.remove_prefix(1);
  if (!d.empty() && (d[0] == 'V' || d[0] == 'S' || d[0] == 'U')) {
    std::uint64_t n = 0;
    const auto r = std::from_chars(d.data() + 1, d.data() + d.size(), n);
    if (d.size() < 2 || r.ec != std::errc{} || r.ptr != d.data() + d.size() || n == 0 || n > (1u << 24)) {
      throw npy_error("invalid dtype " + quoted(descr));
    }
    return d[0] == 'U' ? 4 * n : n;
  }
  return parse_descr(descr).itemsize;
}

element_type parse_descr(std::string_view descr) {
  const std::string d(descr);
  if (descr.empty()) throw npy_error("empty dtype descr");
  std::optional<tensogram::byte_order> order;
  char prefix = 0;
  if (descr[0] == '<' || descr[0] == '>' || descr[0] == '|' || descr[0] == '=') {
    prefix = descr[0];
    if (prefix == '<') order = tensogram::byte_order::little;
    if (prefix == '>') order = tensogram::byte_order::big;
    descr.remove_prefix(1);
  }
  if (descr == "O") throw npy_error("object arrays (dtype " + quoted(d) + ") are not supported");

  struct mapping {
    std::string_view code;
    tensogram::dtype type;
    std::size_t size;
    bool is_bool;
  };
  static constexpr mapping table[] = {
      {"f2", tensogram::dtype::float16, 2, false},      {"f4", tensogram::dtype::float32, 4, false},
      {"f8", tensogram::dtype::float64, 8, false},      {"c8", tensogram::dtype::complex64, 8, false},
      {"c16", tensogram::dtype::complex128, 16, false}, {"i1", tensogram::dtype::int8, 1, false},
      {"i2", tensogram::dtype::int16, 2, false},        {"i4", tensogram::dtype::int32, 4, false},
      {"i8", tensogram::dtype::int64, 8, false},        {"u1", tensogram::dtype::uint8, 1, false},
      {"u2", tensogram::dtype::uint16, 2, false},       {"u4", tensogram::dtype::uint32, 4, false},
      {"u8", tensogram::dtype::uint64, 8, false},       {"b1", tensogram::dtype::uint8, 1, true},
  };
  const auto* m =
      std::find_if(std::begin(table), std::end(table), [&](const mapping& e) { return e.code == descr; });
  if (m == std::end(table)) {
    throw npy_error("unsupported dtype " + quoted(d) +
                    " (supported: f2 f4 f8 c8 c16 i1 i2 i4 i8 u1 u2 u4 u8 b1, little or big endian)");
  }
  element_type t;
  t.type = m->type;
  t.itemsize = m->size;
  t.is_bool = m->is_bool;
  if (m->size == 1) {
    t.order = native_byte_order();
  } else if (order) {
    t.order = *order;
  } else {
    throw npy_error("dtype " + quoted(d) + " does not say its byte order (expected '<' or '>' prefix)");
  }
  return t;
}

array parse(std::span<const std::byte> file, text_dtypes text_mode) {
  // Preamble: magic (6), version (2), header length (2 for v1, 4 for v2/v3).
  if (file.size() < magic.size() ||
      !std::equal(magic.begin(), magic.end(), file.begin(),
                  [](unsigned char m, std::byte b) { return static_cast<unsigned char>(b) == m; })) {
    throw npy_error("not a .npy file (bad magic string)");
  }
  if (file.size() < 8) throw npy_error("truncated preamble (no format version)");
  array a;
  a.major_version = static_cast<int>(file[6]);
  a.minor_version = static_cast<int>(file[7]);
  if (a.major_version < 1 || a.major_version > 3 || a.minor_version != 0) {
    throw npy_error("unsupported .npy format version " + std::to_string(a.major_version) + "." +
                    std::to_string(a.minor_version) + " (supported: 1.0, 2.0, 3.0)");
  }
  const std::size_t len_size = a.major_version == 1 ? 2 : 4;
  const std::size_t preamble = 8 + len_size;
  if (file.size() < preamble) throw npy_error("truncated preamble (no header length)");
  const auto header_len = static_cast<std::size_t>(tensogram::load_le_n(file.data() + 8, len_size));
  if (header_len > max_header_length) {
    throw npy_error("header length " + std::to_string(header_len) + " exceeds the limit of " +
                    std::to_string(max_header_length) + " bytes");
  }
  if (file.size() - preamble < header_len) {
    throw npy_error("truncated header: " + std::to_string(header_len) + " bytes declared, " +
                    std::to_string(file.size() - preamble) + " present");
  }
  // Version 3.0 only widens the header encoding to UTF-8; the parser accepts
  // ASCII alone, which every supported dtype and key is written in.
  const std::string_view text(reinterpret_cast<const char*>(file.data() + preamble), header_len);
  a.hdr = parse_header_text(text);
  std::string_view bare = a.hdr.descr;
  if (!bare.empty() && (bare[0] == '<' || bare[0] == '>' || bare[0] == '|' || bare[0] == '='))
    bare.remove_prefix(1);
  if (a.hdr.fields.empty() && text_mode == text_dtypes::accept && !bare.empty() &&
      (bare[0] == 'S' || bare[0] == 'U')) {
    // Fixed-width text: raw `itemsize`-byte elements (size at least 1).
    a.element.itemsize = static_cast<std::size_t>(field_descr_size(a.hdr.descr));
    a.element.text = bare[0];
  } else if (a.hdr.fields.empty()) {
    a.element = parse_descr(a.hdr.descr);
  } else {
    // A structured record: raw bytes, `itemsize` per element.
    a.element.itemsize = static_cast<std::size_t>(a.hdr.fields.back().offset + a.hdr.fields.back().size);
    if (a.element.itemsize == 0) throw npy_error("structured dtype of size 0");
  }

  const auto count = tensogram::element_count(a.hdr.shape);
  if (!count) throw npy_error("shape's element count overflows 64 bits");
  a.element_count = *count;
  if (*count > SIZE_MAX / a.element.itemsize) throw npy_error("array size overflows");
  const std::uint64_t need = *count * a.element.itemsize;
  const std::size_t have = file.size() - preamble - header_len;
  if (have < need) {
    throw npy_error("truncated data: the header describes " + std::to_string(need) +
                    " bytes, the file holds " + std::to_string(have));
  }
  if (have > need) {
    throw npy_error("data size mismatch: the header describes " + std::to_string(need) +
                    " bytes, the file holds " + std::to_string(have) + " (" + std::to_string(have - need) +
                    " unexpected trailing bytes)");
  }
  a.data = file.subspan(preamble + header_len, static_cast<std::size_t>(need));
  return a;
}

std::vector<std::byte> fortran_to_c_order(std::span<const std::byte> data,
                                          std::span<const std::uint64_t> shape, std::size_t itemsize) {
  std::vector<std::byte> out(data.size());
  const std::size_t n = itemsize == 0 ? 0 : data.size() / itemsize;
  if (n == 0) return out;
  const std::size_t rank = shape.size();
  // Element strides of the column-major source: the first axis is fastest.
  std::vector<std::uint64_t> fstride(rank, 1);
  for (std::size_t k = 1; k < rank; ++k) fstride[k] = fstride[k - 1] * shape[k - 1];
  std::vector<std::uint64_t> idx(rank, 0);
  std::uint64_t src = 0;  // column-major offset of idx
  for (std::size_t c = 0; c < n; ++c) {
    std::memcpy(out.data() + c * itemsize, data.data() + src * itemsize, itemsize);
    // Advance idx in row-major order (last axis fastest), keeping src in step.
    for (std::size_t k = rank; k-- > 0;) {
      if (++idx[k] < shape[k]) {
        src += fstride[k];
        break;
      }
      src -= (shape[k] - 1) * fstride[k];
      idx[k] = 0;
    }
  }
  return out;
}

std::string descr_for(tensogram::dtype t, tensogram::byte_order order) {
  const char o = order == tensogram::byte_order::little ? '<' : '>';
  switch (t) {
    case tensogram::dtype::float16: return std::string(1, o) + "f2";
    case tensogram::dtype::float32: return std::string(1, o) + "f4";
    case tensogram::dtype::float64: return std::string(1, o) + "f8";
    case tensogram::dtype::complex64: return std::string(1, o) + "c8";
    case tensogram::dtype::complex128: return std::string(1, o) + "c16";
    case tensogram::dtype::int8: return "|i1";
    case tensogram::dtype::int16: return std::string(1, o) + "i2";
    case tensogram::dtype::int32: return std::string(1, o) + "i4";
    case tensogram::dtype::int64: return std::string(1, o) + "i8";
    case tensogram::dtype::uint8: return "|u1";
    case tensogram::dtype::uint16: return std::string(1, o) + "u2";
    case tensogram::dtype::uint32: return std::string(1, o) + "u4";
    case tensogram::dtype::uint64: return std::string(1, o) + "u8";
    case tensogram::dtype::bfloat16:
    case tensogram::dtype::bitmask: break;
  }
  throw npy_error("dtype " + std::string(dtype_name(t)) + " has no NumPy equivalent");
}

std::vector<std::byte> serialize(std::string_view descr, std::span<const std::uint64_t> shape,
                                 std::span<const std::byte> data) {
  // The dict exactly as numpy.lib.format writes it (keys sorted, repr of a
  // tuple: "()", "(4,)", "(2, 3)", trailing ", " before the brace).
  std::string dict = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) dict += ", ";
    dict += std::to_string(shape[i]);
  }
  if (shape.size() == 1) dict += ',';
  dict += "), }";

  // Pad with spaces and end with '\n' so the data starts 64-byte aligned.
  const auto padded_length = [&](std::size_t preamble) {
    const std::size_t unpadded = preamble + dict.size() + 1;
    return dict.size() + 1 + (array_align - unpadded % array_align) % array_align;
  };
  int major = 1;
  std::size_t header_len = padded_length(10);
  if (header_len > 0xFFFF) {
    major = 2;
    header_len = padded_length(12);
  }
  const std::size_t preamble = major == 1 ? 10 : 12;
  std::vector<std::byte> out;
  out.reserve(preamble + header_len + data.size());
  for (const unsigned char m : magic) out.push_back(static_cast<std::byte>(m));
  out.push_back(static_cast<std::byte>(major));
  out.push_back(std::byte{0});
  for (std::size_t i = 0; i < preamble - 8; ++i) {
    out.push_back(static_cast<std::byte>((header_len >> (8 * i)) & 0xFF));
  }
  for (const char c : dict) out.push_back(static_cast<std::byte>(c));
  out.insert(out.end(), header_len - dict.size() - 1, static_cast<std::byte>(' '));
  out.push_back(static_cast<std::byte>('\n'));
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

}  // namespace tensogram::cli::npy

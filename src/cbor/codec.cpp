#include "tensogram/cbor/codec.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>

#include "tensogram/core/endian.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/core/utf8.hpp"

namespace tensogram::cbor {

// ---------------------------------------------------------------------------
// Floats (spec 02 §1.3)

double half_to_double(std::uint16_t h) noexcept {
  const std::uint64_t sign = static_cast<std::uint64_t>(h >> 15) << 63;
  const unsigned exp = (h >> 10) & 0x1F;
  const std::uint64_t mant = h & 0x3FF;
  std::uint64_t bits = 0;
  if (exp == 0x1F) {
    bits = sign | (0x7FFULL << 52) | (mant << 42);
  } else if (exp == 0) {
    // Zero or subnormal: mant * 2^-24, exactly representable as a double.
    const double v = std::ldexp(static_cast<double>(mant), -24);
    return sign != 0 ? -v : v;
  } else {
    bits = sign | (static_cast<std::uint64_t>(exp - 15 + 1023) << 52) | (mant << 42);
  }
  return tensogram::bit_cast<double>(bits);
}

namespace {

// The binary16 bits whose widening reproduces `d` exactly, if any.
std::optional<std::uint16_t> exact_half(double d) noexcept {
  const auto bits = tensogram::bit_cast<std::uint64_t>(d);
  const auto sign = static_cast<std::uint16_t>((bits >> 63) << 15);
  std::uint16_t h = 0;
  if (std::isnan(d)) {
    // Quiet bit forced, top 10 mantissa bits kept (spec 02 §1.3).
    h = static_cast<std::uint16_t>(sign | 0x7C00 | 0x0200 | ((bits >> 42) & 0x3FF));
  } else if (std::isinf(d)) {
    h = static_cast<std::uint16_t>(sign | 0x7C00);
  } else if (d == 0.0) {
    h = sign;
  } else {
    // Every binary16 value is an integer multiple k of 2^-24 with k < 2^11
    // after removing trailing zero bits; scaling by 2^24 is exact here.
    const double a = std::fabs(d);
    if (a > 65504.0) return std::nullopt;
    const double y = std::ldexp(a, 24);
    if (y != std::trunc(y)) return std::nullopt;
    const auto k = static_cast<std::uint64_t>(y);
    if ((k >> std::countr_zero(k)) >= 2048) return std::nullopt;
    if (k < 1024) {
      h = static_cast<std::uint16_t>(sign | k);
    } else {
      const int p = 63 - std::countl_zero(k);
      const auto mant = static_cast<std::uint16_t>((k >> (p - 10)) - 1024);
      const auto exp = static_cast<std::uint16_t>(p - 9);
      h = static_cast<std::uint16_t>(sign | (exp << 10) | mant);
    }
  }
  if (tensogram::bit_cast<std::uint64_t>(half_to_double(h)) != bits) return std::nullopt;
  return h;
}

std::optional<float> exact_single(double d) noexcept {
  const auto f = static_cast<float>(d);
  if (tensogram::bit_cast<std::uint64_t>(static_cast<double>(f)) != tensogram::bit_cast<std::uint64_t>(d)) {
    return std::nullopt;
  }
  return f;
}

void put_byte(std::vector<std::byte>& out, unsigned b) {
  out.push_back(static_cast<std::byte>(b));
}

void put_be(std::vector<std::byte>& out, std::uint64_t v, int nbytes) {
  for (int i = nbytes - 1; i >= 0; --i) put_byte(out, static_cast<unsigned>((v >> (8 * i)) & 0xFF));
}

// Initial byte plus the shortest argument encoding (spec 02 §1.2).
void put_head(std::vector<std::byte>& out, unsigned major, std::uint64_t arg) {
  const unsigned m = major << 5;
  if (arg < 24) {
    put_byte(out, m | static_cast<unsigned>(arg));
  } else if (arg <= 0xFF) {
    put_byte(out, m | 24);
    put_be(out, arg, 1);
  } else if (arg <= 0xFFFF) {
    put_byte(out, m | 25);
    put_be(out, arg, 2);
  } else if (arg <= 0xFFFFFFFFULL) {
    put_byte(out, m | 26);
    put_be(out, arg, 4);
  } else {
    put_byte(out, m | 27);
    put_be(out, arg, 8);
  }
}

void put_float(std::vector<std::byte>& out, double d) {
  if (auto h = exact_half(d)) {
    put_byte(out, 0xF9);
    put_be(out, *h, 2);
  } else if (auto f = exact_single(d)) {
    put_byte(out, 0xFA);
    put_be(out, tensogram::bit_cast<std::uint32_t>(*f), 4);
  } else {
    put_byte(out, 0xFB);
    put_be(out, tensogram::bit_cast<std::uint64_t>(d), 8);
  }
}

void put_raw(std::vector<std::byte>& out, const void* p, std::size_t n) {
  const auto* b = static_cast<const std::byte*>(p);
  out.insert(out.end(), b, b + n);
}

bool bytes_less(std::span<const std::byte> a, std::span<const std::byte> b) {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
}

}  // namespace

std::size_t shortest_float_width(double d) noexcept {
  if (exact_half(d)) return 2;
  if (exact_single(d)) return 4;
  return 8;
}

void encode_to(const value& v, std::vector<std::byte>& out) {
  switch (v.type()) {
    case value::kind::null: put_byte(out, 0xF6); return;
    case value::kind::boolean: put_byte(out, *v.as_bool() ? 0xF5 : 0xF4); return;
    case value::kind::integer: {
      const integer& i = *v.as_integer();
      put_head(out, i.negative ? 1 : 0, i.magnitude);
      return;
    }
    case value::kind::floating: put_float(out, *v.as_float()); return;
    case value::kind::text: {
      const std::string& s = *v.as_text();
      put_head(out, 3, s.size());
      put_raw(out, s.data(), s.size());
      return;
    }
    case value::kind::bytes: {
      const byte_string& b = *v.as_bytes();
      put_head(out, 2, b.size());
      put_raw(out, b.data(), b.size());
      return;
    }
    case value::kind::array: {
      const array& a = *v.as_array();
      put_head(out, 4, a.size());
      for (const value& item : a) encode_to(item, out);
      return;
    }
    case value::kind::map: {
      // Sort entries by the complete encoded bytes of their keys (spec 02
      // §1.4); stable, duplicates kept.
      const map& m = *v.as_map();
      std::vector<std::vector<std::byte>> keys(m.size());
      for (std::size_t i = 0; i < m.size(); ++i) encode_to(m[i].key, keys[i]);
      std::vector<std::size_t> order(m.size());
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::stable_sort(order.begin(), order.end(),
                       [&](std::size_t a, std::size_t b) { return bytes_less(keys[a], keys[b]); });
      put_head(out, 5, m.size());
      for (std::size_t i : order) {
        out.insert(out.end(), keys[i].begin(), keys[i].end());
        encode_to(m[i].val, out);
      }
      return;
    }
    case value::kind::tag: {
      const tagged& t = *v.as_tag();
      put_head(out, 6, t.number());
      encode_to(t.content(), out);
      return;
    }
  }
}

std::vector<std::byte> encode(const value& v) {
  std::vector<std::byte> out;
  encode_to(v, out);
  return out;
}

// ---------------------------------------------------------------------------
// Decoding

namespace {

class reader {
 public:
  reader(std::span<const std::byte> bytes, const decode_limits& limits) : bytes_(bytes), limits_(limits) {}

  value read_item(std::size_t depth) {
    const std::size_t start = pos_;
    const unsigned ib = next_byte();
    const unsigned major = ib >> 5;
    const unsigned ai = ib & 0x1F;
    switch (major) {
      case 0: return value(integer{false, read_arg(ai, start)});
      case 1: return value(integer{true, read_arg(ai, start)});
      case 2:
      case 3: return read_string(major, ai, start);
      case 4: return read_array(ai, start, depth);
      case 5: return read_map(ai, start, depth);
      case 6: {
        const std::uint64_t number = read_arg(ai, start);
        enter(depth, start);
        return value(tagged(number, read_item(depth + 1)));
      }
      default: return read_simple(ai, start);
    }
  }

  [[nodiscard]] std::size_t position() const noexcept { return pos_; }

 private:
  [[noreturn]] void fail(const std::string& what, std::size_t at) const {
    throw metadata_error("CBOR " + what + " at byte " + std::to_string(at));
  }

  [[nodiscard]] std::size_t remaining() const noexcept { return bytes_.size() - pos_; }

  unsigned next_byte() {
    if (pos_ >= bytes_.size()) fail("unexpected end of input", pos_);
    return static_cast<unsigned>(bytes_[pos_++]);
  }

  std::uint64_t read_be(int n, std::size_t start) {
    if (remaining() < static_cast<std::size_t>(n)) fail("truncated argument", start);
    const std::uint64_t v = load_be_n(bytes_.data() + pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return v;
  }

  std::uint64_t read_arg(unsigned ai, std::size_t start) {
    if (ai < 24) return ai;
    switch (ai) {
      case 24: return read_be(1, start);
      case 25: return read_be(2, start);
      case 26: return read_be(4, start);
      case 27: return read_be(8, start);
      default: fail("invalid additional information " + std::to_string(ai), start);
    }
  }

  void enter(std::size_t depth, std::size_t start) const {
    if (depth + 1 > limits_.max_depth) {
      fail("nesting deeper than " + std::to_string(limits_.max_depth), start);
    }
  }

  void append_chunk(unsigned major, std::uint64_t len, std::size_t start, std::string& text,
                    byte_string& bytes) {
    if (len > remaining()) {
      fail("string length " + std::to_string(len) + " exceeds remaining input of " +
               std::to_string(remaining()) + " bytes",
           start);
    }
    const std::byte* p = bytes_.data() + pos_;
    const auto n = static_cast<std::size_t>(len);
    if (major == 3) {
      const std::string_view chars(reinterpret_cast<const char*>(p), n);
      if (!is_valid_utf8(chars)) fail("invalid UTF-8 text", start);
      text.append(chars);
    } else {
      bytes.insert(bytes.end(), p, p + n);
    }
    pos_ += n;
  }

  value read_string(unsigned major, unsigned ai, std::size_t start) {
    std::string text;
    byte_string bytes;
    if (ai == 31) {
      // Indefinite length: definite chunks of the same major type until break.
      for (;;) {
        const std::size_t cstart = pos_;
        const unsigned cb = next_byte();
        if (cb == 0xFF) break;
        if ((cb >> 5) != major || (cb & 0x1F) == 31) fail("invalid chunk in indefinite string", cstart);
        append_chunk(major, read_arg(cb & 0x1F, cstart), cstart, text, bytes);
      }
    } else {
      append_chunk(major, read_arg(ai, start), start, text, bytes);
    }
    if (major == 3) return value(std::move(text));
    return value(std::move(bytes));
  }

  value read_array(unsigned ai, std::size_t start, std::size_t depth) {
    enter(depth, start);
    array a;
    if (ai == 31) {
      while (!at_break()) a.push_back(read_item(depth + 1));
      ++pos_;
      return value(std::move(a));
    }
    const std::uint64_t n = read_arg(ai, start);
    // Every item takes at least one byte: refuse counts the input cannot hold
    // before reserving anything.
    if (n > remaining()) {
      fail("array of " + std::to_string(n) + " items exceeds remaining input", start);
    }
    a.reserve(reservation(n));
    for (std::uint64_t i = 0; i < n; ++i) a.push_back(read_item(depth + 1));
    return value(std::move(a));
  }

  // Slots reserved up front for a declared count n (already checked
  // against the remaining input). Only a prefix is trusted: a value is tens
  // of bytes, so reserving n slots would cost ~50 times the input per
  // nesting level before a single item is read, and nested headers that
  // each claim the rest of a 64 KiB input cost hundreds of MB. Beyond the
  // prefix the vector grows with the items actually read, so memory and
  // time stay proportional to the input (docs/fuzzing.md).
  static std::size_t reservation(std::uint64_t n) noexcept {
    constexpr std::uint64_t k_trusted_items = 1024;
    return static_cast<std::size_t>(n < k_trusted_items ? n : k_trusted_items);
  }

  value read_map(unsigned ai, std::size_t start, std::size_t depth) {
    enter(depth, start);
    map m;
    if (ai == 31) {
      while (!at_break()) {
        value k = read_item(depth + 1);
        value v = read_item(depth + 1);
        m.push_back(map_entry{std::move(k), std::move(v)});
      }
      ++pos_;
      return value(std::move(m));
    }
    const std::uint64_t n = read_arg(ai, start);
    if (n > remaining() / 2) {
      fail("map of " + std::to_string(n) + " entries exceeds remaining input", start);
    }
    m.reserve(reservation(n));
    for (std::uint64_t i = 0; i < n; ++i) {
      value k = read_item(depth + 1);
      value v = read_item(depth + 1);
      m.push_back(map_entry{std::move(k), std::move(v)});
    }
    return value(std::move(m));
  }

  bool at_break() {
    if (pos_ >= bytes_.size()) fail("unexpected end of input in indefinite-length item", pos_);
    return static_cast<unsigned>(bytes_[pos_]) == 0xFF;
  }

  value read_simple(unsigned ai, std::size_t start) {
    switch (ai) {
      case 20: return value(false);
      case 21: return value(true);
      case 22: return value(nullptr);
      case 25: return value(half_to_double(static_cast<std::uint16_t>(read_be(2, start))));
      case 26:
        return value(
            static_cast<double>(tensogram::bit_cast<float>(static_cast<std::uint32_t>(read_be(4, start)))));
      case 27: return value(tensogram::bit_cast<double>(read_be(8, start)));
      case 31: fail("unexpected break", start);
      default: fail("unsupported simple value " + std::to_string(ai), start);
    }
  }

  std::span<const std::byte> bytes_;
  const decode_limits& limits_;
  std::size_t pos_ = 0;
};

bool keys_ordered(const map& m) {
  std::vector<std::byte> prev;
  std::vector<std::byte> cur;
  for (std::size_t i = 0; i < m.size(); ++i) {
    cur.clear();
    encode_to(m[i].key, cur);
    if (i > 0 && !bytes_less(prev, cur)) return false;
    std::swap(prev, cur);
  }
  return true;
}

}  // namespace

decoded_item decode_prefix(std::span<const std::byte> bytes, const decode_limits& limits) {
  reader r(bytes, limits);
  value v = r.read_item(0);
  return decoded_item{std::move(v), r.position()};
}

value decode(std::span<const std::byte> bytes, const decode_limits& limits) {
  return decode_prefix(bytes, limits).item;
}

bool has_canonical_key_order(const value& v) {
  switch (v.type()) {
    case value::kind::array:
      return std::all_of(v.as_array()->begin(), v.as_array()->end(),
                         [](const value& x) { return has_canonical_key_order(x); });
    case value::kind::map: {
      const map& m = *v.as_map();
      if (!keys_ordered(m)) return false;
      return std::all_of(m.begin(), m.end(), [](const map_entry& e) {
        return has_canonical_key_order(e.key) && has_canonical_key_order(e.val);
      });
    }
    case value::kind::tag: return has_canonical_key_order(v.as_tag()->content());
    default: return true;
  }
}

bool is_canonical_encoding(std::span<const std::byte> bytes) {
  try {
    const decoded_item d = decode_prefix(bytes);
    if (d.consumed != bytes.size()) return false;
    // Re-encoding keeps duplicate keys in place, so check them separately.
    if (!has_canonical_key_order(d.item)) return false;
    const std::vector<std::byte> again = encode(d.item);
    return again.size() == bytes.size() && std::equal(again.begin(), again.end(), bytes.begin());
  } catch (const error&) {
    return false;
  }
}

}  // namespace tensogram::cbor

// Helpers shared by the library test suites (tests/format, tests/message):
// fixture loading, byte helpers and a hand-assembler for crafted messages.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <tensogram.hpp>
#include "tensogram/cbor/codec.hpp"
#include "tensogram/format/hash.hpp"

namespace tgtest {

using bytes = std::vector<std::byte>;

/// Whether this build runs under AddressSanitizer (GCC defines the macro,
/// Clang answers __has_feature).
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool k_address_sanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool k_address_sanitized = true;
#else
inline constexpr bool k_address_sanitized = false;
#endif
#else
inline constexpr bool k_address_sanitized = false;
#endif

inline std::string fixture_path(std::string_view name) {
  return std::string(TENSOGRAM_FIXTURES) + "/tgm/" + std::string(name);
}

/// The whole file at `path`; throws when it cannot be opened.
inline bytes read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  const std::vector<char> c((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  bytes out(c.size());
  if (!c.empty()) std::memcpy(out.data(), c.data(), c.size());
  return out;
}

inline bytes read_fixture(std::string_view name) {
  return read_bytes(fixture_path(name));
}

/// A file of fixtures/tgm-reference-lossy (zfp/sz3 objects the reference
/// wrote on every dtype and byte order).
inline bytes read_lossy_fixture(std::string_view name) {
  return read_bytes(std::string(TENSOGRAM_FIXTURES) + "/tgm-reference-lossy/" + std::string(name));
}

/// Every fixture file of fixtures/tgm.
inline const std::vector<std::string>& all_fixtures() {
  static const std::vector<std::string> names = {"hash_xxh3.tgm",
                                                 "hundred-msg-footer.tgm",
                                                 "hundred-msg.tgm",
                                                 "mars_metadata.tgm",
                                                 "metadata_parity.tgm",
                                                 "multi_message.tgm",
                                                 "multi_object.tgm",
                                                 "multi_object_xxh3.tgm",
                                                 "simple_f32.tgm",
                                                 "single-msg-footer.tgm",
                                                 "single-msg.tgm",
                                                 "streaming-tail.tgm",
                                                 "ten-msg-footer.tgm",
                                                 "ten-msg.tgm",
                                                 "thousand-msg-footer.tgm",
                                                 "thousand-msg.tgm",
                                                 "two-msg.tgm"};
  return names;
}

inline std::uint16_t be16(std::span<const std::byte> b, std::size_t at) {
  return static_cast<std::uint16_t>((static_cast<unsigned>(b[at]) << 8) | static_cast<unsigned>(b[at + 1]));
}
inline std::uint64_t be64(std::span<const std::byte> b, std::size_t at) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned>(b[at + i]);
  return v;
}
inline void put_be16(bytes& b, std::size_t at, std::uint16_t v) {
  b[at] = static_cast<std::byte>(v >> 8);
  b[at + 1] = static_cast<std::byte>(v & 0xFF);
}
inline void put_be64(bytes& b, std::size_t at, std::uint64_t v) {
  for (std::size_t i = 0; i < 8; ++i) b[at + i] = static_cast<std::byte>((v >> (8 * (7 - i))) & 0xFF);
}
inline void append_be16(bytes& b, std::uint16_t v) {
  b.push_back(static_cast<std::byte>(v >> 8));
  b.push_back(static_cast<std::byte>(v & 0xFF));
}
inline void append_be64(bytes& b, std::uint64_t v) {
  for (std::size_t i = 0; i < 8; ++i) b.push_back(static_cast<std::byte>((v >> (8 * (7 - i))) & 0xFF));
}
inline void append_text(bytes& b, std::string_view s) {
  for (char c : s) b.push_back(static_cast<std::byte>(c));
}

/// Bytes from a list of small integers: `B({0x81, 0x01})`.
inline bytes B(std::initializer_list<unsigned> v) {
  bytes out;
  out.reserve(v.size());
  for (unsigned x : v) out.push_back(static_cast<std::byte>(x));
  return out;
}

/// Bytes from a hex string ("a2 64 ..."; spaces ignored).
inline bytes from_hex(std::string_view hex) {
  bytes out;
  int hi = -1;
  for (char c : hex) {
    int d = -1;
    if (c >= '0' && c <= '9') d = c - '0';
    if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    if (d < 0) continue;
    if (hi < 0) {
      hi = d;
    } else {
      out.push_back(static_cast<std::byte>(hi * 16 + d));
      hi = -1;
    }
  }
  return out;
}

inline std::string to_hex(std::span<const std::byte> b) {
  return tensogram::hex_bytes(b);
}

inline bytes slice(std::span<const std::byte> b, std::size_t off, std::size_t len) {
  return bytes(b.begin() + static_cast<std::ptrdiff_t>(off),
               b.begin() + static_cast<std::ptrdiff_t>(off + len));
}

/// One frame as a test sees it on the wire (independent of the library's
/// frame walker).
struct wire_frame {
  std::size_t offset = 0;
  std::uint16_t type = 0;
  std::uint16_t flags = 0;
  std::uint64_t total_length = 0;
  std::uint64_t slot = 0;
};

/// Walks the frames of the message at `msg` (which starts at its preamble)
/// the way spec 01 §8 describes, with plain byte reads.
inline std::vector<wire_frame> wire_frames(std::span<const std::byte> msg) {
  std::vector<wire_frame> out;
  const std::uint64_t total = be64(msg, 16);
  const std::size_t end = (total != 0 ? static_cast<std::size_t>(total) : msg.size()) - 24;
  std::size_t pos = 24;
  while (pos + 16 <= end) {
    if (msg[pos] != std::byte{'F'} || msg[pos + 1] != std::byte{'R'}) {
      ++pos;
      continue;
    }
    wire_frame f;
    f.offset = pos;
    f.type = be16(msg, pos + 2);
    f.flags = be16(msg, pos + 6);
    f.total_length = be64(msg, pos + 8);
    f.slot = be64(msg, pos + static_cast<std::size_t>(f.total_length) - 12);
    out.push_back(f);
    pos = (pos + static_cast<std::size_t>(f.total_length) + 7) & ~std::size_t{7};
  }
  return out;
}

/// Body of a frame (spec 01 §4.4).
inline std::span<const std::byte> frame_body(std::span<const std::byte> msg, const wire_frame& f) {
  const std::size_t footer = f.type == 9 ? 20 : 12;
  return msg.subspan(f.offset + 16, static_cast<std::size_t>(f.total_length) - 16 - footer);
}

/// Hand assembler for crafted messages: frames are written exactly as
/// requested (no validation), padded to 8 unless told otherwise.
class message_builder {
 public:
  explicit message_builder(std::uint16_t flags = 0x0001, std::uint16_t version = 3) {
    append_text(out_, "TENSOGRM");
    append_be16(out_, version);
    append_be16(out_, flags);
    for (int i = 0; i < 4; ++i) out_.push_back(std::byte{0});
    append_be64(out_, 0);  // total_length, patched by finish()
  }

  /// A non-data frame. `hashed` sets HASH_PRESENT and a correct slot.
  message_builder& frame(std::uint16_t type, std::span<const std::byte> body, bool hashed = true,
                         bool pad = true) {
    note_footer(type);
    const std::size_t start = out_.size();
    append_text(out_, "FR");
    append_be16(out_, type);
    append_be16(out_, 1);
    append_be16(out_, hashed ? 0x0002 : 0x0000);
    append_be64(out_, 16 + body.size() + 12);
    out_.insert(out_.end(), body.begin(), body.end());
    append_be64(out_, hashed ? tensogram::format::xxh3_64(body) : 0);
    append_text(out_, "ENDF");
    last_frame_ = start;
    if (pad) pad8();
    return *this;
  }
  template <typename V>
  requires std::same_as<V, tensogram::cbor::value> message_builder& frame(std::uint16_t type, const V& v,
                                                                          bool hashed = true) {
    const bytes body = tensogram::cbor::encode(v);
    return frame(type, body, hashed);
  }

  /// A data-object frame (type 9) with either layout.
  message_builder& data_frame(std::span<const std::byte> payload, std::span<const std::byte> descriptor,
                              bool cbor_after = true, bool hashed = true) {
    const std::size_t start = out_.size();
    append_text(out_, "FR");
    append_be16(out_, 9);
    append_be16(out_, 1);
    append_be16(out_, static_cast<std::uint16_t>((cbor_after ? 0x0001 : 0) | (hashed ? 0x0002 : 0)));
    append_be64(out_, 16 + payload.size() + descriptor.size() + 20);
    bytes body;
    if (cbor_after) {
      body.insert(body.end(), payload.begin(), payload.end());
      body.insert(body.end(), descriptor.begin(), descriptor.end());
    } else {
      body.insert(body.end(), descriptor.begin(), descriptor.end());
      body.insert(body.end(), payload.begin(), payload.end());
    }
    out_.insert(out_.end(), body.begin(), body.end());
    append_be64(out_, cbor_after ? 16 + payload.size() : 16);
    append_be64(out_, hashed ? tensogram::format::xxh3_64(body) : 0);
    append_text(out_, "ENDF");
    last_frame_ = start;
    pad8();
    return *this;
  }
  template <typename V>
  requires std::same_as<V, tensogram::cbor::value> message_builder& data_frame(
      std::span<const std::byte> payload, const V& descriptor, bool cbor_after = true, bool hashed = true) {
    const bytes d = tensogram::cbor::encode(descriptor);
    return data_frame(payload, d, cbor_after, hashed);
  }

  /// Raw bytes (padding, garbage, hand-made frames).
  message_builder& raw(std::span<const std::byte> b) {
    out_.insert(out_.end(), b.begin(), b.end());
    return *this;
  }

  /// Offset of the most recently written frame.
  [[nodiscard]] std::size_t last_frame() const noexcept { return last_frame_; }
  [[nodiscard]] std::size_t size() const noexcept { return out_.size(); }

  /// Appends the postamble and back-fills total_length (0 when `streaming`).
  bytes finish(bool streaming = false) {
    pad8();
    const std::size_t post = out_.size();
    const std::uint64_t total = streaming ? 0 : post + 24;
    append_be64(out_, first_footer_ ? *first_footer_ : post);
    append_be64(out_, total);
    append_text(out_, "39277777");
    put_be64(out_, 16, total);
    return out_;
  }

 private:
  void pad8() {
    while (out_.size() % 8 != 0) out_.push_back(std::byte{0});
  }
  void note_footer(std::uint16_t type) {
    if ((type == 5 || type == 6 || type == 7) && !first_footer_) first_footer_ = out_.size();
  }
  bytes out_;
  std::size_t last_frame_ = 0;
  std::optional<std::size_t> first_footer_;
};

/// A minimal, valid GlobalMetadata body with `n` empty base entries.
inline tensogram::cbor::value metadata_with_base(std::size_t n) {
  tensogram::cbor::array base;
  for (std::size_t i = 0; i < n; ++i) base.push_back(tensogram::cbor::value::make_map());
  return tensogram::cbor::value::make_map({{"base", tensogram::cbor::value(std::move(base))}});
}

/// A descriptor map for pipeline none.
inline tensogram::cbor::value descriptor_value(std::string_view dtype, std::vector<std::uint64_t> shape,
                                               std::string_view order = "big") {
  tensogram::cbor::array s;
  tensogram::cbor::array st;
  const auto strides = tensogram::contiguous_strides(shape);
  for (auto x : shape) s.emplace_back(x);
  for (auto x : strides) st.emplace_back(x);
  return tensogram::cbor::value::make_map(
      {{"type", "ntensor"},
       {"ndim", tensogram::cbor::value(static_cast<std::uint64_t>(shape.size()))},
       {"shape", tensogram::cbor::value(std::move(s))},
       {"strides", tensogram::cbor::value(std::move(st))},
       {"dtype", tensogram::cbor::value(std::string(dtype))},
       {"byte_order", tensogram::cbor::value(std::string(order))},
       {"encoding", "none"},
       {"filter", "none"},
       {"compression", "none"}});
}

/// Reproducible provenance for byte comparisons.
inline tensogram::provenance test_provenance() {
  tensogram::provenance p;
  p.encoder_name = "tensogram";
  p.encoder_version = "0.24.0";
  p.time = "2026-01-02T03:04:05Z";
  p.uuid = "00000000-0000-4000-8000-000000000000";
  return p;
}

// Bit index of the top exponent bit of one component of `t` (-1 for
// non-floats); clearing it keeps random float values finite.
inline int top_exponent_bit(tensogram::dtype t) {
  switch (t) {
    case tensogram::dtype::float16:
    case tensogram::dtype::bfloat16: return 14;
    case tensogram::dtype::float32:
    case tensogram::dtype::complex64: return 30;
    case tensogram::dtype::float64:
    case tensogram::dtype::complex128: return 62;
    default: return -1;
  }
}

// Random values for `n` elements of `t` (finite for floats), as the bytes
// an encoder receives in either byte order.
struct random_sample {
  bytes big;     // each component stored big-endian
  bytes little;  // the same values, little-endian
  [[nodiscard]] const bytes& in(tensogram::byte_order o) const {
    return o == tensogram::byte_order::big ? big : little;
  }
};

// `structured` gives compressors something to find: every fifth component
// zero, and bitmask bytes in runs of 00 / FF.
inline random_sample make_random_sample(tensogram::dtype t, std::uint64_t n, std::mt19937_64& rng,
                                        bool structured = false) {
  random_sample s;
  if (t == tensogram::dtype::bitmask) {
    const auto size = static_cast<std::size_t>(*tensogram::raw_byte_size(t, n));
    for (std::size_t i = 0; i < size; ++i) {
      if (!structured) {
        s.big.push_back(static_cast<std::byte>(rng() & 0xFF));
        continue;
      }
      const auto r = rng() % 4;
      s.big.push_back(r == 0   ? std::byte{0}
                      : r == 1 ? std::byte{0xFF}
                               : static_cast<std::byte>(rng() & 0xFF));
    }
    s.little = s.big;
    return s;
  }
  const std::size_t unit = tensogram::dtype_swap_unit(t);
  const std::size_t width = tensogram::dtype_width(t);
  const std::size_t components = n * (width / unit);
  const int top = top_exponent_bit(t);
  for (std::size_t c = 0; c < components; ++c) {
    std::uint64_t v = rng();
    if (structured && c % 5 == 0) v = 0;
    if (unit < 8) v &= (std::uint64_t{1} << (8 * unit)) - 1;
    if (top >= 0) v &= ~(std::uint64_t{1} << top);
    for (std::size_t b = 0; b < unit; ++b)
      s.big.push_back(static_cast<std::byte>((v >> (8 * (unit - 1 - b))) & 0xFF));
    for (std::size_t b = 0; b < unit; ++b) s.little.push_back(static_cast<std::byte>((v >> (8 * b)) & 0xFF));
  }
  return s;
}

}  // namespace tgtest

#include "tensogram/codecs/pipeline.hpp"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "tensogram/codecs/bitmask_codecs.hpp"
#include "tensogram/codecs/blosc2.hpp"
#include "tensogram/codecs/lz4.hpp"
#include "tensogram/codecs/shuffle.hpp"
#include "tensogram/codecs/zstd.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/core/memory.hpp"

namespace tensogram::codecs {

namespace {

template <std::size_t N>
bool in(const std::array<std::string_view, N>& names, std::string_view name) noexcept {
  for (std::string_view n : names) {
    if (n == name) return true;
  }
  return false;
}
constexpr std::array<std::string_view, 2> k_encodings = {"none", "simple_packing"};
constexpr std::array<std::string_view, 2> k_filters = {"none", "shuffle"};
constexpr std::array<std::string_view, 9> k_compressions = {"none", "szip", "zstd", "lz4",    "blosc2",
                                                            "zfp",  "sz3",  "rle",  "roaring"};

// ---------------------------------------------------------------------------
// Parameter access with the reference's error texts (spec 03 §2).

std::string kind_name(const cbor::value& v) {
  switch (v.type()) {
    case cbor::value::kind::null: return "null";
    case cbor::value::kind::boolean: return "bool";
    case cbor::value::kind::integer: return "integer";
    case cbor::value::kind::floating: return "float";
    case cbor::value::kind::text: return "text";
    case cbor::value::kind::bytes: return "bytes";
    case cbor::value::kind::array: return "array";
    case cbor::value::kind::map: return "map";
    case cbor::value::kind::tag: return "tag";
  }
  return "?";
}

const cbor::value& required(const data_object_descriptor& d, std::string_view key) {
  const cbor::value* v = d.params.find(key);
  if (v == nullptr) throw metadata_error("missing required parameter: " + std::string(key));
  return *v;
}

std::uint64_t as_uint(const cbor::value& v, std::string_view key, std::uint64_t max, const char* range) {
  const cbor::integer* i = v.as_integer();
  if (i == nullptr)
    throw metadata_error("expected integer for " + std::string(key) + ", got " + kind_name(v));
  if (i->negative || i->magnitude > max)
    throw metadata_error(std::string(key) + " out of " + range + " range");
  return i->magnitude;
}

std::int64_t as_int(const cbor::value& v, std::string_view key) {
  const cbor::integer* i = v.as_integer();
  if (i == nullptr)
    throw metadata_error("expected integer for " + std::string(key) + ", got " + kind_name(v));
  const auto x = i->to_int64();
  if (!x || *x < std::numeric_limits<std::int32_t>::min() || *x > std::numeric_limits<std::int32_t>::max()) {
    throw metadata_error(std::string(key) + " out of i32 range");
  }
  return *x;
}

// "num": a float, or an integer with |n| <= 2^53.
double as_number(const cbor::value& v, std::string_view key) {
  if (const double* d = v.as_float()) return *d;
  if (const cbor::integer* i = v.as_integer()) {
    if (i->magnitude <= (std::uint64_t{1} << 53)) {
      const double m = static_cast<double>(i->magnitude);
      return i->negative ? -1.0 - m : m;
    }
  }
  throw metadata_error("expected number for " + std::string(key) + ", got " + kind_name(v));
}

std::uint32_t u32_param(const data_object_descriptor& d, std::string_view key) {
  return static_cast<std::uint32_t>(
      as_uint(required(d, key), key, std::numeric_limits<std::uint32_t>::max(), "u32"));
}

simple_packing_params packing_params(const data_object_descriptor& d) {
  simple_packing_params p;
  p.bits_per_value = u32_param(d, "sp_bits_per_value");
  if (p.bits_per_value > 64) {
    throw encoding_error("bits_per_value " + std::to_string(p.bits_per_value) + " exceeds maximum of 64");
  }
  p.reference_value = as_number(required(d, "sp_reference_value"), "sp_reference_value");
  if (!std::isfinite(p.reference_value)) throw metadata_error("sp_reference_value must be finite");
  p.binary_scale_factor =
      static_cast<std::int32_t>(as_int(required(d, "sp_binary_scale_factor"), "sp_binary_scale_factor"));
  p.decimal_scale_factor =
      static_cast<std::int32_t>(as_int(required(d, "sp_decimal_scale_factor"), "sp_decimal_scale_factor"));
  return p;
}

std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw metadata_error("element count overflows usize");
  return r;
}

void swap_to(std::vector<std::byte>& bytes, byte_order from, byte_order to, dtype t) {
  if (from != to) swap_bytes_in_place(bytes, dtype_swap_unit(t));
}

std::vector<std::byte> to_vector(std::span<const std::byte> s) {
  return std::vector<std::byte>(s.begin(), s.end());
}

// Where an encode stage writes: the payload vector itself when it is the
// last stage before `compression: none` (it becomes the payload, no copy),
// else uninitialised scratch that the next stage reads once. Both are
// advised for huge pages before their first touch; the payload vector has
// room for the message around it.
std::span<std::byte> stage_output(std::size_t size, bool last_before_compression, bool no_compression,
                                  std::vector<std::byte>& payload, buffer& scratch) {
  if (last_before_compression && no_compression) {
    payload = make_advised_bytes(size, message_headroom);
    return payload;
  }
  scratch = buffer::allocate(size);
  return {scratch.mutable_data(), size};
}

// Largest expansion for which zstd/lz4 decode straight into memory of the
// expected size (zstd and lz4 blocks rarely exceed ~250:1 on real data);
// beyond it the output grows with what the payload actually produces.
constexpr std::size_t k_direct_expansion = 256;

[[noreturn]] void size_mismatch(const char* codec, std::size_t got, std::uint64_t expected) {
  throw encoding_error(std::string("compression error: ") + codec + " error: decompressed " +
                       std::to_string(got) + " bytes, expected " + std::to_string(expected));
}

}  // namespace

bool is_known_encoding(std::string_view name) noexcept {
  return in(k_encodings, name);
}
bool is_known_filter(std::string_view name) noexcept {
  return in(k_filters, name);
}
bool is_known_compression(std::string_view name) noexcept {
  return in(k_compressions, name);
}

bool resolve_simple_packing_params(data_object_descriptor& d, std::span<const std::byte> raw,
                                   std::uint32_t threads) {
  if (d.encoding != "simple_packing") return false;
  if (d.dtype != dtype::float64) {
    throw encoding_error("simple_packing only supports float64 dtype; got " +
                         std::string(dtype_name(d.dtype)));
  }
  const std::uint32_t bits = u32_param(d, "sp_bits_per_value");
  const bool has_r = d.params.contains("sp_reference_value");
  const bool has_e = d.params.contains("sp_binary_scale_factor");
  if (has_r != has_e) {
    throw metadata_error(has_r ? "descriptor sets sp_reference_value but not sp_binary_scale_factor"
                               : "descriptor sets sp_binary_scale_factor but not sp_reference_value");
  }
  if (has_r) {
    if (!d.params.contains("sp_decimal_scale_factor"))
      d.params.set("sp_decimal_scale_factor", cbor::value(0));
    return false;
  }
  std::int32_t dsf = 0;
  if (const cbor::value* v = d.params.find("sp_decimal_scale_factor")) {
    dsf = static_cast<std::int32_t>(as_int(*v, "sp_decimal_scale_factor"));
  }
  if (raw.size() % 8 != 0) {
    throw metadata_error("simple_packing input length " + std::to_string(raw.size()) +
                         " is not a multiple of 8");
  }
  // The original values, in the declared order (spec 03 §4.3 step 5), read
  // in place.
  const simple_packing_params p =
      simple_packing_compute_params(raw, d.effective_byte_order(), bits, dsf, threads);
  d.params.set("sp_reference_value", cbor::value(p.reference_value));
  d.params.set("sp_binary_scale_factor", cbor::value(p.binary_scale_factor));
  d.params.set("sp_decimal_scale_factor", cbor::value(p.decimal_scale_factor));
  d.params.set("sp_bits_per_value", cbor::value(p.bits_per_value));
  // With B = 0 the computation takes the first value without scanning.
  return bits > 0 || raw.empty();
}

pipeline pipeline::build(const data_object_descriptor& d) {
  pipeline pl;
  pl.dtype_ = d.dtype;
  // Encoding, then filter, then compression (spec 03 §3.1 step 4).
  if (d.encoding == "simple_packing") {
    if (d.dtype != dtype::float64) {
      throw encoding_error("simple_packing only supports float64 dtype; got " +
                           std::string(dtype_name(d.dtype)));
    }
    pl.packing_ = packing_params(d);
  } else if (d.encoding != "none") {
    throw encoding_error("unknown encoding: " + d.encoding);
  }
  if (d.filter == "shuffle") {
    pl.shuffle_size_ =
        static_cast<std::size_t>(as_uint(required(d, "shuffle_element_size"), "shuffle_element_size",
                                         std::numeric_limits<std::size_t>::max(), "usize"));
  } else if (d.filter != "none") {
    throw encoding_error("unknown filter: " + d.filter);
  }
  const std::string& c = d.compression;
  if (c == "none") {
    pl.compressor_ = compressor::none;
  } else if (c == "szip") {
    pl.compressor_ = compressor::szip;
    pl.szip_.rsi = u32_param(d, "szip_rsi");
    pl.szip_.block_size = u32_param(d, "szip_block_size");
    pl.szip_.flags = u32_param(d, "szip_flags");
    // Bits per sample and the flags OR-ed at run time (spec 03 §7.2).
    pl.szip_.bits_per_sample = pl.packing_        ? pl.packing_->bits_per_value
                               : pl.shuffle_size_ ? 8U
                                                  : static_cast<std::uint32_t>(8 * dtype_width(d.dtype));
    if (pl.packing_) pl.szip_.flags |= szip_flags::data_msb;
    if (pl.szip_.bits_per_sample >= 17 && pl.szip_.bits_per_sample <= 24)
      pl.szip_.flags |= szip_flags::data_3byte;
    szip_validate(pl.szip_);
    if (const cbor::value* offs = d.params.find("szip_block_offsets")) {
      const cbor::array* a = offs->as_array();
      if (a == nullptr) throw metadata_error("szip_block_offsets must be an array");
      std::vector<std::uint64_t> v;
      v.reserve(a->size());
      for (const cbor::value& x : *a) {
        v.push_back(as_uint(x, "szip_block_offsets", std::numeric_limits<std::uint64_t>::max(), "u64"));
      }
      pl.szip_offsets_ = std::move(v);
    }
  } else if (c == "zstd") {
    pl.compressor_ = compressor::zstd;
    if (const cbor::value* v = d.params.find("zstd_level"))
      pl.zstd_level_ = static_cast<int>(as_int(*v, "zstd_level"));
  } else if (c == "lz4") {
    pl.compressor_ = compressor::lz4;
  } else if (c == "blosc2") {
    // Spec 03 §8.4.1, spec 02 §4.2: codec and level from the descriptor
    // (the level is range-checked when compressing, as c-blosc2 does);
    // typesize derived from the stages before; the reference's fixed
    // filters (byte shuffle in slot 5) and chunking.
    pl.compressor_ = compressor::blosc2;
    if (const cbor::value* v = d.params.find("blosc2_codec")) {
      const std::string* name = v->as_text();
      if (name == nullptr) throw metadata_error("expected text for blosc2_codec, got " + kind_name(*v));
      const auto codec = blosc2_codec_from_name(*name);
      if (!codec) throw encoding_error("unknown blosc2 codec: " + *name);
      pl.blosc2_.codec = *codec;
    }
    if (const cbor::value* v = d.params.find("blosc2_clevel")) {
      pl.blosc2_.clevel = static_cast<int>(as_int(*v, "blosc2_clevel"));
    }
    pl.blosc2_.typesize = pl.packing_        ? (pl.packing_->bits_per_value + 7) / 8
                          : pl.shuffle_size_ ? 1
                                             : dtype_width(d.dtype);
  } else if (c == "zfp") {
    pl.compressor_ = compressor::zfp;
    const cbor::value* mode = d.params.find("zfp_mode");
    if (mode == nullptr || !mode->is_text()) throw metadata_error("missing required parameter: zfp_mode");
    const std::string& m = *mode->as_text();
    if (m == "fixed_rate") {
      pl.zfp_.mode = zfp_mode::fixed_rate;
      pl.zfp_.rate = as_number(required(d, "zfp_rate"), "zfp_rate");
    } else if (m == "fixed_precision") {
      pl.zfp_.mode = zfp_mode::fixed_precision;
      pl.zfp_.precision = u32_param(d, "zfp_precision");
    } else if (m == "fixed_accuracy") {
      pl.zfp_.mode = zfp_mode::fixed_accuracy;
      pl.zfp_.tolerance = as_number(required(d, "zfp_tolerance"), "zfp_tolerance");
    } else {
      throw encoding_error("unknown zfp_mode: " + m);
    }
  } else if (c == "sz3") {
    pl.compressor_ = compressor::sz3;
    const cbor::value* mode = d.params.find("sz3_error_bound_mode");
    if (mode == nullptr || !mode->is_text()) {
      throw metadata_error("missing required parameter: sz3_error_bound_mode");
    }
    const std::string& m = *mode->as_text();
    if (m == "abs") {
      pl.sz3_.mode = sz3_error_bound_mode::abs;
    } else if (m == "rel") {
      pl.sz3_.mode = sz3_error_bound_mode::rel;
    } else if (m == "psnr") {
      pl.sz3_.mode = sz3_error_bound_mode::psnr;
    } else {
      throw encoding_error("unknown sz3_error_bound_mode: " + m);
    }
    pl.sz3_.bound = as_number(required(d, "sz3_error_bound"), "sz3_error_bound");
  } else if (c == "rle" || c == "roaring") {
    if (d.dtype != dtype::bitmask) {
      throw encoding_error("compression \"" + c +
                           "\" only supports dtype=bitmask, got dtype=" + std::string(dtype_name(d.dtype)));
    }
    pl.compressor_ = c == "rle" ? compressor::rle : compressor::roaring;
  } else {
    throw encoding_error("unknown compression: " + c);
  }
  return pl;
}

void pipeline::check_encodable() const {
  if (compressor_ == compressor::zfp || compressor_ == compressor::sz3) {
    const std::string name = compressor_ == compressor::zfp ? "zfp" : "sz3";
    if (packing_ || shuffle_size_) {
      throw encoding_error(
          name + " must not follow simple_packing or shuffle: it would compress meaningless numbers");
    }
    if (dtype_ != dtype::float64) {
      throw encoding_error(name + " compresses float64 data only; got " + std::string(dtype_name(dtype_)));
    }
  }
  if (compressor_ == compressor::szip && packing_) {
    const std::uint32_t b = packing_->bits_per_value;
    if (b != 8 && b != 16 && b != 24 && b != 32) {
      throw encoding_error(
          "simple_packing with sp_bits_per_value " + std::to_string(b) +
          " followed by szip is lossy (szip codes whole 1/2/3/4-byte containers): use 8, 16, 24 or "
          "32 bits");
    }
  }
}

std::uint64_t pipeline::decoded_size(std::uint64_t n) const {
  if (packing_ || compressor_ == compressor::zfp) return checked_mul(n, 8);
  return encoded_size(n);
}

bool pipeline::is_identity() const noexcept {
  return !packing_ && !shuffle_size_ && compressor_ == compressor::none;
}

bool pipeline::uses_intra_threads() const noexcept {
  return packing_.has_value() || shuffle_size_.has_value() || compressor_ == compressor::zstd ||
         compressor_ == compressor::blosc2;
}

std::uint64_t pipeline::encoded_size(std::uint64_t n) const {
  if (packing_) return simple_packing_size(n, packing_->bits_per_value);
  const auto size = raw_byte_size(dtype_, n);
  if (!size) throw metadata_error("element count overflows usize");
  return *size;
}

pipeline::encoded pipeline::encode(std::span<const std::byte> raw, std::uint64_t n, byte_order declared,
                                   std::uint32_t threads) const {
  encoded out;
  // Each stage reads the previous stage's bytes and writes a buffer of its
  // own; a stage that is absent passes the span on (no copy). Buffers are
  // advised for huge pages before their first touch (core/memory.hpp).
  // Stage 1: encoding.
  std::vector<std::byte> stage1;
  buffer scratch1;
  std::span<const std::byte> s1 = raw;
  if (packing_) {
    if (raw.size() != checked_mul(n, 8)) {
      throw metadata_error("simple_packing input of " + std::to_string(raw.size()) + " bytes does not hold " +
                           std::to_string(n) + " float64 values");
    }
    const auto size = static_cast<std::size_t>(simple_packing_size(n, packing_->bits_per_value));
    const std::span<std::byte> dst =
        stage_output(size, !shuffle_size_, compressor_ == compressor::none, stage1, scratch1);
    simple_packing_encode(raw, declared, *packing_, dst, threads);
    s1 = dst;
  }
  // Stage 2: filter.
  std::vector<std::byte> stage2;
  buffer scratch2;
  std::span<const std::byte> s2 = s1;
  if (shuffle_size_) {
    const std::span<std::byte> dst =
        stage_output(s1.size(), true, compressor_ == compressor::none, stage2, scratch2);
    shuffle(s1, *shuffle_size_, dst, threads);
    s2 = dst;
  }
  // Stage 3: compression.
  switch (compressor_) {
    case compressor::none:
      // The last stage's own buffer becomes the payload; only an identity
      // pipeline (which callers short-cut) would copy the input here.
      if (shuffle_size_) {
        out.payload = std::move(stage2);
      } else if (packing_) {
        out.payload = std::move(stage1);
      } else {
        out.payload = to_vector(s2);
      }
      break;
    case compressor::szip: {
      szip_encoded e = szip_compress(s2, szip_);
      out.payload = std::move(e.payload);
      out.szip_block_offsets = std::move(e.block_offsets);
      break;
    }
    case compressor::zstd: out.payload = zstd_compress(s2, zstd_level_, threads); break;
    case compressor::lz4: out.payload = lz4_compress(s2); break;
    case compressor::blosc2:
      // typesize 0 (bitmask, 0-bit packing) is c-blosc2's InvalidParam, an
      // empty input its refusal to append an empty chunk (spec 03 §3.2).
      if (blosc2_.typesize == 0) {
        throw encoding_error("compression error: blosc2 error: typesize 0 (dtype " +
                             std::string(dtype_name(dtype_)) + ") is not a valid blosc2 typesize");
      }
      out.payload = blosc2_compress(s2, blosc2_, threads);
      break;
    case compressor::zfp: {
      // zfp reads host-order doubles (spec 03 §8.6); give it those.
      if (declared != native_byte_order()) {
        std::vector<std::byte> host = make_advised_bytes(s2.size());
        copy_swapped(s2, host, 8);
        out.payload = zfp_compress(host, zfp_);
      } else {
        out.payload = zfp_compress(s2, zfp_);
      }
      break;
    }
    case compressor::sz3: {
      // sz3 reads host-order doubles, like zfp (spec 03 §8.7).
      if (declared != native_byte_order()) {
        std::vector<std::byte> host = make_advised_bytes(s2.size());
        copy_swapped(s2, host, 8);
        out.payload = sz3_compress(host, sz3_);
      } else {
        out.payload = sz3_compress(s2, sz3_);
      }
      break;
    }
    case compressor::rle: out.payload = rle_compress(s2); break;
    case compressor::roaring: out.payload = roaring_compress(s2); break;
  }
  return out;
}

namespace {

// zfp decode bound: values per payload byte (spec 03 §8.6: at least one bit
// per block of four doubles, and a dtype of W ≥ 1 byte — bitmask: 1/8 —
// gives N·W/8 doubles for N elements) plus slack for tiny payloads.
constexpr std::uint64_t k_zfp_values_per_byte = 2048;
constexpr std::uint64_t k_zfp_value_slack = std::uint64_t{1} << 16;

// zfp and sz3 hand back host-order doubles; the reference writes them in the
// declared order before the common swap to the requested order (spec 03
// §1.2, §3.3). Returns the order the bytes are left in. For 8-byte swap
// units the two swaps cancel, so nothing is done and the host order is
// reported; for other dtypes (and complex, swapped per component) the
// doubles are reversed here so that the dtype-sized swap that follows gives
// the reference's bytes.
// With a filter or simple_packing after the codec the bytes themselves
// matter, so the shortcut is taken only when `last_stage`.
byte_order doubles_in_declared_order(std::span<std::byte> doubles, byte_order declared, std::size_t unit,
                                     bool last_stage) {
  if (declared == native_byte_order() || (unit == 8 && last_stage)) return native_byte_order();
  swap_bytes_in_place(doubles, 8);
  return declared;
}

}  // namespace

buffer pipeline::decode(std::span<const std::byte> payload, std::uint64_t n, byte_order declared,
                        byte_order out_order, std::uint32_t threads) const {
  const std::uint64_t x = encoded_size(n);
  // Size gate (spec 03 §9.1) before anything is allocated from the payload.
  if (!shuffle_size_ && compressor_ == compressor::none && payload.size() != x) {
    throw encoding_error("descriptor claims " + std::to_string(x) + " decoded byte(s) but frame payload is " +
                         std::to_string(payload.size()) + " byte(s) (encoding " +
                         (packing_ ? std::string("simple_packing") : std::string("none")) + ", dtype width " +
                         std::to_string(dtype_width(dtype_)) + ")");
  }
  if (x > (std::uint64_t{1} << 62)) throw metadata_error("element count overflows usize");
  const auto xs = static_cast<std::size_t>(x);
  // Stage 3. `stage` is what the next stage reads: the payload itself when
  // there is no compression (no copy), else the decompressor's buffer.
  std::vector<std::byte> bytes;
  buffer direct;  // stage-3 output decoded in place, when used
  bool direct_used = false;
  // Uninitialised memory of the expected size for a decoder that fills it.
  const auto direct_output = [&]() -> std::span<std::byte> {
    direct = buffer::allocate(xs);
    direct_used = true;
    return {direct.mutable_data(), xs};
  };
  std::span<const std::byte> stage = payload;
  byte_order stage_order = declared;
  const std::size_t unit = dtype_swap_unit(dtype_);
  const bool last_stage = !shuffle_size_ && !packing_;
  switch (compressor_) {
    case compressor::none: break;
    case compressor::szip: bytes = szip_decompress(payload, szip_, xs); break;
    case compressor::zstd:
      // Straight into uninitialised memory of the expected size when the
      // payload could plausibly expand to it; a descriptor claiming far more
      // than the payload holds goes through the growing decoder, which
      // allocates only what the frames produce.
      if (xs <= payload.size() * k_direct_expansion + (std::size_t{1} << 20)) {
        zstd_decompress_into(payload, direct_output());
      } else {
        bytes = zstd_decompress(payload, xs);
        if (bytes.size() != xs) size_mismatch("zstd", bytes.size(), x);
      }
      break;
    case compressor::lz4:
      if (xs <= payload.size() * k_direct_expansion + (std::size_t{1} << 20)) {
        lz4_decompress_into(payload, direct_output());
      } else {
        bytes = lz4_decompress(payload, xs);
        if (bytes.size() != xs) size_mismatch("lz4", bytes.size(), x);
      }
      break;
    case compressor::blosc2: blosc2_decompress_into(payload, direct_output(), threads); break;
    case compressor::zfp: {
      // The reference decodes N doubles, N the element count whatever the
      // dtype (spec 03 §3.3, §8.6): 8·N bytes, which is N·W only for 8-byte
      // dtypes. A stream the reference wrote holds at least one bit per four
      // doubles of its N·W/8 input, so it cannot stand for more than
      // k_zfp_values_per_byte values per payload byte; a descriptor claiming
      // more is refused before anything is allocated.
      if (n > static_cast<std::uint64_t>(payload.size()) * k_zfp_values_per_byte + k_zfp_value_slack) {
        throw encoding_error("compression error: zfp error: a payload of " + std::to_string(payload.size()) +
                             " bytes cannot encode the " + std::to_string(n) +
                             " values the descriptor claims");
      }
      direct = buffer::allocate(static_cast<std::size_t>(n) * 8);
      direct_used = true;
      zfp_decompress_into(payload, n, zfp_, {direct.mutable_data(), direct.size()});
      stage_order =
          doubles_in_declared_order({direct.mutable_data(), direct.size()}, declared, unit, last_stage);
      break;
    }
    case compressor::sz3:
      // The stream's own count must give the expected size (spec 03 §9.2);
      // checked before the output is allocated. Every stream the reference
      // writes satisfies it: SZ3 was given the N·W input bytes as doubles.
      if (xs % 8 != 0) {
        throw encoding_error("sz3 decodes float64 values; " + std::to_string(x) +
                             " decoded bytes are not a whole number of them");
      }
      if (const auto info = sz3_inspect(payload); info.num * 8 != x) {
        size_mismatch("sz3", info.num * 8, x);
      }
      sz3_decompress_into(payload, xs / 8, direct_output());
      stage_order =
          doubles_in_declared_order({direct.mutable_data(), direct.size()}, declared, unit, last_stage);
      break;
    case compressor::rle: bytes = rle_decompress(payload, xs); break;
    case compressor::roaring: bytes = roaring_decompress(payload, xs); break;
  }
  // Where the current stage's bytes live decides who owns the result.
  enum class holder { payload, direct, bytes };
  holder at = holder::payload;
  if (direct_used) {
    stage = direct.bytes();
    at = holder::direct;
  } else if (compressor_ != compressor::none) {
    stage = bytes;
    at = holder::bytes;
  }
  // Stage 2: into uninitialised memory, read once by stage 1 or returned.
  if (shuffle_size_) {
    buffer un = buffer::allocate(stage.size());
    unshuffle(stage, *shuffle_size_, {un.mutable_data(), un.size()}, threads);
    direct = std::move(un);
    stage = direct.bytes();
    at = holder::direct;
  }
  // Stage 1: unpacked straight into the result (uninitialised, advised).
  if (packing_) {
    buffer values = buffer::allocate(static_cast<std::size_t>(checked_mul(n, 8)));
    simple_packing_decode(stage, n, *packing_, out_order,
                          std::span<std::byte>(values.mutable_data(), values.size()), threads);
    return values;
  }
  const bool swap = stage_order != out_order && unit > 1;
  switch (at) {
    case holder::payload: {
      // Nothing decoded into a buffer of ours yet: one pass from the
      // payload, swapping on the way when the orders differ.
      buffer out = buffer::allocate(stage.size());
      const std::span<std::byte> dst(out.mutable_data(), out.size());
      if (swap) {
        copy_swapped(stage, dst, unit);
      } else if (!stage.empty()) {
        std::memcpy(dst.data(), stage.data(), stage.size());
      }
      return out;
    }
    case holder::direct:
      if (swap) swap_bytes_in_place({direct.mutable_data(), direct.size()}, unit);
      return direct;
    case holder::bytes: break;
  }
  if (swap) swap_bytes_in_place(bytes, unit);
  return buffer::owned(std::move(bytes));
}

void pipeline::check_range_decode() const {
  if (shuffle_size_) {
    throw encoding_error("decode_range is not supported when a filter (e.g. shuffle) is applied");
  }
  if (dtype_ == dtype::bitmask) throw encoding_error("partial range decode not supported for bitmask dtype");
  switch (compressor_) {
    case compressor::none:
    case compressor::blosc2:
    case compressor::zfp:
    case compressor::sz3: return;
    case compressor::szip:
      if (!szip_offsets_) {
        throw compression_error(
            "missing szip_block_offsets in payload metadata (required for partial range decode)");
      }
      return;
    default: throw encoding_error("range decode not supported for this compressor");
  }
}

std::vector<std::byte> pipeline::decode_range(std::span<const std::byte> payload, std::uint64_t n,
                                              byte_order declared, byte_order out_order, std::uint64_t offset,
                                              std::uint64_t count) const {
  check_range_decode();
  std::uint64_t last = 0;
  if (__builtin_add_overflow(offset, count, &last) || last > n) {
    throw encoding_error("range (offset=" + std::to_string(offset) + ", count=" + std::to_string(count) +
                         "): exceeds the object's " + std::to_string(n) + " elements");
  }
  if (compressor_ == compressor::zfp || compressor_ == compressor::sz3) {
    // The whole stream is decoded and the elements' bytes sliced out of it
    // (spec 03 §8.6 for zfp; sz3, which the reference cannot range-decode,
    // the same way). Where the decoded bytes are not N·W (spec 03 §3.3) the
    // slice is still taken in elements of the dtype, so a range is always
    // the matching part of what a full decode returns.
    const buffer all = decode(payload, n, declared, out_order);
    const std::uint64_t w = packing_ ? 8 : dtype_width(dtype_);
    if ((offset + count) * w > all.size()) {
      throw encoding_error("range (offset=" + std::to_string(offset) + ", count=" + std::to_string(count) +
                           "): the object decodes to " + std::to_string(all.size()) + " bytes, fewer than " +
                           std::to_string((offset + count) * w) + " (" + std::to_string(offset + count) +
                           " elements of " + std::to_string(w) + " bytes)");
    }
    const std::span<const std::byte> part =
        all.bytes().subspan(static_cast<std::size_t>(offset * w), static_cast<std::size_t>(count * w));
    return std::vector<std::byte>(part.begin(), part.end());
  }
  const std::uint64_t x = encoded_size(n);
  if (compressor_ == compressor::none && payload.size() != x) {
    throw encoding_error("descriptor claims " + std::to_string(x) + " decoded byte(s) but frame payload is " +
                         std::to_string(payload.size()) + " byte(s)");
  }
  // Byte range of the encoded stream that holds the elements.
  std::uint64_t byte_start = 0;
  std::uint64_t byte_size = 0;
  std::uint64_t in_byte_bit = 0;
  if (packing_) {
    const std::uint64_t b = packing_->bits_per_value;
    const std::uint64_t bit_start = offset * b;
    const std::uint64_t bit_end = bit_start + count * b;
    byte_start = bit_start / 8;
    byte_size = (bit_end + 7) / 8 - byte_start;
    in_byte_bit = bit_start % 8;
  } else {
    const std::uint64_t w = dtype_width(dtype_);
    byte_start = offset * w;
    byte_size = count * w;
  }
  std::vector<std::byte> bytes;
  if (compressor_ == compressor::none) {
    bytes.assign(payload.begin() + static_cast<std::ptrdiff_t>(byte_start),
                 payload.begin() + static_cast<std::ptrdiff_t>(byte_start + byte_size));
  } else if (compressor_ == compressor::blosc2) {
    // Only the chunks and blocks holding the bytes (spec 03 §8.4.4). The
    // reference asks c-blosc2 for whole items of the frame's typesize and
    // so cannot serve a last partial item; bytes have no such limit.
    bytes = blosc2_decompress_range(payload, byte_start, byte_size, x);
  } else {  // szip
    bytes = szip_decompress_range(payload, szip_, *szip_offsets_, x, byte_start, byte_size);
  }
  if (packing_) {
    std::vector<std::byte> values(static_cast<std::size_t>(count * 8));
    simple_packing_decode_bits(bytes, in_byte_bit, count, *packing_, out_order, values);
    return values;
  }
  swap_to(bytes, declared, out_order, dtype_);
  return bytes;
}

}  // namespace tensogram::codecs

// One scalar of a logical value (spec 06 §8.3) as the bits of its dtype.
#include "scalar_encoding.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "metatensor/safetensors.hpp"
#include "tensor_values.hpp"

namespace metatensor::detail {

namespace {

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
    writer_error(errc::mt_value, where + ": " + f.name + " has no NaN");
  }
  if (std::isinf(d)) {
    if (f.kind == special::ieee) return sign | (exp_all_ones << f.man_bits);
    writer_error(errc::mt_value, where + ": " + f.name + " has no infinity");
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
        writer_error(errc::mt_value, where + ": " + std::to_string(d) + " is out of the range of " + f.name);
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
    writer_error(errc::mt_value, where + ": " + std::to_string(d) + " is out of the range of " + f.name);
  }
  if (f.kind == special::fnuz && magnitude == 0) return 0;  // no negative zero: 0x80 is NaN
  return sign | magnitude;
}

// F8_E8M0: an unsigned power of two 2^(code - 127), 0xFF is NaN, no zero.
std::uint32_t encode_e8m0(double d, const std::string& where) {
  if (std::isnan(d)) return 0xFF;
  if (!(d > 0) || std::isinf(d)) {
    writer_error(errc::mt_value, where + ": F8_E8M0 holds only finite positive powers of two");
  }
  int e = 0;
  (void)std::frexp(d, &e);
  int exponent = e - 1;
  if (round_half_even(std::ldexp(d, -exponent)) >= 2.0) ++exponent;
  const int code = exponent + 127;
  if (code < 0 || code > 254)
    writer_error(errc::mt_value, where + ": " + std::to_string(d) + " is out of F8_E8M0 range");
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

}  // namespace

std::string json_kind(const nlohmann::json& v) {
  return v.type_name();
}

namespace {

double json_number(const nlohmann::json& v, dtype t, const std::string& where) {
  if (!v.is_number()) {
    writer_error(errc::mt_value, where + ": expected a number for " +
                                     std::string(safetensors::dtype_name(t)) + ", got " + json_kind(v));
  }
  return v.get<double>();
}

// An integer of `bits` bits as its two's-complement bit pattern.
std::uint64_t json_integer(const nlohmann::json& v, dtype t, const std::string& where) {
  const unsigned bits = safetensors::dtype_bits(t);
  const bool is_signed = t == dtype::i8 || t == dtype::i16 || t == dtype::i32 || t == dtype::i64;
  const std::string type_name(safetensors::dtype_name(t));
  const auto out_of_range = [&](const std::string& text) {
    writer_error(errc::mt_value, where + ": " + text + " is out of the range of " + type_name);
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
      writer_error(errc::mt_value, where + ": " + v.dump() + " is not an integer (" + type_name + ")");
    }
    const double lo = is_signed ? -std::ldexp(1.0, static_cast<int>(bits) - 1) : 0.0;
    const double hi = std::ldexp(1.0, static_cast<int>(is_signed ? bits - 1 : bits));
    if (d < lo || d >= hi) out_of_range(v.dump());
    if (d < 0) return static_cast<std::uint64_t>(static_cast<std::int64_t>(d));
    return static_cast<std::uint64_t>(d);
  }
  writer_error(errc::mt_value, where + ": expected an integer for " + type_name + ", got " + json_kind(v));
}

}  // namespace

std::uint64_t scalar_bits(dtype t, const nlohmann::json& v, const std::string& where) {
  switch (t) {
    case dtype::boolean:
      if (!v.is_boolean())
        writer_error(errc::mt_value, where + ": expected true or false for BOOL, got " + json_kind(v));
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
        writer_error(errc::mt_value, where + ": " + v.dump() + " is out of the range of F32");
      }
      return std::bit_cast<std::uint32_t>(f);
    }
    case dtype::f64: return std::bit_cast<std::uint64_t>(json_number(v, t, where));
    case dtype::c64: {
      if (!v.is_array() || v.size() != 2) {
        writer_error(errc::mt_value, where + ": expected [real, imaginary] for C64, got " + json_kind(v));
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

}  // namespace metatensor::detail

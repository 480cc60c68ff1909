// The `TypeDef:` keywords of the metatensor dialect (spec 06 §4.4): the
// scalar keywords with their dtypes and allowed JSON `type`s, and the
// record, String, List and alignment keywords. Not a public header.
#pragma once

#include <array>
#include <string_view>

#include "metatensor/layout.hpp"

namespace metatensor::detail {

inline constexpr std::string_view typedef_prefix = "TypeDef:";
inline constexpr std::string_view kw_struct = "TypeDef:Struct";
inline constexpr std::string_view kw_string = "TypeDef:String";
inline constexpr std::string_view kw_list = "TypeDef:List";
inline constexpr std::string_view kw_align = "TypeDef:Align";

/// True for every keyword starting with "TypeDef:".
[[nodiscard]] inline bool is_typedef(std::string_view k) noexcept {
  return k.substr(0, typedef_prefix.size()) == typedef_prefix;
}

// The JSON `type` values a scalar leaf may carry (§4.4 table).
enum type_bits : unsigned {
  t_boolean = 1U,
  t_integer = 2U,
  t_number = 4U,
  t_array = 8U,
  t_object = 16U,
  t_string = 32U
};

struct scalar_keyword {
  std::string_view name;
  dtype type;
  unsigned types;
};

// §4.4 scalar keywords.
inline constexpr std::array<scalar_keyword, 22> scalar_keywords = {{
    {"TypeDef:Bool", dtype::boolean, t_boolean},
    {"TypeDef:Int8", dtype::i8, t_integer | t_number},
    {"TypeDef:Uint8", dtype::u8, t_integer | t_number},
    {"TypeDef:Int16", dtype::i16, t_integer | t_number},
    {"TypeDef:Uint16", dtype::u16, t_integer | t_number},
    {"TypeDef:Int32", dtype::i32, t_integer | t_number},
    {"TypeDef:Uint32", dtype::u32, t_integer | t_number},
    {"TypeDef:Int64", dtype::i64, t_integer | t_number},
    {"TypeDef:Uint64", dtype::u64, t_integer | t_number},
    {"TypeDef:Float16", dtype::f16, t_integer | t_number},
    {"TypeDef:BFloat16", dtype::bf16, t_integer | t_number},
    {"TypeDef:Float32", dtype::f32, t_integer | t_number},
    {"TypeDef:Float64", dtype::f64, t_integer | t_number},
    {"TypeDef:Complex64", dtype::c64, t_array},
    {"TypeDef:Float8E4M3", dtype::f8_e4m3, t_number},
    {"TypeDef:Float8E5M2", dtype::f8_e5m2, t_number},
    {"TypeDef:Float8E8M0", dtype::f8_e8m0, t_number},
    {"TypeDef:Float8E4M3FNUZ", dtype::f8_e4m3fnuz, t_number},
    {"TypeDef:Float8E5M2FNUZ", dtype::f8_e5m2fnuz, t_number},
    {"TypeDef:Float4E2M1", dtype::f4, t_number},
    {"TypeDef:Float6E2M3", dtype::f6_e2m3, t_number},
    {"TypeDef:Float6E3M2", dtype::f6_e3m2, t_number},
}};

/// The bit of a JSON `type` name ("number" -> t_number), 0 for another name.
[[nodiscard]] unsigned type_bit(std::string_view name) noexcept;
/// The scalar keyword called `k`, or nullptr.
[[nodiscard]] const scalar_keyword* find_scalar(std::string_view k) noexcept;
/// True for the keywords of §4.4 (an unknown `TypeDef:` keyword fails closed, §4.3).
[[nodiscard]] bool known_typedef(std::string_view k) noexcept;
/// Sub-byte dtypes: allowed in flat tensors only (§4.4).
[[nodiscard]] bool sub_byte(dtype t) noexcept;

}  // namespace metatensor::detail

#include "typedef_keywords.hpp"

#include "tensogram/core/error.hpp"

namespace metatensor {

namespace detail {

const scalar_keyword* find_scalar(std::string_view k) noexcept {
  for (const auto& s : scalar_keywords) {
    if (s.name == k) return &s;
  }
  return nullptr;
}

unsigned type_bit(std::string_view name) noexcept {
  if (name == "boolean") return t_boolean;
  if (name == "integer") return t_integer;
  if (name == "number") return t_number;
  if (name == "array") return t_array;
  if (name == "object") return t_object;
  if (name == "string") return t_string;
  return 0;
}

bool known_typedef(std::string_view k) noexcept {
  return find_scalar(k) != nullptr || k == kw_struct || k == kw_string || k == kw_list || k == kw_align;
}

bool sub_byte(dtype t) noexcept {
  return t == dtype::f4 || t == dtype::f6_e2m3 || t == dtype::f6_e3m2;
}

}  // namespace detail

std::string_view scalar_typedef_keyword(dtype t) noexcept {
  for (const auto& s : detail::scalar_keywords) {
    if (s.type == t) return s.name;
  }
  return {};
}

nlohmann::json scalar_schema(dtype t) {
  for (const auto& s : detail::scalar_keywords) {
    if (s.type != t) continue;
    // The first `type` the §4.4 table allows, in the table's order.
    const char* type = (s.types & detail::t_boolean) ? "boolean"
                       : (t == dtype::f16 || t == dtype::bf16 || t == dtype::f32 || t == dtype::f64 ||
                          (s.types & detail::t_integer) == 0)
                           ? ((s.types & detail::t_array) ? "array" : "number")
                           : "integer";
    return {{"type", type}, {std::string(s.name), true}};
  }
  throw tensogram::invalid_arg_error("no scalar TypeDef keyword for this dtype");
}

}  // namespace metatensor

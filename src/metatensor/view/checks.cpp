// The index and type checks of the views (metatensor/view/checks.hpp).
#include "metatensor/view/checks.hpp"

#include <string>

#include "tensogram/core/error.hpp"

namespace metatensor {

namespace detail {

void throw_index(std::string_view where, std::uint64_t index, std::uint64_t count) {
  throw tensogram::invalid_arg_error(std::string(where) + ": index " + std::to_string(index) +
                                     " out of range [0, " + std::to_string(count) + ")");
}

void throw_type_mismatch(std::string_view where, std::string_view have, std::size_t host_size) {
  throw tensogram::invalid_arg_error(std::string(where) + " holds " + std::string(have) +
                                     ", which cannot be read as a " + std::to_string(host_size) +
                                     "-byte host type");
}

std::string type_name(const type_layout& type) {
  std::string out;
  switch (type.type) {
    case value_type::scalar: out = std::string(dtype_name(type.scalar)); break;
    case value_type::record: out = "struct"; break;
    case value_type::string: out = "string"; break;
    case value_type::list: out = "list"; break;
  }
  for (auto d : type.shape) {
    // Appended piecewise: GCC 12 -O3 misreports -Wrestrict on "[" + std::string (GCC bug 105329).
    out += '[';
    out += std::to_string(d);
    out += ']';
  }
  return out;
}

}  // namespace detail

}  // namespace metatensor

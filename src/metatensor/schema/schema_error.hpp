// Errors of schema compilation (spec 06 §4–§6): every message names the
// offending schema node by its JSON Pointer (the root is ""). Not a public
// header.
#pragma once

#include <string>
#include <string_view>

#include "metatensor/error.hpp"
#include "src/metatensor/text.hpp"

namespace metatensor::detail {

/// Throws `code` with "schema node \"<pointer>\": <what>".
[[noreturn]] inline void fail_at_node(errc code, std::string_view pointer, std::string_view what) {
  std::string msg = "schema node ";
  msg += quoted(pointer);
  msg += ": ";
  msg += what;
  throw error(code, msg);
}

}  // namespace metatensor::detail

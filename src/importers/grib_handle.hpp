// Private helpers of the GRIB importer and exporter (spec 05 §2, §3): owning
// wrappers for the ecCodes C objects and the "ecCodes error: ..." failure.
//
// ecCodes hands out raw pointers that must be released with its own delete
// functions; unique_ptr with these deleters makes every early return and
// exception path release them.
#pragma once

#include <eccodes.h>

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "tensogram/importers/conversion.hpp"

namespace tensogram::importers::grib_detail {

struct handle_deleter {
  void operator()(codes_handle* h) const noexcept { codes_handle_delete(h); }
};
/// One GRIB message held by ecCodes.
using handle_ptr = std::unique_ptr<codes_handle, handle_deleter>;

struct keys_iterator_deleter {
  void operator()(codes_keys_iterator* it) const noexcept { codes_keys_iterator_delete(it); }
};
/// An iterator over the keys of one ecCodes namespace (spec 05 §2.5).
using keys_iterator_ptr = std::unique_ptr<codes_keys_iterator, keys_iterator_deleter>;

struct file_closer {
  void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};
/// A C stream: ecCodes reads GRIB messages from a FILE* (a real file or an
/// fmemopen'ed buffer).
using file_ptr = std::unique_ptr<std::FILE, file_closer>;

/// Spec 05 §2.6: "ecCodes error: <ecCodes' text> (<context>)".
[[noreturn]] inline void throw_eccodes(int code, std::string_view context) {
  std::string text = "ecCodes error: ";
  text += codes_get_error_message(code);
  if (!context.empty()) {
    text += " (";
    text += context;
    text += ")";
  }
  throw conversion_error(conversion_failure::library, text);
}

}  // namespace tensogram::importers::grib_detail

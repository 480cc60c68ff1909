#include "tensogram/codecs/pipeline.hpp"

#include <array>
#include <string>

#include "tensogram/core/error.hpp"

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

pipeline pipeline::build(const data_object_descriptor& d) {
  // Check order as the reference: encoding, filter, compression.
  if (d.encoding != "none") throw encoding_error("unknown encoding: " + d.encoding);
  if (d.filter != "none") throw encoding_error("unknown filter: " + d.filter);
  if (d.compression != "none") throw encoding_error("unknown compression: " + d.compression);
  return pipeline{};
}

}  // namespace tensogram::codecs

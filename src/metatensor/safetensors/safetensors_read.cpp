// Reading and validating the safetensors base layer (spec 06 §2, §8.2, §8.4).
//
// The rules of §2 are applied in their order, each as one pass over the
// header, so the first failure reported is the one §8.2 prescribes. Only the
// first 8 + N bytes of the image are read; tensor data is never touched.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "metatensor/safetensors.hpp"
#include "src/metatensor/fast_json.hpp"
#include "src/metatensor/strict_json.hpp"
#include "src/metatensor/text.hpp"
#include "tensogram/core/endian.hpp"
#include "tensogram/core/memory.hpp"
#include "tensogram/core/utf8.hpp"

namespace metatensor::safetensors {
namespace {

[[noreturn]] void fail(errc code, const std::string& detail) {
  throw error(code, detail);
}

// A header integer (§2 rule 7): unsigned, no fraction/exponent, <= 2^53 - 1.
bool header_uint(const nlohmann::json& v, std::uint64_t& out) {
  if (!v.is_number_unsigned()) return false;
  out = v.get<std::uint64_t>();
  return out <= max_json_integer;
}

using entry = detail::header_entry;

// Rule 7 (and the rank limit of §8.4): shapes and data offsets.
void read_shapes_and_offsets(std::vector<entry>& entries, const std::vector<const nlohmann::json*>& json,
                             std::vector<std::uint64_t>& dims) {
  for (std::size_t k = 0; k < entries.size(); ++k) {
    auto& e = entries[k];
    const auto& s = (*json[k])["shape"];
    if (!s.is_array()) fail(errc::st_entry, "tensor " + detail::quoted(e.name) + ": shape is not an array");
    if (s.size() > max_rank) {
      fail(errc::mt_limit,
           "tensor " + detail::quoted(e.name) + ": rank " + std::to_string(s.size()) + " exceeds 32");
    }
    e.shape_at = dims.size();
    e.rank = s.size();
    for (std::size_t i = 0; i < s.size(); ++i) {
      std::uint64_t d = 0;
      if (!header_uint(s[i], d)) {
        fail(errc::st_entry, "tensor " + detail::quoted(e.name) + ": shape[" + std::to_string(i) +
                                 "] = " + s[i].dump() + " is not an integer in [0, 2^53-1]");
      }
      dims.push_back(d);
    }
    const auto& o = (*json[k])["data_offsets"];
    if (!o.is_array() || o.size() != 2) {
      fail(errc::st_entry,
           "tensor " + detail::quoted(e.name) + ": data_offsets is not an array of two integers");
    }
    if (!header_uint(o[0], e.begin) || !header_uint(o[1], e.end)) {
      fail(errc::st_entry, "tensor " + detail::quoted(e.name) + ": data_offsets " + o.dump() +
                               " are not integers in [0, 2^53-1]");
    }
    if (e.begin > e.end)
      fail(errc::st_offsets,
           "tensor " + detail::quoted(e.name) + ": data_offsets " + o.dump() + " begin > end");
  }
}

// Rule 8: dtype x shape is a whole number of bytes, the size of the data.
void check_sizes(const std::vector<entry>& entries) {
  for (const auto& e : entries) {
    std::uint64_t count = 1;
    for (auto d : e.shape) {
      if (d != 0 && count > UINT64_MAX / d) {
        fail(errc::st_overflow, "tensor " + detail::quoted(e.name) + ": element count overflows 64 bits");
      }
      count *= d;
    }
    const std::uint64_t bits = dtype_bits(e.type);
    if (count > UINT64_MAX / bits)
      fail(errc::st_overflow, "tensor " + detail::quoted(e.name) + ": bit size overflows 64 bits");
    if ((count * bits) % 8 != 0) {
      fail(errc::st_subbyte, "tensor " + detail::quoted(e.name) + ": " + std::to_string(count) +
                                 " elements of " + std::string(dtype_name(e.type)) +
                                 " are not a whole number of bytes");
    }
    if (e.end - e.begin != count * bits / 8) {
      fail(errc::st_size_mismatch, "tensor " + detail::quoted(e.name) + ": data_offsets span " +
                                       std::to_string(e.end - e.begin) + " bytes, dtype x shape needs " +
                                       std::to_string(count * bits / 8));
    }
  }
}

}  // namespace

}  // namespace metatensor::safetensors

namespace metatensor::detail {

using safetensors::dtype;
using safetensors::entry;
using safetensors::fail;
using safetensors::parse_dtype;
using safetensors::read_shapes_and_offsets;

// Rules 3-7 by the reference path: nlohmann, one rule per pass, so the
// first failure is the one §8.2 names. Used when the fast path declines.
void read_header_reference(std::string_view text, std::map<std::string, std::string>& metadata,
                           bool& has_metadata, std::vector<entry>& entries, header_storage& storage) {
  // Rule 3.
  if (const auto bad = tensogram::first_invalid_utf8(text); bad != std::string_view::npos) {
    fail(errc::st_header_utf8, "invalid UTF-8 at header byte " + std::to_string(bad) + " (file offset " +
                                   std::to_string(8 + bad) + ")");
  }
  // Rules 3 and 4.
  const nlohmann::json doc =
      parse_strict_json(text, json_errors{errc::st_header_json, errc::st_duplicate_key, "header"});
  // Rule 5.
  if (!doc.is_object()) fail(errc::st_header_json, "header is not a JSON object");
  if (const auto it = doc.find("__metadata__"); it != doc.end()) {
    if (it->is_object()) {
      for (const auto& [k, v] : it->items()) {
        if (!v.is_string())
          fail(errc::st_metadata, "__metadata__ value of " + detail::quoted(k) + " is not a string");
        metadata.emplace(k, v.get<std::string>());
      }
      has_metadata = true;
    } else if (!it->is_null()) {
      fail(errc::st_metadata, "__metadata__ is neither an object nor null");
    }
  }
  std::vector<const nlohmann::json*> json;
  for (const auto& [k, v] : doc.items()) {
    if (k == "__metadata__") continue;
    if (!v.is_object()) fail(errc::st_entry, "tensor " + detail::quoted(k) + ": entry is not an object");
    for (const auto& [field, _] : v.items()) {
      if (field != "dtype" && field != "shape" && field != "data_offsets") {
        fail(errc::st_entry, "tensor " + detail::quoted(k) + ": unknown field " + detail::quoted(field));
      }
    }
    for (const char* field : {"dtype", "shape", "data_offsets"}) {
      if (!v.contains(field))
        fail(errc::st_entry, "tensor " + detail::quoted(k) + ": missing field \"" + field + "\"");
    }
    entries.emplace_back().name = storage.names.emplace_back(k);
    json.push_back(&v);
  }
  // Rule 6.
  for (std::size_t k = 0; k < entries.size(); ++k) {
    auto& e = entries[k];
    const auto& d = (*json[k])["dtype"];
    const auto parsed = d.is_string() ? parse_dtype(d.get_ref<const std::string&>()) : std::nullopt;
    if (!parsed) fail(errc::st_dtype, "tensor " + detail::quoted(e.name) + ": unknown dtype " + d.dump());
    e.type = *parsed;
  }
  read_shapes_and_offsets(entries, json, storage.dims);
  bind_shapes(entries, storage);
}

}  // namespace metatensor::detail

namespace metatensor::safetensors {

std::uint64_t tensor_view::element_count() const noexcept {
  std::uint64_t n = 1;
  for (auto d : shape_) n *= d;  // cannot overflow: checked at open (§2 rule 8)
  return n;
}

void tensor_view::check_viewable(bool type_ok, std::size_t size, std::size_t align, bool aligned) const {
  if (!type_ok) {
    throw tensogram::invalid_arg_error("tensor " + detail::quoted(name_) + " has dtype " +
                                       std::string(dtype_name(type_)) + ", which cannot be viewed as a " +
                                       std::to_string(size) + "-byte element type");
  }
  if (!aligned) {
    throw tensogram::invalid_arg_error("tensor " + detail::quoted(name_) + " data at data-section offset " +
                                       std::to_string(begin_) + " is not aligned to " +
                                       std::to_string(align) + " bytes; use bytes() or copy_as<T>()");
  }
}

file file::open(const std::filesystem::path& path) {
  try {
    return from_buffer(tensogram::buffer::map_file(path));
  } catch (const error& e) {
    throw e.with_context(path.string());
  }
}

std::string_view file::header_text() const noexcept {
  return {reinterpret_cast<const char*>(image_.data()) + 8, static_cast<std::size_t>(header_length_)};
}

file file::from_buffer(tensogram::buffer image) {
  file f;
  f.image_ = std::move(image);
  const auto bytes = f.image_.bytes();
  const std::uint64_t size = bytes.size();

  // Rule 1.
  if (size < 8) fail(errc::st_header_too_small, "file is " + std::to_string(size) + " bytes, less than 8");
  const auto n = tensogram::load_le<std::uint64_t>(bytes.data());
  // Rule 2.
  if (n > max_header_length) {
    fail(errc::st_header_too_large, "header length " + std::to_string(n) + " exceeds 100000000");
  }
  if (n > size - 8) {
    fail(errc::st_header_length, "header length " + std::to_string(n) + " exceeds the " +
                                     std::to_string(size - 8) + " bytes after it");
  }
  f.header_length_ = n;
  std::vector<entry> entries;  // in name order (byte-wise)
  if (auto fast = detail::read_header_fast(bytes, n)) {
    // Rules 3-7 hold (fast_json.hpp); any failure goes the reference way.
    auto& metadata = fast->storage->metadata;
    for (auto& [k, v] : fast->metadata) metadata.emplace_hint(metadata.end(), std::move(k), std::move(v));
    f.has_metadata_ = fast->has_metadata;
    entries = std::move(fast->entries);
    f.storage_ = std::move(fast->storage);
  } else {
    auto storage = std::make_shared<detail::header_storage>();
    detail::read_header_reference(f.header_text(), storage->metadata, f.has_metadata_, entries, *storage);
    f.storage_ = std::move(storage);
  }
  check_sizes(entries);
  // Rule 9. `entries` is in name order, so an index breaks (begin, end)
  // ties as the name would, without comparing strings.
  std::vector<std::size_t> order(entries.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto by_offsets = [&](std::size_t a, std::size_t b) {
    return std::tie(entries[a].begin, entries[a].end, a) < std::tie(entries[b].begin, entries[b].end, b);
  };
  // Writers usually lay the data out in name order: then one pass suffices.
  if (!std::is_sorted(order.begin(), order.end(), by_offsets))
    std::sort(order.begin(), order.end(), by_offsets);
  std::uint64_t pos = 0;
  for (const std::size_t i : order) {
    const auto& e = entries[i];
    if (e.begin != pos) {
      fail(errc::st_offsets, "tensor " + detail::quoted(e.name) + ": begins at " + std::to_string(e.begin) +
                                 (e.begin > pos ? ", leaving a hole after " : ", overlapping data before ") +
                                 std::to_string(pos));
    }
    pos = e.end;
  }
  // Rule 10.
  const std::uint64_t data_size = size - 8 - n;
  if (pos != data_size) {
    fail(errc::st_incomplete, "tensors cover " + std::to_string(pos) + " bytes but the data section has " +
                                  std::to_string(data_size));
  }
  // Views: every range lies inside [D, size) by rules 9 and 10.
  const std::size_t d = static_cast<std::size_t>(8 + n);
  tensogram::reserve_advised(f.tensors_, entries.size());
  tensogram::reserve_advised(f.by_name_, entries.size());
  f.by_name_.resize(entries.size());
  for (const std::size_t i : order) {
    const auto& e = entries[i];
    const auto span =
        bytes.subspan(d + static_cast<std::size_t>(e.begin), static_cast<std::size_t>(e.end - e.begin));
    f.by_name_[i] = f.tensors_.size();  // the i-th name is at this position
    f.tensors_.emplace_back(e.name, e.type, e.shape, e.begin, e.end, span);
  }
  return f;
}

const std::map<std::string, std::string>& file::metadata() const noexcept {
  // Only a moved-from file has no storage.
  static const std::map<std::string, std::string> none;
  return storage_ ? storage_->metadata : none;
}

std::shared_ptr<const std::string> file::metadata_value(std::string_view key) const {
  if (!storage_) return nullptr;
  const auto it = storage_->metadata.find(std::string(key));
  if (it == storage_->metadata.end()) return nullptr;
  // Aliasing: the string lives as long as any copy of the storage.
  return std::shared_ptr<const std::string>(storage_, &it->second);
}

const tensor_view* file::find(std::string_view name) const noexcept {
  const auto* i = detail::find_by_name(by_name_, name, [&](std::size_t k) { return tensors_[k].name(); });
  return i == nullptr ? nullptr : &tensors_[*i];
}

const tensor_view& file::at(std::string_view name) const {
  if (const auto* t = find(name)) return *t;
  throw tensogram::invalid_arg_error("no tensor named " + detail::quoted(name));
}

}  // namespace metatensor::safetensors

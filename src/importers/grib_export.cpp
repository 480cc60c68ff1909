// Tensogram → GRIB on ecCodes (spec 05 §3; issue 9).

#include <eccodes.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "grib_handle.hpp"
#include "library_lock.hpp"
#include "tensogram/cbor/value.hpp"
#include "tensogram/core/buffer.hpp"
#include "tensogram/importers/grib.hpp"
#include "tensogram/message/decode.hpp"

namespace tensogram::importers {

namespace {

using grib_detail::handle_ptr;
using grib_detail::throw_eccodes;

// The template every rebuilt message starts from (spec 05 §3 step 2).
// ecCodes looks it up in its own samples directory.
constexpr const char* sample_name = "regular_ll_sfc_grib2";

// Keys whose order matters because setting them reshapes the message
// (spec 05 §3 step 3), in the order they are set.
constexpr std::array<std::string_view, 9> order_sensitive_keys = {"edition",
                                                                  "tablesVersion",
                                                                  "centre",
                                                                  "subCentre",
                                                                  "gridType",
                                                                  "setLocalDefinition",
                                                                  "grib2LocalSectionNumber",
                                                                  "packingType",
                                                                  "bitsPerValue"};

// The value bitmap-missing points carry in the rebuilt GRIB (spec 05 §3).
constexpr double grib_missing_value = 9999.0;

bool is_order_sensitive(std::string_view key) {
  return std::find(order_sensitive_keys.begin(), order_sensitive_keys.end(), key) !=
         order_sensitive_keys.end();
}

// Sets one captured scalar; arrays, maps and bytes are skipped. Returns
// whether ecCodes accepted it; callers ignore refusals (spec 05 §3 step 4).
bool set_captured(codes_handle* h, const std::string& key, const cbor::value& v) {
  if (const auto* i = v.as_integer()) {
    const auto n = i->to_int64();
    return n && *n >= std::numeric_limits<long>::min() && *n <= std::numeric_limits<long>::max() &&
           codes_set_long(h, key.c_str(), static_cast<long>(*n)) == CODES_SUCCESS;
  }
  if (const double* d = v.as_float()) return codes_set_double(h, key.c_str(), *d) == CODES_SUCCESS;
  if (const std::string* s = v.as_text()) {
    std::size_t len = s->size();
    return codes_set_string(h, key.c_str(), s->c_str(), &len) == CODES_SUCCESS;
  }
  return false;
}

// Steps 3 and 4 of spec 05 §3: replays `grib_repro` onto the template.
// Returns the text-valued keys the handle refused.
std::vector<std::string> replay_keys(codes_handle* h, const cbor::value& repro) {
  for (std::string_view key : order_sensitive_keys) {
    if (key == "setLocalDefinition") {
      // The captured value always reads back 0; a local section needs 1.
      if (repro.contains("grib2LocalSectionNumber")) {
        codes_set_long(h, "setLocalDefinition", 1);
        continue;
      }
    }
    if (const cbor::value* v = repro.find(key)) set_captured(h, std::string(key), *v);
  }

  std::vector<std::string> others;
  for (const auto& entry : *repro.as_map()) {
    const std::string* key = entry.key.as_text();
    if (key != nullptr && !is_order_sensitive(*key)) others.push_back(*key);
  }
  std::sort(others.begin(), others.end());
  others.erase(std::unique(others.begin(), others.end()), others.end());
  // Two passes: a key set later in name order can reset an earlier one
  // (typeOfLevel=isobaricInhPa turns level 150 into 1), and the second pass
  // sets it again. Spec 05 §3 describes a single pass; the reference's
  // round-trip tests only cover heightAboveGround fields, where one pass
  // happens to be enough. Keys that did not move are simply re-set.
  std::vector<std::string> refused_text;
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& key : others) {
      const cbor::value* v = repro.find(key);  // the last entry wins, as in the importer
      if (v == nullptr || v->is_array()) continue;
      if (!set_captured(h, key, *v) && pass == 1 && v->is_text()) refused_text.push_back(key);
    }
  }
  return refused_text;
}

// One object → one GRIB message (spec 05 §3 steps 2–5).
std::vector<std::byte> object_to_grib(const cbor::value& repro, const decoded_object& object,
                                      std::size_t index) {
  const std::string label = "object " + std::to_string(index);
  handle_ptr h(codes_grib_handle_new_from_samples(nullptr, sample_name));
  if (!h) {
    throw conversion_error(conversion_failure::library,
                           std::string("ecCodes error: GRIB sample '") + sample_name + "' not found");
  }
  const auto refused_text = replay_keys(h.get(), repro);

  // Decoded in native byte order with NaN restored from the mask.
  std::vector<double> values(object.data_size() / sizeof(double));
  if (!values.empty()) std::memcpy(values.data(), object.data(), values.size() * sizeof(double));

  // Issue 9: NaN (bitmap-missing points on import) goes back to missing
  // points: missingValue 9999 with a bitmap.
  const bool has_nan = std::any_of(values.begin(), values.end(), [](double v) { return std::isnan(v); });
  if (has_nan) {
    for (double& v : values) {
      if (std::isnan(v)) v = grib_missing_value;
    }
    if (int err = codes_set_long(h.get(), "bitmapPresent", 1); err != CODES_SUCCESS) {
      throw_eccodes(err, label + ": setting bitmapPresent");
    }
    if (int err = codes_set_double(h.get(), "missingValue", grib_missing_value); err != CODES_SUCCESS) {
      throw_eccodes(err, label + ": setting missingValue");
    }
  }

  // The grid must hold exactly the object's values: ecCodes would accept
  // any count and write a message whose grid and data disagree. Only grids
  // with Ni x Nj points fit the regular_ll template; a reduced Gaussian
  // grid's `pl` array is not replayed (arrays never are, spec 05 §3 step 4)
  // and ecCodes would write a message it cannot read back.
  long ni = 0;
  long nj = 0;
  const bool has_ni_nj = codes_get_long(h.get(), "Ni", &ni) == CODES_SUCCESS &&
                         codes_get_long(h.get(), "Nj", &nj) == CODES_SUCCESS && ni > 0 && nj > 0 &&
                         ni != CODES_MISSING_LONG && nj != CODES_MISSING_LONG;
  if (!has_ni_nj) {
    char grid[64] = "unknown";
    std::size_t grid_len = sizeof grid;
    codes_get_string(h.get(), "gridType", grid, &grid_len);
    throw conversion_error(conversion_failure::invalid_data,
                           "invalid GRIB data: " + label + ": its grid (gridType " + grid +
                               ") has no Ni x Nj points; to-grib rebuilds regular grids only");
  }
  if (static_cast<std::uint64_t>(ni) * static_cast<std::uint64_t>(nj) != values.size()) {
    throw conversion_error(conversion_failure::invalid_data,
                           "invalid GRIB data: " + label + " has " + std::to_string(values.size()) +
                               " values but the grid rebuilt from its grib_repro has Nj x Ni = " +
                               std::to_string(nj) + " x " + std::to_string(ni) + " points");
  }

  // Step 5: values last.
  if (int err = codes_set_double_array(h.get(), "values", values.data(), values.size());
      err != CODES_SUCCESS) {
    throw_eccodes(err, label + ": setting values");
  }
  long points = 0;
  if (codes_get_long(h.get(), "numberOfPoints", &points) == CODES_SUCCESS &&
      static_cast<std::uint64_t>(points) != values.size()) {
    throw conversion_error(conversion_failure::invalid_data,
                           "invalid GRIB data: " + label + " has " + std::to_string(values.size()) +
                               " values but the GRIB grid rebuilt from its grib_repro has " +
                               std::to_string(points) + " points");
  }

  if (!refused_text.empty()) {
    // ecCodes caches a code table per handle the first time it is used: a
    // table looked up while the template was half rebuilt (e.g. under
    // tablesVersion 32, newer than ecCodes 2.28's tables) stays unusable,
    // so abbreviations like typeOfProcessedData "fc" are refused. A fresh
    // parse of the finished message accepts them; keys refused for other
    // reasons (read-only `units`) are refused again and ignored. Cloning
    // only now, once the message is complete and consistent, matters:
    // ecCodes 2.28 reads out of bounds when parsing a half-built one.
    handle_ptr fresh(codes_handle_clone(h.get()));
    if (fresh) {
      h = std::move(fresh);
      for (const auto& key : refused_text) set_captured(h.get(), key, *repro.find(key));
    }
  }

  const void* message = nullptr;
  std::size_t length = 0;
  if (int err = codes_get_message(h.get(), &message, &length); err != CODES_SUCCESS) {
    throw_eccodes(err, label + ": encoding the GRIB message");
  }
  const auto* first = static_cast<const std::byte*>(message);
  return std::vector<std::byte>(first, first + length);
}

}  // namespace

std::vector<std::byte> to_grib(std::span<const std::byte> tensogram_message) {
  // Spec 05 §3: decode in native byte order with NaN/Inf restored.
  const message decoded = decode(buffer::borrowed(tensogram_message));
  const std::lock_guard lock(detail::eccodes_library_mutex());
  const auto& base = decoded.global().base;

  std::vector<std::byte> out;
  for (std::size_t i = 0; i < decoded.num_objects(); ++i) {
    // Step 1.
    const cbor::value* repro = i < base.size() ? base[i].find("grib_repro") : nullptr;
    if (repro == nullptr || !repro->is_map()) {
      throw conversion_error(
          conversion_failure::invalid_data,
          "object " + std::to_string(i) + " has no 'grib_repro' key-set; was it produced by convert-grib?");
    }
    const decoded_object& object = decoded.object(i);
    if (object.descriptor().dtype != dtype::float64) {
      throw conversion_error(conversion_failure::invalid_data,
                             "to-grib expects float64 objects, got " + object.dtype_string());
    }
    const auto grib = object_to_grib(*repro, object, i);
    out.insert(out.end(), grib.begin(), grib.end());
  }
  return out;
}

}  // namespace tensogram::importers

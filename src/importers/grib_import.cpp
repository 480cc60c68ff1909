// GRIB → Tensogram on ecCodes (spec 05 §1, §2; issue 9).
//
// One deliberate difference from the reference (issue 9): points that a
// bitmap marks missing become NaN recorded in the NaN mask, instead of
// ecCodes' `missingValue` (9999) stored as ordinary data (spec 05 §2.4).

#include <eccodes.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "grib_handle.hpp"
#include "library_lock.hpp"
#include "tensogram/cbor/value.hpp"
#include "tensogram/importers/grib.hpp"
#include "tensogram/message/encode.hpp"

namespace tensogram::importers {

namespace {

using grib_detail::file_ptr;
using grib_detail::handle_ptr;
using grib_detail::keys_iterator_ptr;
using grib_detail::throw_eccodes;

// ecCodes' missing-integer sentinel (spec 05 §2.5 value filtering, §2.3 pitfall).
constexpr long missing_long = 2147483647;
// Arrays longer than this are not stored as metadata (spec 05 §2.5).
constexpr std::size_t max_metadata_array = 8192;

[[noreturn]] void invalid_grib(const std::string& text) {
  throw conversion_error(conversion_failure::invalid_data, "invalid GRIB data: " + text);
}

bool is_missing_long(long v) {
  return v == missing_long || v == -missing_long;
}

// ---- reading one key (spec 05 §2.5 "Value filtering") ----------------------

std::optional<cbor::value> read_long_key(codes_handle* h, const char* key, std::size_t count) {
  if (count == 1) {
    long v = 0;
    if (codes_get_long(h, key, &v) != CODES_SUCCESS || is_missing_long(v)) return std::nullopt;
    return cbor::value(static_cast<std::int64_t>(v));
  }
  if (count > max_metadata_array) return std::nullopt;
  std::vector<long> v(count);
  std::size_t len = count;
  if (codes_get_long_array(h, key, v.data(), &len) != CODES_SUCCESS) return std::nullopt;
  cbor::array out;
  out.reserve(len);
  for (std::size_t i = 0; i < len; ++i) out.emplace_back(static_cast<std::int64_t>(v[i]));
  return cbor::value(std::move(out));
}

std::optional<cbor::value> read_double_key(codes_handle* h, const char* key, std::size_t count) {
  if (count == 1) {
    double v = 0;
    if (codes_get_double(h, key, &v) != CODES_SUCCESS || !std::isfinite(v)) return std::nullopt;
    return cbor::value(v);
  }
  if (count > max_metadata_array) return std::nullopt;
  std::vector<double> v(count);
  std::size_t len = count;
  if (codes_get_double_array(h, key, v.data(), &len) != CODES_SUCCESS) return std::nullopt;
  cbor::array out;
  out.reserve(len);
  for (std::size_t i = 0; i < len; ++i) {
    if (!std::isfinite(v[i])) return std::nullopt;  // "all finite", else dropped
    out.emplace_back(v[i]);
  }
  return cbor::value(std::move(out));
}

std::optional<std::string> read_string(codes_handle* h, const char* key) {
  std::size_t len = 0;
  if (codes_get_length(h, key, &len) != CODES_SUCCESS) return std::nullopt;
  std::string buf(len + 1, '\0');
  len = buf.size();
  if (codes_get_string(h, key, buf.data(), &len) != CODES_SUCCESS) return std::nullopt;
  buf.resize(std::strlen(buf.c_str()));
  return buf;
}

std::optional<cbor::value> read_string_key(codes_handle* h, const char* key) {
  auto s = read_string(h, key);
  if (!s || *s == "MISSING" || *s == "not_found") return std::nullopt;
  return cbor::value(std::move(*s));
}

std::optional<cbor::value> read_bytes_key(codes_handle* h, const char* key, std::size_t count) {
  std::vector<unsigned char> raw(count);
  std::size_t len = count;
  if (codes_get_bytes(h, key, raw.data(), &len) != CODES_SUCCESS) return std::nullopt;
  cbor::byte_string out(len);
  if (len != 0) std::memcpy(out.data(), raw.data(), len);
  return cbor::value(std::move(out));
}

// A key read with its native ecCodes type and filtered as spec 05 §2.5 says;
// nothing when the key is unreadable or its value is dropped.
std::optional<cbor::value> read_key(codes_handle* h, const char* key) {
  int type = CODES_TYPE_UNDEFINED;
  if (codes_get_native_type(h, key, &type) != CODES_SUCCESS) return std::nullopt;
  if (type == CODES_TYPE_STRING) return read_string_key(h, key);
  std::size_t count = 0;
  if (codes_get_size(h, key, &count) != CODES_SUCCESS || count == 0) return std::nullopt;
  switch (type) {
    case CODES_TYPE_LONG: return read_long_key(h, key, count);
    case CODES_TYPE_DOUBLE: return read_double_key(h, key, count);
    case CODES_TYPE_BYTES: return read_bytes_key(h, key, count);
    default: return std::nullopt;  // sections, labels, undefined: not values
  }
}

// Every key of one ecCodes namespace (iterator flags of spec 05 §2.5: all
// keys, skip duplicates), appended to `into` (a later duplicate overwrites).
void read_namespace_into(codes_handle* h, const char* name_space, cbor::value& into) {
  keys_iterator_ptr it(codes_keys_iterator_new(
      h, CODES_KEYS_ITERATOR_ALL_KEYS | CODES_KEYS_ITERATOR_SKIP_DUPLICATES, name_space));
  if (!it) return;
  while (codes_keys_iterator_next(it.get()) != 0) {
    const char* key = codes_keys_iterator_get_name(it.get());
    if (key == nullptr) continue;
    if (auto v = read_key(h, key)) into.set(key, std::move(*v));
  }
}

cbor::value read_namespace(codes_handle* h, const char* name_space) {
  cbor::value map = cbor::value::make_map();
  read_namespace_into(h, name_space, map);
  return map;
}

// ---- typed single reads for shape and area ---------------------------------

// A readable, non-missing integer key.
std::optional<long> get_long(codes_handle* h, const char* key) {
  if (codes_is_defined(h, key) == 0) return std::nullopt;
  long v = 0;
  if (codes_get_long(h, key, &v) != CODES_SUCCESS || is_missing_long(v)) return std::nullopt;
  int err = 0;
  if (codes_is_missing(h, key, &err) != 0 && err == CODES_SUCCESS) return std::nullopt;
  return v;
}

// A readable, non-missing, finite float key.
std::optional<double> get_double(codes_handle* h, const char* key) {
  if (codes_is_defined(h, key) == 0) return std::nullopt;
  double v = 0;
  if (codes_get_double(h, key, &v) != CODES_SUCCESS || !std::isfinite(v) || v == CODES_MISSING_DOUBLE) {
    return std::nullopt;
  }
  int err = 0;
  if (codes_is_missing(h, key, &err) != 0 && err == CODES_SUCCESS) return std::nullopt;
  return v;
}

// `mars.area` = [N, W, S, E] for regular_ll grids, by the five steps of
// spec 05 §2.5; nothing whenever a step says "omit".
std::optional<cbor::value> regular_ll_area(codes_handle* h) {
  // Step 1: only grids scanned west→east and north→south.
  const auto i_negative = get_long(h, "iScansNegatively");
  const auto j_positive = get_long(h, "jScansPositively");
  if (!i_negative || !j_positive || *i_negative != 0 || *j_positive != 0) return std::nullopt;

  // Step 2: corners, Ni and the increment must be usable.
  const auto north = get_double(h, "latitudeOfFirstGridPointInDegrees");
  auto west = get_double(h, "longitudeOfFirstGridPointInDegrees");
  const auto south = get_double(h, "latitudeOfLastGridPointInDegrees");
  const auto east = get_double(h, "longitudeOfLastGridPointInDegrees");
  const auto ni = get_long(h, "Ni");
  const auto inc = get_double(h, "iDirectionIncrementInDegrees");
  if (!north || !west || !south || !east || !ni || !inc || *ni < 2 || *inc <= 0) return std::nullopt;

  // Step 3: a dateline-first global grid (raw W=180, E=179.75) is shifted
  // to W=-180; any other W > E grid is refused.
  if (*west > *east) {
    const double n = static_cast<double>(*ni);
    const bool full_global = std::fabs(n * *inc - 360.0) < *inc / 2;
    const double shifted_span = *east - (*west - 360.0);
    const bool span_matches = std::fabs(shifted_span - (n - 1) * *inc) < *inc / 2;
    if (!full_global || !span_matches) return std::nullopt;
    *west -= 360.0;
  }

  // Step 4.
  if (*north <= *south || *west >= *east) return std::nullopt;

  // Step 5.
  return cbor::value(
      cbor::array{cbor::value(*north), cbor::value(*west), cbor::value(*south), cbor::value(*east)});
}

// `mars` (spec 05 §2.5): the mars namespace plus `grid` and `area`.
cbor::value mars_map(codes_handle* h) {
  cbor::value mars = read_namespace(h, "mars");
  if (auto grid = read_string(h, "gridType")) {
    const bool regular_ll = *grid == "regular_ll";
    mars.set("grid", cbor::value(std::move(*grid)));
    if (regular_ll) {
      if (auto area = regular_ll_area(h)) mars.set("area", std::move(*area));
    }
  }
  return mars;
}

// `grib` (spec 05 §2.5, only with preserve_all_keys): {namespace: {key: value}}.
cbor::value all_keys_map(codes_handle* h) {
  cbor::value grib = cbor::value::make_map();
  for (const char* ns : {"ls", "geography", "time", "vertical", "parameter", "statistics"}) {
    cbor::value keys = read_namespace(h, ns);
    if (keys.size() != 0) grib.set(ns, std::move(keys));
  }
  return grib;
}

// `grib_repro` (spec 05 §2.5): what to-grib replays (spec 05 §3).
cbor::value repro_map(codes_handle* h) {
  cbor::value repro = cbor::value::make_map();
  for (const char* ns : {"geography", "parameter", "time", "vertical"}) read_namespace_into(h, ns, repro);
  for (const char* key :
       {"edition", "discipline", "gridType", "packingType", "bitsPerValue", "decimalScaleFactor",
        "tablesVersion", "centre", "subCentre", "productionStatusOfProcessedData", "typeOfProcessedData",
        "typeOfGeneratingProcess", "generatingProcessIdentifier", "setLocalDefinition",
        "grib2LocalSectionNumber", "marsClass", "marsType", "marsStream", "experimentVersionNumber"}) {
    if (codes_is_defined(h, key) == 0) continue;
    if (auto v = read_key(h, key)) repro.set(key, std::move(*v));
  }
  return repro;
}

// ---- values ---------------------------------------------------------------

// One GRIB message ready to become a Tensogram object.
struct converted_field {
  cbor::value base;
  data_object_descriptor descriptor;
  std::vector<std::byte> payload;  // float64, little-endian
  bool has_nan = false;
};

// An integer key that "cannot be read counts as 0" (spec 05 §2.3); the
// missing sentinels count as absent too (§2.3 pitfall).
long dimension(codes_handle* h, const char* key) {
  return get_long(h, key).value_or(0);
}

std::vector<std::byte> little_endian_bytes(const std::vector<double>& values) {
  std::vector<std::byte> out(values.size() * sizeof(double));
  if constexpr (std::endian::native == std::endian::little) {
    if (!out.empty()) std::memcpy(out.data(), values.data(), out.size());
  } else {
    for (std::size_t i = 0; i < values.size(); ++i) {
      const auto bits = __builtin_bswap64(std::bit_cast<std::uint64_t>(values[i]));
      std::memcpy(out.data() + i * sizeof bits, &bits, sizeof bits);
    }
  }
  return out;
}

converted_field convert_message(codes_handle* h, std::size_t index, const grib_options& options) {
  const std::string label = "GRIB message " + std::to_string(index + 1);

  // Spec 05 §2.3: `values` as doubles. ecCodes reports how many it actually
  // delivered, which can be fewer than announced (2t_ieee.grib2).
  std::size_t announced = 0;
  if (int err = codes_get_size(h, "values", &announced); err != CODES_SUCCESS) throw_eccodes(err, label);
  std::vector<double> values(announced);
  std::size_t delivered = announced;
  if (int err = codes_get_double_array(h, "values", values.data(), &delivered); err != CODES_SUCCESS) {
    throw_eccodes(err, label);
  }
  values.resize(delivered);

  const long ni = dimension(h, "Ni");
  const long nj = dimension(h, "Nj");
  const auto points = get_long(h, "numberOfPoints");
  if (points && static_cast<std::uint64_t>(*points) != delivered) {
    invalid_grib(label + ": ecCodes decoded " + std::to_string(delivered) + " values but the grid has " +
                 std::to_string(*points) + " points (numberOfPoints); the data section is inconsistent");
  }
  std::vector<std::uint64_t> shape;
  if (ni > 0 && nj > 0) {
    const auto grid = static_cast<std::uint64_t>(ni) * static_cast<std::uint64_t>(nj);
    if (grid != delivered) {
      invalid_grib(label + ": ecCodes decoded " + std::to_string(delivered) + " values but Nj x Ni = " +
                   std::to_string(nj) + " x " + std::to_string(ni) + " = " + std::to_string(grid));
    }
    shape = {static_cast<std::uint64_t>(nj), static_cast<std::uint64_t>(ni)};
  } else {
    // Reduced / octahedral grids: 1-D [numberOfPoints] (spec 05 §2.3 pitfall).
    shape = {static_cast<std::uint64_t>(delivered)};
  }

  // Issue 9 (instead of spec 05 §2.4): bitmap-missing points, which ecCodes
  // fills with `missingValue`, become NaN and go to the NaN mask.
  converted_field field;
  if (get_long(h, "bitmapPresent").value_or(0) == 1) {
    double missing = 9999.0;
    if (int err = codes_get_double(h, "missingValue", &missing); err != CODES_SUCCESS) {
      throw_eccodes(err, label);
    }
    std::size_t replaced = 0;
    for (double& v : values) {
      if (v == missing) {
        v = std::numeric_limits<double>::quiet_NaN();
        ++replaced;
      }
    }
    field.has_nan = replaced != 0;
    // ecCodes cannot tell a present value equal to missingValue from a
    // masked one; say so when the counts disagree.
    const auto declared = get_long(h, "numberOfMissing");
    if (declared && static_cast<std::size_t>(*declared) != replaced && options.conversion.on_warning) {
      options.conversion.on_warning(label + ": " + std::to_string(replaced) + " values equal missingValue " +
                                    std::to_string(missing) + " but the bitmap marks " +
                                    std::to_string(*declared) +
                                    " points missing; all of them were stored as NaN");
    }
  }

  field.payload = little_endian_bytes(values);
  field.descriptor = data_object_descriptor::contiguous(dtype::float64, std::move(shape), byte_order::little);
  apply_pipeline(options.conversion.pipeline, field.descriptor, field.payload, label, "GRIB");

  // Spec 05 §2.5: base[i] = {mars, grib (with --all-keys), grib_repro}.
  field.base = cbor::value::make_map();
  cbor::value mars = mars_map(h);
  if (mars.size() != 0) field.base.set("mars", std::move(mars));
  if (options.preserve_all_keys) {
    cbor::value grib = all_keys_map(h);
    if (grib.size() != 0) field.base.set("grib", std::move(grib));
  }
  field.base.set("grib_repro", repro_map(h));
  return field;
}

// One Tensogram message holding `fields` as objects 0..n-1 (spec 05 §2.2).
std::vector<std::byte> encode_fields(const std::vector<converted_field>& fields,
                                     const encode_options& options) {
  global_metadata metadata;
  std::vector<object_input> objects;
  encode_options effective = options;
  for (const auto& f : fields) {
    metadata.base.push_back(f.base);
    objects.push_back(object_input{f.descriptor, f.payload});
    // Issue 9: objects with bitmap-missing points are encoded with NaN
    // allowed so the points land in the NaN mask.
    if (f.has_nan) effective.allow_nan = true;
  }
  return encode_converted(metadata, objects, effective);
}

// Spec 05 §2.1, §2.2: every GRIB message of `stream`, in order.
std::vector<std::vector<std::byte>> convert_stream(std::FILE* stream, const grib_options& options) {
  // Read every message first: a truncated or corrupted one fails before any
  // work, and the progress total is known. (codes_count_in_file would do
  // the counting, but ecCodes 2.28 leaks its read buffer when it hits a
  // damaged message.) Handles hold the packed messages, not decoded values.
  std::vector<handle_ptr> handles;
  for (;;) {
    int err = CODES_SUCCESS;
    handle_ptr h(codes_handle_new_from_file(nullptr, stream, PRODUCT_GRIB, &err));
    if (!h) {
      if (err != CODES_SUCCESS && err != CODES_END_OF_FILE) {
        throw_eccodes(err, "reading GRIB message " + std::to_string(handles.size() + 1));
      }
      break;
    }
    handles.push_back(std::move(h));
  }
  if (handles.empty()) throw conversion_error(conversion_failure::no_data, "no GRIB messages found in input");

  std::vector<std::vector<std::byte>> out;
  std::vector<converted_field> fields;
  const std::size_t total = handles.size();
  for (std::size_t i = 0; i < total; ++i) {
    fields.push_back(convert_message(handles[i].get(), i, options));
    handles[i].reset();
    if (options.grouping == grib_grouping::one_to_one) {
      out.push_back(encode_fields(fields, options.conversion.encode));
      fields.clear();
    }
    if (options.conversion.on_progress) options.conversion.on_progress(i + 1, total);
  }
  if (options.grouping == grib_grouping::merge_all) {
    out.push_back(encode_fields(fields, options.conversion.encode));
  }
  return out;
}

std::string errno_text(int code) {
  return std::generic_category().message(code);
}

}  // namespace

std::vector<std::vector<std::byte>> convert_grib_file(const std::filesystem::path& path,
                                                      const grib_options& options) {
  // Spec 05 §2.1/§2.6: a path that cannot be read is an I/O error.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw io_error(path.string() + ": is a directory");
  file_ptr stream(std::fopen(path.c_str(), "rb"));
  if (!stream) {
    const int code = errno;
    throw io_error(path.string() + ": " + errno_text(code));
  }
  const std::lock_guard lock(detail::eccodes_library_mutex());
  return convert_stream(stream.get(), options);
}

std::vector<std::vector<std::byte>> convert_grib_buffer(std::span<const std::byte> bytes,
                                                        const grib_options& options) {
  if (bytes.empty()) throw conversion_error(conversion_failure::no_data, "no GRIB messages found in input");
  // ecCodes reads messages from a C stream; a read-only memory stream over
  // the caller's bytes avoids a copy ("rb" never writes through the pointer,
  // so the const_cast is safe).
  file_ptr stream(fmemopen(const_cast<std::byte*>(bytes.data()), bytes.size(), "rb"));
  if (!stream) {
    const int code = errno;
    throw io_error("in-memory GRIB buffer: " + errno_text(code));
  }
  const std::lock_guard lock(detail::eccodes_library_mutex());
  return convert_stream(stream.get(), options);
}

}  // namespace tensogram::importers

// Helpers shared by the GRIB importer and exporter tests (spec 05 §2, §3,
// §6): ecCodes' own reading of a GRIB byte stream as the oracle, the decoded
// Tensogram side, and the fixtures' first base entry and MARS area.
#pragma once

#include <eccodes.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensogram.hpp"
#include "tensogram/importers/grib.hpp"

namespace tgtest::grib {

namespace ti = tensogram::importers;
namespace cbor = tensogram::cbor;

inline std::string fixture(const std::string& name) {
  return std::string(TENSOGRAM_FIXTURES) + "/" + name;
}

inline std::vector<std::byte> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(chars.size());
  if (!chars.empty()) std::memcpy(out.data(), chars.data(), chars.size());
  return out;
}

// ---- ecCodes' own view of a GRIB byte stream (the oracle) ------------------

struct handle_deleter {
  void operator()(codes_handle* h) const noexcept { codes_handle_delete(h); }
};
using handle_ptr = std::unique_ptr<codes_handle, handle_deleter>;

struct ecc_field {
  std::vector<double> values;
  std::vector<bool> missing;  // bitmap-missing points as ecCodes reports them
  std::size_t missing_count = 0;
  long ni = 0, nj = 0, bitmap_present = 0;
};

inline long ecc_long(codes_handle* h, const char* key) {
  long v = -1;
  EXPECT_EQ(codes_get_long(h, key, &v), CODES_SUCCESS) << key;
  return v;
}

inline std::string ecc_string(codes_handle* h, const char* key) {
  char buf[256] = {};
  std::size_t len = sizeof buf;
  EXPECT_EQ(codes_get_string(h, key, buf, &len), CODES_SUCCESS) << key;
  return buf;
}

// The encoded message a handle holds (codes_get_message), copied out.
inline std::vector<std::byte> ecc_message_bytes(codes_handle* h) {
  const void* raw = nullptr;
  std::size_t len = 0;
  EXPECT_EQ(codes_get_message(h, &raw, &len), CODES_SUCCESS);
  if (raw == nullptr) return {};
  return {static_cast<const std::byte*>(raw), static_cast<const std::byte*>(raw) + len};
}

// Every message of `bytes`, read with codes_handle_new_from_message.
inline std::vector<handle_ptr> ecc_handles(const std::vector<std::byte>& bytes) {
  std::vector<handle_ptr> out;
  std::size_t pos = 0;
  while (pos + 16 <= bytes.size()) {
    if (std::memcmp(bytes.data() + pos, "GRIB", 4) != 0) {
      ++pos;
      continue;
    }
    // GRIB2 section 0: total length in bytes 8..15 (big-endian).
    std::uint64_t len = 0;
    for (int i = 8; i < 16; ++i) len = (len << 8) | std::to_integer<std::uint64_t>(bytes[pos + i]);
    EXPECT_LE(pos + len, bytes.size());
    out.emplace_back(codes_handle_new_from_message_copy(nullptr, bytes.data() + pos, len));
    EXPECT_TRUE(out.back());
    pos += len;
  }
  return out;
}

inline ecc_field ecc_read(codes_handle* h) {
  ecc_field f;
  std::size_t n = 0;
  EXPECT_EQ(codes_get_size(h, "values", &n), CODES_SUCCESS);
  f.values.resize(n);
  EXPECT_EQ(codes_get_double_array(h, "values", f.values.data(), &n), CODES_SUCCESS);
  f.values.resize(n);
  f.ni = ecc_long(h, "Ni");
  f.nj = ecc_long(h, "Nj");
  f.bitmap_present = ecc_long(h, "bitmapPresent");
  double missing_value = 0;
  EXPECT_EQ(codes_get_double(h, "missingValue", &missing_value), CODES_SUCCESS);
  f.missing.assign(n, false);
  if (f.bitmap_present == 1) {
    for (std::size_t i = 0; i < n; ++i) {
      if (f.values[i] == missing_value) {
        f.missing[i] = true;
        ++f.missing_count;
      }
    }
  }
  return f;
}

inline std::vector<ecc_field> ecc_fields(const std::vector<std::byte>& bytes) {
  std::vector<ecc_field> out;
  for (auto& h : ecc_handles(bytes)) out.push_back(ecc_read(h.get()));
  return out;
}

// ---- Tensogram side --------------------------------------------------------

inline tensogram::message decode_message(const std::vector<std::byte>& bytes) {
  return tensogram::decode(tensogram::buffer::borrowed(bytes));
}

inline std::vector<double> object_values(const tensogram::decoded_object& o) {
  std::vector<double> v(o.data_size() / sizeof(double));
  std::memcpy(v.data(), o.data(), v.size() * sizeof(double));
  return v;
}

inline const cbor::value& at(const cbor::value& map, const char* key) {
  const cbor::value* v = map.find(key);
  EXPECT_NE(v, nullptr) << "missing key " << key;
  static const cbor::value null_value;
  return v != nullptr ? *v : null_value;
}

inline std::vector<std::string> map_keys(const cbor::value& map) {
  std::vector<std::string> keys;
  if (const auto* m = map.as_map()) {
    for (const auto& e : *m) keys.push_back(*e.key.as_text());
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

inline std::int64_t int_of(const cbor::value& v) {
  EXPECT_TRUE(v.is_integer());
  return v.as_int64().value_or(-999);
}

inline std::string text_of(const cbor::value& v) {
  EXPECT_TRUE(v.is_text());
  return v.as_text() != nullptr ? *v.as_text() : std::string();
}

// Values of object `o` equal ecCodes' values exactly, with NaN exactly at
// the bitmap-missing points (issue 9). Returns the number compared.
inline std::size_t expect_same_values(const tensogram::decoded_object& o, const ecc_field& f) {
  const auto got = object_values(o);
  EXPECT_EQ(got.size(), f.values.size());
  if (got.size() != f.values.size()) return 0;
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const bool ok = f.missing[i] ? std::isnan(got[i]) : got[i] == f.values[i];
    if (!ok && ++mismatches <= 3)
      ADD_FAILURE() << "value " << i << ": got " << got[i] << ", ecCodes " << f.values[i];
  }
  EXPECT_EQ(mismatches, 0u);
  return got.size();
}

const std::vector<std::string> value_fixtures = {
    "grib/2t.grib2",    "grib/2t_simple.grib2", "grib/lsm.grib2",     "grib/lsm_bitmap.grib2",
    "grib/q_150.grib2", "grib/t_600.grib2",     "doctor/sanity.grib2"};

inline cbor::value base0(const std::string& name, const ti::grib_options& opts = {}) {
  const auto messages = ti::convert_grib_file(fixture(name), opts);
  EXPECT_EQ(messages.size(), 1u);
  const auto msg = decode_message(messages[0]);
  EXPECT_EQ(msg.global().base.size(), 1u);
  return msg.global().base[0];
}

inline void expect_area(const cbor::value& mars, const std::vector<double>& want) {
  const cbor::value& area = at(mars, "area");
  ASSERT_TRUE(area.is_array());
  ASSERT_EQ(area.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    ASSERT_TRUE((*area.as_array())[i].is_float());
    EXPECT_EQ(*(*area.as_array())[i].as_float(), want[i]);
  }
}

// The mars map of spec 05 §2.5 for the ECMWF fixtures.
inline void expect_ecmwf_mars(const cbor::value& mars, std::int64_t param, const char* levtype,
                              std::optional<std::int64_t> levelist) {
  std::vector<std::string> keys = {"area",    "class", "date", "domain", "expver", "grid",
                                   "levtype", "param", "step", "stream", "time",   "type"};
  if (levelist) keys.push_back("levelist");
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(map_keys(mars), keys);
  EXPECT_EQ(text_of(at(mars, "domain")), "g");
  EXPECT_EQ(int_of(at(mars, "date")), 20260404);
  EXPECT_EQ(int_of(at(mars, "time")), 0);
  EXPECT_EQ(text_of(at(mars, "expver")), "0001");
  EXPECT_EQ(text_of(at(mars, "class")), "od");
  EXPECT_EQ(text_of(at(mars, "type")), "fc");
  EXPECT_EQ(text_of(at(mars, "stream")), "oper");
  EXPECT_EQ(int_of(at(mars, "step")), 0);
  EXPECT_EQ(text_of(at(mars, "levtype")), levtype);
  EXPECT_EQ(int_of(at(mars, "param")), param);
  if (levelist) {
    EXPECT_EQ(int_of(at(mars, "levelist")), *levelist);
  }
  EXPECT_EQ(text_of(at(mars, "grid")), "regular_ll");
  expect_area(mars, {90.0, -180.0, -90.0, 179.75});
}

inline std::vector<std::byte> four_real_fields() {
  std::vector<std::byte> all;
  for (const char* name : {"grib/2t.grib2", "grib/q_150.grib2", "grib/lsm.grib2", "grib/t_600.grib2"}) {
    const auto b = read_bytes(fixture(name));
    all.insert(all.end(), b.begin(), b.end());
  }
  return all;
}

}  // namespace tgtest::grib

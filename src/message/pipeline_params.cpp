#include "tensogram/message/pipeline_params.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "tensogram/cbor/value.hpp"
#include "tensogram/codecs/blosc2.hpp"
#include "tensogram/codecs/simple_packing.hpp"
#include "tensogram/core/error.hpp"

namespace tensogram {

namespace {

// ---------------------------------------------------------------------------
// Parameter access with the reference's error texts (spec 03 §2).

std::string kind_name(const cbor::value& v) {
  switch (v.type()) {
    case cbor::value::kind::null: return "null";
    case cbor::value::kind::boolean: return "bool";
    case cbor::value::kind::integer: return "integer";
    case cbor::value::kind::floating: return "float";
    case cbor::value::kind::text: return "text";
    case cbor::value::kind::bytes: return "bytes";
    case cbor::value::kind::array: return "array";
    case cbor::value::kind::map: return "map";
    case cbor::value::kind::tag: return "tag";
  }
  return "?";
}

const cbor::value& required(const cbor::value& params, std::string_view key) {
  const cbor::value* v = params.find(key);
  if (v == nullptr) throw metadata_error("missing required parameter: " + std::string(key));
  return *v;
}

std::uint64_t as_uint(const cbor::value& v, std::string_view key, std::uint64_t max, const char* range) {
  const cbor::integer* i = v.as_integer();
  if (i == nullptr)
    throw metadata_error("expected integer for " + std::string(key) + ", got " + kind_name(v));
  if (i->negative || i->magnitude > max)
    throw metadata_error(std::string(key) + " out of " + range + " range");
  return i->magnitude;
}

std::int32_t as_i32(const cbor::value& v, std::string_view key) {
  const cbor::integer* i = v.as_integer();
  if (i == nullptr)
    throw metadata_error("expected integer for " + std::string(key) + ", got " + kind_name(v));
  const auto x = i->to_int64();
  if (!x || *x < std::numeric_limits<std::int32_t>::min() || *x > std::numeric_limits<std::int32_t>::max()) {
    throw metadata_error(std::string(key) + " out of i32 range");
  }
  return static_cast<std::int32_t>(*x);
}

// "num": a float, or an integer with |n| <= 2^53.
double as_number(const cbor::value& v, std::string_view key) {
  if (const double* d = v.as_float()) return *d;
  if (const cbor::integer* i = v.as_integer()) {
    if (i->magnitude <= (std::uint64_t{1} << 53)) {
      const double m = static_cast<double>(i->magnitude);
      return i->negative ? -1.0 - m : m;
    }
  }
  throw metadata_error("expected number for " + std::string(key) + ", got " + kind_name(v));
}

std::uint32_t required_u32(const cbor::value& params, std::string_view key) {
  return static_cast<std::uint32_t>(
      as_uint(required(params, key), key, std::numeric_limits<std::uint32_t>::max(), "u32"));
}

// A mode key (text) selecting which other keys a codec reads: absent or not
// text is "missing" (spec 03 §2).
const std::string& required_mode(const cbor::value& params, std::string_view key) {
  const cbor::value* mode = params.find(key);
  if (mode == nullptr || !mode->is_text())
    throw metadata_error("missing required parameter: " + std::string(key));
  return *mode->as_text();
}

// ---------------------------------------------------------------------------
// Each stage's keys (spec 03 §2), read into its typed parameters.

template <class Params>
requires std::is_empty_v<Params>
void read_params(Params& /*p*/, const cbor::value& /*params*/) {}

void read_params(simple_packing_params& p, const cbor::value& params) {
  p.bits_per_value = required_u32(params, "sp_bits_per_value");
  if (p.bits_per_value > 64) {
    throw encoding_error("bits_per_value " + std::to_string(p.bits_per_value) + " exceeds maximum of 64");
  }
  p.reference_value = as_number(required(params, "sp_reference_value"), "sp_reference_value");
  if (!std::isfinite(p.reference_value)) throw metadata_error("sp_reference_value must be finite");
  p.binary_scale_factor = as_i32(required(params, "sp_binary_scale_factor"), "sp_binary_scale_factor");
  p.decimal_scale_factor = as_i32(required(params, "sp_decimal_scale_factor"), "sp_decimal_scale_factor");
}

void read_params(codecs::shuffle_params& p, const cbor::value& params) {
  p.element_size =
      static_cast<std::size_t>(as_uint(required(params, "shuffle_element_size"), "shuffle_element_size",
                                       std::numeric_limits<std::size_t>::max(), "usize"));
}

void read_params(codecs::szip_stage_params& p, const cbor::value& params) {
  p.rsi = required_u32(params, "szip_rsi");
  p.block_size = required_u32(params, "szip_block_size");
  p.flags = required_u32(params, "szip_flags");
  if (const cbor::value* offs = params.find("szip_block_offsets")) {
    const cbor::array* a = offs->as_array();
    if (a == nullptr) throw metadata_error("szip_block_offsets must be an array");
    std::vector<std::uint64_t> v;
    v.reserve(a->size());
    for (const cbor::value& x : *a) {
      v.push_back(as_uint(x, "szip_block_offsets", std::numeric_limits<std::uint64_t>::max(), "u64"));
    }
    p.block_offsets = std::move(v);
  }
}

void read_params(codecs::zstd_params& p, const cbor::value& params) {
  if (const cbor::value* v = params.find("zstd_level")) p.level = as_i32(*v, "zstd_level");
}

void read_params(codecs::blosc2_stage_params& p, const cbor::value& params) {
  // Spec 03 §8.4.1, spec 02 §4.2: the level is range-checked when
  // compressing, as c-blosc2 does.
  if (const cbor::value* v = params.find("blosc2_codec")) {
    const std::string* name = v->as_text();
    if (name == nullptr) throw metadata_error("expected text for blosc2_codec, got " + kind_name(*v));
    const auto codec = codecs::blosc2_codec_from_name(*name);
    if (!codec) throw encoding_error("unknown blosc2 codec: " + *name);
    p.codec = *codec;
  }
  if (const cbor::value* v = params.find("blosc2_clevel")) p.clevel = as_i32(*v, "blosc2_clevel");
}

void read_params(codecs::zfp_params& p, const cbor::value& params) {
  const std::string& m = required_mode(params, "zfp_mode");
  if (m == "fixed_rate") {
    p.mode = codecs::zfp_mode::fixed_rate;
    p.rate = as_number(required(params, "zfp_rate"), "zfp_rate");
  } else if (m == "fixed_precision") {
    p.mode = codecs::zfp_mode::fixed_precision;
    p.precision = required_u32(params, "zfp_precision");
  } else if (m == "fixed_accuracy") {
    p.mode = codecs::zfp_mode::fixed_accuracy;
    p.tolerance = as_number(required(params, "zfp_tolerance"), "zfp_tolerance");
  } else {
    throw encoding_error("unknown zfp_mode: " + m);
  }
}

void read_params(codecs::sz3_params& p, const cbor::value& params) {
  const std::string& m = required_mode(params, "sz3_error_bound_mode");
  if (m == "abs") {
    p.mode = codecs::sz3_error_bound_mode::abs;
  } else if (m == "rel") {
    p.mode = codecs::sz3_error_bound_mode::rel;
  } else if (m == "psnr") {
    p.mode = codecs::sz3_error_bound_mode::psnr;
  } else {
    throw encoding_error("unknown sz3_error_bound_mode: " + m);
  }
  p.bound = as_number(required(params, "sz3_error_bound"), "sz3_error_bound");
}

// The stage's parameters, whichever alternative `selected` holds.
template <class Variant>
void read_stage(Variant& selected, const cbor::value& params) {
  std::visit([&params](auto& p) { read_params(p, params); }, selected);
}

// The keys the encoder writes for computed simple_packing parameters.
void write_params(const simple_packing_params& p, cbor::value& params) {
  params.set("sp_reference_value", cbor::value(p.reference_value));
  params.set("sp_binary_scale_factor", cbor::value(p.binary_scale_factor));
  params.set("sp_decimal_scale_factor", cbor::value(p.decimal_scale_factor));
  params.set("sp_bits_per_value", cbor::value(p.bits_per_value));
}

}  // namespace

codecs::pipeline_spec read_pipeline_spec(const data_object_descriptor& d) {
  codecs::pipeline_spec spec;
  spec.element_type = d.dtype;
  spec.encoding = codecs::select_encoding(d.encoding, d.dtype);
  read_stage(spec.encoding, d.params);
  spec.filter = codecs::select_filter(d.filter);
  read_stage(spec.filter, d.params);
  spec.compression = codecs::select_compression(d.compression, d.dtype);
  read_stage(spec.compression, d.params);
  return spec;
}

codecs::pipeline build_pipeline(const data_object_descriptor& d) {
  return codecs::pipeline(read_pipeline_spec(d));
}

bool resolve_simple_packing_params(data_object_descriptor& d, std::span<const std::byte> raw,
                                   std::uint32_t threads) {
  if (d.encoding != "simple_packing") return false;
  (void)codecs::select_encoding(d.encoding, d.dtype);  // the dtype check (spec 03 §3.2)
  const std::uint32_t bits = required_u32(d.params, "sp_bits_per_value");
  const bool has_r = d.params.contains("sp_reference_value");
  const bool has_e = d.params.contains("sp_binary_scale_factor");
  if (has_r != has_e) {
    throw metadata_error(has_r ? "descriptor sets sp_reference_value but not sp_binary_scale_factor"
                               : "descriptor sets sp_binary_scale_factor but not sp_reference_value");
  }
  if (has_r) {
    if (!d.params.contains("sp_decimal_scale_factor"))
      d.params.set("sp_decimal_scale_factor", cbor::value(0));
    return false;
  }
  std::int32_t dsf = 0;
  if (const cbor::value* v = d.params.find("sp_decimal_scale_factor"))
    dsf = as_i32(*v, "sp_decimal_scale_factor");
  if (raw.size() % 8 != 0) {
    throw metadata_error("simple_packing input length " + std::to_string(raw.size()) +
                         " is not a multiple of 8");
  }
  // The original values, in the declared order (spec 03 §4.3 step 5), read
  // in place.
  write_params(simple_packing_compute_params(raw, d.effective_byte_order(), bits, dsf, threads), d.params);
  // With B = 0 the computation takes the first value without scanning.
  return bits > 0 || raw.empty();
}

void write_szip_block_offsets(data_object_descriptor& d, std::span<const std::uint64_t> offsets) {
  cbor::array values(offsets.begin(), offsets.end());
  d.params.set("szip_block_offsets", cbor::value(std::move(values)));
}

void check_pre_encoded_szip_offsets(const data_object_descriptor& d, std::size_t payload_len) {
  const cbor::value* offs = d.params.find("szip_block_offsets");
  if (offs == nullptr) return;
  if (d.compression != "szip") {
    throw metadata_error("szip_block_offsets provided but compression is '" + d.compression +
                         "', not 'szip'");
  }
  const cbor::array* a = offs->as_array();
  if (a == nullptr) throw metadata_error("szip_block_offsets must be an array");
  if (a->empty()) throw metadata_error("szip_block_offsets must not be empty; first offset must be 0");
  const std::uint64_t bit_bound = 8 * static_cast<std::uint64_t>(payload_len);
  std::uint64_t prev = 0;
  for (std::size_t i = 0; i < a->size(); ++i) {
    const auto v = (*a)[i].as_uint64();
    if (!v) throw metadata_error("szip_block_offsets entries must be integers in u64");
    if (*v > bit_bound) {
      throw metadata_error("szip_block_offsets[" + std::to_string(i) + "] = " + std::to_string(*v) +
                           " exceeds bit bound " + std::to_string(bit_bound));
    }
    if (i == 0 && *v != 0) throw metadata_error("szip_block_offsets[0] must be 0");
    if (i > 0 && *v <= prev) throw metadata_error("szip_block_offsets must be strictly increasing");
    prev = *v;
  }
}

}  // namespace tensogram

// C ABI: validation, doctor, hashing and simple_packing parameters (spec 04
// §C.4, spec 07 C2.4 "Validation, diagnostics, hashing, simple packing").
#include <span>
#include <string>

#include "capi.hpp"
#include "tensogram/codecs/simple_packing.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/doctor.hpp"
#include "tensogram/message/decode.hpp"
#include "tensogram/message/validate.hpp"

namespace {
namespace capi = tensogram::capi;
}  // namespace

extern "C" {

tgm_error tgm_validate(const uint8_t* buf, size_t buf_len, const char* level, int32_t check_canonical,
                       tgm_bytes_t* out) {
  constexpr const char* fn = "tgm_validate";
  return capi::guarded([&] {
    capi::required(fn, "out", out);
    // An empty buffer may be NULL: it validates to a report, not an error.
    const auto bytes = capi::bytes_arg(fn, "buf", buf, buf_len, true);
    const std::optional<std::string> lvl = capi::optional_text_arg(fn, "level", level);
    *out = capi::make_bytes(tensogram::validate(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                                bytes.size(), lvl ? lvl->c_str() : nullptr,
                                                check_canonical != 0));
  });
}

tgm_error tgm_validate_file(const char* path, const char* level, int32_t check_canonical, tgm_bytes_t* out) {
  constexpr const char* fn = "tgm_validate_file";
  return capi::guarded([&] {
    capi::required(fn, "out", out);
    const std::string p = capi::text_arg(fn, "path", path);
    const std::optional<std::string> lvl = capi::optional_text_arg(fn, "level", level);
    *out = capi::make_bytes(
        tensogram::validate_file(p.c_str(), lvl ? lvl->c_str() : nullptr, check_canonical != 0));
  });
}

tgm_error tgm_doctor_to_json(tgm_bytes_t* out) {
  return capi::guarded([&] {
    capi::required("tgm_doctor_to_json", "out", out);
    *out = capi::make_bytes(tensogram::doctor_json());
  });
}

tgm_error tgm_compute_hash(const uint8_t* data, size_t data_len, const char* algo, tgm_bytes_t* out) {
  constexpr const char* fn = "tgm_compute_hash";
  return capi::guarded([&] {
    capi::required(fn, "out", out);
    const auto bytes = capi::bytes_arg(fn, "data", data, data_len);
    // NULL, "xxh3" and "none" all hash with xxh3, as in the reference.
    const std::optional<std::string> a = capi::optional_text_arg(fn, "algo", algo);
    if (a && *a != "xxh3" && *a != "none") {
      capi::throw_invalid(fn, "unknown hash algorithm '" + *a + "' (expected \"xxh3\", \"none\" or NULL)");
    }
    *out = capi::make_bytes(
        tensogram::compute_hash(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), "xxh3"));
  });
}

tgm_error tgm_simple_packing_compute_params(const double* values, size_t num_values, uint32_t bits_per_value,
                                            int32_t decimal_scale_factor, double* out_reference_value,
                                            int32_t* out_binary_scale_factor) {
  constexpr const char* fn = "tgm_simple_packing_compute_params";
  const tgm_error e = capi::guarded([&] {
    capi::required(fn, "out_reference_value", out_reference_value);
    capi::required(fn, "out_binary_scale_factor", out_binary_scale_factor);
    if (values == nullptr && num_values != 0) capi::throw_null(fn, "values");
    const tensogram::simple_packing_params p = tensogram::simple_packing_compute_params(
        std::span<const double>(values, values != nullptr ? num_values : 0), bits_per_value,
        decimal_scale_factor);
    *out_reference_value = p.reference_value;
    *out_binary_scale_factor = p.binary_scale_factor;
  });
  // Argument errors keep their code; every failure of the computation itself
  // is an encoding error, as in the reference (spec 07 C2.4).
  return e == TGM_ERROR_OK || e == TGM_ERROR_INVALID_ARG ? e : TGM_ERROR_ENCODING;
}

}  // extern "C"

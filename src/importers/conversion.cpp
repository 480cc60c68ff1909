#include "tensogram/importers/conversion.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "library_lock.hpp"
#include "tensogram/codecs/simple_packing.hpp"
#include "tensogram/core/byte_order.hpp"
#include "tensogram/core/dtype.hpp"
#include "tensogram/message/encode.hpp"

namespace tensogram::importers {

namespace {

[[noreturn]] void invalid(std::string_view data_kind, const std::string& text) {
  throw conversion_error(conversion_failure::invalid_data,
                         "invalid " + std::string(data_kind) + " data: " + text);
}

// The values of a float64 object as host doubles.
std::vector<double> doubles(std::span<const std::byte> raw, byte_order order) {
  std::vector<double> v(raw.size() / sizeof(double));
  if (!v.empty()) std::memcpy(v.data(), raw.data(), v.size() * sizeof(double));
  if (order != native_byte_order()) {
    for (double& x : v) {
      std::uint64_t bits = 0;
      std::memcpy(&bits, &x, sizeof bits);
      bits = __builtin_bswap64(bits);
      std::memcpy(&x, &bits, sizeof bits);
    }
  }
  return v;
}

}  // namespace

void apply_pipeline(const pipeline_options& options, data_object_descriptor& d,
                    std::span<const std::byte> values, std::string_view what, std::string_view data_kind) {
  // Spec 05 §1.1, in its order: encoding, filter, compression.
  std::optional<std::uint32_t> packed_bits;
  if (options.encoding == "simple_packing") {
    if (d.dtype != dtype::float64) {
      invalid(data_kind, "simple_packing requires float64 payload for " + std::string(what) + ", got " +
                             std::string(dtype_name(d.dtype)));
    }
    const std::uint32_t bits = options.bits.value_or(16);
    simple_packing_params p;
    try {
      p = simple_packing_compute_params(doubles(values, d.effective_byte_order()), bits, 0);
    } catch (const error& e) {
      invalid(data_kind,
              "simple_packing failed for " + std::string(what) + ": " + std::string(e.detail()) +
                  ". Pre-process the data or choose a different encoding (e.g. encoding=\"none\").");
    }
    d.encoding = "simple_packing";
    d.params.set("sp_reference_value", cbor::value(p.reference_value));
    d.params.set("sp_binary_scale_factor", cbor::value(static_cast<std::int64_t>(p.binary_scale_factor)));
    d.params.set("sp_decimal_scale_factor", cbor::value(static_cast<std::int64_t>(p.decimal_scale_factor)));
    d.params.set("sp_bits_per_value", cbor::value(static_cast<std::uint64_t>(p.bits_per_value)));
    packed_bits = bits;
  } else if (options.encoding != "none") {
    throw conversion_error(conversion_failure::usage,
                           "unknown encoding '" + options.encoding + "'; expected none or simple_packing");
  }

  if (options.filter == "shuffle") {
    const std::uint64_t element_size = packed_bits ? std::max<std::uint64_t>(1, (*packed_bits + 7) / 8)
                                                   : std::max<std::size_t>(1, dtype_width(d.dtype));
    d.filter = "shuffle";
    d.params.set("shuffle_element_size", cbor::value(element_size));
  } else if (options.filter != "none") {
    throw conversion_error(conversion_failure::usage,
                           "unknown filter '" + options.filter + "'; expected none or shuffle");
  }

  const std::string& c = options.compression;
  if (c == "zstd") {
    d.params.set("zstd_level", cbor::value(static_cast<std::int64_t>(options.compression_level.value_or(3))));
  } else if (c == "blosc2") {
    d.params.set("blosc2_clevel",
                 cbor::value(static_cast<std::int64_t>(options.compression_level.value_or(5))));
    d.params.set("blosc2_codec", cbor::value("lz4"));
  } else if (c == "szip") {
    d.params.set("szip_rsi", cbor::value(128));
    d.params.set("szip_block_size", cbor::value(16));
    d.params.set("szip_flags", cbor::value(8));
  } else if (c != "none" && c != "lz4") {
    throw conversion_error(conversion_failure::usage,
                           "unknown compression '" + c + "'; expected none, zstd, lz4, blosc2 or szip");
  }
  d.compression = c;
}

std::vector<std::byte> encode_converted(const global_metadata& metadata,
                                        std::span<const object_input> objects,
                                        const encode_options& options) {
  try {
    return encode(metadata, objects, options);
  } catch (const conversion_error&) {
    throw;
  } catch (const error& e) {
    throw conversion_error(conversion_failure::encode, "encode error: " + std::string(e.what()));
  }
}

namespace detail {

std::mutex& netcdf_library_mutex() noexcept {
  static std::mutex m;
  return m;
}

std::mutex& eccodes_library_mutex() noexcept {
  static std::mutex m;
  return m;
}

}  // namespace detail

}  // namespace tensogram::importers

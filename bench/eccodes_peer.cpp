// ecCodes peer (see eccodes_peer.hpp). Timings as in the GRIB rows:
//   encode = codes_set_double_array("values") + codes_get_message on a
//            handle prepared (grid, packing, bits) beforehand;
//   decode = codes_handle_new_from_message + codes_get_double_array into a
//            fresh (not zero-filled) array.
// Every run starts from fresh handles and arrays, as our rows start from
// fresh output vectors.
#include "eccodes_peer.hpp"

#include <eccodes.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace tensogram_bench {
namespace {

struct handle_deleter {
  void operator()(codes_handle* h) const noexcept { codes_handle_delete(h); }
};
using handle_ptr = std::unique_ptr<codes_handle, handle_deleter>;

void check(int rc, const char* what) {
  if (rc != CODES_SUCCESS) {
    throw std::runtime_error(std::string("ecCodes ") + what + ": " + codes_get_error_message(rc));
  }
}

void set_long(codes_handle* h, const char* key, long value) {
  check(codes_set_long(h, key, value), key);
}

void set_string(codes_handle* h, const char* key, const char* value) {
  std::size_t len = std::strlen(value);
  check(codes_set_string(h, key, value, &len), key);
}

long get_long(codes_handle* h, const char* key) {
  long v = 0;
  check(codes_get_long(h, key, &v), key);
  return v;
}

/// A GRIB2 handle from the regular_ll surface sample with a global grid of
/// `g` (whole micro-degree increments) and the packing set; no values yet.
handle_ptr prepared_handle(grid g, const char* packing, int bits) {
  handle_ptr h(codes_grib_handle_new_from_samples(nullptr, "regular_ll_sfc_grib2"));
  if (!h) throw std::runtime_error("ecCodes: cannot load sample regular_ll_sfc_grib2");
  const auto ni = static_cast<long>(g.ni);
  const auto nj = static_cast<long>(g.nj);
  const long di = 360'000'000L / ni;  // micro-degrees (GRIB2 section 3 units)
  const long dj = 180'000'000L / nj;
  set_long(h.get(), "Ni", ni);
  set_long(h.get(), "Nj", nj);
  set_long(h.get(), "iScansNegatively", 0);
  set_long(h.get(), "jScansPositively", 0);
  set_long(h.get(), "latitudeOfFirstGridPoint", 90'000'000L);
  set_long(h.get(), "latitudeOfLastGridPoint", 90'000'000L - dj * (nj - 1));
  set_long(h.get(), "longitudeOfFirstGridPoint", 0);
  set_long(h.get(), "longitudeOfLastGridPoint", di * (ni - 1));
  set_long(h.get(), "iDirectionIncrement", di);
  set_long(h.get(), "jDirectionIncrement", dj);
  set_string(h.get(), "packingType", packing);
  set_long(h.get(), "bitsPerValue", bits);
  return h;
}

}  // namespace

std::string eccodes_version() {
  return ECCODES_VERSION_STR;
}

eccodes_result measure_eccodes(std::span<const double> field, grid g, const char* packing, int bits, int reps,
                               double budget_seconds) {
  const std::size_t n = field.size();
  eccodes_result r;
  handle_ptr h;        // the handle being encoded; owns the message
  handle_ptr encoded;  // the last encoded handle (its message is decoded)
  const void* msg = nullptr;
  std::size_t msg_size = 0;
  r.encode = measure_best(
      reps, budget_seconds,
      [&] {
        encoded.reset();
        h = prepared_handle(g, packing, bits);
      },
      [&] {
        check(codes_set_double_array(h.get(), "values", field.data(), n), "set values");
        check(codes_get_message(h.get(), &msg, &msg_size), "get message");
      });
  encoded = std::move(h);
  check(codes_get_message(encoded.get(), &msg, &msg_size), "get message");
  r.encoded_bytes = msg_size;

  handle_ptr decoded;
  std::unique_ptr<double[]> values;
  r.decode = measure_best(
      reps, budget_seconds,
      [&] {
        decoded.reset();
        values.reset();
      },
      [&] {
        decoded.reset(codes_handle_new_from_message(nullptr, msg, msg_size));
        if (!decoded) throw std::runtime_error("ecCodes: codes_handle_new_from_message failed");
        values = std::make_unique_for_overwrite<double[]>(n);
        std::size_t got = n;
        check(codes_get_double_array(decoded.get(), "values", values.get(), &got), "get values");
        if (got != n) throw std::runtime_error("ecCodes: decoded size mismatch");
      });
  {
    std::vector<double> reused(n, 1.0);
    handle_ptr d;
    r.decode_prefaulted = measure_best(
        reps, budget_seconds, [&] { d.reset(); },
        [&] {
          d.reset(codes_handle_new_from_message(nullptr, msg, msg_size));
          if (!d) throw std::runtime_error("ecCodes: codes_handle_new_from_message failed");
          std::size_t got = n;
          check(codes_get_double_array(d.get(), "values", reused.data(), &got), "get values");
          if (got != n) throw std::runtime_error("ecCodes: decoded size mismatch");
        });
  }
  if (get_long(decoded.get(), "numberOfDataPoints") != static_cast<long>(n) ||
      get_long(decoded.get(), "bitsPerValue") != bits) {
    throw std::runtime_error("ecCodes: message does not carry the grid or bits asked for");
  }
  if (std::string_view(packing) == "grid_ccsds") {
    r.ccsds_flags = get_long(decoded.get(), "ccsdsFlags");
    r.ccsds_block_size = get_long(decoded.get(), "ccsdsBlockSize");
    r.ccsds_rsi = get_long(decoded.get(), "ccsdsRsi");
  }
  r.error = errors(field, values.get());
  return r;
}

}  // namespace tensogram_bench

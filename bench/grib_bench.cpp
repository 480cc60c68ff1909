// GRIB comparison (issue 9 benchmark): tensogram's simple_packing (+ szip)
// against ecCodes' grid_ccsds and grid_simple GRIB2 packing, on the same
// smooth float64 field, encode and decode, measured in the same run.
//
//   tensogram_grib_bench [--json] [--values N]     (default N = 10,000,000)
//
// Pairs compared (ours first, ecCodes second), at 24 and 16 bits per value:
//   simple_packing + szip (rsi 128, block 16, flags 8)  vs  grid_ccsds
//   simple_packing, no compression                      vs  grid_simple
// Ours is measured with hashing off (the comparison row: GRIB has no hash)
// and on (xxh3 frame hashes written on encode and verified on decode). For
// the szip pairs a last row, for information only, runs ours with ecCodes'
// default szip block size (32) to separate parameters from implementation.
//
// Timings (best of `repetitions`, one thread on both sides):
//   ours encode    = tensogram::encode of one object (fresh output vector)
//   ours decode    = tensogram::decode of that message (fresh output)
//   ecCodes encode = codes_set_double_array("values") + codes_get_message on
//                    a handle prepared (grid, packing, bits) beforehand
//   ecCodes decode = codes_handle_new_from_message + codes_get_double_array
//                    into a fresh (not zero-filled) array
// MB/s are of the float64 input/output (8 bytes per value). Minor page
// faults per call are printed too: on this VM a first touch of a 4 KiB page
// costs about 5 µs (docs/benchmarks.md "Fresh allocations").
#include <eccodes.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tensogram.hpp>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

constexpr int repetitions = 3;
constexpr std::size_t default_values = 10'000'000;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// ---- the field ---------------------------------------------------------------

/// A regular lat/lon grid of `n` points: the largest Ni ≤ sqrt(1.6 n) that
/// divides n (4000 × 2500 for 10 M values, the grid).
struct grid {
  std::size_t ni = 0;
  std::size_t nj = 0;
};

grid grid_for(std::size_t n) {
  auto ni = static_cast<std::size_t>(std::sqrt(1.6 * static_cast<double>(n)) + 0.5);
  ni = std::clamp<std::size_t>(ni, 1, n);
  while (n % ni != 0) --ni;
  return {ni, n / ni};
}

/// 250 + 60 · s(lat, lon) with s a smooth function in [0.05, 0.95], plus a
/// little noise (σ = 0.02, fixed seed) so that the low bits are not trivially
/// compressible; row-major, longitude fastest (GRIB's scanning order).
std::vector<double> smooth_field(grid g) {
  constexpr double pi = 3.14159265358979323846;
  std::mt19937_64 rng(20261122);
  std::normal_distribution<double> noise(0.0, 0.02);
  std::vector<double> v(g.ni * g.nj);
  for (std::size_t j = 0; j < g.nj; ++j) {
    const double lat = (static_cast<double>(j) + 0.5) / static_cast<double>(g.nj) * pi;
    for (std::size_t i = 0; i < g.ni; ++i) {
      const double lon = static_cast<double>(i) / static_cast<double>(g.ni) * 2.0 * pi;
      const double s =
          0.5 + 0.3 * std::sin(lat) * std::cos(2.0 * lon) + 0.15 * std::sin(5.0 * lat) * std::sin(3.0 * lon);
      v[j * g.ni + i] = 250.0 + 60.0 * s + noise(rng);
    }
  }
  return v;
}

/// The quantisation step of `bits`-bit packing with a binary scale factor:
/// 2^E with E the smallest integer such that range / 2^E ≤ 2^bits − 1 (the
/// step both encoders choose with decimal scale factor 0). Rounding keeps
/// the error within half of it; the GRIB float32 reference value may add a
/// little, so the check below allows one step.
double quantisation_step(const std::vector<double>& v, int bits) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  const double range = *hi - *lo;
  if (range <= 0) return 0;
  const double levels = std::ldexp(1.0, bits) - 1.0;
  return std::ldexp(1.0, static_cast<int>(std::ceil(std::log2(range / levels))));
}

double max_abs_error(const std::vector<double>& want, const double* got) {
  double e = 0;
  for (std::size_t i = 0; i < want.size(); ++i) e = std::max(e, std::fabs(got[i] - want[i]));
  return e;
}

// ---- results -----------------------------------------------------------------

struct measurement {
  double encode_seconds = 1e30;  // best of the repetitions
  double decode_seconds = 1e30;
  std::size_t encoded_bytes = 0;
  double max_abs_error = 0;
  long encode_faults = 0;  // minor page faults of the last repetition
  long decode_faults = 0;
};

// ---- ours ----------------------------------------------------------------------

measurement measure_ours(const std::vector<double>& field, int bits, bool szip, bool hashing,
                         int szip_block_size = 16) {
  auto d = tensogram::data_object_descriptor::contiguous(tensogram::dtype::float64, {field.size()});
  d.encoding = "simple_packing";
  d.params.set("sp_bits_per_value", bits);
  if (szip) {
    d.compression = "szip";
    d.params.set("szip_rsi", 128);
    d.params.set("szip_block_size", szip_block_size);
    d.params.set("szip_flags", 8);
  }
  const std::vector<tensogram::object_input> objects{{d, std::as_bytes(std::span(field))}};
  tensogram::encode_options eo;
  eo.hash_algo = hashing ? "xxh3" : "none";
  eo.threads = 1;
  tensogram::decode_options dopt;
  dopt.threads = 1;
  dopt.verify_hash = hashing;

  measurement r;
  std::vector<std::byte> msg;
  tensogram::message m;
  for (int rep = 0; rep < repetitions; ++rep) {
    // Release the previous results first, so that every repetition pays for
    // fresh pages as ecCodes' fresh handles do.
    msg = {};
    m = {};
    long f0 = minor_faults();
    auto t0 = clock_type::now();
    msg = tensogram::encode(tensogram::global_metadata{}, objects, eo);
    r.encode_seconds = std::min(r.encode_seconds, seconds_since(t0));
    r.encode_faults = minor_faults() - f0;

    f0 = minor_faults();
    t0 = clock_type::now();
    m = tensogram::decode(tensogram::buffer::borrowed(msg), dopt);
    r.decode_seconds = std::min(r.decode_seconds, seconds_since(t0));
    r.decode_faults = minor_faults() - f0;
  }
  const tensogram::decoded_object& obj = m.object(0);
  if (obj.element_count<double>() != field.size()) throw std::runtime_error("ours: decoded size mismatch");
  r.encoded_bytes = msg.size();
  r.max_abs_error = max_abs_error(field, obj.data_as<double>());
  return r;
}

// ---- ecCodes -------------------------------------------------------------------

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

/// A GRIB2 handle from the regular_ll surface sample, with a global grid of
/// `g` (whole micro-degree increments: 0.09° × 0.072° for 4000 × 2500) and
/// the packing set; values not yet set.
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

struct eccodes_result {
  measurement m;
  long ccsds_flags = -1;  // grid_ccsds only: the libaec parameters ecCodes used
  long ccsds_block_size = -1;
  long ccsds_rsi = -1;
};

eccodes_result measure_eccodes(const std::vector<double>& field, grid g, const char* packing, int bits) {
  const std::size_t n = field.size();
  eccodes_result r;
  handle_ptr encoded;  // owns the message that `decoded` reads
  handle_ptr decoded;
  std::unique_ptr<double[]> values;
  for (int rep = 0; rep < repetitions; ++rep) {
    decoded.reset();
    values.reset();
    encoded.reset();
    handle_ptr h = prepared_handle(g, packing, bits);

    long f0 = minor_faults();
    auto t0 = clock_type::now();
    check(codes_set_double_array(h.get(), "values", field.data(), n), "set values");
    const void* msg = nullptr;
    std::size_t msg_size = 0;
    check(codes_get_message(h.get(), &msg, &msg_size), "get message");
    r.m.encode_seconds = std::min(r.m.encode_seconds, seconds_since(t0));
    r.m.encode_faults = minor_faults() - f0;
    r.m.encoded_bytes = msg_size;
    encoded = std::move(h);

    f0 = minor_faults();
    t0 = clock_type::now();
    decoded.reset(codes_handle_new_from_message(nullptr, msg, msg_size));
    if (!decoded) throw std::runtime_error("ecCodes: codes_handle_new_from_message failed");
    values = std::make_unique_for_overwrite<double[]>(n);
    std::size_t got = n;
    check(codes_get_double_array(decoded.get(), "values", values.get(), &got), "get values");
    r.m.decode_seconds = std::min(r.m.decode_seconds, seconds_since(t0));
    r.m.decode_faults = minor_faults() - f0;
    if (got != n) throw std::runtime_error("ecCodes: decoded size mismatch");
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
  r.m.max_abs_error = max_abs_error(field, values.get());
  return r;
}

// ---- the comparison ----------------------------------------------------------

struct pair_result {
  std::string name;
  int bits = 0;
  const char* ours_pipeline = "";
  const char* packing = "";
  double step = 0;
  measurement ours;         // hashing off: the comparison row
  measurement ours_hashed;  // xxh3 written and verified
  // szip pairs only, for information (not in the ratios): ours with
  // ecCodes' block size, to separate the parameter from the implementation.
  std::optional<measurement> ours_block32;
  eccodes_result eccodes;
};

nlohmann::json to_json(const measurement& m, double mb) {
  return {{"encode_mb_s", mb / m.encode_seconds},   {"decode_mb_s", mb / m.decode_seconds},
          {"encode_seconds", m.encode_seconds},     {"decode_seconds", m.decode_seconds},
          {"encoded_bytes", m.encoded_bytes},       {"max_abs_error", m.max_abs_error},
          {"encode_minor_faults", m.encode_faults}, {"decode_minor_faults", m.decode_faults}};
}

void print_row(const char* label, const measurement& m, double mb, double step) {
  std::printf("  %-18s %9.0f %9.0f %12zu %11.3g %9s %8ld %8ld\n", label, mb / m.encode_seconds,
              mb / m.decode_seconds, m.encoded_bytes, m.max_abs_error, m.max_abs_error <= step ? "yes" : "NO",
              m.encode_faults, m.decode_faults);
}

int usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s [--json] [--values N]\n", argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  std::size_t n = default_values;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--json") {
      json = true;
    } else if (arg == "--values" && i + 1 < argc) {
      char* end = nullptr;
      const unsigned long long v = std::strtoull(argv[++i], &end, 10);
      if (*end != '\0' || v == 0) return usage(argv[0]);
      n = static_cast<std::size_t>(v);
    } else {
      return usage(argv[0]);
    }
  }

  try {
    const grid g = grid_for(n);
    const std::vector<double> field = smooth_field(g);
    const double mb = static_cast<double>(n * sizeof(double)) / 1e6;

    std::vector<pair_result> pairs;
    for (const bool szip : {true, false}) {
      for (const int bits : {24, 16}) {
        pair_result p;
        p.bits = bits;
        p.ours_pipeline = szip ? "simple_packing+szip" : "simple_packing";
        p.packing = szip ? "grid_ccsds" : "grid_simple";
        p.name = "sp" + std::to_string(bits) + (szip ? "+szip" : "") + " vs " + p.packing;
        p.step = quantisation_step(field, bits);
        if (!json) std::fprintf(stderr, "measuring %s ...\n", p.name.c_str());
        p.ours = measure_ours(field, bits, szip, false);
        p.ours_hashed = measure_ours(field, bits, szip, true);
        if (szip) p.ours_block32 = measure_ours(field, bits, szip, false, 32);
        p.eccodes = measure_eccodes(field, g, p.packing, bits);
        pairs.push_back(std::move(p));
      }
    }

    if (json) {
      nlohmann::json out = {{"values", n},
                            {"grid", {{"Ni", g.ni}, {"Nj", g.nj}}},
                            {"input_mb", mb},
                            {"repetitions", repetitions},
                            {"timing", "best of repetitions"},
                            {"threads", 1},
                            {"eccodes_version", ECCODES_VERSION_STR},
                            {"pairs", nlohmann::json::array()}};
      for (const pair_result& p : pairs) {
        nlohmann::json e = to_json(p.eccodes.m, mb);
        e["packingType"] = p.packing;
        if (p.eccodes.ccsds_rsi >= 0) {
          e["ccsdsFlags"] = p.eccodes.ccsds_flags;
          e["ccsdsBlockSize"] = p.eccodes.ccsds_block_size;
          e["ccsdsRsi"] = p.eccodes.ccsds_rsi;
        }
        out["pairs"].push_back(
            {{"name", p.name},
             {"bits_per_value", p.bits},
             {"quantisation_step", p.step},
             {"ours", to_json(p.ours, mb)},
             {"ours_hashed", to_json(p.ours_hashed, mb)},
             {"ours_pipeline", p.ours_pipeline},
             {"ours_szip_block_32", p.ours_block32 ? to_json(*p.ours_block32, mb) : nlohmann::json(nullptr)},
             {"eccodes", e},
             {"size_ratio",
              static_cast<double>(p.ours.encoded_bytes) / static_cast<double>(p.eccodes.m.encoded_bytes)},
             {"encode_speed_ratio", p.eccodes.m.encode_seconds / p.ours.encode_seconds},
             {"decode_speed_ratio", p.eccodes.m.decode_seconds / p.ours.decode_seconds},
             {"errors_within_step", p.ours.max_abs_error <= p.step && p.eccodes.m.max_abs_error <= p.step}});
      }
      std::printf("%s\n", out.dump(2).c_str());
      return 0;
    }

    std::printf("GRIB comparison: %zu float64 values (%.1f MB), grid %zu x %zu, 1 thread, best of %d\n", n,
                mb, g.ni, g.nj, repetitions);
    std::printf("ecCodes %s; ours: encode/decode of one object, hashing off (compared) and xxh3 on\n",
                ECCODES_VERSION_STR);
    std::printf("(xxh3: written on encode, verified on decode); faults = minor page faults per call\n");
    for (const pair_result& p : pairs) {
      std::printf("\n%s (%d bits, step %.3g)\n", p.name.c_str(), p.bits, p.step);
      std::printf("  %-18s %9s %9s %12s %11s %9s %8s %8s\n", "", "enc MB/s", "dec MB/s", "bytes", "max |err|",
                  "<= step", "enc flt", "dec flt");
      print_row("ours", p.ours, mb, p.step);
      print_row("ours +xxh3", p.ours_hashed, mb, p.step);
      print_row(p.packing, p.eccodes.m, mb, p.step);
      if (p.ours_block32) print_row("(ours szip blk32)", *p.ours_block32, mb, p.step);
      if (p.eccodes.ccsds_rsi >= 0) {
        std::printf("  (ecCodes' libaec parameters: ccsdsFlags %ld, ccsdsBlockSize %ld, ccsdsRsi %ld)\n",
                    p.eccodes.ccsds_flags, p.eccodes.ccsds_block_size, p.eccodes.ccsds_rsi);
      }
      std::printf("  ours/ecCodes: size %.4f, encode speed %.2fx, decode speed %.2fx\n",
                  static_cast<double>(p.ours.encoded_bytes) / static_cast<double>(p.eccodes.m.encoded_bytes),
                  p.eccodes.m.encode_seconds / p.ours.encode_seconds,
                  p.eccodes.m.decode_seconds / p.ours.decode_seconds);
    }

    std::printf("\nsummary (ours hashing off vs ecCodes; speed ratio > 1: ours faster)\n");
    std::printf("%-26s %10s %10s %10s %10s %10s %10s %8s %8s %8s\n", "pair", "ours enc", "ec enc", "ours dec",
                "ec dec", "ours B", "ec B", "size", "enc x", "dec x");
    for (const pair_result& p : pairs) {
      std::printf("%-26s %10.0f %10.0f %10.0f %10.0f %10zu %10zu %8.4f %8.2f %8.2f\n", p.name.c_str(),
                  mb / p.ours.encode_seconds, mb / p.eccodes.m.encode_seconds, mb / p.ours.decode_seconds,
                  mb / p.eccodes.m.decode_seconds, p.ours.encoded_bytes, p.eccodes.m.encoded_bytes,
                  static_cast<double>(p.ours.encoded_bytes) / static_cast<double>(p.eccodes.m.encoded_bytes),
                  p.eccodes.m.encode_seconds / p.ours.encode_seconds,
                  p.eccodes.m.decode_seconds / p.ours.decode_seconds);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}

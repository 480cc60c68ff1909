// tensogram demo: the library's main job end to end on generated data.
//
//   tensogram_demo [OUTPUT.tgm]      (default: demo.tgm)
//
// 1. generates a smooth global 0.25° field (721 × 1440 float64, a 2 m
//    temperature-like pattern between 250 and 310 K),
// 2. encodes it with MARS-style metadata through the typed API,
// 3. writes the message to OUTPUT,
// 4. memory-maps the file, decodes it (zero-copy for pipeline `none`),
//    verifies the xxh3 hashes and reports the maximum absolute error.
//
// Everything it does is plain public API from <tensogram.hpp>; the progress
// lines are meant to be read by a person trying the library for the first
// time.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <span>
#include <string>
#include <vector>

#include <tensogram.hpp>

namespace {

constexpr std::size_t n_lat = 721;   // 90°N … 90°S every 0.25°
constexpr std::size_t n_lon = 1440;  // 0°E … 359.75°E every 0.25°

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point start) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
}

double mib(std::size_t bytes) {
  return static_cast<double>(bytes) / (1024.0 * 1024.0);
}

// A temperature-like field: warm tropics, cold poles, and a zonal wave whose
// amplitude also fades towards the poles. With c = cos(lat) in [0, 1]:
// 250 + 55 c² + 5 c² sin(2 lon + lat) lies in [250, 310] K everywhere.
std::vector<double> make_field() {
  std::vector<double> t(n_lat * n_lon);
  constexpr double deg = std::numbers::pi / 180.0;
  for (std::size_t i = 0; i < n_lat; ++i) {
    const double lat = (90.0 - 0.25 * static_cast<double>(i)) * deg;
    const double c2 = std::cos(lat) * std::cos(lat);
    for (std::size_t j = 0; j < n_lon; ++j) {
      const double lon = 0.25 * static_cast<double>(j) * deg;
      t[i * n_lon + j] = 250.0 + 55.0 * c2 + 5.0 * c2 * std::sin(2.0 * lon + lat);
    }
  }
  return t;
}

// Per-object metadata in the layout ECMWF tools use: MARS keys under "mars".
tensogram::cbor::value make_object_metadata() {
  using tensogram::cbor::value;
  return value::make_map({
      {"mars", value::make_map({{"class", "od"},
                                {"type", "fc"},
                                {"stream", "oper"},
                                {"expver", "0001"},
                                {"date", 20260404},
                                {"time", 1200},
                                {"step", 6},
                                {"param", "2t"},
                                {"levtype", "sfc"},
                                {"grid", "0.25/0.25"}})},
      {"units", "K"},
  });
}

void write_file(const std::filesystem::path& path, std::span<const std::byte> bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.close();
  // Checked after close so a failed final flush (disk full) is reported too.
  if (!out) throw tensogram::io_error(path.string() + ": cannot write");
}

int run(const std::filesystem::path& path) {
  std::printf("tensogram demo (library %s, wire format v%u)\n",
              std::string(tensogram::library_version()).c_str(), unsigned{tensogram::wire_version});

  // 1. Generate.
  auto t0 = clock_type::now();
  const std::vector<double> field = make_field();
  const auto [lo, hi] = std::minmax_element(field.begin(), field.end());
  const std::size_t raw_bytes = field.size() * sizeof(double);
  std::printf("[1/4] generated %zu x %zu float64 field \"2t\": %.2f MiB, %.2f .. %.2f K (%.1f ms)\n", n_lat,
              n_lon, mib(raw_bytes), *lo, *hi, ms_since(t0));

  // 2. Encode: one object, MARS metadata, 16-bit simple_packing (GRIB-style
  // quantisation; parameters computed from the data) then szip (CCSDS 121
  // entropy coding with the usual GRIB settings), xxh3 frame hashes.
  t0 = clock_type::now();
  tensogram::global_metadata meta;
  meta.base.push_back(make_object_metadata());
  meta.extra.set("source", "tensogram-cpp examples/demo.cpp");
  tensogram::data_object_descriptor desc =
      tensogram::data_object_descriptor::contiguous(tensogram::dtype::float64, {n_lat, n_lon});
  desc.encoding = "simple_packing";
  desc.compression = "szip";
  desc.params.set("sp_bits_per_value", 16);
  desc.params.set("szip_rsi", 128);
  desc.params.set("szip_block_size", 16);
  desc.params.set("szip_flags", 8);
  const std::vector<tensogram::object_input> objects{{desc, std::as_bytes(std::span(field))}};
  const std::vector<std::byte> message = tensogram::encode(meta, objects);
  const double encode_ms = ms_since(t0);
  std::printf("[2/4] encoded 1 object (simple_packing 16 bits + szip, xxh3 hashes): %zu bytes (%.1f ms)\n",
              message.size(), encode_ms);

  // 3. Write.
  t0 = clock_type::now();
  write_file(path, message);
  std::printf("[3/4] wrote %s (%.2f MiB, %.1f ms)\n", path.string().c_str(), mib(message.size()),
              ms_since(t0));

  // 4. Read back through a memory map and decode (unpack to float64).
  t0 = clock_type::now();
  const tensogram::buffer file = tensogram::buffer::map_file(path);
  tensogram::verify_hashes(file.bytes());
  const tensogram::message decoded = tensogram::decode(file);
  const double decode_ms = ms_since(t0);
  const tensogram::decoded_object& obj = decoded.object(0);
  const tensogram::metadata md = decoded.get_metadata();
  std::printf(
      "[4/4] decoded %s: %zu object(s), shape [%llu, %llu] %s, param=%s date=%lld step=%lld, "
      "hashes verified (%.1f ms)\n",
      path.string().c_str(), decoded.num_objects(), static_cast<unsigned long long>(obj.shape().at(0)),
      static_cast<unsigned long long>(obj.shape().at(1)), obj.dtype_string().c_str(),
      md.get_string("mars.param").c_str(), static_cast<long long>(md.get_int("mars.date")),
      static_cast<long long>(md.get_int("mars.step")), decode_ms);

  if (obj.element_count<double>() != field.size()) {
    std::fprintf(stderr, "decoded %zu elements, expected %zu\n", obj.element_count<double>(), field.size());
    return 1;
  }
  const double* back = obj.data_as<double>();
  double max_err = 0.0;
  for (std::size_t k = 0; k < field.size(); ++k) max_err = std::max(max_err, std::abs(back[k] - field[k]));

  // simple_packing promises half a quantum: 2^E · 10^-D / 2.
  const tensogram::cbor::value& params = obj.descriptor().params;
  const double quantum =
      tensogram::powi(2.0, static_cast<std::int32_t>(*params.find("sp_binary_scale_factor")->as_int64())) *
      tensogram::powi(10.0, -static_cast<std::int32_t>(*params.find("sp_decimal_scale_factor")->as_int64()));
  std::printf("sizes: raw %zu bytes, message %zu bytes (%.1f%% of raw, %.2fx smaller)\n", raw_bytes,
              message.size(), 100.0 * static_cast<double>(message.size()) / static_cast<double>(raw_bytes),
              static_cast<double>(raw_bytes) / static_cast<double>(message.size()));
  std::printf("max abs error: %g K (bound: half a quantum = %g K)\n", max_err, quantum / 2);
  return max_err <= quantum / 2 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2) {
    std::fprintf(stderr, "usage: %s [OUTPUT.tgm]\n", argv[0]);
    return 2;
  }
  try {
    return run(argc == 2 ? std::filesystem::path(argv[1]) : std::filesystem::path("demo.tgm"));
  } catch (const std::exception& e) {
    // tensogram::error's what() already names the category ("io error: ...").
    std::fprintf(stderr, "demo failed: %s\n", e.what());
    return 1;
  }
}

// Codec matrix (issue 3 benchmark): the reference's 24 pipeline
// combinations on N smooth float64 values (250–310, fixed seed), with
// encode/decode throughput, compression ratio and error norms, and for each
// lossless codec the raw library on the same bytes measured in the same run
// (our overhead over it). blosc2 rows (issue 6): raw floats with each inner
// codec, simple_packing 16/24/32 + blosc2, and 1 vs 2 threads.
//
//   tensogram_codec_matrix [N]      (default 16 Mi values)
#include <zstd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <tensogram.hpp>
#include <tensogram/codecs/lz4.hpp>
#include <tensogram/codecs/shuffle.hpp>
#include <tensogram/codecs/szip.hpp>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

std::vector<double> smooth_field(std::size_t n) {
  std::mt19937_64 rng(20261122);
  std::normal_distribution<double> noise(0.0, 0.05);
  std::vector<double> v(n);
  const double cols = 1440.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double lat = std::floor(static_cast<double>(i) / cols) / 721.0 * 3.14159;
    const double lon = std::fmod(static_cast<double>(i), cols) / cols * 6.28318;
    v[i] = 280.0 + 25.0 * std::sin(lat) * std::cos(2 * lon) + 5.0 * std::sin(5 * lat) + noise(rng);
    v[i] = std::clamp(v[i], 250.0, 310.0);
  }
  return v;
}

struct combo {
  std::string name;
  std::string encoding;
  int bits;
  std::string compression;
  double zfp_rate;
  std::string blosc2_codec = {};  // empty: the default (lz4)
};

tensogram::data_object_descriptor descriptor_for(const combo& c, std::size_t n) {
  auto d = tensogram::data_object_descriptor::contiguous(tensogram::dtype::float64, {n});
  d.encoding = c.encoding;
  if (c.encoding == "simple_packing") d.params.set("sp_bits_per_value", c.bits);
  d.compression = c.compression;
  if (c.compression == "szip") {
    d.params.set("szip_rsi", 128);
    d.params.set("szip_block_size", 16);
    d.params.set("szip_flags", 8);
    if (c.encoding == "none") {
      // 64-bit samples are beyond szip: shuffle to bytes first.
      d.filter = "shuffle";
      d.params.set("shuffle_element_size", 8);
    }
  }
  if (c.compression == "zstd") d.params.set("zstd_level", 3);
  if (!c.blosc2_codec.empty()) d.params.set("blosc2_codec", c.blosc2_codec);
  if (c.compression == "zfp") {
    d.params.set("zfp_mode", "fixed_rate");
    d.params.set("zfp_rate", c.zfp_rate);
  }
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n =
      argc > 1 ? static_cast<std::size_t>(std::strtoull(argv[1], nullptr, 10)) : (16u << 20);
  const std::vector<double> field = smooth_field(n);
  const std::span<const std::byte> raw = std::as_bytes(std::span(field));
  const double mb = static_cast<double>(raw.size()) / 1e6;

  std::vector<combo> combos = {{"none", "none", 0, "none", 0},
                               {"zstd", "none", 0, "zstd", 0},
                               {"lz4", "none", 0, "lz4", 0},
                               {"shuffle+szip", "none", 0, "szip", 0}};
  for (const char* codec : {"blosclz", "lz4", "lz4hc", "zlib", "zstd"}) {
    combos.push_back({std::string("blosc2 ") + codec, "none", 0, "blosc2", 0, codec});
  }
  for (int bits : {16, 24, 32}) {
    for (const char* c : {"none", "zstd", "lz4", "szip", "blosc2"}) {
      combos.push_back({"sp" + std::to_string(bits) + (std::string(c) == "none" ? "" : "+" + std::string(c)),
                        "simple_packing", bits, c, 0});
    }
  }
  for (double rate : {16.0, 24.0, 32.0}) {
    combos.push_back({"zfp rate " + std::to_string(static_cast<int>(rate)), "none", 0, "zfp", rate});
  }

  std::printf("codec matrix: %zu float64 values (%.1f MB), 1 thread, best of 3 runs\n", n, mb);
  std::printf("%-18s %10s %10s %8s %12s %12s %12s\n", "pipeline", "enc MB/s", "dec MB/s", "ratio", "Linf",
              "L1", "L2");
  tensogram::encode_options opts;
  for (const combo& c : combos) {
    const std::vector<tensogram::object_input> objs{{descriptor_for(c, n), raw}};
    // Best of three: the first call also pays for fresh pages and caches.
    double enc = 1e30;
    double dec = 1e30;
    std::vector<std::byte> msg;
    tensogram::message m;
    for (int rep = 0; rep < 3; ++rep) {
      auto t0 = clock_type::now();
      msg = tensogram::encode(tensogram::global_metadata{}, objs, opts);
      enc = std::min(enc, seconds_since(t0));
      t0 = clock_type::now();
      m = tensogram::decode(tensogram::buffer::borrowed(msg));
      dec = std::min(dec, seconds_since(t0));
    }
    const double* back = m.object(0).data_as<double>();
    double linf = 0, l1 = 0, l2 = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double e = std::fabs(back[i] - field[i]);
      linf = std::max(linf, e);
      l1 += e;
      l2 += e * e;
    }
    std::printf("%-18s %10.0f %10.0f %8.2f %12.3g %12.3g %12.3g\n", c.name.c_str(), mb / enc, mb / dec,
                static_cast<double>(raw.size()) / static_cast<double>(msg.size()), linf,
                l1 / static_cast<double>(n), std::sqrt(l2 / static_cast<double>(n)));
  }

  // blosc2 over its blocks: 1 vs 2 threads (the reference's goal: ≥ 1.7×).
  std::printf("\nblosc2 thread scaling (best of 3): MB/s with threads = 1 and 2, speed-up\n");
  std::printf("%-18s %10s %10s %6s %10s %10s %6s\n", "pipeline", "enc 1", "enc 2", "x", "dec 1", "dec 2",
              "x");
  for (const combo& c : combos) {
    if (c.compression != "blosc2") continue;
    const std::vector<tensogram::object_input> objs{{descriptor_for(c, n), raw}};
    double enc[2] = {1e30, 1e30};
    double dec[2] = {1e30, 1e30};
    for (int rep = 0; rep < 3; ++rep) {
      for (int t = 0; t < 2; ++t) {
        tensogram::encode_options eo;
        eo.threads = static_cast<std::uint32_t>(t + 1);
        tensogram::decode_options dopt;
        dopt.threads = eo.threads;
        auto t0 = clock_type::now();
        const std::vector<std::byte> msg = tensogram::encode(tensogram::global_metadata{}, objs, eo);
        enc[t] = std::min(enc[t], seconds_since(t0));
        t0 = clock_type::now();
        const tensogram::message m = tensogram::decode(tensogram::buffer::borrowed(msg), dopt);
        dec[t] = std::min(dec[t], seconds_since(t0));
      }
    }
    std::printf("%-18s %10.0f %10.0f %6.2f %10.0f %10.0f %6.2f\n", c.name.c_str(), mb / enc[0], mb / enc[1],
                enc[0] / enc[1], mb / dec[0], mb / dec[1], dec[0] / dec[1]);
  }

  // Raw libraries on the same bytes, for the lossless codecs' overhead.
  std::printf("\nraw libraries on the same %.1f MB (same run):\n", mb);
  {
    double best = 1e30;
    std::size_t z = 0;
    for (int rep = 0; rep < 3; ++rep) {
      auto t0 = clock_type::now();
      std::vector<std::byte> out(ZSTD_compressBound(raw.size()));
      z = ZSTD_compress(out.data(), out.size(), raw.data(), raw.size(), 3);
      best = std::min(best, seconds_since(t0));
    }
    std::printf("  libzstd level 3 one-shot     %10.0f MB/s  ratio %.2f\n", mb / best,
                static_cast<double>(raw.size()) / static_cast<double>(z));
  }
  {
    double best = 1e30;
    std::size_t size = 0;
    for (int rep = 0; rep < 3; ++rep) {
      auto t0 = clock_type::now();
      size = tensogram::codecs::lz4_compress(raw).size();
      best = std::min(best, seconds_since(t0));
    }
    std::printf("  lz4 block (lz4_flex algo)    %10.0f MB/s  ratio %.2f\n", mb / best,
                static_cast<double>(raw.size()) / static_cast<double>(size));
  }
  {
    std::vector<std::byte> shuffled(raw.size());
    tensogram::codecs::shuffle(raw, 8, shuffled);
    tensogram::codecs::szip_params p;
    auto t0 = clock_type::now();
    const auto e = tensogram::codecs::szip_compress(shuffled, p);
    std::printf("  libaec (shuffled bytes)      %10.0f MB/s  ratio %.2f (incl. our offset walk)\n",
                mb / seconds_since(t0),
                static_cast<double>(raw.size()) / static_cast<double>(e.payload.size()));
  }
  return 0;
}

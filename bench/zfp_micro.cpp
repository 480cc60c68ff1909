// zfp codec microbenchmark: our zfp (src/codecs/zfp/) against Debian's
// libzfp on the same smooth float64 field (bench_util.hpp), fixed-rate 16,
// 24 and 32, encode and decode alone (no pipeline, no hashing), best of
// interleaved runs so both sides see the same machine load. Checks that
// the two streams are identical (ours is libzfp's, zero-padded to 8 bytes).
//
//   tensogram_zfp_micro [--values N] [--reps N] [--rate R]
#include <zfp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "tensogram/codecs/zfp.hpp"

namespace {

namespace tb = tensogram_bench;
namespace tc = tensogram::codecs;

struct peer_stream {
  zfp_field* field = nullptr;
  zfp_stream* stream = nullptr;
  bitstream* bits = nullptr;
  peer_stream(double* data, std::size_t n, double rate, std::span<std::byte> buf)
      : field(zfp_field_1d(data, zfp_type_double, n)), stream(zfp_stream_open(nullptr)) {
    zfp_stream_set_rate(stream, rate, zfp_type_double, 1, 0);
    zfp_stream_set_execution(stream, zfp_exec_serial);
    bits = stream_open(buf.data(), buf.size());
    zfp_stream_set_bit_stream(stream, bits);
    zfp_stream_rewind(stream);
  }
  ~peer_stream() {
    stream_close(bits);
    zfp_stream_close(stream);
    zfp_field_free(field);
  }
  peer_stream(const peer_stream&) = delete;
  peer_stream& operator=(const peer_stream&) = delete;
};

template <class F>
double time_once(F&& f) {
  const auto t0 = tb::clock_type::now();
  f();
  return tb::seconds_since(t0);
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t n = std::size_t{16} << 20;
  int reps = 5;
  std::vector<double> rates = {16.0, 24.0, 32.0};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string arg = argv[i];
    if (arg == "--values") n = static_cast<std::size_t>(std::atoll(argv[i + 1]));
    if (arg == "--reps") reps = std::atoi(argv[i + 1]);
    if (arg == "--rate") rates = {std::atof(argv[i + 1])};
  }
  std::vector<double> field = tb::smooth_field(tb::grid_for(n));
  n = field.size();
  const std::span<const std::byte> raw = std::as_bytes(std::span<const double>(field));
  const double mb = static_cast<double>(raw.size()) / 1e6;
  std::printf("%-10s %10s %10s %10s %10s %8s %8s %s\n", "rate", "enc ours", "enc zfp", "dec ours", "dec zfp",
              "enc x", "dec x", "(MB/s of raw float64; x = libzfp time / ours)");
  for (double rate : rates) {
    const tc::zfp_params p{.mode = tc::zfp_mode::fixed_rate, .rate = rate};
    std::vector<std::byte> peer_buf(tc::zfp_maximum_size(n, p) + 8);
    std::vector<double> out(n);
    std::vector<std::byte> ours;
    std::size_t peer_size = 0;
    double enc_ours = 1e30, enc_peer = 1e30, dec_ours = 1e30, dec_peer = 1e30;
    for (int r = 0; r < reps; ++r) {
      enc_ours = std::min(enc_ours, time_once([&] { ours = tc::zfp_compress(raw, p); }));
      enc_peer = std::min(enc_peer, time_once([&] {
                            peer_stream s(field.data(), n, rate, peer_buf);
                            peer_size = zfp_compress(s.stream, s.field);
                          }));
      dec_ours =
          std::min(dec_ours, time_once([&] {
                     tc::zfp_decompress_into(ours, n, p, std::as_writable_bytes(std::span<double>(out)));
                   }));
      dec_peer = std::min(dec_peer, time_once([&] {
                            peer_stream s(out.data(), n, rate, peer_buf);
                            static_cast<void>(zfp_decompress(s.stream, s.field));
                          }));
    }
    const bool same =
        ours.size() == (peer_size + 7) / 8 * 8 && std::memcmp(ours.data(), peer_buf.data(), peer_size) == 0;
    std::printf("%-10.0f %10.0f %10.0f %10.0f %10.0f %8.2f %8.2f %s\n", rate, mb / enc_ours, mb / enc_peer,
                mb / dec_ours, mb / dec_peer, enc_peer / enc_ours, dec_peer / dec_ours,
                same ? "identical" : "STREAMS DIFFER");
  }
  return 0;
}

// Peers the codec matrix measures on the same bytes as our pipelines: the raw
// libraries (libzstd, liblz4, libaec, Debian's libzfp) writing into reused,
// pre-faulted buffers (their best case), and what a second thread buys the
// machine itself (memcpy split over two threads) and libzstd (nbWorkers 2).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bench_util.hpp"

namespace tensogram_bench {

/// A peer measured on the same bytes: a name, times, and the output size.
struct peer {
  std::string name;
  best_time encode;  // or the one operation of a one-way peer
  std::optional<best_time> decode;
  std::size_t bytes = 0;
};

/// A peer's time with one and with two threads.
struct scaling_peer {
  std::string name;
  best_time t1;
  best_time t2;
  [[nodiscard]] double gain() const { return t1.seconds / t2.seconds; }
};

/// A pre-faulted buffer of `size` bytes (raw peers' best case).
[[nodiscard]] std::vector<std::byte> faulted(std::size_t size);

/// `ZSTD_compress` level 3 / `ZSTD_decompress`.
[[nodiscard]] peer measure_libzstd(std::span<const std::byte> raw, int reps, double budget);

/// `LZ4_compress_default` / `LZ4_decompress_safe`.
[[nodiscard]] peer measure_liblz4(std::span<const std::byte> raw, int reps, double budget);

/// `aec_buffer_encode` / `aec_buffer_decode` on `packed`, the MSB-first
/// samples of `bits` bits that simple_packing hands to szip (flags
/// preprocess|msb, plus 3byte for 24 bits; block 16, rsi 128: spec 03 §7.2).
[[nodiscard]] peer measure_libaec(std::span<const std::byte> packed, int bits, int reps, double budget);

/// Serial fixed-rate 1-D `zfp_compress` / `zfp_decompress` of Debian's
/// libzfp (8-bit stream words) at `rate` bits per value.
[[nodiscard]] peer measure_libzfp(std::span<const double> field, double rate, int reps, double budget);

/// memcpy of `raw` split over 1 and 2 threads into a pre-faulted and into a
/// fresh huge-page-advised buffer, and `ZSTD_compress2` level 3 with
/// nbWorkers 1 and 2: the gains our thread-scaling rows are judged against.
[[nodiscard]] std::vector<scaling_peer> measure_thread_peers(std::span<const std::byte> raw, int reps,
                                                             double budget);

}  // namespace tensogram_bench

// Helpers shared by the plain (non-Google-Benchmark) benchmark programs:
// the smooth test field, best-of-N timing under a time budget, minor page
// faults and error norms.
#pragma once

#include <sys/mman.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <limits>
#include <memory>
#include <random>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

namespace tensogram_bench {

using clock_type = std::chrono::steady_clock;

inline double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

/// Minor page faults of this process so far. On the VMs we measure on, a
/// first touch of a 4 KiB page costs ~5 µs, so fresh-output calls are often
/// bound by them (docs/benchmarks.md, "Fresh allocations").
inline long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

/// User + system CPU time of this process (all threads), in seconds.
inline double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  const auto s = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec);
  };
  return s(u.ru_utime) + s(u.ru_stime);
}

/// A regular lat/lon grid of `n` points: the largest Ni ≤ sqrt(1.6 n) that
/// divides n (4000 × 2500 for 10 M values, 4096 × 4096 for 16 Mi).
struct grid {
  std::size_t ni = 0;
  std::size_t nj = 0;
};

inline grid grid_for(std::size_t n) {
  auto ni = static_cast<std::size_t>(std::sqrt(1.6 * static_cast<double>(n)) + 0.5);
  ni = std::clamp<std::size_t>(ni, 1, n);
  while (n % ni != 0) --ni;
  return {ni, n / ni};
}

/// 250 + 60 · s(lat, lon) with s a smooth function in [0.05, 0.95], plus a
/// little noise (σ = 0.02, fixed seed) so that the low bits are not trivially
/// compressible; row-major, longitude fastest (GRIB's scanning order). Every
/// run produces the same bits.
inline std::vector<double> smooth_field(grid g) {
  constexpr double pi = 3.14159265358979323846;
  std::vector<double> cos2(g.ni);
  std::vector<double> sin3(g.ni);
  for (std::size_t i = 0; i < g.ni; ++i) {
    const double lon = static_cast<double>(i) / static_cast<double>(g.ni) * 2.0 * pi;
    cos2[i] = std::cos(2.0 * lon);
    sin3[i] = std::sin(3.0 * lon);
  }
  std::mt19937_64 rng(20261122);
  std::normal_distribution<double> noise(0.0, 0.02);
  std::vector<double> v(g.ni * g.nj);
  for (std::size_t j = 0; j < g.nj; ++j) {
    const double lat = (static_cast<double>(j) + 0.5) / static_cast<double>(g.nj) * pi;
    const double a = 0.3 * std::sin(lat);
    const double b = 0.15 * std::sin(5.0 * lat);
    for (std::size_t i = 0; i < g.ni; ++i) {
      const double s = 0.5 + a * cos2[i] + b * sin3[i];
      v[j * g.ni + i] = std::clamp(250.0 + 60.0 * s + noise(rng), 250.0, 310.0);
    }
  }
  return v;
}

/// Best of up to `reps` runs of `run`, stopping early once `budget_seconds`
/// of wall time have passed (at least one run). `prepare` runs untimed
/// before each run (e.g. to release the previous result, so every run pays
/// for fresh output as a one-shot caller does). `faults` and `cpu_seconds`
/// (process CPU time, all threads: on a shared machine wall time also
/// counts waiting for a core) are those of the fastest run.
struct best_time {
  double seconds = std::numeric_limits<double>::infinity();
  long faults = 0;
  double cpu_seconds = 0;
  int runs = 0;
};

template <class Prepare, class Run>
best_time measure_best(int reps, double budget_seconds, Prepare&& prepare, Run&& run) {
  best_time b;
  const auto start = clock_type::now();
  for (int r = 0; r < reps; ++r) {
    prepare();
    const long f0 = minor_faults();
    const double c0 = cpu_seconds();
    const auto t0 = clock_type::now();
    run();
    const double s = seconds_since(t0);
    const double c = cpu_seconds() - c0;
    const long f = minor_faults() - f0;
    ++b.runs;
    if (s < b.seconds) {
      b.seconds = s;
      b.faults = f;
      b.cpu_seconds = c;
    }
    if (seconds_since(start) >= budget_seconds) break;
  }
  return b;
}

template <class Run>
best_time measure_best(int reps, double budget_seconds, Run&& run) {
  return measure_best(
      reps, budget_seconds, [] {}, std::forward<Run>(run));
}

/// Anonymous memory of `size` bytes, advised for transparent huge pages
/// before its first touch (as the library advises its own large outputs,
/// include/tensogram/core/memory.hpp) and unmapped, so returned to the
/// system, on destruction.
class mapped_buffer {
 public:
  explicit mapped_buffer(std::size_t size) : mem_(nullptr, unmapper{size}) {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("mmap failed");
    madvise(p, size, MADV_HUGEPAGE);  // advice only: failure is harmless
    mem_.reset(static_cast<std::byte*>(p));
  }
  [[nodiscard]] std::byte* data() const noexcept { return mem_.get(); }
  [[nodiscard]] std::size_t size() const noexcept { return mem_.get_deleter().size; }

 private:
  struct unmapper {
    std::size_t size;
    void operator()(std::byte* p) const noexcept { munmap(p, size); }
  };
  std::unique_ptr<std::byte, unmapper> mem_;
};

/// L∞, mean absolute (L1 / n) and root-mean-square (L2 / √n) error.
struct error_norms {
  double linf = 0;
  double l1 = 0;
  double l2 = 0;
};

inline error_norms errors(std::span<const double> want, const double* got) {
  error_norms e;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double d = std::fabs(got[i] - want[i]);
    e.linf = std::max(e.linf, d);
    e.l1 += d;
    e.l2 += d * d;
  }
  const auto n = static_cast<double>(std::max<std::size_t>(want.size(), 1));
  e.l1 /= n;
  e.l2 = std::sqrt(e.l2 / n);
  return e;
}

}  // namespace tensogram_bench

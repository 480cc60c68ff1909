// tensogram_bench: throughput of encode and decode (pipeline `none`) next to
// the memory-bound operations they are built from, measured in one run so
// that the ratios printed at the end compare like with like.
//
//   tensogram_bench [Google Benchmark flags]
//
// Reference operations on the same 128 MiB (16 Mi float64): plain memcpy,
// xxh3_64, and a single-pass fused memcpy+xxh3 over 32 KiB blocks (copy a
// block, hash it while it is still in cache). The encoder does exactly that
// fused pass plus a NaN/Inf scan, so "encode / fused" is its efficiency.
//
// Every benchmark sets bytes processed, so all bytes_per_second columns are
// comparable. Times are CPU times (see main). After the run the fastest
// repetition of each benchmark and a "Ratios" table built from those are
// printed (see collecting_reporter).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <numbers>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include <benchmark/benchmark.h>

#include <tensogram.hpp>
#include <tensogram/format/hash.hpp>

namespace {

using namespace tensogram;

constexpr std::size_t big_side = 4096;    // 4096² = 16 Mi values = 128 MiB of float64
constexpr std::size_t small_side = 1024;  // 1024² = 1 Mi values = 8 MiB
constexpr std::size_t many_objects = 1000;
constexpr std::size_t values_per_small_object = 128;
constexpr std::size_t many_messages = 1000;
constexpr std::size_t fused_block = 32 * 1024;

// ---------------------------------------------------------------------------
// Inputs

/// A smooth, temperature-like side × side field between 250 and 310 with a
/// little fixed-seed noise: realistic bits for the NaN scan and the hash,
/// and reproducible from run to run.
std::vector<double> smooth_field(std::size_t side, std::uint64_t seed) {
  std::vector<double> row_wave(side);
  std::vector<double> col_wave(side);
  for (std::size_t i = 0; i < side; ++i) {
    const double t = static_cast<double>(i) / static_cast<double>(side);
    row_wave[i] = std::cos(std::numbers::pi * (t - 0.5));  // warm equator, cold poles
    col_wave[i] = std::sin(2.0 * std::numbers::pi * 3.0 * t);
  }
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> noise(-0.5, 0.5);
  std::vector<double> v(side * side);
  for (std::size_t r = 0; r < side; ++r) {
    for (std::size_t c = 0; c < side; ++c) {
      const double x = 255.0 + 45.0 * row_wave[r] + 4.0 * col_wave[c] * row_wave[r] + noise(rng);
      v[r * side + c] = std::clamp(x, 250.0, 310.0);
    }
  }
  return v;
}

std::span<const std::byte> bytes_of(const std::vector<double>& v) {
  return std::as_bytes(std::span<const double>(v));
}

/// Fixed provenance: encoding does no clock or random-device work inside
/// the timed loop and produces the same bytes every time.
encode_options bench_encode_options() {
  encode_options o;
  o.fixed_provenance =
      provenance{"tensogram-bench", "0", "2026-11-22T00:00:00Z", "00000000-0000-4000-8000-000000000000"};
  return o;
}

global_metadata field_metadata(std::size_t objects) {
  global_metadata g;
  for (std::size_t i = 0; i < objects; ++i) {
    g.base.push_back(cbor::value::make_map({{"param", cbor::value("2t")}, {"step", cbor::value(i)}}));
  }
  return g;
}

object_input square_object(std::span<const std::byte> data, std::size_t side, byte_order order) {
  return object_input{data_object_descriptor::contiguous(dtype::float64, {side, side}, order), data};
}

std::vector<std::byte> encode_one(std::span<const std::byte> data, std::size_t side, byte_order order) {
  const object_input in[] = {square_object(data, side, order)};
  return encode(field_metadata(1), in, bench_encode_options());
}

/// Everything the benchmarks read, built once before they run. Owned by
/// main() and captured by reference by the registered benchmarks.
struct bench_inputs {
  std::vector<double> big = smooth_field(big_side, 42);
  std::vector<double> small = smooth_field(small_side, 42);
  std::vector<std::byte> big_swapped;      // `big` in non-native byte order
  std::vector<std::byte> copy_target;      // pre-faulted destination for memcpy
  std::vector<std::byte> msg_big;          // native order, 16 Mi values
  std::vector<std::byte> msg_small;        // native order, 1 Mi values
  std::vector<std::byte> msg_big_swapped;  // non-native order, 16 Mi values
  std::vector<std::byte> msg_many_objects;
  std::vector<std::byte> many_messages_buffer;

  bench_inputs() {
    const std::span<const std::byte> b = bytes_of(big);
    big_swapped.assign(b.begin(), b.end());
    swap_bytes_in_place(big_swapped, sizeof(double));
    copy_target.assign(b.size(), std::byte{1});

    const byte_order other = native_byte_order() == byte_order::little ? byte_order::big : byte_order::little;
    msg_big = encode_one(b, big_side, native_byte_order());
    msg_small = encode_one(bytes_of(small), small_side, native_byte_order());
    msg_big_swapped = encode_one(big_swapped, big_side, other);

    // 1000 objects of 128 values each, cut from the field.
    std::vector<object_input> objects;
    objects.reserve(many_objects);
    for (std::size_t i = 0; i < many_objects; ++i) {
      const auto part =
          b.subspan(i * values_per_small_object * sizeof(double), values_per_small_object * sizeof(double));
      objects.push_back(
          object_input{data_object_descriptor::contiguous(dtype::float64, {values_per_small_object}), part});
    }
    msg_many_objects = encode(field_metadata(many_objects), objects, bench_encode_options());

    // 1000 complete messages back to back, as in a GRIB-like archive file.
    const std::vector<std::byte> one =
        encode_one(bytes_of(small).first(64 * 64 * sizeof(double)), 64, native_byte_order());
    many_messages_buffer.reserve(one.size() * many_messages);
    for (std::size_t i = 0; i < many_messages; ++i) {
      many_messages_buffer.insert(many_messages_buffer.end(), one.begin(), one.end());
    }
  }
};

// Checks the inputs once before timing anything: a benchmark of a wrong
// result is worthless.
bool sane(const bench_inputs& in) {
  const message m = decode(buffer::borrowed(in.msg_big));
  const message s = decode(buffer::borrowed(in.msg_big_swapped));
  const std::span<const std::byte> b = bytes_of(in.big);
  return m.num_objects() == 1 && m.object(0).is_view() && std::ranges::equal(m.object(0).bytes(), b) &&
         !s.object(0).is_view() && std::ranges::equal(s.object(0).bytes(), b) &&
         scan(in.many_messages_buffer).size() == many_messages &&
         decode(buffer::borrowed(in.msg_many_objects)).num_objects() == many_objects;
}

// ---------------------------------------------------------------------------
// Benchmarks

void bm_memcpy(benchmark::State& state, bench_inputs& in) {
  const std::span<const std::byte> src = bytes_of(in.big);
  for (auto _ : state) {
    std::memcpy(in.copy_target.data(), src.data(), src.size());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * src.size()));
}

void bm_xxh3(benchmark::State& state, const bench_inputs& in) {
  const std::span<const std::byte> src = bytes_of(in.big);
  for (auto _ : state) benchmark::DoNotOptimize(format::xxh3_64(src));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * src.size()));
}

// The lower bound for an encoder that copies and hashes: one read of the
// source, one write of the destination, hashing from cache.
void bm_fused_memcpy_xxh3(benchmark::State& state, bench_inputs& in) {
  const std::span<const std::byte> src = bytes_of(in.big);
  for (auto _ : state) {
    format::xxh3_stream stream;
    for (std::size_t off = 0; off < src.size(); off += fused_block) {
      const std::size_t n = std::min(fused_block, src.size() - off);
      std::memcpy(in.copy_target.data() + off, src.data() + off, n);
      stream.update(std::span<const std::byte>(in.copy_target.data() + off, n));
    }
    benchmark::DoNotOptimize(stream.digest());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * src.size()));
}

// Steady state: the output vector is reused, so its pages are already mapped.
void bm_encode_into_reused(benchmark::State& state, const bench_inputs& in) {
  const object_input objects[] = {square_object(bytes_of(in.big), big_side, native_byte_order())};
  const global_metadata meta = field_metadata(1);
  const encode_options options = bench_encode_options();
  std::vector<std::byte> out;
  encode_into(meta, objects, options, out);  // warm: allocate and fault in once
  for (auto _ : state) {
    encode_into(meta, objects, options, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in.big.size() * sizeof(double)));
}

// Fresh allocation per call: includes the kernel's page faults and zeroing
// of 128 MiB, which is what a one-shot caller pays.
void bm_encode_fresh(benchmark::State& state, const bench_inputs& in) {
  const object_input objects[] = {square_object(bytes_of(in.big), big_side, native_byte_order())};
  const global_metadata meta = field_metadata(1);
  const encode_options options = bench_encode_options();
  for (auto _ : state) {
    std::vector<std::byte> out = encode(meta, objects, options);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in.big.size() * sizeof(double)));
}

// Native order, pipeline none: a view into the message, so the cost is the
// framing and metadata work only, independent of the payload size.
void bm_decode_native(benchmark::State& state, const std::vector<std::byte>& msg, std::size_t payload) {
  const buffer b = buffer::borrowed(msg);
  for (auto _ : state) {
    message m = decode(b);
    benchmark::DoNotOptimize(m.object(0).data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * payload));
}

void bm_decode_verify(benchmark::State& state, const bench_inputs& in) {
  const buffer b = buffer::borrowed(in.msg_big);
  decode_options options;
  options.verify_hash = true;
  for (auto _ : state) {
    message m = decode(b, options);
    benchmark::DoNotOptimize(m.object(0).data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in.big.size() * sizeof(double)));
}

// Non-native order: one copying, byte-swapping pass over the payload.
void bm_decode_swapped(benchmark::State& state, const bench_inputs& in) {
  const buffer b = buffer::borrowed(in.msg_big_swapped);
  for (auto _ : state) {
    message m = decode(b);
    benchmark::DoNotOptimize(m.object(0).data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in.big.size() * sizeof(double)));
}

void bm_decode_object_by_index(benchmark::State& state, const bench_inputs& in) {
  const buffer b = buffer::borrowed(in.msg_many_objects);
  for (auto _ : state) {
    message m = decode_object(b, many_objects / 2);
    benchmark::DoNotOptimize(m.object(0).data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in.msg_many_objects.size()));
}

void bm_decode_all_objects(benchmark::State& state, const bench_inputs& in) {
  const buffer b = buffer::borrowed(in.msg_many_objects);
  for (auto _ : state) {
    message m = decode(b);
    benchmark::DoNotOptimize(m.object(many_objects / 2).data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in.msg_many_objects.size()));
}

void bm_scan(benchmark::State& state, const bench_inputs& in) {
  for (auto _ : state) {
    std::vector<scan_entry> entries = scan(in.many_messages_buffer);
    benchmark::DoNotOptimize(entries.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in.many_messages_buffer.size()));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * many_messages));
}

// ---------------------------------------------------------------------------
// Reporting

/// Console output as usual (only the aggregates when there are
/// repetitions), plus the figures the ratio table needs: for every
/// benchmark, the CPU time per iteration and the byte rate of its fastest
/// repetition. On a shared machine the fastest repetition is the least
/// disturbed one, so minima give steadier ratios than means or medians.
class collecting_reporter : public benchmark::ConsoleReporter {
 public:
  // Colours only on a terminal, so that logs and `make bench | tee` stay
  // plain text.
  collecting_reporter() : ConsoleReporter(isatty(STDOUT_FILENO) != 0 ? OO_ColorTabular : OO_Tabular) {}

  struct figures {
    double seconds = 0;
    double bytes_per_second = 0;
  };

  void ReportRuns(const std::vector<Run>& runs) override {
    std::vector<Run> shown;
    for (const Run& r : runs) {
      // With repetitions, show only the aggregates (mean, median, ...).
      if (r.run_type == Run::RT_Aggregate || r.repetitions <= 1) shown.push_back(r);
      if (r.run_type == Run::RT_Aggregate) continue;
      if (r.error_occurred) continue;
      figures f;
      f.seconds = r.GetAdjustedCPUTime() / benchmark::GetTimeUnitMultiplier(r.time_unit);
      if (auto it = r.counters.find("bytes_per_second"); it != r.counters.end()) {
        f.bytes_per_second = it->second.value;
      }
      const std::string name = r.run_name.function_name;
      if (auto [it, fresh] = fastest_.try_emplace(name, f); !fresh && f.seconds < it->second.seconds) {
        it->second = f;
      }
      if (std::find(order_.begin(), order_.end(), name) == order_.end()) order_.push_back(name);
    }
    if (!shown.empty()) ConsoleReporter::ReportRuns(shown);
  }

  [[nodiscard]] const figures* find(const std::string& name) const {
    const auto it = fastest_.find(name);
    return it == fastest_.end() ? nullptr : &it->second;
  }

  /// The fastest repetition of every benchmark, in run order.
  void print_fastest() const {
    std::printf("\nFastest repetition (CPU time; used for the ratios)\n");
    for (const std::string& name : order_) {
      const figures& f = fastest_.at(name);
      const bool micro = f.seconds < 1e-3;
      std::printf("  %-40s %12.3f %s %12.2f GB/s\n", name.c_str(), f.seconds * (micro ? 1e6 : 1e3),
                  micro ? "us" : "ms", f.bytes_per_second / 1e9);
    }
  }

 private:
  std::map<std::string, figures> fastest_;
  std::vector<std::string> order_;
};

void print_ratio(const char* what, const collecting_reporter::figures* a,
                 const collecting_reporter::figures* b, bool by_rate, const char* note) {
  if (a == nullptr || b == nullptr) {
    std::printf("  %-60s %8s  %s\n", what, "n/a", "(benchmark filtered out)");
    return;
  }
  const double r = by_rate ? a->bytes_per_second / b->bytes_per_second : a->seconds / b->seconds;
  std::printf("  %-60s %8.3f  %s\n", what, r, note);
}

void print_ratios(const collecting_reporter& rep) {
  const auto* encode_reused = rep.find("encode_into_reused/16Mi_f64");
  const auto* encode_fresh = rep.find("encode_fresh/16Mi_f64");
  const auto* fused = rep.find("fused_memcpy_xxh3/16Mi_f64");
  const auto* copy = rep.find("memcpy/16Mi_f64");
  const auto* hash = rep.find("xxh3_64/16Mi_f64");
  const auto* dec_small = rep.find("decode_native/1Mi_f64");
  const auto* dec_big = rep.find("decode_native/16Mi_f64");
  const auto* dec_swapped = rep.find("decode_swapped/16Mi_f64");
  const auto* dec_verify = rep.find("decode_verify_hash/16Mi_f64");
  const auto* by_index = rep.find("decode_object_by_index/1000_objects");
  const auto* full = rep.find("decode_all/1000_objects");

  rep.print_fastest();
  std::printf("\nRatios\n");
  std::string goal = "goal >= 0.80";
  if (encode_reused != nullptr && fused != nullptr) {
    goal += encode_reused->bytes_per_second >= 0.8 * fused->bytes_per_second ? ": met" : ": MISSED";
  }
  print_ratio("encode_into (reused) rate / fused memcpy+xxh3 rate", encode_reused, fused, true, goal.c_str());
  print_ratio("encode_into (reused) rate / memcpy rate", encode_reused, copy, true, "");
  print_ratio("encode (fresh vector) rate / encode_into (reused) rate", encode_fresh, encode_reused, true,
              "page faults of a new 128 MiB vector");
  print_ratio("fused memcpy+xxh3 rate / memcpy rate", fused, copy, true, "");
  print_ratio("xxh3_64 rate / memcpy rate", hash, copy, true, "");
  print_ratio("decode native time: 16 Mi / 1 Mi values", dec_big, dec_small, false,
              "O(1) in payload size: ~1 (size ratio 16)");
  print_ratio("decode byte-swapped rate / memcpy rate", dec_swapped, copy, true, "");
  print_ratio("decode verify_hash rate / xxh3_64 rate", dec_verify, hash, true, "");
  print_ratio("decode_object(500) time / full decode time (1000 objects)", by_index, full, false, "");
}

}  // namespace

int main(int argc, char** argv) {
  // Short defaults so the whole run stays well under two minutes on two
  // cores; flags given on the command line come later and win.
  std::vector<char*> args(argv, argv + argc);
  std::string min_time = "--benchmark_min_time=0.2";
  std::string repetitions = "--benchmark_repetitions=5";
  args.insert(args.begin() + 1, {min_time.data(), repetitions.data()});
  int args_count = static_cast<int>(args.size());
  benchmark::Initialize(&args_count, args.data());
  if (benchmark::ReportUnrecognizedArguments(args_count, args.data())) return 1;

  // Times are CPU times of the (single-threaded) benchmark thread: on a
  // shared machine they are far steadier than wall-clock times, and page
  // faults are still counted (as system time). The load average tells how
  // busy the machine was.
  double load[1] = {0};
  if (getloadavg(load, 1) == 1) std::printf("Load average (1 min) at start: %.2f\n", load[0]);
  std::printf("Preparing inputs (16 Mi float64 field, messages)...\n");
  bench_inputs in;
  if (!sane(in)) {
    std::fprintf(stderr, "benchmark inputs failed their round-trip check\n");
    return 1;
  }

  benchmark::RegisterBenchmark("memcpy/16Mi_f64", bm_memcpy, std::ref(in));
  benchmark::RegisterBenchmark("xxh3_64/16Mi_f64", bm_xxh3, std::cref(in));
  benchmark::RegisterBenchmark("fused_memcpy_xxh3/16Mi_f64", bm_fused_memcpy_xxh3, std::ref(in));
  benchmark::RegisterBenchmark("encode_into_reused/16Mi_f64", bm_encode_into_reused, std::cref(in));
  benchmark::RegisterBenchmark("encode_fresh/16Mi_f64", bm_encode_fresh, std::cref(in));
  benchmark::RegisterBenchmark("decode_native/1Mi_f64", bm_decode_native, std::cref(in.msg_small),
                               in.small.size() * sizeof(double));
  benchmark::RegisterBenchmark("decode_native/16Mi_f64", bm_decode_native, std::cref(in.msg_big),
                               in.big.size() * sizeof(double));
  benchmark::RegisterBenchmark("decode_swapped/16Mi_f64", bm_decode_swapped, std::cref(in));
  benchmark::RegisterBenchmark("decode_verify_hash/16Mi_f64", bm_decode_verify, std::cref(in));
  benchmark::RegisterBenchmark("decode_object_by_index/1000_objects", bm_decode_object_by_index,
                               std::cref(in));
  benchmark::RegisterBenchmark("decode_all/1000_objects", bm_decode_all_objects, std::cref(in));
  benchmark::RegisterBenchmark("scan/1000_messages", bm_scan, std::cref(in));

  collecting_reporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  print_ratios(reporter);
  benchmark::Shutdown();
  return 0;
}

// Peak memory (performance issue, memory goals): peak RSS of encoding and
// decoding one large float64 object per pipeline, and of a streaming encode
// of many objects, each case in a forked child so that nothing the parent
// or an earlier case allocated counts.
//
//   tensogram_memory_bench [--json] [--object-mib N] [--stream-objects N]
//                          [--stream-object-mib N] [--stream-file PATH]
//                          [--json-file PATH]
//
// Defaults: a 1 GiB object (128 Mi float64) for pipelines none,
// simple_packing 24, zstd, lz4, simple_packing 24 + szip and blosc2
// (threads 0, xxh3 hashing: the library's defaults); a streaming encode of
// 100 objects of 100 MiB (pipeline none) to /dev/null through the file
// descriptor sink, or to PATH with --stream-file (a regular file; 10 GiB
// of disk writes, slow on VMs).
//
// Method: the child generates its input (the caller's memory, counted once),
// then resets the peak to the current RSS (writing 5 to
// /proc/self/clear_refs, Linux ≥ 4.0), runs the one call and reads VmHWM
// from /proc/self/status. Encode: the input object plus everything encode
// allocates. Decode: the child encodes, frees the input, resets the peak and
// decodes; the message is the caller's input, counted once. The figure
// printed is peak / object size (goal ≤ 2.2×); the streaming case prints
// peak / one object (bounded by ~one object: the caller's object plus the
// encoder's one encoded payload).
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tensogram.hpp>
#include <vector>

#include "bench_util.hpp"

namespace {

namespace tb = tensogram_bench;

constexpr std::size_t mib = std::size_t{1} << 20;

// ---- /proc --------------------------------------------------------------------

/// A "Vm...:   N kB" line of /proc/self/status, in bytes.
double status_bytes(std::string_view key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with(key) && line.size() > key.size() && line[key.size()] == ':') {
      return std::strtod(line.c_str() + key.size() + 1, nullptr) * 1024.0;
    }
  }
  throw std::runtime_error("no " + std::string(key) + " in /proc/self/status");
}

/// Resets VmHWM to the current RSS (proc(5), clear_refs value 5).
void reset_peak() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  if (!out) throw std::runtime_error("cannot reset the peak RSS (/proc/self/clear_refs)");
}

// ---- the child ------------------------------------------------------------------

/// What a child reports through its pipe (plain bytes).
struct child_result {
  double peak = 0;      // VmHWM after the call, bytes
  double baseline = 0;  // VmRSS when the peak was reset (includes the input)
  double seconds = 0;   // the call's wall time
  double encoded = 0;   // encoded size (bytes)
  char error[200] = {};
};

template <class F>
child_result in_child(F&& work) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    close(fds[0]);
    child_result r;
    try {
      r = work();
    } catch (const std::exception& e) {
      std::snprintf(r.error, sizeof r.error, "%s", e.what());
    }
    const ssize_t w = write(fds[1], &r, sizeof r);
    _exit(w == static_cast<ssize_t>(sizeof r) ? 0 : 1);
  }
  close(fds[1]);
  child_result r;
  std::size_t got = 0;
  while (got < sizeof r) {
    const ssize_t k = read(fds[0], reinterpret_cast<char*>(&r) + got, sizeof r - got);
    if (k <= 0) break;
    got += static_cast<std::size_t>(k);
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got != sizeof r || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::snprintf(r.error, sizeof r.error, "child failed (status %d)", status);
  }
  return r;
}

/// A smooth float64 field (250–310 with a little noise) written straight
/// into huge-page-advised memory: cheap to generate (the 1 GiB input is
/// made in every child) and with realistic low bits for the codecs.
void fill_field(std::span<double> v) {
  constexpr std::size_t cols = 4096;
  constexpr double pi = 3.14159265358979323846;
  std::vector<double> wave(cols);
  for (std::size_t i = 0; i < cols; ++i) wave[i] = std::cos(2.0 * pi * static_cast<double>(i) / cols);
  const std::size_t rows = (v.size() + cols - 1) / cols;
  std::uint64_t x = 0x9e3779b97f4a7c15ULL;
  for (std::size_t j = 0; j < rows; ++j) {
    const double lat = (static_cast<double>(j) + 0.5) / static_cast<double>(rows) * pi;
    const double a = 280.0 + 20.0 * std::sin(lat);
    const double b = 8.0 * std::sin(3.0 * lat);
    const std::size_t end = std::min(v.size(), (j + 1) * cols);
    for (std::size_t k = j * cols; k < end; ++k) {
      x ^= x << 13;  // xorshift64: noise of ±0.05
      x ^= x >> 7;
      x ^= x << 17;
      const double noise = (static_cast<double>(x >> 11) * 0x1.0p-53 - 0.5) * 0.1;
      v[k] = a + b * wave[k - j * cols] + noise;
    }
  }
}

struct case_spec {
  std::string name;
  std::string encoding = "none";
  std::string compression = "none";
};

tensogram::data_object_descriptor descriptor_for(const case_spec& c, std::size_t n) {
  auto d = tensogram::data_object_descriptor::contiguous(tensogram::dtype::float64, {n});
  d.encoding = c.encoding;
  if (c.encoding == "simple_packing") d.params.set("sp_bits_per_value", 24);
  d.compression = c.compression;
  if (c.compression == "szip") {
    d.params.set("szip_rsi", 128);
    d.params.set("szip_block_size", 16);
    d.params.set("szip_flags", 8);
  }
  if (c.compression == "zstd") d.params.set("zstd_level", 3);
  return d;
}

child_result measure_encode(const case_spec& c, std::size_t bytes) {
  return in_child([&] {
    const std::size_t n = bytes / sizeof(double);
    tb::mapped_buffer in(n * sizeof(double));
    fill_field(std::span(reinterpret_cast<double*>(in.data()), n));
    const std::vector<tensogram::object_input> objs{
        {descriptor_for(c, n), std::span<const std::byte>(in.data(), n * sizeof(double))}};
    child_result r;
    reset_peak();
    r.baseline = status_bytes("VmRSS");
    const auto t0 = tb::clock_type::now();
    const std::vector<std::byte> msg = tensogram::encode(tensogram::global_metadata{}, objs, {});
    r.seconds = tb::seconds_since(t0);
    r.peak = status_bytes("VmHWM");
    r.encoded = static_cast<double>(msg.size());
    return r;
  });
}

child_result measure_decode(const case_spec& c, std::size_t bytes) {
  return in_child([&] {
    const std::size_t n = bytes / sizeof(double);
    std::vector<std::byte> msg;
    {
      tb::mapped_buffer in(n * sizeof(double));
      fill_field(std::span(reinterpret_cast<double*>(in.data()), n));
      const std::vector<tensogram::object_input> objs{
          {descriptor_for(c, n), std::span<const std::byte>(in.data(), n * sizeof(double))}};
      msg = tensogram::encode(tensogram::global_metadata{}, objs, {});
    }  // the input is unmapped here: only the message (the caller's) remains
    child_result r;
    r.encoded = static_cast<double>(msg.size());
    reset_peak();
    r.baseline = status_bytes("VmRSS");
    const auto t0 = tb::clock_type::now();
    const tensogram::message m = tensogram::decode(tensogram::buffer::borrowed(msg));
    r.seconds = tb::seconds_since(t0);
    r.peak = status_bytes("VmHWM");
    if (m.object(0).element_count<double>() != n) throw std::runtime_error("decoded size mismatch");
    return r;
  });
}

child_result measure_streaming(std::size_t objects, std::size_t object_bytes, const std::string& file) {
  return in_child([&] {
    const std::size_t n = object_bytes / sizeof(double);
    tb::mapped_buffer in(n * sizeof(double));
    fill_field(std::span(reinterpret_cast<double*>(in.data()), n));
    const std::span<const std::byte> data(in.data(), n * sizeof(double));
    const auto desc = tensogram::data_object_descriptor::contiguous(tensogram::dtype::float64, {n});
    child_result r;
    reset_peak();
    r.baseline = status_bytes("VmRSS");
    const auto t0 = tb::clock_type::now();
    if (file.empty()) {
      const int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
      if (fd < 0) throw std::runtime_error("cannot open /dev/null");
      try {
        auto enc = tensogram::streaming_encoder::to_fd(fd, tensogram::global_metadata{});
        for (std::size_t i = 0; i < objects; ++i) enc.write_object(desc, data);
        r.encoded = static_cast<double>(enc.finish());
      } catch (...) {
        close(fd);
        throw;
      }
      close(fd);
    } else {
      tensogram::streaming_encoder enc(file, tensogram::global_metadata{});
      for (std::size_t i = 0; i < objects; ++i) enc.write_object(desc, data);
      r.encoded = static_cast<double>(enc.finish());
      std::filesystem::remove(file);
    }
    r.seconds = tb::seconds_since(t0);
    r.peak = status_bytes("VmHWM");
    return r;
  });
}

int usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--json] [--object-mib N] [--stream-objects N] [--stream-object-mib N] "
               "[--stream-file PATH] [--json-file PATH]\n",
               argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  std::size_t object_mib = 1024;
  std::size_t stream_objects = 100;
  std::size_t stream_object_mib = 100;
  std::string stream_file;
  std::string json_file;  // --json-file: the JSON as well as the table
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--json") {
      json = true;
    } else if (arg == "--json-file" && i + 1 < argc) {
      json_file = argv[++i];
    } else if (arg == "--stream-file" && i + 1 < argc) {
      stream_file = argv[++i];
    } else if ((arg == "--object-mib" || arg == "--stream-objects" || arg == "--stream-object-mib") &&
               i + 1 < argc) {
      char* end = nullptr;
      const unsigned long long v = std::strtoull(argv[++i], &end, 10);
      if (*end != '\0' || v == 0) return usage(argv[0]);
      if (arg == "--object-mib") object_mib = v;
      if (arg == "--stream-objects") stream_objects = v;
      if (arg == "--stream-object-mib") stream_object_mib = v;
    } else {
      return usage(argv[0]);
    }
  }

  try {
    const std::size_t object_bytes = object_mib * mib;
    const std::vector<case_spec> cases = {
        {"none", "none", "none"}, {"sp24", "simple_packing", "none"},      {"zstd", "none", "zstd"},
        {"lz4", "none", "lz4"},   {"sp24+szip", "simple_packing", "szip"}, {"blosc2", "none", "blosc2"}};
    constexpr double goal = 2.2;
    struct result {
      std::string name;
      child_result encode;
      child_result decode;
    };
    std::vector<result> results;
    for (const case_spec& c : cases) {
      if (!json) std::fprintf(stderr, "  memory: %s ...\n", c.name.c_str());
      results.push_back({c.name, measure_encode(c, object_bytes), measure_decode(c, object_bytes)});
    }
    if (!json) std::fprintf(stderr, "  memory: streaming ...\n");
    const std::size_t stream_bytes = stream_object_mib * mib;
    const child_result stream = measure_streaming(stream_objects, stream_bytes, stream_file);

    const auto ob = static_cast<double>(object_bytes);
    const auto sb = static_cast<double>(stream_bytes);
    bool failed = false;
    for (const result& r : results) failed = failed || r.encode.error[0] != 0 || r.decode.error[0] != 0;
    failed = failed || stream.error[0] != 0;

    if (json || !json_file.empty()) {
      nlohmann::json out = {{"object_bytes", object_bytes},
                            {"goal_peak_over_object", goal},
                            {"method", "VmHWM after clear_refs 5, forked child per case; input counted once"},
                            {"cases", nlohmann::json::array()}};
      const auto side = [&](const child_result& r) {
        return nlohmann::json{{"peak_bytes", r.peak},
                              {"baseline_bytes", r.baseline},
                              {"peak_over_object", r.peak / ob},
                              {"seconds", r.seconds},
                              {"encoded_bytes", r.encoded},
                              {"error", r.error},
                              {"met", r.error[0] == 0 && r.peak / ob <= goal}};
      };
      for (const result& r : results) {
        out["cases"].push_back(
            {{"pipeline", r.name}, {"encode", side(r.encode)}, {"decode", side(r.decode)}});
      }
      out["streaming"] = {{"objects", stream_objects},
                          {"object_bytes", stream_bytes},
                          {"sink", stream_file.empty() ? "/dev/null (fd sink)" : stream_file},
                          {"pipeline", "none, xxh3"},
                          {"peak_bytes", stream.peak},
                          {"baseline_bytes", stream.baseline},
                          {"peak_over_object", stream.peak / sb},
                          {"encoder_peak_over_object", (stream.peak - stream.baseline) / sb},
                          {"seconds", stream.seconds},
                          {"message_bytes", stream.encoded},
                          {"error", stream.error}};
      if (!json_file.empty()) {
        std::ofstream f(json_file);
        f << out.dump(2) << '\n';
        if (!f) throw std::runtime_error("cannot write " + json_file);
      }
      if (json) {
        std::printf("%s\n", out.dump(2).c_str());
        return failed ? 1 : 0;
      }
    }

    std::printf("peak RSS per call, as a multiple of the object (%zu MiB of float64; input counted once;\n",
                object_mib);
    std::printf("forked child per case, VmHWM reset by clear_refs 5; threads 0, xxh3; goal <= %.1fx)\n",
                goal);
    std::printf("%-12s %10s %10s %8s %8s   %10s %10s %8s %8s\n", "pipeline", "enc peak", "enc x", "MB/s",
                "goal", "dec peak", "dec x", "MB/s", "goal");
    for (const result& r : results) {
      const auto cell = [&](const child_result& c) {
        if (c.error[0] != 0) {
          std::printf(" %-40s", c.error);
          return;
        }
        std::printf(" %7.0f MiB %9.2fx %8.0f %8s  ", c.peak / static_cast<double>(mib), c.peak / ob,
                    ob / 1e6 / c.seconds, c.peak / ob <= goal ? "met" : "NOT MET");
      };
      std::printf("%-12s", r.name.c_str());
      cell(r.encode);
      cell(r.decode);
      std::printf("\n");
    }
    std::printf("\nstreaming encode: %zu objects of %zu MiB (pipeline none, xxh3) to %s\n", stream_objects,
                stream_object_mib, stream_file.empty() ? "/dev/null (fd sink)" : stream_file.c_str());
    if (stream.error[0] != 0) {
      std::printf("  error: %s\n", stream.error);
    } else {
      std::printf(
          "  peak %.0f MiB = %.2fx one object (the caller's object: %.2fx; the encoder: %.2fx), "
          "%.0f MB/s, message %.2f GB\n",
          stream.peak / static_cast<double>(mib), stream.peak / sb, stream.baseline / sb,
          (stream.peak - stream.baseline) / sb,
          static_cast<double>(stream_objects) * sb / 1e6 / stream.seconds, stream.encoded / 1e9);
    }
    return failed ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}

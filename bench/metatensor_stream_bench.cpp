// Metatensor streaming benchmark (issue 12; not a test): fetching whole
// files over QUIC (spec 06 §10, server and client in this process, loopback)
// and over the HTTP range fallback (§10.9, a throwaway nginx on loopback),
// next to reading the same file sequentially with read(2) (`cat FILE >
// /dev/null`), in the same run, page cache warm for all three:
//
// * (a) one big tensor (--big-mib, default 1024 MiB);
// * (b) many small tensors (--small-count, default 1000, of --small-kib,
//   default 64 KiB);
// * time to first tensor: a small tensor at urgency 0 requested together
//   with four large ones at urgency 3 (§10.5: the small one should not wait
//   for the large ones), against the same small tensor at urgency 3
//   requested after them;
// * (issue 28) the whole of a --file-mib (default 256) MiB file of 16
//   tensors into a file in each --dest directory (default: the scratch
//   directory and /dev/shm), as `metatensor fetch` writes its output
//   (pwrite(2) at the tensors' offsets, client_options::image_fd, the file
//   mapped shared; --through-mapping: memcpy into the mapping, as before
//   issue 28), against `cat FILE > DEST` (read(2) + write(2), 1 MiB blocks)
//   into the same directory; neither syncs.  Prints QUIC / HTTP and
//   QUIC / cat (goals: >= 1.2 and >= 0.6);
// * (issue 28) the bytes a lazy fetch moves: one tensor of that file over
//   QUIC through a counting UDP relay (both directions, UDP payloads),
//   against the tensor's bytes (goal: <= 1.02 x tensor + 20 KB), and the
//   cost of a connection alone (open, header, close).
//
//   tensogram_metatensor_stream_bench [--big-mib N] [--small-count N] [--small-kib K]
//                                     [--file-mib N] [--dest DIR]... [--repeats R] [--dir DIR]
//                                     [--only-dest] [--through-mapping]
//
// Rates are bytes of the file / wall time from `remote_file::open` to the
// last tensor received (best of --repeats), in MB/s (10^6 bytes).
// --only-dest runs the issue 28 part alone.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <metatensor/stream_client.hpp>
#include <metatensor/stream_server.hpp>
#include <nlohmann/json.hpp>

#include "nginx_server.hpp"
#include "udp_proxy.hpp"

namespace {

namespace fs = std::filesystem;
namespace ms = metatensor::streaming;
using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

struct tensor_spec {
  std::string name;
  std::uint64_t bytes = 0;
};

// Writes a plain safetensors file of U8 tensors holding pseudo-random bytes,
// in the given order, streaming the data (a 1 GiB tensor never sits in
// memory twice). Random so that nothing along the way can shortcut zeros.
void write_safetensors(const fs::path& path, const std::vector<tensor_spec>& tensors) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  std::uint64_t offset = 0;
  for (const tensor_spec& t : tensors) {
    header[t.name] = {{"dtype", "U8"}, {"shape", {t.bytes}}, {"data_offsets", {offset, offset + t.bytes}}};
    offset += t.bytes;
  }
  std::string text = header.dump();
  text.append((64 - (8 + text.size()) % 64) % 64, ' ');  // D = 8 + N a multiple of 64
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  std::uint64_t n = text.size();
  char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  out.write(len, 8);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  std::mt19937_64 rng(2026);
  std::vector<std::uint64_t> chunk(1 << 19);  // 4 MiB
  for (std::uint64_t left = offset; left > 0;) {
    for (auto& w : chunk) w = rng();
    const std::uint64_t k = std::min<std::uint64_t>(left, chunk.size() * 8);
    out.write(reinterpret_cast<const char*>(chunk.data()), static_cast<std::streamsize>(k));
    left -= k;
  }
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

// `cat FILE > /dev/null`: sequential read(2) in 1 MiB blocks; seconds.
double cat_seconds(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open " + path.string());
  std::vector<char> buf(1 << 20);
  const auto t0 = clock_type::now();
  while (::read(fd, buf.data(), buf.size()) > 0) {
  }
  const double s = seconds_since(t0);
  ::close(fd);
  return s;
}

// `cat SRC > DST`: read(2) + write(2) in 1 MiB blocks into a new file;
// seconds, the file removed afterwards.
double cat_into_seconds(const fs::path& src, const fs::path& dst) {
  std::vector<char> buf(1 << 20);
  const auto t0 = clock_type::now();
  const int in = ::open(src.c_str(), O_RDONLY | O_CLOEXEC);
  const int out = ::open(dst.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (in < 0 || out < 0) throw std::runtime_error("cannot open " + src.string() + " or " + dst.string());
  for (;;) {
    const ssize_t n = ::read(in, buf.data(), buf.size());
    if (n <= 0) break;
    if (::write(out, buf.data(), static_cast<std::size_t>(n)) != n) throw std::runtime_error("short write");
  }
  ::close(in);
  ::close(out);
  const double s = seconds_since(t0);
  fs::remove(dst);
  return s;
}

// The output of `metatensor fetch` (tools/metatensor/cmd_fetch.cpp): a new
// file, ftruncated to the remote size and mapped shared, the client's
// image.  Removed on destruction.
class mapped_output {
 public:
  explicit mapped_output(fs::path path) : path_(std::move(path)) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) throw std::runtime_error("cannot create " + path_.string());
  }
  mapped_output(const mapped_output&) = delete;
  mapped_output& operator=(const mapped_output&) = delete;
  ~mapped_output() {
    unmap();
    ::close(fd_);
    std::error_code ec;
    fs::remove(path_, ec);
  }
  std::span<std::byte> map(std::uint64_t size) {
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) throw std::runtime_error("ftruncate");
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) throw std::runtime_error("mmap");
    map_ = p;
    size_ = size;
    return {static_cast<std::byte*>(p), static_cast<std::size_t>(size)};
  }
  [[nodiscard]] std::byte* data() const noexcept { return static_cast<std::byte*>(map_); }
  [[nodiscard]] int fd() const noexcept { return fd_; }
  void unmap() noexcept {
    if (map_ != nullptr) ::munmap(map_, size_);
    map_ = nullptr;
  }

 private:
  fs::path path_;
  int fd_ = -1;
  void* map_ = nullptr;
  std::size_t size_ = 0;
};

// The whole of `url` into a new mapped file at `dst`, every tensor
// requested at once, as `metatensor fetch URL -o DST` does; seconds up to
// the mapping released.
double fetch_into_seconds(const std::string& url, ms::client_options options, const fs::path& dst,
                          bool through_mapping) {
  mapped_output out(dst);
  options.image_provider = [&out](std::uint64_t size) { return out.map(size); };
  if (!through_mapping) options.image_fd = out.fd();
  const auto t0 = clock_type::now();
  ms::remote_file f = ms::remote_file::open(url, options);
  const std::span<const std::byte> header = f.header();
  if (header.data() != out.data()) std::memcpy(out.data(), header.data(), header.size());
  for (const ms::tensor_request& r : f.get_all()) r.wait();
  f.close();
  out.unmap();
  return seconds_since(t0);
}

// Opens `url`, fetches every tensor in parallel, waits; seconds.
double fetch_all_seconds(const std::string& url, const ms::client_options& options) {
  const auto t0 = clock_type::now();
  ms::remote_file f = ms::remote_file::open(url, options);
  for (const ms::tensor_request& r : f.get_all()) r.wait();
  const double s = seconds_since(t0);
  f.close();
  return s;
}

double best_of(int repeats, const std::function<double()>& run) {
  double best = 1e300;
  for (int i = 0; i < repeats; ++i) best = std::min(best, run());
  return best;
}

ms::request_options at_urgency(std::uint8_t urgency) {
  ms::request_options o;
  o.urgency = urgency;
  return o;
}

struct first_tensor_times {
  double first = 0;  // request to the small tensor complete
  double all = 0;    // request to everything complete
};

// The large tensors first at urgency 3, then the small one at `small_urgency`,
// all requested back to back after the header arrived.
first_tensor_times time_to_first(const std::string& url, const ms::client_options& options,
                                 const std::vector<std::string>& large, const std::string& small,
                                 std::uint8_t small_urgency) {
  ms::remote_file f = ms::remote_file::open(url, options);
  const auto t0 = clock_type::now();
  std::vector<ms::tensor_request> requests;
  for (const std::string& name : large) requests.push_back(f.get(name, at_urgency(3)));
  const ms::tensor_request s = f.get(small, at_urgency(small_urgency));
  s.wait();
  first_tensor_times t;
  t.first = seconds_since(t0);
  for (const ms::tensor_request& r : requests) r.wait();
  t.all = seconds_since(t0);
  f.close();
  return t;
}

struct args {
  std::uint64_t big_mib = 1024;
  std::uint64_t small_count = 1000;
  std::uint64_t small_kib = 64;
  std::uint64_t file_mib = 256;
  std::vector<fs::path> dests;
  bool only_dest = false;
  bool through_mapping = false;
  int repeats = 3;
  std::optional<fs::path> dir;
};

args parse(int argc, char** argv) {
  args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--big-mib") {
      a.big_mib = std::stoull(value());
    } else if (flag == "--small-count") {
      a.small_count = std::stoull(value());
    } else if (flag == "--small-kib") {
      a.small_kib = std::stoull(value());
    } else if (flag == "--repeats") {
      a.repeats = std::max(1, std::stoi(value()));
    } else if (flag == "--dir") {
      a.dir = value();
    } else if (flag == "--file-mib") {
      a.file_mib = std::stoull(value());
    } else if (flag == "--dest") {
      a.dests.emplace_back(value());
    } else if (flag == "--only-dest") {
      a.only_dest = true;
    } else if (flag == "--through-mapping") {
      a.through_mapping = true;
    } else {
      throw std::invalid_argument(
          "usage: tensogram_metatensor_stream_bench [--big-mib N] [--small-count N] [--small-kib K] "
          "[--file-mib N] [--dest DIR]... [--repeats R] [--dir DIR] [--only-dest] [--through-mapping]");
    }
  }
  if (a.big_mib < 4 || a.small_count == 0 || a.small_kib == 0 || a.file_mib < 16) {
    throw std::invalid_argument("--big-mib >= 4, --small-count >= 1, --small-kib >= 1, --file-mib >= 16");
  }
  return a;
}

// A scratch directory removed on exit.
class scratch {
 public:
  explicit scratch(const std::optional<fs::path>& parent) {
    std::string tmpl = ((parent ? *parent : fs::temp_directory_path()) / "mt-stream-bench-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp " + tmpl);
    path_ = tmpl;
  }
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;
  ~scratch() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string numbered(const char* prefix, std::uint64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%06llu", static_cast<unsigned long long>(i));
  std::string out = prefix;
  out += buf;
  return out;
}

// Issue 28: the whole 16-tensor file into each destination, cat / QUIC /
// HTTP interleaved (the destination's writeback and the machine's load hit
// all three alike), best of `repeats`; then the bytes of a lazy fetch.
void destination_part(const args& a, const fs::path& www, const ms::server& server,
                      const ms::client_options& quic_options, const tgtest::nginx_server* nginx) {
  const std::string file = "sixteen.safetensors";
  const fs::path src = www / file;
  const std::string quic_url = "metatensor://127.0.0.1:" + std::to_string(server.port()) + "/" + file;
  const double size = static_cast<double>(fs::file_size(src));
  (void)cat_seconds(src);  // warm the page cache

  std::vector<fs::path> dests = a.dests;
  if (dests.empty()) {
    dests.push_back(a.dir ? *a.dir : fs::temp_directory_path());
    if (fs::is_directory("/dev/shm")) dests.emplace_back("/dev/shm");
  }
  std::printf("Whole file of 16 tensors (%llu MiB) into a file, not synced; best of %d, interleaved\n",
              static_cast<unsigned long long>(a.file_mib), a.repeats);
  std::printf("%-24s %10s %10s %10s %9s %9s\n", "destination", "cat MB/s", "QUIC MB/s", "HTTP MB/s",
              "QUIC/HTTP", "QUIC/cat");
  for (const fs::path& d : dests) {
    const fs::path dst = d / ("mt-stream-bench-out-" + std::to_string(::getpid()));
    double cat = 1e300;
    double quic = 1e300;
    double http = 1e300;
    for (int i = 0; i < a.repeats; ++i) {
      cat = std::min(cat, cat_into_seconds(src, dst));
      quic = std::min(quic, fetch_into_seconds(quic_url, quic_options, dst, a.through_mapping));
      if (nginx) {
        http = std::min(http,
                        fetch_into_seconds(nginx->url(file), ms::client_options{}, dst, a.through_mapping));
      }
    }
    const double cat_rate = size / 1e6 / cat;
    const double quic_rate = size / 1e6 / quic;
    const double http_rate = nginx ? size / 1e6 / http : 0;
    std::printf("%-24s %10.0f %10.1f %10.1f %8.2fx %8.2fx\n", d.string().c_str(), cat_rate, quic_rate,
                http_rate, nginx ? quic_rate / http_rate : 0.0, quic_rate / cat_rate);
    std::fflush(stdout);
  }
  std::printf("goals: QUIC/HTTP >= 1.20, QUIC/cat >= 0.60\n\n");

  // Bytes on the wire, counted by a relay in front of the server.
  const auto moved = [&](const std::function<void(ms::remote_file&)>& use) {
    return tgtest::bytes_through_relay(server.port(), [&](std::uint16_t port) {
      ms::remote_file f =
          ms::remote_file::open("metatensor://127.0.0.1:" + std::to_string(port) + "/" + file, quic_options);
      use(f);
      f.close();
    });
  };
  const std::uint64_t connection = moved([](ms::remote_file&) {});
  std::uint64_t tensor = 0;
  const std::uint64_t lazy = moved([&](ms::remote_file& f) {
    const ms::tensor_request r = f.get("t000003");
    r.wait();
    tensor = r.size();
  });
  const double limit = 1.02 * static_cast<double>(tensor) + 20e3;
  std::printf("Lazy fetch over QUIC, UDP payload bytes both ways (counting relay)\n");
  std::printf("  connection alone (open, header, close): %llu bytes\n",
              static_cast<unsigned long long>(connection));
  std::printf(
      "  one tensor of %llu bytes: %llu bytes moved = %.4fx + %lld bytes; goal <= 1.02x + 20 KB: %s\n\n",
      static_cast<unsigned long long>(tensor), static_cast<unsigned long long>(lazy),
      static_cast<double>(lazy) / static_cast<double>(tensor),
      static_cast<long long>(lazy) - static_cast<long long>(tensor),
      static_cast<double>(lazy) <= limit ? "met" : "NOT met");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) try {
  const args a = parse(argc, argv);
  const scratch dir(a.dir);
  const fs::path www = dir.path() / "www";
  fs::create_directories(www);

  const std::uint64_t mib = 1 << 20;
  if (!a.only_dest) write_safetensors(www / "big.safetensors", {{"big", a.big_mib * mib}});
  std::vector<tensor_spec> small;
  for (std::uint64_t i = 0; i < a.small_count; ++i) small.push_back({numbered("t", i), a.small_kib * 1024});
  if (!a.only_dest) write_safetensors(www / "small.safetensors", small);
  // Time to first tensor: four large tensors sharing --big-mib, then one small.
  std::vector<tensor_spec> mixed;
  std::vector<std::string> large_names;
  for (int i = 0; i < 4; ++i) {
    mixed.push_back({numbered("large", static_cast<std::uint64_t>(i)), a.big_mib * mib / 4});
    large_names.push_back(mixed.back().name);
  }
  mixed.push_back({"small", a.small_kib * 1024});
  if (!a.only_dest) write_safetensors(www / "mixed.safetensors", mixed);
  std::vector<tensor_spec> sixteen;
  for (std::uint64_t i = 0; i < 16; ++i) sixteen.push_back({numbered("t", i), a.file_mib * mib / 16});
  write_safetensors(www / "sixteen.safetensors", sixteen);

  ms::server_options so;
  so.host = "127.0.0.1";
  so.port = 0;
  so.tls_dir = dir.path() / "tls";
  ms::server server(www, so);
  server.start();
  const std::string quic_base = "metatensor://127.0.0.1:" + std::to_string(server.port()) + "/";
  ms::client_options quic_options;
  quic_options.ca_file = server.certificate();

  std::unique_ptr<tgtest::nginx_server> nginx;
  try {
    nginx = std::make_unique<tgtest::nginx_server>(www);
  } catch (const std::exception& e) {
    std::printf("(HTTP columns skipped: %s)\n", e.what());
  }
  const ms::client_options http_options;  // http_parallel 8

  destination_part(a, www, server, quic_options, nginx.get());
  if (a.only_dest) {
    server.stop();
    return 0;
  }

  std::printf("Fetch all tensors, loopback, page cache warm; best of %d; MB/s = 10^6 bytes/s\n", a.repeats);
  std::printf("%-28s %12s %10s %10s %8s %10s %8s\n", "file", "bytes", "cat MB/s", "QUIC MB/s", "vs cat",
              "HTTP MB/s", "vs cat");
  struct row {
    std::string label;
    std::string file;
  };
  const std::vector<row> rows = {
      {"(a) 1 x " + std::to_string(a.big_mib) + " MiB", "big.safetensors"},
      {"(b) " + std::to_string(a.small_count) + " x " + std::to_string(a.small_kib) + " KiB",
       "small.safetensors"},
  };
  for (const row& r : rows) {
    const fs::path path = www / r.file;
    const double size = static_cast<double>(fs::file_size(path));
    (void)cat_seconds(path);  // warm the page cache
    const double cat = best_of(a.repeats, [&] { return cat_seconds(path); });
    const double quic =
        best_of(a.repeats, [&] { return fetch_all_seconds(quic_base + r.file, quic_options); });
    const double cat_rate = size / 1e6 / cat;
    const double quic_rate = size / 1e6 / quic;
    std::printf("%-28s %12.0f %10.0f %10.1f %7.3fx", r.label.c_str(), size, cat_rate, quic_rate,
                quic_rate / cat_rate);
    if (nginx) {
      const double http =
          best_of(a.repeats, [&] { return fetch_all_seconds(nginx->url(r.file), http_options); });
      const double http_rate = size / 1e6 / http;
      std::printf(" %10.1f %7.3fx", http_rate, http_rate / cat_rate);
    }
    std::printf("\n");
    std::fflush(stdout);
  }

  std::printf("\nTime to first tensor: %llu KiB tensor with 4 x %llu MiB tensors requested just before it\n",
              static_cast<unsigned long long>(a.small_kib), static_cast<unsigned long long>(a.big_mib / 4));
  std::printf("%-40s %14s %14s\n", "", "first (ms)", "all (ms)");
  const auto show = [](const char* label, const first_tensor_times& t) {
    std::printf("%-40s %14.2f %14.2f\n", label, t.first * 1e3, t.all * 1e3);
    std::fflush(stdout);
  };
  const auto best_ttft = [&](const std::string& url, const ms::client_options& o, std::uint8_t u) {
    first_tensor_times best{1e300, 1e300};
    for (int i = 0; i < a.repeats; ++i) {
      const first_tensor_times t = time_to_first(url, o, large_names, "small", u);
      best.first = std::min(best.first, t.first);
      best.all = std::min(best.all, t.all);
    }
    return best;
  };
  show("QUIC, small at urgency 0", best_ttft(quic_base + "mixed.safetensors", quic_options, 0));
  show("QUIC, small at urgency 3 (after large)", best_ttft(quic_base + "mixed.safetensors", quic_options, 3));
  if (nginx) {
    show("HTTP/1.1 (8 connections, no priority)",
         best_ttft(nginx->url("mixed.safetensors"), http_options, 0));
  }
  server.stop();
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}

// The hardened QUIC server under hostile load (issue 28 item 2; not a test):
// a well-behaved client fetches a whole file over QUIC (spec 06 §10) with no
// attack, then while hostile peers (tests/metatensor/hostile_peers.hpp)
// flood Initials from many addresses and ports, hold half-open handshakes,
// open never-read streams (slowloris) and storm the server with packets for
// unknown connection IDs.  The server runs in a child process of its own, so
// its resident memory (VmRSS, RssAnon from /proc) is its alone; the client
// and the attackers share this process (and the machine's cores).
//
//   tensogram_metatensor_hostile_bench [--mib N] [--tensors T] [--repeats R] [--slowloris S]
//                                      [--initials-per-second N] [--probes-per-second N]
//
// Runs R rounds (default 5) of one unloaded fetch then one loaded fetch (a
// fresh attack each round), so that other work on the machine weighs on both
// alike, and prints the best rates (whole file, MB/s = 10^6 bytes/s), the
// median per-round ratio (issue 28 asks for ≥ 0.5), the server's peak RSS in
// both phases and its counters.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <metatensor/safetensors.hpp>
#include <metatensor/stream_client.hpp>
#include <metatensor/stream_server.hpp>

#include "hostile_peers.hpp"

namespace {

// `prefix` followed by `n`, built by appending: GCC 12 at -O3 reports a
// false -Wrestrict for `"literal" + std::string` (GCC bug 105329).
std::string numbered(const char* prefix, std::uint64_t n) {
  std::string s = prefix;
  s += std::to_string(n);
  return s;
}

namespace fs = std::filesystem;
namespace ms = metatensor::streaming;
using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

struct args {
  std::uint64_t mib = 256;
  std::size_t tensors = 16;
  int repeats = 5;
  std::size_t slowloris = 8;
  std::size_t initials_per_second = 1000;
  std::size_t probes_per_second = 2000;
};

args parse(int argc, char** argv) {
  args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const auto v = std::strtoull(argv[i + 1], nullptr, 10);
    if (k == "--mib")
      a.mib = v;
    else if (k == "--tensors")
      a.tensors = v;
    else if (k == "--repeats")
      a.repeats = static_cast<int>(v);
    else if (k == "--slowloris")
      a.slowloris = v;
    else if (k == "--initials-per-second")
      a.initials_per_second = v;
    else if (k == "--probes-per-second")
      a.probes_per_second = v;
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      std::exit(2);
    }
  }
  a.tensors = std::max<std::size_t>(a.tensors, 1);
  a.repeats = std::max(a.repeats, 1);
  return a;
}

// CPU seconds (user + system, all threads) `pid` has used.
double cpu_seconds(pid_t pid) {
  std::ifstream in(numbered("/proc/", static_cast<std::uint64_t>(pid)) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Fields after the command (which may hold spaces) start after the last ')'.
  std::istringstream rest(text.substr(text.rfind(')') + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(field);  // utime, stime
  }
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// The server child: serves `dir`, writes its port on `port_fd`, and on EOF
// of `control_fd` prints its counters and exits.
[[noreturn]] void serve_child(const fs::path& dir, const fs::path& tls, int port_fd, int control_fd) {
  try {
    ms::server_options o;
    o.port = 0;
    o.tls_dir = tls;
    o.refusal_log = [](const std::string&) {};
    ms::server server(dir, o);
    server.start();
    const std::uint16_t port = server.port();
    if (::write(port_fd, &port, sizeof(port)) != sizeof(port)) std::_Exit(3);
    char c = 0;
    while (::read(control_fd, &c, 1) > 0) {
    }
    const auto st = server.stats();
    std::printf(
        "server counters: accepted %llu, Retry sent %llu, invalid tokens %llu, refused (global / per "
        "address) "
        "%llu / %llu, stateless resets %llu (rate-limited %llu), handshake timeouts %llu, deferred GETs "
        "%llu, "
        "peak queued per connection %.1f MiB\n",
        static_cast<unsigned long long>(st.accepted), static_cast<unsigned long long>(st.retries_sent),
        static_cast<unsigned long long>(st.invalid_tokens),
        static_cast<unsigned long long>(st.refused_global),
        static_cast<unsigned long long>(st.refused_per_address),
        static_cast<unsigned long long>(st.resets_sent),
        static_cast<unsigned long long>(st.resets_rate_limited),
        static_cast<unsigned long long>(st.handshake_timeouts),
        static_cast<unsigned long long>(st.gets_deferred),
        static_cast<double>(st.queued_bytes_peak) / (1 << 20));
    std::fflush(stdout);
    server.stop();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "server: %s\n", e.what());
    std::_Exit(1);
  }
  std::_Exit(0);
}

// Peak server RSS while `f` runs.
template <class F>
tgtest::rss_kib with_peak_rss(pid_t pid, F&& f) {
  std::atomic<bool> running{true};
  tgtest::rss_kib peak;
  std::thread sampler([&] {
    while (running) {
      const auto r = tgtest::process_rss(pid);
      peak.total = std::max(peak.total, r.total);
      peak.anon = std::max(peak.anon, r.anon);
      std::this_thread::sleep_for(10ms);
    }
  });
  f();
  running = false;
  sampler.join();
  return peak;
}

}  // namespace

int main(int argc, char** argv) {
  const args a = parse(argc, argv);
  const fs::path dir =
      fs::temp_directory_path() / numbered("mt_hostile_bench_", static_cast<std::uint64_t>(::getpid()));
  fs::create_directories(dir / "served");
  const std::uint64_t each = (a.mib << 20) / a.tensors;
  {
    std::vector<std::vector<std::byte>> values(a.tensors, std::vector<std::byte>(each));
    std::mt19937_64 rng(28);
    std::vector<metatensor::safetensors::tensor_input> inputs;
    for (std::size_t i = 0; i < a.tensors; ++i) {
      for (auto& b : values[i]) b = static_cast<std::byte>(rng());
      inputs.push_back({numbered("t", i), metatensor::safetensors::dtype::u8, {each}, values[i]});
    }
    metatensor::safetensors::write_file(dir / "served" / "model.safetensors", inputs);
  }
  const auto file_size = fs::file_size(dir / "served" / "model.safetensors");

  // The server process, forked before this process starts any thread.
  int port_pipe[2];
  int control_pipe[2];
  if (::pipe(port_pipe) != 0 || ::pipe(control_pipe) != 0) return 1;
  const pid_t child = ::fork();
  if (child < 0) return 1;
  if (child == 0) {
    ::close(port_pipe[0]);
    ::close(control_pipe[1]);
    serve_child(dir / "served", dir / "tls", port_pipe[1], control_pipe[0]);
  }
  ::close(port_pipe[1]);
  ::close(control_pipe[0]);
  std::uint16_t port = 0;
  if (::read(port_pipe[0], &port, sizeof(port)) != sizeof(port)) {
    std::fprintf(stderr, "the server did not start\n");
    return 1;
  }

  ms::client_options co;
  co.ca_file = dir / "tls" / "cert.pem";
  co.server_name = "localhost";
  co.open_timeout = 30s;
  const std::string url = numbered("metatensor://127.0.0.1:", port) + "/model.safetensors";
  auto fetch = [&] {
    const auto t0 = clock_type::now();
    auto f = ms::remote_file::open(url, co);
    for (const auto& r : f.get_all()) r.wait();
    return std::chrono::duration<double>(clock_type::now() - t0).count();
  };

  int rc = 0;
  try {
    const auto idle = tgtest::process_rss(child);
    tgtest::attack_config cfg;
    cfg.port = port;
    cfg.resource = "model.safetensors";
    cfg.tensor = "t0";
    cfg.slowloris = a.slowloris;
    cfg.initials_per_second = a.initials_per_second;
    cfg.probes_per_second = a.probes_per_second;
    // Rounds of one unloaded fetch then one loaded fetch (a fresh attack
    // each round), so that the machine's other work weighs on both alike.
    double unloaded = 1e9;
    double loaded = 1e9;
    std::vector<double> ratios;
    double cpu_unloaded = 0;  // server CPU seconds during the unloaded fetches
    double cpu_loaded = 0;    // ... during the loaded fetches
    double cpu_attack = 0;    // ... during 1 s of attack alone per round
    double attack_seconds = 0;
    tgtest::rss_kib rss_unloaded;
    tgtest::rss_kib rss_loaded;
    std::uint64_t initials = 0, probes = 0, resets = 0, slow_gets = 0;
    for (int round = 0; round < a.repeats; ++round) {
      double u = 0;
      const auto ru = with_peak_rss(child, [&] {
        const double c0 = cpu_seconds(child);
        u = fetch();
        cpu_unloaded += cpu_seconds(child) - c0;
      });
      double l = 0;
      const auto rl = with_peak_rss(child, [&] {
        tgtest::hostile_load attack(cfg);
        std::this_thread::sleep_for(500ms);  // slowloris settled, handshakes half-open
        const double c0 = cpu_seconds(child);
        const auto t0 = clock_type::now();
        std::this_thread::sleep_for(1s);
        attack_seconds += std::chrono::duration<double>(clock_type::now() - t0).count();
        const double c1 = cpu_seconds(child);
        cpu_attack += c1 - c0;
        l = fetch();
        cpu_loaded += cpu_seconds(child) - c1;
        initials += attack.initials_sent();
        probes += attack.probes_sent();
        resets += attack.resets_received();
        slow_gets += attack.slow_gets();
      });
      unloaded = std::min(unloaded, u);
      loaded = std::min(loaded, l);
      ratios.push_back(u / l);
      rss_unloaded.total = std::max(rss_unloaded.total, ru.total);
      rss_unloaded.anon = std::max(rss_unloaded.anon, ru.anon);
      rss_loaded.total = std::max(rss_loaded.total, rl.total);
      rss_loaded.anon = std::max(rss_loaded.anon, rl.anon);
    }
    std::sort(ratios.begin(), ratios.end());
    const double mb = static_cast<double>(file_size) / 1e6;
    std::printf("file: %.1f MB in %zu tensors; %d rounds of an unloaded then a loaded whole-file fetch\n", mb,
                a.tensors, a.repeats);
    std::printf(
        "unloaded: %8.1f MB/s (best)   server peak RSS %7.1f MiB (anon %6.1f MiB; idle %.1f / %.1f)\n",
        mb / unloaded, static_cast<double>(rss_unloaded.total) / 1024,
        static_cast<double>(rss_unloaded.anon) / 1024, static_cast<double>(idle.total) / 1024,
        static_cast<double>(idle.anon) / 1024);
    std::printf("loaded:   %8.1f MB/s (best)   server peak RSS %7.1f MiB (anon %6.1f MiB)\n", mb / loaded,
                static_cast<double>(rss_loaded.total) / 1024, static_cast<double>(rss_loaded.anon) / 1024);
    std::printf(
        "ratio loaded/unloaded: best runs %.2f, per round median %.2f (min %.2f, max %.2f); issue 28 goal "
        ">= 0.50: %s\n",
        unloaded / loaded, ratios[ratios.size() / 2], ratios.front(), ratios.back(),
        ratios[ratios.size() / 2] >= 0.5 ? "met" : "NOT met");
    const double gb = static_cast<double>(file_size) * a.repeats / 1e9;
    std::printf(
        "server CPU: %.2f s per GB served unloaded, %.2f s per GB under attack; the attack alone costs it "
        "%.1f %% "
        "of one core\n",
        cpu_unloaded / gb, cpu_loaded / gb, 100 * cpu_attack / attack_seconds);
    std::printf(
        "attack (all rounds): %llu Initials from 64 source address:port pairs, %llu unknown-CID probes (%llu "
        "stateless "
        "resets "
        "back), %zu slowloris connections with %llu never-read GETs\n",
        static_cast<unsigned long long>(initials), static_cast<unsigned long long>(probes),
        static_cast<unsigned long long>(resets), a.slowloris, static_cast<unsigned long long>(slow_gets));
    std::fflush(stdout);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    rc = 1;
  }
  ::close(control_pipe[1]);  // the server prints its counters and exits
  int status = 0;
  ::waitpid(child, &status, 0);
  std::error_code ec;
  fs::remove_all(dir, ec);
  return rc;
}

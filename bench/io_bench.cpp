// Files and streams benchmark (issue 4; not a test): scan rate of the
// thousand-message fixtures through the buffer scanner, positional reads,
// the memory mapping and HTTP range requests against nginx on loopback, and
// the HTTP requests / round trips needed to list N messages.
//
//   tensogram_io_bench [fixtures-dir]
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include <tensogram.hpp>

#include "nginx_server.hpp"

namespace {

std::vector<std::byte> slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  const std::vector<char> c((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(c.size());
  for (std::size_t i = 0; i < c.size(); ++i) out[i] = static_cast<std::byte>(c[i]);
  return out;
}

// Messages per second of `list` (which returns the number found), best of
// `repeats` timed runs of at least ~0.2 s each.
double rate(const std::function<std::size_t()>& list, int repeats = 3) {
  double best = 0;
  for (int r = 0; r < repeats; ++r) {
    std::size_t found = 0;
    int runs = 0;
    const auto t0 = std::chrono::steady_clock::now();
    double secs = 0;
    do {
      found += list();
      ++runs;
      secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } while (secs < 0.2);
    best = std::max(best, static_cast<double>(found) / secs);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const std::filesystem::path dir =
      argc > 1 ? std::filesystem::path(argv[1]) : std::filesystem::path(TENSOGRAM_FIXTURES) / "tgm";
  std::printf("Scan rate, messages/s (best of 3):\n");
  std::printf("%-26s %14s %14s %14s %14s %14s\n", "file", "buffer scan", "file (pread)", "file (mmap)",
              "remote bidir", "remote fwd");
  std::unique_ptr<tgtest::nginx_server> server;
  try {
    server = std::make_unique<tgtest::nginx_server>(dir);
  } catch (const std::exception& e) {
    std::printf("(remote columns skipped: %s)\n", e.what());
  }
  for (const char* name : {"thousand-msg.tgm", "thousand-msg-footer.tgm"}) {
    const std::filesystem::path p = dir / name;
    const std::vector<std::byte> whole = slurp(p);
    const double buf = rate([&] { return tensogram::scan(whole).size(); });
    const double pread = rate([&] { return tensogram::file::open(p).message_count(); });
    const double mmap = rate([&] { return tensogram::file::open_mmap(p).message_count(); });
    double rb = 0;
    double rf = 0;
    if (server) {
      rb = rate([&] { return tensogram::file::open_remote(server->url(name)).message_count(); }, 1);
      rf = rate(
          [&] {
            return tensogram::file::open_remote(server->url(name), {}, tensogram::scan_mode::forward)
                .message_count();
          },
          1);
    }
    std::printf("%-26s %14.0f %14.0f %14.0f %14.0f %14.0f\n", name, buf, pread, mmap, rb, rf);
  }
  if (!server) return 0;

  std::printf("\nHTTP cost of listing N messages (requests incl. 1 HEAD / round trips):\n");
  std::printf("%-26s %6s %22s %22s\n", "file", "N", "bidirectional", "forward");
  for (const char* name :
       {"single-msg.tgm", "ten-msg.tgm", "hundred-msg.tgm", "thousand-msg.tgm", "single-msg-footer.tgm",
        "ten-msg-footer.tgm", "hundred-msg-footer.tgm", "thousand-msg-footer.tgm"}) {
    tensogram::file b = tensogram::file::open_remote(server->url(name));
    tensogram::file f = tensogram::file::open_remote(server->url(name), {}, tensogram::scan_mode::forward);
    const std::size_t n = b.message_count();
    (void)f.message_count();
    const auto sb = b.source().stats();
    const auto sf = f.source().stats();
    std::printf("%-26s %6zu %10llu / %-10llu %10llu / %-10llu\n", name, n,
                static_cast<unsigned long long>(sb.requests), static_cast<unsigned long long>(sb.round_trips),
                static_cast<unsigned long long>(sf.requests),
                static_cast<unsigned long long>(sf.round_trips));
  }

  std::printf("\nHTTP cost of object access (thousand-msg-footer.tgm, message 500):\n");
  {
    tensogram::file f = tensogram::file::open_remote(server->url("thousand-msg-footer.tgm"));
    (void)f.message_count();
    auto s0 = f.source().stats();
    (void)f.decode_object(500, 0);
    auto s1 = f.source().stats();
    (void)f.decode_object(500, 0);
    auto s2 = f.source().stats();
    std::printf("  first decode_object: %llu request(s), %llu bytes; again: %llu request(s), %llu bytes\n",
                static_cast<unsigned long long>(s1.requests - s0.requests),
                static_cast<unsigned long long>(s1.bytes - s0.bytes),
                static_cast<unsigned long long>(s2.requests - s1.requests),
                static_cast<unsigned long long>(s2.bytes - s1.bytes));
  }
  return 0;
}

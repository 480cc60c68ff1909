// Interoperability with a QUIC stack that is not ngtcp2 (issue 28 item 3):
// Cloudflare's quiche, through the @matrixai/quic bindings for Node.js
// (tests/interop/quiche/peer.mjs), does the handshake with our server and
// fetches tensors per spec 06 §10 — also through a Retry round trip — and
// refuses a server whose certificate is not the pinned one.
//
// The peer's packages come from the npm registry: CTest's setup test
// quic_interop_peer_install (tests/interop/quiche/install_peer.sh) runs `npm ci`
// into the build tree. Without them, or without `node`, the tests are skipped,
// unless TENSOGRAM_REQUIRE_INTEROP=1 makes that a failure.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "metatensor/safetensors.hpp"
#include "metatensor/stream_server.hpp"
#include "src/metatensor/streaming/quic/quic_engine.hpp"
#include "tensogram/core/buffer.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;
namespace ms = metatensor::streaming;
using namespace std::chrono_literals;

const fs::path peer_dir = TENSOGRAM_QUICHE_PEER_DIR;

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The first `node` on PATH, or empty.
fs::path find_node() {
  const char* path = std::getenv("PATH");
  std::string rest = path != nullptr ? path : "";
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const fs::path candidate = fs::path(rest.substr(0, colon)) / "node";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string::npos) break;
    rest.erase(0, colon + 1);
  }
  return {};
}

struct run_result {
  int exit_code = -1;  // -1: killed after the time limit
  std::string out;
  std::string err;
};

// Runs `argv` with stdout and stderr to files, killed after `limit`.
run_result run(const std::vector<std::string>& args, const fs::path& scratch, std::chrono::seconds limit) {
  std::vector<std::string> a = args;
  std::vector<char*> argv;
  for (auto& s : a) argv.push_back(s.data());
  argv.push_back(nullptr);
  const fs::path out = scratch / "peer.out";
  const fs::path err = scratch / "peer.err";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  run_result r;
  if (rc != 0) {
    r.err = std::string("posix_spawn: ") + std::strerror(rc);
    return r;
  }
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      r.out = read_text(out);
      r.err = read_text(err) + "\n(killed after the time limit)";
      return r;
    }
    std::this_thread::sleep_for(20ms);
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_text(out);
  r.err = read_text(err);
  return r;
}

class QuicInterop : public ::testing::Test {
 protected:
  void SetUp() override {
    node_ = find_node();
    const bool ready = !node_.empty() && fs::exists(peer_dir / "node_modules" / "@matrixai" / "quic");
    if (!ready) {
      const char* require = std::getenv("TENSOGRAM_REQUIRE_INTEROP");
      if (require != nullptr && std::string(require) == "1") {
        FAIL() << "the quiche peer is not installed (node: " << (node_.empty() ? "missing" : node_.string())
               << ") in " << peer_dir.string()
               << "; see the output of the CTest test quic_interop_peer_install";
      }
      GTEST_SKIP() << "the quiche peer is not installed in " << peer_dir.string()
                   << ": the CTest test quic_interop_peer_install (npm ci) installs it";
    }
    std::random_device rd;
    dir_ =
        fs::temp_directory_path() / ("mt_interop_" + std::to_string(::getpid()) + "_" + std::to_string(rd()));
    fs::create_directories(dir_ / "data");
    fs::create_directories(dir_ / "out");
    values_ = {std::vector<std::byte>(100000), std::vector<std::byte>(1u << 20)};
    std::mt19937 rng(3);
    for (auto& v : values_) {
      for (auto& b : v) b = static_cast<std::byte>(rng());
    }
    namespace st = metatensor::safetensors;
    const std::vector<st::tensor_input> inputs{{"small", st::dtype::u8, {values_[0].size()}, values_[0]},
                                               {"large", st::dtype::u8, {values_[1].size()}, values_[1]}};
    st::write_file(dir_ / "data" / "x.safetensors", inputs);
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }

  std::unique_ptr<ms::server> start(bool always_retry) {
    ms::server_options o;
    o.port = 0;
    o.tls_dir = dir_ / "tls";
    o.testing_always_retry = always_retry;
    auto s = std::make_unique<ms::server>(dir_ / "data", o);
    s->start();
    return s;
  }

  run_result fetch(const ms::server& s, const fs::path& cert) {
    return run({node_.string(), (peer_dir / "peer.mjs").string(), "127.0.0.1", std::to_string(s.port()),
                "x.safetensors", cert.string(), (dir_ / "out").string(), "small", "large"},
               dir_, 60s);
  }

  // What the peer wrote is the file's header and the tensors' bytes.
  void expect_fetched(const run_result& r) {
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string file = read_text(dir_ / "data" / "x.safetensors");
    const auto base = metatensor::safetensors::file::from_buffer(tensogram::buffer::borrowed(
        std::span<const std::byte>(reinterpret_cast<const std::byte*>(file.data()), file.size())));
    EXPECT_EQ(read_text(dir_ / "out" / "header.bin"), file.substr(0, base.data_offset()));
    EXPECT_EQ(read_text(dir_ / "out" / "small.bin"),
              std::string(reinterpret_cast<const char*>(values_[0].data()), values_[0].size()));
    EXPECT_EQ(read_text(dir_ / "out" / "large.bin"),
              std::string(reinterpret_cast<const char*>(values_[1].data()), values_[1].size()));
    EXPECT_NE(r.out.find("\"file_size\":" + std::to_string(file.size())), std::string::npos) << r.out;
  }

  fs::path node_;
  fs::path dir_;
  std::vector<std::vector<std::byte>> values_;
};

TEST_F(QuicInterop, QuicheFetchesTensors) {
  auto server = start(false);
  expect_fetched(fetch(*server, server->certificate()));
  EXPECT_EQ(server->stats().accepted, 1u);
}

TEST_F(QuicInterop, QuicheFollowsRetry) {
  auto server = start(true);
  expect_fetched(fetch(*server, server->certificate()));
  EXPECT_GE(server->stats().retries_sent, 1u);
  EXPECT_EQ(server->stats().invalid_tokens, 0u);
}

TEST_F(QuicInterop, QuicheRefusesAnotherCertificate) {
  auto server = start(false);
  const fs::path other = dir_ / "other.pem";
  metatensor::streaming::quic::generate_self_signed(other, dir_ / "other.key", {"localhost", "127.0.0.1"});
  const auto r = fetch(*server, other);
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "out" / "header.bin"));
}

}  // namespace

// `metatensor serve` and `metatensor fetch` end to end (spec 06 §10): the
// built binary serves a scratch directory on a free port (--port 0; the
// port and certificate are read from serve's first stdout line) and is
// fetched from by a second run of the binary; outputs are compared byte for
// byte with the served file. The HTTP fallback (§10.9) is fetched from a
// throwaway nginx.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <metatensor.hpp>

#include "../io/nginx_server.hpp"
#include "../metatensor/worked_file.hpp"
#include "test_support.hpp"

extern char** environ;

namespace {

using namespace std::chrono_literals;
using tensogram::cli::test::read_file;
using tensogram::cli::test::run_program;
using tensogram::cli::test::run_result;
using tensogram::cli::test::scratch_dir;

run_result mt(const std::vector<std::string>& args) {
  return run_program(METATENSOR_CLI, args);
}

// `metatensor serve DIR --port 0 ...` as a child process: its first stdout
// line gives the URL base and certificate. Stopped with SIGTERM (the exit
// status is checked by `stop`) or killed on destruction.
class serve_process {
 public:
  serve_process(const std::filesystem::path& dir, const std::filesystem::path& tls_dir,
                std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {METATENSOR_CLI, "serve",         dir.string(), "--port", "0",
                                     "--tls-dir",    tls_dir.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    out_fd_ = fds[0];
    err_path_ = tls_dir.parent_path() / "serve.stderr";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_addopen(&actions, 2, err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int rc = ::posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (rc != 0) throw std::runtime_error(std::string("posix_spawn: ") + std::strerror(rc));
    first_line_ = read_line(10s);
  }
  serve_process(const serve_process&) = delete;
  serve_process& operator=(const serve_process&) = delete;
  ~serve_process() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
    ::close(out_fd_);
  }

  [[nodiscard]] const std::string& first_line() const { return first_line_; }
  /// metatensor://127.0.0.1:PORT/ and the certificate path, from the first line.
  [[nodiscard]] std::string url_base() const { return match(1); }
  [[nodiscard]] std::string certificate() const { return match(2); }
  [[nodiscard]] std::string stderr_text() const {
    const auto b = read_file(err_path_);
    return std::string(reinterpret_cast<const char*>(b.data()), b.size());
  }

  /// Sends `signo` and returns the exit status (-1 when it did not exit within 10 s).
  int stop(int signo = SIGTERM) {
    ::kill(pid_, signo);
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(10ms);
    }
    return -1;
  }

 private:
  std::string read_line(std::chrono::milliseconds limit) const {
    std::string line;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{out_fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char c = 0;
      if (::read(out_fd_, &c, 1) != 1) break;  // EOF: serve exited
      if (c == '\n') return line;
      line += c;
    }
    return line;
  }

  std::string match(std::size_t group) const {
    static const std::regex re(
        R"(^serving .* at (metatensor://127\.0\.0\.1:[0-9]+/) \(certificate: (.*)\)$)");
    std::smatch m;
    return std::regex_match(first_line_, m, re) ? m[group].str() : std::string();
  }

  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::filesystem::path err_path_;
  std::string first_line_;
};

// A plain safetensors file of three tensors with random bytes (one of a few
// MB, so transfers take several flow-control windows).
std::vector<std::byte> write_model(const std::filesystem::path& path) {
  std::mt19937_64 rng(12);
  const auto random_bytes = [&](std::size_t n) {
    std::vector<std::byte> v(n);
    for (auto& b : v) b = static_cast<std::byte>(rng());
    return v;
  };
  const auto big = random_bytes(3'000'000);
  const auto mid = random_bytes(40'000 * 4);
  const auto tiny = random_bytes(10 * 8);
  const std::vector<metatensor::safetensors::tensor_input> tensors = {
      {"big", metatensor::safetensors::dtype::u8, {3'000'000}, big},
      {"mid", metatensor::safetensors::dtype::f32, {40'000}, mid},
      {"tiny", metatensor::safetensors::dtype::i64, {10}, tiny},
  };
  metatensor::safetensors::write_file(path, tensors);
  return read_file(path);
}

// Files in `dir` whose name contains ".tmp-" (fetch's temporary files).
std::vector<std::string> leftovers(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.find(".tmp-") != std::string::npos) out.push_back(name);
  }
  return out;
}

class MetatensorStreamCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(served());
    model_ = write_model(served() / "x.safetensors");
    server_.emplace(served(), dir_ / "tls");
    ASSERT_FALSE(server_->url_base().empty())
        << "first line: '" << server_->first_line() << "'\nstderr: " << server_->stderr_text();
    ASSERT_TRUE(std::filesystem::exists(server_->certificate())) << server_->first_line();
  }

  [[nodiscard]] std::filesystem::path served() const { return dir_ / "served"; }
  [[nodiscard]] std::string url(const std::string& name) const { return server_->url_base() + name; }

  scratch_dir dir_;
  std::vector<std::byte> model_;
  std::optional<serve_process> server_;
};

TEST_F(MetatensorStreamCli, FetchAllIsByteIdenticalAndServeStopsOnSigterm) {
  const auto out = dir_ / "copy.safetensors";
  const auto r = mt({"fetch", "--ca-file", server_->certificate(), url("x.safetensors"), "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err << "\nserver: " << server_->stderr_text();
  EXPECT_EQ(r.out.rfind("fetched 3 tensors, 3160080 bytes in ", 0), 0u) << r.out;
  EXPECT_TRUE(read_file(out) == model_);
  EXPECT_TRUE(leftovers(dir_.path()).empty());
  EXPECT_EQ(server_->stop(SIGTERM), 0) << server_->stderr_text();
}

TEST_F(MetatensorStreamCli, FetchNamedTensorsLeavesTheOthersZero) {
  const auto out = dir_ / "part.safetensors";
  const auto r = mt({"fetch", "--ca-file", server_->certificate(), "--urgency", "0", "--parallel", "1",
                     url("x.safetensors"), "tiny", "mid", "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("fetched 2 tensors, 160080 bytes in ", 0), 0u) << r.out;
  const auto got = read_file(out);
  ASSERT_EQ(got.size(), model_.size());
  // The local file is valid, with the header and the fetched tensors as served.
  const auto local = metatensor::safetensors::file::open(out);
  const auto remote = metatensor::safetensors::file::from_buffer(tensogram::buffer::owned(model_));
  ASSERT_EQ(local.data_offset(), remote.data_offset());
  EXPECT_TRUE(std::equal(got.begin(), got.begin() + static_cast<std::ptrdiff_t>(local.data_offset()),
                         model_.begin()));
  for (const char* name : {"tiny", "mid"}) {
    const auto a = local.at(name).bytes();
    const auto b = remote.at(name).bytes();
    EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << name;
  }
  const auto big = local.at("big").bytes();
  EXPECT_TRUE(std::all_of(big.begin(), big.end(), [](std::byte b) { return b == std::byte{0}; }));
}

TEST_F(MetatensorStreamCli, MissingResourceExitsOneNamingNotFoundAndKeepsTheOutput) {
  const auto out = dir_ / "keep.safetensors";
  tensogram::cli::test::write_file(out, tensogram::cli::test::bytes_of("previous contents"));
  const auto r =
      mt({"fetch", "--ca-file", server_->certificate(), url("missing.safetensors"), "-o", out.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("error: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("MT_NOT_FOUND"), std::string::npos) << r.err;
  EXPECT_TRUE(read_file(out) == tensogram::cli::test::bytes_of("previous contents"));
  EXPECT_TRUE(leftovers(dir_.path()).empty());
}

TEST_F(MetatensorStreamCli, UnknownTensorNameExitsOne) {
  const auto out = dir_ / "none.safetensors";
  const auto r =
      mt({"fetch", "--ca-file", server_->certificate(), url("x.safetensors"), "nope", "-o", out.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("nope"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_TRUE(leftovers(dir_.path()).empty());
}

TEST_F(MetatensorStreamCli, SelfSignedCertificateIsRefusedUnlessTrustedOrInsecure) {
  const auto out = dir_ / "v.safetensors";
  const auto refused = mt({"fetch", url("x.safetensors"), "-o", out.string()});
  EXPECT_EQ(refused.exit_code, 1) << refused.out;
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_TRUE(leftovers(dir_.path()).empty());
  const auto insecure = mt({"fetch", "--insecure", url("x.safetensors"), "-o", out.string()});
  ASSERT_EQ(insecure.exit_code, 0) << insecure.err;
  EXPECT_TRUE(read_file(out) == model_);
}

// Issue 28 item 4: `fetch` runs the BlobRef checks (spec 06 §6.4, §8.2
// step 8) on what arrived. The §6.7 worked example (two tensors with
// heaps) is served as written and with a BlobRef of "labels" pointing past
// its heap, which the server serves as it is (it validates headers only).
class MetatensorStreamCliValidate : public MetatensorStreamCli {
 protected:
  void SetUp() override {
    MetatensorStreamCli::SetUp();
    good_ = metatensor_test::worked_file();
    bad_ = metatensor_test::worked_file_bad_label();
    ASSERT_EQ(good_.size(), bad_.size());
    ASSERT_FALSE(good_ == bad_);
    tensogram::cli::test::write_file(served() / "good.safetensors", good_);
    tensogram::cli::test::write_file(served() / "bad.safetensors", bad_);
  }

  run_result fetch(const std::string& name, const std::filesystem::path& out, bool validate = true) {
    std::vector<std::string> args = {"fetch",   "--ca-file", server_->certificate(),
                                     url(name), "-o",        out.string()};
    if (!validate) args.emplace_back("--no-validate");
    return mt(args);
  }

  std::vector<std::byte> good_;
  std::vector<std::byte> bad_;
};

TEST_F(MetatensorStreamCliValidate, AValidFileIsCopiedByteForByte) {
  const auto out = dir_ / "good-copy.safetensors";
  const auto r = fetch("good.safetensors", out);
  ASSERT_EQ(r.exit_code, 0) << r.err << "\nserver: " << server_->stderr_text();
  EXPECT_TRUE(read_file(out) == good_);
  EXPECT_TRUE(leftovers(dir_.path()).empty());
}

TEST_F(MetatensorStreamCliValidate, BlobRefOutOfBoundsExitsOneAndWritesNothing) {
  const auto fresh = dir_ / "fresh.safetensors";
  const auto r = fetch("bad.safetensors", fresh);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  // The error name and where: the tensor and the element (worked_file.hpp).
  EXPECT_NE(r.err.find("error: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("MT_BLOB_BOUNDS"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\"labels\" element 1"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(fresh));
  EXPECT_TRUE(leftovers(dir_.path()).empty());

  // An existing destination keeps its bytes.
  const auto existing = dir_ / "existing.safetensors";
  tensogram::cli::test::write_file(existing, good_);
  const auto again = fetch("bad.safetensors", existing);
  EXPECT_EQ(again.exit_code, 1) << again.out;
  EXPECT_NE(again.err.find("MT_BLOB_BOUNDS"), std::string::npos) << again.err;
  EXPECT_TRUE(read_file(existing) == good_);
  EXPECT_TRUE(leftovers(dir_.path()).empty());
}

TEST_F(MetatensorStreamCliValidate, NoValidateKeepsTheRawCopy) {
  const auto out = dir_ / "raw.safetensors";
  const auto r = fetch("bad.safetensors", out, /*validate=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(read_file(out) == bad_);
  EXPECT_TRUE(leftovers(dir_.path()).empty());
  // What was copied is what `validate` rejects.
  const auto v = mt({"validate", out.string()});
  EXPECT_NE(v.exit_code, 0) << v.out;
}

TEST_F(MetatensorStreamCliValidate, OnlyTensorsFetchedAreChecked) {
  // "particles" is intact in the bad file; "labels" is not fetched and stays zero.
  const auto out = dir_ / "particles.safetensors";
  const auto r = mt({"fetch", "--ca-file", server_->certificate(), url("bad.safetensors"), "particles", "-o",
                     out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto bad_labels = mt(
      {"fetch", "--ca-file", server_->certificate(), url("bad.safetensors"), "labels", "-o", out.string()});
  EXPECT_EQ(bad_labels.exit_code, 1);
  EXPECT_NE(bad_labels.err.find("MT_BLOB_BOUNDS"), std::string::npos) << bad_labels.err;
}

TEST_F(MetatensorStreamCli, ServeStopsOnSigint) {
  EXPECT_EQ(server_->stop(SIGINT), 0) << server_->stderr_text();
}

// The protection flags (issue 28): with --retry-threshold 0 every client
// proves its address with a Retry round trip first, which serve reports
// (rate limited) on stderr even without --log.
TEST(MetatensorStreamCliServe, ProtectionFlagsAreHonoured) {
  const scratch_dir dir;
  std::filesystem::create_directories(dir / "served");
  const auto model = write_model(dir / "served" / "x.safetensors");
  serve_process server(dir / "served", dir / "tls",
                       {"--retry-threshold", "0", "--max-connections", "4", "--max-connections-per-address",
                        "2", "--max-streams", "16", "--max-queued-mib", "1", "--idle-timeout", "5",
                        "--handshake-timeout", "2", "--resets-per-second", "10"});
  ASSERT_FALSE(server.url_base().empty()) << server.stderr_text();
  const auto out = dir / "copy.safetensors";
  const auto r = mt(
      {"fetch", "--ca-file", server.certificate(), server.url_base() + "x.safetensors", "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err << "\nserver: " << server.stderr_text();
  EXPECT_TRUE(read_file(out) == model);
  EXPECT_EQ(server.stop(SIGTERM), 0);
  EXPECT_NE(server.stderr_text().find("answered with Retry"), std::string::npos) << server.stderr_text();
  EXPECT_EQ(mt({"serve", dir.path().string(), "--max-streams", "1"}).exit_code, 2);
  EXPECT_EQ(mt({"serve", dir.path().string(), "--idle-timeout", "0"}).exit_code, 2);
}

TEST(MetatensorStreamCliUsage, UsageErrorsExitTwo) {
  const scratch_dir dir;
  EXPECT_EQ(mt({"fetch", "ftp://host/x", "-o", (dir / "o").string()}).exit_code, 2);
  EXPECT_EQ(mt({"fetch", "metatensor://127.0.0.1:1/x"}).exit_code, 2);  // no -o
  EXPECT_EQ(
      mt({"fetch", "--urgency", "8", "metatensor://127.0.0.1:1/x", "-o", (dir / "o").string()}).exit_code, 2);
  EXPECT_EQ(
      mt({"fetch", "--parallel", "0", "metatensor://127.0.0.1:1/x", "-o", (dir / "o").string()}).exit_code,
      2);
  EXPECT_EQ(mt({"serve"}).exit_code, 2);
  EXPECT_EQ(mt({"serve", dir.path().string(), "--cert", (dir / "c.pem").string()}).exit_code, 2);  // no --key
  EXPECT_EQ(mt({"serve", dir.path().string(), "--port", "70000"}).exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(dir / "o"));
}

TEST(MetatensorStreamCliUsage, ServeRefusesAMissingDirectory) {
  const scratch_dir dir;
  const auto r = mt({"serve", (dir / "absent").string(), "--port", "0", "--tls-dir", (dir / "tls").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not a directory"), std::string::npos) << r.err;
}

TEST(MetatensorStreamCliUsage, ServeRefusesAResetSecretOfAnotherSize) {
  const scratch_dir dir;
  std::ofstream(dir / "reset.key", std::ios::binary) << "too short";
  const auto r = mt({"serve", dir.path().string(), "--port", "0", "--tls-dir", (dir / "tls").string(),
                     "--reset-secret", (dir / "reset.key").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("reset.key: a stateless reset secret must be 32 bytes, this file has 9"),
            std::string::npos)
      << r.err;
}

TEST(MetatensorStreamCliHttp, FetchOverHttpRangesFromNginx) {
  TGTEST_SKIP_WITHOUT_NGINX();
  const scratch_dir dir;
  std::filesystem::create_directories(dir / "www");
  const auto model = write_model(dir / "www" / "x.safetensors");
  const tgtest::nginx_server nginx(dir / "www");
  const auto out = dir / "copy.safetensors";
  const auto r = mt({"fetch", "--parallel", "2", nginx.url("x.safetensors"), "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(read_file(out) == model);
  const auto missing = mt({"fetch", nginx.url("missing.safetensors"), "-o", out.string()});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(read_file(out) == model);  // untouched
  EXPECT_TRUE(leftovers(dir.path()).empty());
}

}  // namespace

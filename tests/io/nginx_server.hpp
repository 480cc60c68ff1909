// A throwaway nginx on loopback for the remote-access tests (spec 04 Part
// E.3: remote files need only HEAD and Range GETs, which nginx serves for
// static files exactly as object stores do).
//
// Each server gets its own temporary prefix directory holding the config, pid
// file, logs and temp paths, listens on 127.0.0.1 on a free port, and runs in
// the foreground as a single process (`daemon off; master_process off;`), so
// killing the child we started stops it completely. The kernel kills it
// too if the test process dies first (PR_SET_PDEATHSIG; that signal follows
// the thread that started it, so start servers from the main test thread).
// The access log has one line per request ("METHOD URI "RANGE" STATUS BYTES
// CONNECTION") for tests that count what reached the server and which
// connections it came over.
//
// If nginx is not installed, tests skip with a clear message, unless the
// environment sets TENSOGRAM_REQUIRE_NGINX=1 (CI), in which case they fail.
// TENSOGRAM_NGINX may name another nginx binary.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

extern char** environ;  // POSIX: the environment handed to nginx

namespace tgtest {

/// The nginx binary the tests use.
inline std::filesystem::path nginx_binary() {
  if (const char* env = std::getenv("TENSOGRAM_NGINX"); env != nullptr && *env != '\0') return env;
  return "/usr/sbin/nginx";
}

/// True when CI demands the remote tests run (TENSOGRAM_REQUIRE_NGINX=1).
inline bool nginx_required() {
  const char* env = std::getenv("TENSOGRAM_REQUIRE_NGINX");
  return env != nullptr && std::string_view(env) == "1";
}

/// Why the remote tests cannot run here, or nothing if they can.
inline std::optional<std::string> nginx_unavailable() {
  const auto bin = nginx_binary();
  if (::access(bin.c_str(), X_OK) != 0) {
    return "nginx not found at " + bin.string() +
           " (install nginx-light, or set TENSOGRAM_NGINX); remote tests need a local HTTP server";
  }
  return std::nullopt;
}

/// Skips the current test when nginx is missing, or fails it when the
/// environment requires nginx. Use at the top of a test body or SetUp().
#define TGTEST_SKIP_WITHOUT_NGINX()                                                                     \
  do {                                                                                                  \
    if (const auto tgtest_why_ = ::tgtest::nginx_unavailable()) {                                       \
      if (::tgtest::nginx_required()) GTEST_FAIL() << *tgtest_why_ << " but TENSOGRAM_REQUIRE_NGINX=1"; \
      GTEST_SKIP() << *tgtest_why_;                                                                     \
    }                                                                                                   \
  } while (false)

/// One access-log line, parsed.
struct access_entry {
  std::string method;
  std::string uri;
  std::string range;  // the Range header, "-" when absent
  int status = 0;
  std::uint64_t bytes = 0;
  std::uint64_t connection = 0;
};

inline access_entry parse_access_line(const std::string& line) {
  access_entry e;
  std::istringstream in(line);
  in >> e.method >> e.uri;
  in >> std::ws;
  if (in.peek() == '"') {
    in.get();
    std::getline(in, e.range, '"');
  }
  in >> e.status >> e.bytes >> e.connection;
  return e;
}

/// A fresh directory under the system temp dir that nginx can read, removed
/// with its contents on destruction: the server's private prefix (config,
/// logs, temp paths), and a root for tests' served files.
class nginx_dir {
 public:
  explicit nginx_dir(std::string_view stem) {
    std::string tmpl = (std::filesystem::temp_directory_path() / (std::string(stem) + "-XXXXXX")).string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
      throw std::system_error(errno, std::generic_category(), "mkdtemp " + tmpl);
    }
    path_ = tmpl;
    // nginx may drop privileges when started as root: keep the tree readable.
    std::filesystem::permissions(
        path_, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                   std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                   std::filesystem::perms::others_exec);
  }
  nginx_dir(const nginx_dir&) = delete;
  nginx_dir& operator=(const nginx_dir&) = delete;
  ~nginx_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};

/// nginx serving `root` at http://127.0.0.1:<port>/.
class nginx_server {
 public:
  /// Starts nginx and waits (bounded) until it accepts connections.
  /// `extra_server_config` is pasted into the `server { }` block (extra
  /// locations for a test). Throws std::runtime_error with nginx's error log
  /// if it cannot start.
  explicit nginx_server(std::filesystem::path root, std::string extra_server_config = {})
      : root_(std::filesystem::absolute(std::move(root))), extra_(std::move(extra_server_config)) {
    std::string last_failure;
    // The port is chosen by binding port 0 and released before nginx binds
    // it, so another process can take it in between: retry with a new port.
    for (int attempt = 0; attempt < 8; ++attempt) {
      port_ = free_port();
      write_config();
      if (launch(last_failure)) return;
      if (last_failure.find("Address already in use") == std::string::npos) break;
    }
    throw std::runtime_error("cannot start nginx: " + last_failure);
  }

  nginx_server(const nginx_server&) = delete;
  nginx_server& operator=(const nginx_server&) = delete;
  ~nginx_server() { stop(); }

  [[nodiscard]] int port() const noexcept { return port_; }
  [[nodiscard]] std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  /// The URL of `path` (relative to the served root).
  [[nodiscard]] std::string url(std::string_view path) const {
    std::string out = base_url();
    if (path.empty() || path.front() != '/') out += '/';
    out += path;
    return out;
  }
  [[nodiscard]] const std::filesystem::path& root() const noexcept { return root_; }
  [[nodiscard]] bool running() const noexcept { return pid_ > 0; }

  /// Kills nginx and reaps it: later requests see a refused connection.
  void stop() noexcept {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }

  /// Freezes nginx (SIGSTOP): connections are still accepted by the kernel
  /// but never answered, which exercises client timeouts.
  void pause() noexcept {
    if (pid_ > 0) ::kill(pid_, SIGSTOP);
  }
  void resume() noexcept {
    if (pid_ > 0) ::kill(pid_, SIGCONT);
  }

  /// The access log, one entry per request:
  /// METHOD URI "RANGE" STATUS BYTES CONNECTION (nginx's connection serial
  /// number, to see which requests shared a kept-alive connection).
  [[nodiscard]] std::vector<std::string> access_log() const {
    std::vector<std::string> lines;
    std::ifstream in(prefix_.path() / "access.log");
    for (std::string line; std::getline(in, line);) {
      if (!line.empty()) lines.push_back(line);
    }
    return lines;
  }

  /// Waits until the access log has at least `n` lines (nginx writes a line
  /// just after sending the reply, so it can trail the client by a moment),
  /// then returns the log.
  [[nodiscard]] std::vector<std::string> wait_for_log(
      std::size_t n, std::chrono::milliseconds limit = std::chrono::seconds(5)) const {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    auto lines = access_log();
    while (lines.size() < n && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      lines = access_log();
    }
    return lines;
  }

  /// The access log, parsed (waiting for at least `at_least` entries).
  [[nodiscard]] std::vector<access_entry> requests(std::size_t at_least = 0) const {
    std::vector<access_entry> out;
    for (const auto& line : wait_for_log(at_least)) out.push_back(parse_access_line(line));
    return out;
  }

  /// The entries for `uri` only (waiting, bounded, for at least `at_least`):
  /// immune to stray lines of other tests' requests.
  [[nodiscard]] std::vector<access_entry> requests_for(
      std::string_view uri, std::size_t at_least = 0,
      std::chrono::milliseconds limit = std::chrono::seconds(5)) const {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
      std::vector<access_entry> out;
      for (const auto& line : access_log()) {
        access_entry e = parse_access_line(line);
        if (e.uri == uri) out.push_back(std::move(e));
      }
      if (out.size() >= at_least || std::chrono::steady_clock::now() >= deadline) return out;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  /// Empties the access log (nginx keeps appending to the same file).
  /// First waits for the log to settle: nginx writes a request's line just
  /// after sending the reply, so the line of a request the client already
  /// saw completed may still be on its way, and would otherwise land in
  /// the freshly emptied log.
  void clear_access_log() const {
    const auto log = prefix_.path() / "access.log";
    std::error_code ec;
    auto last = std::filesystem::file_size(log, ec);
    for (int stable = 0, polls = 0; stable < 2 && polls < 100; ++polls) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      const auto now = std::filesystem::file_size(log, ec);
      stable = now == last ? stable + 1 : 0;
      last = now;
    }
    std::ofstream(log, std::ios::trunc);
  }

  [[nodiscard]] std::string error_log() const { return slurp(prefix_.path() / "error.log"); }

 private:
  static std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }

  static int free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "socket");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      const int err = errno;
      ::close(fd);
      throw std::system_error(err, std::generic_category(), "bind 127.0.0.1:0");
    }
    ::close(fd);
    return ntohs(addr.sin_port);
  }

  static bool accepts(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return false;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return ok;
  }

  void write_config() const {
    const auto p = prefix_.path();
    const auto q = [](const std::filesystem::path& x) { return "\"" + x.string() + "\""; };
    std::ofstream conf(p / "nginx.conf", std::ios::trunc);
    conf << "daemon off;\n"
         << "master_process off;\n"
         << "worker_processes 1;\n"
         << "pid " << q(p / "nginx.pid") << ";\n"
         << "error_log " << q(p / "error.log") << " notice;\n"
         << "events { worker_connections 1024; }\n"
         << "http {\n"
         << "  log_format counted '$request_method $uri \"$http_range\" $status $body_bytes_sent "
            "$connection';\n"
         << "  access_log " << q(p / "access.log")
         << " counted;\n"
         // Every temp path inside the prefix: the compiled-in defaults
         // (/var/lib/nginx/...) are not writable for ordinary users.
         << "  client_body_temp_path " << q(p / "body") << ";\n"
         << "  proxy_temp_path " << q(p / "proxy") << ";\n"
         << "  fastcgi_temp_path " << q(p / "fastcgi") << ";\n"
         << "  uwsgi_temp_path " << q(p / "uwsgi") << ";\n"
         << "  scgi_temp_path " << q(p / "scgi") << ";\n"
         << "  default_type application/octet-stream;\n"
         // Keep connections open for whole test runs (a forward scan of
         // thousand-msg.tgm is over a thousand requests).
         << "  keepalive_requests 1000000;\n"
         << "  keepalive_timeout 300s;\n"
         << "  server {\n"
         << "    listen 127.0.0.1:" << port_ << ";\n"
         << "    root " << q(root_) << ";\n"
         << "    location / { }\n"
         << extra_ << "\n"
         << "  }\n"
         << "}\n";
    if (!conf) throw std::runtime_error("cannot write " + (p / "nginx.conf").string());
  }

  // Spawns nginx; true once it accepts connections, false (with the reason)
  // if it exited or did not come up in time.
  bool launch(std::string& failure) {
    const auto p = prefix_.path();
    const std::string bin = nginx_binary().string();
    const std::string prefix = p.string() + "/";
    const std::string conf = (p / "nginx.conf").string();
    const std::string err = (p / "error.log").string();
    const std::string out = (p / "stderr.log").string();
    std::vector<std::string> args = {bin, "-p", prefix, "-c", conf, "-e", err};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);

    // fork + exec rather than posix_spawn, for PR_SET_PDEATHSIG: if the
    // test process dies (a crash, an abort), the kernel kills nginx too
    // instead of leaving it listening. Only async-signal-safe calls run
    // between fork and exec; everything they use is prepared above.
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
      failure = std::string("fork: ") + std::strerror(errno);
      return false;
    }
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
      const int in = ::open("/dev/null", O_RDONLY);
      const int log = ::open(out.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (in >= 0) ::dup2(in, STDIN_FILENO);
      if (log >= 0) {
        ::dup2(log, STDOUT_FILENO);
        ::dup2(log, STDERR_FILENO);
      }
      ::execve(bin.c_str(), argv.data(), environ);
      ::_exit(127);
    }
    pid_ = pid;

    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      const pid_t done = ::waitpid(pid_, &status, WNOHANG);
      if (done == pid_) {
        pid_ = -1;
        failure = "nginx exited (status " + std::to_string(status) + "): " + slurp(err) + slurp(out);
        return false;
      }
      if (accepts(port_)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    stop();
    failure =
        "nginx did not accept connections on port " + std::to_string(port_) + " within 10 s: " + slurp(err);
    return false;
  }

  nginx_dir prefix_{"tensogram-nginx"};
  std::filesystem::path root_;
  std::string extra_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace tgtest

// Serving a directory of metatensor / safetensors files over QUIC (spec 06
// §10): one file per connection, the header on the control stream, one
// tensor per client stream, sent in the order of the §10.5 scheduler.
//
// Every byte of a connection comes from the file as it was when the
// connection opened it (§10.2): the server maps the file once per
// connection, so a file replaced by rename (as every writer of this project
// does) keeps being served from its old contents to the connections that
// opened it.  Rewriting a file in place is not detected.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

namespace metatensor::streaming {

struct server_options {
  std::string host = "127.0.0.1";  ///< address to bind ("::" or "0.0.0.0": all)
  std::uint16_t port = 4433;       ///< 0: an ephemeral port (see `server::port`)
  /// Certificate and key (PEM).  Both empty: a self-signed pair is made in
  /// `tls_dir` on first run and reused afterwards.
  std::filesystem::path cert_pem;
  std::filesystem::path key_pem;
  /// Where the self-signed pair lives (created 0700); default
  /// `$XDG_CONFIG_HOME/metatensor/tls` or `~/.config/metatensor/tls`.
  std::filesystem::path tls_dir;
  /// One line per connection event (open, served file, errors); may be empty.
  std::function<void(const std::string&)> log;
  /// Test only: DATA frames announce the full length but stop this many
  /// bytes short before FIN (the §13 "short DATA frame" case).  0 in use.
  std::uint64_t testing_short_data = 0;
};

class server {
 public:
  /// Checks `root` is a directory, loads or makes the certificate, binds.
  /// Throws `tensogram::io_error`.
  server(std::filesystem::path root, server_options options = {});
  ~server();  // stops
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  /// The bound UDP port.
  [[nodiscard]] std::uint16_t port() const noexcept;
  /// The certificate in use (PEM path): clients pass it as `ca_file`.
  [[nodiscard]] const std::filesystem::path& certificate() const noexcept;
  /// Serves on a background thread.
  void start();
  /// Serves on the calling thread until `stop` (from another thread or a
  /// signal handler through `stop`).
  void run();
  /// Closes every connection and stops serving; thread-safe.
  void stop();

  struct impl;

 private:
  std::unique_ptr<impl> impl_;
};

}  // namespace metatensor::streaming

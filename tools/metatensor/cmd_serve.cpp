// `metatensor serve DIR`: serves the metatensor / safetensors files of a
// directory over QUIC (spec 06 §10) until SIGINT or SIGTERM.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <mutex>

#include <metatensor/stream_server.hpp>

#include "global_options.hpp"
#include "metatensor_commands.hpp"
#include "signals.hpp"
#include "tool_error.hpp"

namespace metatensor::cli {

namespace {

// The URL base clients use: IPv6 literals in brackets (RFC 3986 §3.2.2).
std::string url_base(const std::string& host, std::uint16_t port) {
  const bool v6 = host.find(':') != std::string::npos;
  return "metatensor://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port) + "/";
}

}  // namespace

int run_serve(const serve_args& args, std::ostream& out, std::ostream& err) {
  std::error_code ec;
  if (!std::filesystem::is_directory(args.dir, ec)) {
    throw tensogram::cli::tool_error(args.dir + ": not a directory");
  }
  if (args.cert.empty() != args.key.empty()) {
    throw tensogram::cli::usage_error("--cert and --key go together");
  }

  streaming::server_options options;
  options.host = args.host;
  options.port = args.port;
  options.cert_pem = args.cert;
  options.key_pem = args.key;
  options.tls_dir = args.tls_dir;
  options.reset_secret_file = args.reset_secret;
  // The server logs from its own thread; the lock keeps lines whole.
  std::mutex log_lock;
  if (args.log) {
    options.log = [&err, &log_lock](const std::string& line) {
      const std::lock_guard lock(log_lock);
      err << "metatensor serve: " << line << '\n' << std::flush;
    };
  }

  options.max_connections = args.max_connections;
  options.max_connections_per_address = args.max_connections_per_address;
  options.retry_threshold = args.retry_threshold;
  options.max_streams = args.max_streams;
  options.max_queued_bytes = args.max_queued_mib << 20;
  auto ms = [](double seconds) {
    return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
  };
  options.idle_timeout = ms(args.idle_timeout);
  options.handshake_timeout = ms(args.handshake_timeout);
  options.stateless_resets_per_second = args.resets_per_second;
  // Refusals are worth knowing about even without --log (they are rate
  // limited by the server).
  options.refusal_log = [&err, &log_lock](const std::string& line) {
    const std::lock_guard lock(log_lock);
    err << "metatensor serve: " << line << '\n' << std::flush;
  };

  // Signals are blocked before the server starts any thread, so only the
  // signal thread ever takes them (signals.hpp: no handler, no global state).
  const blocked_signals blocked;
  streaming::server server(args.dir, options);
  // The first line is the contract with scripts and tests: they read the
  // bound port (--port 0) and the certificate to pass as --ca-file.
  out << "serving " << args.dir << " at " << url_base(args.host, server.port())
      << " (certificate: " << server.certificate().string() << ")" << std::endl;

  // Served on the server's own thread; this one just waits for a signal.
  // (stop() after start() always ends serving; a stop() racing ahead of
  // run() on another thread might not.)
  server.start();
  const int signo = blocked.wait();
  server.stop();
  if (args.log) {
    const std::lock_guard lock(log_lock);
    err << "metatensor serve: " << signal_name(signo) << ", stopped\n" << std::flush;
  }
  return 0;
}

}  // namespace metatensor::cli

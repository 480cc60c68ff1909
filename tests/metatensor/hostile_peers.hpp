// Hostile QUIC peers for the hardening tests and the hostile-load benchmark
// (issue 28 item 2): what a server on the open Internet gets besides its
// well-behaved clients.
//
//   tgtest::hostile_load attack({.port = server.port(), .resource = "model.safetensors", .tensor = "big"});
//   ... fetch with a well-behaved client, read server.stats() ...
//   // destruction stops every attacker
//
// * Initial flood: valid client Initials (captured from our own client
//   engine, each with its own DCID and so its own keys) replayed from many
//   source addresses (127.0.0.2–127.0.0.9) and ports, never answered: each
//   one the server accepts is a half-open handshake that never finishes.
// * Reset storm: short-header packets for connection IDs the server never
//   issued; the stateless resets that come back are counted.
// * Slowloris: real connections (our engine, handshake completed) that open
//   as many streams as the server allows, GET a large tensor on each and
//   never read (no flow-control credit is ever returned).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace tgtest {

/// `count` distinct, valid first Initial datagrams of our client engine
/// (captured on a local socket, the client then discarded).
[[nodiscard]] std::vector<std::vector<std::uint8_t>> capture_initials(std::size_t count);

struct attack_config {
  std::uint16_t port = 0;  ///< the server, on 127.0.0.1
  std::size_t initials_per_second = 1000;
  std::size_t distinct_initials = 32;    ///< captured Initials replayed in turn
  std::size_t probes_per_second = 2000;  ///< unknown-CID packets (reset storm)
  std::size_t slowloris = 8;             ///< never-reading connections
  std::string resource;                  ///< what slowloris opens
  std::string tensor;                    ///< what slowloris GETs on every stream
};

class hostile_load {
 public:
  explicit hostile_load(attack_config cfg);
  ~hostile_load();  ///< stops and joins every attacker
  hostile_load(const hostile_load&) = delete;
  hostile_load& operator=(const hostile_load&) = delete;

  [[nodiscard]] std::uint64_t initials_sent() const noexcept { return initials_sent_.load(); }
  [[nodiscard]] std::uint64_t probes_sent() const noexcept { return probes_sent_.load(); }
  /// Datagrams received in answer to probes that look like stateless resets
  /// (short header, smaller than the probe, at least 21 bytes).
  [[nodiscard]] std::uint64_t resets_received() const noexcept { return resets_received_.load(); }
  /// GETs the slowloris connections managed to send.
  [[nodiscard]] std::uint64_t slow_gets() const noexcept;
  /// Slowloris connections whose handshake completed.
  [[nodiscard]] std::size_t slow_connected() const noexcept;

  struct slow_client;

 private:
  void flood() noexcept;

  attack_config cfg_;
  std::vector<std::vector<std::uint8_t>> initials_;
  std::vector<std::unique_ptr<slow_client>> slow_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> initials_sent_{0};
  std::atomic<std::uint64_t> probes_sent_{0};
  std::atomic<std::uint64_t> resets_received_{0};
  std::thread flood_thread_;  // last
};

/// Resident memory of this process from /proc/self/status, in KiB:
/// {VmRSS, RssAnon}; zeros when unavailable.
struct rss_kib {
  std::uint64_t total = 0;
  std::uint64_t anon = 0;
};
[[nodiscard]] rss_kib current_rss();
// The same for another process (/proc/PID/status); zeros when it is gone.
[[nodiscard]] rss_kib process_rss(int pid);

}  // namespace tgtest

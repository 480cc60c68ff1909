// A loopback UDP impairment proxy for the streaming tests (spec 06 §13
// "Streaming" cases run over QUIC, whose loss recovery and reordering
// tolerance we want to exercise without a real network).
//
//   tgtest::udp_proxy proxy(server.port(), {.drop = 0.05, .reorder = 0.05, .seed = 7});
//   auto f = remote_file::open("metatensor://127.0.0.1:" + std::to_string(proxy.port()) + "/x.mt", ...);
//
// The proxy binds 127.0.0.1:0 and forwards every datagram from its (single)
// client to 127.0.0.1:target_port, and every reply back to the address the
// client last sent from.  It runs on its own thread, polling its two sockets
// and an eventfd the destructor signals, so it stops and joins on
// destruction (RAII).
//
// Impairments apply independently in each direction, after the first
// `skip_first` datagrams of that direction:
// * drop: a datagram is discarded with probability `drop`;
// * reorder: with probability `reorder` a datagram is held back and sent
//   right after the next datagram of the same direction that is sent, or
//   after `reorder_hold` (~5 ms) if none comes, so nothing is held forever;
// * duplicate: a datagram is sent twice with probability `duplicate`.
// Each direction draws from its own std::mt19937_64 seeded from `seed`, three
// draws per impaired datagram whatever the outcome, so the fate of the k-th
// datagram of a direction depends only on the seed and k: runs with the same
// seed and traffic are identical (whatever the thread timing).
//
// Counters (both directions together), for tests to check what happened:
//   received   = datagrams read from either side;
//   forwarded  = received datagrams sent on (once each, held ones included);
//   dropped    = received datagrams discarded;
//   reordered  = forwarded datagrams sent after a later one of their direction;
//   duplicated = extra copies sent;
//   forwarded_bytes = UDP payload bytes sent on, copies included (what the
//                     peers' traffic costs, for the benchmarks).
// Once idle (nothing held): received == forwarded + dropped, and the peers
// together saw forwarded + duplicated datagrams.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <utility>

#include "src/core/unique_fd.hpp"

namespace tgtest {

struct impairment {
  double drop = 0;       ///< probability a datagram is discarded
  double reorder = 0;    ///< probability a datagram is held back past the next one
  double duplicate = 0;  ///< probability a datagram is sent twice
  std::uint64_t seed = 1;
  /// Pass the first N datagrams of each direction untouched (e.g. so a QUIC
  /// handshake completes quickly before losses start).
  std::size_t skip_first = 0;
};

class udp_proxy {
 public:
  /// How long a reordered datagram waits for a successor before it is sent anyway.
  static constexpr std::chrono::milliseconds reorder_hold{5};

  /// Binds 127.0.0.1:0 and starts forwarding to 127.0.0.1:target_port.
  /// Throws std::system_error when a socket cannot be set up.
  explicit udp_proxy(std::uint16_t target_port, impairment cfg = {});
  ~udp_proxy();  ///< stops the thread and joins it; held datagrams are discarded
  udp_proxy(const udp_proxy&) = delete;
  udp_proxy& operator=(const udp_proxy&) = delete;

  /// The port clients send to (on 127.0.0.1).
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }

  [[nodiscard]] std::uint64_t received() const noexcept { return received_.load(); }
  [[nodiscard]] std::uint64_t forwarded() const noexcept { return forwarded_.load(); }
  [[nodiscard]] std::uint64_t dropped() const noexcept { return dropped_.load(); }
  [[nodiscard]] std::uint64_t reordered() const noexcept { return reordered_.load(); }
  [[nodiscard]] std::uint64_t duplicated() const noexcept { return duplicated_.load(); }
  [[nodiscard]] std::uint64_t forwarded_bytes() const noexcept { return forwarded_bytes_.load(); }

 private:
  void run() noexcept;

  impairment cfg_;
  tensogram::detail::unique_fd client_fd_;  // bound to 127.0.0.1:port_, faces the client
  tensogram::detail::unique_fd server_fd_;  // connected to 127.0.0.1:target_port
  tensogram::detail::unique_fd stop_fd_;    // eventfd: non-zero asks the thread to stop
  std::uint16_t port_ = 0;
  std::atomic<std::uint64_t> received_{0};
  std::atomic<std::uint64_t> forwarded_{0};
  std::atomic<std::uint64_t> dropped_{0};
  std::atomic<std::uint64_t> reordered_{0};
  std::atomic<std::uint64_t> duplicated_{0};
  std::atomic<std::uint64_t> forwarded_bytes_{0};
  std::thread thread_;  // last: started once everything above is set up
};

/// The UDP payload bytes, both directions, that `use(port)` moves through a
/// relay of its own to 127.0.0.1:`target_port` (what a lazy fetch costs on
/// the wire, issue 28).
template <typename Use>
std::uint64_t bytes_through_relay(std::uint16_t target_port, Use&& use) {
  const udp_proxy relay(target_port);
  std::forward<Use>(use)(relay.port());
  return relay.forwarded_bytes();
}

}  // namespace tgtest

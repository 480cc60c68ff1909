// Bytes queued for sending on one QUIC stream (spec 06 §10.4), shared by the
// server and the client.  The QUIC engine does not copy stream data and may
// retransmit it until acknowledged (quic_engine.hpp), so frames built here
// are owned by the queue until the stream closes, and a borrowed payload (the
// server's DATA, straight from the file mapping) must outlive the stream.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <span>
#include <vector>

#include "quic_engine.hpp"

namespace metatensor::streaming::detail {

struct send_queue {
  std::deque<std::vector<std::byte>> owned;  // never shrinks before the stream closes
  std::size_t chunk = 0;                     // index of the chunk being sent
  std::size_t offset = 0;                    // bytes of that chunk already sent
  std::span<const std::byte> payload;        // borrowed bytes sent after `owned`
  std::size_t payload_sent = 0;
  bool fin_queued = false;
  bool fin_sent = false;

  /// Bytes not yet sent.
  [[nodiscard]] std::uint64_t remaining() const noexcept {
    std::uint64_t n = payload.size() - payload_sent;
    for (std::size_t i = chunk; i < owned.size(); ++i) n += owned[i].size() - (i == chunk ? offset : 0);
    return n;
  }
  /// Nothing left to send, FIN included.
  [[nodiscard]] bool done() const noexcept { return fin_sent || (!fin_queued && remaining() == 0); }
  /// The next contiguous piece, at most `max` bytes, with FIN when it is the
  /// last of the stream.
  [[nodiscard]] quic::outgoing next(std::int64_t id,
                                    std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) const {
    quic::outgoing out;
    out.stream_id = id;
    std::span<const std::byte> piece;
    bool last_piece = false;
    if (chunk < owned.size()) {
      piece = std::span<const std::byte>(owned[chunk]).subspan(offset);
      last_piece = chunk + 1 == owned.size() && payload.size() == payload_sent;
    } else {
      piece = payload.subspan(payload_sent);
      last_piece = true;
    }
    const bool whole = piece.size() <= max;
    out.data = piece.first(static_cast<std::size_t>(std::min<std::uint64_t>(piece.size(), max)));
    out.fin = fin_queued && last_piece && whole;
    return out;
  }
  /// `n` bytes of what `next` offered went out (`fin` when its FIN did too).
  void consume(std::size_t n, bool fin) {
    while (n > 0) {
      if (chunk < owned.size()) {
        const std::size_t take = std::min(n, owned[chunk].size() - offset);
        offset += take;
        n -= take;
        if (offset == owned[chunk].size()) {
          ++chunk;
          offset = 0;
        }
      } else {
        payload_sent += std::min(n, payload.size() - payload_sent);
        n = 0;
      }
    }
    // Skip empty chunks so `next` never offers an empty piece before data.
    while (chunk < owned.size() && owned[chunk].size() == offset) {
      ++chunk;
      offset = 0;
    }
    if (fin) fin_sent = true;
  }
};

}  // namespace metatensor::streaming::detail

// Send scheduling of the metatensor QUIC server (spec 06 §10.5).
//
// A pure decision engine: it knows stream ids, priorities and how many bytes
// each tensor stream could send right now, and answers "which stream next, and
// at most how many bytes".  It does no I/O and knows nothing about QUIC
// libraries, so the transport layer drives it and tests can check the rules
// directly.  Control-stream frames (§10.5 rule 1) are not scheduled here: the
// transport sends them before asking `next()`.
//
// Ordering rules, as read from §10.5:
//  * Only streams with bytes ready (data ready *and* flow-control credit,
//    folded into one number by the caller via `set_ready`) compete (rule 2).
//  * The lowest urgency value wins (rule 2).
//  * Within one urgency, non-incremental streams go before incremental ones:
//    incremental streams "share the remaining capacity", i.e. what the
//    non-incremental streams of that urgency leave unused (rule 3).
//  * Non-incremental streams are served "one at a time, to completion, in
//    increasing stream ID order": a stream that has started sending keeps the
//    link until it finishes, even if a lower-id stream of the same urgency
//    becomes ready later (preempting it would interleave them, which "one at a
//    time, to completion" forbids).  Only a more urgent stream preempts it.  If
//    the started stream is blocked (0 bytes ready) others of its urgency may
//    send meanwhile rather than waste capacity; among several started streams
//    the lowest id goes first.  Streams that have not started go in id order.
//  * Incremental streams take turns round-robin; a turn is `incremental_chunk`
//    bytes (16 KiB suggested by §10.5).  A turn ends when the chunk is used up;
//    a stream that runs dry mid-turn keeps the rest of its turn for when it is
//    ready again.
//  * PRIORITY_UPDATE for a not-yet-opened stream is remembered and applied at
//    `open`; for a finished stream it is ignored (§10.5).
//
// Memory is bounded against hostile clients: remembered updates and the record
// of finished ids each keep at most `max_remembered` entries (oldest dropped).
// Open streams are bounded by the transport's concurrent-stream limit; `next()`
// scans them linearly, which is cheap at that size (§10.8 suggests ~100).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace metatensor::streaming {

/// Priority of a tensor stream (spec 06 §10.3 GET / PRIORITY_UPDATE).
struct stream_priority {
  std::uint8_t urgency = 3;  ///< 0 (highest) .. 7 (lowest)
  bool incremental = false;
  friend bool operator==(const stream_priority&, const stream_priority&) = default;
};

class send_scheduler {
 public:
  static constexpr std::size_t default_incremental_chunk = 16 * 1024;
  static constexpr std::size_t default_max_remembered = 1024;

  /// Throws std::invalid_argument if `incremental_chunk` or `max_remembered` is 0.
  explicit send_scheduler(std::size_t incremental_chunk = default_incremental_chunk,
                          std::size_t max_remembered = default_max_remembered);

  /// A tensor stream opened with its priority (from GET).  A PRIORITY_UPDATE
  /// that arrived earlier for this id (remembered) overrides it.  Starts with
  /// 0 bytes ready.  Throws std::invalid_argument for urgency > 7 or for an id
  /// that is open or known finished (QUIC never reuses stream ids).
  void open(std::uint64_t stream_id, stream_priority p);

  /// PRIORITY_UPDATE: applied if open, remembered if not yet opened, ignored
  /// if finished.  Throws std::invalid_argument for urgency > 7.
  void update(std::uint64_t stream_id, stream_priority p);

  /// The stream can send `bytes_ready` bytes now (the smaller of data ready
  /// and flow-control credit); replaces the previous value, 0 = blocked.
  /// Ignored for a stream that is not open (it may have been reset meanwhile).
  void set_ready(std::uint64_t stream_id, std::uint64_t bytes_ready);

  /// The stream sent everything, or was reset/cancelled.  Also accepted for an
  /// id never opened (e.g. reset before its GET arrived): any remembered
  /// update for it is dropped and later ones are ignored.
  void finish(std::uint64_t stream_id);

  /// §10.5 decision: which stream to send on next and at most how many bytes;
  /// nullopt if no stream has bytes ready.
  struct pick {
    std::uint64_t stream_id;
    std::uint64_t max_bytes;
  };
  std::optional<pick> next();

  /// What was actually sent on a stream (may be less than max_bytes); lowers
  /// its bytes ready.  Ignored for a stream that is not open.  Throws
  /// std::invalid_argument if `bytes` exceeds the stream's bytes ready.
  void sent(std::uint64_t stream_id, std::uint64_t bytes);

  // Observers (for the transport's bookkeeping and for tests).
  bool is_open(std::uint64_t stream_id) const { return open_.contains(stream_id); }
  std::optional<stream_priority> priority(std::uint64_t stream_id) const;
  std::size_t remembered_updates() const { return remembered_.size(); }

 private:
  struct stream_state {
    stream_priority priority;
    std::uint64_t ready = 0;
    bool started = false;         // non-incremental: has sent bytes (runs to completion)
    std::uint64_t turn = 0;       // incremental: round-robin position, lower = sooner
    std::uint64_t turn_used = 0;  // incremental: bytes sent in the current turn
  };
  struct remembered_update {
    stream_priority priority;
    std::uint64_t seq;  // key into remembered_order_
  };

  void apply(stream_state& s, stream_priority p);
  void forget_remembered(std::uint64_t stream_id);

  std::size_t chunk_;
  std::size_t max_remembered_;
  std::uint64_t clock_ = 0;  // source of round-robin turns and remembered-update ages

  std::map<std::uint64_t, stream_state> open_;  // by stream id
  std::unordered_map<std::uint64_t, remembered_update> remembered_;
  std::map<std::uint64_t, std::uint64_t> remembered_order_;  // seq -> stream id, oldest first
  std::unordered_set<std::uint64_t> finished_;
  std::deque<std::uint64_t> finished_order_;  // oldest first
};

}  // namespace metatensor::streaming

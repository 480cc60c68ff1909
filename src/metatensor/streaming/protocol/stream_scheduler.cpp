// Send scheduling of the metatensor QUIC server (spec 06 §10.5); the ordering
// rules and their reading are documented in the header.
#include "stream_scheduler.hpp"

#include <algorithm>
#include <stdexcept>
#include <tuple>

namespace metatensor::streaming {

namespace {

// §10.3: urgency is 0 (highest) to 7 (lowest).  Rejecting here keeps an
// out-of-range value from silently sorting after every valid one.
void check_priority(stream_priority p) {
  if (p.urgency > 7) throw std::invalid_argument("stream urgency above 7 (metatensor-format §10.3)");
}

}  // namespace

send_scheduler::send_scheduler(std::size_t incremental_chunk, std::size_t max_remembered)
    : chunk_(incremental_chunk), max_remembered_(max_remembered) {
  if (chunk_ == 0) throw std::invalid_argument("incremental chunk must be positive");
  if (max_remembered_ == 0) throw std::invalid_argument("max_remembered must be positive");
}

void send_scheduler::open(std::uint64_t stream_id, stream_priority p) {
  check_priority(p);
  if (open_.contains(stream_id)) throw std::invalid_argument("stream already open");
  if (finished_.contains(stream_id)) throw std::invalid_argument("stream already finished");
  // §10.5: a PRIORITY_UPDATE that arrived before the stream opened is applied
  // when it opens; it is the client's later word, so it overrides the GET's.
  if (auto it = remembered_.find(stream_id); it != remembered_.end()) {
    p = it->second.priority;
    forget_remembered(stream_id);
  }
  stream_state s;
  s.priority = p;
  s.turn = ++clock_;  // an incremental newcomer joins the back of the round-robin
  open_.emplace(stream_id, s);
}

void send_scheduler::update(std::uint64_t stream_id, stream_priority p) {
  check_priority(p);
  if (auto it = open_.find(stream_id); it != open_.end()) {
    apply(it->second, p);
    return;
  }
  if (finished_.contains(stream_id)) return;  // §10.5: ignored for a finished stream
  // §10.5: remembered until the stream opens.  A newer update for the same id
  // replaces the value but keeps its age, so repeating it cannot keep an entry
  // alive.  Beyond the cap the oldest entry goes: a hostile client could
  // otherwise grow this table without limit with ids it never opens.
  if (auto it = remembered_.find(stream_id); it != remembered_.end()) {
    it->second.priority = p;
    return;
  }
  if (remembered_.size() == max_remembered_) forget_remembered(remembered_order_.begin()->second);
  const std::uint64_t seq = ++clock_;
  remembered_.emplace(stream_id, remembered_update{p, seq});
  remembered_order_.emplace(seq, stream_id);
}

void send_scheduler::set_ready(std::uint64_t stream_id, std::uint64_t bytes_ready) {
  if (auto it = open_.find(stream_id); it != open_.end()) it->second.ready = bytes_ready;
}

void send_scheduler::finish(std::uint64_t stream_id) {
  open_.erase(stream_id);
  forget_remembered(stream_id);
  // Remember the id so a late PRIORITY_UPDATE is ignored (§10.5) instead of
  // taking a remembered slot; capped like the remembered updates.  Once an id
  // ages out, an update for it is merely remembered and never applied, since
  // QUIC never reopens a stream id.
  if (!finished_.insert(stream_id).second) return;
  finished_order_.push_back(stream_id);
  if (finished_order_.size() > max_remembered_) {
    finished_.erase(finished_order_.front());
    finished_order_.pop_front();
  }
}

std::optional<send_scheduler::pick> send_scheduler::next() {
  // One sort key per ready stream, smallest wins (§10.5):
  //  1. urgency: the lowest value wins (rule 2);
  //  2. non-incremental before incremental: incremental streams share the
  //     capacity that remains (rule 3);
  //  3. non-incremental: a started stream first (to completion), then stream
  //     id order; incremental: round-robin turn order;
  //  4. stream id (ties).
  using key = std::tuple<std::uint8_t, bool, std::uint64_t, std::uint64_t>;
  std::optional<key> best;
  const stream_state* chosen = nullptr;
  std::uint64_t chosen_id = 0;
  for (const auto& [id, s] : open_) {
    if (s.ready == 0) continue;  // no data or no flow-control credit (rule 2)
    const std::uint64_t order = s.priority.incremental ? s.turn : (s.started ? 0 : 1);
    const key k{s.priority.urgency, s.priority.incremental, order, id};
    if (!best || k < *best) {
      best = k;
      chosen = &s;
      chosen_id = id;
    }
  }
  if (chosen == nullptr) return std::nullopt;
  if (!chosen->priority.incremental) return pick{chosen_id, chosen->ready};
  return pick{chosen_id, std::min<std::uint64_t>(chosen->ready, chunk_ - chosen->turn_used)};
}

void send_scheduler::sent(std::uint64_t stream_id, std::uint64_t bytes) {
  auto it = open_.find(stream_id);
  if (it == open_.end()) return;
  stream_state& s = it->second;
  if (bytes > s.ready) throw std::invalid_argument("sent more bytes than were ready");
  s.ready -= bytes;
  if (bytes == 0) return;
  if (!s.priority.incremental) {
    s.started = true;  // from now on it runs to completion (§10.5 rule 3)
    return;
  }
  // Round-robin (§10.5 rule 3): a turn is one chunk; when it is used up the
  // stream goes to the back of the line.
  s.turn_used += bytes;
  if (s.turn_used >= chunk_) {
    s.turn_used = 0;
    s.turn = ++clock_;
  }
}

std::optional<stream_priority> send_scheduler::priority(std::uint64_t stream_id) const {
  if (auto it = open_.find(stream_id); it != open_.end()) return it->second.priority;
  if (auto it = remembered_.find(stream_id); it != remembered_.end()) return it->second.priority;
  return std::nullopt;
}

void send_scheduler::apply(stream_state& s, stream_priority p) {
  // Switching between incremental and not changes which rule serves the
  // stream, so it starts afresh under the new one: a stream turned
  // non-incremental waits for its id turn, one turned incremental joins the
  // back of the round-robin.  An urgency change alone keeps its progress.
  if (p.incremental != s.priority.incremental) {
    s.started = false;
    s.turn_used = 0;
    s.turn = ++clock_;
  }
  s.priority = p;
}

void send_scheduler::forget_remembered(std::uint64_t stream_id) {
  auto it = remembered_.find(stream_id);
  if (it == remembered_.end()) return;
  remembered_order_.erase(it->second.seq);
  remembered_.erase(it);
}

}  // namespace metatensor::streaming

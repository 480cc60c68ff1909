// Send scheduling of the metatensor QUIC server (spec 06 §10.5).
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "src/metatensor/streaming/protocol/stream_scheduler.hpp"

namespace {

using metatensor::streaming::send_scheduler;
using metatensor::streaming::stream_priority;
using step = std::pair<std::uint64_t, std::uint64_t>;  // stream id, bytes

constexpr stream_priority non_incremental(std::uint8_t urgency) {
  return {urgency, false};
}
constexpr stream_priority incremental(std::uint8_t urgency) {
  return {urgency, true};
}

// Runs the scheduler like a transport that always sends everything it is
// allowed to, until nothing is ready; returns the sequence of sends.
std::vector<step> drain(send_scheduler& s) {
  std::vector<step> out;
  while (auto p = s.next()) {
    if (out.size() == 1000) {  // a scheduler that picks idle streams would loop forever
      ADD_FAILURE() << "scheduler never ran dry";
      break;
    }
    out.emplace_back(p->stream_id, p->max_bytes);
    s.sent(p->stream_id, p->max_bytes);
  }
  return out;
}

void open_ready(send_scheduler& s, std::uint64_t id, stream_priority p, std::uint64_t bytes) {
  s.open(id, p);
  s.set_ready(id, bytes);
}

TEST(StreamScheduler, NothingReadyNothingPicked) {
  send_scheduler s;
  EXPECT_FALSE(s.next());
  s.open(4, non_incremental(0));
  s.open(8, incremental(0));
  EXPECT_FALSE(s.next());  // open but 0 bytes ready (no data / no credit)
  s.set_ready(8, 5);
  s.set_ready(8, 0);  // blocked by flow control again
  EXPECT_FALSE(s.next());
  s.set_ready(4, 3);
  EXPECT_EQ(drain(s), (std::vector<step>{{4, 3}}));
  EXPECT_FALSE(s.next());  // sent everything ready; still open, never picked
  EXPECT_TRUE(s.is_open(4));
}

TEST(StreamScheduler, SetReadyReplacesPreviousValue) {
  send_scheduler s;
  open_ready(s, 4, non_incremental(3), 100);
  s.set_ready(4, 30);
  EXPECT_EQ(drain(s), (std::vector<step>{{4, 30}}));
}

TEST(StreamScheduler, LowestUrgencyWins) {
  send_scheduler s;
  open_ready(s, 4, non_incremental(5), 10);
  open_ready(s, 8, non_incremental(1), 20);
  open_ready(s, 12, incremental(3), 30);
  open_ready(s, 16, non_incremental(7), 40);
  open_ready(s, 20, incremental(0), 50);
  EXPECT_EQ(drain(s), (std::vector<step>{{20, 50}, {8, 20}, {12, 30}, {4, 10}, {16, 40}}));
}

TEST(StreamScheduler, NonIncrementalInIncreasingIdOrder) {
  send_scheduler s;
  // Opened (and made ready) in decreasing id order: the id decides, not arrival.
  open_ready(s, 12, non_incremental(3), 7);
  open_ready(s, 8, non_incremental(3), 6);
  open_ready(s, 4, non_incremental(3), 5);
  EXPECT_EQ(drain(s), (std::vector<step>{{4, 5}, {8, 6}, {12, 7}}));
}

TEST(StreamScheduler, NonIncrementalOneAtATimeWholeReadyAmount) {
  send_scheduler s;
  open_ready(s, 4, non_incremental(3), 1'000'000);
  open_ready(s, 8, non_incremental(3), 10);
  auto p = s.next();
  ASSERT_TRUE(p);
  EXPECT_EQ(p->stream_id, 4u);
  EXPECT_EQ(p->max_bytes, 1'000'000u);  // not chunked
}

TEST(StreamScheduler, StartedNonIncrementalRunsToCompletion) {
  send_scheduler s;
  open_ready(s, 8, non_incremental(3), 100);
  auto p = s.next();
  ASSERT_TRUE(p);
  EXPECT_EQ(p->stream_id, 8u);
  s.sent(8, 40);  // partial send: stream 8 has started
  // A lower id of the same urgency becomes ready: it does not preempt.
  open_ready(s, 4, non_incremental(3), 10);
  p = s.next();
  ASSERT_TRUE(p);
  EXPECT_EQ(p->stream_id, 8u);
  EXPECT_EQ(p->max_bytes, 60u);
  s.sent(8, 60);
  EXPECT_EQ(drain(s), (std::vector<step>{{4, 10}}));
}

TEST(StreamScheduler, NotYetStartedStreamYieldsToLowerId) {
  send_scheduler s;
  open_ready(s, 8, non_incremental(3), 100);
  ASSERT_EQ(s.next()->stream_id, 8u);  // picked but nothing sent yet
  open_ready(s, 4, non_incremental(3), 10);
  EXPECT_EQ(drain(s), (std::vector<step>{{4, 10}, {8, 100}}));
}

TEST(StreamScheduler, MoreUrgentStreamPreemptsStartedOne) {
  send_scheduler s;
  open_ready(s, 4, non_incremental(3), 100);
  s.sent(4, 40);
  open_ready(s, 8, non_incremental(2), 10);
  open_ready(s, 12, incremental(1), 5);
  EXPECT_EQ(drain(s), (std::vector<step>{{12, 5}, {8, 10}, {4, 60}}));
}

TEST(StreamScheduler, BlockedStartedStreamLetsOthersSendThenResumes) {
  send_scheduler s;
  open_ready(s, 4, non_incremental(3), 100);
  open_ready(s, 8, non_incremental(3), 100);
  s.sent(4, 50);
  s.set_ready(4, 0);  // out of flow-control credit: capacity goes to 8
  ASSERT_EQ(s.next()->stream_id, 8u);
  s.sent(8, 20);
  s.set_ready(4, 50);  // credit again: both started, lowest id first
  EXPECT_EQ(drain(s), (std::vector<step>{{4, 50}, {8, 80}}));
}

TEST(StreamScheduler, NonIncrementalBeforeIncrementalWithinUrgency) {
  send_scheduler s(10);
  open_ready(s, 4, incremental(3), 15);
  open_ready(s, 8, non_incremental(3), 30);
  open_ready(s, 12, non_incremental(3), 20);
  EXPECT_EQ(drain(s), (std::vector<step>{{8, 30}, {12, 20}, {4, 10}, {4, 5}}));
}

TEST(StreamScheduler, IncrementalRoundRobinInChunks) {
  send_scheduler s(10);
  open_ready(s, 4, incremental(3), 25);
  open_ready(s, 8, incremental(3), 25);
  open_ready(s, 12, incremental(3), 25);
  EXPECT_EQ(drain(s), (std::vector<step>{
                          {4, 10}, {8, 10}, {12, 10}, {4, 10}, {8, 10}, {12, 10}, {4, 5}, {8, 5}, {12, 5}}));
}

TEST(StreamScheduler, DefaultChunkIs16KiB) {
  send_scheduler s;
  open_ready(s, 4, incremental(3), 100'000);
  open_ready(s, 8, incremental(3), 100'000);
  auto p = s.next();
  ASSERT_TRUE(p);
  EXPECT_EQ(p->stream_id, 4u);
  EXPECT_EQ(p->max_bytes, 16u * 1024);
  s.sent(4, p->max_bytes);
  EXPECT_EQ(s.next()->stream_id, 8u);
}

TEST(StreamScheduler, IncrementalTurnLastsOneChunkEvenWithPartialSends) {
  send_scheduler s(10);
  open_ready(s, 4, incremental(3), 100);
  open_ready(s, 8, incremental(3), 100);
  auto p = s.next();
  ASSERT_TRUE(p);
  EXPECT_EQ(p->stream_id, 4u);
  EXPECT_EQ(p->max_bytes, 10u);
  s.sent(4, 3);
  p = s.next();
  ASSERT_TRUE(p);
  EXPECT_EQ(p->stream_id, 4u);  // rest of its turn
  EXPECT_EQ(p->max_bytes, 7u);
  s.sent(4, 7);
  EXPECT_EQ(s.next()->stream_id, 8u);
}

TEST(StreamScheduler, NewIncrementalStreamJoinsBackOfRoundRobin) {
  send_scheduler s(10);
  open_ready(s, 4, incremental(3), 20);
  open_ready(s, 8, incremental(3), 20);
  s.sent(4, 10);                         // 4's turn done: line is 8, 4
  open_ready(s, 0, incremental(3), 20);  // a lower id still joins at the back
  EXPECT_EQ(drain(s), (std::vector<step>{{8, 10}, {4, 10}, {0, 10}, {8, 10}, {0, 10}}));
}

TEST(StreamScheduler, UpdateBeforeOpenIsRememberedAndOverridesGet) {
  send_scheduler s;
  s.update(8, incremental(1));
  EXPECT_EQ(s.remembered_updates(), 1u);
  EXPECT_EQ(s.priority(8), incremental(1));
  open_ready(s, 4, non_incremental(3), 10);
  open_ready(s, 8, non_incremental(5), 10);  // GET says 5; the earlier update says 1
  EXPECT_EQ(s.priority(8), incremental(1));
  EXPECT_EQ(s.remembered_updates(), 0u);  // consumed
  EXPECT_EQ(drain(s), (std::vector<step>{{8, 10}, {4, 10}}));
}

TEST(StreamScheduler, UpdateOnOpenStreamApplies) {
  send_scheduler s;
  open_ready(s, 4, non_incremental(3), 10);
  open_ready(s, 8, non_incremental(3), 10);
  s.update(8, non_incremental(0));
  EXPECT_EQ(s.priority(8), non_incremental(0));
  EXPECT_EQ(s.remembered_updates(), 0u);
  EXPECT_EQ(drain(s), (std::vector<step>{{8, 10}, {4, 10}}));
}

TEST(StreamScheduler, UpdateSwitchingToIncrementalChunksTheStream) {
  send_scheduler s(10);
  open_ready(s, 4, non_incremental(3), 30);
  s.sent(4, 5);
  open_ready(s, 8, incremental(3), 10);
  s.update(4, incremental(3));
  // 4 rejoined the round-robin at the back, behind 8.
  EXPECT_EQ(drain(s), (std::vector<step>{{8, 10}, {4, 10}, {4, 10}, {4, 5}}));
}

TEST(StreamScheduler, UpdateAfterFinishIsIgnored) {
  send_scheduler s;
  open_ready(s, 4, non_incremental(3), 10);
  s.finish(4);
  EXPECT_FALSE(s.is_open(4));
  EXPECT_FALSE(s.next());
  s.update(4, non_incremental(0));
  EXPECT_EQ(s.remembered_updates(), 0u);
  EXPECT_FALSE(s.priority(4));
  EXPECT_THROW(s.open(4, non_incremental(3)), std::invalid_argument);  // ids are never reused
}

TEST(StreamScheduler, FinishBeforeOpenDropsRememberedUpdate) {
  send_scheduler s;
  s.update(8, non_incremental(1));
  s.finish(8);  // e.g. reset before its GET arrived
  EXPECT_EQ(s.remembered_updates(), 0u);
  s.update(8, non_incremental(2));
  EXPECT_EQ(s.remembered_updates(), 0u);
}

TEST(StreamScheduler, RememberedUpdatesAreCappedOldestDropped) {
  send_scheduler s(16 * 1024, 3);
  s.update(100, non_incremental(1));
  s.update(104, non_incremental(1));
  s.update(108, non_incremental(1));
  s.update(100, non_incremental(2));  // refresh of an existing entry: no growth, same age
  EXPECT_EQ(s.remembered_updates(), 3u);
  s.update(112, non_incremental(1));
  EXPECT_EQ(s.remembered_updates(), 3u);
  EXPECT_FALSE(s.priority(100));  // oldest dropped
  EXPECT_EQ(s.priority(104), non_incremental(1));
  EXPECT_EQ(s.priority(112), non_incremental(1));
  s.open(100, non_incremental(6));
  EXPECT_EQ(s.priority(100), non_incremental(6));  // the GET's priority stands
}

TEST(StreamScheduler, DefaultCapOnRememberedUpdatesIs1024) {
  send_scheduler s;
  for (std::uint64_t i = 0; i < 5000; ++i) s.update(4 * i, incremental(2));
  EXPECT_EQ(s.remembered_updates(), 1024u);
  EXPECT_FALSE(s.priority(0));
  EXPECT_EQ(s.priority(4 * 4999), incremental(2));
}

TEST(StreamScheduler, FinishedRecordIsCappedToo) {
  send_scheduler s(16 * 1024, 2);
  for (std::uint64_t id : {4, 8, 12}) s.finish(id);
  s.update(12, non_incremental(0));
  EXPECT_EQ(s.remembered_updates(), 0u);  // still known finished
  s.update(4, non_incremental(0));        // aged out: only remembered, never applied
  EXPECT_EQ(s.remembered_updates(), 1u);
}

TEST(StreamScheduler, InvalidUrgencyThrows) {
  send_scheduler s;
  EXPECT_THROW(s.open(4, {8, false}), std::invalid_argument);
  EXPECT_FALSE(s.is_open(4));
  EXPECT_THROW(s.update(4, {255, true}), std::invalid_argument);
  EXPECT_EQ(s.remembered_updates(), 0u);
  s.open(4, {7, false});
  EXPECT_THROW(s.update(4, {8, false}), std::invalid_argument);
  EXPECT_EQ(s.priority(4), non_incremental(7));
}

TEST(StreamScheduler, MisuseThrowsAndUnknownIdsAreIgnored) {
  EXPECT_THROW(send_scheduler(0), std::invalid_argument);
  EXPECT_THROW(send_scheduler(10, 0), std::invalid_argument);
  send_scheduler s;
  s.open(4, non_incremental(3));
  EXPECT_THROW(s.open(4, non_incremental(3)), std::invalid_argument);
  s.set_ready(4, 10);
  EXPECT_THROW(s.sent(4, 11), std::invalid_argument);
  s.set_ready(99, 10);  // not open (e.g. reset meanwhile): ignored
  s.sent(99, 10);
  EXPECT_FALSE(s.is_open(99));
  EXPECT_EQ(drain(s), (std::vector<step>{{4, 10}}));
}

}  // namespace

// C ABI: the async streaming encoder (to a local file; spec 04 §C.4, spec 07
// C2.4 "Async streaming encoder"). Each call is a task on the runtime
// (async_runtime.cpp) running the synchronous `tensogram::streaming_encoder`.
//
// Writes to one encoder are serialised and run in the order they were
// launched: every operation takes a ticket at launch and waits for its turn
// on the worker. An operation cancelled or timed out before it started gives
// its turn up; one cancelled while waiting for its turn skips its write.
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "async.hpp"
#include "encode_args.hpp"
#include "tensogram/cbor/json.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/message/json_encode.hpp"
#include "tensogram/message/streaming_encoder.hpp"

namespace tensogram::capi {

// Turns for the operations of one encoder, in ticket order.
class serial_gate {
 public:
  std::uint64_t take() {
    const std::lock_guard lock(mu_);
    return next_++;
  }
  void enter(std::uint64_t ticket) {
    std::unique_lock lock(mu_);
    turn_.wait(lock, [&] { return serving_ == ticket; });
  }
  void leave() {
    const std::lock_guard lock(mu_);
    advance();
  }
  // A ticket whose operation will never enter.
  void skip(std::uint64_t ticket) {
    const std::lock_guard lock(mu_);
    if (ticket == serving_) {
      advance();
    } else {
      skipped_.insert(ticket);
    }
  }

 private:
  void advance() {
    ++serving_;
    while (skipped_.erase(serving_) != 0) ++serving_;
    turn_.notify_all();
  }

  std::mutex mu_;
  std::condition_variable turn_;
  std::uint64_t next_ = 0;
  std::uint64_t serving_ = 0;
  std::set<std::uint64_t> skipped_;
};

// One launched operation's claim on its turn.
struct turn_claim {
  explicit turn_claim(std::uint64_t t) : ticket(t) {}
  const std::uint64_t ticket;
  std::atomic<int> phase{0};  // 0 queued, 1 started, 2 given up before starting
  std::atomic<bool> dropped{false};
};

/// The encoder and its bookkeeping; shared by the handle and the tasks in
/// flight, so freeing the handle never invalidates them.
struct async_encoder_state {
  explicit async_encoder_state(std::string p) : path(std::move(p)) {}
  const std::string path;
  // Held while an operation takes its ticket and is queued, so that the
  // pool's FIFO queue holds the operations in ticket order: a worker waiting
  // for its turn then only ever waits for work queued before its own (no
  // deadlock, even with one worker and launches from several threads).
  std::mutex launch_mu;
  serial_gate gate;
  std::mutex mu;  // held while an operation uses the encoder (BUSY)
  std::optional<streaming_encoder> enc;
  bool finished = false;
};

}  // namespace tensogram::capi

struct tgm_async_streaming_encoder_t : tensogram::capi::handle_tag<0x7467'6d61'656e'6364> {  // "tgmaencd"
  explicit tgm_async_streaming_encoder_t(std::shared_ptr<tensogram::capi::async_encoder_state> s)
      : state(std::move(s)) {}
  std::shared_ptr<tensogram::capi::async_encoder_state> state;
};

namespace {

namespace capi = tensogram::capi;
using capi::task_kind;
using capi::task_value;
using state_ptr = std::shared_ptr<capi::async_encoder_state>;
constexpr const char* encoder_type = "tgm_async_streaming_encoder_t";

// Launches `op(encoder, finished)` as the encoder's next operation in launch
// order (see the file comment).
tgm_async_task_t* launch_in_order(const char* fn, const state_ptr& s, tgm_cancellation_token_t* cancel,
                                  uint64_t timeout_ms,
                                  std::function<void(tensogram::streaming_encoder&, bool& finished)> op) {
  const std::lock_guard launching(s->launch_mu);
  auto claim = std::make_shared<capi::turn_claim>(s->gate.take());
  const auto give_up = [s, claim] {
    int queued = 0;
    if (claim->phase.compare_exchange_strong(queued, 2)) {
      s->gate.skip(claim->ticket);
    } else {
      claim->dropped = true;
    }
  };
  try {
    return capi::launch_task(
        fn, task_kind::none, cancel, timeout_ms, std::string(fn) + " on " + s->path,
        [s, claim, op = std::move(op)]() -> task_value {
          int queued = 0;
          if (!claim->phase.compare_exchange_strong(queued, 1)) return {};  // gave its turn up
          s->gate.enter(claim->ticket);
          struct leave_on_exit {
            capi::serial_gate& g;
            ~leave_on_exit() { g.leave(); }
          } leave{s->gate};
          // Cancelled or timed out while waiting for the turn: the outcome is
          // already reported, the write must not happen.
          if (claim->dropped) return {};
          const std::lock_guard lock(s->mu);
          if (s->finished || !s->enc) throw tensogram::framing_error("encoder already finished");
          op(*s->enc, s->finished);
          return {};
        },
        [give_up](capi::task_core& t) {
          t.on_resolved([give_up](bool ok) {
            if (!ok) give_up();
          });
        });
  } catch (...) {
    give_up();  // never launched: the turn must not block later operations
    throw;
  }
}

// The two object writes: the descriptor is parsed and the data copied before
// the call returns (spec 07 C2.4); the write runs in launch order.
tgm_error write_task(const char* fn, tgm_async_streaming_encoder_t* enc, const char* descriptor_json,
                     const uint8_t* data, size_t len, bool pre_encoded, tgm_cancellation_token_t* cancel,
                     uint64_t timeout_ms, tgm_async_task_t** out_task) {
  return capi::launch(fn, out_task, [&] {
    const state_ptr& s = capi::live(fn, encoder_type, enc).state;
    auto desc = tensogram::parse_descriptor_json(capi::text_arg(fn, "descriptor_json", descriptor_json));
    const auto bytes = capi::bytes_arg(fn, "data", data, len);
    std::vector<std::byte> copy(bytes.begin(), bytes.end());
    return launch_in_order(fn, s, cancel, timeout_ms,
                           [desc = std::move(desc), copy = std::move(copy), pre_encoded](
                               tensogram::streaming_encoder& e, bool&) {
                             if (pre_encoded) {
                               e.write_object_pre_encoded(desc, copy);
                             } else {
                               e.write_object(desc, copy);
                             }
                           });
  });
}

}  // namespace

extern "C" {

tgm_error tgm_async_streaming_encoder_create(const char* path, const char* metadata_json,
                                             const char* hash_algo, uint32_t threads,
                                             tgm_cancellation_token_t* cancel, uint64_t timeout_ms,
                                             tgm_async_task_t** out_task) {
  constexpr const char* fn = "tgm_async_streaming_encoder_create";
  return capi::launch(fn, out_task, [&] {
    std::string p = capi::text_arg(fn, "path", path);
    // JSON and hash errors fail here, synchronously; the file is created by
    // the task (spec 07 C2.4).
    tensogram::global_metadata meta =
        tensogram::parse_streaming_metadata_json(capi::text_arg(fn, "metadata_json", metadata_json));
    const tensogram::encode_options opts = capi::encode_opts(fn, hash_algo, threads);
    std::string what = std::string(fn) + " on " + p;
    return capi::launch_task(fn, task_kind::encoder, cancel, timeout_ms, std::move(what),
                             [p = std::move(p), meta = std::move(meta), opts]() -> task_value {
                               auto s = std::make_shared<capi::async_encoder_state>(p);
                               s->enc.emplace(p, meta, opts);  // preamble and header written
                               return s;
                             });
  });
}

tgm_error tgm_async_streaming_encoder_write_object(tgm_async_streaming_encoder_t* enc,
                                                   const char* descriptor_json, const uint8_t* data,
                                                   size_t len, tgm_cancellation_token_t* cancel,
                                                   uint64_t timeout_ms, tgm_async_task_t** out_task) {
  return write_task("tgm_async_streaming_encoder_write_object", enc, descriptor_json, data, len, false,
                    cancel, timeout_ms, out_task);
}

tgm_error tgm_async_streaming_encoder_write_pre_encoded(tgm_async_streaming_encoder_t* enc,
                                                        const char* descriptor_json, const uint8_t* data,
                                                        size_t len, tgm_cancellation_token_t* cancel,
                                                        uint64_t timeout_ms, tgm_async_task_t** out_task) {
  return write_task("tgm_async_streaming_encoder_write_pre_encoded", enc, descriptor_json, data, len, true,
                    cancel, timeout_ms, out_task);
}

tgm_error tgm_async_streaming_encoder_write_preceder(tgm_async_streaming_encoder_t* enc,
                                                     const char* metadata_json,
                                                     tgm_cancellation_token_t* cancel, uint64_t timeout_ms,
                                                     tgm_async_task_t** out_task) {
  constexpr const char* fn = "tgm_async_streaming_encoder_write_preceder";
  return capi::launch(fn, out_task, [&] {
    const state_ptr& s = capi::live(fn, encoder_type, enc).state;
    tensogram::cbor::value entry =
        tensogram::cbor::from_json_text(capi::text_arg(fn, "metadata_json", metadata_json));
    // A non-object fails synchronously (spec 07 C2.4); the rest of the
    // checks run with the write.
    if (!entry.is_map()) throw tensogram::metadata_error("preceder metadata JSON must be an object");
    return launch_in_order(
        fn, s, cancel, timeout_ms,
        [entry = std::move(entry)](tensogram::streaming_encoder& e, bool&) { e.write_preceder(entry); });
  });
}

tgm_error tgm_async_streaming_encoder_finish(tgm_async_streaming_encoder_t* enc, bool backfill,
                                             tgm_cancellation_token_t* cancel, uint64_t timeout_ms,
                                             tgm_async_task_t** out_task) {
  constexpr const char* fn = "tgm_async_streaming_encoder_finish";
  // The file sink always back-fills total_length (the message is complete
  // either way); `backfill` is accepted for compatibility (docs/c-api.md).
  (void)backfill;
  return capi::launch(fn, out_task, [&] {
    const state_ptr& s = capi::live(fn, encoder_type, enc).state;
    return launch_in_order(fn, s, cancel, timeout_ms, [](tensogram::streaming_encoder& e, bool& finished) {
      (void)e.finish();
      finished = true;
    });
  });
}

TgmObjectCountStatus tgm_async_streaming_encoder_try_object_count(const tgm_async_streaming_encoder_t* enc,
                                                                  size_t* out_count) {
  const auto* h = capi::live_or_null("tgm_async_streaming_encoder_try_object_count", encoder_type, enc);
  if (h == nullptr || out_count == nullptr) return TGM_OBJECT_COUNT_STATUS_NULL_HANDLE;
  capi::async_encoder_state& s = *h->state;
  const std::unique_lock lock(s.mu, std::try_to_lock);
  if (!lock.owns_lock()) return TGM_OBJECT_COUNT_STATUS_BUSY;  // a write or finish is running
  if (s.finished || !s.enc) return TGM_OBJECT_COUNT_STATUS_FINISHED;
  *out_count = s.enc->object_count();
  return TGM_OBJECT_COUNT_STATUS_OK;
}

size_t tgm_async_streaming_encoder_object_count(const tgm_async_streaming_encoder_t* enc) {
  size_t n = 0;
  return tgm_async_streaming_encoder_try_object_count(enc, &n) == TGM_OBJECT_COUNT_STATUS_OK ? n : SIZE_MAX;
}

const char* tgm_async_streaming_encoder_path(const tgm_async_streaming_encoder_t* enc) {
  const auto* h = capi::live_or_null("tgm_async_streaming_encoder_path", encoder_type, enc);
  return h != nullptr ? h->state->path.c_str() : nullptr;
}

void tgm_async_streaming_encoder_free(tgm_async_streaming_encoder_t* enc) {
  // Tasks in flight hold the state. Without a completed finish the
  // destination is left untouched (the temporary file is removed when the
  // last task is done).
  capi::free_handle("tgm_async_streaming_encoder_free", encoder_type, enc);
}

tgm_error tgm_async_task_join_async_streaming_encoder(tgm_async_task_t* task,
                                                      tgm_async_streaming_encoder_t** out) {
  constexpr const char* fn = "tgm_async_task_join_async_streaming_encoder";
  return capi::guarded([&] {
    capi::required(fn, "out", out);
    task_value v = capi::join_task(fn, task, task_kind::encoder);
    *out = new tgm_async_streaming_encoder_t(std::move(std::get<state_ptr>(v)));
  });
}

}  // extern "C"

// The C ABI's async machinery (spec 07 C2.5): the process-wide runtime,
// tasks with typed joins and completion callbacks, and the launcher every
// async C function goes through. The work itself runs as operations of a
// `io::async_executor` (io/async.hpp), which settles each one once —
// by the work, the cancellation token or the deadline.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "capi.hpp"
#include "tensogram/core/buffer.hpp"
#include "tensogram/io/async.hpp"
#include "tensogram/message/decode.hpp"
#include "tensogram/message/metadata_view.hpp"

namespace tensogram::capi {

struct async_file_state;     // async_file.cpp
struct async_encoder_state;  // async_streaming.cpp

/// What a task yields, named by the join that reads it.
enum class task_kind : std::uint8_t {
  none,
  size,
  bytes,
  message,
  metadata,
  async_file,
  multi_bytes,
  encoder
};
[[nodiscard]] const char* task_kind_name(task_kind k) noexcept;

using task_value = std::variant<std::monostate, std::uint64_t, buffer, message, metadata, std::vector<buffer>,
                                std::shared_ptr<async_file_state>, std::shared_ptr<async_encoder_state>>;

/// One launched operation as C sees it: Pending → Ready (outcome stored) →
/// Consumed (joined). Shared by the C handle, the operation's completion
/// hook and the runtime's list of unresolved tasks.
class task_core : public std::enable_shared_from_this<task_core> {
 public:
  explicit task_core(task_kind kind) : kind_(kind) {}

  [[nodiscard]] task_kind kind() const noexcept { return kind_; }
  /// This task's own cancellation (tgm_async_task_cancel, shutdown).
  [[nodiscard]] const io::cancellation_token& token() const noexcept { return token_; }
  /// Cancels this task when `caller` is cancelled (the launcher's token).
  void link(const io::cancellation_token& caller);
  /// Called once resolved, outside every lock, with whether the task
  /// succeeded (the async encoder releases its write slot with it).
  void on_resolved(std::function<void(bool ok)> hook) { on_resolved_ = std::move(hook); }

  /// Hands over the operation's future and where its work puts the value.
  void arm(std::future<void> done, std::shared_ptr<std::optional<task_value>> slot);
  /// The operation's on_settled hook.
  void settled();
  void cancel() noexcept { token_.cancel(); }

  [[nodiscard]] bool ready() const;
  /// Blocks until resolved and takes the value (once). Throws the task's
  /// error, or `invalid_arg_error` when already consumed or when `expected`
  /// is not what the task yields (the result is then discarded).
  [[nodiscard]] task_value join(const char* fn, task_kind expected);
  /// Registers the completion callback (once; spec 07 C2.5).
  void set_completion(const char* fn, void (*cb)(void*), void* userdata);

 private:
  enum class state : std::uint8_t { pending, ready, consumed };
  // Resolves if both the future and the settlement are there.
  void try_resolve(std::unique_lock<std::mutex>& lock);

  const task_kind kind_;
  io::cancellation_token token_;
  std::optional<std::stop_callback<std::function<void()>>> link_;
  std::function<void(bool)> on_resolved_;

  mutable std::mutex mu_;
  std::condition_variable resolved_;
  state state_ = state::pending;
  bool settled_ = false;
  std::optional<std::future<void>> done_;
  std::shared_ptr<std::optional<task_value>> slot_;
  std::optional<task_value> value_;
  std::exception_ptr error_;
  void (*cb_)(void*) = nullptr;
  void* userdata_ = nullptr;
  bool cb_registered_ = false;
};

/// The executor tasks run on; throws `io_error` "runtime has been shut down"
/// after tgm_runtime_shutdown_blocking. Builds the runtime on first use.
[[nodiscard]] io::async_executor runtime_executor();

/// Queues `work` (which returns the task's value) as one operation named
/// `what` and returns the new task handle. `cancel` may be NULL; `timeout_ms`
/// 0 = no deadline. `prepare` may adjust the task before it starts.
[[nodiscard]] tgm_async_task_t* launch_task(const char* fn, task_kind kind, tgm_cancellation_token_t* cancel,
                                            std::uint64_t timeout_ms, std::string what,
                                            std::function<task_value()> work,
                                            const std::function<void(task_core&)>& prepare = {});

/// The fallible-launcher body: checks `out_task`, runs `start` (which
/// returns the task) and stores the task.
template <typename Start>
[[nodiscard]] tgm_error launch(const char* fn, tgm_async_task_t** out_task, Start&& start) noexcept {
  return guarded([&] {
    required(fn, "out_task", out_task);
    *out_task = std::forward<Start>(start)();
  });
}

/// The value of a task handle's join for the typed join functions.
[[nodiscard]] task_value join_task(const char* fn, tgm_async_task_t* task, task_kind expected);

}  // namespace tensogram::capi

// C ABI: the async file (read side; spec 04 §C.4 "Async API", spec 07 C2.4
// "Async file"). Each operation runs the synchronous `tensogram::file` call
// as a task on the runtime (async_runtime.cpp); a file may serve any number
// of tasks at once (`tensogram::file` is thread-safe).
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "async.hpp"
#include "file_handle.hpp"
#include "handles.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/io/byte_source.hpp"
#include "tensogram/io/file.hpp"

namespace tensogram::capi {

/// The file and the name it was opened with; shared by the handle and the
/// tasks in flight, so closing the handle never invalidates them.
struct async_file_state {
  async_file_state(std::shared_ptr<tensogram::file> f, std::string p)
      : opened(std::move(f)), path(std::move(p)) {}
  std::shared_ptr<tensogram::file> opened;
  std::string path;  // path or URL as given
};

}  // namespace tensogram::capi

struct tgm_async_file_t : tensogram::capi::handle_tag<0x7467'6d61'6669'6c65> {  // "tgmafile"
  explicit tgm_async_file_t(std::shared_ptr<tensogram::capi::async_file_state> s) : state(std::move(s)) {}
  std::shared_ptr<tensogram::capi::async_file_state> state;
};

namespace {

namespace capi = tensogram::capi;
using capi::task_kind;
using capi::task_value;
constexpr const char* async_file_type = "tgm_async_file_t";

using state_ptr = std::shared_ptr<capi::async_file_state>;

// The text naming an operation in cancellation and timeout messages.
std::string describe(const char* fn, const std::string& args, const std::string& path) {
  return std::string(fn) + "(" + args + ") on " + path;
}

std::string message_arg(std::size_t i) {
  return "message " + std::to_string(i);
}

// A launcher for an operation on an open async file: `work(file)` runs on
// the runtime with the file kept alive by the task. With a message index,
// the task first checks it (the file calls' framing error, spec 07 C2.6).
// `args` names the operation's arguments in cancellation and timeout texts.
template <typename Work>
tgm_error file_task(const char* fn, tgm_async_file_t* file, task_kind kind,
                    std::optional<std::size_t> message, const std::string& args,
                    tgm_cancellation_token_t* cancel, uint64_t timeout_ms, tgm_async_task_t** out_task,
                    Work work) {
  return capi::launch(fn, out_task, [&] {
    state_ptr s = capi::live(fn, async_file_type, file).state;
    std::string what = describe(fn, message ? message_arg(*message) + args : args, s->path);
    return capi::launch_task(fn, kind, cancel, timeout_ms, std::move(what),
                             [s = std::move(s), message, work = std::move(work)]() -> task_value {
                               if (message) capi::check_message_index(*s->opened, *message);
                               return work(*s->opened);
                             });
  });
}

// What this build opens remotely: http(s) and file:// URLs. The reference
// also opens object stores (s3://, gs://, az://) with its async-remote
// feature.
bool is_supported_url(const std::string& url) {
  return tensogram::io::is_remote_url(url) || url.starts_with("file://");
}

}  // namespace

extern "C" {

tgm_error tgm_async_file_open(const char* path, tgm_cancellation_token_t* cancel, uint64_t timeout_ms,
                              tgm_async_task_t** out_task) {
  constexpr const char* fn = "tgm_async_file_open";
  return capi::launch(fn, out_task, [&] {
    std::string p = capi::text_arg(fn, "path", path);
    std::string what = describe(fn, "", p);
    return capi::launch_task(fn, task_kind::async_file, cancel, timeout_ms, std::move(what),
                             [p = std::move(p)]() -> task_value {
                               return std::make_shared<capi::async_file_state>(capi::open_existing(p), p);
                             });
  });
}

tgm_error tgm_async_file_open_remote(const char* url, const char* const* storage_keys,
                                     const char* const* storage_values, size_t nopts, bool bidirectional,
                                     tgm_cancellation_token_t* cancel, uint64_t timeout_ms,
                                     tgm_async_task_t** out_task) {
  constexpr const char* fn = "tgm_async_file_open_remote";
  return capi::launch(fn, out_task, [&] {
    std::string u = capi::text_arg(fn, "url", url);
    if (nopts > 0) {
      capi::required(fn, "storage_keys", storage_keys);
      capi::required(fn, "storage_values", storage_values);
    }
    // Options are copied (and checked) before the call returns.
    tensogram::io::remote_options remote;
    for (size_t i = 0; i < nopts; ++i) {
      const std::string index = std::to_string(i);
      const std::string key = capi::text_arg(fn, ("storage_keys[" + index + "]").c_str(), storage_keys[i]);
      const std::string value =
          capi::text_arg(fn, ("storage_values[" + index + "]").c_str(), storage_values[i]);
      tensogram::io::set_remote_option(remote, key, value);
    }
    if (!is_supported_url(u)) {
      // As the reference built without its async-remote feature: an error,
      // never an unresolved symbol (spec 07 C2.1).
      throw tensogram::remote_error("cannot open '" + u +
                                    "': this build reads http(s):// and file:// URLs only (no object-store "
                                    "support for s3://, gs://, az://)");
    }
    const tensogram::scan_mode mode =
        bidirectional ? tensogram::scan_mode::bidirectional : tensogram::scan_mode::forward;
    std::string what = describe(fn, "", u);
    return capi::launch_task(
        fn, task_kind::async_file, cancel, timeout_ms, std::move(what),
        [u = std::move(u), remote = std::move(remote), mode]() -> task_value {
          if (u.starts_with("file://")) {
            return std::make_shared<capi::async_file_state>(capi::open_existing(u.substr(7), mode), u);
          }
          auto f = std::make_shared<tensogram::file>(tensogram::file::open_remote(u, remote, mode));
          (void)f->source().size();  // one HEAD request: reachable, and how big
          return std::make_shared<capi::async_file_state>(std::move(f), u);
        });
  });
}

tgm_error tgm_async_file_message_count(tgm_async_file_t* file, tgm_cancellation_token_t* cancel,
                                       uint64_t timeout_ms, tgm_async_task_t** out_task) {
  return file_task(
      "tgm_async_file_message_count", file, task_kind::size, std::nullopt, "", cancel, timeout_ms, out_task,
      [](tensogram::file& f) -> task_value { return static_cast<std::uint64_t>(f.message_count()); });
}

tgm_error tgm_async_file_read_message(tgm_async_file_t* file, size_t index, tgm_cancellation_token_t* cancel,
                                      uint64_t timeout_ms, tgm_async_task_t** out_task) {
  return file_task("tgm_async_file_read_message", file, task_kind::bytes, index, "", cancel, timeout_ms,
                   out_task, [index](tensogram::file& f) -> task_value { return f.message_bytes(index); });
}

tgm_error tgm_async_file_decode_message(tgm_async_file_t* file, size_t index, bool native_byte_order,
                                        uint32_t threads, bool restore_non_finite, bool verify_hash,
                                        tgm_cancellation_token_t* cancel, uint64_t timeout_ms,
                                        tgm_async_task_t** out_task) {
  const auto opts = capi::decode_opts(native_byte_order, threads, verify_hash, restore_non_finite);
  return file_task("tgm_async_file_decode_message", file, task_kind::message, index, "", cancel, timeout_ms,
                   out_task,
                   [index, opts](tensogram::file& f) -> task_value { return f.decode_message(index, opts); });
}

tgm_error tgm_async_file_decode_metadata(tgm_async_file_t* file, size_t index,
                                         tgm_cancellation_token_t* cancel, uint64_t timeout_ms,
                                         tgm_async_task_t** out_task) {
  return file_task("tgm_async_file_decode_metadata", file, task_kind::metadata, index, "", cancel, timeout_ms,
                   out_task, [index](tensogram::file& f) -> task_value { return f.decode_metadata(index); });
}

tgm_error tgm_async_file_decode_object(tgm_async_file_t* file, size_t msg_index, size_t obj_index,
                                       bool native_byte_order, uint32_t threads, bool restore_non_finite,
                                       bool verify_hash, tgm_cancellation_token_t* cancel,
                                       uint64_t timeout_ms, tgm_async_task_t** out_task) {
  const auto opts = capi::decode_opts(native_byte_order, threads, verify_hash, restore_non_finite);
  return file_task("tgm_async_file_decode_object", file, task_kind::message, msg_index,
                   ", object " + std::to_string(obj_index), cancel, timeout_ms, out_task,
                   [msg_index, obj_index, opts](tensogram::file& f) -> task_value {
                     return f.decode_object(msg_index, obj_index, opts);
                   });
}

tgm_error tgm_async_file_decode_range(tgm_async_file_t* file, size_t msg_index, size_t obj_index,
                                      const uint64_t* offsets, const uint64_t* counts, size_t n_ranges,
                                      bool native_byte_order, uint32_t threads,
                                      tgm_cancellation_token_t* cancel, uint64_t timeout_ms,
                                      tgm_async_task_t** out_task) {
  constexpr const char* fn = "tgm_async_file_decode_range";
  // Required even for zero ranges, as in the reference (spec 07 C2.4); a
  // failure here is reported like the other argument errors.
  if (offsets == nullptr || counts == nullptr) {
    return capi::launch(fn, out_task, [&]() -> tgm_async_task_t* {
      capi::throw_null(fn, offsets == nullptr ? "offsets" : "counts");
    });
  }
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  ranges.reserve(n_ranges);
  for (size_t i = 0; i < n_ranges; ++i) ranges.emplace_back(offsets[i], counts[i]);
  // Masks are restored; hashes are never verified in range decode.
  const auto opts = capi::decode_opts(native_byte_order, threads, false, true);
  return file_task(
      fn, file, task_kind::multi_bytes, msg_index, ", object " + std::to_string(obj_index), cancel,
      timeout_ms, out_task,
      [msg_index, obj_index, ranges = std::move(ranges), opts](tensogram::file& f) -> task_value {
        return f.decode_range(msg_index, obj_index, ranges, opts);
      });
}

const char* tgm_async_file_path(const tgm_async_file_t* file) {
  const auto* f = capi::live_or_null("tgm_async_file_path", async_file_type, file);
  return f != nullptr ? f->state->path.c_str() : nullptr;
}

void tgm_async_file_close(tgm_async_file_t* file) {
  // Tasks in flight hold the file state: they complete normally.
  capi::free_handle("tgm_async_file_close", async_file_type, file);
}

tgm_error tgm_async_task_join_async_file(tgm_async_task_t* task, tgm_async_file_t** out) {
  constexpr const char* fn = "tgm_async_task_join_async_file";
  return capi::guarded([&] {
    capi::required(fn, "out", out);
    task_value v = capi::join_task(fn, task, task_kind::async_file);
    *out = new tgm_async_file_t(std::move(std::get<state_ptr>(v)));
  });
}

}  // extern "C"

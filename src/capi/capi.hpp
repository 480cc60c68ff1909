// Internals shared by the C ABI sources (src/capi/*.cpp): the exception
// boundary, argument checks, handle validation and library-owned byte
// buffers. Not installed; the public surface is include/tensogram.h.
//
// Every exported function is `noexcept` in effect: its body runs inside
// `guarded` (fallible functions) or `guarded_value` (accessors), which turn
// any C++ exception into a tgm_error code and the thread's last-error text
// (spec 04 §C.1, spec 07 C2.3). Nothing unwinds through the ABI. Output
// arguments are written only on success, as in the reference: each function
// computes its result first and stores it last.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensogram.h"
#include "tensogram/core/buffer.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define TENSOGRAM_CAPI_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TENSOGRAM_CAPI_ASAN 1
#endif
#endif
#ifdef TENSOGRAM_CAPI_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace tensogram::capi {

// ---- last error --------------------------------------------------------------

/// Stores `text` in this thread's last-error slot (spec 07 C2.3). The slot
/// is sticky: successful calls leave it alone, as in the reference.
void set_last_error(std::string_view text) noexcept;

/// Maps the exception being handled to a code and records its text. Call
/// only inside a `catch` block.
[[nodiscard]] tgm_error report_current_exception() noexcept;

/// Runs `f` and returns TGM_ERROR_OK, or the code of the exception it threw.
template <typename F>
[[nodiscard]] tgm_error guarded(F&& f) noexcept {
  try {
    std::forward<F>(f)();
    return TGM_ERROR_OK;
  } catch (...) {
    return report_current_exception();
  }
}

/// For functions that cannot report errors: `f()`, or `fallback` when it
/// throws (the text is still recorded).
template <typename T, typename F>
[[nodiscard]] T guarded_value(T fallback, F&& f) noexcept {
  try {
    return std::forward<F>(f)();
  } catch (...) {
    (void)report_current_exception();
    return fallback;
  }
}

// ---- arguments -----------------------------------------------------------------

/// Throws `invalid_arg_error` naming the function and the argument.
[[noreturn]] void throw_null(const char* fn, const char* arg);
[[noreturn]] void throw_invalid(const char* fn, const std::string& what);

/// `p`, or `invalid_arg_error` when it is NULL.
template <typename T>
T* required(const char* fn, const char* arg, T* p) {
  if (p == nullptr) throw_null(fn, arg);
  return p;
}

/// A required NUL-terminated UTF-8 argument.
[[nodiscard]] std::string text_arg(const char* fn, const char* arg, const char* s);
/// As `text_arg`, NULL giving nothing.
[[nodiscard]] std::optional<std::string> optional_text_arg(const char* fn, const char* arg, const char* s);

/// `hash_algo` of the encode functions: NULL/"none" → "none", "xxh3";
/// anything else is `invalid_arg_error` (spec 07 C2.3).
[[nodiscard]] std::string hash_algo_arg(const char* fn, const char* hash_algo);

/// `(buf, len)` as bytes; NULL `buf` is an error unless `allow_null_empty`
/// and `len == 0`.
[[nodiscard]] std::span<const std::byte> bytes_arg(const char* fn, const char* arg, const std::uint8_t* buf,
                                                   std::size_t len, bool allow_null_empty = false);

// ---- handles -------------------------------------------------------------------

/// First member of every handle: a per-type tag, overwritten when the handle
/// is freed, so that most double frees and uses after free are reported as
/// TGM_ERROR_INVALID_ARG instead of corrupting memory. Detection is best
/// effort: memory reused for a new handle of the same type looks live again.
template <std::uint64_t Magic>
struct handle_tag {
  static constexpr std::uint64_t live_magic = Magic;
  std::uint64_t magic = Magic;

  handle_tag() = default;
  handle_tag(const handle_tag&) = delete;
  handle_tag& operator=(const handle_tag&) = delete;
  // A volatile store: an ordinary one before `delete` may be optimised out.
  ~handle_tag() { *static_cast<volatile std::uint64_t*>(&magic) = 0; }
};

/// Whether `h` points to a live handle of its type (false for NULL).
template <typename H>
[[nodiscard]] bool is_live(const H* h) noexcept {
  if (h == nullptr) return false;
#ifdef TENSOGRAM_CAPI_ASAN
  // Freed memory sits poisoned in ASan's quarantine: reading it would abort.
  if (__asan_address_is_poisoned(&h->magic) != 0) return false;
#endif
  return h->magic == H::live_magic;
}

/// Throws `invalid_arg_error` for a stale handle (freed or not a `type_name`).
[[noreturn]] void throw_stale(const char* fn, const char* type_name);

/// `h` after checking it is non-NULL and live.
template <typename H>
H& live(const char* fn, const char* type_name, H* h) {
  if (h == nullptr) throw_null(fn, type_name);
  if (!is_live(h)) throw_stale(fn, type_name);
  return *h;
}

/// For accessors: `h` if live; NULL handles give nullptr silently, stale
/// ones record a last error (they are a caller bug worth reporting).
template <typename H>
[[nodiscard]] const H* live_or_null(const char* fn, const char* type_name, const H* h) noexcept {
  if (h == nullptr) return nullptr;
  if (is_live(h)) return h;
  try {
    throw_stale(fn, type_name);
  } catch (...) {
    (void)report_current_exception();
  }
  return nullptr;
}

/// Releases a handle allocated with `new`: NULL is a no-op, a stale handle
/// is reported (last error) and left alone.
template <typename H>
void free_handle(const char* fn, const char* type_name, H* h) noexcept {
  if (h == nullptr) return;
  if (!is_live(h)) {
    try {
      throw_stale(fn, type_name);
    } catch (...) {
      (void)report_current_exception();
    }
    return;
  }
  delete h;
}

// ---- library-owned bytes ---------------------------------------------------------

/// A tgm_bytes_t of `n` uninitialised bytes for the caller to fill
/// ({NULL, 0} when `n` is 0).
[[nodiscard]] tgm_bytes_t allocate_bytes(std::size_t n);
/// A tgm_bytes_t holding a copy of `bytes` ({NULL, 0} when empty). A hidden
/// NUL follows the last byte, so a caller printing a JSON result with "%s"
/// does not overrun; callers should still use `len`.
[[nodiscard]] tgm_bytes_t make_bytes(std::span<const std::byte> bytes);
[[nodiscard]] tgm_bytes_t make_bytes(std::string_view text);
/// Releases a buffer from `make_bytes`; false (nothing done) when `buf` was
/// not allocated by it or was released already.
bool release_bytes(tgm_bytes_t buf) noexcept;
/// Copies decoded ranges into the caller's `out` array (one buffer each, or
/// one joined buffer when `join`); on failure nothing stays allocated.
void copy_ranges(const std::vector<buffer>& parts, bool join, tgm_bytes_t* out, size_t* out_count);

/// An array of `n` tgm_bytes_t for tgm_async_task_join_multi_bytes, all
/// {NULL, 0}, released by `release_bytes_array`.
[[nodiscard]] tgm_bytes_t* make_bytes_array(std::size_t n);
bool release_bytes_array(tgm_bytes_t* array, std::size_t n) noexcept;

}  // namespace tensogram::capi

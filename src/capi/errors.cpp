// C ABI: last error, error texts, argument checks and library-owned byte
// buffers (spec 04 §C.1–C.2, spec 07 C2.3).
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <new>
#include <string>
#include <system_error>

#include "capi.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/core/utf8.hpp"
#include "tensogram/format/wire.hpp"

namespace tensogram::capi {

// The header's macro is the core's constant (spec 07 C2.1).
static_assert(TGM_WIRE_VERSION == format::wire_version);

namespace {

// The thread's last-error slot: one of the two pieces of global state the
// C ABI defines (the other is the async runtime, async_runtime.cpp). The
// reference keeps one owned C string per OS thread and never clears it on
// success (spec 07 C2.3); so does this one.
struct last_error_slot {
  std::string text;
  bool set = false;
};
thread_local last_error_slot t_last_error;

// A tag in front of every buffer handed out as tgm_bytes_t, so that
// tgm_bytes_free can refuse pointers it did not allocate or already freed.
struct bytes_header {
  std::uint64_t magic;
  std::uint64_t size;  // bytes (or array entries) after the header
};
// 16 bytes keep the data as aligned as malloc's result.
static_assert(sizeof(bytes_header) == 16);
constexpr std::uint64_t bytes_magic = 0x7467'6d62'7974'6573;        // "tgmbytes"
constexpr std::uint64_t bytes_array_magic = 0x7467'6d62'6172'7279;  // "tgmbarry"

bytes_header* header_of(const void* data) noexcept {
  return reinterpret_cast<bytes_header*>(const_cast<std::byte*>(static_cast<const std::byte*>(data)) -
                                         sizeof(bytes_header));
}

bool header_is(const void* data, std::uint64_t magic, std::uint64_t size) noexcept {
  bytes_header* h = header_of(data);
#ifdef TENSOGRAM_CAPI_ASAN
  if (__asan_region_is_poisoned(h, sizeof(bytes_header)) != nullptr) return false;
#endif
  return h->magic == magic && h->size == size;
}

void* allocate_with_header(std::uint64_t magic, std::size_t count, std::size_t bytes) {
  if (bytes > SIZE_MAX - sizeof(bytes_header) - 1) throw std::bad_alloc();
  void* base = std::malloc(sizeof(bytes_header) + bytes + 1);
  if (base == nullptr) throw std::bad_alloc();
  auto* h = static_cast<bytes_header*>(base);
  h->magic = magic;
  h->size = count;
  return h + 1;
}

void release_with_header(void* data) noexcept {
  bytes_header* h = header_of(data);
  *static_cast<volatile std::uint64_t*>(&h->magic) = 0;
  std::free(h);
}

}  // namespace

void set_last_error(std::string_view text) noexcept {
  try {
    // A text with an interior NUL cannot be a C string: the slot then reads
    // NULL, as in the reference.
    t_last_error.set = text.find('\0') == std::string_view::npos;
    t_last_error.text.assign(text);
  } catch (...) {
    // No memory for the text: keep the code, drop the message.
    t_last_error.set = false;
  }
}

tgm_error report_current_exception() noexcept {
  try {
    throw;
  } catch (const error& e) {
    const tgm_error code = e.code() == TGM_ERROR_OK ? TGM_ERROR_ENCODING : e.code();
    // Timeouts and cancellations read as in the reference ("async task timed
    // out"), followed by which operation it was.
    if (code == TGM_ERROR_TIMEOUT || code == TGM_ERROR_CANCELLED) {
      set_last_error(std::string(error_code_text(code)) + ": " + std::string(e.detail()));
    } else {
      set_last_error(e.what());
    }
    return code;
  } catch (const std::bad_alloc&) {
    set_last_error("out of memory (a memory allocation failed)");
    return TGM_ERROR_ENCODING;
  } catch (const std::filesystem::filesystem_error& e) {
    set_last_error(std::string("io error: ") + e.what());
    return TGM_ERROR_IO;
  } catch (const std::system_error& e) {
    set_last_error(std::string("io error: ") + e.what());
    return TGM_ERROR_IO;
  } catch (const std::exception& e) {
    // Any other failure is the reference's catch-all code (spec 04 §C.1).
    set_last_error(std::string("encoding error: ") + e.what());
    return TGM_ERROR_ENCODING;
  } catch (...) {
    set_last_error("encoding error: unknown exception");
    return TGM_ERROR_ENCODING;
  }
}

void throw_null(const char* fn, const char* arg) {
  throw invalid_arg_error(std::string(fn) + ": null argument '" + arg + "'");
}

void throw_invalid(const char* fn, const std::string& what) {
  throw invalid_arg_error(std::string(fn) + ": " + what);
}

void throw_stale(const char* fn, const char* type_name) {
  throw invalid_arg_error(std::string(fn) + ": '" + type_name +
                          "' is not a live handle (already freed, or not a handle of this type)");
}

std::string text_arg(const char* fn, const char* arg, const char* s) {
  if (s == nullptr) throw_null(fn, arg);
  const std::string_view text(s);
  if (const auto bad = first_invalid_utf8(text); bad != std::string_view::npos) {
    throw_invalid(fn, std::string("'") + arg + "' is not valid UTF-8 (byte " + std::to_string(bad) + ")");
  }
  return std::string(text);
}

std::optional<std::string> optional_text_arg(const char* fn, const char* arg, const char* s) {
  if (s == nullptr) return std::nullopt;
  return text_arg(fn, arg, s);
}

std::string hash_algo_arg(const char* fn, const char* hash_algo) {
  const std::optional<std::string> algo = optional_text_arg(fn, "hash_algo", hash_algo);
  if (!algo || *algo == "none") return "none";
  if (*algo == "xxh3") return *algo;
  throw_invalid(fn, "unknown hash_algo '" + *algo + "' (expected \"xxh3\", \"none\" or NULL)");
}

std::span<const std::byte> bytes_arg(const char* fn, const char* arg, const std::uint8_t* buf,
                                     std::size_t len, bool allow_null_empty) {
  if (buf == nullptr) {
    if (allow_null_empty && len == 0) return {};
    throw_null(fn, arg);
  }
  return {reinterpret_cast<const std::byte*>(buf), len};
}

tgm_bytes_t allocate_bytes(std::size_t n) {
  if (n == 0) return {nullptr, 0};
  auto* data = static_cast<std::uint8_t*>(allocate_with_header(bytes_magic, n, n));
  data[n] = 0;
  return {data, n};
}

tgm_bytes_t make_bytes(std::span<const std::byte> bytes) {
  const tgm_bytes_t out = allocate_bytes(bytes.size());
  if (out.data != nullptr) std::memcpy(out.data, bytes.data(), bytes.size());
  return out;
}

tgm_bytes_t make_bytes(std::string_view text) {
  return make_bytes(std::as_bytes(std::span<const char>(text.data(), text.size())));
}

bool release_bytes(tgm_bytes_t buf) noexcept {
  if (buf.data == nullptr) return true;
  if (!header_is(buf.data, bytes_magic, buf.len)) return false;
  release_with_header(buf.data);
  return true;
}

tgm_bytes_t* make_bytes_array(std::size_t n) {
  if (n > (SIZE_MAX - 64) / sizeof(tgm_bytes_t)) throw std::bad_alloc();
  auto* array =
      static_cast<tgm_bytes_t*>(allocate_with_header(bytes_array_magic, n, n * sizeof(tgm_bytes_t)));
  for (std::size_t i = 0; i < n; ++i) array[i] = {nullptr, 0};
  return array;
}

bool release_bytes_array(tgm_bytes_t* array, std::size_t n) noexcept {
  if (array == nullptr) return true;
  if (!header_is(array, bytes_array_magic, n)) return false;
  bool all = true;
  for (std::size_t i = 0; i < n; ++i) all = release_bytes(array[i]) && all;
  release_with_header(array);
  return all;
}

}  // namespace tensogram::capi

namespace capi = tensogram::capi;

extern "C" {

const char* tgm_last_error(void) {
  const auto& slot = capi::t_last_error;
  return slot.set ? slot.text.c_str() : nullptr;
}

const char* tgm_error_string(tgm_error err) {
  // Read the argument's bits as an int: C callers may pass any integer, and
  // loading an out-of-range value as the enum type would be undefined.
  int value = 0;
  static_assert(sizeof(value) == sizeof(err));
  std::memcpy(&value, &err, sizeof value);
  if (value < TGM_ERROR_OK || value > TGM_ERROR_CANCELLED) return "unknown error";
  return tensogram::error_code_text(static_cast<tgm_error>(value)).data();
}

tgm_error tgm_set_last_error(tgm_error code, const char* message) {
  // Not in the reference: the bindings over this ABI (the Fortran module)
  // check dtype, rank and 1-based indices above it and report through the
  // same slot, so tgm_last_error says what and where for them too.
  // The argument's bits are read as an int (see tgm_error_string): a code
  // outside the enumeration cannot be held in a tgm_error, so it is itself
  // the caller's invalid argument.
  int value = 0;
  std::memcpy(&value, &code, sizeof value);
  const std::string text = message != nullptr ? message : "(no message)";
  if (value < TGM_ERROR_OK || value > TGM_ERROR_CANCELLED) {
    capi::set_last_error("invalid argument: tgm_set_last_error: unknown code " + std::to_string(value) +
                         " for: " + text);
    return TGM_ERROR_INVALID_ARG;
  }
  const auto known = static_cast<tgm_error>(value);
  capi::set_last_error(std::string(tensogram::error_code_text(known)) + ": " + text);
  return known;
}

void tgm_bytes_free(tgm_bytes_t buf) {
  if (!capi::release_bytes(buf)) {
    capi::set_last_error(
        "invalid argument: tgm_bytes_free: the buffer was not filled by the library or was freed already");
  }
}

void tgm_multi_bytes_free(tgm_bytes_t* array, size_t count) {
  if (!capi::release_bytes_array(array, count)) {
    capi::set_last_error(
        "invalid argument: tgm_multi_bytes_free: the array (or one of its buffers) was not filled by the "
        "library, was freed already, or count differs from the joined count");
  }
}

}  // extern "C"

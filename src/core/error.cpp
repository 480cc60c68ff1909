#include "tensogram/core/error.hpp"

#include "tensogram/core/hex.hpp"

namespace tensogram {

namespace {
std::string mismatch_text(std::optional<std::uint64_t> object_index, std::uint64_t expected,
                          std::uint64_t actual) {
  std::string where = object_index ? "object " + std::to_string(*object_index) : std::string("frame");
  return "hash mismatch on " + where + ": expected " + hex16(expected) + ", got " + hex16(actual);
}
}  // namespace

hash_mismatch_error::hash_mismatch_error(std::optional<std::uint64_t> object_index, std::uint64_t expected,
                                         std::uint64_t actual)
    : integrity_error(TGM_ERROR_HASH_MISMATCH, "", mismatch_text(object_index, expected, actual)),
      object_(object_index),
      expected_(expected),
      actual_(actual) {}

missing_hash_error::missing_hash_error(std::uint64_t object_index)
    : integrity_error(TGM_ERROR_MISSING_HASH, "",
                      "hash verification requested but object " + std::to_string(object_index) +
                          " has no inline hash recorded (HASH_PRESENT flag clear); re-encode "
                          "with hashing enabled or decode without verify_hash"),
      object_(object_index) {}

std::exception_ptr make_error(tgm_error code, const std::string& msg) {
  switch (code) {
    case TGM_ERROR_FRAMING: return std::make_exception_ptr(framing_error(code, msg));
    case TGM_ERROR_METADATA: return std::make_exception_ptr(metadata_error(code, msg));
    case TGM_ERROR_ENCODING: return std::make_exception_ptr(encoding_error(code, msg));
    case TGM_ERROR_COMPRESSION: return std::make_exception_ptr(compression_error(code, msg));
    case TGM_ERROR_OBJECT: return std::make_exception_ptr(object_error(code, msg));
    case TGM_ERROR_IO: return std::make_exception_ptr(io_error(code, msg));
    case TGM_ERROR_HASH_MISMATCH: return std::make_exception_ptr(hash_mismatch_error(code, msg));
    case TGM_ERROR_MISSING_HASH: return std::make_exception_ptr(missing_hash_error(code, msg));
    case TGM_ERROR_INVALID_ARG: return std::make_exception_ptr(invalid_arg_error(code, msg));
    case TGM_ERROR_REMOTE: return std::make_exception_ptr(remote_error(code, msg));
    case TGM_ERROR_TIMEOUT: return std::make_exception_ptr(timeout_error(code, msg));
    case TGM_ERROR_CANCELLED: return std::make_exception_ptr(cancelled_error(code, msg));
    default: return std::make_exception_ptr(error(code, msg));
  }
}

std::string_view error_code_text(tgm_error code) noexcept {
  switch (code) {
    case TGM_ERROR_OK: return "ok";
    case TGM_ERROR_FRAMING: return "framing error";
    case TGM_ERROR_METADATA: return "metadata error";
    case TGM_ERROR_ENCODING: return "encoding error";
    case TGM_ERROR_COMPRESSION: return "compression error";
    case TGM_ERROR_OBJECT: return "object error";
    case TGM_ERROR_IO: return "I/O error";
    case TGM_ERROR_HASH_MISMATCH: return "hash mismatch";
    case TGM_ERROR_INVALID_ARG: return "invalid argument";
    case TGM_ERROR_END_OF_ITER: return "end of iteration";
    case TGM_ERROR_REMOTE: return "remote error";
    case TGM_ERROR_MISSING_HASH: return "missing hash";
    case TGM_ERROR_TIMEOUT: return "async task timed out";
    case TGM_ERROR_CANCELLED: return "async task cancelled";
  }
  return "unknown error";
}

}  // namespace tensogram

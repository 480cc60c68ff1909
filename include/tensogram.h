/*
 * tensogram.h: the C ABI of the tensogram library (wire format v3).
 *
 * Names, prototypes, enum values and ownership rules are those of the
 * reference implementation's C header (spec 04 Part C, spec 07 Part C2), so
 * C, Fortran and FFI code written against it compiles and links unchanged.
 * docs/c-api.md describes the few places where this implementation behaves
 * differently (reference defects it does not reproduce).
 *
 * Conventions (spec 04 C.1, spec 07 C2.3):
 *  - Every fallible function returns a tgm_error; on failure
 *    tgm_last_error() gives a text saying what failed and where. The text
 *    is kept per thread until the next failure on that thread (it is not
 *    cleared by successful calls: read it right after a non-OK return).
 *  - Output arguments are written only when the call succeeds.
 *  - Accessors that cannot fail return NULL / 0 / a default instead.
 *  - Strings passed in are NUL-terminated UTF-8.
 *  - Everything the library allocates is released with the matching
 *    tgm_*_free / _close function (never with free()); every free function
 *    accepts NULL. Pointers returned by accessors are borrowed from the
 *    handle they came from and stay valid until that handle is freed.
 *  - One handle is used by one thread at a time, except the async objects
 *    (async file, async streaming encoder, tasks, tokens), which may be
 *    shared between threads.
 *
 * The header is C11 (also valid C++); callers may include it either as
 * <tensogram.h> or as <tensogram/tensogram.h>.
 */
#ifndef TENSOGRAM_H
#define TENSOGRAM_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* tgm_error: one definition shared with the C++ exception hierarchy. */
#include "tensogram/core/tgm_error.h"

/* Wire-format version written in every preamble. */
#define TGM_WIRE_VERSION 3

#ifdef __cplusplus
extern "C" {
#endif

/* ---- types --------------------------------------------------------------- */

/* Kind of a metadata value seen through a tgm_value_t cursor. CBOR integers
 * of any width are one INT kind. */
typedef enum tgm_value_type {
  TGM_VALUE_TYPE_NULL = 0,
  TGM_VALUE_TYPE_BOOL = 1,
  TGM_VALUE_TYPE_INT = 2,
  TGM_VALUE_TYPE_FLOAT = 3,
  TGM_VALUE_TYPE_STRING = 4,
  TGM_VALUE_TYPE_BYTES = 5,
  TGM_VALUE_TYPE_ARRAY = 6,
  TGM_VALUE_TYPE_MAP = 7
} tgm_value_type;

/* Result of tgm_async_streaming_encoder_try_object_count. */
typedef enum TgmObjectCountStatus {
  TGM_OBJECT_COUNT_STATUS_OK = 0,
  TGM_OBJECT_COUNT_STATUS_NULL_HANDLE = 1,
  TGM_OBJECT_COUNT_STATUS_BUSY = 2,
  TGM_OBJECT_COUNT_STATUS_FINISHED = 3
} TgmObjectCountStatus;

/* A byte buffer owned by the library: release it with tgm_bytes_free. JSON
 * and hex results are not NUL-terminated: use len. */
typedef struct tgm_bytes_t {
  uint8_t* data;
  size_t len;
} tgm_bytes_t;

/* One message found by tgm_scan: bytes [offset, offset + length). */
typedef struct tgm_scan_entry_t {
  size_t offset;
  size_t length;
} tgm_scan_entry_t;

/* NaN / +-Inf handling at encode (spec 02 §9). Mask methods: "none", "rle",
 * "roaring", "lz4", "zstd", "blosc2"; NULL means "roaring". A threshold < 0
 * means the default (128 bytes), 0 turns the small-mask fallback off. */
typedef struct TgmEncodeMaskOptions {
  bool allow_nan;
  bool allow_inf;
  const char* nan_mask_method;
  const char* pos_inf_mask_method;
  const char* neg_inf_mask_method;
  ptrdiff_t small_mask_threshold_bytes;
} TgmEncodeMaskOptions;

/* Decode options beyond the plain tgm_decode arguments. */
typedef struct TgmDecodeMaskOptions {
  bool restore_non_finite;
} TgmDecodeMaskOptions;

/* Opaque handles. */
typedef struct tgm_message_t tgm_message_t;
typedef struct tgm_metadata_t tgm_metadata_t;
typedef struct tgm_value_t tgm_value_t;
typedef struct tgm_file_t tgm_file_t;
typedef struct tgm_scan_result_t tgm_scan_result_t;
typedef struct tgm_buffer_iter_t tgm_buffer_iter_t;
typedef struct tgm_file_iter_t tgm_file_iter_t;
typedef struct tgm_object_iter_t tgm_object_iter_t;
typedef struct tgm_streaming_encoder_t tgm_streaming_encoder_t;
typedef struct tgm_async_file_t tgm_async_file_t;
typedef struct tgm_async_streaming_encoder_t tgm_async_streaming_encoder_t;
typedef struct tgm_async_task_t tgm_async_task_t;
typedef struct tgm_cancellation_token_t tgm_cancellation_token_t;

/* ---- errors and byte buffers --------------------------------------------- */

/* Text of the most recent failure on this thread, or NULL if none. */
const char* tgm_last_error(void);
/* Static text of a code ("framing error", ...); "unknown error" for values
 * outside the enumeration. Never NULL. */
const char* tgm_error_string(tgm_error err);
/* Releases a buffer the library filled. {NULL, 0} is a no-op. */
void tgm_bytes_free(tgm_bytes_t buf);
/* Extension (not in the reference): records "<code text>: <message>" as this
 * thread's last error and returns code, for bindings layered on this ABI
 * that detect an error themselves (the Fortran module). A code outside the
 * enumeration gives TGM_ERROR_INVALID_ARG. */
tgm_error tgm_set_last_error(tgm_error code, const char* message);

/* ---- encode ---------------------------------------------------------------
 * metadata_json: {"descriptors": [...], "base": [...], "_extra_": {...}, ...}
 * (spec 04 C.3), one descriptor per object. hash_algo: "xxh3" hashes every
 * frame, NULL or "none" hashes nothing. threads: 0 = sequential. */

tgm_error tgm_encode(const char* metadata_json, const uint8_t* const* data_ptrs, const size_t* data_lens,
                     size_t num_objects, const char* hash_algo, uint32_t threads, tgm_bytes_t* out);
/* mask_options NULL = NaN/Inf rejected. */
tgm_error tgm_encode_with_options(const char* metadata_json, const uint8_t* const* data_ptrs,
                                  const size_t* data_lens, size_t num_objects, const char* hash_algo,
                                  uint32_t threads, const TgmEncodeMaskOptions* mask_options,
                                  tgm_bytes_t* out);
/* Payloads already encoded per their descriptors, stored verbatim. */
tgm_error tgm_encode_pre_encoded(const char* metadata_json, const uint8_t* const* data_ptrs,
                                 const size_t* data_lens, size_t num_objects, const char* hash_algo,
                                 uint32_t threads, tgm_bytes_t* out);

/* ---- decode ----------------------------------------------------------------
 * Integer flags: non-zero = true. native_byte_order converts element bytes
 * to the host's order; verify_hash checks each object's frame digest. */

tgm_error tgm_decode(const uint8_t* buf, size_t buf_len, int32_t native_byte_order, uint32_t threads,
                     int32_t verify_hash, tgm_message_t** out);
/* mask_options NULL = restore NaN/Inf. */
tgm_error tgm_decode_with_options(const uint8_t* buf, size_t buf_len, int32_t native_byte_order,
                                  uint32_t threads, int32_t verify_hash,
                                  const TgmDecodeMaskOptions* mask_options, tgm_message_t** out);
tgm_error tgm_decode_metadata(const uint8_t* buf, size_t buf_len, tgm_metadata_t** out);
/* One object; the handle holds it at index 0 with the message's metadata. */
tgm_error tgm_decode_object(const uint8_t* buf, size_t buf_len, size_t index, int32_t native_byte_order,
                            uint32_t threads, int32_t verify_hash, tgm_message_t** out);
/* Element ranges (offset, count) of one object. out has num_ranges entries,
 * or 1 when join is non-zero; *out_count tells how many were filled. */
tgm_error tgm_decode_range(const uint8_t* buf, size_t buf_len, size_t object_index,
                           const uint64_t* ranges_offsets, const uint64_t* ranges_counts, size_t num_ranges,
                           int32_t native_byte_order, uint32_t threads, int32_t join, tgm_bytes_t* out,
                           size_t* out_count);

/* ---- scan ------------------------------------------------------------------ */

tgm_error tgm_scan(const uint8_t* buf, size_t buf_len, tgm_scan_result_t** out);
size_t tgm_scan_count(const tgm_scan_result_t* result);
/* {SIZE_MAX, 0} for a bad index or handle. */
tgm_scan_entry_t tgm_scan_entry(const tgm_scan_result_t* result, size_t index);
void tgm_scan_free(tgm_scan_result_t* result);

/* ---- decoded message accessors ----------------------------------------------
 * index = position inside the handle; out of range or NULL handle gives
 * NULL / 0. Strings and arrays are borrowed from the handle. */

uint64_t tgm_message_version(const tgm_message_t* msg);
size_t tgm_message_num_objects(const tgm_message_t* msg);
size_t tgm_message_num_decoded(const tgm_message_t* msg);
uint64_t tgm_object_ndim(const tgm_message_t* msg, size_t index);
const uint64_t* tgm_object_shape(const tgm_message_t* msg, size_t index);
const uint64_t* tgm_object_strides(const tgm_message_t* msg, size_t index);
const char* tgm_object_dtype(const tgm_message_t* msg, size_t index);
/* Decoded bytes; *out_len (if out_len is not NULL) is 0 when NULL is returned. */
const uint8_t* tgm_object_data(const tgm_message_t* msg, size_t decoded_index, size_t* out_len);
const char* tgm_payload_encoding(const tgm_message_t* msg, size_t index);
int32_t tgm_payload_has_hash(const tgm_message_t* msg, size_t index);
/* An independent copy of the message's metadata. */
tgm_error tgm_message_metadata(const tgm_message_t* msg, tgm_metadata_t** out);
const char* tgm_object_type(const tgm_message_t* msg, size_t index);
/* Declared byte order of the object, "big" or "little". */
const char* tgm_object_byte_order(const tgm_message_t* msg, size_t index);
const char* tgm_object_filter(const tgm_message_t* msg, size_t index);
const char* tgm_object_compression(const tgm_message_t* msg, size_t index);
/* "xxh3" or NULL. */
const char* tgm_object_hash_type(const tgm_message_t* msg, size_t index);
/* 16 lowercase hex digits or NULL. */
const char* tgm_object_hash_value(const tgm_message_t* msg, size_t index);
/* Extension (not in the reference): the whole descriptor of object `index`
 * as a JSON object (type, ndim, shape, strides, dtype, byte_order, encoding,
 * filter, compression, codec parameters, masks), for bindings that mirror
 * the reference's descriptor objects (the WebAssembly package,
 * docs/wasm.md). Valid until the handle is freed; NULL out of range. */
const char* tgm_object_descriptor_json(const tgm_message_t* msg, size_t index);
void tgm_message_free(tgm_message_t* msg);

/* ---- extensions: random access for callers that do their own I/O ----------
 * (the WebAssembly package's lazy remote files, docs/wasm.md). Offsets are
 * from the start of one message. */
/* total_length (0 for a non-back-filled streaming message) and flags of the
 * preamble at the start of buf (at least 24 bytes). */
tgm_error tgm_read_preamble(const uint8_t* buf, size_t buf_len, uint64_t* out_total_length,
                            uint16_t* out_flags);
/* The layout of a message of message_length bytes from the regions fetched so
 * far (flags: the preamble's flags, or -1 when unknown). Either *out_json is
 * {"metadata", "first_metadata", "whole", "objects": [[offset, length]...]}
 * and *out_need_length is 0, or *out_json is empty and [*out_need_offset,
 * +*out_need_length) is the range to fetch before calling again. */
tgm_error tgm_layout_from_regions(uint64_t message_length, int32_t flags, const uint64_t* region_offsets,
                                  const uint8_t* const* regions, const size_t* region_lengths,
                                  size_t num_regions, tgm_bytes_t* out_json, uint64_t* out_need_offset,
                                  uint64_t* out_need_length);
/* One data-object frame decoded on its own (native byte order): a message
 * handle with that object at index 0 and empty metadata. object_index only
 * labels errors. */
tgm_error tgm_decode_data_frame(const uint8_t* frame, size_t frame_len, size_t object_index,
                                int32_t verify_hash, int32_t restore_non_finite, tgm_message_t** out);
/* Element ranges of one data-object frame, as tgm_decode_range. */
tgm_error tgm_decode_data_frame_range(const uint8_t* frame, size_t frame_len, size_t object_index,
                                      const uint64_t* ranges_offsets, const uint64_t* ranges_counts,
                                      size_t num_ranges, int32_t join, tgm_bytes_t* out, size_t* out_count);
/* The descriptor of a data-object frame of frame_length bytes from the
 * regions fetched so far (offsets from the frame start), as
 * tgm_data_frame_descriptor_json gives it, or the range to fetch next (as
 * tgm_layout_from_regions): a frame up to 64 KiB whole; a larger one its last
 * 8 KiB, its 16-byte header and, when longer, its descriptor CBOR. */
tgm_error tgm_data_frame_descriptor_from_regions(uint64_t frame_length, const uint64_t* region_offsets,
                                                 const uint8_t* const* regions, const size_t* region_lengths,
                                                 size_t num_regions, size_t object_index,
                                                 tgm_bytes_t* out_json, uint64_t* out_need_offset,
                                                 uint64_t* out_need_length);
/* The descriptor of one data-object frame as JSON (tgm_object_descriptor_json's form). */
tgm_error tgm_data_frame_descriptor_json(const uint8_t* frame, size_t frame_len, size_t object_index,
                                         tgm_bytes_t* out);

/* ---- metadata: legacy coercing getters -------------------------------------
 * Keys are dot paths; the _at variants look only in base[obj_index]. */

uint64_t tgm_metadata_version(const tgm_metadata_t* meta);
size_t tgm_metadata_num_objects(const tgm_metadata_t* meta);
/* Text, or integers/floats/booleans as text; NULL when absent or not a
 * scalar. The pseudo-key "version" gives "3". */
const char* tgm_metadata_get_string(const tgm_metadata_t* meta, const char* key);
int64_t tgm_metadata_get_int(const tgm_metadata_t* meta, const char* key, int64_t default_val);
double tgm_metadata_get_float(const tgm_metadata_t* meta, const char* key, double default_val);
const char* tgm_metadata_get_string_at(const tgm_metadata_t* meta, size_t obj_index, const char* key);
int64_t tgm_metadata_get_int_at(const tgm_metadata_t* meta, size_t obj_index, const char* key,
                                int64_t default_val);
double tgm_metadata_get_float_at(const tgm_metadata_t* meta, size_t obj_index, const char* key,
                                 double default_val);
const char* tgm_metadata_object_to_json(const tgm_metadata_t* meta, size_t obj_index);
const char* tgm_metadata_to_json(const tgm_metadata_t* meta);

/* ---- metadata: precise cursor API -------------------------------------------
 * Cursors are borrowed from the metadata handle until tgm_metadata_free.
 * String and byte views are pointer + length, not NUL-terminated. */

const tgm_value_t* tgm_metadata_get(const tgm_metadata_t* meta, const char* path);
const tgm_value_t* tgm_metadata_get_at(const tgm_metadata_t* meta, size_t obj_index, const char* path);
bool tgm_metadata_has(const tgm_metadata_t* meta, const char* path);
bool tgm_metadata_has_at(const tgm_metadata_t* meta, size_t obj_index, const char* path);
const tgm_value_t* tgm_metadata_object(const tgm_metadata_t* meta, size_t obj_index);
const tgm_value_t* tgm_metadata_extra(const tgm_metadata_t* meta);
const tgm_value_t* tgm_metadata_reserved(const tgm_metadata_t* meta);
tgm_value_type tgm_value_get_type(const tgm_value_t* v);
bool tgm_value_as_bool(const tgm_value_t* v, bool* out);
bool tgm_value_as_i64(const tgm_value_t* v, int64_t* out);
bool tgm_value_as_u64(const tgm_value_t* v, uint64_t* out);
bool tgm_value_as_f64(const tgm_value_t* v, double* out);
const char* tgm_value_as_string(const tgm_value_t* v, size_t* len_out);
const uint8_t* tgm_value_as_bytes(const tgm_value_t* v, size_t* len_out);
size_t tgm_value_array_len(const tgm_value_t* v);
const tgm_value_t* tgm_value_array_get(const tgm_value_t* v, size_t index);
size_t tgm_value_map_len(const tgm_value_t* v);
const char* tgm_value_map_key_at(const tgm_value_t* v, size_t index, size_t* len_out);
const tgm_value_t* tgm_value_map_value_at(const tgm_value_t* v, size_t index);
const tgm_value_t* tgm_value_map_get(const tgm_value_t* v, const char* key);
void tgm_metadata_free(tgm_metadata_t* meta);

/* ---- files ---------------------------------------------------------------- */

tgm_error tgm_file_open(const char* path, tgm_file_t** out);
/* Creates (truncates) the file and any missing parent directories. */
tgm_error tgm_file_create(const char* path, tgm_file_t** out);
tgm_error tgm_file_message_count(tgm_file_t* file, size_t* out_count);
tgm_error tgm_file_decode_message(tgm_file_t* file, size_t index, int32_t native_byte_order, uint32_t threads,
                                  int32_t verify_hash, tgm_message_t** out);
tgm_error tgm_file_read_message(tgm_file_t* file, size_t index, tgm_bytes_t* out);
tgm_error tgm_file_append_raw(tgm_file_t* file, const uint8_t* buf, size_t buf_len);
const char* tgm_file_path(const tgm_file_t* file);
tgm_error tgm_file_append(tgm_file_t* file, const char* metadata_json, const uint8_t* const* data_ptrs,
                          const size_t* data_lens, size_t num_objects, const char* hash_algo,
                          uint32_t threads);
tgm_error tgm_file_append_with_options(tgm_file_t* file, const char* metadata_json,
                                       const uint8_t* const* data_ptrs, const size_t* data_lens,
                                       size_t num_objects, const char* hash_algo, uint32_t threads,
                                       const TgmEncodeMaskOptions* mask_options);
void tgm_file_close(tgm_file_t* file);

/* ---- iterators (end of sequence: TGM_ERROR_END_OF_ITER) -------------------- */

/* buf must outlive the iterator; yielded slices point into it. */
tgm_error tgm_buffer_iter_create(const uint8_t* buf, size_t buf_len, tgm_buffer_iter_t** out);
size_t tgm_buffer_iter_count(const tgm_buffer_iter_t* iter);
tgm_error tgm_buffer_iter_next(tgm_buffer_iter_t* iter, const uint8_t** out_buf, size_t* out_len);
void tgm_buffer_iter_free(tgm_buffer_iter_t* iter);
tgm_error tgm_file_iter_create(tgm_file_t* file, tgm_file_iter_t** out);
tgm_error tgm_file_iter_next(tgm_file_iter_t* iter, tgm_bytes_t* out);
void tgm_file_iter_free(tgm_file_iter_t* iter);
/* The message bytes are copied; each step yields a one-object message. */
tgm_error tgm_object_iter_create(const uint8_t* buf, size_t buf_len, int32_t native_byte_order,
                                 int32_t verify_hash, tgm_object_iter_t** out);
tgm_error tgm_object_iter_next(tgm_object_iter_t* iter, tgm_message_t** out);
void tgm_object_iter_free(tgm_object_iter_t* iter);

/* ---- streaming encoder (one message, written object by object) ------------ */

/* metadata_json as for tgm_encode, without "descriptors". */
tgm_error tgm_streaming_encoder_create(const char* path, const char* metadata_json, const char* hash_algo,
                                       uint32_t threads, tgm_streaming_encoder_t** out);
tgm_error tgm_streaming_encoder_create_with_options(const char* path, const char* metadata_json,
                                                    const char* hash_algo, uint32_t threads,
                                                    const TgmEncodeMaskOptions* mask_options,
                                                    tgm_streaming_encoder_t** out);
/* Metadata of the next object (a JSON object). */
tgm_error tgm_streaming_encoder_write_preceder(tgm_streaming_encoder_t* enc, const char* metadata_json);
tgm_error tgm_streaming_encoder_write(tgm_streaming_encoder_t* enc, const char* descriptor_json,
                                      const uint8_t* data, size_t data_len);
tgm_error tgm_streaming_encoder_write_pre_encoded(tgm_streaming_encoder_t* enc, const char* descriptor_json,
                                                  const uint8_t* data, size_t data_len);
size_t tgm_streaming_encoder_count(const tgm_streaming_encoder_t* enc);
/* Completes the message; the handle must still be freed. */
tgm_error tgm_streaming_encoder_finish(tgm_streaming_encoder_t* enc);
void tgm_streaming_encoder_free(tgm_streaming_encoder_t* enc);
/* Extension (the WebAssembly package's StreamingEncoder): a streaming encoder
 * writing to memory. seekable != 0: total_length is back-filled and
 * tgm_streaming_encoder_take hands out the whole message once, after finish;
 * seekable == 0: total_length stays 0 and each take hands out the bytes
 * produced since the previous one (every frame as soon as it is written). */
tgm_error tgm_streaming_encoder_create_in_memory(const char* metadata_json, const char* hash_algo,
                                                 const TgmEncodeMaskOptions* mask_options, int32_t seekable,
                                                 tgm_streaming_encoder_t** out);
tgm_error tgm_streaming_encoder_take(tgm_streaming_encoder_t* enc, tgm_bytes_t* out);
/* Bytes of the message produced so far (0 for an invalid handle). */
uint64_t tgm_streaming_encoder_bytes_written(const tgm_streaming_encoder_t* enc);

/* ---- validation, diagnostics, hashing, simple packing --------------------- */

/* level: "quick", "default" (NULL), "checksum" or "full". The JSON report is
 * returned with TGM_ERROR_OK even when it lists problems. */
tgm_error tgm_validate(const uint8_t* buf, size_t buf_len, const char* level, int32_t check_canonical,
                       tgm_bytes_t* out);
tgm_error tgm_validate_file(const char* path, const char* level, int32_t check_canonical, tgm_bytes_t* out);
tgm_error tgm_doctor_to_json(tgm_bytes_t* out);
/* Extension: the JSON file report (`file_issues`, `messages`) of a buffer of
 * concatenated messages, as tgm_validate_file gives for a file. */
tgm_error tgm_validate_buffer(const uint8_t* buf, size_t buf_len, const char* level, int32_t check_canonical,
                              tgm_bytes_t* out);
/* 16 hex digits of xxh3-64; algo NULL, "xxh3" or "none". */
tgm_error tgm_compute_hash(const uint8_t* data, size_t data_len, const char* algo, tgm_bytes_t* out);
tgm_error tgm_simple_packing_compute_params(const double* values, size_t num_values, uint32_t bits_per_value,
                                            int32_t decimal_scale_factor, double* out_reference_value,
                                            int32_t* out_binary_scale_factor);

/* ---- async: runtime, cancellation, tasks ------------------------------------
 * Launchers return at once with a task in *out_task (or fail synchronously).
 * cancel may be NULL; timeout_ms 0 means no deadline. A task resolves to a
 * value, an error, TGM_ERROR_TIMEOUT or TGM_ERROR_CANCELLED; read it with the
 * join matching the launcher, once. Completion callbacks run on the
 * runtime's dispatcher threads. */

/* Before the first async call; 0 = default for each argument. */
tgm_error tgm_runtime_configure(uint32_t workers, uint32_t dispatcher_workers,
                                uint64_t multipart_part_size_bytes);
/* Waits up to timeout_ms for running tasks, cancels the rest, stops the
 * runtime for good; returns how many tasks were still running. */
uint64_t tgm_runtime_shutdown_blocking(uint64_t timeout_ms);
tgm_cancellation_token_t* tgm_cancellation_token_create(void);
void tgm_cancellation_token_cancel(tgm_cancellation_token_t* tok);
bool tgm_cancellation_token_is_cancelled(const tgm_cancellation_token_t* tok);
void tgm_cancellation_token_free(tgm_cancellation_token_t* tok);
tgm_error tgm_async_task_set_completion(tgm_async_task_t* task, void (*cb)(void*), void* userdata);
bool tgm_async_task_is_ready(const tgm_async_task_t* task);
void tgm_async_task_cancel(tgm_async_task_t* task);
void tgm_async_task_free(tgm_async_task_t* task);
tgm_error tgm_async_task_join_void(tgm_async_task_t* task);
tgm_error tgm_async_task_join_size(tgm_async_task_t* task, uint64_t* out);
tgm_error tgm_async_task_join_bytes(tgm_async_task_t* task, tgm_bytes_t* out);
tgm_error tgm_async_task_join_message(tgm_async_task_t* task, tgm_message_t** out);
tgm_error tgm_async_task_join_metadata(tgm_async_task_t* task, tgm_metadata_t** out);
tgm_error tgm_async_task_join_async_file(tgm_async_task_t* task, tgm_async_file_t** out);
tgm_error tgm_async_task_join_multi_bytes(tgm_async_task_t* task, tgm_bytes_t** out_array, size_t* out_count);
tgm_error tgm_async_task_join_async_streaming_encoder(tgm_async_task_t* task,
                                                      tgm_async_streaming_encoder_t** out);
void tgm_multi_bytes_free(tgm_bytes_t* array, size_t count);

/* ---- async file ------------------------------------------------------------- */

tgm_error tgm_async_file_open(const char* path, tgm_cancellation_token_t* cancel, uint64_t timeout_ms,
                              tgm_async_task_t** out_task);
tgm_error tgm_async_file_open_remote(const char* url, const char* const* storage_keys,
                                     const char* const* storage_values, size_t nopts, bool bidirectional,
                                     tgm_cancellation_token_t* cancel, uint64_t timeout_ms,
                                     tgm_async_task_t** out_task);
tgm_error tgm_async_file_message_count(tgm_async_file_t* file, tgm_cancellation_token_t* cancel,
                                       uint64_t timeout_ms, tgm_async_task_t** out_task);
tgm_error tgm_async_file_read_message(tgm_async_file_t* file, size_t index, tgm_cancellation_token_t* cancel,
                                      uint64_t timeout_ms, tgm_async_task_t** out_task);
tgm_error tgm_async_file_decode_message(tgm_async_file_t* file, size_t index, bool native_byte_order,
                                        uint32_t threads, bool restore_non_finite, bool verify_hash,
                                        tgm_cancellation_token_t* cancel, uint64_t timeout_ms,
                                        tgm_async_task_t** out_task);
tgm_error tgm_async_file_decode_metadata(tgm_async_file_t* file, size_t index,
                                         tgm_cancellation_token_t* cancel, uint64_t timeout_ms,
                                         tgm_async_task_t** out_task);
tgm_error tgm_async_file_decode_object(tgm_async_file_t* file, size_t msg_index, size_t obj_index,
                                       bool native_byte_order, uint32_t threads, bool restore_non_finite,
                                       bool verify_hash, tgm_cancellation_token_t* cancel,
                                       uint64_t timeout_ms, tgm_async_task_t** out_task);
tgm_error tgm_async_file_decode_range(tgm_async_file_t* file, size_t msg_index, size_t obj_index,
                                      const uint64_t* offsets, const uint64_t* counts, size_t n_ranges,
                                      bool native_byte_order, uint32_t threads,
                                      tgm_cancellation_token_t* cancel, uint64_t timeout_ms,
                                      tgm_async_task_t** out_task);
const char* tgm_async_file_path(const tgm_async_file_t* file);
void tgm_async_file_close(tgm_async_file_t* file);

/* ---- async streaming encoder (to a local file) ------------------------------ */

tgm_error tgm_async_streaming_encoder_create(const char* path, const char* metadata_json,
                                             const char* hash_algo, uint32_t threads,
                                             tgm_cancellation_token_t* cancel, uint64_t timeout_ms,
                                             tgm_async_task_t** out_task);
tgm_error tgm_async_streaming_encoder_write_object(tgm_async_streaming_encoder_t* enc,
                                                   const char* descriptor_json, const uint8_t* data,
                                                   size_t len, tgm_cancellation_token_t* cancel,
                                                   uint64_t timeout_ms, tgm_async_task_t** out_task);
tgm_error tgm_async_streaming_encoder_write_pre_encoded(tgm_async_streaming_encoder_t* enc,
                                                        const char* descriptor_json, const uint8_t* data,
                                                        size_t len, tgm_cancellation_token_t* cancel,
                                                        uint64_t timeout_ms, tgm_async_task_t** out_task);
tgm_error tgm_async_streaming_encoder_write_preceder(tgm_async_streaming_encoder_t* enc,
                                                     const char* metadata_json,
                                                     tgm_cancellation_token_t* cancel, uint64_t timeout_ms,
                                                     tgm_async_task_t** out_task);
tgm_error tgm_async_streaming_encoder_finish(tgm_async_streaming_encoder_t* enc, bool backfill,
                                             tgm_cancellation_token_t* cancel, uint64_t timeout_ms,
                                             tgm_async_task_t** out_task);
TgmObjectCountStatus tgm_async_streaming_encoder_try_object_count(const tgm_async_streaming_encoder_t* enc,
                                                                  size_t* out_count);
/* SIZE_MAX when the count is not available right now. */
size_t tgm_async_streaming_encoder_object_count(const tgm_async_streaming_encoder_t* enc);
const char* tgm_async_streaming_encoder_path(const tgm_async_streaming_encoder_t* enc);
void tgm_async_streaming_encoder_free(tgm_async_streaming_encoder_t* enc);

#ifdef __cplusplus
}
#endif

#endif /* TENSOGRAM_H */

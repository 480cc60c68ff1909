/* The C ABI from C: compiled as C11 with -pedantic -Wall -Wextra -Werror
 * and run by CTest (tests/capi/CMakeLists.txt). Walks the main flows of
 * spec 04 Part C: encode → decode → accessors, metadata getters and
 * cursors, files and iterators, the streaming encoder, scan, validate, the
 * async API (open, decode, join, callback, cancel, timeout, shutdown) and
 * bad input (NULLs, freed handles).
 *
 *   tensogram_capi_c_test <work-dir> <fixtures-dir>
 */
#define _POSIX_C_SOURCE 200809L

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <tensogram/tensogram.h>

static int failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

#define CHECK_OK(call)                                                                          \
  do {                                                                                          \
    tgm_error check_ok_e = (call);                                                              \
    if (check_ok_e != TGM_ERROR_OK) {                                                           \
      fprintf(stderr, "%s:%d: %s -> %d (%s): %s\n", __FILE__, __LINE__, #call, (int)check_ok_e, \
              tgm_error_string(check_ok_e), tgm_last_error() ? tgm_last_error() : "(no text)"); \
      ++failures;                                                                               \
    }                                                                                           \
  } while (0)

static char work_dir[1024];
static char fixtures_dir[1024];

static const char* path_in(const char* dir, const char* name, char* buf, size_t n) {
  snprintf(buf, n, "%s/%s", dir, name);
  return buf;
}

static void sleep_ms(long ms) {
  struct timespec ts;
  ts.tv_sec = ms / 1000;
  ts.tv_nsec = (ms % 1000) * 1000000L;
  nanosleep(&ts, NULL);
}

/* Two objects: float32 [2,3] and int16 [4], native byte order. */
static const float f32[6] = {1.5f, 2.5f, -3.0f, 4.0f, 5.25f, 6.0f};
static const int16_t i16[4] = {-7, 8, 9, 1000};
static const char* two_objects_json =
    "{\"descriptors\": ["
    "{\"type\":\"ntensor\",\"ndim\":2,\"shape\":[2,3],\"strides\":[3,1],\"dtype\":\"float32\","
    "\"encoding\":\"none\",\"filter\":\"none\",\"compression\":\"none\"},"
    "{\"type\":\"ntensor\",\"ndim\":1,\"shape\":[4],\"strides\":[1],\"dtype\":\"int16\","
    "\"encoding\":\"none\",\"filter\":\"none\",\"compression\":\"zstd\",\"zstd_level\":3}],"
    "\"base\": [{\"mars\":{\"param\":\"2t\",\"step\":12},\"ratio\":0.5},{\"mars\":{\"param\":\"msl\"}}],"
    "\"experiment\": \"exp01\"}";

static tgm_bytes_t encode_two(void) {
  const uint8_t* ptrs[2] = {(const uint8_t*)f32, (const uint8_t*)i16};
  const size_t lens[2] = {sizeof f32, sizeof i16};
  tgm_bytes_t out = {NULL, 0};
  CHECK_OK(tgm_encode(two_objects_json, ptrs, lens, 2, "xxh3", 0, &out));
  CHECK(out.data != NULL && out.len > 0);
  return out;
}

static void test_encode_decode(void) {
  tgm_bytes_t msg = encode_two();
  tgm_message_t* m = NULL;
  size_t len = 0;
  const uint8_t* data;
  tgm_message_t* one = NULL;
  char hash1[17];

  CHECK_OK(tgm_decode(msg.data, msg.len, 1, 0, 1, &m));
  CHECK(tgm_message_version(m) == TGM_WIRE_VERSION);
  CHECK(tgm_message_num_objects(m) == 2);
  CHECK(tgm_object_ndim(m, 0) == 2);
  CHECK(tgm_object_shape(m, 0)[0] == 2 && tgm_object_shape(m, 0)[1] == 3);
  CHECK(tgm_object_strides(m, 0)[0] == 3);
  CHECK(strcmp(tgm_object_dtype(m, 0), "float32") == 0);
  CHECK(strcmp(tgm_object_dtype(m, 1), "int16") == 0);
  CHECK(strcmp(tgm_object_compression(m, 1), "zstd") == 0);
  CHECK(strcmp(tgm_payload_encoding(m, 0), "none") == 0);
  data = tgm_object_data(m, 0, &len);
  CHECK(len == sizeof f32 && memcmp(data, f32, len) == 0);
  data = tgm_object_data(m, 1, &len);
  CHECK(len == sizeof i16 && memcmp(data, i16, len) == 0);
  CHECK(tgm_payload_has_hash(m, 1) == 1);
  CHECK(strcmp(tgm_object_hash_type(m, 1), "xxh3") == 0);
  CHECK(strlen(tgm_object_hash_value(m, 1)) == 16);
  memcpy(hash1, tgm_object_hash_value(m, 1), 17);
  /* Out of range: NULL / 0, no crash. */
  CHECK(tgm_object_dtype(m, 2) == NULL);
  CHECK(tgm_object_data(m, 2, &len) == NULL && len == 0);

  /* One object: its own hash slot, not object 0's (docs/c-api.md). */
  CHECK_OK(tgm_decode_object(msg.data, msg.len, 1, 1, 0, 1, &one));
  CHECK(tgm_message_num_objects(one) == 1);
  CHECK(strcmp(tgm_object_dtype(one, 0), "int16") == 0);
  CHECK(strcmp(tgm_object_hash_value(one, 0), hash1) == 0);
  tgm_message_free(one);

  {
    uint64_t offsets[2] = {1, 3};
    uint64_t counts[2] = {2, 1};
    tgm_bytes_t parts[2];
    size_t n = 0;
    CHECK_OK(tgm_decode_range(msg.data, msg.len, 0, offsets, counts, 2, 1, 0, 0, parts, &n));
    CHECK(n == 2 && parts[0].len == 8 && parts[1].len == 4);
    CHECK(memcmp(parts[0].data, &f32[1], 8) == 0 && memcmp(parts[1].data, &f32[3], 4) == 0);
    tgm_bytes_free(parts[0]);
    tgm_bytes_free(parts[1]);
    CHECK_OK(tgm_decode_range(msg.data, msg.len, 0, offsets, counts, 2, 1, 0, 1, parts, &n));
    CHECK(n == 1 && parts[0].len == 12);
    tgm_bytes_free(parts[0]);
  }
  tgm_message_free(m);
  tgm_bytes_free(msg);
}

static void test_metadata(void) {
  tgm_bytes_t msg = encode_two();
  tgm_metadata_t* meta = NULL;
  const tgm_value_t* v;
  const tgm_value_t* obj;
  size_t n = 0;
  size_t i;
  int64_t iv = 0;
  double dv = 0;
  int saw_mars = 0;

  CHECK_OK(tgm_decode_metadata(msg.data, msg.len, &meta));
  CHECK(tgm_metadata_version(meta) == 3);
  CHECK(tgm_metadata_num_objects(meta) == 2);
  CHECK(strcmp(tgm_metadata_get_string(meta, "mars.param"), "2t") == 0);
  CHECK(strcmp(tgm_metadata_get_string(meta, "mars.step"), "12") == 0);
  CHECK(strcmp(tgm_metadata_get_string(meta, "version"), "3") == 0);
  CHECK(strcmp(tgm_metadata_get_string(meta, "experiment"), "exp01") == 0);
  CHECK(tgm_metadata_get_string(meta, "nope") == NULL);
  CHECK(tgm_metadata_get_int(meta, "mars.step", -1) == 12);
  CHECK(tgm_metadata_get_int(meta, "mars.param", -1) == -1);
  CHECK(tgm_metadata_get_float(meta, "ratio", 0.0) == 0.5);
  CHECK(strcmp(tgm_metadata_get_string_at(meta, 1, "mars.param"), "msl") == 0);
  CHECK(tgm_metadata_get_int_at(meta, 0, "mars.step", 0) == 12);
  CHECK(tgm_metadata_get_float_at(meta, 1, "ratio", -2.0) == -2.0);
  CHECK(strstr(tgm_metadata_to_json(meta), "\"exp01\"") != NULL);
  CHECK(strstr(tgm_metadata_object_to_json(meta, 1), "msl") != NULL);
  CHECK(tgm_metadata_object_to_json(meta, 2) == NULL);

  v = tgm_metadata_get(meta, "mars.step");
  CHECK(tgm_value_get_type(v) == TGM_VALUE_TYPE_INT);
  CHECK(tgm_value_as_i64(v, &iv) && iv == 12);
  CHECK(tgm_value_as_f64(v, &dv) && dv == 12.0);
  CHECK(!tgm_value_as_string(v, &n));
  v = tgm_metadata_get_at(meta, 1, "mars.param");
  CHECK(tgm_value_get_type(v) == TGM_VALUE_TYPE_STRING);
  CHECK(strncmp(tgm_value_as_string(v, &n), "msl", 3) == 0 && n == 3);
  CHECK(tgm_metadata_has(meta, "ratio") && !tgm_metadata_has(meta, "missing"));
  CHECK(tgm_metadata_has_at(meta, 0, "ratio") && !tgm_metadata_has_at(meta, 1, "ratio"));

  obj = tgm_metadata_object(meta, 0);
  CHECK(tgm_value_get_type(obj) == TGM_VALUE_TYPE_MAP);
  for (i = 0; i < tgm_value_map_len(obj); ++i) {
    const char* key = tgm_value_map_key_at(obj, i, &n);
    if (key != NULL && n == 4 && strncmp(key, "mars", 4) == 0) {
      saw_mars = tgm_value_get_type(tgm_value_map_value_at(obj, i)) == TGM_VALUE_TYPE_MAP;
    }
  }
  CHECK(saw_mars);
  CHECK(tgm_value_map_get(obj, "_reserved_") != NULL);
  CHECK(tgm_value_map_len(tgm_metadata_extra(meta)) == 1);
  CHECK(tgm_value_get_type(tgm_metadata_reserved(meta)) == TGM_VALUE_TYPE_MAP);
  tgm_metadata_free(meta);
  tgm_bytes_free(msg);
}

static void test_scan_and_iterators(void) {
  tgm_bytes_t msg = encode_two();
  uint8_t buf[4096];
  size_t total;
  tgm_scan_result_t* scan = NULL;
  tgm_buffer_iter_t* bit = NULL;
  tgm_object_iter_t* oit = NULL;
  tgm_message_t* m = NULL;
  const uint8_t* slice;
  size_t slice_len;
  int count = 0;

  CHECK(2 * msg.len + 7 <= sizeof buf);
  memcpy(buf, "garbage", 7);
  memcpy(buf + 7, msg.data, msg.len);
  memcpy(buf + 7 + msg.len, msg.data, msg.len);
  total = 7 + 2 * msg.len;

  CHECK_OK(tgm_scan(buf, total, &scan));
  CHECK(tgm_scan_count(scan) == 2);
  CHECK(tgm_scan_entry(scan, 0).offset == 7 && tgm_scan_entry(scan, 0).length == msg.len);
  CHECK(tgm_scan_entry(scan, 5).offset == SIZE_MAX);
  CHECK(tgm_last_error() != NULL);
  tgm_scan_free(scan);

  CHECK_OK(tgm_buffer_iter_create(buf, total, &bit));
  CHECK(tgm_buffer_iter_count(bit) == 2);
  while (tgm_buffer_iter_next(bit, &slice, &slice_len) == TGM_ERROR_OK) {
    CHECK(slice_len == msg.len);
    ++count;
  }
  CHECK(count == 2);
  CHECK(tgm_buffer_iter_next(bit, &slice, &slice_len) == TGM_ERROR_END_OF_ITER);
  tgm_buffer_iter_free(bit);

  count = 0;
  CHECK_OK(tgm_object_iter_create(msg.data, msg.len, 1, 0, &oit));
  tgm_bytes_free(msg); /* the object iterator keeps its own copy */
  while (tgm_object_iter_next(oit, &m) == TGM_ERROR_OK) {
    CHECK(tgm_message_num_objects(m) == 1);
    tgm_message_free(m);
    ++count;
  }
  CHECK(count == 2);
  tgm_object_iter_free(oit);
}

static void test_files(void) {
  char path[1200];
  tgm_file_t* f = NULL;
  tgm_file_iter_t* it = NULL;
  tgm_message_t* m = NULL;
  tgm_bytes_t raw = {NULL, 0};
  tgm_bytes_t msg = encode_two();
  const uint8_t* ptrs[2] = {(const uint8_t*)f32, (const uint8_t*)i16};
  const size_t lens[2] = {sizeof f32, sizeof i16};
  size_t count = 0;
  int seen = 0;

  path_in(work_dir, "c_test_dir/files.tgm", path, sizeof path);
  CHECK_OK(tgm_file_create(path, &f)); /* creates c_test_dir/ */
  CHECK(strcmp(tgm_file_path(f), path) == 0);
  CHECK_OK(tgm_file_append(f, two_objects_json, ptrs, lens, 2, NULL, 0));
  CHECK_OK(tgm_file_append_raw(f, msg.data, msg.len));
  tgm_file_close(f);

  CHECK_OK(tgm_file_open(path, &f));
  CHECK_OK(tgm_file_message_count(f, &count));
  CHECK(count == 2);
  CHECK_OK(tgm_file_decode_message(f, 1, 1, 0, 1, &m));
  CHECK(tgm_message_num_objects(m) == 2);
  tgm_message_free(m);
  CHECK(tgm_file_decode_message(f, 9, 1, 0, 0, &m) == TGM_ERROR_FRAMING);
  CHECK(strstr(tgm_last_error(), "message index 9 out of range (count=2)") != NULL);
  CHECK_OK(tgm_file_read_message(f, 1, &raw));
  CHECK(raw.len == msg.len && memcmp(raw.data, msg.data, msg.len) == 0);
  tgm_bytes_free(raw);

  CHECK_OK(tgm_file_iter_create(f, &it));
  tgm_file_close(f); /* the iterator keeps the file */
  while (tgm_file_iter_next(it, &raw) == TGM_ERROR_OK) {
    ++seen;
    tgm_bytes_free(raw);
  }
  CHECK(seen == 2);
  tgm_file_iter_free(it);
  tgm_bytes_free(msg);

  path_in(work_dir, "does-not-exist.tgm", path, sizeof path);
  f = NULL;
  CHECK(tgm_file_open(path, &f) == TGM_ERROR_IO);
  CHECK(f == NULL); /* outputs are written on success only */
}

static void test_streaming_encoder(void) {
  char path[1200];
  tgm_streaming_encoder_t* enc = NULL;
  tgm_file_t* f = NULL;
  tgm_message_t* m = NULL;
  tgm_metadata_t* meta = NULL;
  const char* desc =
      "{\"type\":\"ntensor\",\"ndim\":1,\"shape\":[4],\"strides\":[1],\"dtype\":\"int16\","
      "\"encoding\":\"none\",\"filter\":\"none\",\"compression\":\"none\"}";
  TgmEncodeMaskOptions bad = {false, false, "bogus", NULL, NULL, -1};

  path_in(work_dir, "c_stream.tgm", path, sizeof path);
  /* A bad mask method is rejected before the file is created. */
  remove(path);
  CHECK(tgm_streaming_encoder_create_with_options(path, "{}", NULL, 0, &bad, &enc) == TGM_ERROR_INVALID_ARG);
  {
    FILE* probe = fopen(path, "rb");
    CHECK(probe == NULL);
    if (probe != NULL) fclose(probe);
  }

  CHECK_OK(tgm_streaming_encoder_create(path, "{\"experiment\":\"s\"}", "xxh3", 0, &enc));
  CHECK_OK(tgm_streaming_encoder_write_preceder(enc, "{\"mars\":{\"param\":\"2t\"}}"));
  CHECK_OK(tgm_streaming_encoder_write(enc, desc, (const uint8_t*)i16, sizeof i16));
  CHECK_OK(tgm_streaming_encoder_write_pre_encoded(enc, desc, (const uint8_t*)i16, sizeof i16));
  CHECK(tgm_streaming_encoder_count(enc) == 2);
  CHECK_OK(tgm_streaming_encoder_finish(enc));
  CHECK(tgm_streaming_encoder_finish(enc) == TGM_ERROR_INVALID_ARG);
  tgm_streaming_encoder_free(enc);

  CHECK_OK(tgm_file_open(path, &f));
  CHECK_OK(tgm_file_decode_message(f, 0, 1, 0, 1, &m));
  CHECK(tgm_message_num_objects(m) == 2);
  CHECK_OK(tgm_message_metadata(m, &meta));
  CHECK(strcmp(tgm_metadata_get_string_at(meta, 0, "mars.param"), "2t") == 0);
  tgm_metadata_free(meta);
  tgm_message_free(m);
  tgm_file_close(f);
}

static void test_tools(void) {
  tgm_bytes_t msg = encode_two();
  tgm_bytes_t out = {NULL, 0};
  const double values[4] = {250.0, 260.5, 271.25, 300.0};
  double ref = 0;
  int32_t bsf = 0;

  CHECK_OK(tgm_validate(msg.data, msg.len, "full", 1, &out));
  CHECK(out.len > 0 && memchr(out.data, '{', out.len) != NULL);
  tgm_bytes_free(out);
  CHECK(tgm_validate(msg.data, msg.len, "bogus", 0, &out) == TGM_ERROR_INVALID_ARG);
  CHECK_OK(tgm_validate(NULL, 0, NULL, 0, &out)); /* a report, not an error */
  tgm_bytes_free(out);
  CHECK_OK(tgm_compute_hash(msg.data, msg.len, NULL, &out));
  CHECK(out.len == 16);
  tgm_bytes_free(out);
  CHECK_OK(tgm_doctor_to_json(&out));
  CHECK(out.len > 0);
  tgm_bytes_free(out);
  CHECK_OK(tgm_simple_packing_compute_params(values, 4, 16, 0, &ref, &bsf));
  CHECK(ref == 250.0);
  tgm_bytes_free(msg);
}

static void test_bad_input(void) {
  tgm_message_t* m = NULL;
  tgm_bytes_t out = {NULL, 0};
  tgm_bytes_t msg = encode_two();
  const char bad_utf8[] = {'{', '"', 'a', '"', ':', '"', (char)0xff, '"', '}', 0};

  CHECK(tgm_decode(NULL, 10, 1, 0, 0, &m) == TGM_ERROR_INVALID_ARG);
  CHECK(strstr(tgm_last_error(), "tgm_decode") != NULL && strstr(tgm_last_error(), "buf") != NULL);
  CHECK(tgm_decode(msg.data, msg.len, 1, 0, 0, NULL) == TGM_ERROR_INVALID_ARG);
  CHECK(tgm_decode(msg.data, 0, 1, 0, 0, &m) != TGM_ERROR_OK);
  CHECK(m == NULL);
  CHECK(tgm_encode(NULL, NULL, NULL, 0, NULL, 0, &out) == TGM_ERROR_INVALID_ARG);
  CHECK(tgm_encode("not json", NULL, NULL, 0, NULL, 0, &out) == TGM_ERROR_METADATA);
  CHECK(tgm_encode(bad_utf8, NULL, NULL, 0, NULL, 0, &out) == TGM_ERROR_INVALID_ARG);
  CHECK(strstr(tgm_last_error(), "UTF-8") != NULL);
  CHECK(tgm_encode("{}", NULL, NULL, 0, "md5", 0, &out) == TGM_ERROR_INVALID_ARG);
  CHECK(tgm_encode(two_objects_json, NULL, NULL, 0, NULL, 0, &out) == TGM_ERROR_INVALID_ARG);

  /* Freed handles are refused, not used. */
  CHECK_OK(tgm_decode(msg.data, msg.len, 1, 0, 0, &m));
  tgm_message_free(m);
  CHECK(tgm_message_num_objects(m) == 0);
  tgm_message_free(m); /* double free: reported, not performed */
  CHECK(strstr(tgm_last_error(), "not a live handle") != NULL);
  {
    tgm_metadata_t* meta = NULL;
    CHECK(tgm_message_metadata(m, &meta) == TGM_ERROR_INVALID_ARG);
  }
  tgm_bytes_free(msg);
  tgm_bytes_free(msg); /* refused as well */
  CHECK(tgm_error_string(TGM_ERROR_HASH_MISMATCH) != NULL);
  CHECK(strcmp(tgm_error_string((tgm_error)99), "unknown error") == 0);
  /* The extension for bindings: the code comes back, the text is prefixed. */
  CHECK(tgm_set_last_error(TGM_ERROR_OBJECT, "binding: rank 2 array, rank 3 object") == TGM_ERROR_OBJECT);
  CHECK(strcmp(tgm_last_error(), "object error: binding: rank 2 array, rank 3 object") == 0);
  CHECK(tgm_set_last_error(TGM_ERROR_IO, NULL) == TGM_ERROR_IO);
  CHECK(strcmp(tgm_last_error(), "I/O error: (no message)") == 0);
  CHECK(tgm_set_last_error((tgm_error)99, "x") == TGM_ERROR_INVALID_ARG);
  CHECK(strstr(tgm_last_error(), "unknown code 99") != NULL);
}

/* ---- async ---- */

static atomic_int callback_done;
static atomic_size_t callback_objects;

static void on_decoded(void* userdata) {
  tgm_async_task_t* task = (tgm_async_task_t*)userdata;
  tgm_message_t* m = NULL;
  if (tgm_async_task_join_message(task, &m) == TGM_ERROR_OK) {
    atomic_store(&callback_objects, tgm_message_num_objects(m));
    tgm_message_free(m);
  }
  tgm_async_task_free(task);
  atomic_store(&callback_done, 1);
}

static void test_async(void) {
  char path[1200];
  tgm_async_task_t* t = NULL;
  tgm_async_file_t* af = NULL;
  tgm_cancellation_token_t* tok = tgm_cancellation_token_create();
  uint64_t count = 0;
  int waited = 0;

  CHECK_OK(tgm_runtime_configure(2, 1, 0));
  CHECK(tgm_runtime_configure(2, 1, 0) == TGM_ERROR_INVALID_ARG);

  path_in(work_dir, "c_test_dir/files.tgm", path, sizeof path);
  CHECK_OK(tgm_async_file_open(path, tok, 0, &t));
  CHECK_OK(tgm_async_task_join_async_file(t, &af));
  CHECK(tgm_async_task_join_async_file(t, &af) == TGM_ERROR_INVALID_ARG); /* consumed */
  tgm_async_task_free(t);
  CHECK(strcmp(tgm_async_file_path(af), path) == 0);

  CHECK_OK(tgm_async_file_message_count(af, NULL, 5000, &t));
  CHECK_OK(tgm_async_task_join_size(t, &count));
  CHECK(count == 2);
  tgm_async_task_free(t);

  /* Completion callback on a dispatcher thread. */
  atomic_store(&callback_done, 0);
  CHECK_OK(tgm_async_file_decode_message(af, 0, true, 0, true, false, NULL, 5000, &t));
  CHECK_OK(tgm_async_task_set_completion(t, on_decoded, t));
  while (!atomic_load(&callback_done) && waited < 10000) {
    sleep_ms(1);
    ++waited;
  }
  CHECK(atomic_load(&callback_done) == 1);
  CHECK(atomic_load(&callback_objects) == 2);

  /* Cancellation through a token cancelled before the launch. */
  tgm_cancellation_token_cancel(tok);
  CHECK(tgm_cancellation_token_is_cancelled(tok));
  CHECK_OK(tgm_async_file_decode_metadata(af, 0, tok, 0, &t));
  {
    tgm_metadata_t* meta = NULL;
    CHECK(tgm_async_task_join_metadata(t, &meta) == TGM_ERROR_CANCELLED);
    CHECK(strncmp(tgm_last_error(), "async task cancelled", 20) == 0);
  }
  tgm_async_task_free(t);
  tgm_cancellation_token_free(tok);

  /* A zero-length deadline cannot be met... a 1 ms one on a real read may:
   * either outcome is fine, a hang or a crash is not. */
  CHECK_OK(tgm_async_file_read_message(af, 0, NULL, 1, &t));
  {
    tgm_bytes_t raw = {NULL, 0};
    tgm_error e = tgm_async_task_join_bytes(t, &raw);
    CHECK(e == TGM_ERROR_OK || e == TGM_ERROR_TIMEOUT);
    tgm_bytes_free(raw);
  }
  tgm_async_task_free(t);

  /* Wrong join: an error, and the result is gone. */
  CHECK_OK(tgm_async_file_message_count(af, NULL, 0, &t));
  CHECK(tgm_async_task_join_void(t) == TGM_ERROR_INVALID_ARG);
  CHECK(strstr(tgm_last_error(), "type mismatch") != NULL);
  tgm_async_task_free(t);

  tgm_async_file_close(af);
  CHECK(tgm_runtime_shutdown_blocking(5000) == 0);
  CHECK(tgm_runtime_shutdown_blocking(5000) == 0); /* safe twice */
  CHECK(tgm_async_file_open(path, NULL, 0, &t) == TGM_ERROR_IO);
  CHECK(strstr(tgm_last_error(), "shut down") != NULL);
}

static void test_fixture(void) {
  char path[1200];
  tgm_file_t* f = NULL;
  tgm_message_t* m = NULL;
  size_t len = 0;
  const float* values;
  path_in(fixtures_dir, "tgm/simple_f32.tgm", path, sizeof path);
  CHECK_OK(tgm_file_open(path, &f));
  CHECK_OK(tgm_file_decode_message(f, 0, 1, 0, 1, &m));
  CHECK(strcmp(tgm_object_byte_order(m, 0), "big") == 0);
  values = (const float*)tgm_object_data(m, 0, &len);
  CHECK(len == 16 && values[0] == 1.0f && values[3] == 4.0f);
  CHECK(strcmp(tgm_object_hash_value(m, 0), "3aeac8603f519c1d") == 0);
  tgm_message_free(m);
  tgm_file_close(f);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s WORK_DIR FIXTURES_DIR\n", argv[0]);
    return 2;
  }
  snprintf(work_dir, sizeof work_dir, "%s", argv[1]);
  snprintf(fixtures_dir, sizeof fixtures_dir, "%s", argv[2]);
  test_encode_decode();
  test_metadata();
  test_scan_and_iterators();
  test_files();
  test_streaming_encoder();
  test_tools();
  test_bad_input();
  test_fixture();
  test_async(); /* last: it shuts the runtime down */
  if (failures != 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("tensogram C API test: all checks passed\n");
  return 0;
}

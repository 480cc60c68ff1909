/* Writes a small Tensogram file through the C API, then reads it back and
 * prints every message's metadata, shapes and first values.
 *
 *   tensogram_c_example [FILE]      (default: example.tgm)
 *
 * Build against an installed tensogram:
 *   cc -std=c11 read_write.c $(pkg-config --cflags --libs tensogram) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tensogram/tensogram.h>

/* Prints the failure and leaves: every fallible call returns a tgm_error,
 * and tgm_last_error() says what went wrong. */
static void check(tgm_error e, const char* what) {
  if (e != TGM_ERROR_OK) {
    const char* text = tgm_last_error();
    fprintf(stderr, "%s failed: %s (%s)\n", what, tgm_error_string(e), text != NULL ? text : "no details");
    exit(1);
  }
}

/* One message: a 3 x 4 float64 field and its 4 int32 levels. */
static void write_message(tgm_file_t* file, int step) {
  double field[12];
  int32_t levels[4] = {1000, 850, 500, 250};
  char json[1024];
  const uint8_t* data[2];
  size_t lens[2];
  int i;
  for (i = 0; i < 12; ++i) field[i] = 273.15 + step + 0.5 * i;
  snprintf(
      json, sizeof json,
      "{\"descriptors\": ["
      "{\"type\": \"ntensor\", \"ndim\": 2, \"shape\": [3, 4], \"strides\": [4, 1], \"dtype\": \"float64\","
      " \"encoding\": \"none\", \"filter\": \"shuffle\", \"compression\": \"zstd\","
      " \"shuffle_element_size\": 8, \"zstd_level\": 3},"
      "{\"type\": \"ntensor\", \"ndim\": 1, \"shape\": [4], \"strides\": [1], \"dtype\": \"int32\","
      " \"encoding\": \"none\", \"filter\": \"none\", \"compression\": \"none\"}],"
      " \"base\": [{\"mars\": {\"param\": \"t\", \"step\": %d}}, {\"mars\": {\"param\": \"lev\"}}],"
      " \"source\": \"examples/c\"}",
      step);
  data[0] = (const uint8_t*)field;
  lens[0] = sizeof field;
  data[1] = (const uint8_t*)levels;
  lens[1] = sizeof levels;
  check(tgm_file_append(file, json, data, lens, 2, "xxh3", 0), "tgm_file_append");
}

static void print_object(const tgm_message_t* msg, size_t i) {
  const uint64_t* shape = tgm_object_shape(msg, i);
  const char* dtype = tgm_object_dtype(msg, i);
  size_t len = 0;
  const uint8_t* bytes = tgm_object_data(msg, i, &len);
  uint64_t d;
  printf("  object %zu: %s [", i, dtype);
  for (d = 0; d < tgm_object_ndim(msg, i); ++d)
    printf(d == 0 ? "%llu" : ", %llu", (unsigned long long)shape[d]);
  printf("] %s/%s, %zu bytes, first values:", tgm_object_filter(msg, i), tgm_object_compression(msg, i), len);
  if (strcmp(dtype, "float64") == 0) {
    double v[3];
    memcpy(v, bytes, sizeof v);
    printf(" %.2f %.2f %.2f\n", v[0], v[1], v[2]);
  } else if (strcmp(dtype, "int32") == 0) {
    int32_t v[3];
    memcpy(v, bytes, sizeof v);
    printf(" %d %d %d\n", (int)v[0], (int)v[1], (int)v[2]);
  } else {
    printf(" (not shown)\n");
  }
}

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "example.tgm";
  tgm_file_t* file = NULL;
  size_t count = 0;
  size_t m;

  check(tgm_file_create(path, &file), "tgm_file_create");
  write_message(file, 0);
  write_message(file, 6);
  tgm_file_close(file);

  check(tgm_file_open(path, &file), "tgm_file_open");
  check(tgm_file_message_count(file, &count), "tgm_file_message_count");
  printf("%s: %zu messages\n", tgm_file_path(file), count);
  for (m = 0; m < count; ++m) {
    tgm_message_t* msg = NULL;
    tgm_metadata_t* meta = NULL;
    size_t i;
    /* native byte order, default threads, verify the xxh3 hashes */
    check(tgm_file_decode_message(file, m, 1, 0, 1, &msg), "tgm_file_decode_message");
    check(tgm_message_metadata(msg, &meta), "tgm_message_metadata");
    printf("message %zu: param=%s step=%lld source=%s\n", m, tgm_metadata_get_string(meta, "mars.param"),
           (long long)tgm_metadata_get_int(meta, "mars.step", -1), tgm_metadata_get_string(meta, "source"));
    for (i = 0; i < tgm_message_num_objects(msg); ++i) print_object(msg, i);
    tgm_metadata_free(meta);
    tgm_message_free(msg);
  }
  tgm_file_close(file);
  return count == 2 ? 0 : 1;
}

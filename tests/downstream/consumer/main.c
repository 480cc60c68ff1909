/* A downstream C program built only against the *installed* tensogram, with
 * the header path of the reference's pkg-config flow. It encodes a message
 * through the C API, decodes it and checks every value; exit status 0 means
 * the installed header and library are usable from C. */
#include <stdio.h>
#include <string.h>

#include <tensogram/tensogram.h>

static int failures = 0;

static void check(int ok, const char* what) {
  if (!ok) {
    const char* e = tgm_last_error();
    fprintf(stderr, "FAILED: %s (%s)\n", what, e != NULL ? e : "no error text");
    ++failures;
  }
}

int main(void) {
  const double values[6] = {1.0, 2.0, 3.0, 4.0, 5.0, 6.0};
  const uint8_t* ptrs[1];
  size_t lens[1];
  const char* json =
      "{\"descriptors\":[{\"type\":\"ntensor\",\"ndim\":2,\"shape\":[2,3],\"strides\":[3,1],"
      "\"dtype\":\"float64\",\"encoding\":\"none\",\"filter\":\"shuffle\",\"compression\":\"lz4\","
      "\"shuffle_element_size\":8}],\"base\":[{\"mars\":{\"param\":\"2t\"}}]}";
  tgm_bytes_t msg = {NULL, 0};
  tgm_message_t* m = NULL;
  tgm_metadata_t* meta = NULL;
  size_t len = 0;
  const uint8_t* data;

  ptrs[0] = (const uint8_t*)values;
  lens[0] = sizeof values;
  check(TGM_WIRE_VERSION == 3, "TGM_WIRE_VERSION");
  check(tgm_encode(json, ptrs, lens, 1, "xxh3", 0, &msg) == TGM_ERROR_OK, "tgm_encode");
  check(tgm_decode(msg.data, msg.len, 1, 0, 1, &m) == TGM_ERROR_OK, "tgm_decode");
  check(tgm_message_num_objects(m) == 1, "one object");
  check(tgm_object_ndim(m, 0) == 2 && tgm_object_shape(m, 0)[1] == 3, "shape");
  data = tgm_object_data(m, 0, &len);
  check(len == sizeof values && data != NULL && memcmp(data, values, len) == 0, "values");
  check(tgm_message_metadata(m, &meta) == TGM_ERROR_OK, "tgm_message_metadata");
  check(tgm_metadata_get_string(meta, "mars.param") != NULL &&
            strcmp(tgm_metadata_get_string(meta, "mars.param"), "2t") == 0,
        "mars.param");
  check(tgm_decode(NULL, 0, 1, 0, 0, &m) == TGM_ERROR_INVALID_ARG && tgm_last_error() != NULL, "NULL buffer");
  tgm_metadata_free(meta);
  tgm_message_free(m);
  tgm_bytes_free(msg);
  if (failures == 0) printf("C consumer: ok\n");
  return failures == 0 ? 0 : 1;
}

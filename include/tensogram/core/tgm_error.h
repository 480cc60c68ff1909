/* Error codes shared by the C++ exception hierarchy and the C API.
 * Values and names follow the reference C API (spec 04 §C.1) so code written
 * against `tgm_error` compiles and behaves unchanged. */
#ifndef TENSOGRAM_CORE_TGM_ERROR_H
#define TENSOGRAM_CORE_TGM_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tgm_error {
  TGM_ERROR_OK = 0,
  TGM_ERROR_FRAMING = 1,
  TGM_ERROR_METADATA = 2,
  TGM_ERROR_ENCODING = 3,
  TGM_ERROR_COMPRESSION = 4,
  TGM_ERROR_OBJECT = 5,
  TGM_ERROR_IO = 6,
  TGM_ERROR_HASH_MISMATCH = 7,
  TGM_ERROR_INVALID_ARG = 8,
  TGM_ERROR_END_OF_ITER = 9,
  TGM_ERROR_REMOTE = 10,
  TGM_ERROR_MISSING_HASH = 11,
  TGM_ERROR_TIMEOUT = 12,
  TGM_ERROR_CANCELLED = 13
} tgm_error;

#ifdef __cplusplus
}
#endif

#endif

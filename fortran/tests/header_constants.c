/* The C header's enum values, for the Fortran test that holds the module's
 * TGM_ERROR_* and TGM_VALUE_TYPE_* parameters equal to them (spec 07 F.2). */
#include <tensogram.h>

void tgm_test_error_codes(int out[14]) {
  const tgm_error codes[14] = {TGM_ERROR_OK,          TGM_ERROR_FRAMING,       TGM_ERROR_METADATA,
                               TGM_ERROR_ENCODING,    TGM_ERROR_COMPRESSION,   TGM_ERROR_OBJECT,
                               TGM_ERROR_IO,          TGM_ERROR_HASH_MISMATCH, TGM_ERROR_INVALID_ARG,
                               TGM_ERROR_END_OF_ITER, TGM_ERROR_REMOTE,        TGM_ERROR_MISSING_HASH,
                               TGM_ERROR_TIMEOUT,     TGM_ERROR_CANCELLED};
  for (int i = 0; i < 14; ++i) out[i] = (int)codes[i];
}

void tgm_test_value_types(int out[8]) {
  const tgm_value_type types[8] = {TGM_VALUE_TYPE_NULL,  TGM_VALUE_TYPE_BOOL,   TGM_VALUE_TYPE_INT,
                                   TGM_VALUE_TYPE_FLOAT, TGM_VALUE_TYPE_STRING, TGM_VALUE_TYPE_BYTES,
                                   TGM_VALUE_TYPE_ARRAY, TGM_VALUE_TYPE_MAP};
  for (int i = 0; i < 8; ++i) out[i] = (int)types[i];
}

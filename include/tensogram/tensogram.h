/* <tensogram/tensogram.h>: the C ABI under the include path the reference's
 * pkg-config flow uses (spec 07 C2.1: `-I<includedir>`, callers write
 * `#include <tensogram/tensogram.h>`). Everything is in <tensogram.h>. */
#ifndef TENSOGRAM_TENSOGRAM_H_FORWARD
#define TENSOGRAM_TENSOGRAM_H_FORWARD

#include "../tensogram.h"

#endif

// Must NOT compile: codecs sit below format and message (a codec never sees a
// frame or a descriptor, docs/architecture.md).
#include "tensogram/format/frame.hpp"

int layering_probe_codecs_includes_format() {
  return 0;
}

// Must NOT compile: the core layer cannot see the message layer's headers
// (tests/layering/CMakeLists.txt expects "No such file" for this include).
#include "tensogram/message/decode.hpp"

int layering_probe_core_includes_message() {
  return 0;
}

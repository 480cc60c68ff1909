// Must compile: the positive control of the probes beside it. The message
// layer sees its own and every lower layer's headers.
#include "tensogram/codecs/pipeline_spec.hpp"
#include "tensogram/core/dtype.hpp"
#include "tensogram/message/decode.hpp"

int layering_probe_message_includes_codecs() {
  return 0;
}

#include "tgm_file.hpp"

#include <tensogram/message/decode.hpp>

namespace tensogram::cli {

tgm_file open_tgm(const std::string& path) {
  tgm_file f;
  f.bytes = buffer::map_file(path);
  f.messages = scan(f.bytes.bytes());
  return f;
}

}  // namespace tensogram::cli

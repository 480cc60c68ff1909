#include "tgm_file.hpp"

#include <tensogram/io/byte_source.hpp>

namespace tensogram::cli {

tgm_file open_tgm(const std::string& path) {
  if (io::is_remote_url(path)) return tgm_file(tensogram::file::open_remote(path));
  return tgm_file(tensogram::file::open_mmap(path));
}

}  // namespace tensogram::cli

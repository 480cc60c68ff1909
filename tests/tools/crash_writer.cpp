// A writer process for the crash-safety and concurrency tests
// (crash_safety_test.cpp): it writes through the library's own write paths so
// that the test can kill it with SIGKILL at any point, or run several at once.
//
//   crash_writer append FILE COUNT TAG   appends COUNT messages (file::append)
//   crash_writer stream FILE OBJECTS     replaces FILE with one message written
//                                        object by object (streaming_encoder)
//
// Message k of `append` holds one float32 object of `message_elements(k)`
// elements whose values are `expected_value(tag, k, i)`, and the metadata
// keys "tag" and "k": a reader can check every message it finds without
// knowing how far the writer got. Exit status 0 on success, 1 on failure.
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <span>
#include <string>
#include <vector>

#include <tensogram.hpp>

#include "crash_writer.hpp"

namespace {

tensogram::global_metadata message_metadata(std::uint64_t tag, std::uint64_t k) {
  tensogram::global_metadata meta;
  meta.base.push_back(tensogram::cbor::value::make_map(
      {{"tag", static_cast<std::int64_t>(tag)}, {"k", static_cast<std::int64_t>(k)}}));
  return meta;
}

int append(const std::string& path, std::uint64_t count, std::uint64_t tag) {
  tensogram::file f = tensogram::file::open(path);
  for (std::uint64_t k = 0; k < count; ++k) {
    const std::vector<float> values = tensogram::crash_test::message_values(tag, k);
    const std::vector<tensogram::object_input> objects{
        {tensogram::data_object_descriptor::contiguous(tensogram::dtype::float32, {values.size()}),
         std::as_bytes(std::span(values))}};
    f.append(message_metadata(tag, k), objects);
  }
  return 0;
}

int stream(const std::string& path, std::uint64_t objects) {
  tensogram::streaming_encoder enc(path, message_metadata(0, 0));
  for (std::uint64_t k = 0; k < objects; ++k) {
    const std::vector<float> values = tensogram::crash_test::message_values(1, k);
    enc.write_object(
        tensogram::data_object_descriptor::contiguous(tensogram::dtype::float32, {values.size()}),
        std::as_bytes(std::span(values)));
  }
  (void)enc.finish();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (args.size() == 4 && args[0] == "append") {
      return append(args[1], std::stoull(args[2]), std::stoull(args[3]));
    }
    if (args.size() == 3 && args[0] == "stream") return stream(args[1], std::stoull(args[2]));
    std::cerr << "usage: crash_writer append FILE COUNT TAG | stream FILE OBJECTS\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "crash_writer: " << e.what() << '\n';
    return 1;
  }
}

// A downstream program built only against the *installed* tensogram: it
// encodes a small message through the typed API and through the reference
// wrapper's JSON API, decodes both and checks every value. Exit status 0
// means the installed headers, libraries and their dependencies are usable.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <tensogram.hpp>
#include <tensogram/cbor/json.hpp>  // pulls in nlohmann/json: the public dependency must resolve

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "FAILED: %s\n", what);
    ++failures;
  }
}

void typed_round_trip() {
  const std::vector<float> values{1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f};
  tensogram::global_metadata meta;
  meta.base.push_back(tensogram::cbor::from_json_text(R"({"mars": {"param": "2t", "step": 6}})"));
  const std::vector<tensogram::object_input> objects{
      {tensogram::data_object_descriptor::contiguous(tensogram::dtype::float32, {2, 3}),
       std::as_bytes(std::span(values))}};
  const std::vector<std::byte> bytes = tensogram::encode(meta, objects);

  const tensogram::message msg = tensogram::decode(tensogram::buffer::borrowed(bytes));
  check(msg.num_objects() == 1, "typed: one object");
  const tensogram::decoded_object& obj = msg.object(0);
  check(obj.element_count<float>() == values.size(), "typed: element count");
  for (std::size_t i = 0; i < values.size() && i < obj.element_count<float>(); ++i) {
    check(obj.data_as<float>()[i] == values[i], "typed: value");
  }
  check(msg.get_metadata().get_string("mars.param") == "2t", "typed: mars.param");
  check(msg.get_metadata().get_int("mars.step") == 6, "typed: mars.step");
  check(!tensogram::scan(bytes).empty(), "typed: scan finds the message");
}

void json_round_trip() {
  const std::vector<std::int32_t> values{-1, 0, 1, 2147483647};
  const std::string json = R"({
    "descriptors": [{"type": "ntensor", "ndim": 1, "shape": [4], "strides": [1], "dtype": "int32",
                     "encoding": "none", "filter": "none", "compression": "none"}],
    "base": [{"name": "counts"}],
    "experiment": "downstream"
  })";
  const std::vector<std::uint8_t> bytes = tensogram::encode(
      json, {{reinterpret_cast<const std::uint8_t*>(values.data()), sizeof(std::int32_t) * 4}});
  const tensogram::message msg = tensogram::decode(bytes.data(), bytes.size());
  const tensogram::decoded_object& obj = msg.object(0);
  check(obj.dtype_string() == "int32", "json: dtype");
  check(obj.element_count<std::int32_t>() == 4, "json: element count");
  for (std::size_t i = 0; i < 4 && i < obj.element_count<std::int32_t>(); ++i) {
    check(obj.data_as<std::int32_t>()[i] == values[i], "json: value");
  }
  check(msg.get_metadata().get_string("name") == "counts", "json: base name");
  check(msg.get_metadata().get_string("experiment") == "downstream", "json: extra key");
}

}  // namespace

int main() {
  try {
    typed_round_trip();
    json_round_trip();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAILED with exception: %s\n", e.what());
    return 1;
  }
  if (failures != 0) return 1;
  std::printf("downstream consumer OK (tensogram %s)\n", std::string(tensogram::library_version()).c_str());
  return 0;
}

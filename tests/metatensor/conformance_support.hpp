// Helpers shared by the metatensor conformance tests (spec 06 §13): a
// hand-built file (spec_file) made from the §6.7 worked example or Appendix A,
// and its verdict — "valid" or the first error name of §8.2.
#pragma once

#include <algorithm>
#include <map>
#include <metatensor.hpp>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "spec_files.hpp"

namespace metatensor_test::conformance {

namespace mt = metatensor;
using json = nlohmann::json;

struct spec_file {
  std::map<std::string, std::string> metadata;
  std::vector<phys> tensors;
  std::size_t pad_to = 64;
  bool with_metadata = true;

  [[nodiscard]] std::vector<std::byte> bytes() const {
    return build(metadata, tensors, pad_to, with_metadata);
  }
  phys& at(const std::string& name) {
    for (auto& t : tensors) {
      if (t.name == name) return t;
    }
    throw std::runtime_error("no tensor " + name);
  }
  void erase(const std::string& name) {
    std::erase_if(tensors, [&](const phys& t) { return t.name == name; });
  }
};

inline std::string verdict(const spec_file& f, bool deep = false) {
  try {
    const auto file = mt::file::from_buffer(tensogram::buffer::owned(f.bytes()));
    file.check_all_blob_refs();  // open defers step 8 (§8.1)
    if (deep) file.validate_deep();
    return "valid";
  } catch (const mt::error& e) {
    return std::string(mt::errc_name(e.kind()));
  }
}

inline std::string deep_message(const spec_file& f) {
  try {
    mt::file::from_buffer(tensogram::buffer::owned(f.bytes())).validate_deep();
    return "valid";
  } catch (const mt::error& e) {
    return e.what();
  }
}

// --- §6.7 worked example ----------------------------------------------------

inline json example_layout() {
  return json::parse(example_layout_text);
}

inline spec_file example() {
  auto particles = particle(7, 1.5, {1.f, 2.f, 3.f}, 0, 5);
  const auto p2 = particle(9, 2.5, {1.f, 2.f, 3.f}, 5, 4);
  particles.insert(particles.end(), p2.begin(), p2.end());
  std::vector<std::byte> positions;
  for (float v : {0.5f, 1.5f, 2.5f, -1.f, -2.f, -3.f}) put(positions, v);
  spec_file f;
  f.metadata = mt_metadata(example_schema(), example_layout().dump());
  f.tensors = example_physical_tensors(particles, positions);
  return f;
}

// --- Appendix A (flat "w", F32 [2], A = 16) -------------------------------------

inline const std::string appendix_schema =
    R"({"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",)"
    R"("required":["w"],"additionalProperties":false,)"
    R"("properties":{"w":{"type":"array","items":{"type":"number","TypeDef:Float32":true}}}})";
inline const std::string appendix_layout =
    R"({"tensors":{"w":{"kind":"flat","data":"w","rank":1,"align":16,"dtype":"F32"}}})";

inline spec_file appendix() {
  std::vector<std::byte> data;
  put(data, 1.f);
  put(data, 2.f);
  spec_file f;
  f.metadata = mt_metadata(appendix_schema, appendix_layout, "16");
  f.tensors = {{"w", "F32", {2}, data}};
  f.pad_to = 16;
  return f;
}

}  // namespace metatensor_test::conformance

// The tutorial of docs/metatensor.md as a program: write a dataset of records
// with a string field plus a flat tensor, read it back through a memory map,
// and check every value (exit status 1 on any mismatch or error).
//
//   metatensor_records [OUT.mt]
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <metatensor.hpp>

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "mismatch: %s\n", what);
    ++failures;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "particles.mt";
  try {
    // 1. The schema: a struct with a string field, and a flat 2-D tensor.
    const auto schema = metatensor::compile_schema(nlohmann::json::parse(R"({
      "type": "object",
      "required": ["particles", "positions"],
      "$defs": {
        "Particle": {
          "type": "object", "TypeDef:Struct": true,
          "required": ["id", "mass", "vel", "name"],
          "properties": {
            "id":   {"type": "integer", "TypeDef:Uint32": true},
            "mass": {"type": "number",  "TypeDef:Float64": true, "minimum": 0},
            "vel":  {"type": "array", "minItems": 3, "maxItems": 3,
                     "items": {"type": "number", "TypeDef:Float32": true}},
            "name": {"type": "string",  "TypeDef:String": true}
          }
        }
      },
      "properties": {
        "particles": {"type": "array", "items": {"$ref": "#/$defs/Particle"}},
        "positions": {"type": "array", "items": {"type": "array", "minItems": 3, "maxItems": 3,
                                                 "items": {"type": "number", "TypeDef:Float32": true}}}
      }
    })"));

    // 2. Write: set each logical tensor, then write atomically.
    metatensor::file_builder out(schema);
    auto& p = out.set_records("particles", {2});
    p.set<std::uint32_t>(0, "id", 7);
    p.set<double>(0, "mass", 1.5);
    p.set<float>(0, "vel[2]", -1.0f);
    p.set_string(0, "name", "alpha");
    p.set<std::uint32_t>(1, "id", 8);
    p.set_string(1, "name", "beta");
    const std::vector<float> pos = {0, 1, 2, 3, 4, 5};
    out.set_flat<float>("positions", {2, 3}, pos);
    out.write(path);

    // 3. Read: map, validate structurally, view without copying.
    const auto f = metatensor::file::open(path);
    const auto recs = f.records("particles");
    check(recs.size() == 2, "two records");
    check(recs[1].string("name") == "beta", "name of record 1");
    check(recs[0].get<double>("mass") == 1.5, "mass of record 0");
    const auto vel = recs.field("vel");
    check(vel.at<float>(2) == -1.0f, "vel[2] of record 0");
    const std::span<const float> xyz = f.flat("positions").as<float>();
    check(xyz.size() == 6 && xyz[4] == 4.0f, "positions");

    // Whole records as a host struct whose layout matches exactly.
    struct particle {
      std::uint32_t id;
      double mass;
      float vel[3];
      std::uint64_t name_offset, name_length;
    };
    const std::span<const particle> raw = recs.as<particle>();
    check(raw[1].id == 8 && raw[1].name_length == 4, "whole-record view");

    f.validate_deep();  // every value against the schema, UTF-8, BOOL bytes, zero padding
    std::printf("%s: %zu particles, names \"%.*s\" and \"%.*s\"; deep validation passed\n", path.c_str(),
                static_cast<std::size_t>(recs.size()), static_cast<int>(recs[0].string("name").size()),
                recs[0].string("name").data(), static_cast<int>(recs[1].string("name").size()),
                recs[1].string("name").data());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return failures == 0 ? 0 : 1;
}

// Building metatensor files byte by byte for the reader tests (spec 06): the
// header text and the data offsets are written here, independent of the
// library's writer, so the reader is tested against the spec's own tables
// (§6.7 worked example, §7 layout table, Appendix A).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace metatensor_test {

/// One physical tensor of a hand-built file.
struct phys {
  std::string name;
  std::string dtype;
  std::vector<std::uint64_t> shape;
  std::vector<std::byte> data;
};

template <class T>
void put(std::vector<std::byte>& out, T v) {
  const auto at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}

template <class T>
void poke(std::vector<std::byte>& out, std::size_t at, T v) {
  std::memcpy(out.data() + at, &v, sizeof(T));
}

inline std::vector<std::byte> text_bytes(std::string_view s) {
  std::vector<std::byte> out(s.size());
  if (!s.empty()) std::memcpy(out.data(), s.data(), s.size());
  return out;
}

inline std::vector<std::byte> zeros(std::size_t n) {
  return std::vector<std::byte>(n);
}

/// A safetensors image: tensors placed contiguously in the given order, the
/// header padded with spaces until 8 + N is a multiple of `pad_to`.
inline std::vector<std::byte> build(const std::map<std::string, std::string>& metadata,
                                    const std::vector<phys>& tensors, std::size_t pad_to = 64,
                                    bool with_metadata = true) {
  nlohmann::json header = nlohmann::json::object();
  if (with_metadata) header["__metadata__"] = metadata;
  std::uint64_t pos = 0;
  for (const auto& t : tensors) {
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {pos, pos + t.data.size()}}};
    pos += t.data.size();
  }
  std::string h = header.dump();
  while ((8 + h.size()) % pad_to != 0) h += ' ';
  std::vector<std::byte> out;
  put<std::uint64_t>(out, h.size());
  const auto hb = text_bytes(h);
  out.insert(out.end(), hb.begin(), hb.end());
  for (const auto& t : tensors) out.insert(out.end(), t.data.begin(), t.data.end());
  return out;
}

/// The five `metatensor.` keys of §3.1.
inline std::map<std::string, std::string> mt_metadata(const std::string& schema, const std::string& layout,
                                                      const std::string& alignment = "64") {
  return {{"metatensor.version", "1"},
          {"metatensor.endianness", "little"},
          {"metatensor.alignment", alignment},
          {"metatensor.schema", schema},
          {"metatensor.layout", layout}};
}

/// The §6.7 worked example's schema; `mass_extra` is appended to the `mass`
/// field, `positions_items` replaces the positions leaf.
inline std::string example_schema(
    const std::string& mass_extra = R"(,"minimum":0)",
    const std::string& positions_items = R"({"type":"number","TypeDef:Float32":true})") {
  return R"({"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",)"
         R"("required":["labels","particles","positions"],"additionalProperties":false,)"
         R"("properties":{)"
         R"("labels":{"type":"array","items":{"type":"string","TypeDef:String":true}},)"
         R"("particles":{"type":"array","items":{"$ref":"#/$defs/Particle"}},)"
         R"("positions":{"type":"array","items":{"type":"array","minItems":3,"maxItems":3,"items":)" +
         positions_items +
         R"(}}},)"
         R"("$defs":{"Particle":{"type":"object","TypeDef:Struct":true,"additionalProperties":false,)"
         R"("required":["id","mass","vel","name"],"properties":{)"
         R"("id":{"type":"integer","TypeDef:Uint32":true},)"
         R"("mass":{"type":"number","TypeDef:Float64":true)" +
         mass_extra +
         R"(},)"
         R"("vel":{"type":"array","minItems":3,"maxItems":3,"items":{"type":"number","TypeDef:Float32":true}},)"
         R"("name":{"type":"string","TypeDef:String":true}}}}})";
}

/// The §6.7 worked example's logical value (the bytes of
/// `example_physical_tensors`), for tests that build the file with the
/// library's writer instead.
inline nlohmann::json example_value() {
  return nlohmann::json::parse(R"({
    "labels": ["red", "green", "blue"],
    "particles": [
      {"id": 7, "mass": 1.5, "vel": [0.5, -1, 2], "name": "alpha"},
      {"id": 4000000000, "mass": 0, "vel": [0, 0, 0.25], "name": "beta"}
    ],
    "positions": [[1, 2, 3], [4.5, 5, 6]]
  })");
}

/// §7's layout table, verbatim from the spec.
inline const std::string example_layout_text = R"({"tensors": {
  "particles": {"kind": "struct", "data": "particles", "heap": "particles#heap",
                "rank": 1, "align": 64,
                "record": {"size": 48, "align": 8, "fields": [
                  {"name": "id",   "offset": 0,  "type": "U32",    "shape": []},
                  {"name": "mass", "offset": 8,  "type": "F64",    "shape": []},
                  {"name": "vel",  "offset": 16, "type": "F32",    "shape": [3]},
                  {"name": "name", "offset": 32, "type": "string", "shape": []}]}},
  "labels":    {"kind": "blob", "data": "labels", "heap": "labels#heap",
                "rank": 1, "align": 64, "item": {"type": "string"}},
  "positions": {"kind": "flat", "data": "positions", "rank": 2, "align": 64,
                "dtype": "F32"}}})";

/// One 48-byte Particle record of §6.7 (padding bytes zero).
inline std::vector<std::byte> particle(std::uint32_t id, double mass, std::array<float, 3> vel,
                                       std::uint64_t off, std::uint64_t len) {
  std::vector<std::byte> r;
  put(r, id);
  put<std::uint32_t>(r, 0);
  put(r, mass);
  for (float v : vel) put(r, v);
  put<std::uint32_t>(r, 0);
  put(r, off);
  put(r, len);
  return r;
}

/// A blob index: one (offset, length) BlobRef per element.
inline std::vector<std::byte> blob_index(
    std::initializer_list<std::pair<std::uint64_t, std::uint64_t>> refs) {
  std::vector<std::byte> out;
  for (auto [o, l] : refs) {
    put(out, o);
    put(out, l);
  }
  return out;
}

/// The physical tensors of §6.7's data section table, in order, with the
/// given record bytes (`particles`, 2 x 48) and positions (`F32 [2, 3]`).
inline std::vector<phys> example_physical_tensors(std::vector<std::byte> particles,
                                                  std::vector<std::byte> positions) {
  return {
      {"labels", "U8", {3, 16}, blob_index({{0, 3}, {3, 5}, {8, 4}})},
      {"__pad__0", "U8", {16}, zeros(16)},
      {"labels#heap", "U8", {12}, text_bytes("redgreenblue")},
      {"__pad__1", "U8", {52}, zeros(52)},
      {"particles", "U8", {2, 48}, std::move(particles)},
      {"__pad__2", "U8", {32}, zeros(32)},
      {"particles#heap", "U8", {9}, text_bytes("alphabeta")},
      {"__pad__3", "U8", {55}, zeros(55)},
      {"positions", "F32", {2, 3}, std::move(positions)},
  };
}

}  // namespace metatensor_test

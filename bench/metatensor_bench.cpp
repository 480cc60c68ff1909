// metatensor benchmark (issue 7; not a test). Each row is measured next to a
// peer doing the same work without metatensor, in the same run:
//
// * open + first access of a file with 10,000 tensors holding 1 GiB, against
//   the same header with 1 MiB of data: the cost must not grow with the data
//   (structural validation is O(header)); and a one-tensor file against the
//   safetensors base layer alone.
// * open per kind: one flat, struct (with a String field), string and
//   ragged (List of F32) tensor each of ~1 MiB and ~256 MiB: open is
//   O(header) for every kind (the BlobRef checks are deferred to the first
//   access, spec 06 §8.1); the open + first view row shows that deferred cost.
// * write: `file_builder::write` of one large flat tensor against the plain
//   safetensors writer of the same bytes.
// * field scan: summing one field of 10 M records through `field_view` and
//   through `record_ref::get`, against a hand-written struct loop over the
//   same mapping (goal: >= 0.9x of its records/s).
// * strings: total length of N strings through `blob_view::string` against a
//   hand-written loop over the BlobRefs.
// * deep validation: MB/s of `validate_deep` on a float tensor with
//   `minimum`/`maximum`, against memcpy of the same bytes.
//
//   tensogram_metatensor_bench [scratch-dir]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include <metatensor.hpp>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Best time in seconds of `repeats` runs (each run repeated until ~0.1 s).
double best_seconds(const std::function<void()>& work, int repeats = 5) {
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    int runs = 0;
    const auto t0 = std::chrono::steady_clock::now();
    double secs = 0;
    do {
      work();
      ++runs;
      secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } while (secs < 0.1);
    best = std::min(best, secs / runs);
  }
  return best;
}

// "<prefix><i>" built by appending (GCC 12 -O3 reports a false -Wrestrict for
// "literal" + std::string, GCC bug 105329).
std::string numbered(const char* prefix, std::size_t i) {
  std::string out = prefix;
  out += std::to_string(i);
  return out;
}

json scalar(const char* keyword, const char* type = "number") {
  return {{"type", type}, {keyword, true}};
}

json flat_schema(const json& extra_leaf = json::object()) {
  json leaf = scalar("TypeDef:Float32");
  for (const auto& [k, v] : extra_leaf.items()) leaf[k] = v;
  return {
      {"type", "object"}, {"required", {"x"}}, {"properties", {{"x", {{"type", "array"}, {"items", leaf}}}}}};
}

fs::path write_flat(const fs::path& dir, const std::string& name, std::size_t count,
                    const json& extra_leaf = json::object()) {
  std::vector<float> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = 250.0f + static_cast<float>(i % 6000) * 0.01f;
  metatensor::file_builder b(metatensor::compile_schema(flat_schema(extra_leaf)));
  b.set_flat<float>("x", {count}, v);
  const fs::path p = dir / name;
  b.write(p);
  return p;
}

volatile double sink = 0;  // keeps the optimiser from dropping the loops

// One tensor of `kind` ("flat", "struct", "string", "ragged") holding about
// `bytes` bytes of data (index + heap), 64 bytes per element: F32 values;
// records {id U64, name String} with 40-byte names; 48-byte strings; lists
// of 12 F32. Blob kinds have one BlobRef per 64 bytes.
fs::path write_kind(const fs::path& dir, const std::string& kind, std::size_t bytes) {
  const std::size_t n = bytes / 64;
  const json string_leaf = {{"type", "string"}, {"TypeDef:String", true}};
  json items;
  if (kind == "flat") items = scalar("TypeDef:Float32");
  if (kind == "string") items = string_leaf;
  if (kind == "ragged")
    items = {{"type", "array"}, {"TypeDef:List", true}, {"items", scalar("TypeDef:Float32")}};
  if (kind == "struct") {
    items = {{"type", "object"},
             {"TypeDef:Struct", true},
             {"required", {"id", "name"}},
             {"properties", {{"id", scalar("TypeDef:Uint64", "integer")}, {"name", string_leaf}}}};
  }
  metatensor::file_builder b(metatensor::compile_schema(
      {{"type", "object"}, {"properties", {{"x", {{"type", "array"}, {"items", items}}}}}}));
  if (kind == "flat") {
    const std::vector<float> v(n * 16, 1.0f);
    b.set_flat<float>("x", {v.size()}, v);
  } else if (kind == "string") {
    const std::vector<std::string> v(n, std::string(48, 's'));
    b.set_strings("x", {n}, v);
  } else if (kind == "ragged") {
    const std::vector<std::vector<std::byte>> v(n, std::vector<std::byte>(48, std::byte{0}));
    b.set_list_bytes("x", {n}, v);
  } else {
    auto& w = b.set_records("x", {n});
    const std::string name(40, 'n');
    for (std::size_t i = 0; i < n; ++i) w.set_string(i, "name", name);
  }
  const fs::path p = dir / (kind + "-" + std::to_string(bytes >> 20) + ".mt");
  b.write(p);
  return p;
}

// The first view of tensor "x" (for the blob kinds: runs the deferred checks).
double first_view(const metatensor::file& f) {
  const auto& l = f.layout("x");
  if (l.kind == metatensor::tensor_kind::record) return static_cast<double>(f.records("x").size());
  if (l.kind == metatensor::tensor_kind::blob) return static_cast<double>(f.blobs("x").size());
  return static_cast<double>(f.flat("x").size());
}

}  // namespace

int main(int argc, char** argv) {
  const fs::path dir = argc > 1 ? fs::path(argv[1]) : fs::temp_directory_path() / "metatensor-bench";
  fs::create_directories(dir);

  // The last column is the cost relative to the peer: metatensor time / peer
  // time (1.00x = as fast as the peer, 2.00x = twice as slow).
  std::printf("%-50s %16s %16s %9s\n", "row", "metatensor", "peer", "cost");
  const auto row = [](const char* name, double ours, double peer, const char* unit) {
    const bool rate = std::strstr(unit, "/s") != nullptr;  // rates: higher is better
    std::printf("%-50s %11.2f %-4s %11.2f %-4s %8.2fx\n", name, ours, unit, peer, unit,
                rate ? peer / ours : ours / peer);
  };

  // ---- open + first access ---------------------------------------------------
  // 10,000 flat tensors with the same schema; 1 MiB and 1 GiB of data. Open
  // is structural validation (header, schema, layout table, placement), so
  // its cost must not grow with the data.
  {
    const std::size_t tensors = 10'000;
    json props = json::object();
    for (std::size_t i = 0; i < tensors; ++i) {
      props[numbered("t", i)] = {{"type", "array"}, {"items", scalar("TypeDef:Float32")}};
    }
    const auto schema = metatensor::compile_schema({{"type", "object"}, {"properties", props}});
    double open_time[2] = {0, 0};
    const std::size_t per_tensor[2] = {26, 26'843};  // x 10,000 x 4 bytes: ~1 MiB and ~1 GiB
    for (int k = 0; k < 2; ++k) {
      const fs::path p = dir / (numbered("open", static_cast<std::size_t>(k)) + ".mt");
      {
        std::vector<float> v(per_tensor[k], 1.0f);
        metatensor::file_builder b(schema);
        for (std::size_t i = 0; i < tensors; ++i) b.set_flat<float>(numbered("t", i), {v.size()}, v);
        b.write(p);
      }
      open_time[k] = best_seconds(
          [&] {
            const metatensor::file f = metatensor::file::open(p);
            sink = sink + static_cast<double>(f.flat("t5000").as<float>()[0]);  // first access
          },
          3);
      std::printf("  (file %d: %.1f MiB)\n", k, static_cast<double>(fs::file_size(p)) / (1 << 20));
      fs::remove(p);
    }
    row("open + first access, 10k tensors, 1 GiB (ms; peer: 1 MiB)", open_time[1] * 1e3, open_time[0] * 1e3,
        "ms");
  }

  // ---- open per kind: 1 MiB vs 256 MiB ---------------------------------------
  // Warm (the file was just written, so it is in the page cache): open must
  // not grow with the data for any kind; the BlobRef checks of the blob and
  // struct-with-String tensors run at the first view instead (§8.1).
  for (const char* kind : {"flat", "struct", "string", "ragged"}) {
    double open_t[2] = {0, 0};
    double access_t[2] = {0, 0};
    const std::size_t sizes[2] = {std::size_t{1} << 20, std::size_t{256} << 20};
    for (int k = 0; k < 2; ++k) {
      const fs::path p = write_kind(dir, kind, sizes[k]);
      open_t[k] =
          best_seconds([&] { sink = sink + static_cast<double>(metatensor::file::open(p).alignment()); });
      access_t[k] = best_seconds([&] { sink = sink + first_view(metatensor::file::open(p)); }, 3);
      fs::remove(p);
    }
    std::string name = "open, ";
    name += kind;
    row((name + ", 256 MiB (ms; peer: 1 MiB)").c_str(), open_t[1] * 1e3, open_t[0] * 1e3, "ms");
    row((name + " + first view, 256 MiB (ms; peer: 1 MiB)").c_str(), access_t[1] * 1e3, access_t[0] * 1e3,
        "ms");
  }
  {
    const fs::path small = write_flat(dir, "small.mt", std::size_t{1} << 20);
    const double ours =
        best_seconds([&] { sink = sink + static_cast<double>(metatensor::file::open(small).alignment()); });
    const double peer = best_seconds([&] {
      sink = sink + static_cast<double>(metatensor::safetensors::file::open(small).header_length());
    });
    row("open, 1 tensor (us; peer: safetensors base layer)", ours * 1e6, peer * 1e6, "us");
  }

  // ---- write ----------------------------------------------------------------
  {
    const std::size_t count = std::size_t{1} << 25;  // 128 MiB
    std::vector<float> v(count, 1.5f);
    const auto schema = metatensor::compile_schema(flat_schema());
    const double ours = best_seconds(
        [&] {
          metatensor::file_builder b(schema);
          b.set_flat<float>("x", {count}, v);
          b.write(dir / "w.mt");
        },
        3);
    const metatensor::safetensors::tensor_input t{
        "x", metatensor::dtype::f32, {count}, std::as_bytes(std::span<const float>(v))};
    const double peer = best_seconds(
        [&] { metatensor::safetensors::write_file(dir / "w.safetensors", std::span(&t, 1)); }, 3);
    const double mb = static_cast<double>(count * sizeof(float)) / 1e6;
    row("write 128 MiB flat (MB/s; peer: safetensors)", mb / ours, mb / peer, "MB/s");
  }

  // ---- records ----------------------------------------------------------------
  // 10 M records {id U32, mass F64, vel F32[3]} (32 bytes): one field summed
  // through the views and through a hand-written struct loop over the same
  // mapping.
  {
    const std::size_t n = 10'000'000;
    const json particle = {
        {"type", "object"},
        {"TypeDef:Struct", true},
        {"required", {"id", "mass", "vel"}},
        {"properties",
         {{"id", scalar("TypeDef:Uint32", "integer")},
          {"mass", scalar("TypeDef:Float64")},
          {"vel",
           {{"type", "array"}, {"minItems", 3}, {"maxItems", 3}, {"items", scalar("TypeDef:Float32")}}}}}};
    {
      metatensor::file_builder b(metatensor::compile_schema(
          {{"type", "object"}, {"properties", {{"particles", {{"type", "array"}, {"items", particle}}}}}}));
      auto& w = b.set_records("particles", {n});
      for (std::size_t i = 0; i < n; ++i) w.set<double>(i, "mass", 0.5 + static_cast<double>(i % 100));
      b.write(dir / "records.mt");
    }
    const metatensor::file f = metatensor::file::open(dir / "records.mt");
    const auto recs = f.records("particles");
    const auto mass = recs.field("mass");
    const double view_t = best_seconds([&] {
      double s = 0;
      for (std::size_t i = 0; i < n; ++i) s += mass.at<double>(i);
      sink = sink + s;
    });
    const auto mass_span = mass.as<double>();
    const double span_t = best_seconds([&] {
      double s = 0;
      for (const double m : mass_span) s += m;
      sink = sink + s;
    });
    const double ref_t = best_seconds([&] {
      double s = 0;
      for (std::size_t i = 0; i < n; ++i) s += recs[i].get<double>("mass");
      sink = sink + s;
    });
    struct host_particle {
      std::uint32_t id;
      double mass;
      float vel[3];
    };
    static_assert(sizeof(host_particle) == 32);
    const auto* raw = reinterpret_cast<const host_particle*>(recs.bytes().data());
    const double peer_t = best_seconds([&] {
      const host_particle* r = raw;
      double s = 0;
      for (std::size_t i = 0; i < n; ++i) s += r[i].mass;
      sink = sink + s;
    });
    const double m = static_cast<double>(n) / 1e6;
    row("field scan 10M, range-for over as<T> (Mrec/s; peer: struct)", m / span_t, m / peer_t, "M/s");
    row("field scan 10M, field_view::at<T> (Mrec/s; peer: struct)", m / view_t, m / peer_t, "M/s");
    row("field scan 10M, record_ref::get (Mrec/s; peer: struct)", m / ref_t, m / peer_t, "M/s");
    fs::remove(dir / "records.mt");
  }
  {
    const std::size_t n = 1'000'000;
    std::vector<std::string> labels(n);
    for (std::size_t i = 0; i < n; ++i) labels[i] = numbered("label-", i % 1000);
    metatensor::file_builder b(metatensor::compile_schema(
        {{"type", "object"},
         {"properties",
          {{"labels", {{"type", "array"}, {"items", {{"type", "string"}, {"TypeDef:String", true}}}}}}}}));
    b.set_strings("labels", {n}, labels);
    b.write(dir / "strings.mt");
    const metatensor::file f = metatensor::file::open(dir / "strings.mt");
    const auto blobs = f.blobs("labels");
    const double str_t = best_seconds([&] {
      std::size_t s = 0;
      for (std::size_t i = 0; i < n; ++i) s += blobs.string(i).size();
      sink = sink + static_cast<double>(s);
    });
    const auto index = blobs.index();
    const double str_peer = best_seconds([&] {
      std::size_t s = 0;
      for (std::size_t i = 0; i < n; ++i) {
        std::uint64_t len;
        std::memcpy(&len, index.data() + i * 16 + 8, sizeof len);
        s += len;
      }
      sink = sink + static_cast<double>(s);
    });
    const double m = static_cast<double>(n) / 1e6;
    row("strings 1M, blob_view::string (M/s; peer: raw BlobRefs)", m / str_t, m / str_peer, "M/s");
  }

  // ---- deep validation -----------------------------------------------------------
  {
    const std::size_t count = std::size_t{1} << 22;  // 16 MiB
    const fs::path p = write_flat(dir, "deep.mt", count, {{"minimum", 200}, {"maximum", 400}});
    const metatensor::file f = metatensor::file::open(p);
    const double ours = best_seconds([&] { f.validate_deep(); }, 3);
    std::vector<std::byte> copy(count * sizeof(float));
    const auto bytes = f.flat("x").bytes();
    const double peer = best_seconds([&] {
      std::memcpy(copy.data(), bytes.data(), copy.size());
      sink = sink + static_cast<double>(copy[copy.size() / 2] == std::byte{1});
    });
    const double mb = static_cast<double>(count * sizeof(float)) / 1e6;
    row("deep validation, F32 min/max (MB/s; peer: memcpy)", mb / ours, mb / peer, "MB/s");
  }
  fs::remove_all(dir);
  return 0;
}

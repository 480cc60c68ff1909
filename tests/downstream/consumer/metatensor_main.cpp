// A downstream program built only against the installed metatensor component
// (find_package(tensogram COMPONENTS metatensor) or `pkg-config metatensor`):
// writes a file of records with a string field and a flat tensor, maps it
// back and checks every value. With a URL-less argument list it runs the
// library alone; `--serve` also serves the file over QUIC with the installed
// streaming component and fetches it back (metatensor::streaming).
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include <metatensor.hpp>
#ifdef CONSUMER_WITH_STREAMING
#include <metatensor/stream_client.hpp>
#include <metatensor/stream_server.hpp>
#endif

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "FAILED: %s\n", what);
    ++failures;
  }
}

constexpr std::string_view schema_text = R"({
  "type": "object",
  "required": ["points", "grid"],
  "properties": {
    "points": {"type": "array", "items": {
      "type": "object", "TypeDef:Struct": true, "required": ["id", "label"],
      "properties": {"id": {"type": "integer", "TypeDef:Uint32": true},
                     "label": {"type": "string", "TypeDef:String": true}}}},
    "grid": {"type": "array", "items": {"type": "number", "TypeDef:Float64": true}}
  }
})";

void write_and_read(const std::filesystem::path& path) {
  metatensor::file_builder out(metatensor::compile_schema(nlohmann::json::parse(schema_text)));
  auto& points = out.set_records("points", {3});
  for (std::uint32_t i = 0; i < 3; ++i) {
    points.set<std::uint32_t>(i, "id", 100 + i);
    points.set_string(i, "label", "p" + std::to_string(i));
  }
  const std::vector<double> grid{0.5, 1.5, 2.5, 3.5};
  out.set_flat<double>("grid", {4}, grid);
  out.write(path);

  const auto f = metatensor::file::open(path);
  const auto recs = f.records("points");
  check(recs.size() == 3, "three records");
  check(recs[2].get<std::uint32_t>("id") == 102, "id of record 2");
  check(recs[1].string("label") == "p1", "label of record 1");
  const std::span<const double> values = f.flat("grid").as<double>();
  check(values.size() == 4 && values[3] == 3.5, "grid values");
}

#ifdef CONSUMER_WITH_STREAMING
void serve_and_fetch(const std::filesystem::path& dir, const std::string& name) {
  namespace ms = metatensor::streaming;
  ms::server_options so;
  so.port = 0;
  so.tls_dir = dir / "tls";
  ms::server server(dir, so);
  server.start();
  ms::client_options co;
  co.ca_file = server.certificate();
  co.server_name = "localhost";
  auto remote =
      ms::remote_file::open("metatensor://127.0.0.1:" + std::to_string(server.port()) + "/" + name, co);
  check(remote.is_metatensor(), "remote: a metatensor file");
  for (auto& request : remote.get_logical("grid")) request.wait();
  const std::span<const double> values = remote.flat("grid").as<double>();
  check(values.size() == 4 && values[0] == 0.5, "remote: grid values");
  remote.close();
  server.stop();
}
#endif

}  // namespace

int main(int argc, char** argv) {
  const bool serve = argc > 1 && std::string_view(argv[1]) == "--serve";
  try {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("metatensor-consumer-" + std::to_string(static_cast<unsigned long>(::getpid())));
    std::filesystem::create_directories(dir);
    write_and_read(dir / "points.mt");
    if (serve) {
#ifdef CONSUMER_WITH_STREAMING
      serve_and_fetch(dir, "points.mt");
#else
      std::fprintf(stderr, "FAILED: built without the streaming component\n");
      ++failures;
#endif
    }
    std::filesystem::remove_all(dir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAILED with exception: %s\n", e.what());
    return 1;
  }
  if (failures != 0) return 1;
  std::printf("metatensor consumer OK%s\n", serve ? " (served and fetched over QUIC)" : "");
  return 0;
}

// A downstream program built only against the installed importers component
// (find_package(tensogram COMPONENTS importers) or
// `pkg-config tensogram-importers`): converts a NetCDF file given on the
// command line and decodes every message it produced.
#include <cstdio>
#include <exception>

#include <tensogram.hpp>
#include <tensogram/importers/netcdf.hpp>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: importers_consumer FILE.nc\n");
    return 2;
  }
  try {
    const auto messages = tensogram::importers::convert_netcdf_file(argv[1]);
    std::size_t objects = 0;
    for (const auto& bytes : messages) {
      objects += tensogram::decode(tensogram::buffer::borrowed(bytes)).num_objects();
    }
    if (messages.empty() || objects == 0) {
      std::fprintf(stderr, "FAILED: %s gave %zu messages, %zu objects\n", argv[1], messages.size(), objects);
      return 1;
    }
    std::printf("importers consumer OK (%zu messages, %zu objects)\n", messages.size(), objects);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAILED with exception: %s\n", e.what());
    return 1;
  }
  return 0;
}

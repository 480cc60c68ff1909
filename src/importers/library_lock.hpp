// Serialisation of the C libraries under the importers.
//
// netCDF-C (with HDF5 below it) is not thread-safe, and Debian's ecCodes is
// built without its thread-safety option, yet the importers are called from
// many threads at once (Python releases the GIL while converting). Every
// call sequence into one of the libraries holds that library's lock: the
// locks guard the libraries' own global state, which is why they are
// process-wide.
#pragma once

#include <mutex>

namespace tensogram::importers::detail {

[[nodiscard]] std::mutex& netcdf_library_mutex() noexcept;
[[nodiscard]] std::mutex& eccodes_library_mutex() noexcept;

}  // namespace tensogram::importers::detail

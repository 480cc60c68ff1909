// Writing output files without ever leaving a partial file behind.
//
// Every file the tool creates is first written to a uniquely named sibling
// in the destination directory and then renamed over the destination, so a
// failure (full disk, bad input discovered late, interruption) never
// truncates or clobbers data that was already there. Same approach as the
// reference's converters (spec 04 §A.5 `to-netcdf`).
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>

namespace tensogram::cli {

/// Writes `bytes` to `path` atomically (temp file + fsync + rename). Throws
/// `tool_error` naming `path` on failure; the temp file is removed then.
void write_file_atomically(const std::filesystem::path& path, std::span<const std::byte> bytes);

}  // namespace tensogram::cli

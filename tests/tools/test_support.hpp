// Helpers for the CLI tests: running the built `tensogram` binary with a
// controlled environment, scratch directories and file I/O.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace tensogram::cli::test {

struct run_result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// Runs the tool with `args` (no shell involved). The child's environment
/// is the test's minus every TENSOGRAM_* variable, plus `env` ("NAME=value").
[[nodiscard]] run_result run_cli(const std::vector<std::string>& args,
                                 const std::vector<std::string>& env = {});

/// Runs `program` (a built tool) with `args`, environment as `run_cli`.
[[nodiscard]] run_result run_program(const std::string& program, const std::vector<std::string>& args,
                                     const std::vector<std::string>& env = {});

/// Path of a shared fixture, e.g. fixture("multi_message.tgm").
[[nodiscard]] std::string fixture(const std::string& name);

[[nodiscard]] std::vector<std::byte> read_file(const std::filesystem::path& path);
void write_file(const std::filesystem::path& path, const std::vector<std::byte>& bytes);

/// A fresh directory under the system temp dir, removed with its contents.
class scratch_dir {
 public:
  scratch_dir();
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  ~scratch_dir();
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  [[nodiscard]] std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

/// Bytes of a .npy file with the given header dict text (padded as NumPy
/// does unless `pad` is false) and data.
[[nodiscard]] std::vector<std::byte> make_npy(const std::string& dict, const std::vector<std::byte>& data,
                                              int major = 1, bool pad = true);

/// The standard dict text: {'descr': D, 'fortran_order': F, 'shape': S, }.
[[nodiscard]] std::string npy_dict(const std::string& descr, const std::vector<std::uint64_t>& shape,
                                   bool fortran = false);

/// `s` as bytes.
[[nodiscard]] std::vector<std::byte> bytes_of(const std::string& s);

}  // namespace tensogram::cli::test

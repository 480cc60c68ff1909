// The goals block: every performance goal of the project, its measured value,
// its target and whether it is met (docs/benchmarks.md, "Goals").
//
// The codec matrix prints the one goals block `make bench` ends with. Goals
// measured by other benchmark programs (metatensor headers, open times, the
// Python get_tensor row) reach it as JSON files written by those programs
// (`--json-file`), read with `read_goals` and merged by `--goals-from`:
//
//   {"goals": [{"goal": "...", "value": 1.07, "target": 1.3,
//               "comparison": "<=", "note": "..."}, ...]}
//
// `comparison` is ">=" or "<="; a program may instead write
// `"higher_is_better": true|false`. A goal whose `value` is null was not
// measured (e.g. a peer missing on this machine) and prints as such.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace tensogram_bench {

struct goal {
  std::string name;
  std::optional<double> value;  // empty: not measured in this run
  double target = 0;
  bool at_least = true;  // value ≥ target (else value ≤ target)
  std::string note = {};
  bool information = false;  // printed for context, not a goal of its own
  [[nodiscard]] bool met() const {
    return value.has_value() && (at_least ? *value >= target : *value <= target);
  }
};

/// The goals of a benchmark's JSON file (the `goals` array). Throws
/// std::runtime_error naming the file when it cannot be read or a goal lacks
/// its fields.
[[nodiscard]] std::vector<goal> read_goals(const std::string& path);

[[nodiscard]] nlohmann::json to_json(const goal& g);
[[nodiscard]] nlohmann::json to_json(const std::vector<goal>& goals);

/// The machine the goals were measured on: the CPU model of /proc/cpuinfo
/// and the number of CPUs this process may run on ("Intel(R) Xeon(R)
/// Processor, 2 CPUs"). Ratios against ecCodes and the raw libraries moved
/// up to 3x between the VMs we measured on, so every goals block says where
/// it was measured.
[[nodiscard]] std::string machine_description();

/// The block as the codec matrix prints it, headed by the machine, then a
/// one-line summary ("goals: 21 met, 3 not met, 1 not measured").
void print_goals(const std::vector<goal>& goals);

}  // namespace tensogram_bench

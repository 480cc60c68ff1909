// Errors raised by the command-line tool itself (as opposed to the library).
//
// Spec 04 §A.1: every runtime failure ends the program with `error: <message>`
// on stderr and exit code 1. Library failures arrive as `tensogram::error`;
// everything the tool detects on its own (bad where-clause, bad .npy input,
// unwritable output) is a `tool_error`, so main() can treat both alike.
#pragma once

#include <stdexcept>
#include <string>

namespace tensogram::cli {

class tool_error : public std::runtime_error {
 public:
  explicit tool_error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace tensogram::cli

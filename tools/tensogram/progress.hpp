// A single-line progress bar for long-running subcommands (merge, copy,
// split, reshuffle, convert-npy, validate).
//
// Progress is a tensogram-cpp addition (the reference CLI prints none), so it
// must never change what scripts see: it goes to stderr only, only when
// stderr is a terminal, and `--quiet` / TENSOGRAM_QUIET switches it off
// (`progress_wanted`). stdout and exit codes are unaffected either way.
#pragma once

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

namespace tensogram::cli {

struct global_options;

/// Draws `label [#####-----] done/total pct% rate/s` with `\r` updates,
/// at most about ten times a second, and ends the line on `finish()`.
/// A disabled bar does nothing at all. Not thread-safe: one thread advances
/// it.
class progress {
 public:
  /// Draws on std::cerr.
  progress(std::string label, std::uint64_t total, bool enabled);
  /// Draws on `sink` (tests, or any other stream).
  progress(std::string label, std::uint64_t total, bool enabled, std::ostream& sink);
  progress(const progress&) = delete;
  progress& operator=(const progress&) = delete;
  /// Ends the line if anything was drawn and `finish()` was not called (an
  /// exception unwinding through a command), so that the `error:` line that
  /// follows starts at the beginning of a line.
  ~progress();

  /// Counts `n` more items done; redraws when the last draw is at least
  /// 100 ms old or the total is reached.
  void advance(std::uint64_t n = 1);
  /// Draws the final state and ends the line. Further calls do nothing.
  void finish();

 private:
  void draw();

  std::string label_;
  std::uint64_t total_;
  std::uint64_t done_ = 0;
  bool enabled_;
  bool drawn_ = false;
  bool finished_ = false;
  std::size_t last_width_ = 0;
  std::ostream* sink_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

/// True when progress should be shown: stderr is a terminal and `--quiet`
/// (or TENSOGRAM_QUIET) is not set.
[[nodiscard]] bool progress_wanted(const global_options& globals);

}  // namespace tensogram::cli

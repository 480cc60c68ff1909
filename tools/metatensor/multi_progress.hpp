// Several progress bars at once, one line each, for `metatensor fetch` (one
// bar per tensor in flight plus a total line). tools/tensogram/progress.hpp
// draws a single line with `\r`; several lines need the cursor moved back
// up over the previous frame, which this does with ANSI escapes (stderr is
// a terminal whenever bars are drawn: see `progress_wanted` in main.cpp).
//
// Like the single bar, it never changes what scripts see: stderr only, and
// a disabled renderer does nothing at all. Not thread-safe: one thread draws.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <span>
#include <string>

namespace metatensor::cli {

class multi_progress {
 public:
  struct row {
    std::string label;
    std::uint64_t done = 0;
    std::uint64_t total = 0;
  };

  /// Draws on `sink` (std::cerr in use), at most `max_rows` tensor rows
  /// (the rest are summed up in a "+ K more" line) plus the total line.
  multi_progress(std::ostream& sink, bool enabled, std::size_t max_rows = 8);
  multi_progress(const multi_progress&) = delete;
  multi_progress& operator=(const multi_progress&) = delete;
  /// Erases the bars (an exception unwinding through the command), so the
  /// `error:` line that follows starts on a clean line.
  ~multi_progress();

  /// Replaces the previous frame with `rows` and `total`, unless the last
  /// draw is less than 100 ms old and `force` is false.
  void draw(std::span<const row> rows, const row& total, bool force = false);
  /// Erases the bars; further draws do nothing.
  void finish();

  /// One line of text for a row, its label padded to `label_width` (at most 32) columns.
  [[nodiscard]] static std::string format(const row& r, std::size_t label_width, double seconds);

 private:
  void erase();

  std::ostream* sink_;
  bool enabled_;
  bool finished_ = false;
  std::size_t max_rows_;
  std::size_t lines_ = 0;  // lines of the frame on screen
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace metatensor::cli

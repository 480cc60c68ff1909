#include "progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "global_options.hpp"

namespace tensogram::cli {

namespace {

constexpr std::size_t bar_width = 30;
// About ten redraws a second: smooth enough to look alive, rare enough that
// drawing never costs measurable time next to the work being counted.
constexpr auto redraw_interval = std::chrono::milliseconds(100);

std::string rate_text(double per_second) {
  char buf[32];
  if (per_second >= 100.0) {
    std::snprintf(buf, sizeof buf, "%.0f/s", per_second);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f/s", per_second);
  }
  return buf;
}

}  // namespace

progress::progress(std::string label, std::uint64_t total, bool enabled)
    : progress(std::move(label), total, enabled, std::cerr) {}

progress::progress(std::string label, std::uint64_t total, bool enabled, std::ostream& sink)
    : label_(std::move(label)),
      total_(total),
      enabled_(enabled),
      sink_(&sink),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

progress::~progress() {
  // No final redraw here: on the error path the count is not meaningful,
  // only the cursor position is.
  if (enabled_ && drawn_ && !finished_) {
    try {
      *sink_ << '\n' << std::flush;
    } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw
    }
  }
}

void progress::advance(std::uint64_t n) {
  if (!enabled_ || finished_) return;
  done_ += n;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ >= redraw_interval || (total_ > 0 && done_ >= total_)) draw();
}

void progress::finish() {
  if (!enabled_ || finished_) return;
  draw();
  *sink_ << '\n' << std::flush;
  finished_ = true;
}

void progress::draw() {
  const auto now = std::chrono::steady_clock::now();
  last_draw_ = now;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  // Built by appending only: GCC 12 at -O3 reports a false -Wrestrict for
  // `" " + std::string` (GCC bug 105329).
  std::string line = label_;
  if (total_ > 0) {
    const std::uint64_t shown = done_ < total_ ? done_ : total_;
    const auto filled = static_cast<std::size_t>(static_cast<double>(bar_width) * static_cast<double>(shown) /
                                                 static_cast<double>(total_));
    line += " [";
    line.append(filled, '#');
    line.append(bar_width - filled, '-');
    line += "] ";
    line += std::to_string(done_);
    line += '/';
    line += std::to_string(total_);
    line += ' ';
    line += std::to_string(shown * 100 / total_);
    line += '%';
  } else {
    // Unknown total: a count only.
    line += ' ';
    line += std::to_string(done_);
  }
  if (seconds > 0.0) {
    line += ' ';
    line += rate_text(static_cast<double>(done_) / seconds);
  }
  // Blank out what a longer previous line left behind.
  const std::size_t width = line.size();
  if (width < last_width_) line.append(last_width_ - width, ' ');
  last_width_ = width;
  *sink_ << '\r' << line << std::flush;
  drawn_ = true;
}

bool progress_wanted(const global_options& globals) {
  return !globals.quiet && ::isatty(STDERR_FILENO) == 1;
}

}  // namespace tensogram::cli

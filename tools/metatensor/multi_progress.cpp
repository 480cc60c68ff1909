// Multi-line progress bars (see multi_progress.hpp).
#include "multi_progress.hpp"

#include <algorithm>
#include <cstdio>

namespace metatensor::cli {

namespace {

constexpr int bar_width = 24;
constexpr std::size_t max_label = 32;

// "1.2 MB", "640 kB", "12 B": decimal units, as the MB/s of the summary.
std::string human(std::uint64_t bytes) {
  char buf[32];
  const double b = static_cast<double>(bytes);
  if (bytes >= 1000ULL * 1000 * 1000) {
    std::snprintf(buf, sizeof buf, "%.2f GB", b / 1e9);
  } else if (bytes >= 1000ULL * 1000) {
    std::snprintf(buf, sizeof buf, "%.1f MB", b / 1e6);
  } else if (bytes >= 1000) {
    std::snprintf(buf, sizeof buf, "%.1f kB", b / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  }
  return buf;
}

std::string shorten(const std::string& label) {
  if (label.size() <= max_label) return label;
  // Keep the end: tensor names differ most in their last components.
  return "..." + label.substr(label.size() - (max_label - 3));
}

}  // namespace

multi_progress::multi_progress(std::ostream& sink, bool enabled, std::size_t max_rows)
    : sink_(&sink), enabled_(enabled), max_rows_(max_rows), start_(std::chrono::steady_clock::now()) {}

multi_progress::~multi_progress() {
  if (!finished_) erase();
}

std::string multi_progress::format(const row& r, std::size_t label_width, double seconds) {
  const double fraction =
      r.total == 0 ? 1.0 : std::min(1.0, static_cast<double>(r.done) / static_cast<double>(r.total));
  const int filled = static_cast<int>(fraction * bar_width);
  std::string label = shorten(r.label);
  label.resize(std::max(label.size(), std::min(label_width, max_label)), ' ');
  std::string line = label + " [" + std::string(static_cast<std::size_t>(filled), '#') +
                     std::string(static_cast<std::size_t>(bar_width - filled), '-') + "] " + human(r.done) +
                     "/" + human(r.total);
  char pct[32];
  std::snprintf(pct, sizeof pct, " %3.0f%%", fraction * 100.0);
  line += pct;
  if (seconds > 0) {
    char rate[48];
    std::snprintf(rate, sizeof rate, " %.1f MB/s", static_cast<double>(r.done) / 1e6 / seconds);
    line += rate;
  }
  return line;
}

void multi_progress::draw(std::span<const row> rows, const row& total, bool force) {
  if (!enabled_ || finished_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && lines_ > 0 && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  std::size_t width = total.label.size();
  const std::size_t shown = std::min(rows.size(), max_rows_);
  for (std::size_t i = 0; i < shown; ++i) width = std::max(width, rows[i].label.size());

  std::string frame;
  // Back to the first line of the previous frame; every line is cleared
  // before it is written, so a shorter frame leaves no debris.
  if (lines_ > 0) frame += "\x1b[" + std::to_string(lines_) + "F";
  std::size_t lines = 0;
  for (std::size_t i = 0; i < shown; ++i, ++lines) frame += "\x1b[2K" + format(rows[i], width, 0) + "\n";
  if (rows.size() > shown) {
    frame += "\x1b[2K  + " + std::to_string(rows.size() - shown) + " more in flight\n";
    ++lines;
  }
  const double seconds = std::chrono::duration<double>(now - start_).count();
  frame += "\x1b[2K" + format(total, width, seconds) + "\n";
  ++lines;
  // Clear what is left of a taller previous frame, then come back up.
  if (lines_ > lines) {
    for (std::size_t i = lines; i < lines_; ++i) frame += "\x1b[2K\n";
    frame += "\x1b[" + std::to_string(lines_ - lines) + "F";
  }
  lines_ = lines;
  *sink_ << frame << std::flush;
}

void multi_progress::erase() {
  if (!enabled_ || lines_ == 0) return;
  std::string frame = "\x1b[" + std::to_string(lines_) + "F";
  for (std::size_t i = 0; i < lines_; ++i) frame += "\x1b[2K\n";
  frame += "\x1b[" + std::to_string(lines_) + "F";
  *sink_ << frame << std::flush;
  lines_ = 0;
}

void multi_progress::finish() {
  if (finished_) return;
  erase();
  finished_ = true;
}

}  // namespace metatensor::cli

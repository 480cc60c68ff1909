// The `tensogram` binary's progress bar (spec 04 §A.5): off unless stderr
// is a terminal, a count and percentage throttled to a few redraws, a line
// always ended, and --quiet.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <tensogram.hpp>

#include "cli_rewrite_support.hpp"
#include "global_options.hpp"
#include "progress.hpp"

namespace tensogram::cli::test {
namespace {

namespace fs = std::filesystem;

// ---- progress --------------------------------------------------------------

std::size_t count_of(const std::string& s, char c) {
  return static_cast<std::size_t>(std::count(s.begin(), s.end(), c));
}

TEST(Progress, DisabledDrawsNothing) {
  std::ostringstream sink;
  {
    progress bar("x", 10, false, sink);
    for (int i = 0; i < 10; ++i) bar.advance();
    bar.finish();
  }
  EXPECT_EQ(sink.str(), "");
}

TEST(Progress, DrawsCountPercentageAndEndsTheLine) {
  std::ostringstream sink;
  progress bar("merge", 4, true, sink);
  bar.advance(3);
  bar.advance();  // the total is reached: drawn at once
  const std::string drawn = sink.str();
  ASSERT_FALSE(drawn.empty());
  EXPECT_EQ(drawn.front(), '\r');
  EXPECT_NE(drawn.find("merge ["), std::string::npos) << drawn;
  EXPECT_NE(drawn.find("4/4 100%"), std::string::npos) << drawn;
  EXPECT_NE(drawn.find(std::string(30, '#')), std::string::npos) << drawn;
  EXPECT_NE(drawn.find("/s"), std::string::npos) << drawn;
  EXPECT_EQ(drawn.find('\n'), std::string::npos);
  bar.finish();
  EXPECT_EQ(sink.str().back(), '\n');
  EXPECT_EQ(count_of(sink.str(), '\n'), 1u);
  bar.finish();  // idempotent
  bar.advance();
  EXPECT_EQ(count_of(sink.str(), '\n'), 1u);
}

TEST(Progress, ThrottledToAFewRedraws) {
  std::ostringstream sink;
  progress bar("copy", 100000, true, sink);
  for (int i = 0; i < 100000; ++i) bar.advance();
  bar.finish();
  // A tight loop takes well under a second: the final draw on reaching the
  // total plus finish(), and at most a handful of timed redraws.
  EXPECT_LE(count_of(sink.str(), '\r'), 12u);
  EXPECT_GE(count_of(sink.str(), '\r'), 2u);
  EXPECT_NE(sink.str().find("100000/100000 100%"), std::string::npos);
}

TEST(Progress, HalfBarAndUnknownTotal) {
  std::ostringstream half;
  {
    progress bar("split", 2, true, half);
    bar.advance();
    bar.finish();  // draws 1/2
  }
  EXPECT_NE(half.str().find("[" + std::string(15, '#') + std::string(15, '-') + "] 1/2 50%"),
            std::string::npos)
      << half.str();
  std::ostringstream unknown;
  {
    progress bar("scan", 0, true, unknown);
    bar.advance(7);
    bar.finish();
  }
  EXPECT_NE(unknown.str().find("\rscan 7"), std::string::npos) << unknown.str();
  EXPECT_EQ(unknown.str().find('['), std::string::npos);
}

TEST(Progress, DestructorEndsAnUnfinishedLine) {
  std::ostringstream sink;
  {
    progress bar("x", 1, true, sink);
    bar.advance();  // drawn (total reached), never finished: an error path
  }
  EXPECT_EQ(sink.str().back(), '\n');
  std::ostringstream quiet;
  { progress bar("x", 100, true, quiet); }  // nothing drawn, nothing to end
  EXPECT_EQ(quiet.str(), "");
}

TEST(Progress, QuietTurnsItOff) {
  global_options g;
  g.quiet = true;
  EXPECT_FALSE(progress_wanted(g));
}

TEST(Progress, NothingOnStderrWhenItIsNotATerminal) {
  // run_cli sends stderr to a file: no progress, in any command.
  const scratch_dir dir;
  expect_success(run_cli({"copy", fixture("hundred-msg.tgm"), (dir / "c.tgm").string()}), "");
  expect_success(run_cli({"reshuffle", "-o", (dir / "r.tgm").string(), fixture("hundred-msg-footer.tgm")}),
                 "Reshuffled 100 message(s) from " + fixture("hundred-msg-footer.tgm") + " to " +
                     (dir / "r.tgm").string() + "\n");
  const std::vector<std::byte> data(16, std::byte{0});
  write_file(dir / "a.npy", make_npy(npy_dict("<f4", {4}), data));
  expect_success(run_cli({"convert-npy", (dir / "a.npy").string(), "-o", (dir / "a.tgm").string()}),
                 "Wrote 1 object to " + (dir / "a.tgm").string() + "\n");
  // --quiet / -q / TENSOGRAM_QUIET are accepted anywhere.
  expect_success(run_cli({"-q", "split", "-o", (dir / "s.tgm").string(), fixture("multi_object.tgm")}),
                 "Split into 3 message(s)\n");
  expect_success(run_cli({"split", "--quiet", "-o", (dir / "s.tgm").string(), fixture("multi_object.tgm")}),
                 "Split into 3 message(s)\n");
  expect_success(
      run_cli({"merge", "-o", (dir / "m.tgm").string(), fixture("multi_object.tgm")}, {"TENSOGRAM_QUIET=1"}),
      "Merged 3 objects from 1 file(s) into " + (dir / "m.tgm").string() + " (strategy: first)\n");
}

}  // namespace
}  // namespace tensogram::cli::test

// Crash safety, proven by killing writers (issue 28 items 5 and 6): every
// writer that replaces or extends a file is run as a child process and killed
// with SIGKILL after a seeded random delay, then the file is checked:
//
// * rewrites (`tensogram copy`/`set`/`merge` onto an existing OUTPUT, the
//   streaming encoder writing to a path, `metatensor from-tgm -o` over an
//   existing file): the target is byte-identical to the old file or to the
//   new one, and no temporary file is left behind (core/atomic_file.hpp);
// * appends (`file::append` in crash_writer): the old messages are a
//   byte-identical prefix, then come whole new messages in order, then at
//   most a torn tail that the scan skips and validation reports
//   (spec 01 §16).
//
// Then concurrency: two processes appending to one file never interleave
// (the append's flock), and a reader scanning while another process appends
// sees only whole messages.
//
// TENSOGRAM_SOAK_KILLS=N (`make soak`) raises the kill points per writer
// from the default 20; TENSOGRAM_CRASH_SEED fixes the seed (default 28).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <tensogram.hpp>

#include "crash_writer.hpp"
#include "test_support.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using tensogram::cli::test::read_file;
using tensogram::cli::test::scratch_dir;
using tensogram::cli::test::write_file;
using bytes = std::vector<std::byte>;

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::stoull(v);
}

std::uint64_t kills_per_writer() {
  return env_number("TENSOGRAM_SOAK_KILLS", 20);
}
std::uint64_t base_seed() {
  return env_number("TENSOGRAM_CRASH_SEED", 28);
}

// Decodes one whole message, frame hashes verified.
tensogram::message decode_checked(std::span<const std::byte> msg) {
  tensogram::decode_options o;
  o.verify_hash = true;
  return tensogram::decode(tensogram::buffer::borrowed(msg), o);
}

// Starts `argv` with stdin, stdout and stderr on /dev/null.
pid_t spawn(const std::vector<std::string>& args) {
  std::vector<std::string> store = args;
  std::vector<char*> argv;
  for (std::string& a : store) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  for (int fd = 0; fd < 3; ++fd) {
    posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
  }
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("posix_spawn " + args[0] + ": " + std::strerror(rc));
  return pid;
}

int wait_status(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error("waitpid failed");
  }
  return status;
}

// Runs `args` to the end: its exit code, and how long it took.
std::pair<int, std::chrono::microseconds> run_to_end(const std::vector<std::string>& args) {
  const auto t0 = std::chrono::steady_clock::now();
  const int status = wait_status(spawn(args));
  const auto dt =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), dt};
}

// Runs `args` and sends SIGKILL after `delay`; true when the kill landed
// (the writer had not finished).
bool run_and_kill(const std::vector<std::string>& args, std::chrono::microseconds delay) {
  const pid_t pid = spawn(args);
  std::this_thread::sleep_for(delay);
  ::kill(pid, SIGKILL);
  const int status = wait_status(pid);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

// Files in `dir` that look like a writer's temporary file (`.<name>.tmp.*`).
std::size_t temp_files_in(const fs::path& dir) {
  std::size_t n = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with('.') && name.find(".tmp.") != std::string::npos) ++n;
  }
  return n;
}

// The median duration of three uninterrupted runs: the kill delays are
// drawn up to a little beyond it, so that most kills land mid-write.
std::chrono::microseconds calibrate(const std::vector<std::string>& args,
                                    const std::function<void()>& reset) {
  std::vector<std::chrono::microseconds> d;
  for (int i = 0; i < 3; ++i) {
    reset();
    const auto [code, dt] = run_to_end(args);
    EXPECT_EQ(code, 0) << args[0] << " " << args[1];
    d.push_back(dt);
  }
  std::sort(d.begin(), d.end());
  return d[1];
}

struct tally {
  std::uint64_t runs = 0;
  std::uint64_t killed = 0;
  std::uint64_t saw_old = 0;
  std::uint64_t saw_new = 0;
  std::uint64_t temp_after_kill = 0;

  void print(const std::string& writer) const {
    std::cout << "[crash] " << writer << ": " << runs << " runs, " << killed
              << " killed mid-write, target old " << saw_old << " / new " << saw_new
              << ", temporary files left after a kill: " << temp_after_kill << '\n';
  }
};

// True when `now` is a complete new output like `fresh`. Writers that
// re-encode stamp each message with the time and a random UUID
// (`_reserved_`, spec 02 §3.3), so two runs differ in those bytes only: then
// a complete output is one of the same length and message count whose every
// message validates (hashes included). A torn or mixed file fails that.
bool same_output(const bytes& now, const bytes& fresh, bool deterministic) {
  if (deterministic) return now == fresh;
  if (now.size() != fresh.size()) return false;
  if (tensogram::scan(now).size() != tensogram::scan(fresh).size()) return false;
  return tensogram::validate_buffer(now).ok();
}

// A writer that replaces `target` (which holds `old` before every run).
// The new content is what an uninterrupted run writes; the target after a
// kill must be byte-identical to the old file or be a complete new one.
tally kill_rewrites(const std::string& writer, const std::vector<std::string>& args, const fs::path& target,
                    const bytes& old, std::uint64_t seed, bool tgm_output = true) {
  const auto reset = [&] { write_file(target, old); };
  const std::chrono::microseconds typical = calibrate(args, reset);
  const bytes fresh = read_file(target);
  EXPECT_NE(fresh, old) << writer << ": the new file must differ from the old one";
  reset();
  EXPECT_EQ(run_to_end(args).first, 0);
  const bool deterministic = read_file(target) == fresh;
  EXPECT_TRUE(deterministic || tgm_output) << writer << " is not deterministic";
  if (tgm_output) {
    EXPECT_TRUE(tensogram::validate_buffer(fresh).ok()) << writer;
  }

  std::mt19937_64 rng(seed);
  const auto limit = static_cast<std::uint64_t>(typical.count()) * 6 / 5 + 1;
  tally t;
  for (std::uint64_t i = 0; i < kills_per_writer(); ++i) {
    reset();
    const bool killed = run_and_kill(args, std::chrono::microseconds(rng() % limit));
    ++t.runs;
    t.killed += killed ? 1 : 0;
    const bytes now = read_file(target);
    const bool is_old = now == old;
    const bool is_new = !is_old && same_output(now, fresh, deterministic);
    t.saw_old += is_old ? 1 : 0;
    t.saw_new += is_new ? 1 : 0;
    EXPECT_TRUE(is_old || is_new) << writer << ", kill " << i
                                  << ": the target is neither the old nor the new file (" << now.size()
                                  << " bytes; old " << old.size() << ", new " << fresh.size() << ")";
    const std::size_t temps = temp_files_in(target.parent_path());
    t.temp_after_kill += temps;
    // An unnamed temporary file (O_TMPFILE) vanishes with the process; a
    // name exists only between link and rename (microseconds), and the
    // next writer removes it.
    EXPECT_LE(temps, 1U) << writer << ", kill " << i;
  }
  // The next complete write cleans up whatever the kills left.
  reset();
  EXPECT_EQ(run_to_end(args).first, 0);
  EXPECT_TRUE(same_output(read_file(target), fresh, deterministic));
  EXPECT_EQ(temp_files_in(target.parent_path()), 0U) << writer << ": temporary files survive the next write";
  // The kills must land while the writer runs, not after it exited, for
  // the test to prove anything; the bound is loose because a loaded machine
  // skews the calibration.
  EXPECT_GT(t.killed, t.runs / 8) << writer << ": too few kills landed mid-write";
  t.print(writer);
  return t;
}

// Three files of several messages each, for the rewriting commands.
struct inputs {
  scratch_dir dir;
  fs::path big = dir / "big.tgm";
  fs::path other = dir / "other.tgm";

  inputs() {
    tensogram::file b = tensogram::file::create(big);
    tensogram::file o = tensogram::file::create(other);
    for (std::uint64_t k = 0; k < 16; ++k) append_message(b, 7, k);
    for (std::uint64_t k = 0; k < 3; ++k) append_message(o, 8, k);
  }

  static void append_message(tensogram::file& f, std::uint64_t tag, std::uint64_t k) {
    const std::vector<float> v = tensogram::crash_test::message_values(tag, k);
    tensogram::global_metadata meta;
    meta.base.push_back(tensogram::cbor::value::make_map({{"k", static_cast<std::int64_t>(k)}}));
    const std::vector<tensogram::object_input> objects{
        {tensogram::data_object_descriptor::contiguous(tensogram::dtype::float32, {v.size()}),
         std::as_bytes(std::span(v))}};
    f.append(meta, objects);
  }
};

TEST(CrashSafety, KilledCopyLeavesOldOrNewFileAndNoTempFile) {
  const inputs in;
  const fs::path target = in.dir / "existing.tgm";
  kill_rewrites("tensogram copy", {TENSOGRAM_CLI, "copy", in.big.string(), target.string()}, target,
                read_file(in.other), base_seed());
}

TEST(CrashSafety, KilledSetLeavesOldOrNewFile) {
  const inputs in;
  const fs::path target = in.dir / "existing.tgm";
  kill_rewrites("tensogram set",
                {TENSOGRAM_CLI, "set", "-s", "mars.param=2t", in.big.string(), target.string()}, target,
                read_file(in.other), base_seed() + 1);
}

TEST(CrashSafety, KilledMergeLeavesOldOrNewFile) {
  const inputs in;
  const fs::path target = in.dir / "existing.tgm";
  kill_rewrites("tensogram merge",
                {TENSOGRAM_CLI, "merge", in.big.string(), in.other.string(), "-o", target.string()}, target,
                read_file(in.other), base_seed() + 2);
}

TEST(CrashSafety, KilledStreamingEncoderLeavesOldOrNewFile) {
  const inputs in;
  const fs::path target = in.dir / "existing.tgm";
  kill_rewrites("streaming encoder", {CRASH_WRITER, "stream", target.string(), "16"}, target,
                read_file(in.other), base_seed() + 3);
}

TEST(CrashSafety, KilledMetatensorWriterLeavesOldOrNewFile) {
  const inputs in;
  const fs::path target = in.dir / "existing.safetensors";
  // The old file: a metatensor file of its own (from the small input).
  ASSERT_EQ(run_to_end({METATENSOR_CLI, "from-tgm", in.other.string(), "-o", target.string()}).first, 0);
  kill_rewrites("metatensor from-tgm", {METATENSOR_CLI, "from-tgm", in.big.string(), "-o", target.string()},
                target, read_file(target), base_seed() + 4, /*tgm_output=*/false);
}

// ---- appends -----------------------------------------------------------------

// What a file must look like after `crash_writer append` (tag `tag`) was
// started on a file holding `old`: `old`, then messages k = 0, 1, ... whole
// and with the writer's values, then at most one torn tail. Returns the
// number of whole new messages; `torn` tells whether a tail was left.
std::size_t check_appended(const bytes& now, const bytes& old, std::uint64_t tag, bool& torn,
                           const std::string& where) {
  torn = false;
  if (now.size() < old.size() || !std::equal(old.begin(), old.end(), now.begin())) {
    ADD_FAILURE() << where << ": the old messages are not a byte-identical prefix";
    return 0;
  }
  const std::vector<tensogram::scan_entry> found = tensogram::scan(now);
  const std::vector<tensogram::scan_entry> before = tensogram::scan(old);
  std::size_t whole = 0;
  std::size_t end = old.size();
  for (std::size_t m = before.size(); m < found.size(); ++m) {
    const tensogram::scan_entry& e = found[m];
    if (e.offset != end) {
      ADD_FAILURE() << where << ": message at " << e.offset << " does not follow the previous one at " << end;
      return whole;
    }
    const std::span<const std::byte> msg(now.data() + e.offset, e.length);
    const tensogram::message decoded = decode_checked(msg);
    const tensogram::metadata meta = tensogram::decode_metadata(msg);
    EXPECT_EQ(meta.get_int("tag"), static_cast<std::int64_t>(tag)) << where;
    EXPECT_EQ(meta.get_int("k"), static_cast<std::int64_t>(whole)) << where;
    const std::vector<float> want = tensogram::crash_test::message_values(tag, whole);
    const tensogram::decoded_object& o = decoded.object(0);
    EXPECT_TRUE(o.data_size() == want.size() * sizeof(float) &&
                std::memcmp(o.data(), want.data(), o.data_size()) == 0)
        << where << ": message " << whole << " holds other values";
    end = e.offset + e.length;
    ++whole;
  }
  torn = end != now.size();
  if (torn) {
    const tensogram::file_report r = tensogram::validate_buffer(now);
    EXPECT_FALSE(r.ok()) << where << ": a torn tail must be reported";
    EXPECT_EQ(r.file_issues.size(), 1U) << where;
    if (!r.file_issues.empty()) {
      EXPECT_EQ(r.file_issues.back().byte_offset, end) << where;
      EXPECT_EQ(r.file_issues.back().byte_offset + r.file_issues.back().length, now.size()) << where;
    }
  }
  return whole;
}

TEST(CrashSafety, KilledAppendKeepsEarlierMessagesAndLeavesWholeMessages) {
  const inputs in;
  const fs::path target = in.dir / "log.tgm";
  const bytes old = read_file(in.other);
  const std::vector<std::string> args = {CRASH_WRITER, "append", target.string(), "24", "5"};
  const auto reset = [&] { write_file(target, old); };
  const std::chrono::microseconds typical = calibrate(args, reset);
  std::mt19937_64 rng(base_seed() + 5);
  const auto limit = static_cast<std::uint64_t>(typical.count()) * 6 / 5 + 1;
  tally t;
  std::uint64_t torn_tails = 0;
  bool cli_checked = false;
  for (std::uint64_t i = 0; i < kills_per_writer(); ++i) {
    reset();
    t.killed += run_and_kill(args, std::chrono::microseconds(rng() % limit)) ? 1 : 0;
    ++t.runs;
    bool torn = false;
    const std::size_t whole = check_appended(read_file(target), old, 5, torn, "kill " + std::to_string(i));
    t.saw_new += whole;
    torn_tails += torn ? 1 : 0;
    EXPECT_EQ(tensogram::file::open(target).message_count(), tensogram::scan(old).size() + whole);
    if (torn && !cli_checked) {
      // `tensogram validate` reports the tail and fails.
      const auto r = tensogram::cli::test::run_cli({"validate", target.string()});
      EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
      cli_checked = true;
    }
    EXPECT_EQ(temp_files_in(in.dir.path()), 0U);
  }
  EXPECT_GT(t.killed, t.runs / 8) << "too few kills landed mid-append";
  std::cout << "[crash] file::append: " << t.runs << " runs, " << t.killed << " killed, " << t.saw_new
            << " whole new messages in all, " << torn_tails << " torn tails (all skipped by the scan)\n";
}

// ---- concurrency ---------------------------------------------------------------

TEST(Concurrency, TwoAppendingProcessesNeverInterleave) {
  const scratch_dir dir;
  const fs::path target = dir / "shared.tgm";
  (void)tensogram::file::create(target);
  const std::uint64_t per_writer = env_number("TENSOGRAM_SOAK_KILLS", 0) > 0 ? 400 : 120;
  const std::string n = std::to_string(per_writer);
  const pid_t a = spawn({CRASH_WRITER, "append", target.string(), n, "1"});
  const pid_t b = spawn({CRASH_WRITER, "append", target.string(), n, "2"});
  EXPECT_EQ(wait_status(a), 0);
  EXPECT_EQ(wait_status(b), 0);

  const bytes all = read_file(target);
  const tensogram::file_report r = tensogram::validate_buffer(all);
  EXPECT_TRUE(r.ok()) << "interleaved or damaged messages";
  ASSERT_EQ(r.messages.size(), 2 * per_writer);
  // Each writer's messages appear whole and in its own order.
  std::uint64_t next[3] = {0, 0, 0};
  std::uint64_t switches = 0;
  std::int64_t last_tag = 0;
  for (const tensogram::scan_entry& e : tensogram::scan(all)) {
    const std::span<const std::byte> msg(all.data() + e.offset, e.length);
    const tensogram::metadata meta = tensogram::decode_metadata(msg);
    const std::int64_t tag = meta.get_int("tag");
    ASSERT_TRUE(tag == 1 || tag == 2);
    EXPECT_EQ(meta.get_int("k"), static_cast<std::int64_t>(next[tag]));
    const std::vector<float> want =
        tensogram::crash_test::message_values(static_cast<std::uint64_t>(tag), next[tag]);
    const tensogram::message m = decode_checked(msg);
    EXPECT_EQ(std::memcmp(m.object(0).data(), want.data(), want.size() * sizeof(float)), 0);
    ++next[tag];
    switches += (last_tag != 0 && tag != last_tag) ? 1 : 0;
    last_tag = tag;
  }
  std::cout << "[crash] two appenders: " << 2 * per_writer << " messages, all whole; the writers took turns "
            << switches << " times\n";
}

TEST(Concurrency, AppendWaitsForTheAdvisoryLock) {
  // A single write(2) with O_APPEND rarely splits, so the test above could
  // pass without a lock; this one checks that the lock is there: while we
  // hold flock(LOCK_EX) on the file, an append from another process waits.
  const scratch_dir dir;
  const fs::path target = dir / "locked.tgm";
  (void)tensogram::file::create(target);
  const int fd = ::open(target.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  const pid_t writer = spawn({CRASH_WRITER, "append", target.string(), "1", "4"});
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  int status = 0;
  EXPECT_EQ(::waitpid(writer, &status, WNOHANG), 0) << "the append did not wait for the lock";
  EXPECT_EQ(fs::file_size(target), 0U);
  ASSERT_EQ(::flock(fd, LOCK_UN), 0);
  ::close(fd);
  EXPECT_EQ(wait_status(writer), 0);
  bool torn = false;
  EXPECT_EQ(check_appended(read_file(target), {}, 4, torn, "after unlock"), 1U);
  EXPECT_FALSE(torn);
}

TEST(Concurrency, ReaderDuringAppendsSeesOnlyWholeMessages) {
  const scratch_dir dir;
  const fs::path target = dir / "growing.tgm";
  (void)tensogram::file::create(target);
  const pid_t writer = spawn({CRASH_WRITER, "append", target.string(), "300", "3"});
  std::uint64_t reads = 0;
  std::uint64_t errors = 0;
  std::size_t seen = 0;
  for (;;) {
    int status = 0;
    const bool done = ::waitpid(writer, &status, WNOHANG) == writer;
    try {
      tensogram::file f = tensogram::file::open(target);
      const std::size_t count = f.message_count();
      EXPECT_GE(count, seen) << "messages disappeared";
      seen = std::max(seen, count);
      if (count > 0) {
        // The newest message must decode, hashes verified, with its values.
        tensogram::decode_options verify;
        verify.verify_hash = true;
        const tensogram::message m = f.decode_message(count - 1, verify);
        const std::vector<float> want = tensogram::crash_test::message_values(3, count - 1);
        if (m.object(0).data_size() != want.size() * sizeof(float) ||
            std::memcmp(m.object(0).data(), want.data(), want.size() * sizeof(float)) != 0) {
          ++errors;
        }
      }
      ++reads;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "read " << reads << ": " << e.what();
      ++errors;
    }
    if (done) {
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
      break;
    }
  }
  EXPECT_EQ(errors, 0U);
  EXPECT_EQ(tensogram::file::open(target).message_count(), 300U);
  std::cout << "[crash] reader during appends: " << reads << " scans, " << errors << " errors\n";
}

// ---- the fallback temporary name -------------------------------------------------

TEST(AtomicFile, NextWriterRemovesStaleTemporaryFilesOfDeadWriters) {
  const scratch_dir dir;
  const fs::path target = dir / "out.tgm";
  // A pid that is surely gone: a child that has exited and been reaped.
  const pid_t dead = spawn({"/bin/true"});
  (void)wait_status(dead);
  const fs::path stale = dir / (".out.tgm.tmp." + std::to_string(dead) + ".12345");
  const fs::path live = dir / (".out.tgm.tmp." + std::to_string(::getppid()) + ".6789");
  const fs::path unrelated = dir / (".other.tgm.tmp." + std::to_string(dead) + ".1");
  const fs::path not_ours = dir / (".out.tgm.tmp." + std::to_string(dead) + ".x1");
  for (const fs::path& p : {stale, live, unrelated, not_ours}) write_file(p, bytes(10));
  tensogram::write_file_atomically(target, bytes(3, std::byte{1}));
  EXPECT_FALSE(fs::exists(stale)) << "a dead writer's temporary file survives";
  EXPECT_TRUE(fs::exists(live)) << "a live writer's temporary file was removed";
  EXPECT_TRUE(fs::exists(unrelated));
  EXPECT_TRUE(fs::exists(not_ours));
  EXPECT_EQ(read_file(target), bytes(3, std::byte{1}));
}

TEST(AtomicFile, UnsyncedWriteReplacesTheFileToo) {
  const scratch_dir dir;
  const fs::path target = dir / "out.bin";
  write_file(target, bytes(5));
  tensogram::write_file_atomically(target, bytes(2, std::byte{7}),
                                   tensogram::atomic_write_options{.sync = false});
  EXPECT_EQ(read_file(target), bytes(2, std::byte{7}));
  EXPECT_EQ(temp_files_in(dir.path()), 0U);
}

}  // namespace

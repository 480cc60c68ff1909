// The streaming encoder's sinks (spec 01 §18): total_length back-filled
// through a path, an ostream, an ofstream and a file descriptor at its
// current offset; left zero on append-mode, unseekable, socket and pipe
// sinks; an existing file kept until finish.
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "streaming_encoder_support.hpp"

namespace {

using namespace tgtest::streaming;
namespace fs = std::filesystem;
using tgtest::be64;
using tgtest::bytes;

// ---- sinks and total_length back-fill -----------------------------------------------------

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tgm-stream-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::size_t entries() const {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()));
  }
  static bytes read_file(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    const std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    return str_bytes(s);
  }
  fs::path dir_;
};

std::vector<object_case> three_objects() {
  std::vector<object_case> objs;
  objs.push_back(raw(tg::data_object_descriptor::contiguous(dtype::float32, {4}),
                     native_bytes(std::vector<float>{1, 2, 3, 4})));
  objs.push_back(raw(sp_szip(200), native_bytes(smooth(200))));
  objs.push_back(raw(tg::data_object_descriptor::contiguous(dtype::int8, {2}), tgtest::B({0xFF, 0x01})));
  return objs;
}

using StreamingEncoderSink = TempDir;

TEST_F(StreamingEncoderSink, PathIsBackFilledAndMatchesTheStreamOutput) {
  const fs::path p = dir_ / "out.tgm";
  const auto objs = three_objects();
  {
    tg::streaming_encoder enc(p, meta_with_base(3), fixed_options());
    EXPECT_FALSE(fs::exists(p));  // written beside, renamed into place by finish()
    const std::uint64_t total = feed(enc, objs);
    EXPECT_EQ(total, fs::file_size(p));
  }
  EXPECT_EQ(read_file(p), stream_to_string(meta_with_base(3), objs));
  EXPECT_EQ(entries(), 1u);  // no temporary file left behind
  // The path overload taking JSON.
  const fs::path q = dir_ / "json.tgm";
  {
    tg::streaming_encoder enc(q, std::string("{}"), fixed_options());
    feed(enc, objs);
  }
  EXPECT_EQ(read_file(q), stream_to_string({}, objs));
}

TEST_F(StreamingEncoderSink, PathKeepsAnExistingFileUntilFinish) {
  const fs::path p = dir_ / "existing.tgm";
  const bytes old = buffered({}, three_objects());
  {
    std::ofstream f(p, std::ios::binary);
    f.write(reinterpret_cast<const char*>(old.data()), static_cast<std::streamsize>(old.size()));
  }
  {
    tg::streaming_encoder enc(p, meta_with_base(1), fixed_options());
    enc.write_object(three_objects()[0].descriptor, three_objects()[0].data);
    EXPECT_EQ(read_file(p), old);
    // Destroyed without finish(): the destination is untouched, the
    // temporary file removed.
  }
  EXPECT_EQ(read_file(p), old);
  EXPECT_EQ(entries(), 1u);
  {
    tg::streaming_encoder enc(p, meta_with_base(1), fixed_options());
    EXPECT_EQ(read_file(p), old);
    feed(enc, {three_objects()[0]});
  }
  EXPECT_EQ(read_file(p), stream_to_string(meta_with_base(1), {three_objects()[0]}));
  EXPECT_EQ(entries(), 1u);
}

TEST_F(StreamingEncoderSink, PathInAMissingDirectoryIsAnIoError) {
  EXPECT_THROW(tg::streaming_encoder(dir_ / "no" / "such" / "dir.tgm", tg::global_metadata{}), tg::io_error);
}

TEST_F(StreamingEncoderSink, RejectedOptionsCreateNoFile) {
  tg::encode_options o;
  o.aggregate_hash = tg::aggregate_hash_policy::header;
  EXPECT_THROW(tg::streaming_encoder(dir_ / "x.tgm", tg::global_metadata{}, o), tg::encoding_error);
  EXPECT_EQ(entries(), 0u);
}

TEST_F(StreamingEncoderSink, OstreamWithEarlierContentIsBackFilledAtTheMessage) {
  std::ostringstream os;
  os << "prefix!";  // the message starts at offset 7
  const auto objs = three_objects();
  {
    tg::streaming_encoder enc(os, meta_with_base(3), fixed_options());
    feed(enc, objs);
  }
  os << "tail";  // the stream is left at the end of the message
  const bytes all = str_bytes(os.str());
  const bytes want = stream_to_string(meta_with_base(3), objs);
  ASSERT_EQ(all.size(), 7 + want.size() + 4);
  EXPECT_EQ(tgtest::slice(all, 7, want.size()), want);
  EXPECT_EQ(tgtest::slice(all, 7 + want.size(), 4), str_bytes("tail"));
}

TEST_F(StreamingEncoderSink, OfstreamIsBackFilled) {
  const fs::path p = dir_ / "ofstream.tgm";
  const auto objs = three_objects();
  {
    std::ofstream f(p, std::ios::binary);
    tg::streaming_encoder enc(f, meta_with_base(3), fixed_options());
    feed(enc, objs);
  }
  EXPECT_EQ(read_file(p), stream_to_string(meta_with_base(3), objs));
}

TEST_F(StreamingEncoderSink, OfstreamInAppendModeIsReportedNotSilentlyCorrupted) {
  // An app-mode stream accepts seeks but writes at the end: the back-fill
  // cannot work and must not pass unnoticed.
  const fs::path p = dir_ / "app.tgm";
  const bytes first = buffered({}, three_objects());
  {
    std::ofstream f(p, std::ios::binary);
    f.write(reinterpret_cast<const char*>(first.data()), static_cast<std::streamsize>(first.size()));
  }
  const auto objs = three_objects();
  {
    std::ofstream f(p, std::ios::binary | std::ios::app);
    tg::streaming_encoder enc(f, meta_with_base(3), fixed_options());
    for (const auto& o : objs) enc.write_object(o.descriptor, o.data);
    EXPECT_THROW(enc.finish(), tg::io_error);
    EXPECT_THROW(enc.finish(), tg::invalid_arg_error);
  }
  const bytes all = read_file(p);
  const bytes want = stream_unseekable(meta_with_base(3), objs);
  ASSERT_EQ(all.size(), first.size() + want.size() + 8);
  EXPECT_EQ(tgtest::slice(all, first.size(), want.size()), want);
  const auto entries = tg::scan(std::span<const std::byte>(all));
  EXPECT_EQ(entries, (std::vector<tg::scan_entry>{{0, first.size()}, {first.size(), want.size()}}));
}

TEST_F(StreamingEncoderSink, FdRegularFileIsBackFilledAtTheCurrentOffset) {
  const fs::path p = dir_ / "fd.tgm";
  const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "0123456789", 10), 10);
  const auto objs = three_objects();
  {
    tg::streaming_encoder enc = tg::streaming_encoder::to_fd(fd, meta_with_base(3), fixed_options());
    feed(enc, objs);
  }
  ASSERT_EQ(::write(fd, "after", 5), 5);  // the descriptor stays open, positioned after the message
  ::close(fd);
  const bytes all = read_file(p);
  const bytes want = stream_to_string(meta_with_base(3), objs);
  ASSERT_EQ(all.size(), 10 + want.size() + 5);
  EXPECT_EQ(tgtest::slice(all, 10, want.size()), want);
}

TEST_F(StreamingEncoderSink, FdInAppendModeKeepsTotalLengthZero) {
  const fs::path p = dir_ / "append.tgm";
  const bytes first = buffered({}, three_objects());
  {
    std::ofstream f(p, std::ios::binary);
    f.write(reinterpret_cast<const char*>(first.data()), static_cast<std::streamsize>(first.size()));
  }
  const int fd = ::open(p.c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(fd, 0);
  const auto objs = three_objects();
  {
    tg::streaming_encoder enc = tg::streaming_encoder::to_fd(fd, std::string("{}"), fixed_options());
    feed(enc, objs);
  }
  ::close(fd);
  const bytes all = read_file(p);
  const bytes want = stream_unseekable({}, objs);
  ASSERT_EQ(all.size(), first.size() + want.size());
  EXPECT_EQ(tgtest::slice(all, first.size(), want.size()), want);
  const auto entries = tg::scan(std::span<const std::byte>(all));
  EXPECT_EQ(entries, (std::vector<tg::scan_entry>{{0, first.size()}, {first.size(), want.size()}}));
}

TEST_F(StreamingEncoderSink, UnseekableOstreamKeepsTotalLengthZero) {
  const bytes u = stream_unseekable(meta_with_base(3), three_objects());
  EXPECT_EQ(be64(u, 16), 0u);
  EXPECT_EQ(be64(u, u.size() - 16), 0u);
  EXPECT_EQ(tg::scan(std::span<const std::byte>(u)), (std::vector<tg::scan_entry>{{0, u.size()}}));
}

TEST_F(StreamingEncoderSink, SocketKeepsTotalLengthZero) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  const auto objs = three_objects();
  {
    tg::streaming_encoder enc = tg::streaming_encoder::to_fd(sv[0], meta_with_base(3), fixed_options());
    feed(enc, objs);  // small enough for the socket buffer
  }
  ::close(sv[0]);
  bytes got;
  std::byte buf[4096];
  for (;;) {
    const ssize_t n = ::read(sv[1], buf, sizeof buf);
    if (n <= 0) break;
    got.insert(got.end(), buf, buf + n);
  }
  ::close(sv[1]);
  EXPECT_EQ(got, stream_unseekable(meta_with_base(3), objs));
}

// A child process streams a message into a pipe (made non-blocking, so the
// writer also meets EAGAIN and partial writes); the parent reads to EOF and
// decodes.
TEST_F(StreamingEncoderSink, ForkedChildStreamsThroughAPipe) {
  std::vector<object_case> objs = three_objects();
  std::mt19937_64 rng(99);
  const std::uint64_t n = 400000;  // 1.6 MB: many times the pipe capacity
  objs.push_back(raw(tg::data_object_descriptor::contiguous(dtype::float32, {n}),
                     tgtest::make_random_sample(dtype::float32, n, rng).in(tg::native_byte_order())));
  objs.push_back(
      raw(tg::data_object_descriptor::contiguous(dtype::uint16, {3}), tgtest::B({0, 1, 0, 2, 0, 3})));
  objs[1].preceder = cbor::value::make_map({{"from", "child"}});
  const tg::global_metadata meta = meta_with_base(2);

  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(fds[0]);
    int code = 0;
    try {
      ::fcntl(fds[1], F_SETFL, ::fcntl(fds[1], F_GETFL) | O_NONBLOCK);
      tg::streaming_encoder enc = tg::streaming_encoder::to_fd(fds[1], meta, fixed_options());
      for (const object_case& o : objs) {
        if (o.preceder) enc.write_preceder(*o.preceder);
        enc.write_object(o.descriptor, o.data);
      }
      (void)enc.finish();
    } catch (...) {
      code = 1;
    }
    ::close(fds[1]);
    ::_exit(code);
  }
  ::close(fds[1]);
  bytes got;
  std::vector<std::byte> buf(1 << 12);  // small reads: the child blocks often
  for (;;) {
    const ssize_t r = ::read(fds[0], buf.data(), buf.size());
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got.insert(got.end(), buf.begin(), buf.begin() + r);
  }
  ::close(fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);

  ASSERT_GE(got.size(), 48u);
  EXPECT_EQ(be64(got, 16), 0u);
  EXPECT_EQ(be64(got, got.size() - 16), 0u);
  EXPECT_EQ(tg::scan(std::span<const std::byte>(got)), (std::vector<tg::scan_entry>{{0, got.size()}}));
  check_layout(got, meta, fixed_options(), objs.size(), 1, false);
  const tg::message m = tg::decode(tg::buffer::borrowed(got));
  ASSERT_EQ(m.num_objects(), objs.size());
  for (std::size_t i = 0; i < objs.size(); ++i) {
    if (i == 1) continue;  // lossy simple_packing
    EXPECT_EQ(to_bytes(m.object(i).bytes()), objs[i].data) << "object " << i;
  }
  EXPECT_EQ(m.get_metadata().get_string_at(1, "from"), "child");
  EXPECT_NO_THROW(tg::verify_hashes(got));
  EXPECT_EQ(got, stream_unseekable(meta, objs));
}

}  // namespace

// The streaming encoder's errors (spec 01 §18, spec 02 §10, §13): options
// and metadata refused at construction, preceder rules, rejected objects
// that write nothing and keep the encoder usable, use after finish, failing
// streams and descriptors, closed pipes, and moves.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "streaming_encoder_support.hpp"

namespace {

using namespace tgtest::streaming;
using tgtest::bytes;

// ---- errors ---------------------------------------------------------------------------------

tg::data_object_descriptor f32(std::uint64_t n) {
  return tg::data_object_descriptor::contiguous(dtype::float32, {n});
}

TEST(StreamingEncoderErrors, HeaderAndBothAggregatePoliciesAtConstruction) {
  for (auto policy : {tg::aggregate_hash_policy::header, tg::aggregate_hash_policy::both}) {
    tg::encode_options o;
    o.aggregate_hash = policy;
    std::ostringstream os;
    EXPECT_THROW(tg::streaming_encoder(os, tg::global_metadata{}, o), tg::encoding_error);
    EXPECT_TRUE(os.str().empty());
    o.hash_algo = "none";
    EXPECT_THROW(tg::streaming_encoder(os, tg::global_metadata{}, o), tg::encoding_error);
  }
}

TEST(StreamingEncoderErrors, BadOptionsAtConstruction) {
  std::ostringstream os;
  tg::encode_options o;
  o.hash_algo = "md5";
  EXPECT_THROW(tg::streaming_encoder(os, tg::global_metadata{}, o), tg::invalid_arg_error);
  o = {};
  o.nan_mask_method = "gzip";
  EXPECT_THROW(tg::streaming_encoder(os, tg::global_metadata{}, o), tg::invalid_arg_error);
  EXPECT_TRUE(os.str().empty());
}

TEST(StreamingEncoderErrors, ClientReservedInConstructorMetadata) {
  std::ostringstream os;
  tg::global_metadata m;
  m.reserved.set("encoder", "me");
  EXPECT_THROW(tg::streaming_encoder(os, m), tg::metadata_error);
  tg::global_metadata b;
  b.base.push_back(cbor::value::make_map({{"_reserved_", cbor::value::make_map()}}));
  EXPECT_THROW(tg::streaming_encoder(os, b), tg::metadata_error);
  tg::global_metadata nm;
  nm.base.push_back(cbor::value(3));
  EXPECT_THROW(tg::streaming_encoder(os, nm), tg::metadata_error);
  EXPECT_THROW(tg::streaming_encoder(os, std::string(R"({"_reserved_": {"x": 1}})")), tg::metadata_error);
  EXPECT_THROW(tg::streaming_encoder(os, std::string(R"({"base": [{"_reserved_": {}}]})")),
               tg::metadata_error);
  EXPECT_TRUE(os.str().empty());
  // Nested `_reserved_` deeper inside an entry is the caller's business.
  tg::global_metadata deep;
  deep.base.push_back(cbor::value::make_map({{"x", cbor::value::make_map({{"_reserved_", 1}})}}));
  tg::streaming_encoder ok(os, deep);
  ok.write_object(f32(1), native_bytes(std::vector<float>{1}));
  EXPECT_NO_THROW(ok.finish());
}

TEST(StreamingEncoderErrors, JsonMetadata) {
  std::ostringstream os;
  EXPECT_THROW(tg::streaming_encoder(os, std::string("{not json")), tg::metadata_error);
  EXPECT_THROW(tg::streaming_encoder(os, std::string("[1, 2]")), tg::metadata_error);
  EXPECT_THROW(
      tg::streaming_encoder(os, std::string(R"({"descriptors": [{"type": "ntensor", "ndim": 0, "shape": [],
          "strides": [], "dtype": "uint8", "encoding": "none", "filter": "none", "compression": "none"}]})")),
      tg::metadata_error);
  EXPECT_TRUE(os.str().empty());
}

TEST(StreamingEncoderErrors, PrecederRules) {
  std::ostringstream os;
  tg::streaming_encoder enc(os, tg::global_metadata{}, fixed_options());
  const bytes v = native_bytes(std::vector<float>{1, 2});
  EXPECT_THROW(enc.write_preceder(cbor::value::make_map({{"_reserved_", cbor::value::make_map()}})),
               tg::metadata_error);
  EXPECT_THROW(enc.write_preceder(cbor::value(cbor::array{})), tg::metadata_error);
  EXPECT_THROW(enc.write_preceder(cbor::value(cbor::map{{cbor::value(1), cbor::value(2)}})),
               tg::metadata_error);
  EXPECT_THROW(enc.write_preceder("[1]"), tg::metadata_error);
  EXPECT_THROW(enc.write_preceder("{oops"), tg::metadata_error);
  EXPECT_THROW(enc.write_preceder(R"({"_reserved_": {"tensor": 1}})"), tg::metadata_error);
  const std::uint64_t before = enc.bytes_written();
  EXPECT_EQ(os.str().size(), before);  // rejected preceders wrote nothing

  enc.write_preceder(cbor::value::make_map({{"k", 1}}));
  // Two in a row.
  EXPECT_THROW(enc.write_preceder(cbor::value::make_map({{"k", 2}})), tg::framing_error);
  // Pending at finish: framing error, and nothing written by finish.
  const std::uint64_t pending = enc.bytes_written();
  EXPECT_THROW(enc.finish(), tg::framing_error);
  EXPECT_EQ(enc.bytes_written(), pending);
  // Both leave the encoder usable: the object completes the pair.
  enc.write_object(f32(2), v);
  enc.write_preceder(cbor::value::make_map({{"k", 3}}));
  enc.write_object(f32(2), v);
  enc.finish();
  const bytes s = str_bytes(os.str());
  std::vector<std::uint16_t> types;
  for (const auto& f : tgtest::wire_frames(s)) types.push_back(f.type);
  EXPECT_EQ(types, (std::vector<std::uint16_t>{1, 8, 9, 8, 9, 7, 5, 6}));
  const tg::message m = tg::decode(tg::buffer::borrowed(s));
  EXPECT_EQ(m.get_metadata().get_int_at(0, "k"), 1);
  EXPECT_EQ(m.get_metadata().get_int_at(1, "k"), 3);
}

TEST(StreamingEncoderErrors, BaseEntriesBeyondObjectCount) {
  // The reference truncates silently; this encoder refuses (spec 01 §18),
  // before writing the footer, and stays usable.
  std::ostringstream os;
  tg::streaming_encoder enc(os, meta_with_base(2), fixed_options());
  enc.write_object(f32(1), native_bytes(std::vector<float>{1}));
  const std::uint64_t before = enc.bytes_written();
  EXPECT_THROW(enc.finish(), tg::metadata_error);
  EXPECT_EQ(enc.bytes_written(), before);
  EXPECT_EQ(os.str().size(), before);
  enc.write_object(f32(1), native_bytes(std::vector<float>{2}));
  enc.finish();
  const bytes s = str_bytes(os.str());
  const tg::message m = tg::decode(tg::buffer::borrowed(s));
  EXPECT_EQ(m.num_objects(), 2u);
  EXPECT_EQ(m.get_metadata().get_string_at(1, "name"), "object 1");
}

TEST(StreamingEncoderErrors, RejectedObjectsWriteNothingAndKeepTheEncoderUsable) {
  std::ostringstream os;
  tg::streaming_encoder enc(os, tg::global_metadata{}, fixed_options());
  std::vector<float> nan(100000, 1.0f);  // the NaN sits in a late block
  nan[99000] = std::numeric_limits<float>::quiet_NaN();
  const std::uint64_t before = enc.bytes_written();
  try {
    enc.write_object(f32(nan.size()), native_bytes(nan));
    ADD_FAILURE() << "NaN accepted";
  } catch (const tg::encoding_error& e) {
    EXPECT_NE(std::string(e.what()).find("99000"), std::string::npos) << e.what();
  }
  std::vector<float> inf(10, 0.0f);
  inf[2] = -std::numeric_limits<float>::infinity();
  EXPECT_THROW(enc.write_object(f32(10), native_bytes(inf)), tg::encoding_error);
  // The same strict message as buffered mode.
  const bytes inf_bytes = native_bytes(inf);
  const tg::object_input in{f32(10), inf_bytes};
  std::string buffered_text;
  std::string streaming_text;
  try {
    (void)tg::encode({}, std::span(&in, 1));
  } catch (const tg::encoding_error& e) {
    buffered_text = e.what();
  }
  try {
    enc.write_object(f32(10), inf_bytes);
  } catch (const tg::encoding_error& e) {
    streaming_text = e.what();
  }
  EXPECT_FALSE(buffered_text.empty());
  EXPECT_EQ(streaming_text, buffered_text);
  tg::data_object_descriptor bad = f32(4);
  bad.ndim = 2;
  EXPECT_THROW(enc.write_object(bad, native_bytes(std::vector<float>(4))), tg::metadata_error);
  EXPECT_THROW(enc.write_object(f32(4), native_bytes(std::vector<float>(3))), tg::metadata_error);
  tg::data_object_descriptor unknown = f32(4);
  unknown.compression = "brotli";
  EXPECT_THROW(enc.write_object(unknown, native_bytes(std::vector<float>(4))), tg::encoding_error);
  EXPECT_THROW(enc.write_object(R"({"type": "ntensor"})", nullptr, 0), tg::metadata_error);
  EXPECT_THROW(enc.write_object("not json", nullptr, 0), tg::metadata_error);
  EXPECT_THROW(
      enc.write_object(R"({"type": "ntensor", "ndim": 1, "shape": [1], "strides": [1], "dtype": "uint8",
                           "encoding": "none", "filter": "none", "compression": "none"})",
                       nullptr, 1),
      tg::invalid_arg_error);
  EXPECT_EQ(enc.object_count(), 0u);
  EXPECT_EQ(enc.bytes_written(), before);
  EXPECT_EQ(os.str().size(), before);
  enc.write_object(f32(3), native_bytes(std::vector<float>{1, 2, 3}));
  enc.finish();
  EXPECT_EQ(tg::decode(tg::buffer::borrowed(str_bytes(os.str()))).num_objects(), 1u);
}

TEST(StreamingEncoderErrors, UseAfterFinish) {
  std::ostringstream os;
  tg::streaming_encoder enc(os, tg::global_metadata{});
  enc.finish();
  const std::size_t size = os.str().size();
  EXPECT_THROW(enc.finish(), tg::invalid_arg_error);
  EXPECT_THROW(enc.write_object(f32(1), native_bytes(std::vector<float>{1})), tg::invalid_arg_error);
  EXPECT_THROW(enc.write_object_pre_encoded(f32(1), native_bytes(std::vector<float>{1})),
               tg::invalid_arg_error);
  EXPECT_THROW(enc.write_object("{}", nullptr, 0), tg::invalid_arg_error);
  EXPECT_THROW(enc.write_preceder(cbor::value::make_map()), tg::invalid_arg_error);
  EXPECT_THROW(enc.write_preceder("{}"), tg::invalid_arg_error);
  EXPECT_EQ(os.str().size(), size);
  EXPECT_EQ(enc.object_count(), 0u);
}

TEST(StreamingEncoderErrors, FailedStreamIsAnIoErrorAndPoisonsTheEncoder) {
  // Fails at construction.
  {
    std::ostringstream os;
    os.setstate(std::ios::badbit);
    EXPECT_THROW(tg::streaming_encoder(os, tg::global_metadata{}), tg::io_error);
  }
  // Fails in the middle of an object.
  unseekable_buf buf;
  buf.limit = 1000;
  std::ostream os(&buf);
  tg::streaming_encoder enc(os, tg::global_metadata{});
  EXPECT_THROW(enc.write_object(f32(1000), native_bytes(std::vector<float>(1000, 1.0f))), tg::io_error);
  EXPECT_EQ(enc.object_count(), 0u);
  try {
    enc.write_object(f32(1), native_bytes(std::vector<float>{1}));
    ADD_FAILURE() << "write after an I/O failure accepted";
  } catch (const tg::invalid_arg_error& e) {
    EXPECT_NE(std::string(e.what()).find("earlier failure"), std::string::npos) << e.what();
  }
  EXPECT_THROW(enc.finish(), tg::invalid_arg_error);
  // A stream configured to throw: its exception becomes an io_error.
  unseekable_buf small;
  small.limit = 100;
  std::ostream throwing(&small);
  throwing.exceptions(std::ios::badbit | std::ios::failbit);
  EXPECT_THROW(tg::streaming_encoder(throwing, meta_with_base(3)), tg::io_error);
}

TEST(StreamingEncoderErrors, BadFileDescriptors) {
  EXPECT_THROW((void)tg::streaming_encoder::to_fd(-1, tg::global_metadata{}), tg::io_error);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  EXPECT_THROW((void)tg::streaming_encoder::to_fd(fds[0], tg::global_metadata{}), tg::io_error);  // read end
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST(StreamingEncoderErrors, ClosedPipeIsAnIoError) {
  // In a child, so that ignoring SIGPIPE does not leak into the test
  // process. The read end is closed before the fork: no process holds it.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[0]);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::signal(SIGPIPE, SIG_IGN);
    int code = 2;
    try {
      (void)tg::streaming_encoder::to_fd(fds[1], tg::global_metadata{});
    } catch (const tg::io_error& e) {
      code = std::string(e.what()).find("file descriptor") != std::string::npos ? 0 : 3;
    } catch (...) {
      code = 4;
    }
    ::_exit(code);
  }
  ::close(fds[1]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(StreamingEncoderErrors, MovedEncoderKeepsWorking) {
  std::ostringstream os;
  tg::streaming_encoder a(os, tg::global_metadata{}, fixed_options());
  a.write_object(f32(1), native_bytes(std::vector<float>{1}));
  tg::streaming_encoder b = std::move(a);
  b.write_object(f32(1), native_bytes(std::vector<float>{2}));
  EXPECT_EQ(b.object_count(), 2u);
  b.finish();
  EXPECT_EQ(tg::decode(tg::buffer::borrowed(str_bytes(os.str()))).num_objects(), 2u);
}

}  // namespace

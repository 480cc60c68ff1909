// The rewriting subcommands of the `tensogram` binary — get, set, copy,
// merge, split, reshuffle (spec 04 §A.5) — and the progress bar. Expected
// texts are written out from the spec and the fixtures' README; object
// preservation is checked bit for bit on the wire (descriptor and stored
// payload) and after decoding.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <tensogram.hpp>
#include <tensogram/cbor/codec.hpp>
#include <tensogram/format/preamble.hpp>
#include <tensogram/format/wire.hpp>
#include <tensogram/io/file.hpp>

#include "global_options.hpp"
#include "message_edit.hpp"
#include "progress.hpp"
#include "test_support.hpp"

namespace tensogram::cli::test {
namespace {

namespace fs = std::filesystem;

void expect_success(const run_result& r, const std::string& out) {
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, out);
  EXPECT_EQ(r.err, "");
}

void expect_runtime_error(const run_result& r, const std::string& err, const std::string& out = "") {
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, out);
  EXPECT_EQ(r.err, err);
}

void expect_usage_error(const run_result& r) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
}

std::vector<std::byte> concat(const std::vector<std::vector<std::byte>>& parts) {
  std::vector<std::byte> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// Each message's raw bytes, in file order.
std::vector<std::vector<std::byte>> messages_of(const fs::path& path) {
  tensogram::file f = tensogram::file::open(path);
  std::vector<std::vector<std::byte>> out;
  for (std::size_t i = 0; i < f.message_count(); ++i) {
    const buffer b = f.message_bytes(i);
    out.emplace_back(b.bytes().begin(), b.bytes().end());
  }
  return out;
}

global_metadata full_metadata(const std::vector<std::byte>& msg) {
  return decode(buffer::borrowed(msg)).global();
}

std::vector<std::string> dir_listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string text_at(const global_metadata& g, std::size_t i, std::string_view path) {
  const cbor::value* v = g.get_at(i, path);
  if (v == nullptr) return "<missing>";
  if (const std::string* s = v->as_text()) return *s;
  return "<not text: " + display_text(*v) + ">";
}

std::string extra_text(const global_metadata& g, std::string_view path) {
  const cbor::value* v = lookup_path(g.extra, path);
  if (v == nullptr) return "<missing>";
  if (const std::string* s = v->as_text()) return *s;
  return "<not text: " + display_text(*v) + ">";
}

// One stored object (descriptor + payload bytes as on the wire) and its
// decoded bytes, for bit-for-bit comparisons across commands.
struct object_image {
  data_object_descriptor descriptor;
  std::vector<std::byte> stored;
  std::vector<std::byte> decoded;
};

std::vector<object_image> objects_of(const std::vector<std::byte>& msg) {
  const buffer b = buffer::borrowed(msg);
  const wire_message wm = read_wire_message(b, 0);
  const message decoded = decode(b);
  std::vector<object_image> out;
  for (std::size_t k = 0; k < wm.objects.size(); ++k) {
    const auto d = decoded.object(k).bytes();
    out.push_back({wm.objects[k].descriptor,
                   {wm.objects[k].payload.begin(), wm.objects[k].payload.end()},
                   {d.begin(), d.end()}});
  }
  return out;
}

std::vector<object_image> objects_of_file(const fs::path& path) {
  std::vector<object_image> out;
  for (const auto& m : messages_of(path)) {
    auto objs = objects_of(m);
    out.insert(out.end(), objs.begin(), objs.end());
  }
  return out;
}

void expect_same_objects(const std::vector<object_image>& a, const std::vector<object_image>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t k = 0; k < a.size(); ++k) {
    // Canonical bytes: map entry order does not matter.
    EXPECT_EQ(cbor::encode(a[k].descriptor.to_cbor()), cbor::encode(b[k].descriptor.to_cbor()))
        << "object " << k;
    EXPECT_TRUE(a[k].stored == b[k].stored) << "object " << k;
    EXPECT_TRUE(a[k].decoded == b[k].decoded) << "object " << k;
  }
}

void expect_all_hashed(const fs::path& path) {
  for (const auto& m : messages_of(path)) EXPECT_NO_THROW(verify_hashes(m)) << path;
}

// A scratch copy of a fixture, so commands that could write can be checked
// to leave their input alone.
fs::path copy_fixture(const scratch_dir& dir, const std::string& name) {
  const fs::path p = dir / name;
  fs::copy_file(fixture(name), p);
  return p;
}

// ---- a file written here with lossy, compressed and masked objects ----------

std::vector<std::byte> be_float32(const std::vector<float>& v) {
  std::vector<std::byte> out(v.size() * 4);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto u = std::bit_cast<std::uint32_t>(v[i]);
    for (int b = 0; b < 4; ++b) out[i * 4 + b] = static_cast<std::byte>((u >> (8 * (3 - b))) & 0xFF);
  }
  return out;
}

template <typename T>
std::span<const std::byte> raw(const std::vector<T>& v) {
  return std::as_bytes(std::span(v));
}

// Message 0: simple_packing + szip float64 (lossy), zstd float32 stored
// big-endian and zfp float64 (lossy). Message 1: a float64 with NaNs (a NaN mask) and a
// shuffle + lz4 int16. Every message has base entries and `_extra_`.
std::vector<std::byte> codec_file() {
  std::vector<double> smooth(1000);
  for (std::size_t i = 0; i < smooth.size(); ++i) smooth[i] = 280.0 + 15.0 * std::sin(0.01 * double(i));
  std::vector<float> f32(64 * 8);
  for (std::size_t i = 0; i < f32.size(); ++i) f32[i] = static_cast<float>(i % 37) * 0.25f;
  const std::vector<std::byte> f32_be = be_float32(f32);
  std::vector<double> with_nan(50);
  for (std::size_t i = 0; i < with_nan.size(); ++i) {
    with_nan[i] = i % 7 == 3 ? std::numeric_limits<double>::quiet_NaN() : double(i) / 3.0;
  }
  std::vector<std::int16_t> i16(12);
  for (std::size_t i = 0; i < i16.size(); ++i) i16[i] = static_cast<std::int16_t>(1000 - 250 * int(i));

  data_object_descriptor sp = data_object_descriptor::contiguous(dtype::float64, {1000});
  sp.encoding = "simple_packing";
  sp.compression = "szip";
  sp.params.set("sp_bits_per_value", 16);
  sp.params.set("szip_rsi", 128);
  sp.params.set("szip_block_size", 16);
  sp.params.set("szip_flags", 8);
  data_object_descriptor zs = data_object_descriptor::contiguous(dtype::float32, {64, 8}, byte_order::big);
  zs.compression = "zstd";
  zs.params.set("zstd_level", 5);
  data_object_descriptor zfp = data_object_descriptor::contiguous(dtype::float64, {1000});
  zfp.compression = "zfp";
  zfp.params.set("zfp_mode", "fixed_precision");
  zfp.params.set("zfp_precision", 20);
  data_object_descriptor nan = data_object_descriptor::contiguous(dtype::float64, {50});
  data_object_descriptor sh = data_object_descriptor::contiguous(dtype::int16, {3, 4});
  sh.filter = "shuffle";
  sh.params.set("shuffle_element_size", 2);
  sh.compression = "lz4";

  global_metadata m0;
  m0.base = {cbor::value::make_map({{"name", "sp"}}), cbor::value::make_map({{"name", "zstd"}}),
             cbor::value::make_map({{"name", "zfp"}})};
  m0.extra.set("campaign", "rt");
  global_metadata m1;
  m1.base = {cbor::value::make_map({{"name", "nan"}}), cbor::value::make_map({{"name", "lz4"}})};
  m1.extra.set("campaign", "rt");
  m1.extra.set("second", 2);

  encode_options opts;
  opts.allow_nan = true;
  const std::vector<object_input> o0{{sp, raw(smooth)}, {zs, f32_be}, {zfp, raw(smooth)}};
  const std::vector<object_input> o1{{nan, raw(with_nan)}, {sh, raw(i16)}};
  return concat({encode(m0, o0, opts), encode(m1, o1, opts)});
}

// ---- get -------------------------------------------------------------------

TEST(CliGet, PrintsValuesJoinedBySpace) {
  expect_success(
      run_cli({"get", "-p", "mars.class,mars.step,mars.type,version", fixture("mars_metadata.tgm")}),
      "od 12 fc 3\n");
  // Files in order, then messages in order; keys trimmed (§A.4).
  expect_success(run_cli({"get", "-p", " product , parameter ", fixture("multi_message.tgm"),
                          fixture("multi_object.tgm")}),
                 "efi pressure\nefi pressure\nefi temperature\n");
  // First base entry with the key wins, then `_extra_` (§A.2).
  expect_success(run_cli({"get", "-p", "mars.class,source,extra.source,only0,ratio,levels,big,count,flag",
                          fixture("metadata_parity.tgm")}),
                 "od parity-fixture parity-fixture x 0.5 [1000,850,500] 2147483648 -5 true\n");
  // A streaming message's header metadata is what `get` reads.
  expect_success(run_cli({"get", "-p", "fixture.msg_index", fixture("ten-msg-footer.tgm")}),
                 "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n");
  expect_success(run_cli({"get", "-p", "x"}), "");
}

TEST(CliGet, MissingKeyFailsAndKeepsEarlierLines) {
  expect_runtime_error(
      run_cli({"get", "-p", "mars.step", fixture("mars_metadata.tgm"), fixture("simple_f32.tgm")}),
      "error: key not found: mars.step\n", "12\n");
  // The second key of the first message is missing: nothing printed.
  expect_runtime_error(run_cli({"get", "-p", "product,shape", fixture("simple_f32.tgm")}),
                       "error: key not found: shape\n");
  expect_runtime_error(run_cli({"get", "-p", "_reserved_.tensor", fixture("simple_f32.tgm")}),
                       "error: key not found: _reserved_.tensor\n");
  // The where-clause filters first: a message it skips is not checked.
  expect_success(run_cli({"get", "-w", "mars.class=od", "-p", "mars.step", fixture("mars_metadata.tgm"),
                          fixture("simple_f32.tgm")}),
                 "12\n");
}

TEST(CliGet, WhereClauses) {
  const std::string ten = fixture("ten-msg.tgm");
  const std::vector<std::string> get = {"get", "-p", "fixture.msg_index", "-w"};
  auto run = [&](const std::string& where) {
    std::vector<std::string> args = get;
    args.push_back(where);
    args.push_back(ten);
    return run_cli(args);
  };
  expect_success(run("fixture.msg_index=2/5/7"), "2\n5\n7\n");
  expect_success(run("fixture.msg_index!=0/1/2/3/4/5/6"), "7\n8\n9\n");
  expect_success(run("fixture.msg_index=02"), "");                   // text comparison
  expect_success(run("nope=1"), "");                                 // missing key fails `=`
  expect_success(run("nope!=1"), "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n");  // and passes `!=`
  expect_success(run("fixture.msg_index="), "");
  expect_runtime_error(run("fixture.msg_index"),
                       "error: invalid where clause: invalid where-clause: fixture.msg_index (expected "
                       "key=value or key!=value)\n");
}

TEST(CliGet, UsageErrors) {
  expect_usage_error(run_cli({"get", fixture("simple_f32.tgm")}));  // -p required
  expect_usage_error(run_cli({"get", "-p"}));
  expect_usage_error(run_cli({"get", "-p", "a", "--bogus"}));
  expect_runtime_error(run_cli({"get", "-p", "a", "/nonexistent/x.tgm"}),
                       run_cli({"info", "/nonexistent/x.tgm"}).err);
}

// ---- set -------------------------------------------------------------------

TEST(CliSet, WritesTextValuesIntoEveryBaseEntry) {
  const scratch_dir dir;
  const fs::path in = copy_fixture(dir, "mars_metadata.tgm");
  const std::vector<std::byte> before = read_file(in);
  expect_success(run_cli({"set", "-s", "mars.class=rd, mars.step = 24 ,mars.new.deep=x", in.string(),
                          (dir / "out.tgm").string()}),
                 "");
  EXPECT_EQ(read_file(in), before);
  const auto out = messages_of(dir / "out.tgm");
  ASSERT_EQ(out.size(), 1u);
  const global_metadata g = full_metadata(out[0]);
  EXPECT_EQ(text_at(g, 0, "mars.class"), "rd");
  EXPECT_EQ(text_at(g, 0, "mars.step"), "24");  // stored as text, trimmed
  EXPECT_EQ(text_at(g, 0, "mars.type"), "fc");  // untouched
  EXPECT_EQ(text_at(g, 0, "mars.new.deep"), "x");
  // `_reserved_` regenerated by this encoder.
  const cbor::value* name = lookup_path(g.reserved, "encoder.name");
  ASSERT_NE(name, nullptr);
  EXPECT_EQ(*name->as_text(), "tensogram-cpp");
  expect_same_objects(objects_of(before), objects_of(out[0]));
  expect_all_hashed(dir / "out.tgm");
  expect_success(run_cli({"get", "-p", "mars.class,mars.step", (dir / "out.tgm").string()}), "rd 24\n");
}

TEST(CliSet, HashesRewrittenMessagesEvenFromUnhashedInput) {
  // single-msg.tgm has no per-frame hash bits (README, legacy family); the
  // reference's `set` writes no hashes at all, this one always does.
  const scratch_dir dir;
  const fs::path out = dir / "out.tgm";
  expect_success(run_cli({"set", "-s", "a=b", fixture("single-msg.tgm"), out.string()}), "");
  expect_all_hashed(out);
  expect_same_objects(objects_of_file(fixture("single-msg.tgm")), objects_of_file(out));
}

TEST(CliSet, WhereCopiesOtherMessagesByteForByte) {
  const scratch_dir dir;
  const fs::path out = dir / "out.tgm";
  expect_success(
      run_cli({"set", "-s", "tag=three", "-w", "fixture.msg_index=3", fixture("ten-msg.tgm"), out.string()}),
      "");
  const auto in_msgs = messages_of(fixture("ten-msg.tgm"));
  const auto out_msgs = messages_of(out);
  ASSERT_EQ(out_msgs.size(), 10u);
  for (std::size_t i = 0; i < 10; ++i) {
    if (i == 3) {
      EXPECT_NE(out_msgs[i], in_msgs[i]);
      EXPECT_EQ(text_at(full_metadata(out_msgs[i]), 0, "tag"), "three");
      expect_same_objects(objects_of(in_msgs[i]), objects_of(out_msgs[i]));
    } else {
      EXPECT_EQ(out_msgs[i], in_msgs[i]) << i;
    }
  }
}

TEST(CliSet, ObjectExtraAndBasePaths) {
  const scratch_dir dir;
  const fs::path out = dir / "out.tgm";
  expect_success(
      run_cli({"set", "-s", "objects.1.units=K,objects.+0.nested.key=v,extra.a.b=1,_extra_.c=2,tag=t",
               fixture("metadata_parity.tgm"), out.string()}),
      "");
  const auto msgs = messages_of(out);
  ASSERT_EQ(msgs.size(), 1u);
  const message m = decode(buffer::borrowed(msgs[0]));
  // objects.N goes into the descriptor's parameters, not into base[N].
  const cbor::value* units = m.object(1).descriptor().params.find("units");
  ASSERT_NE(units, nullptr);
  EXPECT_EQ(*units->as_text(), "K");
  EXPECT_EQ(m.object(0).descriptor().params.find("units"), nullptr);
  const cbor::value* nested = lookup_path(m.object(0).descriptor().params, "nested.key");
  ASSERT_NE(nested, nullptr);
  EXPECT_EQ(*nested->as_text(), "v");
  const global_metadata& g = m.global();
  EXPECT_EQ(g.get_at(1, "units"), nullptr);
  EXPECT_EQ(extra_text(g, "a.b"), "1");
  EXPECT_EQ(extra_text(g, "c"), "2");
  EXPECT_EQ(extra_text(g, "source"), "parity-fixture");
  EXPECT_EQ(text_at(g, 0, "tag"), "t");
  EXPECT_EQ(text_at(g, 1, "tag"), "t");
  EXPECT_EQ(extra_text(g, "tag"), "<missing>");
  // Other keys keep their types.
  ASSERT_NE(g.get_at(0, "count"), nullptr);
  EXPECT_EQ(display_text(*g.get_at(0, "count")), "-5");
  // Payloads untouched.
  const auto before = objects_of(read_file(fixture("metadata_parity.tgm")));
  const auto after = objects_of(msgs[0]);
  ASSERT_EQ(after.size(), 2u);
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(after[k].stored, before[k].stored);
    EXPECT_EQ(after[k].decoded, before[k].decoded);
  }
}

TEST(CliSet, NonMapInTheWayIsReplaced) {
  const scratch_dir dir;
  const fs::path out = dir / "out.tgm";
  expect_success(run_cli({"set", "-s", "shortName.sub=1", fixture("metadata_parity.tgm"), out.string()}), "");
  const global_metadata g = full_metadata(read_file(out));
  EXPECT_EQ(text_at(g, 0, "shortName.sub"), "1");
  EXPECT_EQ(text_at(g, 1, "shortName.sub"), "1");
}

TEST(CliSet, ZeroObjectMessageGetsKeyInExtra) {
  const scratch_dir dir;
  const fs::path in = dir / "empty.tgm";
  write_file(in, encode(global_metadata{}, {}));
  const fs::path out = dir / "out.tgm";
  expect_success(run_cli({"set", "-s", "foo=bar", in.string(), out.string()}), "");
  const global_metadata g = full_metadata(read_file(out));
  EXPECT_TRUE(g.base.empty());
  EXPECT_EQ(extra_text(g, "foo"), "bar");
  expect_runtime_error(run_cli({"set", "-s", "objects.0.x=1", in.string(), out.string()}),
                       "error: object index out of range in key: objects.0.x\n");
}

TEST(CliSet, ForbiddenKeysWriteNothing) {
  const scratch_dir dir;
  const fs::path out = dir / "out.tgm";
  for (const char* leaf :
       {"shape", "strides", "dtype", "ndim", "type", "encoding", "filter", "compression", "hash", "szip_rsi",
        "szip_block_size", "szip_flags", "szip_block_offsets", "sp_reference_value", "sp_binary_scale_factor",
        "sp_decimal_scale_factor", "sp_bits_per_value", "shuffle_element_size"}) {
    for (const std::string& key :
         {std::string(leaf), "mars." + std::string(leaf), "objects.0." + std::string(leaf)}) {
      expect_runtime_error(
          run_cli({"set", "-s", "ok=1," + key + "=1", fixture("simple_f32.tgm"), out.string()}),
          "error: cannot modify immutable key: " + key + "\n");
    }
  }
  // Parameters under objects.N may not shadow the descriptor's fixed fields
  // (this implementation; the reference writes a duplicate key).
  for (const char* key : {"objects.0.byte_order", "objects.0.masks.nan.method", "objects.0.shape.x"}) {
    expect_runtime_error(
        run_cli({"set", "-s", std::string(key) + "=1", fixture("simple_f32.tgm"), out.string()}),
        "error: cannot modify immutable key: " + std::string(key) + "\n");
  }
  expect_runtime_error(
      run_cli({"set", "-s", "_reserved_.x=1", fixture("simple_f32.tgm"), out.string()}),
      "error: cannot modify '_reserved_' \xE2\x80\x94 this namespace is managed by the library\n");
  expect_runtime_error(run_cli({"set", "-s", "a=1,b", fixture("simple_f32.tgm"), out.string()}),
                       "error: invalid set value: b\n");
  expect_runtime_error(run_cli({"set", "-s", "a=1,", fixture("simple_f32.tgm"), out.string()}),
                       "error: invalid set value: \n");
  // Checked before the input is opened.
  expect_runtime_error(run_cli({"set", "-s", "shape=1", "/nonexistent/x.tgm", out.string()}),
                       "error: cannot modify immutable key: shape\n");
  expect_runtime_error(run_cli({"set", "-s", "a=1", "-w", "bad", fixture("simple_f32.tgm"), out.string()}),
                       "error: invalid where clause: invalid where-clause: bad (expected key=value or "
                       "key!=value)\n");
  EXPECT_TRUE(dir_listing(dir.path()).empty());
}

TEST(CliSet, MalformedObjectAndExtraKeys) {
  const scratch_dir dir;
  const fs::path out = dir / "out.tgm";
  const std::string in = fixture("simple_f32.tgm");
  expect_runtime_error(run_cli({"set", "-s", "objects.0=1", in, out.string()}),
                       "error: invalid object key: objects.0\n");
  expect_runtime_error(run_cli({"set", "-s", "objects.x.y=1", in, out.string()}),
                       "error: invalid object index in key: objects.x.y\n");
  expect_runtime_error(run_cli({"set", "-s", "objects.-1.y=1", in, out.string()}),
                       "error: invalid object index in key: objects.-1.y\n");
  expect_runtime_error(run_cli({"set", "-s", "objects.1.y=1", in, out.string()}),
                       "error: object index out of range in key: objects.1.y\n");
  expect_runtime_error(run_cli({"set", "-s", "extra=1", in, out.string()}),
                       "error: invalid extra key: extra (expected extra.key)\n");
  // These are found per message: no message matches, no error.
  expect_success(run_cli({"set", "-s", "objects.9.y=1", "-w", "product=none", in, out.string()}), "");
  EXPECT_EQ(read_file(out), read_file(in));
}

TEST(CliSet, FailureMidwayLeavesOutputUntouched) {
  const scratch_dir dir;
  // Message 0 has three objects, message 1 one: objects.2 fails at message 1.
  const fs::path in = dir / "in.tgm";
  write_file(in, concat({read_file(fixture("multi_object.tgm")), read_file(fixture("simple_f32.tgm"))}));
  const std::vector<std::byte> input = read_file(in);
  const fs::path out = dir / "out.tgm";
  expect_runtime_error(run_cli({"set", "-s", "objects.2.x=1", in.string(), out.string()}),
                       "error: object index out of range in key: objects.2.x\n");
  EXPECT_FALSE(fs::exists(out));
  write_file(out, bytes_of("previous content"));
  expect_runtime_error(run_cli({"set", "-s", "objects.2.x=1", in.string(), out.string()}),
                       "error: object index out of range in key: objects.2.x\n");
  EXPECT_EQ(read_file(out), bytes_of("previous content"));
  EXPECT_EQ(read_file(in), input);
  EXPECT_EQ(dir_listing(dir.path()), (std::vector<std::string>{"in.tgm", "out.tgm"}));
}

TEST(CliSet, OutputMayBeInput) {
  const scratch_dir dir;
  const fs::path f = copy_fixture(dir, "multi_message.tgm");
  const auto before = objects_of_file(f);
  expect_success(run_cli({"set", "-s", "product=new", f.string(), f.string()}), "");
  expect_success(run_cli({"get", "-p", "product,parameter", f.string()}), "new pressure\nnew pressure\n");
  expect_same_objects(before, objects_of_file(f));
  EXPECT_EQ(dir_listing(dir.path()), (std::vector<std::string>{"multi_message.tgm"}));
}

TEST(CliSet, DecodingParameterChangeIsRefused) {
  // zfp's mode steers decoding: the values would change, so the rewrite is
  // refused. (zfp sits behind `encoding: "none"`, so the object is
  // re-encoded and checked, see message_edit.hpp.)
  const scratch_dir dir;
  std::vector<double> v(256);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::cos(0.05 * double(i));
  data_object_descriptor d = data_object_descriptor::contiguous(dtype::float64, {256});
  d.compression = "zfp";
  d.params.set("zfp_mode", "fixed_rate");
  d.params.set("zfp_rate", 16.0);
  d.params.set("zfp_tolerance", 0.5);
  const std::vector<object_input> objs{{d, raw(v)}};
  const fs::path in = dir / "zfp.tgm";
  write_file(in, encode(global_metadata{}, objs));
  const fs::path out = dir / "out.tgm";
  const run_result r = run_cli({"set", "-s", "objects.0.zfp_mode=fixed_accuracy", in.string(), out.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(
      r.err.rfind("error: cannot carry over data object 0 (encoding none, filter none, compression zfp) "
                  "unchanged: it has to be re-encoded, and re-encoding changes its values\n",
                  0),
      0u)
      << r.err;
  EXPECT_FALSE(fs::exists(out));
  // A parameter the decoder ignores is fine.
  expect_success(run_cli({"set", "-s", "objects.0.note=hello", in.string(), out.string()}), "");
  expect_same_objects(
      [&] {
        auto o = objects_of_file(in);
        o[0].descriptor.params.set("note", "hello");
        return o;
      }(),
      objects_of_file(out));

  // A stored-verbatim object (simple_packing) whose new parameter does not
  // parse: refused before anything is written.
  data_object_descriptor sp = data_object_descriptor::contiguous(dtype::float64, {256});
  sp.encoding = "simple_packing";
  sp.params.set("sp_bits_per_value", 12);
  sp.compression = "zstd";
  const std::vector<object_input> sp_objs{{sp, raw(v)}};
  const fs::path sp_in = dir / "sp.tgm";
  write_file(sp_in, encode(global_metadata{}, sp_objs));
  const run_result bad = run_cli({"set", "-s", "objects.0.zstd_level=high", sp_in.string(), out.string()});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.err.rfind("error: ", 0), 0u);
  expect_same_objects(
      [&] {
        auto o = objects_of_file(in);
        o[0].descriptor.params.set("note", "hello");
        return o;
      }(),
      objects_of_file(out));  // the earlier output is still there, unchanged
}

TEST(CliSet, UsageErrors) {
  expect_usage_error(run_cli({"set", fixture("simple_f32.tgm"), "out.tgm"}));    // -s required
  expect_usage_error(run_cli({"set", "-s", "a=1", fixture("simple_f32.tgm")}));  // OUTPUT missing
  expect_usage_error(run_cli({"set", "-s", "a=1"}));
}

// ---- copy ------------------------------------------------------------------

TEST(CliCopy, SingleOutputRawBytes) {
  const scratch_dir dir;
  const fs::path out = dir / "all.tgm";
  expect_success(run_cli({"copy", fixture("ten-msg.tgm"), out.string()}), "");
  EXPECT_EQ(read_file(out), read_file(fixture("ten-msg.tgm")));

  const auto in = messages_of(fixture("ten-msg.tgm"));
  expect_success(run_cli({"copy", "-w", "fixture.msg_index=1/8", fixture("ten-msg.tgm"), out.string()}), "");
  EXPECT_EQ(read_file(out), concat({in[1], in[8]}));  // truncated, then written

  // No match: an empty output.
  expect_success(run_cli({"copy", "-w", "fixture.msg_index=x", fixture("ten-msg.tgm"), out.string()}), "");
  EXPECT_TRUE(fs::exists(out));
  EXPECT_EQ(fs::file_size(out), 0u);

  // Streaming messages are copied as they are (total_length 0 included).
  expect_success(run_cli({"copy", fixture("streaming-tail.tgm"), out.string()}), "");
  EXPECT_EQ(read_file(out), read_file(fixture("streaming-tail.tgm")));
  EXPECT_EQ(dir_listing(dir.path()), (std::vector<std::string>{"all.tgm"}));
}

TEST(CliCopy, OutputMayBeInput) {
  const scratch_dir dir;
  const fs::path f = copy_fixture(dir, "ten-msg.tgm");
  const auto in = messages_of(f);
  expect_success(run_cli({"copy", "-w", "fixture.msg_index!=0/1/2/3/4/5/6", f.string(), f.string()}), "");
  EXPECT_EQ(read_file(f), concat({in[7], in[8], in[9]}));
}

TEST(CliCopy, TemplateFansOutAndAppends) {
  const scratch_dir dir;
  const auto in = messages_of(fixture("ten-msg.tgm"));
  const std::string templ = (dir / "m_[fixture.msg_index].tgm").string();
  expect_success(run_cli({"copy", "-w", "fixture.msg_index=0/1/2", fixture("ten-msg.tgm"), templ}), "");
  EXPECT_EQ(dir_listing(dir.path()), (std::vector<std::string>{"m_0.tgm", "m_1.tgm", "m_2.tgm"}));
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(read_file(dir / ("m_" + std::to_string(i) + ".tgm")), in[i]);
  // Running again appends: every file now holds its message twice.
  expect_success(run_cli({"copy", "-w", "fixture.msg_index=0/1/2", fixture("ten-msg.tgm"), templ}), "");
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(read_file(dir / ("m_" + std::to_string(i) + ".tgm")), concat({in[i], in[i]}));
  }
}

TEST(CliCopy, TemplateUnknownAndSeveralKeys) {
  const scratch_dir dir;
  // A missing key expands to `unknown`; all messages land in one file.
  expect_success(run_cli({"copy", fixture("multi_message.tgm"), (dir / "[nope].tgm").string()}), "");
  EXPECT_EQ(read_file(dir / "unknown.tgm"), read_file(fixture("multi_message.tgm")));
  expect_success(run_cli({"copy", fixture("mars_metadata.tgm"),
                          (dir / "[mars.class]_[mars.step]-[version].tgm").string()}),
                 "");
  EXPECT_EQ(read_file(dir / "od_12-3.tgm"), read_file(fixture("mars_metadata.tgm")));
  // An existing file keeps its content; new messages follow it.
  write_file(dir / "efi.tgm", read_file(fixture("simple_f32.tgm")));
  expect_success(run_cli({"copy", fixture("multi_message.tgm"), (dir / "[product].tgm").string()}), "");
  EXPECT_EQ(read_file(dir / "efi.tgm"),
            concat({read_file(fixture("simple_f32.tgm")), read_file(fixture("multi_message.tgm"))}));
}

TEST(CliCopy, TemplateDirectoriesAreNotCreated) {
  const scratch_dir dir;
  const run_result r = run_cli({"copy", fixture("simple_f32.tgm"), (dir / "sub/[product].tgm").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u);
  EXPECT_TRUE(dir_listing(dir.path()).empty());
}

TEST(CliCopy, TemplateExpansion) {
  global_metadata g;
  g.base.push_back(cbor::value::make_map({{"a", "x"}, {"b", 7}}));
  EXPECT_EQ(expand_key_template("[a]/[b].tgm", g), "x/7.tgm");
  EXPECT_EQ(expand_key_template("[a][c]", g), "xunknown");
  EXPECT_EQ(expand_key_template("p[a", g), "p[a");
  EXPECT_EQ(expand_key_template("[a]-[b", g), "x-[b");
  EXPECT_EQ(expand_key_template("[[a]]", g), "unknown]");
  EXPECT_TRUE(is_key_template("a]b["));
  EXPECT_FALSE(is_key_template("a[b"));
  EXPECT_FALSE(is_key_template("ab]"));
}

TEST(CliCopy, UsageErrors) {
  expect_usage_error(run_cli({"copy", fixture("simple_f32.tgm")}));
  expect_usage_error(run_cli({"copy"}));
  expect_usage_error(run_cli({"copy", "-w"}));
}

// ---- merge -----------------------------------------------------------------

// Two one-object files whose `_extra_` share key `k` with different values.
struct merge_inputs {
  scratch_dir dir;
  fs::path a = dir / "a.tgm";
  fs::path b = dir / "b.tgm";
  merge_inputs() {
    std::vector<float> v{1.0f, 2.0f};
    const data_object_descriptor d = data_object_descriptor::contiguous(dtype::float32, {2});
    const std::vector<object_input> objs{{d, raw(v)}};
    global_metadata ga;
    ga.base.push_back(cbor::value::make_map({{"param", "2t"}}));
    ga.extra.set("k", "a");
    ga.extra.set("same", 1);
    ga.extra.set("only_a", true);
    global_metadata gb;
    gb.base.push_back(cbor::value::make_map({{"param", "msl"}}));
    gb.extra.set("k", "b");
    gb.extra.set("same", 1);
    gb.extra.set("only_b", 2.5);
    write_file(a, encode(ga, objs));
    write_file(b, encode(gb, objs));
  }
};

TEST(CliMerge, ConcatenatesObjectsAndBaseEntries) {
  const scratch_dir dir;
  const fs::path out = dir / "m.tgm";
  expect_success(run_cli({"merge", "-o", out.string(), fixture("multi_message.tgm"),
                          fixture("multi_object.tgm"), fixture("metadata_parity.tgm")}),
                 "Merged 7 objects from 3 file(s) into " + out.string() + " (strategy: first)\n");
  const auto msgs = messages_of(out);
  ASSERT_EQ(msgs.size(), 1u);
  const global_metadata g = full_metadata(msgs[0]);
  ASSERT_EQ(g.base.size(), 7u);
  const std::vector<std::string> params = {"pressure", "pressure", "temperature", "pressure", "humidity"};
  for (std::size_t i = 0; i < params.size(); ++i) EXPECT_EQ(text_at(g, i, "parameter"), params[i]) << i;
  EXPECT_EQ(text_at(g, 5, "shortName"), "2t");
  EXPECT_EQ(text_at(g, 6, "shortName"), "msl");
  EXPECT_EQ(extra_text(g, "source"), "parity-fixture");
  std::vector<object_image> expected;
  for (const char* f : {"multi_message.tgm", "multi_object.tgm", "metadata_parity.tgm"}) {
    const auto o = objects_of_file(fixture(f));
    expected.insert(expected.end(), o.begin(), o.end());
  }
  expect_same_objects(expected, objects_of(msgs[0]));
  expect_all_hashed(out);
  // Header-indexed output.
  const format::preamble pre = format::read_preamble(msgs[0]);
  EXPECT_NE(pre.flags & format::message_flags::header_index, 0);
}

TEST(CliMerge, Strategies) {
  const merge_inputs in;
  const fs::path out = in.dir / "m.tgm";
  auto merged_extra = [&](const std::string& strategy) {
    const run_result r = run_cli({"merge", "-s", strategy, "-o", out.string(), in.a.string(), in.b.string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out,
              "Merged 2 objects from 2 file(s) into " + out.string() + " (strategy: " + strategy + ")\n");
    return full_metadata(read_file(out));
  };
  global_metadata g = merged_extra("first");
  EXPECT_EQ(extra_text(g, "k"), "a");
  EXPECT_NE(g.extra.find("only_a"), nullptr);
  EXPECT_NE(g.extra.find("only_b"), nullptr);
  EXPECT_EQ(text_at(g, 0, "param"), "2t");
  EXPECT_EQ(text_at(g, 1, "param"), "msl");
  g = merged_extra("last");
  EXPECT_EQ(extra_text(g, "k"), "b");
  EXPECT_NE(g.extra.find("only_a"), nullptr);
  // The default is `first`; --strategy is the long form.
  expect_success(run_cli({"merge", "-o", out.string(), in.a.string(), in.b.string()}),
                 "Merged 2 objects from 2 file(s) into " + out.string() + " (strategy: first)\n");
  expect_success(
      run_cli({"merge", "--strategy", "last", "--output", out.string(), in.b.string(), in.a.string()}),
      "Merged 2 objects from 2 file(s) into " + out.string() + " (strategy: last)\n");
  EXPECT_EQ(extra_text(full_metadata(read_file(out)), "k"), "a");
  // Equal values never conflict.
  expect_success(run_cli({"merge", "-s", "error", "-o", out.string(), in.a.string(), in.a.string()}),
                 "Merged 2 objects from 2 file(s) into " + out.string() + " (strategy: error)\n");
}

TEST(CliMerge, ConflictWritesNothing) {
  const merge_inputs in;
  const std::vector<std::byte> a = read_file(in.a);
  const fs::path out = in.dir / "m.tgm";
  expect_runtime_error(run_cli({"merge", "-s", "error", "-o", out.string(), in.a.string(), in.b.string()}),
                       "error: conflicting values for key 'k' (use --strategy first or last to resolve)\n");
  EXPECT_FALSE(fs::exists(out));
  write_file(out, bytes_of("keep me"));
  expect_runtime_error(run_cli({"merge", "-s", "error", "-o", out.string(), in.a.string(), in.b.string()}),
                       "error: conflicting values for key 'k' (use --strategy first or last to resolve)\n");
  EXPECT_EQ(read_file(out), bytes_of("keep me"));
  EXPECT_EQ(read_file(in.a), a);
  EXPECT_EQ(dir_listing(in.dir.path()), (std::vector<std::string>{"a.tgm", "b.tgm", "m.tgm"}));
}

TEST(CliMerge, Errors) {
  const scratch_dir dir;
  const std::string out = (dir / "m.tgm").string();
  expect_runtime_error(run_cli({"merge", "-o", out}), "error: no input files specified\n");
  expect_runtime_error(run_cli({"merge", "-s", "bogus", "-o", out, fixture("simple_f32.tgm")}),
                       "error: unknown merge strategy 'bogus': expected first, last, or error\n");
  // Missing inputs are reported before a bad strategy, as in the reference.
  expect_runtime_error(run_cli({"merge", "-s", "bogus", "-o", out}), "error: no input files specified\n");
  expect_usage_error(run_cli({"merge", fixture("simple_f32.tgm")}));  // -o required
  expect_usage_error(run_cli({"merge", "-o"}));
  const run_result missing = run_cli({"merge", "-o", out, fixture("simple_f32.tgm"), "/nonexistent/x.tgm"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(dir_listing(dir.path()).empty());
}

TEST(CliMerge, OutputMayBeAnInput) {
  const scratch_dir dir;
  const fs::path f = copy_fixture(dir, "multi_message.tgm");
  const auto before = objects_of_file(f);
  expect_success(run_cli({"merge", "-o", f.string(), f.string()}),
                 "Merged 2 objects from 1 file(s) into " + f.string() + " (strategy: first)\n");
  const auto msgs = messages_of(f);
  ASSERT_EQ(msgs.size(), 1u);
  expect_same_objects(before, objects_of(msgs[0]));
}

TEST(CliMerge, DamagedInputIsNotRehashed) {
  // Flip a payload byte of an object whose frame is hashed: merge must fail
  // rather than write a message whose new hash vouches for the damage.
  const scratch_dir dir;
  std::vector<std::byte> bytes = read_file(fixture("simple_f32.tgm"));
  // Data frame at 400 (README); its payload follows the 16-byte header.
  bytes[400 + 16] ^= std::byte{0x01};
  write_file(dir / "bad.tgm", bytes);
  const run_result r = run_cli({"merge", "-o", (dir / "m.tgm").string(), (dir / "bad.tgm").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("hash"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "m.tgm"));
}

// ---- split -----------------------------------------------------------------

TEST(CliSplit, OneFilePerObject) {
  const scratch_dir dir;
  expect_success(run_cli({"split", "-o", (dir / "part_[index].tgm").string(), fixture("multi_object.tgm")}),
                 "Split into 3 message(s)\n");
  EXPECT_EQ(dir_listing(dir.path()),
            (std::vector<std::string>{"part_0000.tgm", "part_0001.tgm", "part_0002.tgm"}));
  const auto objects = objects_of_file(fixture("multi_object.tgm"));
  const std::vector<std::string> params = {"temperature", "pressure", "humidity"};
  for (std::size_t k = 0; k < 3; ++k) {
    const fs::path p = dir / ("part_000" + std::to_string(k) + ".tgm");
    const auto msgs = messages_of(p);
    ASSERT_EQ(msgs.size(), 1u);
    const global_metadata g = full_metadata(msgs[0]);
    ASSERT_EQ(g.base.size(), 1u);
    EXPECT_EQ(text_at(g, 0, "parameter"), params[k]);
    expect_same_objects({objects[k]}, objects_of(msgs[0]));
    expect_all_hashed(p);
  }
}

TEST(CliSplit, ExtraIsKeptAndSingleObjectMessagesPassThrough) {
  const scratch_dir dir;
  const fs::path in = dir / "in.tgm";
  write_file(in, concat({read_file(fixture("metadata_parity.tgm")), read_file(fixture("simple_f32.tgm"))}));
  expect_success(run_cli({"split", "-o", (dir / "out.tgm").string(), in.string()}),
                 "Split into 3 message(s)\n");
  EXPECT_EQ(dir_listing(dir.path()),
            (std::vector<std::string>{"in.tgm", "out_0000.tgm", "out_0001.tgm", "out_0002.tgm"}));
  EXPECT_EQ(extra_text(full_metadata(read_file(dir / "out_0000.tgm")), "source"), "parity-fixture");
  EXPECT_EQ(extra_text(full_metadata(read_file(dir / "out_0001.tgm")), "source"), "parity-fixture");
  EXPECT_EQ(text_at(full_metadata(read_file(dir / "out_0001.tgm")), 0, "mars.class"), "ea");
  // The counter runs across messages; a one-object message is copied as is.
  EXPECT_EQ(read_file(dir / "out_0002.tgm"), read_file(fixture("simple_f32.tgm")));
}

TEST(CliSplit, Naming) {
  const scratch_dir dir;
  expect_success(run_cli({"split", "-o", (dir / "noext").string(), fixture("two-msg.tgm")}),
                 "Split into 2 message(s)\n");
  expect_success(
      run_cli({"split", "-o", (dir / "[index]-[index].x.tgm").string(), fixture("single-msg.tgm")}),
      "Split into 1 message(s)\n");
  EXPECT_EQ(dir_listing(dir.path()),
            (std::vector<std::string>{"0000-0000.x.tgm", "noext_0000", "noext_0001"}));
  const auto two = messages_of(fixture("two-msg.tgm"));
  EXPECT_EQ(read_file(dir / "noext_0000"), two[0]);
  EXPECT_EQ(read_file(dir / "noext_0001"), two[1]);

  EXPECT_EQ(expand_index_template("out.tgm", 0), "out_0000.tgm");
  EXPECT_EQ(expand_index_template("dir/out.tgm", 5), "dir/out_0005.tgm");
  EXPECT_EQ(expand_index_template("a.b.c", 12), "a.b_0012.c");
  EXPECT_EQ(expand_index_template(".hidden", 1), ".hidden_0001");
  EXPECT_EQ(expand_index_template("dir.d/out", 1), "dir.d/out_0001");
  EXPECT_EQ(expand_index_template("out/", 2), "out_0002");
  EXPECT_EQ(expand_index_template("", 3), "split_0003");
  EXPECT_EQ(expand_index_template("f_[index].tgm", 123456), "f_123456.tgm");
  EXPECT_EQ(expand_index_template("[index]/[index]", 7), "0007/0007");
}

TEST(CliSplit, Errors) {
  expect_usage_error(run_cli({"split", fixture("multi_object.tgm")}));  // -o required
  expect_usage_error(run_cli({"split", "-o", "x.tgm"}));                // INPUT required
  const scratch_dir dir;
  const run_result r = run_cli({"split", "-o", (dir / "x.tgm").string(), "/nonexistent/in.tgm"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(dir_listing(dir.path()).empty());
}

// ---- reshuffle -------------------------------------------------------------

TEST(CliReshuffle, FooterIndexedBecomesHeaderIndexed) {
  const scratch_dir dir;
  const fs::path in = copy_fixture(dir, "ten-msg-footer.tgm");
  const std::vector<std::byte> input = read_file(in);
  const fs::path out = dir / "r.tgm";
  expect_success(run_cli({"reshuffle", "-o", out.string(), in.string()}),
                 "Reshuffled 10 message(s) from " + in.string() + " to " + out.string() + "\n");
  EXPECT_EQ(read_file(in), input);
  const auto before = messages_of(in);
  const auto after = messages_of(out);
  ASSERT_EQ(after.size(), 10u);
  for (std::size_t i = 0; i < 10; ++i) {
    const format::preamble old_pre = format::read_preamble(before[i]);
    EXPECT_NE(old_pre.flags & format::message_flags::footer_index, 0);
    const format::preamble pre = format::read_preamble(after[i]);
    EXPECT_NE(pre.flags & format::message_flags::header_index, 0) << i;
    EXPECT_NE(pre.flags & format::message_flags::header_hashes, 0) << i;
    EXPECT_EQ(pre.flags & format::message_flags::footer_index, 0) << i;
    EXPECT_EQ(pre.flags & format::message_flags::footer_metadata, 0) << i;
    EXPECT_EQ(pre.total_length, after[i].size());
    // Same content: base entries and objects.
    global_metadata g0 = full_metadata(before[i]);
    global_metadata g1 = full_metadata(after[i]);
    EXPECT_TRUE(g0.base == g1.base) << i;
    EXPECT_TRUE(g0.extra == g1.extra) << i;
    expect_same_objects(objects_of(before[i]), objects_of(after[i]));
  }
  // The header metadata now carries everything (ls reads it).
  expect_success(run_cli({"get", "-p", "fixture.msg_index", out.string()}), "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n");
  expect_all_hashed(out);
}

TEST(CliReshuffle, NonBackfilledStreamingTailAndInPlace) {
  const scratch_dir dir;
  const fs::path f = copy_fixture(dir, "streaming-tail.tgm");
  const auto before = objects_of_file(f);
  expect_success(run_cli({"reshuffle", "-o", f.string(), f.string()}),
                 "Reshuffled 10 message(s) from " + f.string() + " to " + f.string() + "\n");
  const auto msgs = messages_of(f);
  ASSERT_EQ(msgs.size(), 10u);
  EXPECT_NE(format::read_preamble(msgs[9]).total_length, 0u);
  expect_same_objects(before, objects_of_file(f));
  EXPECT_EQ(dir_listing(dir.path()), (std::vector<std::string>{"streaming-tail.tgm"}));
}

TEST(CliReshuffle, Errors) {
  expect_usage_error(run_cli({"reshuffle", fixture("single-msg.tgm")}));
  expect_usage_error(run_cli({"reshuffle", "-o", "x.tgm"}));
  const scratch_dir dir;
  const fs::path out = dir / "r.tgm";
  write_file(out, bytes_of("old"));
  const run_result r = run_cli({"reshuffle", "-o", out.string(), "/nonexistent/x.tgm"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(read_file(out), bytes_of("old"));
}

// ---- every object survives merge → split → copy → reshuffle ----------------

TEST(CliRoundTrip, LossyCompressedAndMaskedObjectsBitForBit) {
  const scratch_dir dir;
  const fs::path in = dir / "codecs.tgm";
  write_file(in, codec_file());
  const std::vector<std::byte> input = read_file(in);
  const auto original = objects_of_file(in);
  ASSERT_EQ(original.size(), 5u);
  ASSERT_EQ(original[0].descriptor.encoding, "simple_packing");
  ASSERT_EQ(original[1].descriptor.compression, "zstd");
  ASSERT_EQ(original[2].descriptor.compression, "zfp");
  ASSERT_TRUE(original[3].descriptor.masks.has_value());  // NaN mask

  const fs::path merged = dir / "merged.tgm";
  // No --allow-nan needed: the masked object is carried over, not re-encoded.
  expect_success(run_cli({"merge", "-o", merged.string(), in.string()}),
                 "Merged 5 objects from 1 file(s) into " + merged.string() + " (strategy: first)\n");
  expect_same_objects(original, objects_of_file(merged));

  fs::create_directory(dir / "parts");
  expect_success(
      run_cli({"--threads", "2", "split", "-o", (dir / "parts/p_[index].tgm").string(), merged.string()}),
      "Split into 5 message(s)\n");
  fs::create_directory(dir / "rt");
  for (int k = 0; k < 5; ++k) {
    const fs::path part = dir / ("parts/p_000" + std::to_string(k) + ".tgm");
    expect_success(run_cli({"copy", part.string(), (dir / "rt/[campaign].tgm").string()}), "");
  }
  const fs::path all = dir / "rt/rt.tgm";
  const auto msgs = messages_of(all);
  ASSERT_EQ(msgs.size(), 5u);
  expect_same_objects(original, objects_of_file(all));
  const std::vector<std::string> names = {"sp", "zstd", "zfp", "nan", "lz4"};
  for (std::size_t k = 0; k < 5; ++k) {
    const global_metadata g = full_metadata(msgs[k]);
    EXPECT_EQ(text_at(g, 0, "name"), names[k]);
    EXPECT_EQ(extra_text(g, "campaign"), "rt");
    ASSERT_NE(g.extra.find("second"), nullptr);  // merged into the one message
  }
  expect_all_hashed(all);

  const fs::path reshuffled = dir / "reshuffled.tgm";
  expect_success(run_cli({"reshuffle", "-o", reshuffled.string(), all.string()}),
                 "Reshuffled 5 message(s) from " + all.string() + " to " + reshuffled.string() + "\n");
  expect_same_objects(original, objects_of_file(reshuffled));
  const fs::path set = dir / "set.tgm";
  expect_success(run_cli({"set", "-s", "name=renamed", reshuffled.string(), set.string()}), "");
  expect_same_objects(original, objects_of_file(set));
  EXPECT_EQ(read_file(in), input);

  // The NaNs come back where they were.
  const message nan_msg = decode(buffer::borrowed(messages_of(set)[3]));
  const auto* values = nan_msg.object(0).data_as<double>();
  for (std::size_t i = 0; i < 50; ++i) EXPECT_EQ(std::isnan(values[i]), i % 7 == 3) << i;
}

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

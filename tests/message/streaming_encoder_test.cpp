// The streaming encoder (spec 01 §18, spec 02 §3.4, §10, §13): layout and
// flags walked frame by frame, every decode path of the library on its
// output, equality of its data frames with the buffered encoder's, preceder
// merge, total_length back-fill per sink (path, ostream, file descriptor,
// pipe, socket), byte equality with the reference's streaming fixtures, and
// every error case.
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include <tensogram.hpp>
#include "tensogram/format/aggregate_frames.hpp"
#include "tensogram/message/streaming_encoder.hpp"
#include "test_support.hpp"

namespace {

namespace tg = tensogram;
namespace cbor = tensogram::cbor;
namespace fs = std::filesystem;
using tg::dtype;
using tgtest::be16;
using tgtest::be64;
using tgtest::bytes;

// ---- helpers ---------------------------------------------------------------------------

tg::encode_options fixed_options() {
  tg::encode_options o;
  o.fixed_provenance = tgtest::test_provenance();
  return o;
}

bytes to_bytes(std::span<const std::byte> s) {
  return bytes(s.begin(), s.end());
}

bytes str_bytes(const std::string& s) {
  bytes b(s.size());
  if (!s.empty()) std::memcpy(b.data(), s.data(), s.size());
  return b;
}

/// An output stream buffer that cannot seek (like std::cout on a pipe) and
/// that can be told to fail after `limit` bytes.
class unseekable_buf : public std::streambuf {
 public:
  bytes data;
  std::size_t limit = std::numeric_limits<std::size_t>::max();

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    const std::size_t room = limit - data.size();
    const std::size_t k = std::min(static_cast<std::size_t>(n), room);
    data.insert(data.end(), reinterpret_cast<const std::byte*>(s), reinterpret_cast<const std::byte*>(s) + k);
    return static_cast<std::streamsize>(k);
  }
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    if (data.size() >= limit) return traits_type::eof();
    data.push_back(static_cast<std::byte>(c));
    return c;
  }
};

struct object_case {
  tg::data_object_descriptor descriptor;
  bytes data;
  bool pre_encoded = false;
  std::optional<cbor::value> preceder;
};

/// Streams `objects` through `enc` and finishes.
std::uint64_t feed(tg::streaming_encoder& enc, const std::vector<object_case>& objects) {
  for (const object_case& o : objects) {
    if (o.preceder) enc.write_preceder(*o.preceder);
    if (o.pre_encoded) {
      enc.write_object_pre_encoded(o.descriptor, o.data);
    } else {
      enc.write_object(o.descriptor, o.data);
    }
  }
  EXPECT_EQ(enc.object_count(), objects.size());
  return enc.finish();
}

/// Streaming encode into a std::ostringstream (seekable: back-filled).
bytes stream_to_string(const tg::global_metadata& meta, const std::vector<object_case>& objects,
                       const tg::encode_options& options = fixed_options()) {
  std::ostringstream os;
  tg::streaming_encoder enc(os, meta, options);
  const std::uint64_t total = feed(enc, objects);
  const bytes out = str_bytes(os.str());
  EXPECT_EQ(total, out.size());
  EXPECT_EQ(enc.bytes_written(), out.size());
  return out;
}

/// Streaming encode into an unseekable stream (total_length stays 0).
bytes stream_unseekable(const tg::global_metadata& meta, const std::vector<object_case>& objects,
                        const tg::encode_options& options = fixed_options()) {
  unseekable_buf buf;
  std::ostream os(&buf);
  tg::streaming_encoder enc(os, meta, options);
  const std::uint64_t total = feed(enc, objects);
  EXPECT_EQ(total, buf.data.size());
  return buf.data;
}

bytes buffered(const tg::global_metadata& meta, const std::vector<object_case>& objects,
               const tg::encode_options& options = fixed_options()) {
  std::vector<tg::object_input> in;
  bool pre = false;
  for (const object_case& o : objects) {
    in.push_back({o.descriptor, o.data});
    pre = pre || o.pre_encoded;
  }
  return pre ? tg::encode_pre_encoded(meta, in, options) : tg::encode(meta, in, options);
}

/// `msg` with total_length zeroed in preamble and postamble.
bytes without_total(bytes msg) {
  tgtest::put_be64(msg, 16, 0);
  tgtest::put_be64(msg, msg.size() - 16, 0);
  return msg;
}

std::vector<tgtest::wire_frame> frames_of_type(std::span<const std::byte> msg, std::uint16_t type) {
  std::vector<tgtest::wire_frame> out;
  for (const auto& f : tgtest::wire_frames(msg))
    if (f.type == type) out.push_back(f);
  return out;
}

bytes frame_bytes(std::span<const std::byte> msg, const tgtest::wire_frame& f) {
  return tgtest::slice(msg, f.offset, static_cast<std::size_t>(f.total_length));
}

/// Checks the streaming layout of spec 01 §18 on raw bytes: preamble flags,
/// frame order and flags, padding, header metadata = caller metadata,
/// footer index and hash bodies against the frames actually present, the
/// postamble. `backfilled` says what total_length must hold.
void check_layout(const bytes& msg, const tg::global_metadata& caller, const tg::encode_options& options,
                  std::size_t objects, std::size_t preceders, bool backfilled) {
  SCOPED_TRACE("layout");
  const bool hashing = options.hashing();
  const bool footer_hash = hashing && options.aggregate_hash != tg::aggregate_hash_policy::none;
  ASSERT_GE(msg.size(), 48u);
  ASSERT_EQ(msg.size() % 8, 0u);
  EXPECT_EQ(tgtest::slice(msg, 0, 8), str_bytes("TENSOGRM"));
  EXPECT_EQ(be16(msg, 8), 3);
  const std::uint16_t want_flags = static_cast<std::uint16_t>(
      0x0001 | 0x0002 | 0x0008 | 0x0040 | (hashing ? 0x0080 : 0) | (footer_hash ? 0x0020 : 0));
  EXPECT_EQ(be16(msg, 10), want_flags);
  const std::uint64_t total = backfilled ? msg.size() : 0;
  EXPECT_EQ(be64(msg, 16), total);
  EXPECT_EQ(be64(msg, msg.size() - 16), total);
  EXPECT_EQ(tgtest::slice(msg, msg.size() - 8, 8), str_bytes("39277777"));

  const auto frames = tgtest::wire_frames(msg);
  std::vector<std::uint16_t> types;
  for (const auto& f : frames) types.push_back(f.type);
  std::vector<std::uint16_t> want{1};
  // Preceders come before their object; the caller's order is checked by
  // the tests that use them, here only the counts.
  const std::size_t n8 = static_cast<std::size_t>(std::count(types.begin(), types.end(), 8));
  EXPECT_EQ(n8, preceders);
  std::vector<std::uint16_t> body;
  for (std::uint16_t t : types)
    if (t == 8 || t == 9) body.push_back(t);
  want.insert(want.end(), body.begin(), body.end());
  want.push_back(7);
  if (footer_hash && objects > 0) want.push_back(5);
  want.push_back(6);
  EXPECT_EQ(types, want);
  EXPECT_EQ(static_cast<std::size_t>(std::count(types.begin(), types.end(), 9)), objects);
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(frames.front().offset, 24u);

  // Every frame 8-aligned, padding zero, frames contiguous up to padding.
  std::size_t expect_at = 24;
  for (const auto& f : frames) {
    EXPECT_EQ(f.offset, expect_at) << "frame type " << f.type;
    EXPECT_EQ(f.offset % 8, 0u);
    const std::size_t end = f.offset + static_cast<std::size_t>(f.total_length);
    EXPECT_EQ(tgtest::slice(msg, end - 4, 4), str_bytes("ENDF"));
    expect_at = (end + 7) & ~std::size_t{7};
    for (std::size_t i = end; i < expect_at; ++i) EXPECT_EQ(msg[i], std::byte{0});
    const std::uint16_t data_bit = f.type == 9 ? 0x0001 : 0x0000;
    EXPECT_EQ(f.flags, data_bit | (hashing ? 0x0002 : 0x0000)) << "frame type " << f.type;
    if (hashing) {
      EXPECT_EQ(f.slot, tg::format::xxh3_64(tgtest::frame_body(msg, f))) << "frame type " << f.type;
    } else {
      EXPECT_EQ(f.slot, 0u);
    }
  }
  EXPECT_EQ(expect_at, msg.size() - 24);  // postamble right after the last padded frame

  // Header metadata: the caller's metadata exactly (spec 02 §3.4).
  EXPECT_EQ(to_bytes(tgtest::frame_body(msg, frames.front())), caller.to_cbor_bytes());
  // Postamble first_footer_offset = FooterMetadata.
  const auto meta7 = frames_of_type(msg, 7);
  ASSERT_EQ(meta7.size(), 1u);
  EXPECT_EQ(be64(msg, msg.size() - 24), meta7[0].offset);
  // Footer index = the data frames' offsets and lengths.
  const auto data = frames_of_type(msg, 9);
  const auto idx = frames_of_type(msg, 6);
  ASSERT_EQ(idx.size(), 1u);
  const tg::format::index_body ib = tg::format::parse_index_body(tgtest::frame_body(msg, idx[0]));
  ASSERT_EQ(ib.offsets.size(), data.size());
  ASSERT_EQ(ib.lengths.size(), data.size());
  for (std::size_t i = 0; i < data.size(); ++i) {
    EXPECT_EQ(ib.offsets[i], data[i].offset);
    EXPECT_EQ(ib.lengths[i], data[i].total_length);
  }
  // Footer hash = the data frames' slots.
  const auto hf = frames_of_type(msg, 5);
  if (footer_hash && objects > 0) {
    ASSERT_EQ(hf.size(), 1u);
    const tg::format::hash_body hb = tg::format::parse_hash_body(tgtest::frame_body(msg, hf[0]));
    EXPECT_EQ(hb.algorithm, "xxh3");
    ASSERT_EQ(hb.hashes.size(), data.size());
    for (std::size_t i = 0; i < data.size(); ++i) EXPECT_EQ(hb.hashes[i], tg::hex16(data[i].slot));
  }
}

/// Runs every decode path on `msg` (a streaming message) and compares with
/// `ref` (the buffered encoding of the same inputs): same objects, same
/// full metadata, same descriptors, same range results or errors.
void check_decode_paths(const bytes& msg, const bytes& ref, const tg::global_metadata& caller,
                        const tg::encode_options& options) {
  SCOPED_TRACE("decode paths");
  const tg::buffer sbuf = tg::buffer::borrowed(msg);
  const tg::buffer rbuf = tg::buffer::borrowed(ref);
  const tg::message sm = tg::decode(sbuf);
  const tg::message rm = tg::decode(rbuf);
  ASSERT_EQ(sm.num_objects(), rm.num_objects());
  EXPECT_EQ(sm.global(), rm.global());  // the footer metadata = buffered metadata
  for (std::size_t i = 0; i < sm.num_objects(); ++i) {
    EXPECT_EQ(sm.object(i).descriptor(), rm.object(i).descriptor()) << "object " << i;
    EXPECT_EQ(to_bytes(sm.object(i).bytes()), to_bytes(rm.object(i).bytes())) << "object " << i;
    EXPECT_EQ(sm.object(i).hash_slot(), rm.object(i).hash_slot()) << "object " << i;
  }
  // Metadata-only decode returns the first metadata frame: the caller's.
  EXPECT_EQ(tg::decode_metadata(msg).global(), caller);
  // Descriptors without payloads.
  const auto [dmeta, descs] = tg::decode_descriptors(msg);
  EXPECT_EQ(dmeta.global(), rm.global());
  ASSERT_EQ(descs.size(), rm.num_objects());
  for (std::size_t i = 0; i < descs.size(); ++i) EXPECT_EQ(descs[i], rm.object(i).descriptor());
  // One object by index (through the footer index).
  for (std::size_t i = 0; i < sm.num_objects(); ++i) {
    const tg::message one = tg::decode_object(sbuf, i);
    ASSERT_EQ(one.num_objects(), 1u);
    EXPECT_EQ(to_bytes(one.object(0).bytes()), to_bytes(rm.object(i).bytes())) << "object " << i;
    EXPECT_EQ(one.global(), rm.global());
  }
  EXPECT_THROW((void)tg::decode_object(sbuf, sm.num_objects()), tg::object_error);
  // Ranges: identical results, or the identical error, in both modes.
  for (std::size_t i = 0; i < sm.num_objects(); ++i) {
    const std::uint64_t n = rm.object(i).descriptor().element_count();
    const std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges = {{0, n / 2}, {n / 3, n - n / 3}};
    std::string rerr;
    std::vector<tg::buffer> rr;
    try {
      rr = tg::decode_range(rbuf, i, ranges);
    } catch (const tg::error& e) {
      rerr = e.what();
    }
    if (!rerr.empty()) {
      try {
        (void)tg::decode_range(sbuf, i, ranges);
        ADD_FAILURE() << "range decode of object " << i << " succeeded; buffered failed with " << rerr;
      } catch (const tg::error& e) {
        EXPECT_EQ(std::string(e.what()), rerr);
      }
      continue;
    }
    const std::vector<tg::buffer> sr = tg::decode_range(sbuf, i, ranges);
    ASSERT_EQ(sr.size(), rr.size());
    for (std::size_t r = 0; r < sr.size(); ++r) EXPECT_EQ(to_bytes(sr[r].bytes()), to_bytes(rr[r].bytes()));
  }
  // Scanning finds exactly this message.
  const auto entries = tg::scan(std::span<const std::byte>(msg));
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0], (tg::scan_entry{0, msg.size()}));
  // Hash verification.
  if (options.hashing() && sm.num_objects() > 0) {
    EXPECT_NO_THROW(tg::verify_hashes(msg));
    tg::decode_options verify;
    verify.verify_hash = true;
    EXPECT_NO_THROW((void)tg::decode(sbuf, verify));
    // A flipped payload byte of the last object is caught.
    bytes bad = msg;
    const auto data = frames_of_type(msg, 9);
    bad[data.back().offset + 16] ^= std::byte{0x01};
    EXPECT_THROW(tg::verify_hashes(bad), tg::hash_mismatch_error);
  } else if (sm.num_objects() > 0) {
    EXPECT_THROW(tg::verify_hashes(msg), tg::missing_hash_error);
  }
}

/// The full check of one input set: layout of back-filled and unbackfilled
/// output, data frames identical to buffered mode, every decode path.
void check_case(const tg::global_metadata& meta, const std::vector<object_case>& objects,
                const tg::encode_options& options = fixed_options()) {
  const bytes s = stream_to_string(meta, objects, options);
  const bytes u = stream_unseekable(meta, objects, options);
  const bytes ref = buffered(meta, objects, options);
  std::size_t preceders = 0;
  for (const auto& o : objects) preceders += o.preceder ? 1 : 0;
  check_layout(s, meta, options, objects.size(), preceders, true);
  check_layout(u, meta, options, objects.size(), preceders, false);
  // Back-fill changes the two total_length fields and nothing else.
  EXPECT_EQ(without_total(s), u);
  // Data frames byte-identical to the buffered encoder's (spec 01 §18).
  const auto sd = frames_of_type(s, 9);
  const auto rd = frames_of_type(ref, 9);
  ASSERT_EQ(sd.size(), rd.size());
  for (std::size_t i = 0; i < sd.size(); ++i) {
    EXPECT_EQ(frame_bytes(s, sd[i]), frame_bytes(ref, rd[i])) << "data frame " << i;
  }
  if (preceders == 0) {
    check_decode_paths(s, ref, meta, options);
    check_decode_paths(u, ref, meta, options);
  }
}

object_case raw(tg::data_object_descriptor d, bytes data) {
  return object_case{std::move(d), std::move(data), false, std::nullopt};
}

template <typename T>
bytes native_bytes(const std::vector<T>& v) {
  bytes b(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

tg::global_metadata meta_with_base(std::size_t n) {
  tg::global_metadata g;
  for (std::size_t i = 0; i < n; ++i) {
    g.base.push_back(cbor::value::make_map({{"name", cbor::value("object " + std::to_string(i))},
                                            {"index", cbor::value(static_cast<std::uint64_t>(i))}}));
  }
  g.extra.set("experiment", "streaming");
  return g;
}

tg::data_object_descriptor sp_szip(std::uint64_t n) {
  tg::data_object_descriptor d = tg::data_object_descriptor::contiguous(dtype::float64, {n});
  d.encoding = "simple_packing";
  d.compression = "szip";
  d.params.set("sp_bits_per_value", 16);
  d.params.set("szip_rsi", 128);
  d.params.set("szip_block_size", 16);
  d.params.set("szip_flags", 8);
  return d;
}

std::vector<double> smooth(std::size_t n, double phase = 0) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = 280.0 + 15.0 * std::sin(0.01 * static_cast<double>(i) + phase);
  return v;
}

// ---- layout, decode paths and equality with buffered mode, per pipeline ----------------

TEST(StreamingEncoder, MetadataJsonParsing) {
  const tensogram::global_metadata g =
      tensogram::parse_streaming_metadata_json(R"({"base":[{"a":1}],"experiment":"x"})");
  ASSERT_EQ(g.base.size(), 1U);
  EXPECT_EQ(g.extra.find("experiment")->as_text() != nullptr, true);
  EXPECT_THROW((void)tensogram::parse_streaming_metadata_json(R"({"descriptors":[{"type":"ntensor"}]})"),
               tensogram::metadata_error);
  EXPECT_THROW((void)tensogram::parse_streaming_metadata_json("[]"), tensogram::metadata_error);
}

TEST(StreamingEncoder, SeveralDtypesPipelineNone) {
  std::mt19937_64 rng(42);
  std::vector<object_case> objs;
  const struct {
    dtype t;
    std::vector<std::uint64_t> shape;
    tg::byte_order order;
  } specs[] = {
      {dtype::float32, {3, 4}, tg::byte_order::big},
      {dtype::int16, {7}, tg::byte_order::little},
      {dtype::uint8, {}, tg::byte_order::big},
      {dtype::bitmask, {13}, tg::byte_order::big},
      {dtype::complex128, {2, 2}, tg::byte_order::little},
      {dtype::float16, {0}, tg::byte_order::big},
      {dtype::uint64, {5}, tg::byte_order::big},
  };
  for (const auto& sp : specs) {
    const std::uint64_t n = *tg::element_count(sp.shape);
    const auto sample = tgtest::make_random_sample(sp.t, n, rng);
    objs.push_back(
        raw(tg::data_object_descriptor::contiguous(sp.t, sp.shape, sp.order), sample.in(sp.order)));
  }
  check_case(meta_with_base(objs.size()), objs);
  check_case(meta_with_base(2), objs);  // fewer base entries than objects: padded in the footer
  check_case({}, objs);
}

TEST(StreamingEncoder, SimplePackingWithSzip) {
  std::vector<object_case> objs;
  objs.push_back(raw(sp_szip(1000), native_bytes(smooth(1000))));
  objs.push_back(raw(sp_szip(4096), native_bytes(smooth(4096, 1.0))));
  check_case(meta_with_base(2), objs);
}

TEST(StreamingEncoder, ZstdAndLz4) {
  std::mt19937_64 rng(7);
  tg::data_object_descriptor z = tg::data_object_descriptor::contiguous(dtype::float32, {500});
  z.compression = "zstd";
  z.params.set("zstd_level", 3);
  tg::data_object_descriptor l =
      tg::data_object_descriptor::contiguous(dtype::int64, {100}, tg::byte_order::big);
  l.compression = "lz4";
  tg::data_object_descriptor sh = tg::data_object_descriptor::contiguous(dtype::float64, {300});
  sh.filter = "shuffle";
  sh.params.set("shuffle_element_size", 8);
  sh.compression = "zstd";
  sh.params.set("zstd_level", 1);
  std::vector<object_case> objs;
  objs.push_back(raw(z, tgtest::make_random_sample(dtype::float32, 500, rng, true).little));
  objs.push_back(raw(l, tgtest::make_random_sample(dtype::int64, 100, rng, true).big));
  objs.push_back(raw(sh, native_bytes(smooth(300))));
  check_case(meta_with_base(3), objs);
}

TEST(StreamingEncoder, NanAndInfMasks) {
  std::vector<double> a = smooth(400);
  a[3] = std::numeric_limits<double>::quiet_NaN();
  a[100] = std::numeric_limits<double>::infinity();
  a[101] = -std::numeric_limits<double>::infinity();
  std::vector<float> b(300, 1.5f);
  for (std::size_t i = 0; i < b.size(); i += 7) b[i] = std::numeric_limits<float>::quiet_NaN();
  tg::data_object_descriptor fb = tg::data_object_descriptor::contiguous(dtype::float32, {300});
  fb.compression = "zstd";
  fb.params.set("zstd_level", 3);
  std::vector<object_case> objs;
  objs.push_back(raw(tg::data_object_descriptor::contiguous(dtype::float64, {400}), native_bytes(a)));
  objs.push_back(raw(fb, native_bytes(b)));
  tg::encode_options o = fixed_options();
  o.allow_nan = true;
  o.allow_inf = true;
  check_case(meta_with_base(2), objs, o);
  o.nan_mask_method = "rle";
  o.small_mask_threshold_bytes = 0;
  check_case(meta_with_base(2), objs, o);
  // simple_packing resolves its parameters on the original values, so NaN
  // input fails there even with allow_nan, exactly as in buffered mode.
  std::ostringstream os;
  tg::streaming_encoder enc(os, tg::global_metadata{}, o);
  EXPECT_THROW(enc.write_object(sp_szip(400), native_bytes(a)), tg::encoding_error);
  // The masks really are there and restore the values.
  const bytes s = stream_to_string({}, objs, o);
  const tg::message m = tg::decode(tg::buffer::borrowed(s));
  ASSERT_TRUE(m.object(0).descriptor().masks.has_value());
  EXPECT_TRUE(std::isnan(m.object(0).data_as<double>()[3]));
  EXPECT_EQ(m.object(0).data_as<double>()[100], std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(m.object(1).data_as<float>()[7]));
}

TEST(StreamingEncoder, HashingOffAndAggregatePolicies) {
  std::mt19937_64 rng(3);
  std::vector<object_case> objs;
  objs.push_back(raw(tg::data_object_descriptor::contiguous(dtype::int32, {10}),
                     tgtest::make_random_sample(dtype::int32, 10, rng).little));
  objs.push_back(raw(sp_szip(64), native_bytes(smooth(64))));
  for (const char* algo : {"xxh3", "none", ""}) {
    for (auto policy : {tg::aggregate_hash_policy::automatic, tg::aggregate_hash_policy::footer,
                        tg::aggregate_hash_policy::none}) {
      SCOPED_TRACE(std::string("hash '") + algo + "' policy " + std::to_string(static_cast<int>(policy)));
      tg::encode_options o = fixed_options();
      o.hash_algo = algo;
      o.aggregate_hash = policy;
      check_case(meta_with_base(1), objs, o);
    }
  }
}

TEST(StreamingEncoder, ZeroObjects) {
  for (const char* algo : {"xxh3", "none"}) {
    tg::encode_options o = fixed_options();
    o.hash_algo = algo;
    const bytes s = stream_to_string({}, {}, o);
    check_layout(s, {}, o, 0, 0, true);
    // FOOTER_HASHES is set up front even though no hash frame follows
    // (reference behaviour, spec 02 §18 item 11); the index is empty.
    const auto idx = frames_of_type(s, 6);
    ASSERT_EQ(idx.size(), 1u);
    EXPECT_EQ(to_bytes(tgtest::frame_body(s, idx[0])), tg::format::encode_index_body({}));
    const tg::message m = tg::decode(tg::buffer::borrowed(s));
    EXPECT_EQ(m.num_objects(), 0u);
    EXPECT_EQ(*m.global().reserved.find("uuid")->as_text(), tgtest::test_provenance().uuid);
  }
}

TEST(StreamingEncoder, PreEncodedObjects) {
  // Bitmask and raw bytes stored verbatim; a pre-encoded szip object with
  // its block offsets taken from a raw encode of the same values.
  const bytes bits = tgtest::B({0xA5, 0xFF, 0x00, 0x80});
  const bytes ints = native_bytes(std::vector<std::int32_t>{1, -2, 3, -4});
  const bytes ref = buffered({}, {raw(sp_szip(512), native_bytes(smooth(512)))});
  const auto data = frames_of_type(ref, 9);
  const tg::message rm = tg::decode(tg::buffer::borrowed(ref));
  const tg::data_object_descriptor enc_desc = rm.object(0).descriptor();
  const std::uint64_t cbor_offset = be64(ref, data[0].offset + data[0].total_length - 20);
  const bytes payload = tgtest::slice(ref, data[0].offset + 16, cbor_offset - 16);

  std::vector<object_case> objs;
  objs.push_back({tg::data_object_descriptor::contiguous(dtype::bitmask, {30}), bits, true, std::nullopt});
  objs.push_back({tg::data_object_descriptor::contiguous(dtype::int32, {4}), ints, true, std::nullopt});
  objs.push_back({enc_desc, payload, true, std::nullopt});
  check_case(meta_with_base(3), objs);
  const bytes s = stream_to_string({}, objs);
  const tg::message m = tg::decode(tg::buffer::borrowed(s));
  EXPECT_EQ(to_bytes(m.object(0).bytes()), bits);
  EXPECT_EQ(to_bytes(m.object(2).bytes()), to_bytes(rm.object(0).bytes()));
}

TEST(StreamingEncoder, LargeObjectsAndThreads) {
  // Payloads larger than the output buffer and than one hashing block.
  std::mt19937_64 rng(11);
  const std::uint64_t n = 300000;
  std::vector<object_case> objs;
  objs.push_back(raw(tg::data_object_descriptor::contiguous(dtype::float32, {n}),
                     tgtest::make_random_sample(dtype::float32, n, rng).in(tg::native_byte_order())));
  objs.push_back(raw(sp_szip(n), native_bytes(smooth(n))));
  objs.push_back(raw(tg::data_object_descriptor::contiguous(dtype::uint8, {3}), tgtest::B({1, 2, 3})));
  check_case(meta_with_base(3), objs);
  tg::encode_options threaded = fixed_options();
  threaded.threads = 2;
  EXPECT_EQ(stream_to_string({}, objs, threaded), stream_to_string({}, objs));
}

TEST(StreamingEncoder, EachObjectReachesTheSinkWhenWritten) {
  std::ostringstream os;
  tg::streaming_encoder enc(os, meta_with_base(0), fixed_options());
  EXPECT_EQ(os.str().size(), enc.bytes_written());  // preamble and header flushed at construction
  EXPECT_EQ(enc.bytes_written() % 8, 0u);
  const bytes v = native_bytes(std::vector<float>{1, 2, 3});
  for (int i = 0; i < 3; ++i) {
    enc.write_object(tg::data_object_descriptor::contiguous(dtype::float32, {3}), v);
    EXPECT_EQ(os.str().size(), enc.bytes_written());
  }
  const std::uint64_t total = enc.finish();
  EXPECT_EQ(total, os.str().size());
}

TEST(StreamingEncoder, ConcatenatedWithOtherMessagesScansAndDecodes) {
  const bytes v = native_bytes(std::vector<double>{1, 2, 3, 4});
  const std::vector<object_case> objs = {raw(tg::data_object_descriptor::contiguous(dtype::float64, {4}), v)};
  const bytes a = buffered({}, objs);
  const bytes s0 = stream_unseekable({}, objs);  // total_length 0: found by its end magic
  const bytes s1 = stream_to_string({}, objs);
  bytes all = a;
  all.insert(all.end(), s1.begin(), s1.end());
  all.insert(all.end(), s0.begin(), s0.end());
  all.insert(all.end(), a.begin(), a.end());
  all.insert(all.end(), s0.begin(), s0.end());
  const auto entries = tg::scan(std::span<const std::byte>(all));
  const std::vector<tg::scan_entry> want = {{0, a.size()},
                                            {a.size(), s1.size()},
                                            {a.size() + s1.size(), s0.size()},
                                            {a.size() + s1.size() + s0.size(), a.size()},
                                            {2 * a.size() + s1.size() + s0.size(), s0.size()}};
  EXPECT_EQ(entries, want);
  for (const auto& e : entries) {
    const tg::message m =
        tg::decode(tg::buffer::borrowed(std::span<const std::byte>(all).subspan(e.offset, e.length)));
    EXPECT_EQ(to_bytes(m.object(0).bytes()), v);
  }
}

// ---- preceders ----------------------------------------------------------------------------

TEST(StreamingEncoderPreceder, MergedIntoFooterMetadata) {
  const bytes v = native_bytes(std::vector<float>{1, 2});
  const auto desc = tg::data_object_descriptor::contiguous(dtype::float32, {2});
  tg::global_metadata meta;
  meta.base.push_back(cbor::value::make_map(
      {{"a", 1}, {"keep", "base"}, {"nested", cbor::value::make_map({{"x", 1}, {"y", 2}})}}));
  meta.base.push_back(cbor::value::make_map({{"only", "base1"}}));
  meta.extra.set("run", 7);
  std::vector<object_case> objs = {raw(desc, v), raw(desc, v), raw(desc, v)};
  // Object 0: preceder replaces `a` and the whole `nested` map, adds `p`.
  objs[0].preceder =
      cbor::value::make_map({{"a", 2}, {"nested", cbor::value::make_map({{"x", 9}})}, {"p", "pre0"}});
  // Object 1: none. Object 2: beyond the caller's base.
  objs[2].preceder = cbor::value::make_map({{"mars", cbor::value::make_map({{"param", "2t"}})}});
  const bytes s = stream_to_string(meta, objs);
  check_layout(s, meta, fixed_options(), 3, 2, true);
  // Frame order: 1, 8, 9, 9, 8, 9, 7, 5, 6.
  std::vector<std::uint16_t> types;
  for (const auto& f : tgtest::wire_frames(s)) types.push_back(f.type);
  EXPECT_EQ(types, (std::vector<std::uint16_t>{1, 8, 9, 9, 8, 9, 7, 5, 6}));
  // Preceder bodies are exactly {"base": [entry]}.
  const auto pf = frames_of_type(s, 8);
  EXPECT_EQ(to_bytes(tgtest::frame_body(s, pf[0])),
            cbor::encode(cbor::value::make_map({{"base", cbor::value(cbor::array{*objs[0].preceder})}})));
  EXPECT_EQ(to_bytes(tgtest::frame_body(s, pf[1])),
            cbor::encode(cbor::value::make_map({{"base", cbor::value(cbor::array{*objs[2].preceder})}})));

  // Expected footer metadata = a buffered encode of the merged base.
  tg::global_metadata merged = meta;
  merged.base[0] = cbor::value::make_map(
      {{"a", 2}, {"keep", "base"}, {"nested", cbor::value::make_map({{"x", 9}})}, {"p", "pre0"}});
  merged.base.push_back(*objs[2].preceder);
  std::vector<object_case> plain = {raw(desc, v), raw(desc, v), raw(desc, v)};
  const bytes ref = buffered(merged, plain);
  const tg::global_metadata want = tg::decode(tg::buffer::borrowed(ref)).global();
  // The footer frame itself holds the merge (not only the decoder's view).
  const auto f7 = frames_of_type(s, 7);
  EXPECT_EQ(tg::global_metadata::from_cbor_bytes(tgtest::frame_body(s, f7[0])), want);
  const auto h1 = frames_of_type(ref, 1);
  EXPECT_EQ(to_bytes(tgtest::frame_body(s, f7[0])), to_bytes(tgtest::frame_body(ref, h1[0])));
  // Every decode path.
  EXPECT_EQ(tg::decode(tg::buffer::borrowed(s)).global(), want);
  EXPECT_EQ(tg::decode_descriptors(s).first.global(), want);
  EXPECT_EQ(tg::decode_object(tg::buffer::borrowed(s), 2).global(), want);
  EXPECT_EQ(tg::decode_metadata(s).global(), meta);
  EXPECT_NO_THROW(tg::verify_hashes(s));
  EXPECT_EQ(tg::decode(tg::buffer::borrowed(s)).get_metadata().get_string_at(2, "mars.param"), "2t");
  // Unseekable output differs only by total_length.
  EXPECT_EQ(without_total(s), stream_unseekable(meta, objs));
}

TEST(StreamingEncoderPreceder, JsonApiMatchesTypedApi) {
  const bytes v = native_bytes(std::vector<double>{1.5, 2.5, 3.5});
  std::ostringstream typed_os;
  {
    tg::global_metadata meta;
    meta.base.push_back(cbor::value::make_map({{"param", "t"}}));
    meta.extra.set("origin", "test");
    tg::streaming_encoder enc(typed_os, meta, fixed_options());
    enc.write_preceder(cbor::value::make_map({{"units", "K"}, {"level", 850}}));
    tg::data_object_descriptor d =
        tg::data_object_descriptor::contiguous(dtype::float64, {3}, tg::byte_order::little);
    d.compression = "zstd";
    d.params.set("zstd_level", 3);
    enc.write_object(d, v);
    enc.write_object_pre_encoded(
        tg::data_object_descriptor::contiguous(dtype::float64, {3}, tg::byte_order::little), v);
    enc.finish();
  }
  std::ostringstream json_os;
  {
    tg::streaming_encoder enc(json_os, std::string(R"({"base": [{"param": "t"}], "origin": "test"})"),
                              fixed_options());
    enc.write_preceder(R"({"units": "K", "level": 850})");
    const auto* p = reinterpret_cast<const std::uint8_t*>(v.data());
    enc.write_object(
        R"({"type": "ntensor", "ndim": 1, "shape": [3], "strides": [1], "dtype": "float64", "byte_order": "little",
            "encoding": "none", "filter": "none", "compression": "zstd", "zstd_level": 3})",
        p, v.size());
    enc.write_object_pre_encoded(
        R"({"type": "ntensor", "ndim": 1, "shape": [3], "strides": [1], "dtype": "float64", "byte_order": "little",
            "encoding": "none", "filter": "none", "compression": "none"})",
        p, v.size());
    EXPECT_EQ(enc.object_count(), 2u);
    enc.finish();
  }
  EXPECT_EQ(str_bytes(json_os.str()), str_bytes(typed_os.str()));
}

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

// ---- the reference's streaming fixtures (producer 0.19.0) -----------------------------------

/// Clears per-frame HASH_PRESENT (bit 1), which producer 0.19.0 did not set
/// (fixture README); everything else must then be identical.
bytes as_legacy(bytes msg) {
  for (const auto& f : tgtest::wire_frames(msg)) {
    tgtest::put_be16(msg, f.offset + 6, static_cast<std::uint16_t>(f.flags & ~0x0002));
  }
  return msg;
}

/// Re-encodes message `i` of a legacy streaming fixture from its inputs
/// (fixture README: float32 [4] little, values i..i+3, base[0] = {"fixture":
/// {"shape": [4], "msg_index": i}}) with the fixture's provenance.
bytes reencode_legacy(std::span<const std::byte> fixture_msg, std::uint64_t i, bool backfill) {
  const tg::global_metadata fm = tg::decode(tg::buffer::borrowed(fixture_msg)).global();
  tg::encode_options o;
  tg::provenance prov;
  prov.encoder_name = *fm.reserved.find("encoder")->find("name")->as_text();
  prov.encoder_version = *fm.reserved.find("encoder")->find("version")->as_text();
  prov.time = *fm.reserved.find("time")->as_text();
  prov.uuid = *fm.reserved.find("uuid")->as_text();
  EXPECT_EQ(prov.encoder_version, "0.19.0");
  o.fixed_provenance = prov;
  tg::global_metadata meta;
  meta.base.push_back(cbor::value::make_map(
      {{"fixture",
        cbor::value::make_map({{"shape", cbor::value(cbor::array{cbor::value(4)})}, {"msg_index", i}})}}));
  std::vector<float> v(4);
  for (std::size_t k = 0; k < 4; ++k) v[k] = static_cast<float>(i + k);
  bytes le(16);
  for (std::size_t k = 0; k < 4; ++k) {
    std::uint32_t u;
    std::memcpy(&u, &v[k], 4);
    for (int b = 0; b < 4; ++b) le[k * 4 + b] = static_cast<std::byte>((u >> (8 * b)) & 0xFF);
  }
  const std::vector<object_case> objs = {
      raw(tg::data_object_descriptor::contiguous(dtype::float32, {4}, tg::byte_order::little), le)};
  return backfill ? stream_to_string(meta, objs, o) : stream_unseekable(meta, objs, o);
}

void check_legacy_file(std::string_view name) {
  SCOPED_TRACE(std::string(name));
  const bytes file = tgtest::read_fixture(name);
  const auto entries = tg::scan(std::span<const std::byte>(file));
  ASSERT_FALSE(entries.empty());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    SCOPED_TRACE("message " + std::to_string(i));
    const auto fixture = std::span<const std::byte>(file).subspan(entries[i].offset, entries[i].length);
    const bytes ours = reencode_legacy(fixture, i, true);
    // Frame types, order, sizes, offsets and slots as the reference wrote them.
    const auto a = tgtest::wire_frames(fixture);
    const auto b = tgtest::wire_frames(ours);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t k = 0; k < a.size(); ++k) {
      EXPECT_EQ(a[k].offset, b[k].offset);
      EXPECT_EQ(a[k].type, b[k].type);
      EXPECT_EQ(a[k].total_length, b[k].total_length);
      EXPECT_EQ(a[k].slot, b[k].slot);
      EXPECT_EQ(a[k].flags | 0x0002, b[k].flags);
    }
    // And byte for byte, once the 0.19.0 flag difference is removed.
    EXPECT_EQ(as_legacy(ours), to_bytes(fixture));
  }
}

TEST(StreamingEncoderFixture, SingleMsgFooter) {
  const bytes file = tgtest::read_fixture("single-msg-footer.tgm");
  const bytes ours = reencode_legacy(file, 0, true);
  std::vector<std::uint16_t> types;
  std::vector<std::size_t> offsets;
  for (const auto& f : tgtest::wire_frames(ours)) {
    types.push_back(f.type);
    offsets.push_back(f.offset);
  }
  EXPECT_EQ(types, (std::vector<std::uint16_t>{1, 9, 7, 5, 6}));
  EXPECT_EQ(offsets, (std::vector<std::size_t>{24, 88, 256, 504, 576}));
  EXPECT_EQ(ours.size(), 656u);
  EXPECT_EQ(be16(ours, 10), 0x00EB);
  EXPECT_EQ(be64(ours, 632), 256u);
  check_legacy_file("single-msg-footer.tgm");
}

TEST(StreamingEncoderFixture, TenMsgFooter) {
  check_legacy_file("ten-msg-footer.tgm");
}

TEST(StreamingEncoderFixture, HundredMsgFooter) {
  check_legacy_file("hundred-msg-footer.tgm");  // msg_index ≥ 24 changes the frame sizes
}

TEST(StreamingEncoderFixture, ThousandMsgFooter) {
  check_legacy_file("thousand-msg-footer.tgm");  // and ≥ 256 again
}

TEST(StreamingEncoderFixture, StreamingTailWithoutBackFill) {
  const bytes file = tgtest::read_fixture("streaming-tail.tgm");
  const auto msg9 = std::span<const std::byte>(file).subspan(5328, 656);
  ASSERT_EQ(be64(msg9, 16), 0u);
  EXPECT_EQ(as_legacy(reencode_legacy(msg9, 9, false)), to_bytes(msg9));
}

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

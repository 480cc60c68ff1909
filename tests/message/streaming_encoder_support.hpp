// Helpers shared by the streaming encoder's tests (streaming_encoder_*_test.cpp,
// spec 01 §18): encoding the same objects in streaming and buffered mode, an
// unseekable sink, and the checks of the streaming layout and of every decode
// path on a streaming message.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include <tensogram.hpp>
#include "tensogram/format/aggregate_frames.hpp"
#include "tensogram/message/streaming_encoder.hpp"
#include "test_support.hpp"

namespace tgtest::streaming {

namespace tg = tensogram;
namespace cbor = tensogram::cbor;
using tg::dtype;
inline tg::encode_options fixed_options() {
  tg::encode_options o;
  o.fixed_provenance = tgtest::test_provenance();
  return o;
}

inline bytes to_bytes(std::span<const std::byte> s) {
  return bytes(s.begin(), s.end());
}

inline bytes str_bytes(const std::string& s) {
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
inline std::uint64_t feed(tg::streaming_encoder& enc, const std::vector<object_case>& objects) {
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
inline bytes stream_to_string(const tg::global_metadata& meta, const std::vector<object_case>& objects,
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
inline bytes stream_unseekable(const tg::global_metadata& meta, const std::vector<object_case>& objects,
                               const tg::encode_options& options = fixed_options()) {
  unseekable_buf buf;
  std::ostream os(&buf);
  tg::streaming_encoder enc(os, meta, options);
  const std::uint64_t total = feed(enc, objects);
  EXPECT_EQ(total, buf.data.size());
  return buf.data;
}

inline bytes buffered(const tg::global_metadata& meta, const std::vector<object_case>& objects,
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
inline bytes without_total(bytes msg) {
  tgtest::put_be64(msg, 16, 0);
  tgtest::put_be64(msg, msg.size() - 16, 0);
  return msg;
}

inline std::vector<tgtest::wire_frame> frames_of_type(std::span<const std::byte> msg, std::uint16_t type) {
  std::vector<tgtest::wire_frame> out;
  for (const auto& f : tgtest::wire_frames(msg))
    if (f.type == type) out.push_back(f);
  return out;
}

inline bytes frame_bytes(std::span<const std::byte> msg, const tgtest::wire_frame& f) {
  return tgtest::slice(msg, f.offset, static_cast<std::size_t>(f.total_length));
}

/// Checks the streaming layout of spec 01 §18 on raw bytes: preamble flags,
/// frame order and flags, padding, header metadata = caller metadata,
/// footer index and hash bodies against the frames actually present, the
/// postamble. `backfilled` says what total_length must hold.
inline void check_layout(const bytes& msg, const tg::global_metadata& caller,
                         const tg::encode_options& options, std::size_t objects, std::size_t preceders,
                         bool backfilled) {
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
inline void check_decode_paths(const bytes& msg, const bytes& ref, const tg::global_metadata& caller,
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
inline void check_case(const tg::global_metadata& meta, const std::vector<object_case>& objects,
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

inline object_case raw(tg::data_object_descriptor d, bytes data) {
  return object_case{std::move(d), std::move(data), false, std::nullopt};
}

template <typename T>
inline bytes native_bytes(const std::vector<T>& v) {
  bytes b(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

inline tg::global_metadata meta_with_base(std::size_t n) {
  tg::global_metadata g;
  for (std::size_t i = 0; i < n; ++i) {
    g.base.push_back(cbor::value::make_map({{"name", cbor::value("object " + std::to_string(i))},
                                            {"index", cbor::value(static_cast<std::uint64_t>(i))}}));
  }
  g.extra.set("experiment", "streaming");
  return g;
}

inline tg::data_object_descriptor sp_szip(std::uint64_t n) {
  tg::data_object_descriptor d = tg::data_object_descriptor::contiguous(dtype::float64, {n});
  d.encoding = "simple_packing";
  d.compression = "szip";
  d.params.set("sp_bits_per_value", 16);
  d.params.set("szip_rsi", 128);
  d.params.set("szip_block_size", 16);
  d.params.set("szip_flags", 8);
  return d;
}

inline std::vector<double> smooth(std::size_t n, double phase = 0) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = 280.0 + 15.0 * std::sin(0.01 * static_cast<double>(i) + phase);
  return v;
}

}  // namespace tgtest::streaming

// Round-trip property tests: every dtype × byte order × shape, multi-object
// and multi-message buffers, hashing and aggregate policies, byte-order
// conversion and zero-copy decode (spec 01 §17, spec 02 §5–§7, §13, §14).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <tensogram.hpp>
#include "tensogram/format/aggregate_frames.hpp"
#include "test_support.hpp"

namespace {

namespace tg = tensogram;
namespace cbor = tensogram::cbor;
using tg::dtype;
using tgtest::bytes;

using sample = tgtest::random_sample;

sample make_sample(dtype t, std::uint64_t n, std::mt19937_64& rng) {
  return tgtest::make_random_sample(t, n, rng);
}

bytes to_bytes(std::span<const std::byte> s) {
  return bytes(s.begin(), s.end());
}

tg::encode_options fixed_options() {
  tg::encode_options o;
  o.fixed_provenance = tgtest::test_provenance();
  return o;
}

tg::message decode_bytes(const bytes& b, bool native = true, bool verify = false) {
  tg::decode_options o;
  o.native_byte_order = native;
  o.verify_hash = verify;
  return tg::decode(tg::buffer::borrowed(b), o);
}

struct shape_case {
  std::vector<std::uint64_t> shape;
  std::vector<std::uint64_t> strides;  // empty + non-empty shape = contiguous
};

const std::vector<shape_case>& shape_cases() {
  static const std::vector<shape_case> cases = {
      {{}, {}},         // rank 0: one element
      {{0}, {}},        // zero elements
      {{3, 0, 2}, {}},  // zero extent in the middle
      {{1}, {}},
      {{13}, {}},  // 13 bits → 2 bytes of bitmask
      {{4, 5}, {}},
      {{2, 3, 2, 3}, {}},               // 4-D
      {{4, 5}, {1, 4}},                 // Fortran-order strides (opaque)
      {{2, 3, 2, 3}, {72, 24, 12, 4}},  // byte strides (opaque)
      {{3}, {0}},                       // broadcast stride 0
      {{1000}, {}},
  };
  return cases;
}

class RoundTrip : public ::testing::TestWithParam<std::tuple<dtype, tg::byte_order>> {};

TEST_P(RoundTrip, EveryShape) {
  const auto [t, order] = GetParam();
  std::mt19937_64 rng(0x5EED0000u + static_cast<unsigned>(t) * 2 + (order == tg::byte_order::big ? 1 : 0));
  for (const shape_case& sc : shape_cases()) {
    SCOPED_TRACE(testing::Message() << tg::dtype_name(t) << " " << tg::byte_order_name(order)
                                    << " shape rank " << sc.shape.size() << " first "
                                    << (sc.shape.empty() ? 0 : sc.shape[0]));
    tg::data_object_descriptor d = tg::data_object_descriptor::contiguous(t, sc.shape, order);
    if (!sc.strides.empty()) d.strides = sc.strides;
    const std::uint64_t n = *tg::element_count(sc.shape);
    const sample s = make_sample(t, n, rng);
    const bytes& input = s.in(order);
    ASSERT_EQ(input.size(), *tg::raw_byte_size(t, n));

    tg::global_metadata meta;
    meta.base.push_back(cbor::value::make_map({{"name", "x"}}));
    const tg::object_input in{d, input};
    const bytes msg = tg::encode(meta, std::span(&in, 1), fixed_options());
    ASSERT_EQ(msg.size() % 8, 0u);
    EXPECT_EQ(tg::scan(msg), (std::vector<tg::scan_entry>{{0, msg.size()}}));

    // Native order (default).
    const tg::message m = decode_bytes(msg, true, true);
    ASSERT_EQ(m.num_objects(), 1u);
    const tg::decoded_object& o = m.object(0);
    EXPECT_EQ(o.descriptor(), d);
    EXPECT_EQ(o.shape(), sc.shape);
    EXPECT_EQ(o.strides(), d.strides);
    EXPECT_EQ(o.ndim(), sc.shape.size());
    EXPECT_EQ(o.dtype_string(), tg::dtype_name(t));
    EXPECT_EQ(to_bytes(o.bytes()), s.in(tg::native_byte_order()));
    EXPECT_EQ(o.data_byte_order(), tg::native_byte_order());
    const bool needs_swap = order != tg::native_byte_order() && tg::dtype_swap_unit(t) > 1;
    EXPECT_EQ(o.is_view(), !needs_swap);
    EXPECT_TRUE(o.has_hash());

    // Declared order.
    const tg::message raw = decode_bytes(msg, false);
    EXPECT_EQ(to_bytes(raw.object(0).bytes()), input);
    EXPECT_EQ(raw.object(0).data_byte_order(), order);
    EXPECT_EQ(raw.object(0).byte_order_string(), tg::byte_order_name(order));
    EXPECT_TRUE(raw.object(0).is_view());

    // Metadata enrichment: the base entry plus _reserved_.tensor.
    const cbor::value& b0 = m.global().base[0];
    EXPECT_EQ(*b0.find("name")->as_text(), "x");
    const cbor::value& tensor = *b0.find("_reserved_")->find("tensor");
    EXPECT_EQ(tensor.find("ndim")->as_uint64(), sc.shape.size());
    EXPECT_EQ(*tensor.find("dtype")->as_text(), tg::dtype_name(t));
    std::vector<std::uint64_t> shape_back;
    for (const auto& v : *tensor.find("shape")->as_array()) shape_back.push_back(*v.as_uint64());
    EXPECT_EQ(shape_back, sc.shape);
    std::vector<std::uint64_t> strides_back;
    for (const auto& v : *tensor.find("strides")->as_array()) strides_back.push_back(*v.as_uint64());
    EXPECT_EQ(strides_back, d.strides);

    // decode_object / decode_descriptors agree; re-encoding is idempotent.
    const tg::message one = tg::decode_object(tg::buffer::borrowed(msg), 0);
    EXPECT_EQ(to_bytes(one.object(0).bytes()), to_bytes(o.bytes()));
    const auto [dmeta, descs] = tg::decode_descriptors(msg);
    ASSERT_EQ(descs.size(), 1u);
    EXPECT_EQ(descs[0], d);
    EXPECT_EQ(dmeta.global(), m.global());
    tg::global_metadata again = raw.global();
    again.reserved = cbor::value::make_map();
    again.base[0].erase("_reserved_");
    const tg::object_input in2{raw.object(0).descriptor(), raw.object(0).bytes()};
    EXPECT_EQ(tg::encode(again, std::span(&in2, 1), fixed_options()), msg);
  }
}

std::string param_name(const testing::TestParamInfo<RoundTrip::ParamType>& info) {
  return std::string(tg::dtype_name(std::get<0>(info.param))) + "_" +
         std::string(tg::byte_order_name(std::get<1>(info.param)));
}

INSTANTIATE_TEST_SUITE_P(AllDtypes, RoundTrip,
                         ::testing::Combine(::testing::ValuesIn(tg::all_dtypes),
                                            ::testing::Values(tg::byte_order::big, tg::byte_order::little)),
                         param_name);

TEST(RoundTripBytes, SwapUnitPerDtype) {
  // Explicit byte patterns: bytes 0..w-1 of one element in the non-native
  // order come back reversed per swap unit.
  const tg::byte_order other =
      tg::native_byte_order() == tg::byte_order::big ? tg::byte_order::little : tg::byte_order::big;
  for (dtype t : tg::all_dtypes) {
    if (t == dtype::bitmask) continue;
    SCOPED_TRACE(tg::dtype_name(t));
    const std::size_t w = tg::dtype_width(t);
    bytes in(w);
    for (std::size_t i = 0; i < w; ++i) in[i] = static_cast<std::byte>(0x10 + i);
    const tg::object_input obj{tg::data_object_descriptor::contiguous(t, {1}, other), in};
    const bytes msg = tg::encode({}, std::span(&obj, 1), fixed_options());
    const bytes out = to_bytes(decode_bytes(msg).object(0).bytes());
    bytes expected(w);
    const std::size_t u = tg::dtype_swap_unit(t);
    for (std::size_t i = 0; i < w; ++i) expected[i] = in[(i / u) * u + (u - 1 - i % u)];
    EXPECT_EQ(out, expected);
  }
  // complex64 specifically: [r0 r1 r2 r3 i0 i1 i2 i3] → [r3 r2 r1 r0 i3 i2 i1 i0].
  bytes c = tgtest::B({1, 2, 3, 4, 5, 6, 7, 8});
  const tg::object_input obj{tg::data_object_descriptor::contiguous(dtype::complex64, {1}, other), c};
  const bytes msg = tg::encode({}, std::span(&obj, 1), fixed_options());
  EXPECT_EQ(to_bytes(decode_bytes(msg).object(0).bytes()), tgtest::B({4, 3, 2, 1, 8, 7, 6, 5}));
}

TEST(RoundTripZeroCopy, NativeViewPointsIntoTheInputNonNativeIsACopy) {
  std::mt19937_64 rng(7);
  const sample s = make_sample(dtype::float64, 64, rng);
  for (tg::byte_order order : {tg::byte_order::big, tg::byte_order::little}) {
    const tg::object_input obj{tg::data_object_descriptor::contiguous(dtype::float64, {64}, order),
                               s.in(order)};
    const bytes msg = tg::encode({}, std::span(&obj, 1), fixed_options());
    const tg::buffer buf = tg::buffer::borrowed(msg);
    const tg::message m = tg::decode(buf);
    const tg::decoded_object& o = m.object(0);
    if (order == tg::native_byte_order()) {
      EXPECT_TRUE(o.is_view());
      EXPECT_TRUE(buf.contains(o.bytes()));
      // The payload sits right after the 16-byte header of the data frame.
      const auto frames = tgtest::wire_frames(msg);
      EXPECT_EQ(o.bytes().data(), msg.data() + frames.back().offset + 16);
      EXPECT_EQ(o.data_buffer().kind(), tg::buffer::ownership::borrowed);
    } else {
      EXPECT_FALSE(o.is_view());
      EXPECT_FALSE(buf.contains(o.bytes()));
      EXPECT_EQ(o.data_buffer().kind(), tg::buffer::ownership::owned);
    }
    EXPECT_EQ(to_bytes(o.bytes()), s.in(tg::native_byte_order()));
  }
}

TEST(RoundTripZeroCopy, ViewOfOwnedMessageOutlivesTheMessageBuffer) {
  std::mt19937_64 rng(8);
  const sample s = make_sample(dtype::int32, 100, rng);
  const tg::object_input obj{
      tg::data_object_descriptor::contiguous(dtype::int32, {100}, tg::native_byte_order()),
      s.in(tg::native_byte_order())};
  std::optional<tg::message> m;
  {
    tg::buffer owned = tg::buffer::owned(tg::encode({}, std::span(&obj, 1), fixed_options()));
    m = tg::decode(owned);
  }
  EXPECT_TRUE(m->object(0).is_view());
  EXPECT_EQ(to_bytes(m->object(0).bytes()), s.in(tg::native_byte_order()));
}

TEST(RoundTripZeroCopy, RawPointerApiOwnsItsResult) {
  std::mt19937_64 rng(9);
  const sample s = make_sample(dtype::uint16, 10, rng);
  const tg::object_input obj{
      tg::data_object_descriptor::contiguous(dtype::uint16, {10}, tg::native_byte_order()),
      s.in(tg::native_byte_order())};
  std::optional<tg::message> m;
  {
    const bytes msg = tg::encode({}, std::span(&obj, 1), fixed_options());
    m = tg::decode(reinterpret_cast<const std::uint8_t*>(msg.data()), msg.size());
  }
  EXPECT_EQ(to_bytes(m->object(0).bytes()), s.in(tg::native_byte_order()));
  EXPECT_NE(m->object(0).data_buffer().kind(), tg::buffer::ownership::borrowed);
}

// --- multi-object and multi-message -------------------------------------------------

struct random_object {
  tg::data_object_descriptor d;
  sample s;
};

random_object make_random_object(std::mt19937_64& rng) {
  const dtype t = tg::all_dtypes[rng() % 15];
  const tg::byte_order order = (rng() & 1) != 0 ? tg::byte_order::big : tg::byte_order::little;
  std::vector<std::uint64_t> shape;
  const std::size_t rank = rng() % 4;
  for (std::size_t i = 0; i < rank; ++i) shape.push_back(rng() % 6);
  random_object r{tg::data_object_descriptor::contiguous(t, shape, order), {}};
  r.s = make_sample(t, *tg::element_count(shape), rng);
  return r;
}

TEST(RoundTripMulti, ManyObjectsPerMessage) {
  std::mt19937_64 rng(0xABCDEF);
  for (int trial = 0; trial < 40; ++trial) {
    SCOPED_TRACE(trial);
    const std::size_t count = rng() % 12;
    std::vector<random_object> objs;
    for (std::size_t i = 0; i < count; ++i) objs.push_back(make_random_object(rng));
    std::vector<tg::object_input> in;
    for (const auto& o : objs) in.push_back({o.d, o.s.in(*o.d.byte_order)});
    tg::global_metadata meta;
    const std::size_t nbase = count == 0 ? 0 : rng() % (count + 1);
    for (std::size_t i = 0; i < nbase; ++i)
      meta.base.push_back(cbor::value::make_map({{"i", cbor::value(i)}}));
    meta.extra.set("trial", trial);
    const bytes msg = tg::encode(meta, in, fixed_options());

    const tg::message m = decode_bytes(msg, true, true);
    ASSERT_EQ(m.num_objects(), count);
    ASSERT_EQ(m.global().base.size(), count);  // padded
    for (std::size_t i = 0; i < count; ++i) {
      EXPECT_EQ(m.object(i).descriptor(), objs[i].d);
      EXPECT_EQ(to_bytes(m.object(i).bytes()), objs[i].s.in(tg::native_byte_order()));
      EXPECT_EQ(m.global().base[i].contains("i"), i < nbase);
      EXPECT_TRUE(m.global().base[i].contains("_reserved_"));
      const tg::message one = tg::decode_object(tg::buffer::borrowed(msg), i);
      EXPECT_EQ(to_bytes(one.object(0).bytes()), to_bytes(m.object(i).bytes()));
      EXPECT_EQ(one.global(), m.global());
    }
    EXPECT_EQ(m.get_metadata().try_get_int("trial"), trial);

    // The index frame lists the real frame positions.
    const auto frames = tgtest::wire_frames(msg);
    std::vector<std::uint64_t> offsets;
    std::vector<std::uint64_t> lengths;
    for (const auto& f : frames) {
      if (f.type == 9) {
        offsets.push_back(f.offset);
        lengths.push_back(f.total_length);
      }
    }
    if (count > 0) {
      const auto idx = tg::format::parse_index_body(tgtest::frame_body(msg, frames[1]));
      EXPECT_EQ(idx.offsets, offsets);
      EXPECT_EQ(idx.lengths, lengths);
    }
  }
}

TEST(RoundTripMulti, IndexWithWideOffsetsNeedsAThirdPass) {
  // 30 objects push offsets past 255 (pass 2 body longer than pass 1) and
  // one large object pushes later offsets past 65535.
  std::vector<bytes> payloads;
  std::vector<tg::object_input> in;
  for (int i = 0; i < 30; ++i) payloads.emplace_back(i == 3 ? 70000 : 4, static_cast<std::byte>(i));
  for (const auto& p : payloads) {
    in.push_back({tg::data_object_descriptor::contiguous(dtype::uint8, {p.size()}, tg::byte_order::big), p});
  }
  const bytes msg = tg::encode({}, in, fixed_options());
  const auto frames = tgtest::wire_frames(msg);
  const auto idx = tg::format::parse_index_body(tgtest::frame_body(msg, frames[1]));
  std::size_t k = 0;
  for (const auto& f : frames) {
    if (f.type != 9) continue;
    ASSERT_LT(k, idx.offsets.size());
    EXPECT_EQ(idx.offsets[k], f.offset);
    EXPECT_EQ(idx.lengths[k], f.total_length);
    EXPECT_EQ(f.offset % 8, 0u);
    ++k;
  }
  EXPECT_EQ(k, 30u);
  EXPECT_GT(idx.offsets.back(), 65535u);
  const tg::message m = decode_bytes(msg, true, true);
  for (std::size_t i = 0; i < 30; ++i) EXPECT_EQ(to_bytes(m.object(i).bytes()), payloads[i]);
  EXPECT_EQ(to_bytes(tg::decode_object(tg::buffer::borrowed(msg), 29).object(0).bytes()), payloads[29]);
}

TEST(RoundTripMulti, MultiMessageBuffersScannedAndDecoded) {
  std::mt19937_64 rng(0x600D);
  bytes file;
  std::vector<tg::scan_entry> expected;
  std::vector<std::vector<random_object>> contents;
  for (int i = 0; i < 25; ++i) {
    // Garbage (never containing the start magic) between some messages.
    const std::size_t gap = rng() % 3 == 0 ? rng() % 40 : 0;
    for (std::size_t g = 0; g < gap; ++g) file.push_back(static_cast<std::byte>('a' + rng() % 20));
    std::vector<random_object> objs;
    const std::size_t count = 1 + rng() % 3;
    std::vector<tg::object_input> in;
    for (std::size_t k = 0; k < count; ++k) objs.push_back(make_random_object(rng));
    for (const auto& o : objs) in.push_back({o.d, o.s.in(*o.d.byte_order)});
    tg::global_metadata meta;
    meta.extra.set("message", i);
    const bytes msg = tg::encode(meta, in, fixed_options());
    expected.push_back({file.size(), msg.size()});
    file.insert(file.end(), msg.begin(), msg.end());
    contents.push_back(std::move(objs));
  }
  file.insert(file.end(), 13, std::byte{'z'});
  const auto entries = tg::scan(file);
  ASSERT_EQ(entries, expected);
  EXPECT_EQ(tg::format::forward_scan(file, 0, file.size()), expected);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::span<const std::byte> msg =
        std::span<const std::byte>(file).subspan(entries[i].offset, entries[i].length);
    const tg::message m = tg::decode(tg::buffer::borrowed(msg));
    EXPECT_EQ(m.get_metadata().try_get_int("message"), static_cast<std::int64_t>(i));
    ASSERT_EQ(m.num_objects(), contents[i].size());
    for (std::size_t k = 0; k < contents[i].size(); ++k) {
      EXPECT_EQ(to_bytes(m.object(k).bytes()), contents[i][k].s.in(tg::native_byte_order()));
    }
    // A buffer starting at a message and running to the end of the file
    // decodes that message (bytes beyond total_length are ignored).
    const tg::message rest =
        tg::decode(tg::buffer::borrowed(std::span<const std::byte>(file).subspan(entries[i].offset)));
    EXPECT_EQ(rest.get_metadata().try_get_int("message"), static_cast<std::int64_t>(i));
  }
}

// --- hashing and aggregate policies ---------------------------------------------------

std::vector<std::uint16_t> frame_types(const bytes& msg) {
  std::vector<std::uint16_t> out;
  for (const auto& f : tgtest::wire_frames(msg)) out.push_back(f.type);
  return out;
}

TEST(Hashing, OnAndOffWithAndWithoutObjects) {
  const bytes payload = tgtest::B({1, 2, 3, 4});
  const tg::object_input obj{tg::data_object_descriptor::contiguous(dtype::uint8, {4}, tg::byte_order::big),
                             payload};
  for (bool hashing : {true, false}) {
    for (bool any : {true, false}) {
      SCOPED_TRACE(testing::Message() << "hashing " << hashing << " objects " << any);
      tg::encode_options o = fixed_options();
      o.hash_algo = hashing ? "xxh3" : "none";
      const bytes msg = tg::encode({}, std::span(&obj, any ? 1 : 0), o);
      const std::uint16_t flags = tgtest::be16(msg, 10);
      if (hashing) {
        EXPECT_EQ(flags, any ? 0x0095 : 0x0081);
      } else {
        EXPECT_EQ(flags, any ? 0x0005 : 0x0001);
      }
      const auto frames = tgtest::wire_frames(msg);
      if (any) {
        EXPECT_EQ(frame_types(msg),
                  hashing ? (std::vector<std::uint16_t>{1, 2, 3, 9}) : (std::vector<std::uint16_t>{1, 2, 9}));
      } else {
        EXPECT_EQ(frame_types(msg), (std::vector<std::uint16_t>{1}));
      }
      for (const auto& f : frames) {
        const std::uint16_t expected =
            static_cast<std::uint16_t>((f.type == 9 ? 0x0001 : 0) | (hashing ? 0x0002 : 0));
        EXPECT_EQ(f.flags, expected) << "type " << f.type;
        if (hashing) {
          EXPECT_EQ(f.slot, tg::format::xxh3_64(tgtest::frame_body(msg, f)));
        } else {
          EXPECT_EQ(f.slot, 0u);
        }
      }
      // No footer frames: first_footer_offset is the postamble itself.
      EXPECT_EQ(tgtest::be64(msg, msg.size() - 24), msg.size() - 24);
      const tg::message m = decode_bytes(msg);
      ASSERT_EQ(m.num_objects(), any ? 1u : 0u);
      if (any) {
        EXPECT_EQ(m.object(0).has_hash(), hashing);
        EXPECT_EQ(m.object(0).hash_value(), hashing ? tg::hex16(frames.back().slot) : "");
        if (hashing) {
          EXPECT_NO_THROW((void)decode_bytes(msg, true, true));
        } else {
          EXPECT_THROW((void)decode_bytes(msg, true, true), tg::missing_hash_error);
        }
      } else {
        EXPECT_NO_THROW((void)decode_bytes(msg, true, true));  // nothing to verify
        EXPECT_TRUE(m.global().base.empty());
        EXPECT_TRUE(m.global().reserved.contains("uuid"));
      }
    }
  }
}

TEST(Hashing, HashAlgoNames) {
  tg::encode_options o;
  EXPECT_TRUE(o.hashing());
  o.hash_algo = "";
  EXPECT_FALSE(o.hashing());
  o.hash_algo = "none";
  EXPECT_FALSE(o.hashing());
  o.hash_algo = "md5";
  EXPECT_THROW((void)o.hashing(), tg::invalid_arg_error);
  try {
    (void)tg::encode(tg::global_metadata{}, std::span<const tg::object_input>{}, o);
    FAIL();
  } catch (const tg::invalid_arg_error& e) {
    EXPECT_EQ(e.detail(), "unknown hash type: md5; expected \"xxh3\" or \"none\"");
  }
  EXPECT_EQ(tg::compute_hash(nullptr, 0), "2d06800538d394c2");
  EXPECT_THROW((void)tg::compute_hash(nullptr, 0, "xxh64"), tg::invalid_arg_error);
}

TEST(Hashing, AggregatePolicies) {
  const bytes p1 = tgtest::B({1, 2, 3, 4});
  const bytes p2 = tgtest::B({9, 9});
  const std::vector<tg::object_input> in = {
      {tg::data_object_descriptor::contiguous(dtype::uint8, {4}, tg::byte_order::big), p1},
      {tg::data_object_descriptor::contiguous(dtype::int16, {1}, tg::byte_order::little), p2}};
  struct expectation {
    tg::aggregate_hash_policy policy;
    std::uint16_t flags;
    std::vector<std::uint16_t> types;
  };
  for (const expectation& e : std::vector<expectation>{
           {tg::aggregate_hash_policy::automatic, 0x0095, {1, 2, 3, 9, 9}},
           {tg::aggregate_hash_policy::header, 0x0095, {1, 2, 3, 9, 9}},
           {tg::aggregate_hash_policy::none, 0x0085, {1, 2, 9, 9}},
           {tg::aggregate_hash_policy::footer, 0x00A5, {1, 2, 9, 9, 5}},
           {tg::aggregate_hash_policy::both, 0x00B5, {1, 2, 3, 9, 9, 5}},
       }) {
    SCOPED_TRACE(static_cast<int>(e.policy));
    tg::encode_options o = fixed_options();
    o.aggregate_hash = e.policy;
    const bytes msg = tg::encode({}, in, o);
    EXPECT_EQ(tgtest::be16(msg, 10), e.flags);
    EXPECT_EQ(frame_types(msg), e.types);
    const auto frames = tgtest::wire_frames(msg);
    std::vector<std::string> slots;
    for (const auto& f : frames) {
      if (f.type == 9) slots.push_back(tg::hex16(f.slot));
    }
    std::optional<bytes> header_body;
    std::optional<bytes> footer_body;
    std::optional<std::size_t> footer_at;
    for (const auto& f : frames) {
      EXPECT_EQ(f.offset % 8, 0u);
      if (f.type == 3 || f.type == 5) {
        const auto body = tgtest::frame_body(msg, f);
        const auto h = tg::format::parse_hash_body(body);
        EXPECT_EQ(h.algorithm, "xxh3");
        EXPECT_EQ(h.hashes, slots);
        (f.type == 3 ? header_body : footer_body) = to_bytes(body);
        if (f.type == 5) footer_at = f.offset;
      }
    }
    if (header_body && footer_body) {
      EXPECT_EQ(*header_body, *footer_body);
    }
    const std::size_t post = msg.size() - 24;
    if (footer_at) {
      // The footer hash frame follows the last data frame (aligned) and is
      // the first footer frame.
      const auto& last_data = frames[frames.size() - 2];
      EXPECT_EQ(*footer_at, (last_data.offset + last_data.total_length + 7) / 8 * 8);
      EXPECT_EQ(tgtest::be64(msg, post), *footer_at);
      EXPECT_EQ(post, (*footer_at + frames.back().total_length + 7) / 8 * 8);
    } else {
      EXPECT_EQ(tgtest::be64(msg, post), post);
    }
    EXPECT_EQ(tgtest::be64(msg, post + 8), msg.size());
    const tg::message m = decode_bytes(msg, true, true);
    EXPECT_EQ(to_bytes(m.object(0).bytes()), p1);
    EXPECT_EQ(m.object(1).descriptor().byte_order, tg::byte_order::little);
    EXPECT_EQ(to_bytes(tg::decode_object(tg::buffer::borrowed(msg), 1).object(0).bytes()),
              to_bytes(m.object(1).bytes()));
  }
  // With hashing off the policy is ignored.
  tg::encode_options off = fixed_options();
  off.hash_algo = "none";
  off.aggregate_hash = tg::aggregate_hash_policy::both;
  const bytes msg = tg::encode({}, in, off);
  EXPECT_EQ(tgtest::be16(msg, 10), 0x0005);
  EXPECT_EQ(frame_types(msg), (std::vector<std::uint16_t>{1, 2, 9, 9}));
}

// --- encode_into, pre-encoded, provenance ---------------------------------------------

TEST(Encode, EncodeIntoMatchesEncodeAndReusesTheVector) {
  const bytes p = tgtest::B({1, 2, 3, 4, 5, 6, 7, 8});
  const tg::object_input in{
      tg::data_object_descriptor::contiguous(dtype::float32, {2}, tg::byte_order::little), p};
  const bytes expected = tg::encode({}, std::span(&in, 1), fixed_options());
  std::vector<std::byte> out(10000, std::byte{0xEE});
  tg::encode_into({}, std::span(&in, 1), fixed_options(), out);
  EXPECT_EQ(out, expected);
  tg::encode_into({}, std::span(&in, 1), fixed_options(), out);
  EXPECT_EQ(out, expected);
}

TEST(Encode, FreshAndReusedOutputsAgreeForLargeMultiObjectMessages) {
  // Payloads spanning several 32 KiB copy/hash blocks, three objects: the
  // fresh output grows by appending, the reused one is written in place.
  std::vector<double> a(10001);
  std::vector<float> b(20003);
  std::vector<std::uint16_t> c(7);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = 0.5 * static_cast<double>(i);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = -0.25F * static_cast<float>(i);
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = static_cast<std::uint16_t>(i * 3);
  const auto as_bytes = [](const auto& v) { return std::as_bytes(std::span(v)); };
  const std::vector<tg::object_input> in{
      {tg::data_object_descriptor::contiguous(dtype::float64, {a.size()}), as_bytes(a)},
      {tg::data_object_descriptor::contiguous(dtype::float32, {b.size()}), as_bytes(b)},
      {tg::data_object_descriptor::contiguous(dtype::uint16, {c.size()}), as_bytes(c)}};
  const bytes fresh = tg::encode({}, in, fixed_options());
  std::vector<std::byte> reused(fresh.size() + 100, std::byte{0xEE});
  tg::encode_into({}, in, fixed_options(), reused);
  EXPECT_EQ(reused, fresh);
  const tg::message m = decode_bytes(fresh, true);
  ASSERT_EQ(m.num_objects(), 3U);
  EXPECT_EQ(to_bytes(m.object(1).bytes()), bytes(as_bytes(b).begin(), as_bytes(b).end()));
  // A NaN in a later block of the second object is named by its element,
  // on both paths.
  b[15000] = std::numeric_limits<float>::quiet_NaN();
  for (const bool into : {false, true}) {
    try {
      if (into) {
        tg::encode_into({}, in, fixed_options(), reused);
      } else {
        (void)tg::encode({}, in, fixed_options());
      }
      ADD_FAILURE() << "NaN accepted";
    } catch (const tg::encoding_error& e) {
      EXPECT_NE(std::string(e.what()).find("at element 15000 of float32 array"), std::string::npos)
          << e.what();
    }
  }
}

TEST(Encode, PreEncodedStoresBytesVerbatim) {
  // NaN bytes are not scanned in pre-encoded mode.
  const bytes nan = tgtest::B({0x7F, 0xC0, 0x00, 0x00});
  const tg::object_input in{tg::data_object_descriptor::contiguous(dtype::float32, {1}, tg::byte_order::big),
                            nan};
  EXPECT_THROW((void)tg::encode({}, std::span(&in, 1), fixed_options()), tg::encoding_error);
  const bytes msg = tg::encode_pre_encoded({}, std::span(&in, 1), fixed_options());
  EXPECT_EQ(to_bytes(decode_bytes(msg, false).object(0).bytes()), nan);
  // The size rule still applies.
  const tg::object_input bad{tg::data_object_descriptor::contiguous(dtype::float32, {2}, tg::byte_order::big),
                             nan};
  EXPECT_THROW((void)tg::encode_pre_encoded({}, std::span(&bad, 1), fixed_options()), tg::metadata_error);
}

TEST(Encode, ProvenanceIsWritten) {
  const bytes msg = tg::encode(tg::global_metadata{}, std::span<const tg::object_input>{}, fixed_options());
  const tg::message m = decode_bytes(msg);
  const cbor::value& r = m.global().reserved;
  EXPECT_EQ(*r.find("time")->as_text(), "2026-01-02T03:04:05Z");
  EXPECT_EQ(*r.find("uuid")->as_text(), "00000000-0000-4000-8000-000000000000");
  EXPECT_EQ(*r.find("encoder")->find("name")->as_text(), "tensogram");
  // Without a fixed provenance: this library's name, a v4 UUID, a UTC time.
  const tg::message live =
      decode_bytes(tg::encode(tg::global_metadata{}, std::span<const tg::object_input>{}));
  const std::string uuid = *live.global().reserved.find("uuid")->as_text();
  ASSERT_EQ(uuid.size(), 36u);
  EXPECT_EQ(uuid[14], '4');
  EXPECT_NE(std::string("89ab").find(uuid[19]), std::string::npos);
  EXPECT_EQ(uuid, [&] {
    std::string lower = uuid;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    return lower;
  }());
  const std::string time = *live.global().reserved.find("time")->as_text();
  ASSERT_EQ(time.size(), 20u);
  EXPECT_EQ(time[4], '-');
  EXPECT_EQ(time[10], 'T');
  EXPECT_EQ(time[19], 'Z');
  EXPECT_EQ(*live.global().reserved.find("encoder")->find("name")->as_text(), tg::library_encoder_name);
  EXPECT_NE(*decode_bytes(tg::encode(tg::global_metadata{}, std::span<const tg::object_input>{}))
                 .global()
                 .reserved.find("uuid")
                 ->as_text(),
            uuid);
}

TEST(Encode, MessageLevelExtraAndNestedReservedAllowed) {
  tg::global_metadata meta;
  meta.extra.set("note", "hello");
  meta.base.push_back(cbor::value::make_map({{"deep", cbor::value::make_map({{"_reserved_", 1}})}}));
  const bytes p = tgtest::B({1});
  const tg::object_input in{tg::data_object_descriptor::contiguous(dtype::uint8, {1}), p};
  const tg::message m = decode_bytes(tg::encode(meta, std::span(&in, 1), fixed_options()));
  EXPECT_EQ(m.get_metadata().get_string("note"), "hello");
  EXPECT_EQ(m.get_metadata().get_int("deep._reserved_"), 1);
}

// --- decode_range -----------------------------------------------------------------------

TEST(DecodeRange, SlicesInNativeOrder) {
  std::vector<std::int32_t> values(20);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::int32_t>(i * 1000 - 7);
  bytes be;
  for (std::int32_t v : values) {
    const auto u = static_cast<std::uint32_t>(v);
    for (int b = 3; b >= 0; --b) be.push_back(static_cast<std::byte>((u >> (8 * b)) & 0xFF));
  }
  const tg::object_input in{tg::data_object_descriptor::contiguous(dtype::int32, {4, 5}, tg::byte_order::big),
                            be};
  const bytes msg = tg::encode({}, std::span(&in, 1), fixed_options());
  const tg::buffer buf = tg::buffer::borrowed(msg);
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges = {
      {2, 3}, {0, 1}, {19, 1}, {5, 0}, {0, 20}};
  const std::vector<tg::buffer> parts = tg::decode_range(buf, 0, ranges);
  ASSERT_EQ(parts.size(), ranges.size());
  for (std::size_t r = 0; r < ranges.size(); ++r) {
    ASSERT_EQ(parts[r].size(), ranges[r].second * 4);
    for (std::uint64_t k = 0; k < ranges[r].second; ++k) {
      std::int32_t v;
      std::memcpy(&v, parts[r].data() + k * 4, 4);
      EXPECT_EQ(v, values[ranges[r].first + k]);
    }
  }
  // Declared order on request.
  tg::decode_options raw;
  raw.native_byte_order = false;
  const auto declared =
      tg::decode_range(buf, 0, std::vector<std::pair<std::uint64_t, std::uint64_t>>{{1, 2}}, raw);
  EXPECT_EQ(to_bytes(declared[0].bytes()), tgtest::slice(be, 4, 8));
  // Raw-pointer variants.
  const auto* p = reinterpret_cast<const std::uint8_t*>(msg.data());
  const auto vecs = tg::decode_range(p, msg.size(), 0, {{2, 3}, {0, 1}});
  ASSERT_EQ(vecs.size(), 2u);
  EXPECT_EQ(vecs[0].size(), 12u);
  const auto joined = tg::decode_range_joined(p, msg.size(), 0, {{2, 3}, {0, 1}});
  EXPECT_EQ(joined.size(), 16u);
  EXPECT_EQ(std::memcmp(joined.data(), vecs[0].data(), 12), 0);
  EXPECT_TRUE(tg::decode_range(buf, 0, {}).empty());
}

TEST(DecodeRange, Errors) {
  const bytes p(10 * 8, std::byte{1});
  const bytes bits = tgtest::B({0xFF, 0x80});
  const std::vector<tg::object_input> in = {
      {tg::data_object_descriptor::contiguous(dtype::float64, {10}, tg::byte_order::little), p},
      {tg::data_object_descriptor::contiguous(dtype::bitmask, {9}, tg::byte_order::big), bits}};
  const bytes msg = tg::encode({}, in, fixed_options());
  const tg::buffer buf = tg::buffer::borrowed(msg);
  using R = std::vector<std::pair<std::uint64_t, std::uint64_t>>;
  EXPECT_THROW((void)tg::decode_range(buf, 0, R{{8, 3}}), tg::encoding_error);
  EXPECT_THROW((void)tg::decode_range(buf, 0, R{{11, 0}}), tg::encoding_error);
  EXPECT_THROW((void)tg::decode_range(buf, 0, R{{1, ~std::uint64_t{0}}}), tg::encoding_error);  // overflow
  EXPECT_NO_THROW((void)tg::decode_range(buf, 0, R{{10, 0}}));
  try {
    (void)tg::decode_range(buf, 1, R{{0, 1}});
    FAIL();
  } catch (const tg::encoding_error& e) {
    EXPECT_NE(std::string(e.what()).find("partial range decode not supported for bitmask dtype"),
              std::string::npos);
  }
  try {
    (void)tg::decode_range(buf, 2, R{{0, 1}});
    FAIL();
  } catch (const tg::object_error& e) {
    EXPECT_NE(std::string(e.what()).find("object index 2 out of range (num_objects=2)"), std::string::npos);
  }
  EXPECT_THROW((void)tg::decode_range(buf, 5, R{}), tg::object_error);
}

}  // namespace

// --- decode_object_masks ------------------------------------------------------------

TEST(DecodeObjectMasks, ReturnsThePackedMaskOfEachKindPerObject) {
  // Object 0: NaN at 1 and 9, +Inf at 4; object 1: finite (no masks).
  std::vector<double> v(12, 1.5);
  v[1] = std::numeric_limits<double>::quiet_NaN();
  v[9] = std::numeric_limits<double>::quiet_NaN();
  v[4] = std::numeric_limits<double>::infinity();
  std::vector<double> finite(3, 2.0);
  const auto d0 = tg::data_object_descriptor::contiguous(dtype::float64, {12});
  const auto d1 = tg::data_object_descriptor::contiguous(dtype::float64, {3});
  const tg::object_input objects[] = {{d0, std::as_bytes(std::span(v))},
                                      {d1, std::as_bytes(std::span(finite))}};
  tg::encode_options o = fixed_options();
  o.allow_nan = true;
  o.allow_inf = true;
  o.small_mask_threshold_bytes = 0;  // keep the requested method (roaring)
  const bytes msg = tg::encode({}, objects, o);

  const std::vector<tg::object_masks> masks = tg::decode_object_masks(msg);
  ASSERT_EQ(masks.size(), 2u);
  ASSERT_TRUE(masks[0][0].has_value());              // nan
  EXPECT_EQ(*masks[0][0], tgtest::B({0x40, 0x40}));  // bits 1 and 9, MSB first
  ASSERT_TRUE(masks[0][1].has_value());              // inf+
  EXPECT_EQ(*masks[0][1], tgtest::B({0x08, 0x00}));
  EXPECT_FALSE(masks[0][2].has_value());  // no -Inf
  for (const auto& m : masks[1]) EXPECT_FALSE(m.has_value());
  // A truncated message is a framing error, not an empty answer.
  EXPECT_THROW((void)tg::decode_object_masks(std::span(msg).first(msg.size() / 2)), tg::framing_error);
}

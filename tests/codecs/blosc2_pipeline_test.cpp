// blosc2 through the pipeline and the message API (spec 03 §8.4, §11.3):
// blosclz on its own (round trips and hand-made streams), lossless round
// trips with ranges and threads, simple packing typesizes, the reference
// frames through the pipeline, errors, and the mask method.
#include <algorithm>
#include <optional>
#include <random>

#include "blosc2_support.hpp"
#include "tensogram/codecs/blosclz.hpp"

namespace {

using namespace tgtest::blosc2;

// ---------------------------------------------------------------------------
// blosclz on its own.

bytes blosclz_round_trip(const bytes& in, int clevel) {
  cx::blosclz_encoder enc(clevel);
  bytes out(in.size() + in.size() / 16 + 64);
  const std::size_t n = enc.compress(in, out);
  EXPECT_GT(n, 0U);
  out.resize(n);
  bytes back(in.size());
  EXPECT_EQ(cx::blosclz_decompress(out, back), in.size());
  return back;
}

TEST(Blosclz, RoundTrips) {
  std::mt19937_64 rng(3);
  for (int clevel : {1, 5, 9}) {
    for (std::size_t n : {1UL, 2UL, 5UL, 6UL, 7UL, 40UL, 1000UL, 70000UL, 200000UL}) {
      for (kind k : {kind::smooth, kind::noise, kind::constant, kind::zeros}) {
        const bytes in = make_data(k, n, 3, rng);
        EXPECT_EQ(blosclz_round_trip(in, clevel), in) << clevel << " " << n << " " << static_cast<int>(k);
      }
    }
  }
  // Far matches (distance > 8191) and long lengths.
  bytes in = make_data(kind::noise, 30000, 1, rng);
  in.insert(in.end(), in.begin() + 100, in.begin() + 20000);  // copy at distance 29900
  in.insert(in.end(), 5000, std::byte{9});
  EXPECT_EQ(blosclz_round_trip(in, 5), in);
  cx::blosclz_encoder enc(5);
  bytes out(in.size());
  EXPECT_LT(enc.compress(in, out), 30000U + 30000U / 32 + 200);  // the noise, plus little more
  // No room: 0.
  bytes small(10);
  EXPECT_EQ(enc.compress(make_data(kind::noise, 100, 1, rng), small), 0U);
}

TEST(Blosclz, HandMadeStreams) {
  auto decode = [](std::initializer_list<unsigned> s, std::size_t cap) {
    const bytes in = tgtest::B(s);
    bytes out(cap);
    const std::size_t n = cx::blosclz_decompress(in, out);
    if (n != cx::blosclz_error) out.resize(n);
    return std::pair{n, out};
  };
  // "abc", then a match of 5 at distance 3 (overlapping), then "z".
  {
    const auto [n, out] = decode({0x02, 'a', 'b', 'c', 0x60, 0x02, 0x00, 'z'}, 16);
    EXPECT_EQ(n, 9U);
    EXPECT_EQ(out, text_bytes("abcabcabz"));
  }
  // The first control byte is taken modulo 32: 0xE2 = 3 literals.
  EXPECT_EQ(decode({0xE2, 'a', 'b', 'c'}, 8).second, text_bytes("abc"));
  // A match that ends the stream is not copied.
  EXPECT_EQ(decode({0x02, 'a', 'b', 'c', 0x60, 0x02}, 16).second, text_bytes("abc"));
  // Extended length: code 7, extension 255 + 1 → 9 + 256 = 265 bytes of 'x'.
  {
    const auto [n, out] = decode({0x00, 'x', 0xE0, 255, 1, 0x00, 0x00, 'y'}, 400);
    ASSERT_EQ(n, 267U);
    EXPECT_EQ(out[265], std::byte{'x'});
    EXPECT_EQ(out[266], std::byte{'y'});
  }
  // Far match: 9000 literal bytes, then distance 8192 + 808 = 9000, length 4.
  {
    bytes s;
    bytes lits;
    for (std::size_t i = 0; i < 9000; ++i) lits.push_back(static_cast<std::byte>(i * 13 + i / 256));
    for (std::size_t i = 0; i < 9000; i += 30) {
      s.push_back(std::byte{29});
      s.insert(s.end(), lits.begin() + static_cast<std::ptrdiff_t>(i),
               lits.begin() + static_cast<std::ptrdiff_t>(i + 30));
    }
    s.insert(s.end(), {std::byte{0x5F}, std::byte{0xFF}, std::byte{0x03}, std::byte{0x28}, std::byte{0x00},
                       std::byte{'q'}});
    bytes out(9005);
    ASSERT_EQ(cx::blosclz_decompress(s, out), 9005U);
    EXPECT_EQ(tgtest::slice(out, 9000, 4), tgtest::slice(lits, 0, 4));
  }
  // Malformed: distance before the start, output overflow, truncated input.
  EXPECT_EQ(decode({0x00, 'a', 0x20, 0x05, 0x00, 'b'}, 16).first, cx::blosclz_error);
  EXPECT_EQ(decode({0x03, 'a', 'b', 'c', 'd'}, 3).first, cx::blosclz_error);
  EXPECT_EQ(decode({0x05, 'a', 'b'}, 16).first, cx::blosclz_error);
  EXPECT_EQ(decode({0x00, 'a', 0xE0, 255}, 400).first, cx::blosclz_error);
  EXPECT_EQ(decode({}, 4).first, cx::blosclz_error);
}

// ---------------------------------------------------------------------------
// Through the pipeline and the message API.

using range_list = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

void expect_ranges(const bytes& msg, const range_list& ranges, const bytes& full, std::size_t width) {
  const std::vector<tg::buffer> parts = tg::decode_range(tg::buffer::borrowed(msg), 0, ranges);
  ASSERT_EQ(parts.size(), ranges.size());
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    EXPECT_EQ(to_bytes(parts[i].bytes()),
              tgtest::slice(full, ranges[i].first * width, ranges[i].second * width))
        << "range " << i;
  }
}

TEST(Blosc2Pipeline, LosslessRoundTripsRangesAndThreads) {
  std::mt19937_64 rng(41);
  const std::uint64_t n = 3001;
  const range_list ranges = {{0, 1}, {3, 17}, {n / 2, n / 3}, {n - 5, 5}, {0, n}, {7, 0}};
  for (tg::dtype t : {tg::dtype::float32, tg::dtype::float64, tg::dtype::int16, tg::dtype::uint8,
                      tg::dtype::complex64, tg::dtype::uint64}) {
    const tgtest::random_sample s = tgtest::make_random_sample(t, n, rng, true);
    const std::size_t w = tg::dtype_width(t);
    for (tg::byte_order order : {tg::byte_order::little, tg::byte_order::big}) {
      for (const std::string filter : {"none", "shuffle"}) {
        for (const char* codec : {"", "blosclz", "lz4", "lz4hc", "zlib", "zstd"}) {
          SCOPED_TRACE(testing::Message() << tg::dtype_name(t) << " " << tg::byte_order_name(order) << " "
                                          << filter << " codec '" << codec << "'");
          tg::data_object_descriptor d = tg::data_object_descriptor::contiguous(t, {n}, order);
          d.compression = "blosc2";
          d.filter = filter;
          if (filter == "shuffle") d.params.set("shuffle_element_size", cbor::value(w));
          if (*codec != 0) {
            d.params.set("blosc2_codec", cbor::value(codec));
            d.params.set("blosc2_clevel", cbor::value(7));
          }
          const bytes msg = encode_one(d, s.in(order));
          const tg::message m = decode_msg(msg, true, true, true);
          EXPECT_EQ(to_bytes(m.object(0).bytes()), s.in(tg::native_byte_order()));
          EXPECT_EQ(to_bytes(decode_msg(msg, false).object(0).bytes()), s.in(order));
          // Defaults are not written back (spec 03 §2).
          const tg::data_object_descriptor& back = m.object(0).descriptor();
          EXPECT_EQ(back.params.find("blosc2_codec") != nullptr, *codec != 0);
          EXPECT_EQ(back.params.find("blosc2_clevel") != nullptr, *codec != 0);
          // Blocks on two threads: the same bytes.
          tg::encode_options two = fixed_options();
          two.threads = 2;
          EXPECT_EQ(encode_one(d, s.in(order), two), msg);
          tg::decode_options dtwo;
          dtwo.threads = 2;
          EXPECT_EQ(to_bytes(tg::decode(tg::buffer::borrowed(msg), dtwo).object(0).bytes()),
                    s.in(tg::native_byte_order()));
          if (filter == "shuffle") {
            expect_error<tg::encoding_error>(
                [&] { (void)tg::decode_range(tg::buffer::borrowed(msg), 0, ranges); }, "filter");
          } else {
            expect_ranges(msg, ranges, s.in(tg::native_byte_order()), w);
            const range_list past = {{n - 2, 5}};
            EXPECT_THROW((void)tg::decode_range(tg::buffer::borrowed(msg), 0, past), tg::error);
          }
        }
      }
    }
  }
}

TEST(Blosc2Pipeline, SimplePackingTypesizes) {
  // typesize = ceil(B/8) (spec 03 §8.4.1); B = 12 with an odd count leaves a
  // partial last item that the reference cannot range-decode; we can.
  const std::uint64_t n = 1001;
  std::vector<double> v;
  for (std::uint64_t i = 0; i < n; ++i) v.push_back(250.0 + 50.0 * std::sin(static_cast<double>(i) / 40.0));
  const bytes input = f64_bytes(v, tg::native_byte_order());
  for (std::uint32_t bits : {12U, 16U, 24U, 32U}) {
    SCOPED_TRACE(bits);
    tg::data_object_descriptor d = f64_desc(n);
    d.encoding = "simple_packing";
    d.compression = "blosc2";
    d.params.set("sp_bits_per_value", cbor::value(bits));
    const bytes msg = encode_one(d, input);
    const tg::message m = decode_msg(msg);
    const std::vector<double> got = f64_values(m.object(0).bytes(), tg::native_byte_order());
    ASSERT_EQ(got.size(), n);
    for (std::uint64_t i = 0; i < n; ++i) ASSERT_NEAR(got[i], v[i], 100.0 / 2048) << i;
    expect_ranges(msg, {{0, 1}, {500, 1}, {n - 1, 1}, {1, n - 1}, {333, 333}}, to_bytes(m.object(0).bytes()),
                  8);
  }
  // Through the frame itself: B = 24 gives typesize 3.
  tg::data_object_descriptor d = f64_desc(n);
  d.encoding = "simple_packing";
  d.params.set("sp_bits_per_value", cbor::value(24));
  tg::resolve_simple_packing_params(d, input);
  d.compression = "blosc2";
  const tg::codecs::pipeline pl = tg::build_pipeline(d);
  EXPECT_EQ(cx::blosc2_inspect(pl.encode(input, n, tg::native_byte_order()).payload).typesize, 3U);
  // simple_packing comes first in the rule: still 3 after a shuffle.
  d.filter = "shuffle";
  d.params.set("shuffle_element_size", cbor::value(3));
  EXPECT_EQ(
      cx::blosc2_inspect(tg::build_pipeline(d).encode(input, n, tg::native_byte_order()).payload).typesize,
      3U);
  // Without packing, shuffle gives typesize 1, else the dtype width.
  tg::data_object_descriptor raw = f64_desc(n);
  raw.compression = "blosc2";
  EXPECT_EQ(
      cx::blosc2_inspect(tg::build_pipeline(raw).encode(input, n, tg::native_byte_order()).payload).typesize,
      8U);
  raw.filter = "shuffle";
  raw.params.set("shuffle_element_size", cbor::value(8));
  EXPECT_EQ(
      cx::blosc2_inspect(tg::build_pipeline(raw).encode(input, n, tg::native_byte_order()).payload).typesize,
      1U);
}

TEST(Blosc2Pipeline, ReferenceFramesDecodeThroughThePipeline) {
  const fixture& f = fixture_named("f64_zstd_multichunk_ts8");
  tg::data_object_descriptor d = f64_desc(40000, tg::byte_order::little);
  d.compression = "blosc2";
  const tg::codecs::pipeline pl = tg::build_pipeline(d);
  EXPECT_EQ(to_bytes(pl.decode(tg::buffer::borrowed(f.frame), 40000, tg::byte_order::little,
                               tg::byte_order::little)),
            f.raw);
  tg::codecs::decode_settings two_threads;
  two_threads.threads = 2;
  EXPECT_EQ(to_bytes(pl.decode(tg::buffer::borrowed(f.frame), 40000, tg::byte_order::little,
                               tg::byte_order::little, two_threads)),
            f.raw);
  EXPECT_EQ(pl.decode_range(f.frame, 40000, tg::byte_order::little, tg::byte_order::little, 9990, 30),
            tgtest::slice(f.raw, 9990 * 8, 240));
  // big-endian output
  bytes swapped = f.raw;
  tg::swap_bytes_in_place(swapped, 8);
  EXPECT_EQ(
      to_bytes(pl.decode(tg::buffer::borrowed(f.frame), 40000, tg::byte_order::little, tg::byte_order::big)),
      swapped);
  // A descriptor claiming fewer or more elements than the frame holds.
  expect_error<tg::encoding_error>(
      [&] {
        (void)pl.decode(tg::buffer::borrowed(f.frame), 39999, tg::byte_order::little, tg::byte_order::little);
      },
      "more than the");
  expect_error<tg::encoding_error>(
      [&] {
        (void)pl.decode(tg::buffer::borrowed(f.frame), 40001, tg::byte_order::little, tg::byte_order::little);
      },
      "decompressed 320000 bytes, expected 320008");
  // uint16 bitshuffle frame as a uint16 object.
  const fixture& u = fixture_named("u16_zlib_bitshuffle_ts2");
  tg::data_object_descriptor du =
      tg::data_object_descriptor::contiguous(tg::dtype::uint16, {40000}, tg::byte_order::little);
  du.compression = "blosc2";
  EXPECT_EQ(to_bytes(tg::build_pipeline(du).decode(tg::buffer::borrowed(u.frame), 40000,
                                                   tg::byte_order::little, tg::byte_order::little)),
            u.raw);
}

TEST(Blosc2Pipeline, Errors) {
  const bytes in = f64_bytes({1.0, 2.0, 3.0, 4.0}, tg::native_byte_order());
  auto with = [&](auto&& set) {
    tg::data_object_descriptor d = f64_desc(4);
    d.compression = "blosc2";
    set(d);
    return d;
  };
  const auto unknown = with([](auto& d) { d.params.set("blosc2_codec", cbor::value("snappy")); });
  expect_error<tg::encoding_error>([&] { (void)encode_one(unknown, in); }, "unknown blosc2 codec: snappy");
  expect_error<tg::encoding_error>([&] { (void)tg::build_pipeline(unknown); }, "unknown blosc2 codec");
  expect_error<tg::metadata_error>(
      [&] { (void)encode_one(with([](auto& d) { d.params.set("blosc2_codec", cbor::value(3)); }), in); },
      "expected text for blosc2_codec, got integer");
  expect_error<tg::encoding_error>(
      [&] { (void)encode_one(with([](auto& d) { d.params.set("blosc2_clevel", cbor::value(10)); }), in); },
      "clevel 10");
  expect_error<tg::metadata_error>(
      [&] { (void)encode_one(with([](auto& d) { d.params.set("blosc2_clevel", cbor::value("5")); }), in); },
      "expected integer for blosc2_clevel");
  expect_error<tg::metadata_error>(
      [&] {
        (void)encode_one(with([](auto& d) { d.params.set("blosc2_clevel", cbor::value(1LL << 40)); }), in);
      },
      "out of i32 range");
  // blosc2_typesize is inert (spec 03 §2).
  const auto inert = with([](auto& d) { d.params.set("blosc2_typesize", cbor::value(3)); });
  EXPECT_EQ(to_bytes(decode_msg(encode_one(inert, in)).object(0).bytes()), in);
  // Typesize 0 (bitmask) and an empty object.
  tg::data_object_descriptor bm = tg::data_object_descriptor::contiguous(tg::dtype::bitmask, {16});
  bm.compression = "blosc2";
  expect_error<tg::encoding_error>([&] { (void)encode_one(bm, bytes(2)); }, "typesize 0");
  tg::data_object_descriptor empty = f64_desc(0);
  empty.compression = "blosc2";
  expect_error<tg::encoding_error>([&] { (void)encode_one(empty, bytes()); }, "empty");
  // A corrupt payload is an encoding_error on decode.
  const bytes msg = encode_one(with([](auto&) {}), in);
  bytes bad = msg;
  const auto pos = std::search(bad.begin(), bad.end(), std::begin("b2frame"), std::end("b2frame") - 1,
                               [](std::byte a, char b) { return a == static_cast<std::byte>(b); });
  ASSERT_NE(pos, bad.end());
  *pos = std::byte{'x'};
  expect_error<tg::encoding_error>([&] { (void)decode_msg(bad); }, "blosc2 error");
  EXPECT_TRUE(tg::codecs::is_known_compression("blosc2"));
}

// ---------------------------------------------------------------------------
// The mask method (spec 03 §11.3).

TEST(Blosc2Masks, BlobsRoundTrip) {
  std::mt19937_64 rng(12);
  for (std::uint64_t n : {0ULL, 1ULL, 7ULL, 9ULL, 100ULL, 129ULL, 1000ULL, 8 * 1001ULL, 70001ULL}) {
    SCOPED_TRACE(n);
    bytes packed((n + 7) / 8);
    for (auto& b : packed) b = static_cast<std::byte>(rng() % 3 == 0 ? rng() & 0xFF : 0);
    if (n % 8 != 0) packed.back() &= static_cast<std::byte>(0xFF << (8 - n % 8));
    const bytes blob = tg::encode_mask_blob(packed, n, "blosc2");
    if (n == 0) {
      EXPECT_TRUE(blob.empty());
    } else {
      // Typesize 1, bit shuffle in slot 0, lz4 level 5, one chunk.
      const cx::blosc2_frame_info info = cx::blosc2_inspect(blob);
      EXPECT_EQ(info.typesize, 1U);
      EXPECT_EQ(info.codec_byte, 0x51);
      EXPECT_EQ(info.nchunks, 1U);
      EXPECT_EQ(blob[71], std::byte{2});
      EXPECT_EQ(blob[76], std::byte{0});
    }
    EXPECT_EQ(tg::decode_mask_blob(blob, n, "blosc2"), packed);
    // Frames with other codecs, as the reference writes for codec params.
    if (n > 0) {
      for (blosc2_codec c : {C::blosclz, C::lz4hc, C::zlib, C::zstd}) {
        cx::blosc2_params p = params(c, 9, 1);
        p.filters = {F::bitshuffle, F::none, F::none, F::none, F::none, F::none};
        EXPECT_EQ(tg::decode_mask_blob(cx::blosc2_compress(packed, p), n, "blosc2"), packed);
      }
    }
  }
  const auto params_value = tg::mask_blob_params("blosc2");
  ASSERT_TRUE(params_value.has_value());
  EXPECT_EQ(*params_value->find("codec")->as_text(), "lz4");
  EXPECT_EQ(*params_value->find("level")->as_int64(), 5);
  EXPECT_FALSE(tg::mask_blob_params("zstd").has_value());
  expect_error<tg::encoding_error>(
      [&] {
        (void)tg::decode_mask_blob(tgtest::B({1, 2, 3}), 16, "blosc2");
      },
      "bitmask decode (blosc2)");
}

TEST(Blosc2Masks, NaNMaskThroughTheMessage) {
  const std::uint64_t n = 5000;  // 625 mask bytes: above the 128-byte fallback
  std::vector<double> v(n);
  for (std::uint64_t i = 0; i < n; ++i) v[i] = i % 7 == 3 ? std::nan("") : static_cast<double>(i);
  const bytes input = f64_bytes(v, tg::native_byte_order());
  tg::encode_options o = fixed_options();
  o.allow_nan = true;
  o.nan_mask_method = "blosc2";
  tg::data_object_descriptor d = f64_desc(n);
  d.compression = "blosc2";
  const tg::message m = decode_msg(encode_one(d, input, o));
  const tg::data_object_descriptor& back = m.object(0).descriptor();
  ASSERT_TRUE(back.masks.has_value());
  const cbor::value* nan = back.masks->find("nan");
  ASSERT_NE(nan, nullptr);
  EXPECT_EQ(*nan->find("method")->as_text(), "blosc2");
  ASSERT_NE(nan->find("params"), nullptr);
  EXPECT_EQ(*nan->find("params")->find("codec")->as_text(), "lz4");
  EXPECT_EQ(*nan->find("params")->find("level")->as_int64(), 5);
  const std::vector<double> got = f64_values(m.object(0).bytes(), tg::native_byte_order());
  ASSERT_EQ(got.size(), n);
  for (std::uint64_t i = 0; i < n; ++i) {
    if (i % 7 == 3) {
      EXPECT_TRUE(std::isnan(got[i])) << i;
    } else {
      EXPECT_EQ(got[i], v[i]) << i;
    }
  }
}

}  // namespace

// NaN / ±Inf substitution, mask blobs and restoration (spec 03 §11, spec 02
// §9): every mask method, several float dtypes, descriptor `masks` entries,
// restore_non_finite=false, masks combined with compression and range decode.
#include <algorithm>
#include <optional>
#include <random>

#include "codec_support.hpp"

namespace {

using namespace codectest;
using tg::dtype;

struct float_info {
  dtype t;
  std::size_t part;  // bytes per component
  int top_exponent_bit;
  std::uint64_t nan_in;  // a non-canonical NaN fed to the encoder
  std::uint64_t nan;     // canonical NaN
  std::uint64_t pos_inf;
  std::uint64_t neg_inf;
};

const float_info k_infos[] = {
    {dtype::float32, 4, 30, 0x7FC00123, 0x7FC00000, 0x7F800000, 0xFF800000},
    {dtype::float64, 8, 62, 0xFFF8000000000ABC, 0x7FF8000000000000, 0x7FF0000000000000, 0xFFF0000000000000},
    {dtype::float16, 2, 14, 0x7E01, 0x7E00, 0x7C00, 0xFC00},
    {dtype::complex64, 4, 30, 0x7FC00001, 0x7FC00000, 0x7F800000, 0xFF800000},
    {dtype::bfloat16, 2, 14, 0xFFC1, 0x7FC0, 0x7F80, 0xFF80},
    {dtype::complex128, 8, 62, 0x7FF8000000000001, 0x7FF8000000000000, 0x7FF0000000000000,
     0xFFF0000000000000},
};

void put(bytes& out, std::uint64_t bits, std::size_t width, tg::byte_order order) {
  for (std::size_t i = 0; i < width; ++i) {
    const std::size_t shift = 8 * (order == tg::byte_order::big ? width - 1 - i : i);
    out.push_back(static_cast<std::byte>((bits >> shift) & 0xFF));
  }
}

enum class kind { finite, nan, pos_inf, neg_inf };

kind kind_at(std::uint64_t i) {
  if (i % 7 == 1) return kind::nan;
  if (i % 11 == 2) return kind::pos_inf;
  if (i % 13 == 3) return kind::neg_inf;
  return kind::finite;
}

struct mask_sample {
  bytes input;     // declared order, with non-finite values
  bytes restored;  // expected decode in `out_order` with restoration
  bytes zeroed;    // expected decode in `out_order` without restoration
};

mask_sample make_mask_sample(const float_info& f, std::uint64_t n, tg::byte_order order,
                             tg::byte_order out_order, std::uint64_t seed, bool only_finite = false) {
  std::mt19937_64 rng(seed);
  const bool complex = f.t == dtype::complex64 || f.t == dtype::complex128;
  const std::size_t comps = complex ? 2 : 1;
  mask_sample s;
  for (std::uint64_t i = 0; i < n; ++i) {
    const kind k = only_finite ? kind::finite : kind_at(i);
    for (std::size_t c = 0; c < comps; ++c) {
      std::uint64_t v = rng();
      if (f.part < 8) v &= (std::uint64_t{1} << (8 * f.part)) - 1;
      v &= ~(std::uint64_t{1} << f.top_exponent_bit);
      std::uint64_t in = v;
      std::uint64_t restored = v;
      std::uint64_t zeroed = v;
      if (k != kind::finite) {
        // NaN in the real part, Inf in the imaginary part of complex values.
        const bool carrier = !complex || (k == kind::nan ? c == 0 : c == 1);
        const std::uint64_t special = k == kind::nan ? f.nan_in : k == kind::pos_inf ? f.pos_inf : f.neg_inf;
        if (carrier) in = special;
        restored = k == kind::nan ? f.nan : k == kind::pos_inf ? f.pos_inf : f.neg_inf;
        zeroed = 0;
      }
      put(s.input, in, f.part, order);
      put(s.restored, restored, f.part, out_order);
      put(s.zeroed, zeroed, f.part, out_order);
    }
  }
  return s;
}

tg::encode_options mask_options(const std::string& method, std::ptrdiff_t threshold) {
  tg::encode_options o = fixed_options();
  o.allow_nan = true;
  o.allow_inf = true;
  o.nan_mask_method = method;
  o.pos_inf_mask_method = method;
  o.neg_inf_mask_method = method;
  o.small_mask_threshold_bytes = threshold;
  return o;
}

void check_mask_entries(const tg::data_object_descriptor& d, const std::string& method) {
  ASSERT_TRUE(d.masks.has_value());
  std::uint64_t previous_end = 0;
  bool first = true;
  for (const char* k : {"nan", "inf+", "inf-"}) {
    SCOPED_TRACE(k);
    const cbor::value* e = d.masks->find(k);
    ASSERT_NE(e, nullptr);
    ASSERT_NE(e->find("method"), nullptr);
    EXPECT_EQ(*e->find("method")->as_text(), method);
    ASSERT_NE(e->find("offset"), nullptr);
    ASSERT_NE(e->find("length"), nullptr);
    const std::uint64_t off = *e->find("offset")->as_uint64();
    const std::uint64_t len = *e->find("length")->as_uint64();
    EXPECT_GT(len, 0u);
    if (!first) {
      EXPECT_EQ(off, previous_end);  // blobs follow each other, no padding
    }
    first = false;
    previous_end = off + len;
    EXPECT_EQ(e->find("params"), nullptr);  // no params for these methods without a level
  }
}

class MaskMethods : public ::testing::TestWithParam<std::tuple<std::size_t, std::string, tg::byte_order>> {};

TEST_P(MaskMethods, SubstituteMaskAndRestore) {
  const auto [info_index, method, order] = GetParam();
  const float_info& f = k_infos[info_index];
  const std::uint64_t n = 300;
  const tg::byte_order host = tg::native_byte_order();
  for (const std::string comp : {"none", "zstd", "lz4"}) {
    SCOPED_TRACE(comp);
    const mask_sample s = make_mask_sample(f, n, order, host, 17 + info_index);
    tg::data_object_descriptor d = tg::data_object_descriptor::contiguous(f.t, {n}, order);
    d.compression = comp;
    const bytes msg = encode_one(d, s.input, mask_options(method, 0));
    const tg::message m = decode_msg(msg, true, true, true);
    const tg::data_object_descriptor& back = m.object(0).descriptor();
    check_mask_entries(back, method);
    EXPECT_EQ(to_bytes(m.object(0).bytes()), s.restored);
    // Without restoration the substituted zeros come back.
    const tg::message z = decode_msg(msg, true, false);
    EXPECT_EQ(to_bytes(z.object(0).bytes()), s.zeroed);
    // Declared order.
    const mask_sample sd = make_mask_sample(f, n, order, order, 17 + info_index);
    EXPECT_EQ(to_bytes(decode_msg(msg, false).object(0).bytes()), sd.restored);
    // Ranges restore the masks inside each range.
    if (comp == "none") {
      const std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges = {
          {0, 5}, {100, 40}, {295, 5}, {13, 1}};
      const std::vector<tg::buffer> parts = tg::decode_range(tg::buffer::borrowed(msg), 0, ranges);
      ASSERT_EQ(parts.size(), ranges.size());
      const std::size_t w = tg::dtype_width(f.t);
      for (std::size_t i = 0; i < ranges.size(); ++i) {
        EXPECT_EQ(to_bytes(parts[i].bytes()),
                  tgtest::slice(s.restored, static_cast<std::size_t>(ranges[i].first * w),
                                static_cast<std::size_t>(ranges[i].second * w)))
            << "range " << i;
      }
      tg::decode_options no_restore;
      no_restore.restore_non_finite = false;
      const std::vector<tg::buffer> zparts =
          tg::decode_range(tg::buffer::borrowed(msg), 0, ranges, no_restore);
      for (std::size_t i = 0; i < ranges.size(); ++i) {
        EXPECT_EQ(to_bytes(zparts[i].bytes()),
                  tgtest::slice(s.zeroed, static_cast<std::size_t>(ranges[i].first * w),
                                static_cast<std::size_t>(ranges[i].second * w)))
            << "unrestored range " << i;
      }
    }
  }
}

std::string mask_param_name(const testing::TestParamInfo<MaskMethods::ParamType>& info) {
  return std::string(tg::dtype_name(k_infos[std::get<0>(info.param)].t)) + "_" + std::get<1>(info.param) +
         "_" + std::string(tg::byte_order_name(std::get<2>(info.param)));
}

INSTANTIATE_TEST_SUITE_P(Methods, MaskMethods,
                         ::testing::Combine(::testing::Range<std::size_t>(0, std::size(k_infos)),
                                            ::testing::Values("none", "rle", "roaring", "lz4", "zstd"),
                                            ::testing::Values(tg::byte_order::big, tg::byte_order::little)),
                         mask_param_name);

TEST(MaskThreshold, SmallMasksUseNoneByDefault) {
  const float_info& f = k_infos[1];
  const std::uint64_t n = 300;  // 38-byte masks ≤ 128
  const mask_sample s = make_mask_sample(f, n, tg::byte_order::little, tg::native_byte_order(), 3);
  const tg::data_object_descriptor d =
      tg::data_object_descriptor::contiguous(f.t, {n}, tg::byte_order::little);
  tg::encode_options o = fixed_options();
  o.allow_nan = true;
  o.allow_inf = true;
  const bytes msg = encode_one(d, s.input, o);
  const tg::message m = decode_msg(msg);
  check_mask_entries(m.object(0).descriptor(), "none");
  EXPECT_EQ(*m.object(0).descriptor().masks->find("nan")->find("length")->as_uint64(), (n + 7) / 8);
  EXPECT_EQ(to_bytes(m.object(0).bytes()), s.restored);
  // Above the threshold the default method is roaring.
  const std::uint64_t big_n = 2000;  // 250-byte masks
  const mask_sample sb = make_mask_sample(f, big_n, tg::byte_order::little, tg::native_byte_order(), 4);
  const tg::data_object_descriptor db =
      tg::data_object_descriptor::contiguous(f.t, {big_n}, tg::byte_order::little);
  const tg::message mb = decode_msg(encode_one(db, sb.input, o));
  check_mask_entries(mb.object(0).descriptor(), "roaring");
  EXPECT_EQ(to_bytes(mb.object(0).bytes()), sb.restored);
}

TEST(MaskPlacement, FirstMaskFollowsTheStageThreeOutput) {
  const float_info& f = k_infos[0];
  const std::uint64_t n = 64;
  const mask_sample s = make_mask_sample(f, n, tg::byte_order::big, tg::native_byte_order(), 9);
  const tg::data_object_descriptor d = tg::data_object_descriptor::contiguous(f.t, {n}, tg::byte_order::big);
  const tg::message m = decode_msg(encode_one(d, s.input, mask_options("rle", 0)));
  // compression none: the stage-3 output is n·4 bytes.
  EXPECT_EQ(*m.object(0).descriptor().masks->find("nan")->find("offset")->as_uint64(), n * 4);
}

TEST(MaskPlacement, OnlyPresentKindsAndNoMasksForFiniteData) {
  const float_info& f = k_infos[1];
  const std::uint64_t n = 20;
  const tg::data_object_descriptor d =
      tg::data_object_descriptor::contiguous(f.t, {n}, tg::byte_order::little);
  const mask_sample finite = make_mask_sample(f, n, tg::byte_order::little, tg::native_byte_order(), 1, true);
  const bytes msg = encode_one(d, finite.input, mask_options("roaring", 0));
  EXPECT_FALSE(decode_msg(msg).object(0).descriptor().masks.has_value());
  // A single NaN: only the nan entry.
  bytes one = finite.input;
  for (std::size_t b = 0; b < 8; ++b)
    one[8 * 5 + b] = b == 7 ? std::byte{0x7F} : b == 6 ? std::byte{0xF8} : std::byte{0};
  const tg::message m = decode_msg(encode_one(d, one, mask_options("roaring", 0)));
  ASSERT_TRUE(m.object(0).descriptor().masks.has_value());
  EXPECT_NE(m.object(0).descriptor().masks->find("nan"), nullptr);
  EXPECT_EQ(m.object(0).descriptor().masks->find("inf+"), nullptr);
  EXPECT_EQ(m.object(0).descriptor().masks->find("inf-"), nullptr);
}

TEST(MaskOptions, ZstdLevelAndBlosc2) {
  const float_info& f = k_infos[1];
  const std::uint64_t n = 100;
  const mask_sample s = make_mask_sample(f, n, tg::byte_order::little, tg::native_byte_order(), 2);
  const tg::data_object_descriptor d =
      tg::data_object_descriptor::contiguous(f.t, {n}, tg::byte_order::little);
  // blosc2 masks carry their codec and level (spec 02 §4.3).
  const tg::message b2 = decode_msg(encode_one(d, s.input, mask_options("blosc2", 0)));
  ASSERT_TRUE(b2.object(0).descriptor().masks.has_value());
  std::size_t entries = 0;
  for (std::string_view kind : tg::mask_kind_names) {
    const cbor::value* e = b2.object(0).descriptor().masks->find(kind);
    if (e == nullptr) continue;
    ++entries;
    EXPECT_EQ(*e->find("method")->as_text(), "blosc2");
    EXPECT_EQ(*e->find("params")->find("codec")->as_text(), "lz4");
    EXPECT_EQ(*e->find("params")->find("level")->as_int64(), 5);
  }
  EXPECT_GT(entries, 0U);
  // An unknown method is a bad argument (issue 24), with the reference's text.
  expect_error<tg::invalid_arg_error>(
      [&] { (void)encode_one(d, s.input, mask_options("gzip", 0)); },
      R"(unknown mask method "gzip" (expected "none" | "rle" | "roaring" | "lz4" | "zstd" | "blosc2"))");
  // Not allowed → strict errors as before.
  tg::encode_options only_nan = mask_options("rle", 0);
  only_nan.allow_inf = false;
  expect_error<tg::encoding_error>([&] { (void)encode_one(d, s.input, only_nan); }, "strict-Inf check");
}

TEST(MaskBlobs, EveryMethodRoundTrips) {
  std::mt19937_64 rng(11);
  for (std::uint64_t n : {1ull, 7ull, 8ull, 9ull, 100ull, 1000ull, 70000ull}) {
    bytes packed((n + 7) / 8);
    for (auto& b : packed) b = static_cast<std::byte>(rng() % 3 == 0 ? rng() & 0xFF : 0);
    // Trailing bits are zero.
    if (n % 8 != 0) packed.back() &= static_cast<std::byte>(0xFF << (8 - n % 8));
    for (const char* method : {"none", "rle", "roaring", "lz4", "zstd", "blosc2"}) {
      SCOPED_TRACE(testing::Message() << method << " n=" << n);
      const bytes blob = tg::encode_mask_blob(packed, n, method);
      EXPECT_EQ(tg::decode_mask_blob(blob, n, method), packed);
    }
  }
  EXPECT_EQ(tg::effective_mask_method("rle", 8 * 128, 128), "none");
  EXPECT_EQ(tg::effective_mask_method("rle", 8 * 128 + 1, 128), "rle");
  EXPECT_EQ(tg::effective_mask_method("rle", 8, 0), "rle");
}

}  // namespace

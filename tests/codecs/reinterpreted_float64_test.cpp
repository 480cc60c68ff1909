// zfp and sz3 objects of every dtype, byte order, shape and mask set,
// decoded exactly as the reference decodes them (spec 03 §3.3, §8.6, §8.7):
//  * the six messages the reference wrote (fixtures/tgm-reference-lossy)
//    decode to the bytes whose xxh3 the reference's decoder gave;
//  * property: messages built the way the reference writes them (its codec
//    reads the declared bytes as host float64) decode to what an
//    independent model of the rule predicts — N doubles for zfp (8·N
//    bytes), the stream's count for sz3, written in the declared order, then
//    swapped per dtype unit to the requested order, masks restored only
//    where the bytes are N·W;
//  * ranges are slices of the full decode; corrupt payloads are typed errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <xxhash.h>
#include <zfp.h>
#include <nlohmann/json.hpp>

#include "codec_support.hpp"
#include "tensogram/codecs/sz3.hpp"

namespace {

namespace tg = tensogram;
namespace cbor = tensogram::cbor;
using tgtest::bytes;

std::string lossy_fixture(const std::string& name) {
  return std::string(TENSOGRAM_FIXTURES) + "/tgm-reference-lossy/" + name;
}

std::string xxh3_hex(std::span<const std::byte> b) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx",
                static_cast<unsigned long long>(XXH3_64bits(b.data(), b.size())));
  return text;
}

// A message around one data-object frame, assembled by hand: the encoder
// (like the reference's pre-encoded mode) refuses a compressed payload
// whose length is not N·W for encoding none.
bytes wrap(const tg::data_object_descriptor& d, std::span<const std::byte> region) {
  tgtest::message_builder m;
  m.frame(1, tgtest::metadata_with_base(1));
  m.data_frame(region, d.to_cbor());
  return m.finish();
}

bytes slice(const tg::buffer& b, std::uint64_t from, std::uint64_t count) {
  return bytes(b.bytes().begin() + static_cast<std::ptrdiff_t>(from),
               b.bytes().begin() + static_cast<std::ptrdiff_t>(from + count));
}

}  // namespace

// ---------------------------------------------------------------------------
// What the reference wrote.

TEST(ReinterpretedFloat64, ReferenceFixturesDecodeToTheReferenceBytes) {
  std::ifstream f(lossy_fixture("expected.json"));
  ASSERT_TRUE(f) << "missing fixtures/tgm-reference-lossy/expected.json";
  const nlohmann::json expected = nlohmann::json::parse(f);
  ASSERT_EQ(expected.size(), 6u);
  for (const auto& file : expected) {
    const std::string name = file["file"];
    const tg::buffer msg = tg::buffer::owned(tgtest::read_lossy_fixture(name));
    const tg::message m = tg::decode(msg);
    ASSERT_EQ(m.num_objects(), file["objects"].size()) << name;
    for (std::size_t i = 0; i < m.num_objects(); ++i) {
      const auto& want = file["objects"][i];
      const tg::decoded_object& o = m.object(i);
      EXPECT_EQ(std::string(tg::dtype_name(o.descriptor().dtype)), want["descriptor"]["dtype"]) << name;
      EXPECT_EQ(xxh3_hex(o.bytes()), want["decoded_xxh3"].get<std::string>()) << name << " object " << i;
      EXPECT_EQ(o.reinterpreted_as_float64(), o.descriptor().dtype != tg::dtype::float64) << name;

      // One object at a time and through the data-frame entry point alike.
      EXPECT_EQ(xxh3_hex(tg::decode_object(msg, i).object(0).bytes()),
                want["decoded_xxh3"].get<std::string>());

      // Ranges are slices of the full decode, in elements of the dtype.
      const std::uint64_t n = o.descriptor().element_count();
      const std::uint64_t w = tg::dtype_width(o.descriptor().dtype);
      const std::uint64_t fit = std::min<std::uint64_t>(n, o.bytes().size() / w);
      const std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges{
          {0, 1}, {fit / 3, fit / 2}, {fit - 5, 5}};
      const auto parts = tg::decode_range(msg, i, ranges);
      ASSERT_EQ(parts.size(), ranges.size());
      for (std::size_t r = 0; r < ranges.size(); ++r) {
        EXPECT_EQ(codectest::to_bytes(parts[r]),
                  slice(o.data_buffer(), ranges[r].first * w, ranges[r].second * w))
            << name << " range " << r;
      }
      if (fit < n) {
        // Elements past the decoded bytes (complex128 under zfp: 8·N < 16·N).
        EXPECT_THROW(
            (void)tg::decode_range(msg, i, std::vector<std::pair<std::uint64_t, std::uint64_t>>{{fit, 1}}),
            tg::encoding_error);
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Property: every dtype × byte order × zfp/sz3 mode × masks × shape.

namespace {

struct codec_case {
  std::string compression;
  std::string mode;
  double value;
};

const std::vector<codec_case>& codec_cases() {
  static const std::vector<codec_case> cases{
      {"zfp", "fixed_rate", 16}, {"zfp", "fixed_precision", 20}, {"zfp", "fixed_accuracy", 1e-3},
      {"sz3", "abs", 1e-3},      {"sz3", "rel", 1e-4},           {"sz3", "psnr", 60}};
  return cases;
}

void set_codec(tg::data_object_descriptor& d, const codec_case& c) {
  d.compression = c.compression;
  if (c.compression == "zfp") {
    d.params.set("zfp_mode", cbor::value(c.mode));
    if (c.mode == "fixed_rate") d.params.set("zfp_rate", cbor::value(c.value));
    if (c.mode == "fixed_precision")
      d.params.set("zfp_precision", cbor::value(static_cast<std::uint64_t>(c.value)));
    if (c.mode == "fixed_accuracy") d.params.set("zfp_tolerance", cbor::value(c.value));
  } else {
    d.params.set("sz3_error_bound_mode", cbor::value(c.mode));
    d.params.set("sz3_error_bound", cbor::value(c.value));
  }
}

// Raw element bytes in the declared order: smooth values of the dtype (and,
// for float dtypes with `non_finite`, a NaN, +Inf and -Inf at fixed places).
bytes make_raw(tg::dtype t, tg::byte_order order, std::uint64_t n, bool non_finite, std::mt19937& rng) {
  const std::size_t w = tg::dtype_width(t);
  bytes out(t == tg::dtype::bitmask ? (n + 7) / 8 : n * w);
  if (t == tg::dtype::bitmask) {
    for (auto& b : out) b = static_cast<std::byte>(rng() & 0xFF);
    return out;
  }
  const std::size_t unit = tg::dtype_swap_unit(t);
  for (std::uint64_t i = 0; i < n; ++i) {
    const double v = 40 * std::sin(0.1 * static_cast<double>(i)) + 273;
    std::byte* e = out.data() + i * w;
    auto put = [&](auto x, std::size_t at) { std::memcpy(e + at, &x, sizeof x); };
    switch (t) {
      case tg::dtype::float16: put(static_cast<std::uint16_t>(0x3C00 + (i % 512)), 0); break;
      case tg::dtype::bfloat16: put(static_cast<std::uint16_t>(0x4380 + (i % 64)), 0); break;
      case tg::dtype::float32: put(static_cast<float>(v), 0); break;
      case tg::dtype::float64: put(v, 0); break;
      case tg::dtype::complex64:
        put(static_cast<float>(v), 0);
        put(static_cast<float>(-v), 4);
        break;
      case tg::dtype::complex128:
        put(v, 0);
        put(-v / 3, 8);
        break;
      case tg::dtype::int8:
      case tg::dtype::uint8: put(static_cast<std::uint8_t>(v), 0); break;
      case tg::dtype::int16:
      case tg::dtype::uint16: put(static_cast<std::uint16_t>(v * 10), 0); break;
      case tg::dtype::int32:
      case tg::dtype::uint32: put(static_cast<std::uint32_t>(v * 1000), 0); break;
      case tg::dtype::int64:
      case tg::dtype::uint64: put(static_cast<std::uint64_t>(v * 1e6), 0); break;
      case tg::dtype::bitmask: break;
    }
    if (non_finite && tg::dtype_is_float(t) && (i == 1 || i == n / 2 || i + 1 == n)) {
      const int kind = i == 1 ? 0 : (i == n / 2 ? 1 : 2);
      for (std::size_t part = 0; part < w; part += unit) {
        switch (unit) {
          case 2: {
            const bool bf = t == tg::dtype::bfloat16;
            const std::uint16_t p[3] = {static_cast<std::uint16_t>(bf ? 0x7FC1 : 0x7E01),
                                        static_cast<std::uint16_t>(bf ? 0x7F80 : 0x7C00),
                                        static_cast<std::uint16_t>(bf ? 0xFF80 : 0xFC00)};
            put(p[kind], part);
            break;
          }
          case 4: put(std::array<std::uint32_t, 3>{0x7FC00001u, 0x7F800000u, 0xFF800000u}[kind], part); break;
          default:
            put(std::array<std::uint64_t, 3>{0x7FF8000000000001ull, 0x7FF0000000000000ull,
                                             0xFFF0000000000000ull}[kind],
                part);
        }
      }
    }
    if (order != tg::native_byte_order() && unit > 1) {
      for (std::size_t part = 0; part < w; part += unit) std::reverse(e + part, e + part + unit);
    }
  }
  return out;
}

struct built {
  bytes message;
  bytes payload;  // the codec stream
  tg::data_object_descriptor descriptor;
  std::array<std::optional<bytes>, 3> masks;
};

// The message the reference writes for `raw`: non-finite values zeroed and
// recorded in masks, the (substituted) declared-order bytes compressed as
// host-order doubles, masks appended to the payload region.
built reference_style(tg::dtype t, tg::byte_order order, const std::vector<std::uint64_t>& shape,
                      const codec_case& c, const bytes& raw) {
  built b;
  tg::data_object_descriptor d = tg::data_object_descriptor::contiguous(t, shape, order);
  set_codec(d, c);
  bytes input = raw;
  if (tg::dtype_is_float(t)) {
    if (auto sub = tg::substitute_non_finite(t, order, raw, true, true)) {
      input = sub->data;
      b.masks = sub->masks;
    }
  }
  if (c.compression == "zfp") {
    tg::codecs::zfp_params p;
    p.mode = c.mode == "fixed_rate"        ? tg::codecs::zfp_mode::fixed_rate
             : c.mode == "fixed_precision" ? tg::codecs::zfp_mode::fixed_precision
                                           : tg::codecs::zfp_mode::fixed_accuracy;
    p.rate = c.value;
    p.precision = static_cast<std::uint32_t>(c.value);
    p.tolerance = c.value;
    b.payload = tg::codecs::zfp_compress(input, p);
  } else {
    tg::codecs::sz3_params p;
    p.mode = c.mode == "abs"   ? tg::codecs::sz3_error_bound_mode::abs
             : c.mode == "rel" ? tg::codecs::sz3_error_bound_mode::rel
                               : tg::codecs::sz3_error_bound_mode::psnr;
    p.bound = c.value;
    b.payload = tg::codecs::sz3_compress(input, p);
  }
  bytes region = b.payload;
  const std::uint64_t n = d.element_count();
  cbor::value mask_map = cbor::value::make_map();
  bool any = false;
  for (std::size_t k = 0; k < 3; ++k) {
    if (!b.masks[k]) continue;
    const bytes blob = tg::encode_mask_blob(*b.masks[k], n, "none");
    mask_map.set(std::string(tg::mask_kind_names[k]),
                 cbor::value::make_map({{"method", cbor::value("none")},
                                        {"offset", cbor::value(static_cast<std::uint64_t>(region.size()))},
                                        {"length", cbor::value(static_cast<std::uint64_t>(blob.size()))}}));
    region.insert(region.end(), blob.begin(), blob.end());
    any = true;
  }
  if (any) d.masks = mask_map;
  b.descriptor = d;
  b.message = wrap(d, region);
  return b;
}

// The model: the reference decoder's bytes, or nothing when it fails (a zfp
// stream longer than libzfp's bound for N doubles: the payload of a dtype
// wider than 8 bytes; masks on bytes that are not N·W).
std::optional<bytes> model_decode(const built& b, bool native) {
  const tg::data_object_descriptor& d = b.descriptor;
  const std::uint64_t n = d.element_count();
  const tg::byte_order declared = d.effective_byte_order();
  std::vector<double> values;
  if (d.compression == "zfp") {
    tg::codecs::zfp_params p;  // reparsed from the descriptor by hand
    const std::string mode = *d.params.find("zfp_mode")->as_text();
    if (mode == "fixed_rate") {
      p.mode = tg::codecs::zfp_mode::fixed_rate;
      p.rate = *d.params.find("zfp_rate")->as_double();
    } else if (mode == "fixed_precision") {
      p.mode = tg::codecs::zfp_mode::fixed_precision;
      p.precision = static_cast<std::uint32_t>(*d.params.find("zfp_precision")->as_uint64());
    } else {
      p.mode = tg::codecs::zfp_mode::fixed_accuracy;
      p.tolerance = *d.params.find("zfp_tolerance")->as_double();
    }
    // The reference refuses a stream longer than libzfp's bound for N
    // doubles (64-bit stream words: the byte bound rounded up to 8).
    std::vector<double> scratch(1);
    zfp_field* field = zfp_field_1d(scratch.data(), zfp_type_double, static_cast<std::size_t>(n));
    zfp_stream* zs = zfp_stream_open(nullptr);
    if (p.mode == tg::codecs::zfp_mode::fixed_rate) zfp_stream_set_rate(zs, p.rate, zfp_type_double, 1, 0);
    if (p.mode == tg::codecs::zfp_mode::fixed_precision) zfp_stream_set_precision(zs, p.precision);
    if (p.mode == tg::codecs::zfp_mode::fixed_accuracy) zfp_stream_set_accuracy(zs, p.tolerance);
    const std::size_t bound = (zfp_stream_maximum_size(zs, field) + 7) / 8 * 8;
    zfp_stream_close(zs);
    zfp_field_free(field);
    if (b.payload.size() > bound) return std::nullopt;
    const bytes host = tg::codecs::zfp_decompress(b.payload, n, p);  // N values, whatever the dtype
    values.resize(n);
    std::memcpy(values.data(), host.data(), host.size());
  } else {
    values.resize(tg::codecs::sz3_inspect(b.payload).num);  // the stream's own count
    tg::codecs::sz3_decompress(b.payload, std::span<double>(values));
  }
  // Written in the declared order...
  bytes out = codectest::f64_bytes(values, declared);
  // ...then swapped per dtype unit to the requested order.
  const std::size_t unit = tg::dtype_swap_unit(d.dtype);
  if (native && declared != tg::native_byte_order() && unit > 1) {
    for (std::size_t i = 0; i + unit <= out.size(); i += unit)
      std::reverse(out.begin() + i, out.begin() + i + unit);
  }
  const bool has_masks =
      std::any_of(b.masks.begin(), b.masks.end(), [](const auto& m) { return m.has_value(); });
  if (!has_masks) return out;
  const std::size_t w = tg::dtype_width(d.dtype);
  if (out.size() != n * w) return std::nullopt;  // the reference's restore refuses
  const tg::byte_order target = native ? tg::native_byte_order() : declared;
  const std::size_t part = unit;
  for (std::size_t k = 0; k < 3; ++k) {
    if (!b.masks[k]) continue;
    for (std::uint64_t i = 0; i < n; ++i) {
      if (((static_cast<unsigned>((*b.masks[k])[i / 8]) >> (7 - i % 8)) & 1U) == 0) continue;
      for (std::size_t at = 0; at < w; at += part) {
        std::uint64_t pattern = 0;
        if (part == 2) {
          const bool bf = d.dtype == tg::dtype::bfloat16;
          pattern = std::array<std::uint64_t, 3>{bf ? 0x7FC0u : 0x7E00u, bf ? 0x7F80u : 0x7C00u,
                                                 bf ? 0xFF80u : 0xFC00u}[k];
        } else if (part == 4) {
          pattern = std::array<std::uint64_t, 3>{0x7FC00000u, 0x7F800000u, 0xFF800000u}[k];
        } else {
          pattern = std::array<std::uint64_t, 3>{0x7FF8000000000000ull, 0x7FF0000000000000ull,
                                                 0xFFF0000000000000ull}[k];
        }
        for (std::size_t byte = 0; byte < part; ++byte) {
          const std::size_t shift = target == tg::byte_order::big ? 8 * (part - 1 - byte) : 8 * byte;
          out[i * w + at + byte] = static_cast<std::byte>((pattern >> shift) & 0xFF);
        }
      }
    }
  }
  return out;
}

// Shapes from 1-D to 4-D, none a multiple of zfp's block of four values;
// only those whose input is whole doubles (N·W a multiple of 8) are written
// by the reference.
const std::vector<std::vector<std::uint64_t>>& shapes() {
  static const std::vector<std::vector<std::uint64_t>> s{{24},      {6},   {3, 8}, {2, 3, 5}, {2, 3, 2, 2},
                                                         {1, 7, 8}, {130}, {64},   {8, 9, 3}, {5, 2, 4, 2}};
  return s;
}

bool writable(tg::dtype t, std::uint64_t n) {
  if (t == tg::dtype::bitmask) return ((n + 7) / 8) % 8 == 0;
  return (n * tg::dtype_width(t)) % 8 == 0;
}

}  // namespace

TEST(ReinterpretedFloat64, EveryDtypeOrderModeMaskAndShapeDecodesAsTheModelSays) {
  std::mt19937 rng(42);
  std::size_t checked = 0, refused = 0;
  for (tg::dtype t : tg::all_dtypes) {
    for (tg::byte_order order : {tg::byte_order::little, tg::byte_order::big}) {
      for (const codec_case& c : codec_cases()) {
        for (bool non_finite : {false, true}) {
          if (non_finite && !tg::dtype_is_float(t)) continue;
          for (const auto& shape : shapes()) {
            std::uint64_t n = 1;
            for (auto s : shape) n *= s;
            if (!writable(t, n)) continue;
            const std::string what = std::string(tg::dtype_name(t)) +
                                     (order == tg::byte_order::big ? " big " : " little ") + c.compression +
                                     " " + c.mode + (non_finite ? " masked" : "") + " n=" + std::to_string(n);
            const bytes raw = make_raw(t, order, n, non_finite, rng);
            const built b = reference_style(t, order, shape, c, raw);
            const tg::buffer msg = tg::buffer::borrowed(b.message);
            for (bool native : {true, false}) {
              tg::decode_options opts;
              opts.native_byte_order = native;
              const std::optional<bytes> want = model_decode(b, native);
              if (!want) {
                EXPECT_THROW((void)tg::decode(msg, opts), tg::error) << what;
                if (t != tg::dtype::bitmask) {
                  EXPECT_THROW(
                      (void)tg::decode_range(
                          msg, 0, std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, 1}}, opts),
                      tg::error)
                      << what;
                }
                ++refused;
                continue;
              }
              const tg::message m = tg::decode(msg, opts);
              ASSERT_EQ(codectest::to_bytes(m.object(0).data_buffer()), *want)
                  << what << (native ? " native" : " declared");
              EXPECT_EQ(m.object(0).reinterpreted_as_float64(), t != tg::dtype::float64) << what;
              ++checked;
              if (t == tg::dtype::bitmask) continue;  // no range decode for bitmask
              const std::uint64_t w = tg::dtype_width(t);
              const std::uint64_t fit = std::min<std::uint64_t>(n, want->size() / w);
              const std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges{
                  {0, fit}, {fit / 2, fit - fit / 2}, {fit - 1, 1}};
              const auto parts = tg::decode_range(msg, 0, ranges, opts);
              for (std::size_t r = 0; r < ranges.size(); ++r) {
                const auto from = want->begin() + static_cast<std::ptrdiff_t>(ranges[r].first * w);
                EXPECT_EQ(codectest::to_bytes(parts[r]),
                          bytes(from, from + static_cast<std::ptrdiff_t>(ranges[r].second * w)))
                    << what << " range " << r;
              }
            }
          }
        }
      }
    }
  }
  // Every dtype took part; the reference's decoder refuses masked zfp
  // objects of dtypes not 8 bytes wide and fixed-rate zfp on complex128.
  EXPECT_GT(checked, 1000u);
  EXPECT_GT(refused, 50u);
}

// Truncated or corrupted payloads of any dtype: a typed error that names the
// object, never a crash or an allocation beyond what the descriptor implies.
TEST(ReinterpretedFloat64, DamagedPayloadsAreTypedErrors) {
  std::mt19937 rng(5);
  for (tg::dtype t : {tg::dtype::float32, tg::dtype::int16, tg::dtype::complex128, tg::dtype::uint8}) {
    for (const codec_case& c : codec_cases()) {
      const std::vector<std::uint64_t> shape{24, 40};
      const bytes raw = make_raw(t, tg::byte_order::little, 960, false, rng);
      const built b = reference_style(t, tg::byte_order::little, shape, c, raw);
      for (std::size_t cut : {std::size_t{1}, b.payload.size() / 2, b.payload.size() - 1}) {
        for (bool flip : {false, true}) {
          bytes payload(b.payload.begin(), b.payload.begin() + static_cast<std::ptrdiff_t>(cut));
          if (flip) {
            payload = b.payload;
            for (std::size_t i = cut % 7; i < payload.size(); i += 13)
              payload[i] ^= static_cast<std::byte>(rng() | 1);
          }
          const bytes msg = wrap(b.descriptor, payload);
          try {
            const tg::message m = tg::decode(tg::buffer::borrowed(msg));
            // zfp reads a short stream as if zero-padded, as the reference
            // does: the result then has the reference's size.
            EXPECT_EQ(c.compression, "zfp");
            EXPECT_EQ(m.object(0).bytes().size(), 960u * 8);
          } catch (const tg::encoding_error& e) {
            EXPECT_FALSE(std::string(e.what()).empty());
          } catch (const tg::error& e) {
            ADD_FAILURE() << "untyped for this codec path: " << e.what();
          }
        }
      }
    }
  }
  // A zfp descriptor claiming far more values than any stream of its size
  // can hold is refused before anything is allocated.
  tg::data_object_descriptor d =
      tg::data_object_descriptor::contiguous(tg::dtype::uint8, {std::uint64_t{1} << 40});
  set_codec(d, codec_cases()[0]);
  const bytes payload(64, std::byte{0});
  const bytes msg = wrap(d, payload);
  EXPECT_THROW((void)tg::decode(tg::buffer::borrowed(msg)), tg::encoding_error);
}

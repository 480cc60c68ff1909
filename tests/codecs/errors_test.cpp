// Pipeline validation errors with their categories (spec 03 §2, §3, §12)
// and corrupted compressed payloads (every failure is a tensogram::error,
// never a crash; hostile size prefixes are refused without allocating).
#include <algorithm>
#include <random>

#include "codec_support.hpp"

namespace {

using namespace codectest;
using tg::dtype;

bytes f64_input(std::uint64_t n, tg::byte_order order = tg::native_byte_order()) {
  std::vector<double> v;
  for (std::uint64_t i = 0; i < n; ++i) v.push_back(static_cast<double>(i % 17) * 1.25 - 3.0);
  return f64_bytes(v, order);
}

TEST(PipelineValidation, UnknownNames) {
  const bytes in = f64_input(8);
  for (const char* c : {"sz4", "gzip", "ZSTD", "SZ3", ""}) {
    SCOPED_TRACE(c);
    tg::data_object_descriptor d = f64_desc(8);
    d.compression = c;
    expect_error<tg::encoding_error>([&] { (void)encode_one(d, in); });
  }
  {
    tg::data_object_descriptor d = f64_desc(8);
    d.compression = "gzip";
    expect_error<tg::encoding_error>([&] { (void)encode_one(d, in); }, "unknown compression: gzip");
  }
  {
    tg::data_object_descriptor d = f64_desc(8);
    d.encoding = "grib";
    expect_error<tg::encoding_error>([&] { (void)encode_one(d, in); }, "unknown encoding: grib");
  }
  {
    tg::data_object_descriptor d = f64_desc(8);
    d.filter = "bitshuffle";
    expect_error<tg::encoding_error>([&] { (void)encode_one(d, in); }, "unknown filter: bitshuffle");
  }
}

TEST(PipelineValidation, DtypeRestrictions) {
  const bytes in32(32);
  {
    tg::data_object_descriptor d = tg::data_object_descriptor::contiguous(dtype::float32, {8});
    d.encoding = "simple_packing";
    d.params.set("sp_bits_per_value", cbor::value(16));
    expect_error<tg::encoding_error>([&] { (void)encode_one(d, in32); },
                                     "simple_packing only supports float64");
  }
  for (const char* c : {"rle", "roaring"}) {
    tg::data_object_descriptor d = tg::data_object_descriptor::contiguous(dtype::float32, {8});
    d.compression = c;
    expect_error<tg::encoding_error>([&] { (void)encode_one(d, in32); },
                                     "compression \"" + std::string(c) + "\" only supports dtype=bitmask");
  }
  {
    // szip on float64 without shuffle: 64 bits per sample.
    tg::data_object_descriptor d = f64_desc(8);
    d.compression = "szip";
    d.params.set("szip_rsi", cbor::value(8));
    d.params.set("szip_block_size", cbor::value(16));
    d.params.set("szip_flags", cbor::value(8));
    expect_error<tg::encoding_error>([&] { (void)encode_one(d, f64_input(8)); });
  }
}

TEST(PipelineValidation, MissingAndIllTypedParameters) {
  const bytes in = f64_input(8);
  {
    tg::data_object_descriptor d = f64_desc(8);
    d.encoding = "simple_packing";
    expect_error<tg::metadata_error>([&] { (void)encode_one(d, in); },
                                     "missing required parameter: sp_bits_per_value");
  }
  {
    tg::data_object_descriptor d = f64_desc(8);
    d.encoding = "simple_packing";
    d.params.set("sp_bits_per_value", cbor::value("16"));
    expect_error<tg::metadata_error>([&] { (void)encode_one(d, in); },
                                     "expected integer for sp_bits_per_value");
  }
  {
    tg::data_object_descriptor d = f64_desc(8);
    d.encoding = "simple_packing";
    d.params.set("sp_bits_per_value", cbor::value(65));
    expect_error<tg::encoding_error>([&] { (void)encode_one(d, in); },
                                     "bits_per_value 65 exceeds maximum of 64");
  }
  {
    tg::data_object_descriptor d = tg::data_object_descriptor::contiguous(dtype::uint8, {64});
    d.compression = "szip";
    d.params.set("szip_block_size", cbor::value(16));
    d.params.set("szip_flags", cbor::value(8));
    expect_error<tg::metadata_error>([&] { (void)encode_one(d, bytes(64)); },
                                     "missing required parameter: szip_rsi");
    d.params.set("szip_rsi", cbor::value(2.5));
    expect_error<tg::metadata_error>([&] { (void)encode_one(d, bytes(64)); },
                                     "expected integer for szip_rsi");
    d.params.set("szip_rsi", cbor::value(8));
    d.params.set("szip_block_size", cbor::value(7));
    expect_error<tg::encoding_error>([&] { (void)encode_one(d, bytes(64)); });
    d.params.set("szip_block_size", cbor::value(16));
    d.params.set("szip_rsi", cbor::value(5000));
    expect_error<tg::encoding_error>([&] { (void)encode_one(d, bytes(64)); });
  }
  {
    tg::data_object_descriptor d = f64_desc(8);
    d.compression = "zstd";
    d.params.set("zstd_level", cbor::value("high"));
    expect_error<tg::metadata_error>([&] { (void)encode_one(d, in); }, "expected integer for zstd_level");
  }
  {
    tg::data_object_descriptor d = f64_desc(8);
    d.compression = "zfp";
    d.params.set("zfp_rate", cbor::value(16.0));
    expect_error<tg::metadata_error>([&] { (void)encode_one(d, in); },
                                     "missing required parameter: zfp_mode");
    d.params.set("zfp_mode", cbor::value(1));
    expect_error<tg::metadata_error>([&] { (void)encode_one(d, in); },
                                     "missing required parameter: zfp_mode");
    d.params.set("zfp_mode", cbor::value("bogus"));
    expect_error<tg::encoding_error>([&] { (void)encode_one(d, in); }, "unknown zfp_mode: bogus");
    d.params.set("zfp_mode", cbor::value("fixed_precision"));
    expect_error<tg::metadata_error>([&] { (void)encode_one(d, in); },
                                     "missing required parameter: zfp_precision");
    d.params.set("zfp_mode", cbor::value("fixed_accuracy"));
    d.params.set("zfp_tolerance", cbor::value(0.0));
    expect_error<tg::encoding_error>([&] { (void)encode_one(d, in); });
  }
  {
    tg::data_object_descriptor d = f64_desc(8);
    d.filter = "shuffle";
    expect_error<tg::metadata_error>([&] { (void)encode_one(d, in); },
                                     "missing required parameter: shuffle_element_size");
    d.params.set("shuffle_element_size", cbor::value(0));
    expect_error<tg::encoding_error>([&] { (void)encode_one(d, in); });
    d.params.set("shuffle_element_size", cbor::value(3));
    expect_error<tg::encoding_error>([&] { (void)encode_one(d, in); });
  }
}

// §12 item 4: caller-supplied szip_block_offsets.
TEST(PreEncodedSzipOffsets, ValidationRules) {
  const std::uint64_t n = 512;
  std::vector<double> values;
  for (std::uint64_t i = 0; i < n; ++i) values.push_back(static_cast<double>((i * 13) % 251));
  const bytes raw = f64_bytes(values, tg::native_byte_order());
  const tg::data_object_descriptor d = sp_szip_desc(n, 8, 4, 16, raw);
  const auto enc = tg::build_pipeline(d).encode(raw, n, tg::native_byte_order());
  ASSERT_TRUE(enc.szip_block_offsets.has_value());
  ASSERT_GE(enc.szip_block_offsets->size(), 2u);
  const std::uint64_t bit_bound = 8 * enc.payload.size();
  auto with = [&](cbor::value offsets) {
    tg::data_object_descriptor p = d;
    p.params.set("szip_block_offsets", std::move(offsets));
    return p;
  };
  auto arr = [](std::initializer_list<std::uint64_t> v) {
    cbor::value a = cbor::value::make_array();
    for (std::uint64_t x : v) a.as_array()->push_back(cbor::value(x));
    return a;
  };
  const std::uint64_t second = (*enc.szip_block_offsets)[1];
  // Valid: the encoder's own offsets, and absent offsets.
  EXPECT_NO_THROW((void)encode_pre(d, enc.payload));
  cbor::value good = cbor::value::make_array();
  for (std::uint64_t o : *enc.szip_block_offsets) good.as_array()->push_back(cbor::value(o));
  const bytes msg = encode_pre(with(good), enc.payload);
  EXPECT_EQ(to_bytes(decode_msg(msg).object(0).bytes()), raw);  // B = 8 holds 0..250 exactly

  expect_error<tg::metadata_error>([&] { (void)encode_pre(with(cbor::value(0)), enc.payload); });
  expect_error<tg::metadata_error>([&] { (void)encode_pre(with(cbor::value::make_map()), enc.payload); });
  expect_error<tg::metadata_error>([&] { (void)encode_pre(with(arr({})), enc.payload); },
                                   "must not be empty");
  expect_error<tg::metadata_error>(
      [&] {
        (void)encode_pre(with(arr({8, second})), enc.payload);
      },
      "szip_block_offsets[0] must be 0");
  expect_error<tg::metadata_error>(
      [&] {
        (void)encode_pre(with(arr({0, second, second})), enc.payload);
      },
      "strictly increasing");
  expect_error<tg::metadata_error>(
      [&] {
        (void)encode_pre(with(arr({0, second, second - 1})), enc.payload);
      },
      "strictly increasing");
  expect_error<tg::metadata_error>(
      [&] {
        (void)encode_pre(with(arr({0, bit_bound + 1})), enc.payload);
      },
      "bit bound");
  cbor::value not_int = cbor::value::make_array();
  not_int.as_array()->push_back(cbor::value(0));
  not_int.as_array()->push_back(cbor::value("8"));
  expect_error<tg::metadata_error>([&] { (void)encode_pre(with(not_int), enc.payload); });
  cbor::value negative = cbor::value::make_array();
  negative.as_array()->push_back(cbor::value(0));
  negative.as_array()->push_back(cbor::value(-8));
  expect_error<tg::metadata_error>([&] { (void)encode_pre(with(negative), enc.payload); });
  // Offsets on a non-szip compression.
  tg::data_object_descriptor plain = tg::data_object_descriptor::contiguous(dtype::uint8, {n});
  plain.params.set("szip_block_offsets", arr({0}));
  expect_error<tg::metadata_error>([&] { (void)encode_pre(plain, bytes(n)); },
                                   "szip_block_offsets provided but compression is 'none'");
  tg::data_object_descriptor sp_none = d;
  sp_none.compression = "none";
  sp_none.params.set("szip_block_offsets", arr({0}));
  expect_error<tg::metadata_error>([&] { (void)encode_pre(sp_none, bytes(n)); },
                                   "szip_block_offsets provided but compression is 'none'");
  sp_none.compression = "zstd";
  expect_error<tg::metadata_error>([&] { (void)encode_pre(sp_none, bytes(n)); },
                                   "szip_block_offsets provided but compression is 'zstd'");
  // Raw-mode encode overwrites caller offsets with its own.
  const bytes raw_msg = encode_one(with(arr({0, 1, 2})), raw);
  const tg::message raw_decoded = decode_msg(raw_msg);
  const auto* written = raw_decoded.object(0).descriptor().params.find("szip_block_offsets");
  ASSERT_NE(written, nullptr);
  ASSERT_EQ(written->as_array()->size(), enc.szip_block_offsets->size());
  EXPECT_EQ((*written->as_array())[1].as_uint64(), second);
}

TEST(PreEncodedValidation, ResolvesConfigurationLikeDecode) {
  // simple_packing needs all four sp_* keys in pre-encoded mode.
  tg::data_object_descriptor d = f64_desc(4);
  d.encoding = "simple_packing";
  d.params.set("sp_bits_per_value", cbor::value(8));
  d.params.set("sp_reference_value", cbor::value(0.0));
  d.params.set("sp_binary_scale_factor", cbor::value(0));
  expect_error<tg::metadata_error>([&] { (void)encode_pre(d, bytes(4)); },
                                   "missing required parameter: sp_decimal_scale_factor");
  d.params.set("sp_decimal_scale_factor", cbor::value(0));
  const bytes msg = encode_pre(d, tgtest::B({1, 2, 3, 4}));
  EXPECT_EQ(f64_values(decode_msg(msg).object(0).bytes(), tg::native_byte_order()),
            (std::vector<double>{1, 2, 3, 4}));
}

// ---- corrupted payloads ------------------------------------------------

struct corrupt_case {
  std::string name;
  tg::data_object_descriptor d;
  bytes raw;
};

std::vector<corrupt_case> corrupt_cases() {
  std::vector<corrupt_case> out;
  const std::uint64_t n = 600;
  std::mt19937_64 rng(77);
  bytes noisy;
  for (std::uint64_t i = 0; i < n * 4; ++i)
    noisy.push_back(static_cast<std::byte>(i % 9 == 0 ? rng() & 0xFF : i % 31));
  for (const char* c : {"zstd", "lz4", "szip"}) {
    tg::data_object_descriptor d =
        tg::data_object_descriptor::contiguous(dtype::uint32, {n}, tg::byte_order::little);
    d.compression = c;
    if (std::string(c) == "szip") {
      d.params.set("szip_rsi", cbor::value(4));
      d.params.set("szip_block_size", cbor::value(16));
      d.params.set("szip_flags", cbor::value(8));
    }
    out.push_back({c, d, noisy});
  }
  {
    tg::data_object_descriptor d = f64_desc(n, tg::byte_order::little);
    d.compression = "zfp";
    d.params.set("zfp_mode", cbor::value("fixed_accuracy"));
    d.params.set("zfp_tolerance", cbor::value(1e-3));
    out.push_back({"zfp", d, f64_input(n, tg::byte_order::little)});
  }
  for (const char* c : {"rle", "roaring"}) {
    tg::data_object_descriptor d = tg::data_object_descriptor::contiguous(dtype::bitmask, {n * 8});
    d.compression = c;
    bytes bits(n);
    for (std::uint64_t i = 0; i < n; ++i)
      bits[i] = static_cast<std::byte>(i % 50 < 20 ? 0xFF : i % 7 == 0 ? 0x5A : 0);
    out.push_back({c, d, bits});
  }
  return out;
}

// Decoding never crashes: it succeeds or throws a tensogram::error.
void decode_survives(const bytes& msg, const std::string& what) {
  try {
    (void)decode_msg(msg, true, true, false);
  } catch (const tg::error&) {
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": non-tensogram exception " << e.what();
  }
}

TEST(CorruptPayloads, FlippedBytesInsideAMessage) {
  for (const corrupt_case& c : corrupt_cases()) {
    SCOPED_TRACE(c.name);
    const std::uint64_t n = c.d.element_count();
    const auto enc = tg::build_pipeline(c.d).encode(c.raw, n, tg::byte_order::little);
    tg::encode_options no_hash = fixed_options();
    no_hash.hash_algo = "";
    const bytes msg = encode_one(c.d, c.raw, no_hash);
    ASSERT_EQ(to_bytes(decode_msg(msg).object(0).bytes()).size(), c.raw.size());
    const auto at = std::search(msg.begin(), msg.end(), enc.payload.begin(), enc.payload.end());
    ASSERT_NE(at, msg.end()) << "payload not found in the message";
    const auto base = static_cast<std::size_t>(at - msg.begin());
    std::mt19937_64 rng(c.name.size());
    int failures = 0;
    for (int trial = 0; trial < 200; ++trial) {
      bytes bad = msg;
      const std::size_t count = 1 + rng() % 4;
      for (std::size_t k = 0; k < count; ++k) {
        // Early bytes (headers, size prefixes) get hit more often.
        const std::size_t pos = trial % 2 == 0 ? rng() % std::min<std::size_t>(16, enc.payload.size())
                                               : rng() % enc.payload.size();
        bad[base + pos] ^= static_cast<std::byte>(1 + rng() % 255);
      }
      try {
        (void)decode_msg(bad, true, true, false);
      } catch (const tg::error&) {
        ++failures;
      } catch (const std::exception& e) {
        ADD_FAILURE() << "trial " << trial << ": non-tensogram exception " << e.what();
      }
    }
    if (c.name != "zfp") {
      EXPECT_GT(failures, 0) << "no corruption was ever detected";
    }
  }
}

TEST(CorruptPayloads, TruncatedPayloadsThroughThePipeline) {
  for (const corrupt_case& c : corrupt_cases()) {
    SCOPED_TRACE(c.name);
    const std::uint64_t n = c.d.element_count();
    const auto pipe = tg::build_pipeline(c.d);
    const auto enc = pipe.encode(c.raw, n, tg::byte_order::little);
    EXPECT_EQ(to_bytes(pipe.decode(tg::buffer::borrowed(enc.payload), n, tg::byte_order::little,
                                   tg::byte_order::little)),
              c.raw);
    for (std::size_t cut :
         {std::size_t{0}, std::size_t{1}, std::size_t{3}, enc.payload.size() / 2, enc.payload.size() - 1}) {
      SCOPED_TRACE(cut);
      const std::span<const std::byte> part(enc.payload.data(), cut);
      if (c.name == "zfp" && cut > 0) {
        // zfp decodes from a zero-padded copy (spec 03 §8.6): a short
        // stream decodes to some values; it must not crash.
        try {
          (void)pipe.decode(tg::buffer::borrowed(part), n, tg::byte_order::little, tg::byte_order::little);
        } catch (const tg::error&) {
        }
      } else if (cut + 1 == enc.payload.size()) {
        // Dropping the last byte may only drop padding bits: then the data
        // must still be exact, otherwise it is an error.
        try {
          EXPECT_EQ(to_bytes(pipe.decode(tg::buffer::borrowed(part), n, tg::byte_order::little,
                                         tg::byte_order::little)),
                    c.raw);
        } catch (const tg::error&) {
        }
      } else {
        EXPECT_THROW(
            (void)pipe.decode(tg::buffer::borrowed(part), n, tg::byte_order::little, tg::byte_order::little),
            tg::error);
      }
    }
    // Trailing garbage is not silently accepted as data either (or is ignored
    // and yields the same data); never a crash.
    bytes longer = enc.payload;
    longer.insert(longer.end(), 64, std::byte{0xAB});
    try {
      EXPECT_EQ(to_bytes(pipe.decode(tg::buffer::borrowed(longer), n, tg::byte_order::little,
                                     tg::byte_order::little)),
                c.raw);
    } catch (const tg::error&) {
    }
  }
}

TEST(CorruptPayloads, SpecificMalformedBlobs) {
  // rle: bad start byte, zero-length run, runs not summing to n.
  EXPECT_THROW((void)tg::codecs::rle_decode_bits(tgtest::B({0x02, 0x08}), 8), tg::error);
  EXPECT_THROW((void)tg::codecs::rle_decode_bits(tgtest::B({0x00, 0x00, 0x08}), 8), tg::error);
  EXPECT_THROW((void)tg::codecs::rle_decode_bits(tgtest::B({0x00, 0x05}), 8), tg::error);
  EXPECT_THROW((void)tg::codecs::rle_decode_bits(tgtest::B({0x00, 0x09}), 8), tg::error);
  EXPECT_THROW((void)tg::codecs::rle_decode_bits(tgtest::B({0x00, 0x80}), 8), tg::error);  // truncated ULEB
  EXPECT_THROW((void)tg::codecs::rle_decode_bits(tgtest::B({0x00}), 0), tg::error);
  EXPECT_THROW((void)tg::codecs::rle_decode_bits(
                   tgtest::B({0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}), 8),
               tg::error);
  // rle codec: prefix n disagreeing with the expected size.
  EXPECT_THROW((void)tg::codecs::rle_decompress(tgtest::B({0, 0, 0, 16, 0x00, 0x10}), 1), tg::error);
  // roaring: bad cookie, key ≥ n, truncated.
  EXPECT_THROW((void)tg::codecs::roaring_decode_bits(tgtest::B({0x3C, 0x30, 0, 0, 0, 0, 0, 0}), 8),
               tg::error);
  EXPECT_THROW(
      (void)tg::codecs::roaring_decode_bits(tgtest::from_hex("3A300000 01000000 0000 0000 10000000 0900"), 8),
      tg::error);
  EXPECT_THROW((void)tg::codecs::roaring_decode_bits(tgtest::from_hex("3A300000 01000000 0000"), 8),
               tg::error);
  EXPECT_THROW((void)tg::codecs::roaring_decode_bits(tgtest::from_hex("3A300000 FFFFFFFF"), 8), tg::error);
  EXPECT_THROW((void)tg::codecs::roaring_decompress(tgtest::from_hex("00000008 3A300000 00000000"), 2),
               tg::error);
}

TEST(CorruptPayloads, HostileLz4SizePrefixIsRefusedWithoutAllocating) {
  bytes hostile = tgtest::from_hex("FFFFFFFF 00");
  EXPECT_THROW((void)tg::codecs::lz4_decompress(hostile, 1000), tg::error);
  EXPECT_THROW((void)tg::codecs::lz4_decompress(hostile, std::numeric_limits<std::size_t>::max()), tg::error);
  bytes exactly4g = tgtest::from_hex("00000000 01 00");  // fine prefix, corrupt block
  EXPECT_THROW((void)tg::codecs::lz4_decompress(exactly4g, 1000), tg::error);
  // Inside a message: patch the prefix of a real lz4 payload.
  const std::uint64_t n = 100;
  tg::data_object_descriptor d = f64_desc(n);
  d.compression = "lz4";
  const bytes raw = f64_input(n);
  const auto enc = tg::build_pipeline(d).encode(raw, n, tg::native_byte_order());
  tg::encode_options no_hash = fixed_options();
  no_hash.hash_algo = "";
  bytes msg = encode_one(d, raw, no_hash);
  const auto at = std::search(msg.begin(), msg.end(), enc.payload.begin(), enc.payload.end());
  ASSERT_NE(at, msg.end());
  for (std::size_t k = 0; k < 4; ++k) at[static_cast<std::ptrdiff_t>(k)] = std::byte{0xFF};
  expect_error<tg::error>([&] { (void)decode_msg(msg); });
  // A prefix larger than N·W but small is also refused (spec 03 §9.2 SHOULD).
  at[0] = std::byte{0x48};  // 800 + 0x48 - 0x20 ... any value ≠ 800
  at[1] = std::byte{0x03};
  at[2] = std::byte{0};
  at[3] = std::byte{0};
  expect_error<tg::error>([&] { (void)decode_msg(msg); });
  decode_survives(msg, "lz4 prefix");
}

TEST(CorruptPayloads, ZstdDecompressedSizeMustMatch) {
  // A valid zstd frame of the wrong size inside a message → Encoding error.
  const std::uint64_t n = 16;
  tg::data_object_descriptor d = f64_desc(n);
  d.compression = "zstd";
  const bytes raw = f64_input(n);
  const auto enc = tg::build_pipeline(d).encode(raw, n, tg::native_byte_order());
  // Pre-encoded zstd with encoding none is impossible to submit (length check),
  // so decode the short frame through the pipeline.
  const bytes short_frame = tg::codecs::zstd_compress(bytes(8), 3);
  const auto pipe = tg::build_pipeline(d);
  EXPECT_THROW((void)pipe.decode(tg::buffer::borrowed(short_frame), n, tg::native_byte_order(),
                                 tg::native_byte_order()),
               tg::encoding_error);
  EXPECT_EQ(to_bytes(pipe.decode(tg::buffer::borrowed(enc.payload), n, tg::native_byte_order(),
                                 tg::native_byte_order())),
            raw);
}

}  // namespace

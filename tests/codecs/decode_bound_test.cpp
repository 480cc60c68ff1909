// Decode work is bounded by the payload (issue 28 item 7, docs/fuzzing.md
// "Decode work"): for every compression codec and for simple_packing, a
// hostile payload of about 1 MiB under a descriptor that claims far more
// than it can hold (2^27 elements, 1 GiB decoded) must decode or fail with
// a `tensogram::error` quickly. The limit (2 s per decode, 10 s in the
// sanitizer build, where one decode already took 0.5–1 s under load) is
// generous so the test cannot flake; without the bounds, the claims cost
// allocations and loops of gigabytes (a zfp claim took 92–126 s).
//
// Payloads per pipeline: 1 MiB of random bytes, and a valid payload of the
// same pipeline (4096 smooth values) repeated to 1 MiB, decoded both with
// the hostile claim and with the element count the valid payload holds.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <tensogram.hpp>
#include <tensogram/message/pipeline_params.hpp>

namespace {

namespace tg = tensogram;
namespace cbor = tensogram::cbor;
using clock_type = std::chrono::steady_clock;

constexpr std::uint64_t k_valid_count = 4096;
constexpr std::uint64_t k_claim = std::uint64_t{1} << 27;
constexpr std::size_t k_hostile_bytes = std::size_t{1} << 20;
#ifdef NDEBUG
constexpr double k_limit_seconds = 2.0;
#else
constexpr double k_limit_seconds = 10.0;
#endif

struct pipeline_case {
  std::string name;
  tg::data_object_descriptor descriptor;
};

tg::data_object_descriptor f64(std::uint64_t n) {
  return tg::data_object_descriptor::contiguous(tg::dtype::float64, {n});
}

std::vector<double> smooth_values(std::uint64_t n) {
  std::vector<double> v(n);
  for (std::uint64_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<double>(i) * 0.01) * 100.0;
  return v;
}

std::vector<pipeline_case> cases() {
  std::vector<pipeline_case> out;
  const auto add = [&](std::string name, std::string encoding, std::string compression,
                       std::vector<std::pair<std::string, cbor::value>> params) {
    if (compression != "none" && !tg::is_compression_built_in(compression)) return;
    tg::data_object_descriptor d = f64(k_valid_count);
    d.encoding = std::move(encoding);
    d.compression = std::move(compression);
    for (auto& [k, v] : params) d.params.set(k, std::move(v));
    out.push_back({std::move(name), std::move(d)});
  };
  add("none", "none", "none", {});
  add("zstd", "none", "zstd", {{"zstd_level", cbor::value(3)}});
  add("lz4", "none", "lz4", {});
  add("blosc2", "none", "blosc2", {{"blosc2_clevel", cbor::value(5)}, {"blosc2_codec", cbor::value("lz4")}});
  add("szip", "simple_packing", "szip",
      {{"sp_bits_per_value", cbor::value(16)},
       {"szip_rsi", cbor::value(128)},
       {"szip_block_size", cbor::value(16)},
       {"szip_flags", cbor::value(8)}});
  add("simple_packing", "simple_packing", "none", {{"sp_bits_per_value", cbor::value(12)}});
  add("zfp", "none", "zfp", {{"zfp_mode", cbor::value("fixed_rate")}, {"zfp_rate", cbor::value(16.0)}});
  add("sz3", "none", "sz3",
      {{"sz3_error_bound_mode", cbor::value("abs")}, {"sz3_error_bound", cbor::value(1e-3)}});
  return out;
}

// `d` with shape [n] (strides follow).
tg::data_object_descriptor with_count(const tg::data_object_descriptor& d, std::uint64_t n) {
  tg::data_object_descriptor out = tg::data_object_descriptor::contiguous(d.dtype, {n});
  out.encoding = d.encoding;
  out.filter = d.filter;
  out.compression = d.compression;
  out.params = d.params;
  return out;
}

// Decodes `payload` as `n` elements of `d`; returns the seconds taken and
// fails the test for any exception that is not a tensogram::error.
double timed_decode(const tg::data_object_descriptor& d, std::uint64_t n,
                    const std::vector<std::byte>& payload, const std::string& what) {
  const auto t0 = clock_type::now();
  try {
    const tg::codecs::pipeline pl = tg::build_pipeline(with_count(d, n));
    const tg::buffer out =
        pl.decode(tg::buffer::borrowed(payload), n, tg::native_byte_order(), tg::native_byte_order());
    EXPECT_EQ(out.size(), pl.decoded_size(n)) << what;
  } catch (const tg::error&) {
    // A refusal is the expected outcome of a hostile payload.
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": not a tensogram::error: " << e.what();
  }
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

class DecodeBound : public ::testing::TestWithParam<pipeline_case> {};

TEST_P(DecodeBound, HostileMegabyteDecodesOrFailsQuickly) {
  const pipeline_case& c = GetParam();
  // The pipeline's parameters resolved for real values (simple_packing's
  // reference value and scale), and a valid payload.
  const std::vector<double> values = smooth_values(k_valid_count);
  const std::span<const std::byte> raw = std::as_bytes(std::span<const double>(values));
  tg::data_object_descriptor d = c.descriptor;
  if (d.encoding == "simple_packing") tg::resolve_simple_packing_params(d, raw);
  const tg::codecs::pipeline pl = tg::build_pipeline(d);
  const std::vector<std::byte> valid = pl.encode(raw, k_valid_count, tg::native_byte_order()).payload;
  ASSERT_FALSE(valid.empty());
  // The valid payload decodes, so the pipeline itself is right.
  EXPECT_LT(timed_decode(d, k_valid_count, valid, c.name + " valid"), k_limit_seconds);

  std::mt19937_64 rng(28);
  std::vector<std::byte> random(k_hostile_bytes);
  for (auto& b : random) b = static_cast<std::byte>(rng());
  std::vector<std::byte> tiled;
  while (tiled.size() + valid.size() <= k_hostile_bytes)
    tiled.insert(tiled.end(), valid.begin(), valid.end());

  for (const auto& [label, payload] :
       {std::pair<const char*, const std::vector<std::byte>&>{"random", random}, {"tiled", tiled}}) {
    for (const std::uint64_t n : {k_claim, k_valid_count, std::uint64_t{payload.size()}}) {
      const std::string what = c.name + " " + label + " payload of " + std::to_string(payload.size()) +
                               " bytes as " + std::to_string(n) + " elements";
      EXPECT_LT(timed_decode(d, n, payload, what), k_limit_seconds) << what;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryCodec, DecodeBound, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<pipeline_case>& info) { return info.param.name; });

}  // namespace

// The threads budget (spec 03 §13): transparent stages give byte-identical
// messages for every thread count; decoded values never depend on it; errors
// report the same element whatever the thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <tensogram.hpp>
#include <vector>

namespace {

std::vector<double> field(std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = 280.0 + 25.0 * std::sin(static_cast<double>(i) * 1e-4);
  return v;
}

tensogram::data_object_descriptor packed(std::size_t n, const std::string& filter,
                                         const std::string& compression) {
  auto d = tensogram::data_object_descriptor::contiguous(tensogram::dtype::float64, {n});
  d.encoding = "simple_packing";
  d.params.set("sp_bits_per_value", 24);
  d.filter = filter;
  if (filter == "shuffle") d.params.set("shuffle_element_size", 3);
  d.compression = compression;
  if (compression == "szip") {
    d.params.set("szip_rsi", 128);
    d.params.set("szip_block_size", 16);
    d.params.set("szip_flags", 8);
  }
  return d;
}

std::vector<std::byte> encode_with(std::uint32_t threads, const std::vector<tensogram::object_input>& in) {
  tensogram::encode_options o;
  o.threads = threads;
  o.fixed_provenance = tensogram::provenance{"tensogram-cpp", "test", "2026-11-22T00:00:00Z", "uuid"};
  return tensogram::encode(tensogram::global_metadata{}, in, o);
}

}  // namespace

class ThreadDeterminism : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(ThreadDeterminism, SameBytesForEveryThreadCount) {
  const auto [filter, compression] = GetParam();
  const std::vector<double> v = field(300'001);  // several 64 Ki-value chunks plus a partial one
  const std::vector<tensogram::object_input> in{
      {packed(v.size(), filter, compression), std::as_bytes(std::span(v))},
      {packed(v.size(), filter, compression), std::as_bytes(std::span(v))}};
  const std::vector<std::byte> sequential = encode_with(0, in);
  for (std::uint32_t t : {1U, 2U, 3U, 8U}) EXPECT_EQ(encode_with(t, in), sequential) << "threads=" << t;

  tensogram::decode_options one;
  tensogram::decode_options many;
  many.threads = 4;
  const auto a = tensogram::decode(tensogram::buffer::borrowed(sequential), one);
  const auto b = tensogram::decode(tensogram::buffer::borrowed(sequential), many);
  ASSERT_EQ(a.num_objects(), 2U);
  for (std::size_t o = 0; o < 2; ++o) {
    ASSERT_EQ(a.object(o).data_size(), b.object(o).data_size());
    EXPECT_EQ(0, std::memcmp(a.object(o).data(), b.object(o).data(), a.object(o).data_size()));
    const double* x = b.object(o).data_as<double>();
    for (std::size_t i = 0; i < v.size(); i += 997) EXPECT_NEAR(x[i], v[i], 1e-5);
  }
}

INSTANTIATE_TEST_SUITE_P(Pipelines, ThreadDeterminism,
                         ::testing::Values(std::pair{"none", "none"}, std::pair{"shuffle", "none"},
                                           std::pair{"none", "szip"}, std::pair{"shuffle", "lz4"}));

TEST(ThreadBudget, ObjectsInParallelKeepOrderAndBytes) {
  // Uncompressed float32 objects: no codec uses the budget, so objects run
  // in parallel ("axis A").
  std::vector<std::vector<float>> data(6);
  std::vector<tensogram::object_input> in;
  for (std::size_t k = 0; k < data.size(); ++k) {
    data[k].assign(40'000, static_cast<float>(k) + 0.5f);
    in.push_back({tensogram::data_object_descriptor::contiguous(tensogram::dtype::float32, {40'000}),
                  std::as_bytes(std::span(data[k]))});
  }
  const std::vector<std::byte> sequential = encode_with(0, in);
  EXPECT_EQ(encode_with(4, in), sequential);
  const auto m = tensogram::decode(tensogram::buffer::borrowed(sequential));
  for (std::size_t k = 0; k < data.size(); ++k) EXPECT_EQ(m.object(k).data_as<float>()[123], data[k][0]);
}

TEST(ThreadBudget, FirstErrorIndependentOfThreads) {
  // A NaN in object 3 and another in object 1: the reported one is object
  // 1's first offender for every thread count.
  std::vector<std::vector<double>> data(5, std::vector<double>(20'000, 1.0));
  data[3][10] = std::nan("");
  data[1][7] = std::nan("");
  std::vector<tensogram::object_input> in;
  for (const auto& d : data) {
    in.push_back({tensogram::data_object_descriptor::contiguous(tensogram::dtype::float64, {d.size()}),
                  std::as_bytes(std::span(d))});
  }
  for (std::uint32_t t : {0U, 1U, 4U}) {
    try {
      (void)encode_with(t, in);
      FAIL() << "NaN accepted with threads=" << t;
    } catch (const tensogram::encoding_error& e) {
      EXPECT_NE(std::string(e.what()).find("element 7 "), std::string::npos) << e.what();
    }
  }
}

TEST(ThreadBudget, EnvironmentVariableValidated) {
  ASSERT_EQ(::setenv("TENSOGRAM_THREADS", "two", 1), 0);
  const std::vector<double> v(10, 1.0);
  const std::vector<tensogram::object_input> in{
      {tensogram::data_object_descriptor::contiguous(tensogram::dtype::float64, {v.size()}),
       std::as_bytes(std::span(v))}};
  EXPECT_THROW((void)tensogram::encode(tensogram::global_metadata{}, in), tensogram::encoding_error);
  ASSERT_EQ(::setenv("TENSOGRAM_THREADS", " 3 ", 1), 0);
  EXPECT_NO_THROW((void)tensogram::encode(tensogram::global_metadata{}, in));
  ASSERT_EQ(::unsetenv("TENSOGRAM_THREADS"), 0);
}

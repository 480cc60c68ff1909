// Helpers shared by the codec tests (tests/codecs).
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <tensogram.hpp>
#include "tensogram/codecs/bitmask_codecs.hpp"
#include "tensogram/codecs/lz4.hpp"
#include "tensogram/codecs/shuffle.hpp"
#include "tensogram/codecs/simple_packing.hpp"
#include "tensogram/codecs/szip.hpp"
#include "tensogram/codecs/zfp.hpp"
#include "tensogram/codecs/zstd.hpp"
#include "tensogram/message/masks.hpp"
#include "tensogram/message/pipeline_params.hpp"
#include "test_support.hpp"

namespace codectest {

namespace tg = tensogram;
namespace cbor = tensogram::cbor;
using tgtest::bytes;

/// float64 values as bytes in `order`.
inline bytes f64_bytes(const std::vector<double>& v, tg::byte_order order) {
  bytes out;
  for (double d : v) {
    const auto bits = std::bit_cast<std::uint64_t>(d);
    for (int b = 0; b < 8; ++b) {
      const int shift = order == tg::byte_order::big ? 8 * (7 - b) : 8 * b;
      out.push_back(static_cast<std::byte>((bits >> shift) & 0xFF));
    }
  }
  return out;
}

/// float64 values from bytes in `order`.
/// The bytes of a buffer as a vector, for EXPECT_EQ against expected bytes.
inline bytes to_bytes(const tg::buffer& b) {
  return bytes(b.bytes().begin(), b.bytes().end());
}

inline std::vector<double> f64_values(std::span<const std::byte> b, tg::byte_order order) {
  std::vector<double> out;
  for (std::size_t i = 0; i + 8 <= b.size(); i += 8) {
    std::uint64_t bits = 0;
    for (int k = 0; k < 8; ++k) {
      const auto byte = static_cast<std::uint64_t>(b[i + static_cast<std::size_t>(k)]);
      bits |= order == tg::byte_order::big ? byte << (8 * (7 - k)) : byte << (8 * k);
    }
    out.push_back(std::bit_cast<double>(bits));
  }
  return out;
}

inline bytes text_bytes(std::string_view s) {
  bytes out;
  for (char c : s) out.push_back(static_cast<std::byte>(c));
  return out;
}

inline tg::encode_options fixed_options() {
  tg::encode_options o;
  o.fixed_provenance = tgtest::test_provenance();
  return o;
}

inline bytes encode_one(const tg::data_object_descriptor& d, std::span<const std::byte> data,
                        const tg::encode_options& o = fixed_options()) {
  const tg::object_input in{d, data};
  return tg::encode({}, std::span(&in, 1), o);
}

inline bytes encode_pre(const tg::data_object_descriptor& d, std::span<const std::byte> data,
                        const tg::encode_options& o = fixed_options()) {
  const tg::object_input in{d, data};
  return tg::encode_pre_encoded({}, std::span(&in, 1), o);
}

inline tg::message decode_msg(const bytes& msg, bool native = true, bool restore = true,
                              bool verify = false) {
  tg::decode_options o;
  o.native_byte_order = native;
  o.restore_non_finite = restore;
  o.verify_hash = verify;
  return tg::decode(tg::buffer::borrowed(msg), o);
}

inline bytes to_bytes(std::span<const std::byte> s) {
  return bytes(s.begin(), s.end());
}

/// Runs `f`, expecting an exception of type E whose message contains `fragment`.
template <typename E, typename F>
void expect_error(F&& f, std::string_view fragment = {}) {
  try {
    f();
    ADD_FAILURE() << "expected an exception containing '" << fragment << "'";
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

/// A float64 descriptor of n elements.
inline tg::data_object_descriptor f64_desc(std::uint64_t n, tg::byte_order order = tg::native_byte_order()) {
  return tg::data_object_descriptor::contiguous(tg::dtype::float64, {n}, order);
}

}  // namespace codectest

namespace codectest {

/// A float64 simple_packing (B bits) + szip descriptor with the sp_* keys
/// resolved for `raw`, as pre-encoded payloads need them.
inline tg::data_object_descriptor sp_szip_desc(std::uint64_t n, std::uint32_t bits, std::uint32_t rsi,
                                               std::uint32_t block, std::span<const std::byte> raw,
                                               tg::byte_order order = tg::native_byte_order()) {
  tg::data_object_descriptor d = f64_desc(n, order);
  d.encoding = "simple_packing";
  d.compression = "szip";
  d.params.set("sp_bits_per_value", cbor::value(bits));
  d.params.set("szip_rsi", cbor::value(rsi));
  d.params.set("szip_block_size", cbor::value(block));
  d.params.set("szip_flags", cbor::value(8));
  tg::resolve_simple_packing_params(d, raw);
  return d;
}

}  // namespace codectest

#include <gtest/gtest.h>

#include <string>
#include <type_traits>

#include "tensogram/core/error.hpp"
#include "tensogram/core/hex.hpp"

namespace {

TEST(Hex, Hex16) {
  EXPECT_EQ(tensogram::hex16(0), "0000000000000000");
  EXPECT_EQ(tensogram::hex16(1), "0000000000000001");
  EXPECT_EQ(tensogram::hex16(0x3aeac8603f519c1dULL), "3aeac8603f519c1d");
  EXPECT_EQ(tensogram::hex16(0x0a23ff60cb2ee306ULL), "0a23ff60cb2ee306");  // leading zero kept
  EXPECT_EQ(tensogram::hex16(0xFFFFFFFFFFFFFFFFULL), "ffffffffffffffff");
  EXPECT_EQ(tensogram::hex16(0xABCDEF0000000000ULL), "abcdef0000000000");
}

TEST(Hex, HexBytes) {
  const std::byte b[] = {std::byte{0x00}, std::byte{0xff}, std::byte{0x10}, std::byte{0xa5}};
  EXPECT_EQ(tensogram::hex_bytes(b), "00ff10a5");
  EXPECT_EQ(tensogram::hex_bytes({}), "");
}

template <typename E>
void expect_category(const E& e, tgm_error code, const std::string& prefix) {
  static_assert(std::is_base_of_v<tensogram::error, E>);
  EXPECT_EQ(e.code(), code);
  EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
}

TEST(Errors, CategoriesAndPrefixes) {
  expect_category(tensogram::framing_error("x"), TGM_ERROR_FRAMING, "framing error: x");
  expect_category(tensogram::metadata_error("x"), TGM_ERROR_METADATA, "metadata error: x");
  expect_category(tensogram::encoding_error("x"), TGM_ERROR_ENCODING, "encoding error: x");
  expect_category(tensogram::compression_error("x"), TGM_ERROR_COMPRESSION, "compression error: x");
  expect_category(tensogram::object_error("x"), TGM_ERROR_OBJECT, "object error: x");
  expect_category(tensogram::io_error("x"), TGM_ERROR_IO, "io error: x");
  expect_category(tensogram::remote_error("x"), TGM_ERROR_REMOTE, "remote error: x");
  expect_category(tensogram::invalid_arg_error("x"), TGM_ERROR_INVALID_ARG, "invalid argument: x");
  static_assert(std::is_base_of_v<tensogram::integrity_error, tensogram::hash_mismatch_error>);
  static_assert(std::is_base_of_v<tensogram::integrity_error, tensogram::missing_hash_error>);
  static_assert(std::is_base_of_v<std::runtime_error, tensogram::error>);
}

TEST(Errors, HashMismatchText) {
  const tensogram::hash_mismatch_error e(2, 0x3aeac8603f519c1dULL, 0x1ULL);
  EXPECT_EQ(std::string(e.what()),
            "hash mismatch on object 2: expected 3aeac8603f519c1d, got 0000000000000001");
  EXPECT_EQ(e.object_index(), 2u);
  EXPECT_EQ(e.expected(), 0x3aeac8603f519c1dULL);
  EXPECT_EQ(e.actual(), 1u);
  EXPECT_EQ(e.code(), TGM_ERROR_HASH_MISMATCH);
  const tensogram::hash_mismatch_error f(std::nullopt, 0, 0);
  EXPECT_EQ(std::string(f.what()), "hash mismatch on frame: expected 0000000000000000, got 0000000000000000");
  EXPECT_FALSE(f.object_index().has_value());
}

TEST(Errors, MissingHashText) {
  const tensogram::missing_hash_error e(7);
  EXPECT_EQ(e.object_index(), 7u);
  EXPECT_EQ(e.code(), TGM_ERROR_MISSING_HASH);
  EXPECT_EQ(
      std::string(e.what()).rfind(
          "hash verification requested but object 7 has no inline hash recorded (HASH_PRESENT flag clear)",
          0),
      0u)
      << e.what();
}

// Spec 07 D2.2: every class takes (tgm_error, message); what() is the
// message verbatim and code() the code given.
template <typename E>
void expect_reference_form(tgm_error code) {
  static_assert(std::is_constructible_v<E, tgm_error, const std::string&>);
  const std::string text = "text from the C layer";
  const E e(code, text);
  EXPECT_EQ(std::string(e.what()), text);
  EXPECT_EQ(e.code(), code);
  EXPECT_EQ(e.detail(), text);
  try {
    throw E(code, "thrown");
  } catch (const tensogram::error& caught) {
    EXPECT_STREQ(caught.what(), "thrown");
    EXPECT_EQ(caught.code(), code);
  }
}

TEST(Errors, ReferenceConstructors) {
  expect_reference_form<tensogram::error>(TGM_ERROR_END_OF_ITER);
  expect_reference_form<tensogram::framing_error>(TGM_ERROR_FRAMING);
  expect_reference_form<tensogram::metadata_error>(TGM_ERROR_METADATA);
  expect_reference_form<tensogram::encoding_error>(TGM_ERROR_ENCODING);
  expect_reference_form<tensogram::compression_error>(TGM_ERROR_COMPRESSION);
  expect_reference_form<tensogram::object_error>(TGM_ERROR_OBJECT);
  expect_reference_form<tensogram::io_error>(TGM_ERROR_IO);
  expect_reference_form<tensogram::integrity_error>(TGM_ERROR_HASH_MISMATCH);
  expect_reference_form<tensogram::hash_mismatch_error>(TGM_ERROR_HASH_MISMATCH);
  expect_reference_form<tensogram::missing_hash_error>(TGM_ERROR_MISSING_HASH);
  expect_reference_form<tensogram::invalid_arg_error>(TGM_ERROR_INVALID_ARG);
  expect_reference_form<tensogram::remote_error>(TGM_ERROR_REMOTE);
  expect_reference_form<tensogram::timeout_error>(TGM_ERROR_TIMEOUT);
  expect_reference_form<tensogram::cancelled_error>(TGM_ERROR_CANCELLED);
  const tensogram::hash_mismatch_error h(TGM_ERROR_HASH_MISMATCH, "x");
  EXPECT_FALSE(h.object_index().has_value());
  EXPECT_EQ(tensogram::missing_hash_error(TGM_ERROR_MISSING_HASH, "x").object_index(), 0u);
  // The one-argument forms keep the category prefix.
  EXPECT_STREQ(tensogram::io_error("x").what(), "io error: x");
}

TEST(Errors, CodeText) {
  EXPECT_EQ(tensogram::error_code_text(TGM_ERROR_FRAMING), "framing error");
  EXPECT_EQ(tensogram::error_code_text(TGM_ERROR_MISSING_HASH), "missing hash");
  EXPECT_EQ(tensogram::error_code_text(TGM_ERROR_OK), "ok");
}

}  // namespace

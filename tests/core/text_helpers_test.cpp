// The one copy of each byte and text helper (core/utf8.hpp, core/hex.hpp,
// core/endian.hpp): checked against the RFCs' own cases.
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tensogram/core/endian.hpp"
#include "tensogram/core/hex.hpp"
#include "tensogram/core/utf8.hpp"

namespace {

using tensogram::first_invalid_utf8;
constexpr auto npos = std::string_view::npos;

std::string_view sv(const char* s, std::size_t n) {
  return {s, n};
}

TEST(Utf8, WellFormedTextPasses) {
  EXPECT_EQ(first_invalid_utf8(""), npos);
  EXPECT_EQ(first_invalid_utf8("plain ASCII text longer than eight bytes"), npos);
  EXPECT_EQ(first_invalid_utf8(
                "\xC2\x80 \xDF\xBF \xE0\xA0\x80 \xED\x9F\xBF \xEE\x80\x80 \xF0\x90\x80\x80 \xF4\x8F\xBF\xBF"),
            npos);
  EXPECT_TRUE(tensogram::is_valid_utf8("température, 温度, 🌡"));
}

TEST(Utf8, IllFormedSequencesAreFoundAtTheirFirstByte) {
  // RFC 3629 §4 / Unicode Table 3-7, one case per rule.
  EXPECT_EQ(first_invalid_utf8("ab\x80"), 2u);            // lone continuation byte
  EXPECT_EQ(first_invalid_utf8("\xC0\xAF"), 0u);          // overlong 2-byte (C0, C1 never valid)
  EXPECT_EQ(first_invalid_utf8("x\xE0\x9F\xBF"), 1u);     // overlong 3-byte
  EXPECT_EQ(first_invalid_utf8("\xF0\x8F\xBF\xBF"), 0u);  // overlong 4-byte
  EXPECT_EQ(first_invalid_utf8("ok\xED\xA0\x80"), 2u);    // surrogate U+D800
  EXPECT_EQ(first_invalid_utf8("\xF4\x90\x80\x80"), 0u);  // above U+10FFFF
  EXPECT_EQ(first_invalid_utf8("\xF5\x80\x80\x80"), 0u);  // lead byte F5
  EXPECT_EQ(first_invalid_utf8("abc\xE2\x82"), 3u);       // truncated at the end
  EXPECT_EQ(first_invalid_utf8("\xE2\x28\xA1"), 0u);      // bad third byte
  EXPECT_EQ(first_invalid_utf8(sv("a\0b\xFF", 4)), 3u);   // NUL is valid, FF is not
}

TEST(Utf8, TheAsciiFastPathStopsAtEveryPosition) {
  // An invalid byte at each offset of a 40-byte ASCII run (crossing the
  // eight-byte steps) is reported exactly there.
  for (std::size_t at = 0; at < 40; ++at) {
    std::string s(40, 'a');
    s[at] = '\xFF';
    EXPECT_EQ(first_invalid_utf8(s), at) << at;
    s[at] = '\xC3';  // a 2-byte lead: valid when followed by a continuation
    if (at + 1 < s.size()) {
      s[at + 1] = '\xA9';
      EXPECT_EQ(first_invalid_utf8(s), npos) << at;
    } else {
      EXPECT_EQ(first_invalid_utf8(s), at) << at;
    }
  }
}

TEST(Hex, Rendering) {
  EXPECT_EQ(tensogram::hex16(0xABCu), "0000000000000abc");
  EXPECT_EQ(tensogram::hex_digits(0), "0");
  EXPECT_EQ(tensogram::hex_digits(0x1f), "1f");
  EXPECT_EQ(tensogram::hex_digits(0xFFFFFFFFFFFFFFFFull), "ffffffffffffffff");
  const std::array<std::byte, 3> bytes{std::byte{0x00}, std::byte{0x7f}, std::byte{0xff}};
  EXPECT_EQ(tensogram::hex_bytes(bytes), "007fff");
  std::string out = "x";
  tensogram::append_hex_byte(out, 0x0a);
  EXPECT_EQ(out, "x0a");
}

TEST(Hex, DigitsAndPercentEscapes) {
  EXPECT_EQ(tensogram::hex_digit_value('7'), 7);
  EXPECT_EQ(tensogram::hex_digit_value('b'), 11);
  EXPECT_EQ(tensogram::hex_digit_value('F'), 15);
  EXPECT_EQ(tensogram::hex_digit_value('g'), -1);
  EXPECT_EQ(tensogram::percent_decode("a%20b%2Fc%7e"), std::optional<std::string>("a b/c~"));
  EXPECT_EQ(tensogram::percent_decode("no escapes"), std::optional<std::string>("no escapes"));
  EXPECT_EQ(tensogram::percent_decode("%00"), std::optional<std::string>(std::string(1, '\0')));
  EXPECT_FALSE(tensogram::percent_decode("%2").has_value());   // truncated
  EXPECT_FALSE(tensogram::percent_decode("ab%").has_value());  // truncated
  EXPECT_FALSE(tensogram::percent_decode("%g0").has_value());  // not hex
}

TEST(Endian, FixedAndVariableWidths) {
  const std::array<std::byte, 8> b{std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4},
                                   std::byte{5}, std::byte{6}, std::byte{7}, std::byte{8}};
  EXPECT_EQ(tensogram::load_be16(b.data()), 0x0102u);
  EXPECT_EQ(tensogram::load_be32(b.data()), 0x01020304u);
  EXPECT_EQ(tensogram::load_be64(b.data()), 0x0102030405060708ull);
  EXPECT_EQ(tensogram::load_le<std::uint32_t>(b.data()), 0x04030201u);
  EXPECT_EQ(tensogram::load_le<std::uint64_t>(b.data() + 0), 0x0807060504030201ull);
  EXPECT_EQ(tensogram::load_le_n(b.data(), 3), 0x030201u);
  EXPECT_EQ(tensogram::load_be_n(b.data(), 3), 0x010203u);
  EXPECT_EQ(tensogram::load_be_n(b.data() + 1, 8 - 1), 0x02030405060708ull);

  std::array<std::byte, 8> out{};
  tensogram::store_le<std::uint32_t>(out.data() + 1, 0xA1B2C3D4u);  // unaligned
  EXPECT_EQ(out[1], std::byte{0xD4});
  EXPECT_EQ(out[4], std::byte{0xA1});
  tensogram::store_be64(out.data(), 0x1122334455667788ull);
  EXPECT_EQ(out[0], std::byte{0x11});
  EXPECT_EQ(out[7], std::byte{0x88});
  tensogram::store_le_n(out.data(), 0xABCDEFu, 3);
  EXPECT_EQ(tensogram::load_le_n(out.data(), 3), 0xABCDEFu);
  tensogram::store_be_n(out.data(), 0x123456u, 3);
  EXPECT_EQ(tensogram::load_be_n(out.data(), 3), 0x123456u);
  EXPECT_EQ(tensogram::byteswap<std::uint16_t>(0x1234), 0x3412);
}

}  // namespace

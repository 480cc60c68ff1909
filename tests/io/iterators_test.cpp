// buffer_iterator, file_iterator and object_iterator (spec 04 Part D).
#include <gtest/gtest.h>

#include "io_test_support.hpp"

namespace {

using tgtest::bytes;

TEST(Iterators, BufferIteratorWalksEveryMessage) {
  const bytes whole = tgtest::read_fixture("ten-msg.tgm");
  const auto expected = tensogram::scan(whole);
  tensogram::buffer_iterator it(reinterpret_cast<const std::uint8_t*>(whole.data()), whole.size());
  EXPECT_EQ(it.count(), 10U);
  const std::uint8_t* p = nullptr;
  std::size_t len = 0;
  std::size_t i = 0;
  while (it.next(p, len)) {
    ASSERT_LT(i, expected.size());
    EXPECT_EQ(p, reinterpret_cast<const std::uint8_t*>(whole.data()) + expected[i].offset);
    EXPECT_EQ(len, expected[i].length);
    ++i;
  }
  EXPECT_EQ(i, 10U);
  EXPECT_FALSE(it.next(p, len));
  std::size_t n = 0;
  for (std::span<const std::byte> m : tensogram::buffer_iterator(whole)) {
    EXPECT_EQ(tensogram::decode(tensogram::buffer::borrowed(m)).num_objects(), 1U);
    ++n;
  }
  EXPECT_EQ(n, 10U);
  EXPECT_EQ(tensogram::buffer_iterator(std::span<const std::byte>()).count(), 0U);
}

TEST(Iterators, FileIteratorReadsMessagesInOrder) {
  tensogram::file f = tensogram::file::open(tgtest::fixture_path("hundred-msg-footer.tgm"));
  const bytes whole = tgtest::read_fixture("hundred-msg-footer.tgm");
  const auto expected = tensogram::scan(whole);
  tensogram::file_iterator it(f);
  EXPECT_EQ(it.count(), 100U);
  std::vector<std::uint8_t> m;
  std::size_t i = 0;
  while (it.next(m)) {
    ASSERT_EQ(m.size(), expected[i].length);
    EXPECT_EQ(0, std::memcmp(m.data(), whole.data() + expected[i].offset, m.size()));
    ++i;
  }
  EXPECT_EQ(i, 100U);
  std::size_t n = 0;
  for (const tensogram::buffer& b : tensogram::file_iterator(f)) {
    EXPECT_EQ(b.size(), expected[n].length);
    ++n;
  }
  EXPECT_EQ(n, 100U);
}

TEST(Iterators, ObjectIteratorYieldsOneObjectMessagesWithFullMetadata) {
  const bytes whole = tgtest::read_fixture("multi_object.tgm");
  const tensogram::message full = tensogram::decode(tensogram::buffer::borrowed(whole));
  tensogram::object_iterator it(reinterpret_cast<const std::uint8_t*>(whole.data()), whole.size());
  EXPECT_EQ(it.count(), 3U);
  tensogram::message m;
  std::size_t k = 0;
  while (it.next(m)) {
    ASSERT_EQ(m.num_objects(), 1U);
    EXPECT_EQ(m.global(), full.global());
    tgtest::expect_same_object(m.object(0), full.object(k));
    EXPECT_FALSE(m.object(0).data_buffer().kind() == tensogram::buffer::ownership::borrowed);
    ++k;
  }
  EXPECT_EQ(k, 3U);
  std::size_t n = 0;
  for (const tensogram::message& one : tensogram::object_iterator(tensogram::buffer::borrowed(whole))) {
    tgtest::expect_same_object(one.object(0), full.object(n));
    ++n;
  }
  EXPECT_EQ(n, 3U);
  // verify_hash is ignored by the object iterator (spec 02 §14): the legacy
  // files carry no per-frame hash bit and still iterate.
  const bytes legacy = tgtest::read_fixture("single-msg.tgm");
  tensogram::decode_options verify;
  verify.verify_hash = true;
  tensogram::object_iterator lit(reinterpret_cast<const std::uint8_t*>(legacy.data()), legacy.size(), verify);
  EXPECT_TRUE(lit.next(m));
  EXPECT_THROW(tensogram::object_iterator(reinterpret_cast<const std::uint8_t*>(legacy.data()), 10),
               tensogram::framing_error);
}

}  // namespace

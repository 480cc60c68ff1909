// Hostile input: truncations and bit flips of every fixture, and length
// fields that claim more than the buffer holds. Every call must either
// succeed or throw a tensogram::error, never anything else, and must not
// allocate more than a small multiple of its input.
//
// This binary replaces the global allocation functions with a counting
// allocator (malloc/free based) that records the largest single request
// while a hostile call runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <functional>
#include <new>
#include <random>
#include <string>
#include <vector>

#include <tensogram.hpp>
#include "tensogram/format/aggregate_frames.hpp"
#include "tensogram/format/walk.hpp"
#include "test_support.hpp"

// --- counting allocator --------------------------------------------------------

namespace {
std::atomic<bool> g_tracking{false};
std::atomic<std::size_t> g_largest{0};
std::atomic<std::size_t> g_count{0};
// Requests above this are refused outright (recorded, then std::bad_alloc),
// so that a runaway reservation fails the test instead of the process.
constexpr std::size_t k_refuse_above = std::size_t{1} << 30;

void note(std::size_t n) noexcept {
  if (!g_tracking.load(std::memory_order_relaxed)) return;
  g_count.fetch_add(1, std::memory_order_relaxed);
  std::size_t cur = g_largest.load(std::memory_order_relaxed);
  while (n > cur && !g_largest.compare_exchange_weak(cur, n, std::memory_order_relaxed)) {
  }
}

void* counted_alloc(std::size_t n, std::size_t align) noexcept {
  note(n);
  if (n > k_refuse_above) return nullptr;
  if (n == 0) n = 1;
  if (align <= alignof(std::max_align_t)) return std::malloc(n);
  const std::size_t rounded = (n + align - 1) / align * align;
  return std::aligned_alloc(align, rounded);
}

void* counted_alloc_or_throw(std::size_t n, std::size_t align) {
  void* p = counted_alloc(n, align);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
}  // namespace

void* operator new(std::size_t n) {
  return counted_alloc_or_throw(n, 0);
}
void* operator new[](std::size_t n) {
  return counted_alloc_or_throw(n, 0);
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return counted_alloc(n, 0);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return counted_alloc(n, 0);
}
void* operator new(std::size_t n, std::align_val_t a) {
  return counted_alloc_or_throw(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return counted_alloc_or_throw(n, static_cast<std::size_t>(a));
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return counted_alloc(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return counted_alloc(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  std::free(p);
}

namespace {

namespace tg = tensogram;
namespace cbor = tensogram::cbor;
using cbor::value;
using tgtest::bytes;
using tgtest::message_builder;

enum class outcome { ok, tensogram_error, other };

struct call_result {
  outcome result = outcome::ok;
  std::string what;
  std::size_t largest = 0;
};

// Runs `f` with allocation tracking; classifies its outcome.
template <typename F>
call_result guarded(F&& f) {
  call_result r;
  g_largest.store(0);
  g_tracking.store(true);
  try {
    f();
  } catch (const tg::error& e) {
    g_tracking.store(false);
    r.result = outcome::tensogram_error;
    r.what = e.what();
  } catch (const std::exception& e) {
    g_tracking.store(false);
    r.result = outcome::other;
    r.what = e.what();
  } catch (...) {
    g_tracking.store(false);
    r.result = outcome::other;
    r.what = "unknown exception";
  }
  g_tracking.store(false);
  r.largest = g_largest.load();
  return r;
}

std::size_t allocation_limit(std::size_t input) {
  return 2 * input + 64 * 1024;
}

// Checks the invariants of one hostile call; returns whether it succeeded.
template <typename F>
bool hostile(const char* api, std::size_t input_size, const std::string& where, F&& f) {
  const call_result r = guarded(f);
  if (r.result == outcome::other) {
    ADD_FAILURE() << api << " threw a non-tensogram exception at " << where << ": " << r.what;
  }
  if (r.largest > allocation_limit(input_size)) {
    ADD_FAILURE() << api << " allocated " << r.largest << " bytes for " << input_size << " input bytes at "
                  << where;
  }
  return r.result == outcome::ok;
}

tg::decode_options verifying() {
  tg::decode_options o;
  o.verify_hash = true;
  return o;
}

// The decoder entry points on one buffer. `thorough` adds the variants
// whose code paths mostly coincide with `decode` (kept for a share of the
// random trials to bound the run time under sanitizers).
struct api_outcomes {
  bool decode = false;
  bool decode_metadata = false;
  bool decode_object0 = false;
};

api_outcomes run_all(std::span<const std::byte> b, const std::string& where, bool thorough = true,
                     std::size_t object = 0) {
  api_outcomes o;
  const tg::buffer buf = tg::buffer::borrowed(b);
  o.decode = hostile("decode", b.size(), where, [&] { (void)tg::decode(buf); });
  o.decode_metadata = hostile("decode_metadata", b.size(), where, [&] { (void)tg::decode_metadata(b); });
  o.decode_object0 = hostile("decode_object", b.size(), where, [&] { (void)tg::decode_object(buf, object); });
  hostile("verify_hashes", b.size(), where, [&] { tg::verify_hashes(b); });
  hostile("scan", b.size(), where, [&] { (void)tg::scan(b); });
  if (!thorough) return o;
  hostile("decode(native=false)", b.size(), where, [&] {
    tg::decode_options raw;
    raw.native_byte_order = false;
    (void)tg::decode(buf, raw);
  });
  hostile("decode_descriptors", b.size(), where, [&] { (void)tg::decode_descriptors(b); });
  hostile("decode_object(1)", b.size(), where, [&] { (void)tg::decode_object(buf, 1); });
  hostile("decode_range", b.size(), where, [&] {
    (void)tg::decode_range(buf, 0, std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, 1}});
  });
  return o;
}

struct fixture_info {
  std::string name;
  bytes data;
  std::vector<tg::scan_entry> messages;
  // Hashed data-object bodies: [begin, end) file offsets.
  std::vector<std::pair<std::size_t, std::size_t>> hashed_bodies;
};

const std::vector<fixture_info>& fixtures() {
  static const std::vector<fixture_info> all = [] {
    std::vector<fixture_info> out;
    for (const std::string& name : tgtest::all_fixtures()) {
      fixture_info f;
      f.name = name;
      f.data = tgtest::read_fixture(name);
      f.messages = tg::scan(f.data);
      for (const tg::scan_entry& e : f.messages) {
        const auto msg = std::span<const std::byte>(f.data).subspan(e.offset, e.length);
        for (const tgtest::wire_frame& w : tgtest::wire_frames(msg)) {
          if (w.type == 9 && (w.flags & 0x0002) != 0) {
            f.hashed_bodies.emplace_back(e.offset + w.offset + 16,
                                         e.offset + w.offset + static_cast<std::size_t>(w.total_length) - 20);
          }
        }
      }
      out.push_back(std::move(f));
    }
    return out;
  }();
  return all;
}

TEST(Hostile, FixturesLoaded) {
  ASSERT_EQ(fixtures().size(), 17u);
  std::size_t hashed = 0;
  for (const auto& f : fixtures()) {
    EXPECT_FALSE(f.messages.empty()) << f.name;
    hashed += f.hashed_bodies.size();
  }
  EXPECT_EQ(hashed, 1u + 1u + 1u + 2u + 3u + 3u + 2u);  // the hash-flagged files' data frames
}

// File prefixes handed to the scanner: every length for files up to 10 KB;
// for the hundred- and thousand-message files every length around the
// first and last 30 message boundaries plus 500 random lengths (the
// messages in between repeat layouts already covered).
std::vector<std::size_t> scan_prefixes(const fixture_info& f, std::mt19937_64& rng) {
  std::vector<std::size_t> out;
  const std::size_t n = f.data.size();
  if (n <= 10000) {
    for (std::size_t i = 0; i <= n; ++i) out.push_back(i);
    return out;
  }
  const auto& m = f.messages;
  for (std::size_t k = 0; k < m.size(); ++k) {
    if (k >= 30 && k + 30 < m.size()) continue;
    for (std::size_t d = 0; d <= 8; ++d) {
      if (m[k].offset >= d) out.push_back(m[k].offset - d);
      out.push_back(m[k].offset + d);
    }
  }
  out.push_back(n);
  for (int i = 0; i < 500; ++i) out.push_back(rng() % (n + 1));
  return out;
}

// Which messages of a file are truncated at every length: the first, and
// the last of multi-message files (the streaming message of streaming-tail,
// msg_index >= 256 layouts of the thousand-message files).
std::vector<tg::scan_entry> messages_to_truncate(const fixture_info& f) {
  std::vector<tg::scan_entry> out = {f.messages.front()};
  if (f.messages.size() > 1) out.push_back(f.messages.back());
  return out;
}

TEST(Hostile, TruncatedMessagesAtEveryOffset) {
  for (const fixture_info& f : fixtures()) {
    SCOPED_TRACE(f.name);
    for (const tg::scan_entry& e : messages_to_truncate(f)) {
      const auto msg = std::span<const std::byte>(f.data).subspan(e.offset, e.length);
      // Metadata-only decode of a streaming message ignores the postamble:
      // it succeeds once the header metadata frame fits before the last 24
      // bytes (spec 01 §14.2).
      const bool streaming = tgtest::be64(msg, 16) == 0;
      const std::size_t meta_needed = 24 + static_cast<std::size_t>(tgtest::be64(msg, 32)) + 24;
      for (std::size_t len = 0; len <= e.length; ++len) {
        const std::string where =
            f.name + " message @" + std::to_string(e.offset) + " truncated to " + std::to_string(len);
        const api_outcomes o = run_all(msg.first(len), where, len + 1 >= e.length || len % 8 == 0);
        // A message decodes iff it is complete.
        if (o.decode != (len == e.length)) ADD_FAILURE() << "decode outcome at " << where;
        const bool metadata_expected = streaming ? len >= meta_needed : len == e.length;
        if (o.decode_metadata != metadata_expected) ADD_FAILURE() << "decode_metadata outcome at " << where;
        if (o.decode_object0 != (len == e.length)) ADD_FAILURE() << "decode_object outcome at " << where;
      }
    }
  }
}

TEST(Hostile, TruncatedFramesInsideAnIntactEnvelope) {
  // Cut the frame area at every length and close the message again with a
  // postamble of the right length: frames then end early, lose ENDF, run
  // into the postamble, or disappear.
  for (const char* name :
       {"simple_f32.tgm", "multi_object.tgm", "metadata_parity.tgm", "single-msg-footer.tgm"}) {
    const auto file = tgtest::read_fixture(name);
    const std::size_t frames_end = file.size() - 24;
    for (std::size_t cut = 24; cut <= frames_end; ++cut) {
      bytes msg(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(cut));
      msg.resize((msg.size() + 7) / 8 * 8, std::byte{0});
      const std::size_t total = msg.size() + 24;
      tgtest::append_be64(msg, msg.size());
      tgtest::append_be64(msg, total);
      tgtest::append_text(msg, "39277777");
      tgtest::put_be64(msg, 16, total);
      const std::string where = std::string(name) + " frames cut at " + std::to_string(cut);
      const tg::buffer buf = tg::buffer::borrowed(msg);
      hostile("decode", msg.size(), where, [&] { (void)tg::decode(buf); });
      hostile("decode_object", msg.size(), where, [&] { (void)tg::decode_object(buf, 1); });
      if (cut % 4 == 0)
        hostile("decode_metadata", msg.size(), where, [&] { (void)tg::decode_metadata(msg); });
    }
  }
}

TEST(Hostile, ScanOfFilePrefixesFindsExactlyTheCompleteMessages) {
  std::mt19937_64 rng(99);
  for (const fixture_info& f : fixtures()) {
    SCOPED_TRACE(f.name);
    for (std::size_t len : scan_prefixes(f, rng)) {
      const auto prefix = std::span<const std::byte>(f.data).first(len);
      std::vector<tg::scan_entry> expected;
      for (const auto& e : f.messages) {
        if (e.offset + e.length <= len) expected.push_back(e);
      }
      std::vector<tg::scan_entry> got;
      const std::string where = f.name + " prefix " + std::to_string(len);
      hostile("scan", len, where, [&] { got = tg::scan(prefix); });
      if (got != expected) ADD_FAILURE() << "scan result at " << where;
    }
  }
}

TEST(Hostile, RandomBitFlips) {
  std::mt19937_64 rng(20240601);
  std::vector<bytes> files;
  for (const auto& f : fixtures()) files.push_back(f.data);
  std::size_t decoded_after_flip = 0;
  std::size_t flips_in_hashed_bodies = 0;
  for (int trial = 0; trial < 10000; ++trial) {
    const std::size_t fi = rng() % files.size();
    const fixture_info& info = fixtures()[fi];
    bytes& file = files[fi];
    const std::size_t byte = rng() % file.size();
    const auto bit = static_cast<unsigned>(rng() % 8);
    const std::string where = info.name + " byte " + std::to_string(byte) + " bit " + std::to_string(bit);
    file[byte] ^= static_cast<std::byte>(1u << bit);

    // The message the flip landed in, decoded on its own.
    const auto it = std::find_if(info.messages.begin(), info.messages.end(), [&](const tg::scan_entry& e) {
      return byte >= e.offset && byte < e.offset + e.length;
    });
    if (it != info.messages.end()) {
      const auto msg = std::span<const std::byte>(file).subspan(it->offset, it->length);
      const api_outcomes o = run_all(msg, where, trial % 8 == 0, static_cast<std::size_t>(trial % 3));
      const bool in_hashed_body =
          std::any_of(info.hashed_bodies.begin(), info.hashed_bodies.end(),
                      [&](const auto& r) { return byte >= r.first && byte < r.second; });
      if (in_hashed_body) ++flips_in_hashed_bodies;
      if (o.decode) {
        ++decoded_after_flip;
        if (in_hashed_body) {
          // The digest covers the flipped byte: verification must catch it.
          const call_result v = guarded([&] { (void)tg::decode(tg::buffer::borrowed(msg), verifying()); });
          if (v.result != outcome::tensogram_error ||
              v.what.find("hash mismatch on object") == std::string::npos) {
            ADD_FAILURE() << "verify_hash accepted a flipped hashed body at " << where << ": " << v.what;
          }
        }
      }
    }
    // The whole file: decoding reads its first message; scanning all of it.
    const auto whole = std::span<const std::byte>(file);
    if (it != info.messages.begin()) {
      hostile("decode(file)", whole.size(), where, [&] { (void)tg::decode(tg::buffer::borrowed(whole)); });
    }
    if (whole.size() <= 70000 || trial % 16 == 0) {
      hostile("scan(file)", whole.size(), where, [&] { (void)tg::scan(whole); });
    }

    file[byte] ^= static_cast<std::byte>(1u << bit);
    if (testing::Test::HasFailure() && trial > 0 && trial % 1000 == 0) break;  // keep failure output readable
  }
  EXPECT_GT(decoded_after_flip, 1000u);
  EXPECT_GT(flips_in_hashed_bodies, 20u);
}

// --- crafted length fields -------------------------------------------------------

template <typename E>
void expect_typed_error_small_alloc(const bytes& msg, const std::string& fragment,
                                    const std::function<void(std::span<const std::byte>)>& f) {
  const call_result r = guarded([&] { f(msg); });
  EXPECT_EQ(r.result, outcome::tensogram_error) << r.what;
  EXPECT_LE(r.largest, allocation_limit(msg.size())) << fragment;
  EXPECT_NE(r.what.find(fragment), std::string::npos) << r.what;
  // The exact category.
  try {
    f(msg);
  } catch (const E&) {
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong category: " << e.what();
  }
}

void decode_fn(std::span<const std::byte> b) {
  (void)tg::decode(tg::buffer::borrowed(b));
}
void decode_object_fn(std::span<const std::byte> b) {
  (void)tg::decode_object(tg::buffer::borrowed(b), 0);
}
void decode_metadata_fn(std::span<const std::byte> b) {
  (void)tg::decode_metadata(b);
}

bytes f32_payload(std::size_t n) {
  return bytes(4 * n, std::byte{0x3F});
}

bytes with_metadata_body(const bytes& body) {
  return message_builder()
      .frame(1, body)
      .data_frame(f32_payload(2), tgtest::descriptor_value("float32", {2}))
      .finish();
}

TEST(HostileLengths, FrameTotalLength2Pow63) {
  bytes msg = with_metadata_body(cbor::encode(tgtest::metadata_with_base(1)));
  tgtest::put_be64(msg, 24 + 8, std::uint64_t{1} << 63);
  expect_typed_error_small_alloc<tg::framing_error>(msg, "exceeds buffer", decode_fn);
  expect_typed_error_small_alloc<tg::framing_error>(msg, "exceeds buffer", decode_metadata_fn);
  expect_typed_error_small_alloc<tg::framing_error>(msg, "exceeds buffer", decode_object_fn);
  bytes pre = with_metadata_body(cbor::encode(tgtest::metadata_with_base(1)));
  tgtest::put_be64(pre, 16, std::uint64_t{1} << 63);
  expect_typed_error_small_alloc<tg::framing_error>(pre, "exceeds buffer size", decode_fn);
}

TEST(HostileLengths, CborCountsBeyondTheBody) {
  // {"base": [<2^40 items>]}
  bytes huge_array = tgtest::from_hex("a1 6462617365 9b0000010000000000 a0");
  expect_typed_error_small_alloc<tg::metadata_error>(with_metadata_body(huge_array),
                                                     "exceeds remaining input", decode_fn);
  expect_typed_error_small_alloc<tg::metadata_error>(with_metadata_body(huge_array),
                                                     "exceeds remaining input", decode_metadata_fn);
  bytes huge_map = tgtest::from_hex("bb0000010000000000 6161 01");
  expect_typed_error_small_alloc<tg::metadata_error>(with_metadata_body(huge_map), "exceeds remaining input",
                                                     decode_fn);
  bytes huge_text = tgtest::from_hex("a1 6161 7b4000000000000000 61");
  expect_typed_error_small_alloc<tg::metadata_error>(with_metadata_body(huge_text), "exceeds remaining input",
                                                     decode_fn);
  bytes deep(200000, std::byte{0x81});
  deep.push_back(std::byte{0xa0});
  expect_typed_error_small_alloc<tg::metadata_error>(with_metadata_body(deep), "nesting", decode_fn);
}

bytes with_descriptor(const value& d, const bytes& payload) {
  return message_builder().frame(1, tgtest::metadata_with_base(1)).data_frame(payload, d).finish();
}

TEST(HostileLengths, DescriptorShapes) {
  expect_typed_error_small_alloc<tg::metadata_error>(
      with_descriptor(tgtest::descriptor_value("float32", {1ULL << 32, 1ULL << 32, 1ULL << 32}),
                      f32_payload(2)),
      "shape product overflow", decode_fn);
  expect_typed_error_small_alloc<tg::metadata_error>(
      with_descriptor(tgtest::descriptor_value("float32", {1ULL << 62, 4}), f32_payload(2)),
      "shape product overflow", decode_fn);
  expect_typed_error_small_alloc<tg::metadata_error>(
      with_descriptor(tgtest::descriptor_value("float32", {1ULL << 62, 4}), f32_payload(2)),
      "shape product overflow", decode_object_fn);
  expect_typed_error_small_alloc<tg::metadata_error>(
      with_descriptor(tgtest::descriptor_value("float64", {1ULL << 61}), f32_payload(2)), "overflows",
      decode_fn);
  // Claims a terabyte, carries 8 bytes: a size mismatch, not an allocation.
  for (const char* dt : {"uint8", "bitmask", "complex128"}) {
    for (const char* order : {"big", "little"}) {
      expect_typed_error_small_alloc<tg::encoding_error>(
          with_descriptor(tgtest::descriptor_value(dt, {1ULL << 40}, order), f32_payload(2)),
          "descriptor claims", decode_fn);
    }
  }
  // Shape array itself claims 2^40 entries.
  auto d = tgtest::descriptor_value("float32", {2});
  bytes dbytes = cbor::encode(d);
  const bytes shape_key = tgtest::from_hex("65 7368617065 81 02");
  const auto pos = std::search(dbytes.begin(), dbytes.end(), shape_key.begin(), shape_key.end());
  ASSERT_NE(pos, dbytes.end());
  const bytes huge = tgtest::from_hex("65 7368617065 9b0000010000000000");
  bytes crafted(dbytes.begin(), pos);
  crafted.insert(crafted.end(), huge.begin(), huge.end());
  crafted.insert(crafted.end(), pos + static_cast<std::ptrdiff_t>(shape_key.size()), dbytes.end());
  expect_typed_error_small_alloc<tg::metadata_error>(
      message_builder().frame(1, tgtest::metadata_with_base(1)).data_frame(f32_payload(2), crafted).finish(),
      "exceeds remaining input", decode_fn);
}

TEST(HostileLengths, MaskAndCborOffsets) {
  auto d = tgtest::descriptor_value("float32", {2});
  d.set("masks", value::make_map({{"nan", value::make_map({{"method", "none"},
                                                           {"offset", value(std::uint64_t{1} << 63)},
                                                           {"length", value(std::uint64_t{1} << 63)}})}}));
  expect_typed_error_small_alloc<tg::framing_error>(with_descriptor(d, f32_payload(2)),
                                                    "exceeds payload region", decode_fn);
  bytes msg = with_descriptor(tgtest::descriptor_value("float32", {2}), f32_payload(2));
  const auto frames = tgtest::wire_frames(msg);
  const auto& data = frames.back();
  tgtest::put_be64(msg, data.offset + static_cast<std::size_t>(data.total_length) - 20,
                   std::uint64_t{1} << 62);
  expect_typed_error_small_alloc<tg::framing_error>(msg, "cbor_offset", decode_fn);
}

bytes with_index(const bytes& index_body) {
  message_builder b;
  b.frame(1, tgtest::metadata_with_base(1));
  b.frame(2, index_body);
  b.data_frame(f32_payload(2), tgtest::descriptor_value("float32", {2}));
  return b.finish();
}

TEST(HostileLengths, IndexAndHashBodies) {
  const bytes idx = tgtest::from_hex("a2 676c656e67746873 9b0000010000000000 676f666673657473 81 00");
  expect_typed_error_small_alloc<tg::metadata_error>(with_index(idx), "exceeds remaining input", decode_fn);
  expect_typed_error_small_alloc<tg::metadata_error>(with_index(idx), "exceeds remaining input",
                                                     decode_object_fn);
  message_builder b;
  b.frame(1, tgtest::metadata_with_base(1));
  b.frame(3, tgtest::from_hex("a1 66686173686573 9b0000010000000000"));
  b.data_frame(f32_payload(2), tgtest::descriptor_value("float32", {2}));
  expect_typed_error_small_alloc<tg::metadata_error>(b.finish(), "exceeds remaining input", decode_fn);
}

TEST(HostileLengths, IndexOffsetsPointingAnywhere) {
  // decode_object trusts an index only when it points at a matching frame;
  // offsets near 2^64 must not wrap around.
  const bytes reference = with_index(tg::format::encode_index_body({{0}, {0}}));
  const auto frames = tgtest::wire_frames(reference);
  const std::uint64_t real_offset = frames.back().offset;
  const std::uint64_t real_length = frames.back().total_length;
  for (std::uint64_t off :
       {~std::uint64_t{0}, ~std::uint64_t{0} - 7, ~std::uint64_t{0} - 15, std::uint64_t{1} << 63,
        std::uint64_t{1} << 62, std::uint64_t{0}, std::uint64_t{17}, real_offset + 1}) {
    for (std::uint64_t len : {real_length, ~std::uint64_t{0}}) {
      SCOPED_TRACE(testing::Message() << "offset " << off << " length " << len);
      // Same-size index body (8-byte integers) so frame positions do not move.
      cbor::array offsets{value(off)};
      cbor::array lengths{value(len)};
      bytes body = tgtest::from_hex("a2 676c656e67746873 81 1b");
      for (int i = 7; i >= 0; --i) body.push_back(static_cast<std::byte>((len >> (8 * i)) & 0xFF));
      const bytes mid = tgtest::from_hex("676f666673657473 81 1b");
      body.insert(body.end(), mid.begin(), mid.end());
      for (int i = 7; i >= 0; --i) body.push_back(static_cast<std::byte>((off >> (8 * i)) & 0xFF));
      const bytes msg = with_index(body);
      const call_result r = guarded([&] { (void)tg::decode_object(tg::buffer::borrowed(msg), 0); });
      EXPECT_NE(r.result, outcome::other) << r.what;
      EXPECT_LE(r.largest, allocation_limit(msg.size()));
      // Whatever the index says, the object decodes from the frames.
      EXPECT_EQ(r.result, outcome::ok) << r.what;
    }
  }
}

TEST(HostileLengths, DecodeRangeCounts) {
  const bytes msg = with_descriptor(tgtest::descriptor_value("float32", {2}), f32_payload(2));
  const call_result r = guarded([&] {
    (void)tg::decode_range(tg::buffer::borrowed(msg), 0,
                           std::vector<std::pair<std::uint64_t, std::uint64_t>>{{1, std::uint64_t{1} << 62}});
  });
  EXPECT_EQ(r.result, outcome::tensogram_error) << r.what;
  EXPECT_LE(r.largest, allocation_limit(msg.size()));
}

TEST(HostileLengths, AllocatorIsActive) {
  // Sanity check of the instrumentation itself.
  const call_result r = guarded([] {
    std::vector<char> v(123457);
    (void)v;
  });
  EXPECT_EQ(r.largest, 123457u);
  const call_result refused = guarded([] { std::vector<char> v(std::size_t{1} << 40); });
  EXPECT_EQ(refused.result, outcome::other);  // std::bad_alloc
  EXPECT_EQ(refused.largest, std::size_t{1} << 40);
}

}  // namespace

namespace {

// The frame walker sits on the hot path of every decode: walking a message
// allocates nothing, however many frames it has.
TEST(Hostile, FrameWalkAllocatesNothing) {
  tgtest::message_builder b;
  b.frame(1, tgtest::metadata_with_base(0));
  const tgtest::bytes payload(8, std::byte{1});
  for (int i = 0; i < 200; ++i) {
    b.frame(8, tgtest::metadata_with_base(1));
    b.data_frame(payload, tgtest::descriptor_value("float32", {2}));
  }
  const tgtest::bytes msg = b.finish();
  struct counter final : tensogram::format::walk_sink {
    bool frame(const tensogram::format::frame_view&) override {
      ++frames;
      return true;
    }
    std::size_t frames = 0;
  } sink;
  g_count.store(0);
  g_tracking.store(true);
  const tensogram::format::walk_outcome o =
      tensogram::format::walk({msg, 0, 24, msg.size() - 24}, tensogram::format::walk_policy::decoder(), sink);
  g_tracking.store(false);
  EXPECT_EQ(o.end, tensogram::format::walk_end::frames_end);
  EXPECT_EQ(sink.frames, 401u);
  EXPECT_EQ(g_count.load(), 0u);
}

// A descriptor claiming a huge shape over a tiny compressed payload: decode
// fails with a typed error after producing only what the payload holds,
// never allocating (and zeroing) the claimed size (spec 01 §19.1).
TEST(Hostile, HugeShapeOverTinyCompressedPayload) {
  std::vector<double> values(4000, 7.0);
  for (const std::uint64_t elements : {std::uint64_t{1} << 33, std::uint64_t{1} << 40}) {
    SCOPED_TRACE(elements);
    tensogram::data_object_descriptor d =
        tensogram::data_object_descriptor::contiguous(tensogram::dtype::float64, {4000});
    d.encoding = "simple_packing";
    d.params.set("sp_reference_value", 0.0);
    d.params.set("sp_binary_scale_factor", 0);
    d.params.set("sp_decimal_scale_factor", 0);
    d.params.set("sp_bits_per_value", 16);
    d.compression = "zstd";
    const std::vector<std::byte> z =
        tensogram::build_pipeline(d)
            .encode(std::as_bytes(std::span<const double>(values)), 4000, tensogram::native_byte_order(), 0)
            .payload;
    d.shape = {elements};
    const tensogram::object_input in{d, z};
    const std::vector<std::byte> msg = tensogram::encode_pre_encoded(
        tensogram::global_metadata{}, std::span<const tensogram::object_input>(&in, 1));
    EXPECT_THROW((void)tensogram::decode(tensogram::buffer::borrowed(msg)), tensogram::encoding_error);
    EXPECT_THROW((void)tensogram::decode_object(tensogram::buffer::borrowed(msg), 0),
                 tensogram::encoding_error);
  }
}

}  // namespace

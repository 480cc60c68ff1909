// SZ3's Huffman stage (docs/sz3-format.md §3.2): exact bytes for small
// inputs worked out by hand from SZ3's algorithm, round trips over several
// symbol distributions and tree sizes (each index width), code lengths
// checked against an independent optimal-cost computation, and truncated,
// corrupted and random inputs that must give tensogram::encoding_error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <queue>
#include <random>
#include <vector>

#include "src/codecs/sz3/huffman.hpp"
#include "tensogram/core/error.hpp"

namespace {

using tensogram::encoding_error;
using tensogram::codecs::sz3::byte_reader;
using tensogram::codecs::sz3::byte_writer;
using tensogram::codecs::sz3::huffman_coder;
using bytes = std::vector<std::byte>;

constexpr int k_states = 65536;  // SZ3's default quantisation bin count

bytes make_bytes(std::initializer_list<int> values) {
  bytes out;
  for (const int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

bytes concat(std::initializer_list<bytes> parts) {
  bytes out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

/// What SZ3's SZGenericCompressor writes around the coder: tree, u64 symbol
/// count, payload.
bytes write_stream(const std::vector<int>& symbols, int symbol_count = k_states) {
  huffman_coder coder;
  coder.build(symbols, symbol_count);
  bytes out;
  byte_writer w(out);
  coder.save(w);
  w.put<std::uint64_t>(symbols.size());
  coder.encode(symbols, w);
  return out;
}

/// The decoder side of write_stream; also checks every byte was used.
std::vector<int> read_stream(const bytes& in) {
  byte_reader r(in);
  huffman_coder coder;
  coder.load(r);
  const auto count = r.get<std::uint64_t>("count");
  if (count > 1u << 26) tensogram::codecs::sz3::fail("test: implausible count");
  auto out = coder.decode(r, count);
  if (r.remaining() != 0) tensogram::codecs::sz3::fail("test: trailing bytes");
  return out;
}

bytes save_of(const huffman_coder& coder) {
  bytes out;
  byte_writer w(out);
  coder.save(w);
  return out;
}

bytes encode_of(const huffman_coder& coder, const std::vector<int>& symbols) {
  bytes out;
  byte_writer w(out);
  coder.encode(symbols, w);
  return out;
}

// ---------------------------------------------------------------------------
// Hand-worked bytes.

// Symbols 3 3 3 4 5 5. Offset = min = 3, so the states (symbol − 3) are
// 0 (×3), 1 (×1), 2 (×2); SZ3's stateNum = max − min + 2 = 4, stored as 2.
// Leaves enter SZ3's heap in state order:
//   push s0(3)          heap [s0]
//   push s1(1): 1 < 3, rises            heap [s1 s0]
//   push s2(2): parent s1 has 1 <= 2    heap [s1 s0 s2]
// pop → s1 (last, s2, moves to the top; child s0(3) is not lighter) [s2 s0]
// pop → s2                                                          [s0]
// push A = (s1, s2) weight 3: parent s0 has 3 <= 3, stays          [s0 A]
// pop → s0, pop → A, push root = (s0, A).
// Codes (left 0, right 1): 3 → "0", 4 → "10", 5 → "11".
// Pre-order numbering: 0 root, 1 s0, 2 A, 3 s1, 4 s2, so
//   L = 1 0 3 0 0, R = 2 0 4 0 0, C = 0 0 0 1 2, t = 0 1 0 1 1,
// five nodes, so u8 indices. save: offset i32 LE, node count u32 BE, state
// count u32 BE, byte-order flag 0, L, R (u8), C (i32 LE), t (u8).
// encode: bits 0 0 0 10 11 11 = 00010111 1 → 0x17 0x80 (zero padded), after
// the u64 LE payload length 2.
TEST(Sz3Huffman, HandWorkedThreeSymbols) {
  const std::vector<int> symbols{3, 3, 3, 4, 5, 5};
  huffman_coder coder;
  coder.build(symbols, k_states);
  const bytes tree = make_bytes({0x03, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 2, 0,  // offset, nodes, states, flag
                                 1,    0, 3, 0, 0,                          // L
                                 2,    0, 4, 0, 0,                          // R
                                 0,    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,     // C[0..2]
                                 1,    0, 0, 0, 2, 0, 0, 0,                 // C[3..4]
                                 0,    1, 0, 1, 1});                        // t
  EXPECT_EQ(save_of(coder), tree);
  EXPECT_EQ(encode_of(coder, symbols), make_bytes({2, 0, 0, 0, 0, 0, 0, 0, 0x17, 0x80}));
  EXPECT_EQ(coder.code_length(3), 1);
  EXPECT_EQ(coder.code_length(4), 2);
  EXPECT_EQ(coder.code_length(5), 2);
  EXPECT_EQ(coder.code_length(6), -1);
  EXPECT_EQ(read_stream(write_stream(symbols)), symbols);
}

// Symbols 12 10 13 11, each once: four equal weights, where the heap's tie
// rules decide the shape. Offset 10, states 0..3, stateNum 13 − 10 + 2 = 5,
// stored as 5 / 2 = 2.
//   pushes: no entry rises past an equal parent → heap [s0 s1 s2 s3]
//   pop → s0: s3 moves to the top; children s1, s2 equal, s1 is not lighter
//         than s3 → stays                       heap [s3 s1 s2]
//   pop → s3: s2 to the top, s1 not lighter     heap [s2 s1]
//   push A = (s0, s3) weight 2                  heap [s2 s1 A]
//   pop → s2: A to the top, s1(1) lighter → swap heap [s1 A]
//   pop → s1;  push B = (s2, s1) weight 2: A(2) <= 2 → heap [A B]
//   pop → A, pop → B, root = (A, B).
// Codes: 10 → 00, 13 → 01, 12 → 10, 11 → 11 (not the canonical order).
// Pre-order: 0 root, 1 A, 2 s0, 3 s3, 4 B, 5 s2, 6 s1:
//   L = 1 2 0 0 5 0 0, R = 4 3 0 0 6 0 0, C = 0 0 0 3 0 2 1, t = 0 0 1 1 0 1 1.
// encode 12 10 13 11: 10 00 01 11 = 0x87.
TEST(Sz3Huffman, HandWorkedTies) {
  const std::vector<int> symbols{12, 10, 13, 11};
  huffman_coder coder;
  coder.build(symbols, k_states);
  const bytes tree = concat(
      {make_bytes({10, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 2, 0}), make_bytes({1, 2, 0, 0, 5, 0, 0}),
       make_bytes({4, 3, 0, 0, 6, 0, 0}),
       make_bytes({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0}),
       make_bytes({0, 0, 1, 1, 0, 1, 1})});
  EXPECT_EQ(save_of(coder), tree);
  EXPECT_EQ(encode_of(coder, symbols), make_bytes({1, 0, 0, 0, 0, 0, 0, 0, 0x87}));
  EXPECT_EQ(read_stream(write_stream(symbols)), symbols);
}

// One distinct symbol: the root is a leaf with an empty code, so SZ3 writes
// node count 1, stateNum (7 − 7 + 2) / 2 = 1, L = R = 0, C = 0, t = 1, and a
// zero-length payload.
TEST(Sz3Huffman, HandWorkedOneSymbol) {
  const std::vector<int> symbols{7, 7, 7};
  huffman_coder coder;
  coder.build(symbols, k_states);
  EXPECT_EQ(save_of(coder), make_bytes({7, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(encode_of(coder, symbols), bytes(8, std::byte{0}));
  EXPECT_EQ(coder.code_length(7), 0);
  EXPECT_EQ(read_stream(write_stream(symbols)), symbols);
}

// ---------------------------------------------------------------------------
// Round trips.

/// Optimal total code length, computed independently: the sum of the
/// weights of all merged nodes (any Huffman tree attains it).
std::uint64_t optimal_bits(const std::vector<int>& symbols) {
  std::map<int, std::uint64_t> freq;
  for (const int s : symbols) ++freq[s];
  std::priority_queue<std::uint64_t, std::vector<std::uint64_t>, std::greater<>> q;
  for (const auto& [s, f] : freq) q.push(f);
  std::uint64_t cost = 0;
  while (q.size() > 1) {
    const auto a = q.top();
    q.pop();
    const auto b = q.top();
    q.pop();
    cost += a + b;
    q.push(a + b);
  }
  return cost;
}

void check_round_trip(const std::vector<int>& symbols, int symbol_count = k_states) {
  huffman_coder coder;
  coder.build(symbols, symbol_count);
  std::uint64_t bits = 0;
  for (const int s : symbols) bits += static_cast<std::uint64_t>(coder.code_length(s));
  EXPECT_EQ(bits, optimal_bits(symbols));

  const bytes tree = save_of(coder);
  const bytes payload = encode_of(coder, symbols);
  ASSERT_EQ(payload.size(), 8 + (bits + 7) / 8);
  const std::uint32_t nodes = coder.node_count();
  const std::size_t width = nodes <= 256 ? 1 : nodes <= 65536 ? 2 : 4;
  EXPECT_EQ(tree.size(), 13 + nodes * (2 * width + 5));

  const bytes stream = write_stream(symbols, symbol_count);
  bytes count(8);
  const std::uint64_t n = symbols.size();
  std::memcpy(count.data(), &n, 8);
  EXPECT_EQ(stream, concat({tree, count, payload}));
  EXPECT_EQ(read_stream(stream), symbols);

  // A loaded tree saves to the same bytes and decodes the payload alone.
  byte_reader r(tree);
  huffman_coder loaded;
  loaded.load(r);
  EXPECT_EQ(r.remaining(), 0u);
  EXPECT_EQ(save_of(loaded), tree);
  byte_reader pr(payload);
  EXPECT_EQ(loaded.decode(pr, symbols.size()), symbols);
  std::vector<int> into(symbols.size(), -1);
  byte_reader ir(payload);
  loaded.decode_into(ir, into);
  EXPECT_EQ(into, symbols);
  EXPECT_EQ(ir.remaining(), 0u);
  if (!symbols.empty()) {
    const auto [lo, hi] = loaded.symbol_bounds();
    EXPECT_EQ(lo, *std::min_element(symbols.begin(), symbols.end()));
    EXPECT_EQ(hi, *std::max_element(symbols.begin(), symbols.end()));
  }
}

std::vector<int> geometric_around(std::size_t n, int centre, double p, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::geometric_distribution<int> g(p);
  std::bernoulli_distribution sign(0.5);
  std::vector<int> out(n);
  for (auto& v : out) v = std::clamp(centre + (sign(rng) ? 1 : -1) * g(rng), 0, k_states - 1);
  return out;
}

TEST(Sz3Huffman, RoundTripUniform) {
  std::mt19937 rng(1);
  std::uniform_int_distribution<int> d(0, k_states - 1);
  std::vector<int> symbols(200000);
  for (auto& v : symbols) v = d(rng);
  check_round_trip(symbols);
}

TEST(Sz3Huffman, RoundTripGeometricAroundRadius) {
  check_round_trip(geometric_around(300000, 32768, 0.3, 2));
  check_round_trip(geometric_around(100000, 32768, 0.9, 3));   // very peaked
  check_round_trip(geometric_around(100000, 32768, 0.01, 4));  // wide
}

TEST(Sz3Huffman, RoundTripSmallCases) {
  check_round_trip({});
  check_round_trip({0});
  check_round_trip({65535});
  check_round_trip(std::vector<int>(1000, 32768));
  check_round_trip({5, 9});
  std::vector<int> two(1001, 32768);
  two[500] = 32769;
  check_round_trip(two);
  check_round_trip({0, 65535, 0, 0});
}

TEST(Sz3Huffman, RoundTripAllSymbols) {
  // Every one of the 65536 symbols: 131071 nodes, u32 indices.
  std::vector<int> symbols(k_states * 3);
  for (std::size_t i = 0; i < symbols.size(); ++i) symbols[i] = static_cast<int>((i * 7919) % k_states);
  std::mt19937 rng(5);
  for (int i = 0; i < 50000; ++i) symbols.push_back(32768 + static_cast<int>(rng() % 64));
  check_round_trip(symbols);
}

TEST(Sz3Huffman, IndexWidthBoundaries) {
  // 128 distinct → 255 nodes (u8); 129 → 257 (u16); 32768 → 65535 (u16);
  // 32769 → 65537 (u32).
  for (const int distinct : {128, 129, 32768, 32769}) {
    std::vector<int> symbols;
    std::mt19937 rng(static_cast<std::uint32_t>(distinct));
    for (int s = 0; s < distinct; ++s) {
      for (std::uint32_t k = 0; k < 1 + rng() % 5; ++k) symbols.push_back(1000 + s);
    }
    std::shuffle(symbols.begin(), symbols.end(), rng);
    huffman_coder coder;
    coder.build(symbols, k_states);
    EXPECT_EQ(coder.node_count(), static_cast<std::uint32_t>(2 * distinct - 1));
    check_round_trip(symbols);
  }
}

TEST(Sz3Huffman, LongCodesLeaveTheLookupTable) {
  // Fibonacci weights give a chain-shaped tree: codes up to 24 bits, longer
  // than the decoder's table, so those symbols take the bit-by-bit path.
  std::vector<int> symbols;
  std::uint64_t a = 1;
  std::uint64_t b = 1;
  for (int s = 0; s < 25; ++s) {
    symbols.insert(symbols.end(), a, 100 + s);
    const auto c = a + b;
    a = b;
    b = c;
  }
  std::shuffle(symbols.begin(), symbols.end(), std::mt19937(6));
  huffman_coder coder;
  coder.build(symbols, k_states);
  EXPECT_GE(std::max(coder.code_length(100), coder.code_length(101)), 20);
  check_round_trip(symbols);
}

TEST(Sz3Huffman, SymbolCountBoundsInput) {
  huffman_coder coder;
  EXPECT_THROW(coder.build(std::vector<int>{1, 2, 16}, 16), encoding_error);
  EXPECT_THROW(coder.build(std::vector<int>{-1, 2}, 16), encoding_error);
  EXPECT_THROW(coder.build(std::vector<int>{1}, 0), encoding_error);
  coder.build(std::vector<int>{1, 2, 15}, 16);
  bytes out;
  byte_writer w(out);
  EXPECT_THROW(coder.encode(std::vector<int>{1, 3}, w), encoding_error);  // 3 has no code
  EXPECT_THROW(coder.encode(std::vector<int>{0}, w), encoding_error);
  EXPECT_THROW(coder.encode(std::vector<int>{-2147483647 - 1}, w), encoding_error);
  huffman_coder empty;
  EXPECT_THROW(empty.save(w), encoding_error);
  EXPECT_THROW(empty.encode(std::vector<int>{1}, w), encoding_error);
  byte_reader r(out);
  EXPECT_THROW((void)empty.decode(r, 1), encoding_error);
  // A built tree only encodes: decoding needs the tree `load` reads.
  bytes coded;
  byte_writer cw(coded);
  coder.encode(std::vector<int>{1, 2, 15}, cw);
  byte_reader cr(coded);
  EXPECT_THROW((void)coder.decode(cr, 3), encoding_error);
}

// ---------------------------------------------------------------------------
// Hostile input.

/// Decoding must give the symbols or an encoding_error, nothing else.
bool decodes(const bytes& in) {
  try {
    (void)read_stream(in);
    return true;
  } catch (const encoding_error&) {
    return false;
  }
}

TEST(Sz3Huffman, EveryTruncationFails) {
  for (const auto& symbols :
       {std::vector<int>{3, 3, 3, 4, 5, 5}, std::vector<int>{7, 7}, geometric_around(3000, 32768, 0.2, 7)}) {
    const bytes stream = write_stream(symbols);
    for (std::size_t n = 0; n < stream.size(); ++n) {
      const bytes cut(stream.begin(), stream.begin() + static_cast<std::ptrdiff_t>(n));
      EXPECT_FALSE(decodes(cut)) << "prefix of " << n << " bytes";
    }
  }
}

TEST(Sz3Huffman, EveryBitFlipIsSafe) {
  // A flipped payload bit may still decode (to other symbols); a flipped
  // tree bit must mostly be caught. Neither may do anything but decode or
  // throw encoding_error.
  for (const auto& symbols :
       {std::vector<int>{12, 10, 13, 11, 10, 10}, geometric_around(400, 32768, 0.4, 8)}) {
    const bytes stream = write_stream(symbols);
    huffman_coder coder;
    coder.build(symbols, k_states);
    const std::size_t tree_size = save_of(coder).size();
    std::size_t tree_flips_caught = 0;
    for (std::size_t bit = 0; bit < stream.size() * 8; ++bit) {
      bytes bad = stream;
      bad[bit / 8] ^= static_cast<std::byte>(1u << (bit % 8));
      const bool ok = decodes(bad);
      if (bit / 8 < tree_size && !ok) ++tree_flips_caught;
    }
    EXPECT_GT(tree_flips_caught, tree_size * 8 / 2);
  }
}

TEST(Sz3Huffman, RandomBytesAreSafe) {
  std::mt19937 rng(9);
  for (int trial = 0; trial < 3000; ++trial) {
    bytes in(rng() % 64);
    for (auto& b : in) b = static_cast<std::byte>(rng());
    if (trial % 2 == 0 && in.size() >= 12) {
      // Plausible counts so that the tree parser gets further.
      in[4] = in[5] = in[6] = std::byte{0};
      in[7] = static_cast<std::byte>(1 + 2 * (rng() % 3));
      in[8] = in[9] = in[10] = std::byte{0};
    }
    (void)decodes(in);
  }
}

// Targeted corruptions of the first hand-worked stream (layout above:
// bytes 0-3 offset, 4-7 node count, 8-11 state count, 12 flag, 13-17 L,
// 18-22 R, 23-42 C, 43-47 t, 48-55 symbol count, 56-63 payload length,
// 64-65 payload).
TEST(Sz3Huffman, CorruptedFieldsAreNamed) {
  const bytes good = write_stream({3, 3, 3, 4, 5, 5});
  ASSERT_EQ(good.size(), 66u);
  ASSERT_TRUE(decodes(good));
  const auto with = [&](std::size_t at, int value) {
    bytes b = good;
    b[at] = static_cast<std::byte>(value);
    return b;
  };
  EXPECT_FALSE(decodes(with(7, 0)));      // zero nodes
  EXPECT_FALSE(decodes(with(4, 0x7f)));   // node count beyond the stream
  EXPECT_FALSE(decodes(with(7, 3)));      // node count 3: the arrays shift, no valid tree
  EXPECT_FALSE(decodes(with(11, 3)));     // state count does not match the largest symbol
  EXPECT_FALSE(decodes(with(12, 1)));     // big-endian writer
  EXPECT_FALSE(decodes(with(15, 0)));     // L[2] = 0: inner node without left child
  EXPECT_FALSE(decodes(with(15, 5)));     // L[2] = 5: out of range
  EXPECT_FALSE(decodes(with(15, 2)));     // L[2] = 2: a cycle
  EXPECT_FALSE(decodes(with(15, 1)));     // L[2] = 1: node 1 shared
  EXPECT_FALSE(decodes(with(14, 1)));     // leaf 1 with a child
  EXPECT_FALSE(decodes(with(43, 1)));     // root marked as leaf: nodes unreachable
  EXPECT_FALSE(decodes(with(44, 2)));     // leaf flag 2
  EXPECT_FALSE(decodes(with(45, 1)));     // inner node 2 marked leaf
  EXPECT_FALSE(decodes(with(23, 1)));     // inner node with a symbol
  EXPECT_FALSE(decodes(with(39, 1)));     // C[4] = 1: symbol on two leaves
  EXPECT_FALSE(decodes(with(27, 1)));     // C[1] = 1: smallest symbol not 0
  EXPECT_FALSE(decodes(with(42, 0x80)));  // C[4] negative
  // 9 payload bits + 7 padding bits: up to 7 more symbols coded "0" are
  // indistinguishable from padding (SZ3 has the same ambiguity); the 14th
  // symbol needs a 17th bit.
  EXPECT_TRUE(decodes(with(48, 13)));
  EXPECT_FALSE(decodes(with(48, 14)));
  EXPECT_FALSE(decodes(with(48, 99)));                            // more symbols than payload bits
  EXPECT_FALSE(decodes(with(48, 5)));                             // fewer symbols: bytes left unused
  EXPECT_FALSE(decodes(with(56, 3)));                             // payload length beyond the stream
  EXPECT_FALSE(decodes(with(65, 0x81)));                          // nonzero padding
  EXPECT_FALSE(decodes(concat({with(56, 3), make_bytes({0})})));  // unused payload byte
  bytes huge_offset = good;                                       // offset INT_MAX: INT_MAX + 2 overflows int
  huge_offset[0] = huge_offset[1] = huge_offset[2] = std::byte{0xff};
  huge_offset[3] = std::byte{0x7f};
  EXPECT_FALSE(decodes(huge_offset));
}

TEST(Sz3Huffman, OneSymbolTreeRejectsPayload) {
  bytes stream = write_stream({7, 7, 7});
  // Payload length 1 with one byte present: SZ3 never writes bits here.
  stream[20 + 8] = std::byte{1};
  stream.push_back(std::byte{0});
  EXPECT_FALSE(decodes(stream));
}

TEST(Sz3Huffman, FailedLoadLeavesCoderEmpty) {
  const bytes good = write_stream({3, 3, 3, 4, 5, 5});
  huffman_coder coder;
  byte_reader r1(good);
  coder.load(r1);
  bytes bad = good;
  bad[15] = std::byte{2};
  byte_reader r2(bad);
  EXPECT_THROW(coder.load(r2), encoding_error);
  bytes out;
  byte_writer w(out);
  EXPECT_THROW(coder.save(w), encoding_error);
}

// A few hundred symbols spread over SZ3's 65536 bins take the sparse
// encoder tables (huffman.cpp); the tree, and so every code length, depends
// only on the frequencies in symbol order, so it must equal the tree of the
// same symbols mapped to their ranks (a narrow range: dense tables), and
// the bits must decode back.
TEST(Huffman, SparseSymbolsGiveTheTreeOfTheirRanks) {
  std::mt19937 rng(7);
  std::vector<int> distinct(40);
  for (int& d : distinct) d = static_cast<int>(rng() % 65536);
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  std::vector<int> symbols;
  std::vector<int> ranks;
  for (int i = 0; i < 300; ++i) {
    // Skewed, as quantisation bins are.
    const std::size_t r =
        std::min<std::size_t>(distinct.size() - 1, rng() % 7 == 0 ? rng() % distinct.size() : rng() % 3);
    symbols.push_back(distinct[r]);
    ranks.push_back(static_cast<int>(r));
  }
  huffman_coder sparse;
  sparse.build(symbols, 65536);
  huffman_coder dense;
  dense.build(ranks, 65536);
  ASSERT_EQ(sparse.node_count(), dense.node_count());
  for (std::size_t r = 0; r < distinct.size(); ++r) {
    EXPECT_EQ(sparse.code_length(distinct[r]), dense.code_length(static_cast<int>(r))) << r;
  }
  EXPECT_EQ(sparse.code_length(distinct.back() + 1), -1);

  bytes stream;
  byte_writer w(stream);
  sparse.save(w);
  sparse.encode(symbols, w);
  byte_reader r(stream);
  huffman_coder back;
  back.load(r);
  EXPECT_EQ(back.decode(r, symbols.size()), symbols);
}

}  // namespace

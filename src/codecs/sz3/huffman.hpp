// SZ3's Huffman stage (docs/sz3-format.md §3.2): the quantisation bins of a
// whole field are coded with one Huffman tree built from their frequencies.
// The tree is stored as SZ3 stores it (node arrays in pre-order, index width
// chosen by the node count) and the bins as one MSB-first bit string, so a
// stream written here decodes with SZ3 3.3.x and the reverse. The encoder
// reproduces SZ3's tree exactly, ties included, because the tree is part of
// the bytes; the decoder accepts any well-formed tree but nothing else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "byte_io.hpp"

namespace tensogram::codecs::sz3 {

class huffman_coder {
 public:
  // ---- encoder side ------------------------------------------------------

  /// Builds SZ3's tree for `symbols`, each of which must lie in
  /// [0, symbol_count). The tree covers only the symbols that occur, offset
  /// by the smallest one (§3.2). An empty `symbols` gives a one-leaf tree for
  /// symbol 0 (SZ3 refuses empty input; SZ3 decodes what we write for it).
  void build(std::span<const int> symbols, int symbol_count);

  /// Writes the tree exactly as SZ3's HuffmanEncoder::save does (§3.2).
  void save(byte_writer& w) const;

  /// Writes the u64 payload length and the coded bits (§3.2). Every symbol
  /// must be one `build` saw.
  void encode(std::span<const int> symbols, byte_writer& w) const;

  // ---- decoder side ------------------------------------------------------

  /// Reads and validates a tree written by SZ3's save (§3.2).
  void load(byte_reader& r);

  /// Reads a payload (§3.2) and returns exactly `count` symbols, with the
  /// tree `load` read (a tree from `build` only encodes: it has no decode
  /// table, which would cost the encoder a 2^12-entry fill per tree). For a
  /// one-leaf tree no bits are stored, so `count` is not bounded by the
  /// stream: the caller must bound it (by the element count) beforehand.
  [[nodiscard]] std::vector<int> decode(byte_reader& r, std::uint64_t count) const;

  /// `decode` into caller memory: fills all of `out` (its size is the count).
  void decode_into(byte_reader& r, std::span<int> out) const;

  // ---- inspection --------------------------------------------------------

  /// Number of tree nodes (SZ3's nodeCount; 2 × distinct symbols − 1).
  [[nodiscard]] std::uint32_t node_count() const noexcept { return static_cast<std::uint32_t>(leaf_.size()); }
  /// SZ3's `offset`: the smallest symbol; leaves store symbol − offset.
  [[nodiscard]] int offset() const noexcept { return offset_; }
  /// Smallest and largest symbol `decode` can return (after `build` or
  /// `load`), so a caller can check its symbol range once, not per symbol.
  [[nodiscard]] std::pair<int, int> symbol_bounds() const noexcept { return {offset_, offset_ + max_state_}; }
  /// Code length in bits of `symbol` after `build`; -1 if it has no code.
  [[nodiscard]] int code_length(int symbol) const noexcept;

 private:
  struct table_entry {
    std::int32_t value;   // the symbol (leaf) or the node to continue from
    std::uint8_t length;  // bits consumed by this entry
    bool leaf;
  };

  void reset();
  void validate_tree();
  void build_decode_table();
  [[nodiscard]] int decode_long(std::uint32_t node, std::span<const std::byte> bits,
                                std::uint64_t& pos) const;

  // The tree in SZ3's stored layout: node i's children (0 = none), its
  // symbol − offset (0 for inner nodes) and its leaf flag; node 0 is the root.
  std::vector<std::uint32_t> left_;
  std::vector<std::uint32_t> right_;
  std::vector<std::int32_t> state_;
  std::vector<std::uint8_t> leaf_;
  std::int32_t offset_ = 0;
  std::int32_t max_state_ = 0;
  std::int32_t half_states_ = 0;  // SZ3's stateNum / 2, stored as is
  int max_depth_ = 0;

  /// Index of `state` (symbol − offset) in the encoder tables, or
  /// code_length_.size() when it has no entry.
  [[nodiscard]] std::size_t slot(std::uint32_t state) const noexcept;
  /// Fills `sparse_index_` from `sparse_states_`.
  void index_sparse_states();
  /// Fibonacci hashing of a state into `sparse_index_` (masked by the caller).
  [[nodiscard]] static std::size_t sparse_hash(std::uint32_t state) noexcept {
    return static_cast<std::size_t>((std::uint64_t{state} * 0x9E3779B97F4A7C15ULL) >> 32);
  }
  static constexpr std::uint64_t k_no_entry = ~std::uint64_t{0};

  // Encoder tables, indexed by symbol − offset (dense) or, when the symbols
  // span a range much wider than their count, by rank in `sparse_states_`
  // (the distinct states, sorted): the tables then cost O(symbols), not
  // O(range) — a field of a few thousand values whose bins spread over
  // SZ3's 65536 no longer allocates and zeroes ~1 MB per tree. A length of
  // 0 means "no code" except in a one-leaf tree, whose only code is empty.
  std::vector<std::uint64_t> code_;
  std::vector<std::uint8_t> code_length_;
  std::vector<std::uint32_t> sparse_states_;  // empty: dense tables
  // Sparse tables: an open-addressing hash of state → rank, each entry
  // (state << 32) | rank, k_no_entry when free (a state is below 2^31).
  std::vector<std::uint64_t> sparse_index_;

  // Decoder: the first `table_bits_` bits of the stream index `table_`.
  std::vector<table_entry> table_;
  int table_bits_ = 0;
};

}  // namespace tensogram::codecs::sz3

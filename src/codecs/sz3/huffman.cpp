// SZ3's Huffman stage; the format is docs/sz3-format.md §3.2.
#include "huffman.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <string>
#include <tuple>

namespace tensogram::codecs::sz3 {
namespace {

// SZ3 keeps a code in at most two 64-bit words, but a code longer than 64
// bits needs a field of more than 2.7·10^13 values (the Fibonacci bound on
// Huffman depth), so we refuse such trees instead of carrying SZ3's second
// word (§3.2).
constexpr int k_max_code_bits = 64;
// Bits resolved by one decode-table lookup: 4096 entries of 8 bytes stay in
// L1, and SZ3's skewed bin distributions put nearly every symbol within them.
constexpr int k_table_bits = 12;
// Sparse encoder tables (huffman.hpp) when the symbol range exceeds this
// many times the symbol count, and this many states: below, the dense
// tables are small enough that their O(range) cost does not matter.
constexpr std::size_t k_sparse_factor = 4;
constexpr std::size_t k_sparse_min_range = 4096;

std::string str(std::uint64_t v) {
  return std::to_string(v);
}

// ---------------------------------------------------------------------------
// Tree construction.

/// Smallest and largest symbol; fails on one outside [0, symbol_count).
std::pair<int, int> symbol_extent(std::span<const int> symbols, int symbol_count) {
  int lo = INT_MAX;
  int hi = INT_MIN;
  for (const int s : symbols) {
    lo = std::min(lo, s);
    hi = std::max(hi, s);
  }
  if (lo < 0 || hi >= symbol_count) {
    const auto bad =
        std::find_if(symbols.begin(), symbols.end(), [&](int s) { return s < 0 || s >= symbol_count; });
    fail("huffman: symbol " + std::to_string(*bad) + " at index " +
         str(static_cast<std::uint64_t>(bad - symbols.begin())) + " is outside [0, " +
         std::to_string(symbol_count) + ")");
  }
  return {lo, hi};
}

/// Occurrences of each symbol − lo.
std::vector<std::uint64_t> count_states(std::span<const int> symbols, int lo, std::size_t states) {
  std::vector<std::uint64_t> freq(states);
  // Quantisation bins come in long runs of one value; with a single table
  // each increment would wait on the previous store to the same counter, so
  // four tables take turns and are summed at the end.
  constexpr std::size_t ways = 4;
  if (symbols.size() < 4 * states || states > (std::size_t{1} << 20)) {
    for (const int s : symbols) ++freq[static_cast<std::size_t>(s - lo)];
    return freq;
  }
  std::vector<std::uint64_t> split(ways * states);
  const std::size_t whole = symbols.size() - symbols.size() % ways;
  for (std::size_t i = 0; i < whole; i += ways) {
    for (std::size_t k = 0; k < ways; ++k)
      ++split[k * states + static_cast<std::size_t>(symbols[i + k] - lo)];
  }
  for (std::size_t i = whole; i < symbols.size(); ++i) ++freq[static_cast<std::size_t>(symbols[i] - lo)];
  for (std::size_t k = 0; k < ways; ++k) {
    for (std::size_t s = 0; s < states; ++s) freq[s] += split[k * states + s];
  }
  return freq;
}

/// The distinct states (symbol − lo) of `symbols`, sorted, and how often
/// each occurs: O(n log n) time and O(n) memory whatever the symbol range.
void count_sparse(std::span<const int> symbols, int lo, std::vector<std::uint32_t>& states,
                  std::vector<std::uint64_t>& freq) {
  std::vector<std::uint32_t> sorted(symbols.size());
  for (std::size_t i = 0; i < symbols.size(); ++i) sorted[i] = static_cast<std::uint32_t>(symbols[i] - lo);
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    states.push_back(sorted[i]);
    freq.push_back(j - i);
    i = j;
  }
}

/// The nodes of the tree under construction: leaves first (in symbol
/// order), then inner nodes in the order they are merged.
struct node_pool {
  std::vector<std::uint64_t> weight;
  std::vector<std::uint32_t> left;
  std::vector<std::uint32_t> right;
  std::vector<std::int32_t> state;  // symbol − offset, or -1 for an inner node
};

/// SZ3's priority queue: a 1-based binary min-heap on weight. Which of two
/// equal weights leaves first follows from exactly these sift rules (an
/// entry rises only past a strictly heavier parent; a child replaces its
/// parent only when strictly lighter, the right child only when strictly
/// lighter than the left), and that choice shapes the tree, so they must
/// not be "improved" (§3.2).
class node_queue {
 public:
  node_queue(const std::vector<std::uint64_t>& weight, std::size_t capacity)
      : weight_(weight), slot_(capacity + 1) {}

  [[nodiscard]] std::size_t size() const noexcept { return end_ - 1; }

  void push(std::uint32_t node) {
    std::size_t at = end_++;
    while (at > 1) {
      const std::size_t parent = at / 2;
      if (weight_[slot_[parent]] <= weight_[node]) break;
      slot_[at] = slot_[parent];
      at = parent;
    }
    slot_[at] = node;
  }

  std::uint32_t pop() {
    const std::uint32_t top = slot_[1];
    --end_;
    slot_[1] = slot_[end_];
    std::size_t at = 1;
    for (std::size_t child = 2; child < end_; child = 2 * at) {
      if (child + 1 < end_ && weight_[slot_[child + 1]] < weight_[slot_[child]]) ++child;
      if (weight_[slot_[at]] <= weight_[slot_[child]]) break;
      std::swap(slot_[at], slot_[child]);
      at = child;
    }
    return top;
  }

 private:
  const std::vector<std::uint64_t>& weight_;
  std::vector<std::uint32_t> slot_;
  std::size_t end_ = 1;
};

/// Builds the tree as SZ3 does: leaves enter the queue in increasing symbol
/// order, then the two lightest nodes are merged (first out = left child)
/// until one remains. Returns the root. `freq[i]` counts state
/// `state_of[i]` (state i when `state_of` is empty); either way the leaves
/// enter in increasing state order, so both give the same tree.
std::uint32_t merge_nodes(const std::vector<std::uint64_t>& freq, std::span<const std::uint32_t> state_of,
                          node_pool& pool) {
  const auto leaves =
      static_cast<std::size_t>(std::count_if(freq.begin(), freq.end(), [](auto f) { return f != 0; }));
  for (auto* v : {&pool.left, &pool.right}) v->reserve(2 * leaves);
  pool.weight.reserve(2 * leaves);
  pool.state.reserve(2 * leaves);
  node_queue queue(pool.weight, leaves);
  for (std::size_t s = 0; s < freq.size(); ++s) {
    if (freq[s] == 0) continue;
    pool.weight.push_back(freq[s]);
    pool.left.push_back(0);
    pool.right.push_back(0);
    pool.state.push_back(static_cast<std::int32_t>(state_of.empty() ? s : state_of[s]));
    queue.push(static_cast<std::uint32_t>(pool.weight.size() - 1));
  }
  while (queue.size() > 1) {
    const std::uint32_t first = queue.pop();
    const std::uint32_t second = queue.pop();
    pool.weight.push_back(pool.weight[first] + pool.weight[second]);
    pool.left.push_back(first);
    pool.right.push_back(second);
    pool.state.push_back(-1);
    queue.push(static_cast<std::uint32_t>(pool.weight.size() - 1));
  }
  return queue.pop();
}

// ---------------------------------------------------------------------------
// Bit and byte helpers.

/// MSB-first reader of the payload bits, holding the next 56 to 63 of them
/// in one register so that each symbol costs a lookup and a shift (the
/// refill is F. Giesen's branch-free "variant 4"). Past the end it reads
/// zero bits; the decoder compares position() with the payload size.
class bit_reader {
 public:
  explicit bit_reader(std::span<const std::byte> bits) : bits_(bits) {}

  /// Tops the window up to at least 56 valid bits.
  void refill() {
    window_ |= load(next_) >> filled_;
    next_ += (63 - filled_) >> 3;
    filled_ |= 56;
  }
  [[nodiscard]] std::uint64_t window() const noexcept { return window_; }
  void skip(unsigned n) noexcept {
    window_ <<= n;
    filled_ -= n;
  }
  /// Bits consumed so far.
  [[nodiscard]] std::uint64_t position() const noexcept { return std::uint64_t{next_} * 8 - filled_; }
  void seek(std::uint64_t pos) {
    next_ = static_cast<std::size_t>(pos >> 3);
    window_ = 0;
    filled_ = 0;
    refill();
    skip(static_cast<unsigned>(pos & 7));
  }

 private:
  /// Eight bytes from `at` as a big-endian word, zeros past the end.
  [[nodiscard]] std::uint64_t load(std::size_t at) const noexcept {
    std::uint64_t word = 0;
    if (at + 8 <= bits_.size()) {
      std::memcpy(&word, bits_.data() + at, 8);
      return __builtin_bswap64(word);
    }
    for (std::size_t i = 0; at + i < bits_.size(); ++i) {
      word |= std::uint64_t{std::to_integer<std::uint8_t>(bits_[at + i])} << (56 - 8 * i);
    }
    return word;
  }

  std::span<const std::byte> bits_;
  std::size_t next_ = 0;  // first byte not yet in the window
  std::uint64_t window_ = 0;
  unsigned filled_ = 0;  // valid bits at the top of window_
};

inline void store_big_endian(std::byte* out, std::uint64_t word) {
  word = __builtin_bswap64(word);
  std::memcpy(out, &word, 8);
}

template <class Index>
void put_indices(byte_writer& w, const std::vector<std::uint32_t>& indices) {
  std::vector<Index> narrow(indices.size());
  std::transform(indices.begin(), indices.end(), narrow.begin(),
                 [](std::uint32_t i) { return static_cast<Index>(i); });
  w.put_array<Index>(narrow);
}

template <class Index>
std::vector<std::uint32_t> get_indices(byte_reader& r, std::uint32_t count, const char* field) {
  const auto narrow = r.get_array<Index>(count, field);
  return {narrow.begin(), narrow.end()};
}

std::vector<std::uint32_t> get_indices(byte_reader& r, std::uint32_t count, unsigned width,
                                       const char* field) {
  switch (width) {
    case 1: return get_indices<std::uint8_t>(r, count, field);
    case 2: return get_indices<std::uint16_t>(r, count, field);
    default: return get_indices<std::uint32_t>(r, count, field);
  }
}

/// SZ3 stores child indices in the narrowest of u8/u16/u32 that its node
/// count allows (§3.2).
unsigned index_width(std::uint32_t nodes) {
  return nodes <= 256 ? 1 : nodes <= 65536 ? 2 : 4;
}

}  // namespace

// ---------------------------------------------------------------------------
// Encoder side.

void huffman_coder::build(std::span<const int> symbols, int symbol_count) {
  if (symbol_count <= 0) fail("huffman: symbol count " + std::to_string(symbol_count) + " is not positive");
  reset();
  int lo = 0;
  int hi = 0;
  std::vector<std::uint64_t> freq{1};  // empty input: one leaf for symbol 0
  if (!symbols.empty()) {
    std::tie(lo, hi) = symbol_extent(symbols, symbol_count);
    const std::size_t range = static_cast<std::size_t>(hi - lo) + 1;
    if (range > k_sparse_factor * symbols.size() && range > k_sparse_min_range) {
      freq.clear();
      count_sparse(symbols, lo, sparse_states_, freq);
      index_sparse_states();
    } else {
      freq = count_states(symbols, lo, range);
    }
  }
  offset_ = lo;
  max_state_ = hi - lo;
  // SZ3 sizes its tables for max − min + 2 states and stores half of that.
  half_states_ = static_cast<std::int32_t>((std::int64_t{hi} - lo + 2) / 2);

  node_pool pool;
  const std::uint32_t root = merge_nodes(freq, sparse_states_, pool);

  // Number the nodes in pre-order (node, left subtree, right subtree) as
  // SZ3's save does, and collect each leaf's code on the way: left adds a
  // 0 bit, right a 1.
  const std::size_t nodes = pool.weight.size();
  left_.assign(nodes, 0);
  right_.assign(nodes, 0);
  state_.assign(nodes, 0);
  leaf_.assign(nodes, 0);
  code_.assign(freq.size(), 0);
  code_length_.assign(freq.size(), 0);
  struct pending {
    std::uint32_t node;
    std::uint32_t parent;
    bool is_right;
    int depth;
    std::uint64_t code;
  };
  std::vector<pending> stack{{root, 0, false, 0, 0}};
  std::uint32_t next = 0;
  while (!stack.empty()) {
    const pending p = stack.back();
    stack.pop_back();
    const std::uint32_t index = next++;
    if (index != 0) (p.is_right ? right_ : left_)[p.parent] = index;
    if (pool.state[p.node] < 0) {
      stack.push_back({pool.right[p.node], index, true, p.depth + 1, (p.code << 1) | 1});
      stack.push_back({pool.left[p.node], index, false, p.depth + 1, p.code << 1});
      continue;
    }
    if (p.depth > k_max_code_bits) {
      fail("huffman: a code of " + std::to_string(p.depth) +
           " bits; codes longer than 64 bits are not supported");
    }
    const std::size_t at = slot(static_cast<std::uint32_t>(pool.state[p.node]));
    leaf_[index] = 1;
    state_[index] = pool.state[p.node];
    code_[at] = p.code;
    code_length_[at] = static_cast<std::uint8_t>(p.depth);
    max_depth_ = std::max(max_depth_, p.depth);
  }
  // No decode table: a built coder only encodes (decoding loads the tree).
}

void huffman_coder::save(byte_writer& w) const {
  if (leaf_.empty()) fail("huffman: save called before build");
  const std::uint32_t nodes = node_count();
  w.put<std::int32_t>(offset_);
  // The two counts are the only big-endian fields in an SZ3 stream.
  w.put<std::uint32_t>(__builtin_bswap32(nodes));
  w.put<std::uint32_t>(__builtin_bswap32(static_cast<std::uint32_t>(half_states_)));
  w.put<std::uint8_t>(0);  // byte-order flag of the writer: 0 = little-endian
  switch (index_width(nodes)) {
    case 1:
      put_indices<std::uint8_t>(w, left_);
      put_indices<std::uint8_t>(w, right_);
      break;
    case 2:
      put_indices<std::uint16_t>(w, left_);
      put_indices<std::uint16_t>(w, right_);
      break;
    default:
      put_indices<std::uint32_t>(w, left_);
      put_indices<std::uint32_t>(w, right_);
      break;
  }
  w.put_array<std::int32_t>(state_);
  w.put_array<std::uint8_t>(leaf_);
}

void huffman_coder::encode(std::span<const int> symbols, byte_writer& w) const {
  if (code_length_.empty()) fail("huffman: encode called before build");
  const bool one_leaf = leaf_[0] != 0;
  // First pass: check every symbol has a code and size the payload, so the
  // bits can be written straight into their final place.
  std::uint64_t total_bits = 0;
  for (std::size_t i = 0; i < symbols.size(); ++i) {
    const std::size_t at = slot(static_cast<std::uint32_t>(symbols[i]) - static_cast<std::uint32_t>(offset_));
    if (at >= code_length_.size() || (code_length_[at] == 0 && !one_leaf)) {
      fail("huffman: symbol " + std::to_string(symbols[i]) + " at index " + str(i) +
           " did not occur when the tree was built");
    }
    total_bits += code_length_[at];
  }
  const std::uint64_t payload = (total_bits + 7) / 8;
  w.put<std::uint64_t>(payload);
  if (payload == 0) return;

  // Codes are appended MSB-first into a 64-bit word that is stored
  // big-endian when full; the last byte is padded with zero bits (§3.2).
  const std::size_t start = w.reserve(static_cast<std::size_t>(payload));
  std::byte* out = w.bytes().data() + start;
  std::uint64_t word = 0;
  int filled = 0;
  for (const int s : symbols) {
    const std::size_t at = slot(static_cast<std::uint32_t>(s) - static_cast<std::uint32_t>(offset_));
    const int length = code_length_[at];
    const std::uint64_t code = code_[at];
    const int room = 64 - filled;
    if (length < room) {
      word |= code << (room - length);
      filled += length;
      continue;
    }
    word |= code >> (length - room);
    store_big_endian(out, word);
    out += 8;
    filled = length - room;
    word = filled == 0 ? 0 : code << (64 - filled);
  }
  for (int bit = 0; bit < filled; bit += 8) *out++ = static_cast<std::byte>(word >> (56 - bit));
}

std::size_t huffman_coder::slot(std::uint32_t state) const noexcept {
  if (sparse_states_.empty()) return state < code_length_.size() ? state : code_length_.size();
  const std::size_t mask = sparse_index_.size() - 1;
  for (std::size_t i = sparse_hash(state) & mask;; i = (i + 1) & mask) {
    const std::uint64_t e = sparse_index_[i];
    if (e == k_no_entry) return code_length_.size();
    if (static_cast<std::uint32_t>(e >> 32) == state) return static_cast<std::uint32_t>(e);
  }
}

void huffman_coder::index_sparse_states() {
  // A power of two at least twice the states: linear probing then ends
  // within a few slots, where the binary search it replaces took ~log2(n)
  // comparisons per symbol, twice per symbol in `encode`.
  std::size_t size = 16;
  while (size < 2 * sparse_states_.size()) size *= 2;
  sparse_index_.assign(size, k_no_entry);
  for (std::size_t rank = 0; rank < sparse_states_.size(); ++rank) {
    const std::uint32_t state = sparse_states_[rank];
    std::size_t i = sparse_hash(state) & (size - 1);
    while (sparse_index_[i] != k_no_entry) i = (i + 1) & (size - 1);
    sparse_index_[i] = (std::uint64_t{state} << 32) | rank;
  }
}

int huffman_coder::code_length(int symbol) const noexcept {
  const std::size_t at = slot(static_cast<std::uint32_t>(symbol) - static_cast<std::uint32_t>(offset_));
  if (at >= code_length_.size()) return -1;
  if (leaf_[0] != 0) return 0;
  return code_length_[at] == 0 ? -1 : code_length_[at];
}

// ---------------------------------------------------------------------------
// Decoder side.

void huffman_coder::load(byte_reader& r) {
  // Parse into a fresh coder so that a failure leaves this one empty
  // rather than half loaded.
  reset();
  huffman_coder fresh;
  fresh.offset_ = r.get<std::int32_t>("huffman offset");
  const std::uint32_t nodes = __builtin_bswap32(r.get<std::uint32_t>("huffman node count"));
  fresh.half_states_ =
      static_cast<std::int32_t>(__builtin_bswap32(r.get<std::uint32_t>("huffman state count")));
  if (nodes == 0) fail("huffman: tree with 0 nodes at offset " + str(r.position() - 8));
  const unsigned width = index_width(nodes);
  // Check the whole tree is present before allocating for it.
  r.need(1 + std::uint64_t{nodes} * (2 * width + sizeof(std::int32_t) + 1), "huffman tree");
  const auto order = r.get<std::uint8_t>("huffman byte-order flag");
  if (order != 0) {
    fail("huffman: byte-order flag " + std::to_string(order) + " at offset " + str(r.position() - 1) +
         " (only little-endian SZ3 streams, flag 0, are supported)");
  }
  fresh.left_ = get_indices(r, nodes, width, "huffman left children");
  fresh.right_ = get_indices(r, nodes, width, "huffman right children");
  fresh.state_ = r.get_array<std::int32_t>(nodes, "huffman node symbols");
  fresh.leaf_ = r.get_array<std::uint8_t>(nodes, "huffman leaf flags");
  fresh.validate_tree();
  fresh.build_decode_table();
  *this = std::move(fresh);
}

// Accepts exactly the trees SZ3's save can write (§3.2): from node 0 every
// node is reached once, inner nodes (flag 0, symbol 0) have two children in
// 1..n-1, leaves (flag 1) have none, and the leaf symbols are distinct with
// smallest 0 (symbols are stored relative to the smallest) and largest m
// where the stored state count is (m + 2) / 2.
void huffman_coder::validate_tree() {
  const std::size_t nodes = leaf_.size();
  std::vector<std::uint8_t> seen(nodes, 0);
  seen[0] = 1;
  std::size_t reached = 1;
  std::vector<std::pair<std::uint32_t, int>> stack{{0, 0}};
  std::vector<std::int32_t> leaf_states;
  while (!stack.empty()) {
    const auto [node, depth] = stack.back();
    stack.pop_back();
    const std::string where = "huffman tree node " + str(node);
    if (leaf_[node] == 1) {
      if (left_[node] != 0 || right_[node] != 0) fail(where + ": a leaf with children");
      leaf_states.push_back(state_[node]);
      max_depth_ = std::max(max_depth_, depth);
      continue;
    }
    if (leaf_[node] != 0) fail(where + ": leaf flag " + std::to_string(leaf_[node]) + " (0 or 1 expected)");
    if (state_[node] != 0) fail(where + ": an inner node with symbol " + std::to_string(state_[node]));
    for (const std::uint32_t child : {left_[node], right_[node]}) {
      if (child == 0 || child >= nodes) {
        fail(where + ": child index " + str(child) + " outside 1.." + str(nodes - 1));
      }
      if (seen[child] != 0)
        fail(where + ": child " + str(child) + " is reached twice (cycle or shared node)");
      seen[child] = 1;
      ++reached;
      stack.emplace_back(child, depth + 1);
    }
  }
  if (reached != nodes)
    fail("huffman tree: " + str(nodes - reached) + " of " + str(nodes) + " nodes unreachable");

  std::sort(leaf_states.begin(), leaf_states.end());
  if (leaf_states.front() != 0) {
    fail("huffman tree: smallest leaf symbol is " + std::to_string(leaf_states.front()) + ", not 0");
  }
  const auto twin = std::adjacent_find(leaf_states.begin(), leaf_states.end());
  if (twin != leaf_states.end()) fail("huffman tree: symbol " + std::to_string(*twin) + " on two leaves");
  max_state_ = leaf_states.back();
  if (half_states_ != (std::int64_t{max_state_} + 2) / 2) {
    fail("huffman tree: state count field " + std::to_string(half_states_) +
         " does not match largest symbol " + std::to_string(max_state_));
  }
  if (std::int64_t{offset_} + max_state_ > INT_MAX) {
    fail("huffman tree: offset " + std::to_string(offset_) + " + symbol " + std::to_string(max_state_) +
         " overflows");
  }
}

// Every bit string of `table_bits_` bits leads from the root either to a
// leaf (within those bits) or to an inner node at that depth; the table
// holds the answer for each, so short codes take one lookup and longer ones
// continue bit by bit from the node.
void huffman_coder::build_decode_table() {
  table_.clear();
  table_bits_ = 0;
  if (leaf_[0] != 0) return;
  table_bits_ = std::min(max_depth_, k_table_bits);
  const int k = table_bits_;
  table_.assign(std::size_t{1} << k, table_entry{0, 0, false});
  struct pending {
    std::uint32_t node;
    int depth;
    std::uint32_t code;
  };
  std::vector<pending> stack{{0, 0, 0}};
  while (!stack.empty()) {
    const pending p = stack.back();
    stack.pop_back();
    if (leaf_[p.node] != 0) {
      const std::size_t first = std::size_t{p.code} << (k - p.depth);
      const std::size_t span = std::size_t{1} << (k - p.depth);
      const table_entry e{offset_ + state_[p.node], static_cast<std::uint8_t>(p.depth), true};
      std::fill_n(table_.begin() + static_cast<std::ptrdiff_t>(first), span, e);
    } else if (p.depth == k) {
      table_[p.code] = table_entry{static_cast<std::int32_t>(p.node), static_cast<std::uint8_t>(k), false};
    } else {
      stack.push_back({left_[p.node], p.depth + 1, p.code << 1});
      stack.push_back({right_[p.node], p.depth + 1, (p.code << 1) | 1});
    }
  }
}

int huffman_coder::decode_long(std::uint32_t node, std::span<const std::byte> bits,
                               std::uint64_t& pos) const {
  const std::uint64_t total = std::uint64_t{bits.size()} * 8;
  while (leaf_[node] == 0) {
    if (pos >= total) fail("huffman: payload of " + str(bits.size()) + " bytes ends inside a code");
    const unsigned byte = std::to_integer<unsigned>(bits[static_cast<std::size_t>(pos >> 3)]);
    node = ((byte >> (7 - (pos & 7))) & 1u) != 0 ? right_[node] : left_[node];
    ++pos;
  }
  return offset_ + state_[node];
}

std::vector<int> huffman_coder::decode(byte_reader& r, std::uint64_t count) const {
  if (leaf_.empty()) fail("huffman: decode called before load");
  // Checked here as well as in decode_into, before the allocation.
  if (leaf_[0] == 0 && r.remaining() >= 8) {
    std::uint64_t length = 0;
    std::memcpy(&length, r.rest().data(), 8);
    if (length <= r.remaining() - 8 && count > length * 8) {
      fail("huffman: " + str(count) + " symbols cannot fit in a " + str(length) + "-byte payload at offset " +
           str(r.position()));
    }
  }
  std::vector<int> out(static_cast<std::size_t>(count));
  decode_into(r, out);
  return out;
}

void huffman_coder::decode_into(byte_reader& r, std::span<int> out) const {
  if (leaf_.empty()) fail("huffman: decode called before load");
  if (leaf_[0] == 0 && table_.empty()) fail("huffman: decode needs a loaded tree, not a built one");
  const std::size_t at = r.position();
  const auto length = r.get<std::uint64_t>("huffman payload length");
  const auto bits = r.get_bytes(length, "huffman payload");
  const std::uint64_t count = out.size();
  if (leaf_[0] != 0) {
    // One symbol: SZ3 codes it with 0 bits and writes an empty payload.
    if (length != 0)
      fail("huffman: one-symbol tree with a " + str(length) + "-byte payload at offset " + str(at));
    std::fill(out.begin(), out.end(), offset_ + state_[0]);
    return;
  }
  const std::uint64_t total = length * 8;  // length <= bytes in memory, no overflow
  if (count > total) {
    fail("huffman: " + str(count) + " symbols cannot fit in a " + str(length) + "-byte payload at offset " +
         str(at));
  }
  const unsigned k = static_cast<unsigned>(table_bits_);
  const table_entry* table = table_.data();
  int* dst = out.data();
  const std::size_t n = out.size();
  bit_reader in(bits);
  std::size_t i = 0;
  while (i < n) {
    // A refill leaves >= 56 bits: four lookups of <= 12 bits each.
    in.refill();
    const std::size_t stop = std::min(n, i + 4);
    while (i < stop) {
      const table_entry e = table[in.window() >> (64 - k)];
      if (!e.leaf) {
        std::uint64_t pos = in.position() + k;
        dst[i++] = decode_long(static_cast<std::uint32_t>(e.value), bits, pos);
        in.seek(pos);
        break;
      }
      dst[i++] = e.value;
      in.skip(e.length);
    }
    if (in.position() > total) {
      fail("huffman: payload of " + str(length) + " bytes at offset " + str(at) +
           " is shorter than the codes of the first " + str(i) + " symbols");
    }
  }
  const std::uint64_t pos = in.position();
  // SZ3 writes exactly the bytes its codes touch and zero-fills the last.
  if ((pos + 7) / 8 != length) {
    fail("huffman: " + str(count) + " symbols use " + str((pos + 7) / 8) + " bytes of a " + str(length) +
         "-byte payload at offset " + str(at));
  }
  if (pos % 8 != 0) {
    const unsigned last = std::to_integer<unsigned>(bits[bits.size() - 1]);
    if ((last & ((1u << (8 - pos % 8)) - 1)) != 0) {
      fail("huffman: nonzero padding bits in payload at offset " + str(at));
    }
  }
}

void huffman_coder::reset() {
  *this = huffman_coder{};
}

}  // namespace tensogram::codecs::sz3

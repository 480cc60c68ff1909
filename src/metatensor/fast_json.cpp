// simdjson fast path of header parsing (fast_json.hpp). For a safetensors
// header only simdjson's stage 1 runs (UTF-8, strings closed, no unescaped
// control characters, the structural index); `token_walk` reads that index
// against the header's grammar, so no DOM is built. Embedded documents go
// through simdjson's DOM parser, which also validates the JSON grammar,
// surrogate escapes and trailing content and bounds nesting; what it cannot
// see (a `-0`, which it reads as the integer 0 like `0`, and duplicate keys,
// which it keeps) is checked here. Everything else is left to the reference
// path (see fast_json.hpp).
#include "src/metatensor/fast_json.hpp"
#include "src/metatensor/json_dom.hpp"
#include "src/metatensor/token_walk.hpp"

#include <simdjson.h>
#include <algorithm>
#include <bit>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "tensogram/core/memory.hpp"

#include "src/metatensor/strict_json.hpp"

namespace metatensor::detail {
namespace {

namespace dom = simdjson::dom;

bool starts_with_bom(std::string_view text) noexcept {
  return text.size() >= 3 && static_cast<unsigned char>(text[0]) == 0xEF &&
         static_cast<unsigned char>(text[1]) == 0xBB && static_cast<unsigned char>(text[2]) == 0xBF;
}

// Bit i set where block[i] == c, for the 64 bytes at `block`.
std::uint64_t byte_mask(const char* block, char c) noexcept {
#if defined(__SSE2__)
  const __m128i want = _mm_set1_epi8(c);
  std::uint64_t m = 0;
  for (int i = 0; i < 4; ++i) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 16 * i));
    m |= std::uint64_t{static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, want)))} << (16 * i);
  }
  return m;
#else
  std::uint64_t m = 0;
  for (int i = 0; i < 64; ++i) m |= std::uint64_t{block[i] == c} << i;
  return m;
#endif
}

// Calls visit(block, at) for each 64-byte block of [p, end) in order, until
// it returns a pointer, which is returned (nullptr when none does). `at` is
// where the block starts in the text; `block` is `at` itself, or for a last
// block shorter than 64 bytes a copy padded with `pad`, a byte the caller's
// masks never look for, so that no mask bit lies past `end`.
template <class Visit>
const char* scan_blocks(const char* p, const char* end, char pad, Visit visit) {
  char tail[64];
  while (p < end) {
    const auto n = static_cast<std::size_t>(end - p);
    const char* block = p;
    if (n < 64) {
      std::memset(tail, pad, sizeof tail);
      std::memcpy(tail, p, n);
      block = tail;
    }
    if (const char* hit = visit(block, p)) return hit;
    p += std::min<std::size_t>(n, 64);  // never past `end`
  }
  return nullptr;
}

// True when the `-` at `hit` may start the number `-0` (or `-0.5`, `-0e1`):
// simdjson reads `-0` as the integer 0, where the reference path (nlohmann)
// keeps it a signed integer that §2 rule 7 rejects as a shape or offset. A
// `-0` inside a string after `[`, `,` or `:` is a false alarm, which only
// costs the reference path.
bool may_start_negative_zero(const char* begin, const char* end, const char* hit) noexcept {
  if (hit + 1 >= end || hit[1] != '0') return false;
  const char* q = hit;
  while (q > begin && is_json_space(q[-1])) --q;
  return q == begin || q[-1] == '[' || q[-1] == ',' || q[-1] == ':';
}

}  // namespace

// The reference path refuses these before parsing (BOM, NUL) or reads them
// differently from simdjson (-0). One pass finds both bytes 64 at a time,
// and only the bytes of a block that are NUL or `-` are looked at one by one
// (a memchr pass per byte cost ~5 % of opening a 100 MB header, issue 27).
bool needs_reference_path(std::string_view text) noexcept {
  if (starts_with_bom(text)) return true;
  const char* const begin = text.data();
  const char* const end = begin + text.size();
  // ' ' pads the last block: it is neither byte looked for.
  const char* const hit = scan_blocks(begin, end, ' ', [&](const char* block, const char* at) -> const char* {
    for (std::uint64_t m = byte_mask(block, '\0') | byte_mask(block, '-'); m != 0; m &= m - 1) {
      const char* const q = at + std::countr_zero(m);
      if (*q == '\0' || may_start_negative_zero(begin, end, q)) return q;
    }
    return nullptr;
  });
  return hit != nullptr;
}

namespace {

// The dtype name of the previous entry: files hold a few dtypes, usually in
// runs, so one comparison mostly replaces the search of the 22 names.
struct last_dtype {
  std::string name;
  safetensors::dtype type = safetensors::dtype::u8;
};

// Rules 5–7 for one tensor entry (exactly dtype, shape, data_offsets).
bool read_entry(token_walk& walk, const simdjson::internal::dom_parser_implementation& json, header_entry& e,
                std::vector<std::uint64_t>& dims, last_dtype& last, std::string& scratch) {
  if (!walk.expect('{')) return false;
  unsigned seen = 0;
  do {
    std::string_view key;
    if (!walk.string(key) || !walk.expect(':') || !undo_escapes(json, key, scratch)) return false;
    const unsigned which = key == "dtype" ? 1U : key == "shape" ? 2U : key == "data_offsets" ? 4U : 0U;
    if (which == 0 || (seen & which) != 0) return false;
    seen |= which;
    if (which == 1U) {
      std::string_view s;
      if (!walk.string(s) || !undo_escapes(json, s, scratch)) return false;
      if (s.empty() || s != last.name) {
        const auto t = safetensors::parse_dtype(s);
        if (!t) return false;
        last.name.assign(s);
        last.type = *t;
      }
      e.type = last.type;
    } else if (which == 2U) {
      // Every shape goes to one shared table (no vector per tensor).
      e.shape_at = dims.size();
      if (!walk.expect('[')) return false;
      if (!walk.expect(']')) {
        do {
          std::uint64_t d = 0;
          if (dims.size() - e.shape_at == safetensors::max_rank || !walk.uint53(d)) return false;
          dims.push_back(d);
        } while (walk.expect(','));
        if (!walk.expect(']')) return false;
      }
      e.rank = dims.size() - e.shape_at;
    } else if (!walk.expect('[') || !walk.uint53(e.begin) || !walk.expect(',') || !walk.uint53(e.end) ||
               !walk.expect(']') || e.begin > e.end) {
      return false;
    }
  } while (walk.expect(','));
  return walk.expect('}') && seen == 7U;
}

// Sorts `items` by `less` unless `ascending` says they already are (strictly,
// checked while they were read, when their text was in cache); false when two
// are equal (a duplicate key).
template <class T, class Less>
bool sort_unique(std::vector<T>& items, Less less, bool ascending) {
  if (ascending) return true;
  std::sort(items.begin(), items.end(), less);
  for (std::size_t i = 1; i < items.size(); ++i) {
    if (!less(items[i - 1], items[i])) return false;
  }
  return true;
}

}  // namespace

bool to_nlohmann(dom::element e, nlohmann::json& out) {
  switch (e.type()) {
    case dom::element_type::OBJECT: {
      out = nlohmann::json::object();
      auto& members = out.get_ref<nlohmann::json::object_t&>();
      for (const auto field : dom::object(e)) {
        // Keys usually come sorted (writers emit map order): the hint makes
        // each insertion O(1) instead of a search of long shared prefixes.
        const std::size_t before = members.size();
        const auto it = members.try_emplace(members.end(), std::string(field.key));
        if (members.size() == before || !to_nlohmann(field.value, it->second)) return false;
      }
      return true;
    }
    case dom::element_type::ARRAY: {
      out = nlohmann::json::array();
      auto& items = out.get_ref<nlohmann::json::array_t&>();
      for (const auto item : dom::array(e)) {
        if (!to_nlohmann(item, items.emplace_back())) return false;
      }
      return true;
    }
    case dom::element_type::STRING: out = std::string(e.get_string().value_unsafe()); return true;
    case dom::element_type::INT64: {
      // nlohmann reads a non-negative integer as unsigned (`-0` never gets here).
      const std::int64_t i = e.get_int64().value_unsafe();
      if (i >= 0) {
        out = static_cast<std::uint64_t>(i);
      } else {
        out = i;
      }
      return true;
    }
    case dom::element_type::UINT64: out = e.get_uint64().value_unsafe(); return true;
    case dom::element_type::DOUBLE: out = e.get_double().value_unsafe(); return true;
    case dom::element_type::BOOL: out = e.get_bool().value_unsafe(); return true;
    case dom::element_type::NULL_VALUE: out = nullptr; return true;
  }
  return false;
}

std::optional<fast_header> read_header_fast(std::span<const std::byte> image, std::uint64_t n) {
  const char* const text = reinterpret_cast<const char*>(image.data()) + 8;
  const auto len = static_cast<std::size_t>(n);
  // simdjson skips a byte-order mark; the reference path names it (§2 rule 3).
  if (starts_with_bom({text, len})) return std::nullopt;
  // Only simdjson's stage 1 runs (token_walk.hpp). The bytes after the text
  // in `image` (tensor data) serve as its read-ahead padding when there are
  // enough of them: then the text is not copied.
  const auto index = structural_index::build({text, len}, image.size() - 8);
  if (!index) return std::nullopt;
  const char* const parsed = index->text();
  const auto& json = index->json();
  token_walk walk = index->walk();

  fast_header out;
  out.storage = std::make_shared<header_storage>();
  auto& storage = *out.storage;
  // An entry takes about 20 tokens.
  const std::size_t estimate = index->tokens() / 16 + 1;
  tensogram::reserve_advised(out.entries, estimate);
  tensogram::reserve_advised(storage.dims, estimate);
  bool seen_metadata = false;
  bool names_ascending = true;  // strictly, so far
  last_dtype dtype_seen;
  std::string scratch;
  if (!walk.expect('{')) return std::nullopt;
  if (!walk.expect('}')) {
    do {
      std::string_view raw_name;
      if (!walk.string(raw_name) || !walk.expect(':')) return std::nullopt;
      if (raw_name == "__metadata__") {
        if (seen_metadata) return std::nullopt;  // duplicate key: the reference path reports it
        seen_metadata = true;
        if (walk.null()) continue;
        if (!walk.expect('{')) return std::nullopt;
        out.has_metadata = true;
        if (walk.expect('}')) continue;
        do {
          std::string_view key;
          std::string_view value;
          if (!walk.string(key) || !walk.expect(':') || !walk.string(value)) return std::nullopt;
          auto& [k, v] = out.metadata.emplace_back();
          if (!unescape(json, key, k) || !unescape(json, value, v)) return std::nullopt;
        } while (walk.expect(','));
        if (!walk.expect('}')) return std::nullopt;
        continue;
      }
      auto& e = out.entries.emplace_back();
      if (raw_name.find('\\') == std::string_view::npos) {
        // The text in the image, which the caller keeps (the parsed text may
        // be a padded copy of it).
        e.name = std::string_view(text + (raw_name.data() - parsed), raw_name.size());
      } else {
        // An escaped spelling of `__metadata__` is the metadata to the
        // reference path: it decides.
        if (!undo_escapes(json, raw_name, scratch) || raw_name == "__metadata__") return std::nullopt;
        e.name = storage.names.emplace_back(raw_name);
      }
      if (!read_entry(walk, json, e, storage.dims, dtype_seen, scratch)) return std::nullopt;
      const std::size_t count = out.entries.size();
      names_ascending = names_ascending && (count == 1 || out.entries[count - 2].name < e.name);
    } while (walk.expect(','));
    if (!walk.expect('}')) return std::nullopt;
  }
  // One value, nothing after it (§2 rule 3).
  if (!walk.done()) return std::nullopt;
  // Rule 4 for the top level and __metadata__: sorted, a duplicate is
  // adjacent. Writers usually emit names in order, so the comparison of
  // each name with the previous one (above) settles order and duplicates
  // at once; only an unsorted header pays for the sort.
  if (!sort_unique(
          out.metadata, [](const auto& a, const auto& b) { return a.first < b.first; }, false)) {
    return std::nullopt;
  }
  if (!sort_unique(
          out.entries, [](const header_entry& a, const header_entry& b) { return a.name < b.name; },
          names_ascending)) {
    return std::nullopt;
  }
  bind_shapes(out.entries, storage);
  return out;
}

std::string parse_ready_copy(std::string_view text) {
  // Below this the parser's copy costs less than the spare capacity.
  constexpr std::size_t worth_padding = 4096;
  std::string out;
  if (text.size() >= worth_padding) {
    // huge_page_capacity: whole huge pages from the first byte to the last.
    out.reserve(tensogram::huge_page_capacity(text.size() + simdjson::SIMDJSON_PADDING));
    tensogram::advise_huge_pages(out.data(), out.capacity());  // before the copy's first touch
  }
  out.assign(text);
  return out;
}

std::optional<nlohmann::json> parse_json_fast(std::string_view text) {
  if (needs_reference_path(text)) return std::nullopt;
  dom::parser parser;
  if (!allocate_advised(parser, text.size(), max_json_depth)) return std::nullopt;
  const simdjson::padded_string copy(text);
  dom::element root;
  if (parser.parse(copy).get(root) != simdjson::SUCCESS) return std::nullopt;
  nlohmann::json out;
  if (!to_nlohmann(root, out)) return std::nullopt;
  return out;
}

namespace {

// §2 rule 4 and §3.1 on a document simdjson accepted: no object holds a key
// twice and no integer exceeds 2^53 - 1 in magnitude. Writers emit keys in
// order, so comparing each key with the previous one usually settles
// duplicates; only an unsorted object pays for a sort. Recursion is bounded
// by the parser's depth limit (§8.4).
bool strict_values(dom::element e) {
  constexpr std::uint64_t limit = (std::uint64_t{1} << 53) - 1;
  switch (e.type()) {
    case dom::element_type::OBJECT: {
      const dom::object members(e);
      bool ascending = true;
      std::string_view previous;
      bool first = true;
      for (const auto field : members) {
        ascending = ascending && (first || previous < field.key);
        previous = field.key;
        first = false;
        if (!strict_values(field.value)) return false;
      }
      if (ascending) return true;
      std::vector<std::string_view> keys;
      for (const auto field : members) keys.push_back(field.key);
      return sort_unique(keys, std::less<>(), false);
    }
    case dom::element_type::ARRAY:
      for (const auto item : dom::array(e)) {
        if (!strict_values(item)) return false;
      }
      return true;
    case dom::element_type::INT64: {
      const std::int64_t i = e.get_int64().value_unsafe();
      return i >= -static_cast<std::int64_t>(limit) && i <= static_cast<std::int64_t>(limit);
    }
    case dom::element_type::UINT64: return e.get_uint64().value_unsafe() <= limit;
    default: return true;
  }
}

}  // namespace

bool allocate_advised(dom::parser& parser, std::size_t capacity, std::size_t max_depth) noexcept {
  // As `parse` would size them (it bumps tiny capacities to a minimum).
  capacity = std::max(capacity, simdjson::dom::MINIMAL_DOCUMENT_CAPACITY);
  if (parser.allocate(capacity, max_depth) != simdjson::SUCCESS) return false;
  if (parser.doc.capacity() < capacity && parser.doc.allocate(capacity) != simdjson::SUCCESS) return false;
  // simdjson sizes the three buffers from `capacity` (3.x: index
  // ROUNDUP(capacity, 64) + 9 entries of 4 bytes, tape ROUNDUP(capacity +
  // 3, 64) words, strings ROUNDUP(5 * capacity / 3 + padding, 64) bytes);
  // the advice covers no more than those lower bounds, so never memory that
  // is not theirs. Small buffers are left alone by advise_huge_pages.
  const std::size_t n = std::min(capacity, SIZE_MAX / 8);
  if (parser.implementation)
    tensogram::advise_huge_pages(parser.implementation->structural_indexes.get(), n * 4);
  tensogram::advise_huge_pages(parser.doc.tape.get(), n * 8);
  tensogram::advise_huge_pages(parser.doc.string_buf.get(), n + n / 2);
  return true;
}

std::optional<dom::element> parse_strict_dom(std::string_view text, dom::parser& parser,
                                             std::size_t readable) {
  if (needs_reference_path(text)) return std::nullopt;
  if ((parser.capacity() < text.size() || parser.max_depth() != max_json_depth) &&
      !allocate_advised(parser, text.size(), max_json_depth)) {
    return std::nullopt;
  }
  dom::element root;
  // Without room for the padding the parser copies the text into padded
  // memory; either way the document keeps its strings in the parser.
  const bool copy = readable < text.size() || readable - text.size() < simdjson::SIMDJSON_PADDING;
  if (parser.parse(text.data(), text.size(), copy).get(root) != simdjson::SUCCESS) return std::nullopt;
  if (!strict_values(root)) return std::nullopt;
  return root;
}

}  // namespace metatensor::detail

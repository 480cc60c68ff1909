// simdjson fast path of header parsing (fast_json.hpp). simdjson's DOM
// parser validates UTF-8, the JSON grammar, unescaped control characters,
// surrogate escapes and trailing content, and bounds nesting when asked;
// what it cannot see (a `-0`, which it reads as the integer 0 like `0`, and
// duplicate keys, which it keeps) is checked here. Everything else is left
// to the reference path (see fast_json.hpp).
#include "src/metatensor/fast_json.hpp"
#include "src/metatensor/json_dom.hpp"

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

bool is_json_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
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

// §2 rule 7: an integer written without sign, fraction or exponent, at most
// 2^53 - 1 (simdjson types `-0` and fractions apart, see above).
bool header_uint(dom::element v, std::uint64_t& out) noexcept {
  const auto type = v.type();
  if (type == dom::element_type::INT64) {
    const std::int64_t i = v.get_int64().value_unsafe();
    if (i < 0) return false;
    out = static_cast<std::uint64_t>(i);
  } else if (type == dom::element_type::UINT64) {
    out = v.get_uint64().value_unsafe();
  } else {
    return false;
  }
  return out <= safetensors::max_json_integer;
}

// The dtype name of the previous entry: files hold a few dtypes, usually in
// runs, so one comparison mostly replaces the search of the 22 names.
struct last_dtype {
  std::string_view name;
  safetensors::dtype type = safetensors::dtype::u8;
};

// Rules 5–7 for one tensor entry (exactly dtype, shape, data_offsets).
bool read_entry(dom::element value, header_entry& e, std::vector<std::uint64_t>& dims, last_dtype& last) {
  dom::object fields;
  if (value.get_object().get(fields) != simdjson::SUCCESS) return false;
  unsigned seen = 0;
  for (const auto field : fields) {
    if (field.key == "dtype") {
      std::string_view s;
      if ((seen & 1U) != 0 || field.value.get_string().get(s) != simdjson::SUCCESS) return false;
      if (s.empty() || s != last.name) {
        const auto t = safetensors::parse_dtype(s);
        if (!t) return false;
        last = {s, *t};
      }
      e.type = last.type;
      seen |= 1U;
    } else if (field.key == "shape") {
      dom::array shape;
      if ((seen & 2U) != 0 || field.value.get_array().get(shape) != simdjson::SUCCESS) return false;
      // Every shape goes to one shared table (no vector per tensor).
      e.shape_at = dims.size();
      for (const auto d : shape) {
        std::uint64_t v = 0;
        if (dims.size() - e.shape_at == safetensors::max_rank || !header_uint(d, v)) return false;
        dims.push_back(v);
      }
      e.rank = dims.size() - e.shape_at;
      seen |= 2U;
    } else if (field.key == "data_offsets") {
      dom::array offsets;
      if ((seen & 4U) != 0 || field.value.get_array().get(offsets) != simdjson::SUCCESS) return false;
      std::size_t i = 0;
      for (const auto o : offsets) {
        if (i == 2 || !header_uint(o, i == 0 ? e.begin : e.end)) return false;
        ++i;
      }
      if (i != 2 || e.begin > e.end) return false;
      seen |= 4U;
    } else {
      return false;
    }
  }
  return seen == 7U;
}

// A walk of the header text beside the DOM walk (simdjson keeps no text
// positions). simdjson has accepted the text, so it is valid JSON and the
// top-level members come in DOM order; the walk finds each member's text,
// which gives names as views of the text (no copy) and the entry texts in
// which a `-0` can hide, instead of a scan of the whole text (issue 27).
// Whatever the walk does not expect makes the fast path decline.
class text_walk {
 public:
  text_walk(const char* begin, const char* end) noexcept : p_(begin), end_(end) {}

  // Skips whitespace, then `c`.
  bool expect(char c) noexcept {
    skip_space();
    if (p_ == end_ || *p_ != c) return false;
    ++p_;
    return true;
  }

  // The raw text of the string that starts here (after whitespace), without
  // its quotes; nothing when there is none.
  std::optional<std::string_view> string() noexcept {
    skip_space();
    if (p_ == end_ || *p_ != '"') return std::nullopt;
    const char* const open = p_;
    const char* const close = closing_quote(open + 1, end_);
    if (close == nullptr) return std::nullopt;
    p_ = close + 1;
    return std::string_view(open + 1, static_cast<std::size_t>(close - open - 1));
  }

  // Skips `null` or an object of strings (the DOM has checked which).
  bool skip_metadata() noexcept {
    skip_space();
    if (static_cast<std::size_t>(end_ - p_) >= 4 && std::memcmp(p_, "null", 4) == 0) {
      p_ += 4;
      return true;
    }
    if (!expect('{')) return false;
    if (expect('}')) return true;
    do {
      if (!string() || !expect(':') || !string()) return false;
    } while (expect(','));
    return expect('}');
  }

  // Skips a tensor entry whose DOM value passed `read_entry`; false when its
  // text holds a `-`. Its strings are the three field names and a dtype name
  // (escaped or not, none holds a `}` or `-`), so its first `}` ends it, and
  // a `-` in it can only be the sign of a number that simdjson read as 0:
  // `-0`, which the reference path rejects (§2 rule 7).
  bool skip_entry() noexcept {
    skip_space();
    if (p_ == end_ || *p_ != '{') return false;
    const auto* close = static_cast<const char*>(std::memchr(p_, '}', static_cast<std::size_t>(end_ - p_)));
    if (close == nullptr || std::memchr(p_, '-', static_cast<std::size_t>(close - p_)) != nullptr)
      return false;
    p_ = close + 1;
    return true;
  }

 private:
  void skip_space() noexcept {
    while (p_ != end_ && is_json_space(*p_)) ++p_;
  }

  const char* p_;
  const char* end_;
};

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

// The bytes of a 64-byte block that a backslash escapes, given the block's
// backslashes: a byte is escaped when the run of backslashes right before
// it is odd. `carry` says whether the block's first byte is escaped by the
// previous block's last run, and is set to whether the next block's is.
std::uint64_t escaped_bytes(std::uint64_t backslashes, bool& carry) noexcept {
  constexpr std::uint64_t even = 0x5555555555555555U;  // bits 0, 2, 4, ...
  const std::uint64_t first = carry ? 1U : 0U;
  const std::uint64_t b = backslashes & ~first;  // an escaped backslash starts no run
  const std::uint64_t starts = b & ~(b << 1);
  // Adding a run's lowest bit to the run carries through it into the byte
  // after it: an odd run ends before a byte of the other parity than its
  // start. A run that reaches bit 63 carries out of the word instead.
  const std::uint64_t after_even = b + (starts & even);
  const std::uint64_t after_odd = b + (starts & ~even);
  // An odd run from an odd bit to bit 63 escapes the next block's first
  // byte; one from an even bit is even there (a run that began in an
  // earlier block changes no parity: its earlier part was even, or it
  // escaped this block's first byte and ended there).
  carry = after_odd < b;
  return first | (after_even & ~b & ~even) | (after_odd & ~b & even);
}

}  // namespace

const char* closing_quote(const char* p, const char* end) noexcept {
  bool carry = false;
  // NUL pads the last block: it is neither a quote nor a backslash.
  return scan_blocks(p, end, '\0', [&carry](const char* block, const char* at) -> const char* {
    const std::uint64_t quotes = byte_mask(block, '"') & ~escaped_bytes(byte_mask(block, '\\'), carry);
    return quotes != 0 ? at + std::countr_zero(quotes) : nullptr;
  });
}

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
  // simdjson refuses a NUL anywhere (in a string it is an unescaped control
  // character, elsewhere no JSON token) but skips a byte-order mark; a `-0`
  // is looked for in the entries' texts (text_walk::skip_entry).
  if (starts_with_bom({text, len})) return std::nullopt;
  dom::parser parser;
  if (!allocate_advised(parser, len, simdjson::DEFAULT_MAX_DEPTH)) return std::nullopt;
  dom::element root;
  simdjson::padded_string copy;
  simdjson::error_code err = simdjson::SUCCESS;
  if (image.size() - 8 - len >= simdjson::SIMDJSON_PADDING) {
    // The tensor data after the text is readable padding: no copy.
    err = parser.parse(text, len, /*realloc_if_needed=*/false).get(root);
  } else {
    copy = simdjson::padded_string(text, len);
    err = parser.parse(copy).get(root);
  }
  dom::object top;
  if (err != simdjson::SUCCESS || root.get_object().get(top) != simdjson::SUCCESS) return std::nullopt;
  // The DOM lives in the document's tape and strings; the structural index
  // only served the parse (4 bytes per structural character, ~18 MB for a
  // 98 MB header), so it goes before the tables below are built.
  parser.implementation.reset();

  fast_header out;
  out.storage = std::make_shared<header_storage>();
  auto& storage = *out.storage;
  const std::size_t estimate = std::min<std::size_t>(top.size(), len / 48 + 1);
  tensogram::reserve_advised(out.entries, estimate);
  tensogram::reserve_advised(storage.dims, estimate);
  text_walk walk(text, text + len);
  if (!walk.expect('{')) return std::nullopt;
  bool first = true;
  bool seen_metadata = false;
  bool names_ascending = true;  // strictly, so far
  last_dtype dtype_seen;
  std::vector<std::pair<std::string_view, std::string_view>> metadata;
  for (const auto field : top) {
    if (!first && !walk.expect(',')) return std::nullopt;
    first = false;
    const auto raw_name = walk.string();
    if (!raw_name || !walk.expect(':')) return std::nullopt;
    if (field.key == "__metadata__") {
      if (seen_metadata) return std::nullopt;  // duplicate key: the reference path reports it
      seen_metadata = true;
      if (!walk.skip_metadata()) return std::nullopt;
      if (field.value.is_null()) continue;
      dom::object md;
      if (field.value.get_object().get(md) != simdjson::SUCCESS) return std::nullopt;
      for (const auto m : md) {
        std::string_view s;
        if (m.value.get_string().get(s) != simdjson::SUCCESS) return std::nullopt;
        metadata.emplace_back(m.key, s);
      }
      out.has_metadata = true;
      continue;
    }
    auto& e = out.entries.emplace_back();
    // field.key lives in the parser, which dies here: a name written
    // without escapes is its own text, kept with the image; others are
    // copied.
    if (raw_name->find('\\') == std::string_view::npos) {
      if (raw_name->size() != field.key.size()) return std::nullopt;  // not where the walk expects
      e.name = *raw_name;
    } else {
      e.name = storage.names.emplace_back(field.key);
    }
    if (!read_entry(field.value, e, storage.dims, dtype_seen) || !walk.skip_entry()) return std::nullopt;
    const std::size_t count = out.entries.size();
    names_ascending = names_ascending && (count == 1 || out.entries[count - 2].name < e.name);
  }
  // Rule 4 for the top level and __metadata__: sorted, a duplicate is
  // adjacent. Writers usually emit names in order, so the comparison of
  // each name with the previous one (above) settles order and duplicates
  // at once; only an unsorted header pays for the sort.
  if (!sort_unique(
          metadata, [](const auto& a, const auto& b) { return a.first < b.first; }, false)) {
    return std::nullopt;
  }
  if (!sort_unique(
          out.entries, [](const header_entry& a, const header_entry& b) { return a.name < b.name; },
          names_ascending)) {
    return std::nullopt;
  }
  out.metadata.reserve(metadata.size());
  // The metadata's strings are all that is left to read, in the parser's
  // string buffer: the tape goes first, so it is not resident beside their
  // copies (a lower peak). A metatensor header carries its schema and
  // layout table as strings here, which are parsed next: copied so that
  // the parser reads them in place (tens of MB for 200 k tensors, issue 27).
  parser.doc.tape.reset();
  for (const auto& [k, v] : metadata) out.metadata.emplace_back(std::string(k), parse_ready_copy(v));
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

void reserve_strict_dom(dom::parser& parser, std::size_t capacity) noexcept {
  // A failure is left to the parse, which tries again.
  (void)allocate_advised(parser, capacity, max_json_depth);
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

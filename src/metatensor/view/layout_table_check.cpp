// §8.2 step 4 on simdjson's parse of the layout table (layout_table_check.hpp).
#include "src/metatensor/view/layout_table_check.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>
#include <string>

#include "src/metatensor/json_dom.hpp"
#include "src/metatensor/schema/layout_table.hpp"
#include "src/metatensor/token_walk.hpp"

namespace metatensor::detail {

namespace dom = simdjson::dom;

struct layout_table_dom::parsed {
  std::optional<dom::parser> own;  // when the caller gave no parser
  dom::element root;
};

layout_table_dom::layout_table_dom(std::unique_ptr<parsed> p) : parsed_(std::move(p)) {}
layout_table_dom::~layout_table_dom() = default;

std::unique_ptr<layout_table_dom> layout_table_dom::read(std::string_view text, std::size_t readable,
                                                         dom::parser* parser) {
  auto p = std::make_unique<parsed>();
  const auto root = parse_strict_dom(text, parser != nullptr ? *parser : p->own.emplace(), readable);
  if (!root) return nullptr;
  p->root = *root;
  return std::make_unique<layout_table_dom>(std::move(p));
}

namespace {

// An integer equal to `want`; a float of that value (equal under nlohmann's
// comparison) is left to `layout_entry_equals`.
bool integer_is(dom::element v, std::uint64_t want) {
  std::uint64_t u = 0;
  return v.is_uint64() && v.get_uint64().get(u) == simdjson::SUCCESS && u == want;
}

// The entry of a flat tensor (§7: kind, data, rank, align, dtype and, with a
// heap, heap) compared without allocating; false also for what only the
// nlohmann comparison can decide.
bool flat_entry_equals(dom::element entry, const tensor_layout& t, std::uint64_t alignment) {
  dom::object members;
  if (entry.get_object().get(members) != simdjson::SUCCESS) return false;
  unsigned seen = 0;  // parse_strict_dom refused duplicate keys
  for (const auto field : members) {
    const std::string_view k = field.key;
    bool ok = false;
    if (k == "kind") {
      ok = string_is(field.value, kind_name(t.kind));
    } else if (k == "data") {
      ok = string_is(field.value, t.name);
    } else if (k == "heap") {
      ok = t.has_heap && string_is(field.value, t.heap_name());
    } else if (k == "rank") {
      ok = integer_is(field.value, t.rank());
    } else if (k == "align") {
      ok = integer_is(field.value, t.primary_placement(alignment));
    } else if (k == "dtype") {
      ok = string_is(field.value, safetensors::dtype_name(t.flat_dtype));
    }
    if (!ok) return false;
    ++seen;
  }
  return seen == (t.has_heap ? 6U : 5U);
}

}  // namespace

namespace {

// A cursor over the text that consumes expected pieces.
class text_matcher {
 public:
  explicit text_matcher(std::string_view text) : rest_(text) {}
  bool take(std::string_view piece) noexcept {
    if (!rest_.starts_with(piece)) return false;
    rest_.remove_prefix(piece.size());
    return true;
  }
  bool take(std::uint64_t n) noexcept {
    char digits[20];
    const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
    return take(std::string_view(digits, static_cast<std::size_t>(end - digits)));
  }
  [[nodiscard]] bool done() const noexcept { return rest_.empty(); }

 private:
  std::string_view rest_;
};

// True when nlohmann's `dump()` writes `s` between quotes as it is: no
// quote, backslash or control character (the text is valid UTF-8, which
// `dump()` passes through).
bool dumped_verbatim(std::string_view s) noexcept {
  return std::none_of(s.begin(), s.end(),
                      [](char c) { return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20; });
}

}  // namespace

bool canonical_layout_text_equals(std::string_view text,
                                  std::span<const layout_table_dom::named_layout> tensors,
                                  std::uint64_t alignment) {
  // {"tensors":{"NAME":{"align":R,"data":"NAME","dtype":"DT","kind":"flat","rank":K},...}}
  text_matcher m(text);
  if (!m.take(R"({"tensors":{)")) return false;
  bool first = true;
  for (const auto& [name, t] : tensors) {
    if (t->kind != tensor_kind::flat || t->has_heap || !dumped_verbatim(name)) return false;
    if (!(first || m.take(",")) || !m.take("\"") || !m.take(name) || !m.take(R"(":{"align":)") ||
        !m.take(t->primary_placement(alignment)) || !m.take(R"(,"data":")") || !m.take(name) ||
        !m.take(R"(","dtype":")") || !m.take(safetensors::dtype_name(t->flat_dtype)) ||
        !m.take(R"(","kind":"flat","rank":)") || !m.take(std::uint64_t{t->rank()}) || !m.take("}")) {
      return false;
    }
    first = false;
  }
  return m.take("}}") && m.done();
}

namespace {

// The walk of a layout table and the scratch its escaped strings are undone
// into.
struct table_walk {
  token_walk tokens;
  const simdjson::internal::dom_parser_implementation& json;
  std::string scratch;

  // A string token whose value (escapes undone) is `want`.
  bool string_is(std::string_view want) {
    std::string_view s;
    return tokens.string(s) && undo_escapes(json, s, scratch) && s == want;
  }
  // An integer token equal to `want` (§2 rule 7 spelling; a float of that
  // value is the parse's to compare).
  bool integer_is(std::uint64_t want) {
    std::uint64_t v = 0;
    return tokens.uint53(v) && v == want;
  }
};

// The entry of flat tensor `t` (§7: kind, data, rank, align, dtype and, with a
// heap, heap), each member once, in any order.
bool flat_entry_tokens_equal(table_walk& w, const tensor_layout& t, std::uint64_t alignment) {
  static constexpr std::array<std::string_view, 6> members{"kind", "data", "heap", "rank", "align", "dtype"};
  auto& tokens = w.tokens;
  if (!tokens.expect('{')) return false;
  unsigned seen = 0;
  do {
    std::string_view k;
    if (!tokens.string(k) || !tokens.expect(':') || !undo_escapes(w.json, k, w.scratch)) return false;
    const auto at = std::find(members.begin(), members.end(), k);
    const auto bit = 1U << static_cast<unsigned>(at - members.begin());
    if (at == members.end() || (seen & bit) != 0) return false;
    seen |= bit;
    bool ok = false;
    switch (at - members.begin()) {
      case 0: ok = w.string_is(kind_name(t.kind)); break;
      case 1: ok = w.string_is(t.name); break;
      case 2: ok = t.has_heap && w.string_is(t.heap_name()); break;
      case 3: ok = w.integer_is(t.rank()); break;
      case 4: ok = w.integer_is(t.primary_placement(alignment)); break;
      default: ok = w.string_is(safetensors::dtype_name(t.flat_dtype)); break;
    }
    if (!ok) return false;
  } while (tokens.expect(','));
  return tokens.expect('}') && seen == (t.has_heap ? 0x3FU : 0x3BU);
}

}  // namespace

bool flat_layout_tokens_equal(std::string_view text, std::size_t readable,
                              std::span<const layout_table_dom::named_layout> tensors,
                              std::uint64_t alignment) {
  if (std::any_of(tensors.begin(), tensors.end(),
                  [](const auto& named) { return named.second->kind != tensor_kind::flat; })) {
    return false;
  }
  const auto index = structural_index::build(text, std::max(readable, text.size()));
  if (!index) return false;
  table_walk w{index->walk(), index->json(), {}};
  auto& tokens = w.tokens;
  if (!tokens.expect('{') || !w.string_is("tensors") || !tokens.expect(':') || !tokens.expect('{'))
    return false;
  // The table's keys in the order of `tensors` (byte order): a key out of
  // order or repeated is a mismatch, which the parse then judges.
  bool first = true;
  for (const auto& [name, t] : tensors) {
    if ((!first && !tokens.expect(',')) || !w.string_is(name) || !tokens.expect(':') ||
        !flat_entry_tokens_equal(w, *t, alignment)) {
      return false;
    }
    first = false;
  }
  return tokens.expect('}') && tokens.expect('}') && tokens.done();
}

bool layout_table_dom::equals(std::span<const named_layout> tensors, std::uint64_t alignment) const {
  dom::object top;
  if (parsed_->root.get_object().get(top) != simdjson::SUCCESS || top.size() != 1) return false;
  dom::object table;
  if (top.at_key("tensors").get_object().get(table) != simdjson::SUCCESS) return false;
  std::size_t i = 0;
  for (const auto field : table) {
    if (i == tensors.size() || field.key != tensors[i].first) return false;
    const tensor_layout& t = *tensors[i].second;
    if (t.kind != tensor_kind::flat || !flat_entry_equals(field.value, t, alignment)) {
      // Records, blobs and unusual spellings: the nlohmann comparison.
      nlohmann::json entry;
      if (!to_nlohmann(field.value, entry) || !layout_entry_equals(entry, t, alignment)) return false;
    }
    ++i;
  }
  return i == tensors.size();
}

}  // namespace metatensor::detail

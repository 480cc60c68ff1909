// §8.2 step 4 on simdjson's parse of the layout table (layout_table_check.hpp).
#include "src/metatensor/view/layout_table_check.hpp"

#include <algorithm>
#include <charconv>
#include <optional>

#include "src/metatensor/json_dom.hpp"
#include "src/metatensor/schema/layout_table.hpp"

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

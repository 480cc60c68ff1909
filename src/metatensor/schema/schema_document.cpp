#include "schema_document.hpp"

#include <algorithm>
#include <optional>
#include <utility>

#include "json_pointer.hpp"
#include "metatensor/layout.hpp"
#include "src/metatensor/text.hpp"

namespace metatensor::detail {

namespace {

constexpr std::array<std::string_view, schema_keyword_count> keyword_names = {
    "$defs", "properties", "items", "prefixItems", "allOf", "anyOf",
    "oneOf", "not",        "if",    "then",        "else",  "contains"};

bool carries_id(const nlohmann::json& value) {
  return value.is_object() && value.contains("$id");
}

}  // namespace

std::string_view keyword_name(schema_keyword k) noexcept {
  return keyword_names[static_cast<std::size_t>(k)];
}

schema_document::schema_document(const nlohmann::json& document) : root_(&document) {
  read();
}

schema_document::schema_document(std::shared_ptr<const nlohmann::json> document)
    : owned_(std::move(document)), root_(owned_.get()) {
  read();
}

std::span<const std::size_t> schema_document::children(std::size_t n, schema_keyword k) const noexcept {
  const auto& first = nodes_[n].first;
  const auto i = static_cast<std::size_t>(k);
  return {children_.data() + first[i], first[i + 1] - first[i]};
}

std::size_t schema_document::find(const nlohmann::json* value) const noexcept {
  const auto it = by_address_.find(value);
  return it == by_address_.end() ? npos : it->second;
}

std::vector<std::size_t> schema_document::nodes_with_id(const std::string& id,
                                                        std::size_t max_generation) const {
  std::vector<std::size_t> out;
  if (const auto it = ids_.find(id); it != ids_.end()) {
    std::copy_if(it->second.begin(), it->second.end(), std::back_inserter(out),
                 [&](std::size_t n) { return nodes_[n].generation <= max_generation; });
  }
  return out;
}

// The tree first, then the references of each generation, which may add the
// next generation's nodes (see the file comment of schema_document.hpp).
void schema_document::read() {
  add(*root_, "", 1, 0, false);
  std::size_t expanded = 0;
  std::size_t resolved = 0;
  while (true) {
    while (expanded < nodes_.size()) add_children(expanded++);
    if (resolved == references_.size()) break;
    const std::size_t batch_end = references_.size();
    while (resolved < batch_end) resolve(resolved++);
  }
}

std::size_t schema_document::add(const nlohmann::json& value, std::string pointer, std::size_t level,
                                 std::size_t generation, bool embedded) {
  if (const std::size_t known = find(&value); known != npos) return known;
  const std::size_t n = nodes_.size();
  node& added = nodes_.emplace_back();
  added.value = &value;
  added.pointer = std::move(pointer);
  added.level = level;
  added.generation = generation;
  added.embedded = embedded;
  by_address_.emplace(&value, n);
  if (value.is_object()) {
    if (const auto id = value.find("$id"); id != value.end() && id->is_string()) {
      ids_[id->get<std::string>()].push_back(n);
    }
    if (const auto ref = value.find("$ref"); ref != value.end() && ref->is_string()) {
      added.reference = references_.size();
      references_.push_back({n, &ref->get_ref<const std::string&>()});
    }
  }
  return n;
}

void schema_document::add_children(std::size_t n) {
  const nlohmann::json& value = *nodes_[n].value;
  const bool followed = value.is_object() && nodes_[n].level <= max_schema_depth;
  for (std::size_t k = 0; k < schema_keyword_count; ++k) {
    nodes_[n].first[k] = children_.size();
    if (!followed) continue;
    const auto it = value.find(std::string(keyword_names[k]));
    if (it == value.end()) continue;
    std::string base = nodes_[n].pointer;
    append_pointer_token(base, keyword_names[k]);
    // A member or element of the keyword's value (`token`), or the value itself.
    auto child = [&](const nlohmann::json& sub, std::optional<std::string_view> token) {
      std::string pointer = base;
      if (token) append_pointer_token(pointer, *token);
      const node& parent = nodes_[n];
      const std::size_t c = add(sub, std::move(pointer), parent.level + 1, parent.generation,
                                parent.embedded || carries_id(sub));
      children_.push_back(c);
    };
    switch (static_cast<schema_keyword>(k)) {
      case schema_keyword::defs:
      case schema_keyword::properties:
        if (it->is_object()) {
          for (auto p = it->begin(); p != it->end(); ++p) child(p.value(), p.key());
        }
        break;
      case schema_keyword::prefix_items:
      case schema_keyword::all_of:
      case schema_keyword::any_of:
      case schema_keyword::one_of:
        if (it->is_array()) {
          for (std::size_t i = 0; i < it->size(); ++i) child((*it)[i], std::to_string(i));
        }
        break;
      case schema_keyword::items:
        if (!it->is_array()) child(*it, std::nullopt);
        break;
      default: child(*it, std::nullopt); break;
    }
  }
  nodes_[n].first[schema_keyword_count] = children_.size();
}

// `add` may grow `references_`: the reference is written back by index.
void schema_document::resolve(std::size_t i) {
  const std::string& text = *references_[i].text;
  const std::size_t generation = nodes_[references_[i].source].generation;
  auto fail = [&](reference_status why) { references_[i].status = why; };
  if (!references_[i].is_fragment()) {
    const auto matches = nodes_with_id(text, generation);
    if (matches.empty()) return fail(reference_status::unknown_id);
    if (matches.size() > 1) return fail(reference_status::ambiguous_id);
    references_[i].target = matches.front();
    return;
  }
  const auto fragment = percent_decode_fragment(std::string_view(text).substr(1));
  if (!fragment) return fail(reference_status::bad_escape);
  if (!fragment->empty() && fragment->front() != '/') return fail(reference_status::anchor);
  const auto tokens = pointer_tokens(*fragment);
  if (!tokens) return fail(reference_status::not_a_pointer);
  const auto path = pointer_path(*root_, *tokens);
  if (!path) return fail(reference_status::dangling);
  const nlohmann::json& target = path->empty() ? *root_ : *path->back();
  std::string pointer;
  for (const std::string& token : *tokens) append_pointer_token(pointer, token);
  const bool embedded =
      std::any_of(path->begin(), path->end(), [](const nlohmann::json* v) { return carries_id(*v); });
  const std::size_t level = std::max<std::size_t>(1, tokens->size() / 2 + 1);
  const std::size_t t = add(target, std::move(pointer), level, generation + 1, embedded);
  references_[i].target = t;
}

}  // namespace metatensor::detail

// Header schemas (metatensor/header_schema.hpp; docs/metatensor.md "Header
// schemas", an extension of spec 06): the safetensors header grouped by
// dotted tensor names, validated by the JSON Schema evaluator.
#include "metatensor/header_schema.hpp"

#include <map>
#include <string>
#include <utility>

#include "json_pointer.hpp"
#include "metatensor/file.hpp"
#include "metatensor/layout.hpp"
#include "src/metatensor/strict_json.hpp"
#include "src/metatensor/text.hpp"
#include "tensogram/core/buffer.hpp"
#include "tensogram/core/error.hpp"

namespace metatensor {

namespace {

using json = nlohmann::json;

// §3.3: padding tensors exist only to align the next tensor; a header schema
// describes the tensors a user wrote.
constexpr std::string_view padding_prefix = "__pad__";

bool is_metatensor(const safetensors::file& f) {
  return f.metadata().count("metatensor.version") != 0;
}

// "conv1.weight" -> {"conv1", "weight"}; every segment is a member name
// (possibly empty: "a..b" has three).
std::vector<std::string> split_dotted(std::string_view name) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = name.find('.', start);
    out.emplace_back(
        name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) return out;
    start = dot + 1;
  }
}

std::string join_dotted(const std::vector<std::string>& tokens, std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) {
    if (i != 0) out += '.';
    out += tokens[i];
  }
  return out;
}

json tensor_entry(const safetensors::tensor_view& t) {
  json shape = json::array();
  for (const std::uint64_t d : t.shape()) shape.push_back(d);
  return {{"dtype", std::string(safetensors::dtype_name(t.type()))},
          {"shape", std::move(shape)},
          {"data_offsets", json::array({t.begin(), t.end()})}};
}

}  // namespace

// ---------------------------------------------------------------------------
// The grouping.

struct tensor_group::node {
  std::string name;                                  // dotted
  const safetensors::tensor_view* tensor = nullptr;  // a leaf
  std::map<std::string, node, std::less<>> members;
};

tensor_group group_tensors(const safetensors::file& f) {
  auto root = std::make_shared<tensor_group::node>();
  const bool skip_padding = is_metatensor(f);
  for (const safetensors::tensor_view& t : f.tensors()) {
    if (skip_padding && t.name().starts_with(padding_prefix)) continue;
    const std::vector<std::string> tokens = split_dotted(t.name());
    tensor_group::node* at = root.get();
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      if (at->tensor != nullptr) {
        throw error(errc::mt_header_schema, "tensor " + detail::quoted(at->name) + " is also the group of " +
                                                detail::quoted(t.name()) + " (dotted names nest)");
      }
      auto [it, added] = at->members.try_emplace(tokens[i]);
      if (added) it->second.name = join_dotted(tokens, i + 1);
      at = &it->second;
    }
    if (at->tensor != nullptr || !at->members.empty()) {
      throw error(errc::mt_header_schema, "tensor " + detail::quoted(t.name()) +
                                              " is also a group of other tensors (dotted names nest)");
    }
    at->tensor = &t;
  }
  const tensor_group::node* top = root.get();
  return tensor_group(std::move(root), top);
}

const std::string& tensor_group::name() const noexcept {
  return at_->name;
}

bool tensor_group::is_tensor() const noexcept {
  return at_->tensor != nullptr;
}

bool tensor_group::contains(std::string_view member) const noexcept {
  return at_->members.find(member) != at_->members.end();
}

std::vector<std::string> tensor_group::members() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : at_->members) out.push_back(k);
  return out;
}

tensor_group tensor_group::operator[](std::string_view member) const {
  const auto it = at_->members.find(member);
  if (it == at_->members.end()) {
    const std::string dotted =
        at_->name.empty() ? std::string(member) : at_->name + "." + std::string(member);
    throw tensogram::invalid_arg_error("no tensor or group " + detail::quoted(dotted) + " in the file");
  }
  return tensor_group(root_, &it->second);
}

const safetensors::tensor_view& tensor_group::tensor() const {
  if (at_->tensor == nullptr) {
    throw tensogram::invalid_arg_error(
        (at_->name.empty() ? std::string("the root") : detail::quoted(at_->name)) +
        " is a group of tensors, not a tensor");
  }
  return *at_->tensor;
}

std::vector<const safetensors::tensor_view*> tensor_group::tensors() const {
  std::vector<const safetensors::tensor_view*> out;
  auto collect = [&](const auto& self, const node& n) -> void {
    if (n.tensor != nullptr) out.push_back(n.tensor);
    for (const auto& [k, sub] : n.members) self(self, sub);
  };
  collect(collect, *at_);
  return out;
}

json grouped_header(const safetensors::file& f) {
  const tensor_group root = group_tensors(f);
  auto build = [](const auto& self, const tensor_group& g) -> json {
    if (g.is_tensor()) return tensor_entry(g.tensor());
    json out = json::object();
    for (const std::string& m : g.members()) out[m] = self(self, g[m]);
    return out;
  };
  return build(build, root);
}

// ---------------------------------------------------------------------------
// The schema.

struct header_schema::impl {
  explicit impl(json doc) : document(normalize_builder_schema(std::move(doc))), evaluator(document) {}
  json document;
  json_schema_evaluator evaluator;  // refers to `document`, which never moves (impl is heap-held)
};

header_schema::header_schema(nlohmann::json document)
    : impl_(std::make_shared<const impl>(std::move(document))) {}

header_schema header_schema::from_text(std::string_view text) {
  return header_schema(
      parse_strict_json(text, json_errors{errc::mt_schema_json, errc::mt_schema_json, "header schema"}));
}

header_schema header_schema::open(const std::filesystem::path& path) {
  const tensogram::buffer image = tensogram::buffer::map_file(path);
  const auto bytes = image.bytes();
  try {
    return from_text(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  } catch (const error& e) {
    throw e.with_context(path.string());
  }
}

const nlohmann::json& header_schema::document() const noexcept {
  return impl_->document;
}

std::optional<schema_violation> header_schema::check(const nlohmann::json& grouped) const {
  return impl_->evaluator.validate(grouped);
}

// ---------------------------------------------------------------------------
// Validation.

tensor_group validate_header(const safetensors::file& f, const header_schema& schema) {
  tensor_group root = group_tensors(f);
  const auto violation = schema.check(grouped_header(f));
  if (!violation) return root;
  // Name what failed by its dotted name: follow the pointer down the groups
  // until it reaches a tensor (the rest of the pointer is inside its entry).
  const auto tokens = detail::pointer_tokens(violation->pointer).value_or(std::vector<std::string>{});
  tensor_group at = root;
  for (const std::string& token : tokens) {
    if (at.is_tensor() || !at.contains(token)) break;
    at = at[token];
  }
  std::string subject;
  if (violation->keyword == "required" && !at.is_tensor()) {
    const std::string dotted = at.name().empty() ? violation->member : at.name() + "." + violation->member;
    subject = detail::quoted(dotted) + " is missing";
  } else if (at.is_tensor()) {
    subject = "tensor " + detail::quoted(at.name());
  } else if (!at.name().empty()) {
    subject = "group " + detail::quoted(at.name());
  } else {
    subject = "the header";
  }
  const std::string where = violation->pointer.empty() ? std::string("/") : violation->pointer;
  throw error(errc::mt_header_schema, subject + " (" + where + "): " + violation->message);
}

tensor_group validate_header(const file& f, const header_schema& schema) {
  return validate_header(f.base(), schema);
}

}  // namespace metatensor

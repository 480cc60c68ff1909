// The layout types of spec 06 §5–§6 (metatensor/layout.hpp): sizes,
// alignments and placement of compiled tensors, and the compiled schema.
#include <algorithm>
#include <string>

#include "layout_compiler.hpp"
#include "metatensor/layout.hpp"
#include "schema_document.hpp"
#include "schema_fast_path.hpp"
#include "src/metatensor/text.hpp"
#include "tensogram/core/error.hpp"

namespace metatensor {

std::string_view kind_name(tensor_kind k) noexcept {
  switch (k) {
    case tensor_kind::flat: return "flat";
    case tensor_kind::record: return "struct";
    case tensor_kind::blob: return "blob";
  }
  return "flat";
}

std::uint64_t type_layout::element_size() const noexcept {
  switch (type) {
    case value_type::scalar: return safetensors::dtype_bits(scalar) / 8;
    case value_type::record: return record ? record->size : 0;
    case value_type::string:
    case value_type::list: return 16;
  }
  return 0;
}

bool type_layout::has_blobs() const noexcept {
  switch (type) {
    case value_type::scalar: return false;
    case value_type::record: return record && record->has_blobs();
    case value_type::string:
    case value_type::list: return true;
  }
  return false;
}

const field_layout* record_layout::find(std::string_view name) const noexcept {
  for (const auto& f : fields) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

bool record_layout::has_blobs() const noexcept {
  return std::any_of(fields.begin(), fields.end(), [](const field_layout& f) { return f.type.has_blobs(); });
}

std::string tensor_layout::heap_name() const {
  return name + "#heap";
}

dtype tensor_layout::primary_dtype() const noexcept {
  return kind == tensor_kind::flat ? flat_dtype : dtype::u8;
}

std::optional<std::uint64_t> tensor_layout::trailing_dim() const noexcept {
  switch (kind) {
    case tensor_kind::flat: return std::nullopt;
    case tensor_kind::record: return record ? record->size : 0;
    case tensor_kind::blob: return 16;
  }
  return std::nullopt;
}

std::uint64_t tensor_layout::primary_element_align() const noexcept {
  switch (kind) {
    case tensor_kind::flat: return safetensors::dtype_alignment(flat_dtype);
    case tensor_kind::record: return record ? record->align : 1;
    case tensor_kind::blob: return 8;  // BlobRef index
  }
  return 1;
}

namespace {
// §6.5: the largest align(E) over the List types reachable from a type.
// The expanded tree is bounded by the field limit checked at compile time.
std::uint64_t list_align(const type_layout& t) noexcept {
  switch (t.type) {
    case value_type::list: return t.elem ? t.elem->align : 1;
    case value_type::record: {
      std::uint64_t a = 1;
      if (t.record) {
        for (const auto& f : t.record->fields) a = std::max(a, list_align(f.type));
      }
      return a;
    }
    default: return 1;
  }
}
}  // namespace

std::uint64_t tensor_layout::heap_element_align() const noexcept {
  switch (kind) {
    case tensor_kind::flat: return 1;
    case tensor_kind::record: {
      std::uint64_t a = 1;
      if (record) {
        for (const auto& f : record->fields) a = std::max(a, list_align(f.type));
      }
      return a;
    }
    case tensor_kind::blob: return list_align(item);
  }
  return 1;
}

std::uint64_t tensor_layout::primary_placement(std::uint64_t file_alignment) const noexcept {
  return std::max({file_alignment, primary_element_align(), root_align});
}

std::uint64_t tensor_layout::heap_placement(std::uint64_t file_alignment) const noexcept {
  return std::max({file_alignment, heap_element_align(), root_align});
}

std::string tensor_layout::node_pointer(std::size_t level) const {
  if (level > rank()) {
    throw tensogram::invalid_arg_error("tensor " + detail::quoted(name) + " has rank " +
                                       std::to_string(rank()) + ", no schema node at level " +
                                       std::to_string(level));
  }
  if (!node_pointers.empty()) return node_pointers[level];
  std::string out = "/properties";
  out.reserve(out.size() + name.size() + 1 + 6 * level);
  detail::append_pointer_token(out, name);
  for (std::size_t i = 0; i < level; ++i) out += "/items";
  return out;
}

const tensor_layout* compiled_schema::find(std::string_view name) const noexcept {
  return detail::find_layout(std::span<const tensor_layout>(tensors_), name);
}

const std::shared_ptr<const detail::schema_document>& compiled_schema::document_table() const {
  return deferred_ ? deferred_->table() : table_;
}

const std::vector<std::size_t>& compiled_schema::ref_targets() const {
  return deferred_ ? deferred_->ref_targets() : ref_targets_;
}

const nlohmann::json& compiled_schema::document() const {
  // A default-constructed schema has no document: it reads as JSON null.
  static const nlohmann::json no_document;
  const auto& table = document_table();
  return table ? table->root() : no_document;
}

const nlohmann::json& compiled_schema::property_schema(std::string_view name) const {
  if (find(name) == nullptr) {
    throw tensogram::invalid_arg_error("schema has no root property " + detail::quoted(name));
  }
  // Follows the `$ref` chain of the root property (finite: the dialect check
  // rejected cycles).
  const auto& table = *document_table();
  const auto& targets = ref_targets();
  std::size_t n = table.find(&table.root().at("properties").at(std::string(name)));
  while (targets[n] != detail::schema_document::npos) n = targets[n];
  return *table.at(n).value;
}

}  // namespace metatensor

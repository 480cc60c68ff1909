// The metatensor schema dialect and the layout it implies (spec 06 §4–§7).
//
// `compile_schema` checks a schema document against the dialect (§4) and
// turns every root property into a `tensor_layout` (§5 kinds and physical
// tensors, §6 record layout and placement alignment). The result does not
// depend on any data: dimension lengths come from the file header, so the
// same compiled schema serves every file written with it.
//
// `layout_table_json` renders the §7 layout table for the logical tensors
// present in a file; a validating reader compares it with the file's own
// `metatensor.layout` as JSON values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "metatensor/error.hpp"
#include "metatensor/safetensors.hpp"

namespace metatensor {

using safetensors::dtype;

/// The `$schema` value a schema may declare (§4.1).
inline constexpr std::string_view schema_dialect_uri = "https://json-schema.org/draft/2020-12/schema";

/// §8.4 limits (MT_LIMIT above them).
inline constexpr std::size_t max_schema_depth = 64;
inline constexpr std::uint64_t max_record_size = std::uint64_t{1} << 24;
inline constexpr std::size_t max_record_fields = 65'536;
inline constexpr std::size_t max_logical_tensors = std::size_t{1} << 20;

/// What a field, fixed array element or List element holds (§7 `type`).
enum class value_type : std::uint8_t {
  scalar,  ///< a safetensors dtype (never sub-byte inside records)
  record,  ///< a struct or a tuple (§4.5: fields "0", "1", ...)
  string,  ///< a BlobRef to UTF-8 text (§6.4)
  list,    ///< a BlobRef to packed elements of a fixed-size type (§6.4)
};

struct record_layout;

/// A type as it appears in a record or as a List element (§6.1): the element
/// type plus the fixed-array dimensions around it. `size`/`align` are those
/// of the whole fixed array (`product(shape) * element size`).
struct type_layout {
  value_type type = value_type::scalar;
  dtype scalar = dtype::u8;                     ///< when `type == scalar`
  std::vector<std::uint64_t> shape;             ///< fixed-array dims, [] for none
  std::shared_ptr<const record_layout> record;  ///< when `type == record`
  std::shared_ptr<const type_layout> elem;      ///< when `type == list`: the element (never string/list)
  std::uint64_t size = 0;                       ///< bytes (a BlobRef is 16)
  std::uint64_t align = 1;                      ///< bytes (a BlobRef is 8)
  /// JSON Pointer of the schema node that declares this type (after `$ref`),
  /// for diagnostics such as MT_SCHEMA_INCOMPATIBLE.
  std::string pointer;

  /// Size of one element, without the fixed-array dimensions.
  [[nodiscard]] std::uint64_t element_size() const noexcept;
  /// True when a String or List occurs anywhere inside (heap needed, §5.1).
  [[nodiscard]] bool has_blobs() const noexcept;
};

/// One field of a record (§6.2, §7 `field`).
struct field_layout {
  std::string name;
  std::uint64_t offset = 0;  ///< from the start of the record
  type_layout type;
  /// The field schema's `default` annotation, if any (schema evolution §11.3:
  /// a field added with a default is view-compatible).
  std::optional<nlohmann::json> default_value;
  /// JSON Pointer of the field's schema node (before `$ref`), e.g.
  /// "/$defs/Particle/properties/mass", for diagnostics.
  std::string pointer;
};

/// A record (struct or tuple) laid out by the C rule of §6.2.
struct record_layout {
  std::uint64_t size = 0;
  std::uint64_t align = 1;
  std::vector<field_layout> fields;  ///< in `required` (or `prefixItems`) order
  bool tuple = false;                ///< declared with `prefixItems`

  /// The field called `name`, or nullptr.
  [[nodiscard]] const field_layout* find(std::string_view name) const noexcept;
  /// True when a String or List occurs anywhere inside.
  [[nodiscard]] bool has_blobs() const noexcept;
};

/// Logical tensor kinds (§5.1; layout table `kind`).
enum class tensor_kind : std::uint8_t { flat, record, blob };

/// `"flat"`, `"struct"`, `"blob"`.
[[nodiscard]] std::string_view kind_name(tensor_kind k) noexcept;

/// Length constraints of one dimension from `minItems`/`maxItems` (§5.1).
/// (Its schema node: `tensor_layout::node_pointer`.)
struct dimension_bounds {
  std::uint64_t min = 0;
  std::optional<std::uint64_t> max;
};

/// One logical tensor: a root property of the schema (§5, §6.5, §7).
struct tensor_layout {
  std::string name;  ///< the root property; also the primary physical tensor
  tensor_kind kind = tensor_kind::flat;
  std::vector<dimension_bounds> dims;           ///< one per logical dimension; rank = dims.size()
  dtype flat_dtype = dtype::u8;                 ///< flat: the dtype of the primary tensor
  std::shared_ptr<const record_layout> record;  ///< struct: the record
  type_layout item;                             ///< blob: a string or list (`size` 16, `align` 8)
  bool has_heap = false;                        ///< a `<name>#heap` physical tensor exists
  std::uint64_t root_align = 1;                 ///< `TypeDef:Align` on the root property, else 1
  bool required = false;                        ///< listed in the root `required` (§4.6)
  /// The JSON Pointers `node_pointer` returns when a `$ref` leads away from
  /// `/properties/<name>/items/...`: rank + 1 of them. Empty in the usual
  /// case, where they are built on demand (a header may declare 200 k
  /// tensors, and opening reads no pointer: issue 27).
  std::vector<std::string> node_pointers;

  /// JSON Pointer of the schema node (after `$ref`s) of dimension `level`
  /// for `level < rank()`, of the element for `level == rank()` (§5.1); for
  /// diagnostics.
  [[nodiscard]] std::string node_pointer(std::size_t level) const;
  /// `node_pointer(rank())`.
  [[nodiscard]] std::string element_pointer() const { return node_pointer(rank()); }

  [[nodiscard]] std::size_t rank() const noexcept { return dims.size(); }
  /// `<name>#heap` (meaningful when `has_heap`).
  [[nodiscard]] std::string heap_name() const;
  /// The primary physical tensor's dtype (§5.1 table).
  [[nodiscard]] dtype primary_dtype() const noexcept;
  /// The trailing dimension the primary tensor adds to the logical dims:
  /// record size (struct), 16 (blob), none (flat).
  [[nodiscard]] std::optional<std::uint64_t> trailing_dim() const noexcept;
  /// Element alignment `ea` of the primary and the heap (§6.5).
  [[nodiscard]] std::uint64_t primary_element_align() const noexcept;
  [[nodiscard]] std::uint64_t heap_element_align() const noexcept;
  /// `R(t) = max(A, ea(t), root_align)` for the primary / the heap (§6.5).
  [[nodiscard]] std::uint64_t primary_placement(std::uint64_t file_alignment) const noexcept;
  [[nodiscard]] std::uint64_t heap_placement(std::uint64_t file_alignment) const noexcept;
};

/// Where a schema comes from, which decides whether builder forms are read.
enum class schema_source : std::uint8_t {
  /// Written by a user or a schema builder (TypeBox): the builder forms of
  /// `normalize_builder_schema` are rewritten first, and the compiled
  /// schema's `document()` is the rewritten 2020-12 document (what a writer
  /// embeds, §4.3 "Normalisation").
  authored,
  /// A file's `metatensor.schema`: the dialect of §4 exactly (a draft-07
  /// tuple is MT_SCHEMA_DIALECT), so that every reader agrees on which files
  /// are valid (§12).
  embedded,
};

namespace detail {
class schema_document;
class deferred_document;
struct schema_fast_path;
}  // namespace detail

/// A schema checked against the dialect of §4 and compiled by §5–§6. Cheap
/// to copy (copies share the document).
class compiled_schema {
 public:
  /// The schema document as parsed (JSON null for a default-constructed one).
  /// A file's schema compiled by the fast path of `file::open` is parsed
  /// into this value on the first call (of this or `document_table`).
  [[nodiscard]] const nlohmann::json& document() const;
  /// Logical tensors (every root property), sorted by name byte-wise. One
  /// contiguous table, not a tree: a file's schema may have 2^20 of them
  /// (§8.4), and opening builds this table for every file (issue 27).
  [[nodiscard]] std::span<const tensor_layout> tensors() const noexcept { return tensors_; }
  /// The tensor called `name`, or nullptr (a binary search).
  [[nodiscard]] const tensor_layout* find(std::string_view name) const noexcept;
  /// True when `name` is listed in the root `required` (`tensor_layout::required`).
  [[nodiscard]] bool is_required(std::string_view name) const noexcept {
    const tensor_layout* t = find(name);
    return t != nullptr && t->required;
  }
  /// The root property's schema node with `$ref`s resolved down to the node
  /// that carries the element or dimension structure (for diagnostics and
  /// deep validation: the unresolved node is `document()["properties"][name]`).
  [[nodiscard]] const nlohmann::json& property_schema(std::string_view name) const;
  /// The document read once into a table of schema locations, `$id`s and
  /// resolved `$ref`s, which the JSON Schema evaluator and deep validation
  /// share with the compiler (a library internal:
  /// src/metatensor/schema/schema_document.hpp). Null for a
  /// default-constructed schema.
  [[nodiscard]] const std::shared_ptr<const detail::schema_document>& document_table() const;

 private:
  friend compiled_schema compile_schema(nlohmann::json document, schema_source source);
  friend struct detail::schema_fast_path;
  [[nodiscard]] const std::vector<std::size_t>& ref_targets() const;

  std::shared_ptr<const detail::schema_document> table_;
  std::vector<std::size_t> ref_targets_;  // the compiler's `$ref` target per node of the table
  // Set instead of the two above by the fast path (schema_fast_path.hpp),
  // which builds them on first use.
  std::shared_ptr<detail::deferred_document> deferred_;
  std::vector<tensor_layout> tensors_;  // sorted by name
};

/// Rewrites the forms schema builders such as TypeBox emit into the dialect
/// of §4 (docs/metatensor.md, "Schemas from TypeBox"): a draft-07 tuple
/// (`"items": [...]` with `additionalItems`) becomes `prefixItems` plus
/// `items`, and a root that is a bare `$ref` (TypeBox `Type.Module(...)
/// .Import("X")`, `{"$defs": {...}, "$ref": "X"}`) takes the members of the
/// schema it designates. Everything else is returned unchanged; nothing is
/// judged here (compile the result to check it).
[[nodiscard]] nlohmann::json normalize_builder_schema(nlohmann::json document);

/// Checks `document` against §4 (dialect, `TypeDef:` keywords, `$ref` rules,
/// §4.6 root) and computes every tensor's layout (§5, §6.1–§6.5). Throws
/// `metatensor::error` with MT_SCHEMA_DIALECT, MT_UNKNOWN_TYPEDEF,
/// MT_SCHEMA_TYPE, MT_SCHEMA_NAME, MT_SCHEMA_UNSUPPORTED or MT_LIMIT; the
/// message names the JSON Pointer of the offending node (in the rewritten
/// document, for an authored schema).
[[nodiscard]] compiled_schema compile_schema(nlohmann::json document,
                                             schema_source source = schema_source::authored);

/// Parses schema text strictly (§3.1: UTF-8, no duplicate keys, integers at
/// most 2^53 - 1; MT_SCHEMA_JSON) and compiles it.
[[nodiscard]] compiled_schema compile_schema_text(std::string_view text,
                                                  schema_source source = schema_source::authored);

/// The §7 layout table for the logical tensors `present` (names of the
/// schema's root properties), with placement alignment computed for file
/// alignment `alignment`.
[[nodiscard]] nlohmann::json layout_table_json(const compiled_schema& schema,
                                               std::span<const std::string> present, std::uint64_t alignment);

/// The scalar `TypeDef:` keyword of a dtype, e.g. "TypeDef:Float32" (§4.4).
[[nodiscard]] std::string_view scalar_typedef_keyword(dtype t) noexcept;
/// A scalar leaf schema for `t`: `{"type": "number"|"integer"|"boolean"|"array",
/// "TypeDef:...": true}` (the first allowed `type` of the §4.4 table).
[[nodiscard]] nlohmann::json scalar_schema(dtype t);

/// The §7 JSON of one record / type (used by tools that print layouts).
[[nodiscard]] nlohmann::json record_json(const record_layout& record);
[[nodiscard]] nlohmann::json type_json(const type_layout& type);

}  // namespace metatensor

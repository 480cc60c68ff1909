// The fast path of compiling a file's schema (issue 27): a schema whose
// root properties are all flat tensors (spec 06 §5.1: arrays of a scalar
// leaf), the shape of nearly every large file, is compiled straight from
// its text's tokens (simdjson's stage 1: no DOM, src/metatensor/
// token_walk.hpp). No nlohmann tree, schema table or dialect
// walk is built at open; the compiled schema keeps the text and builds
// them on the first call that needs them (`document()`, `document_table()`,
// `property_schema()`: deep validation, compatibility, migration, writing).
// A 200 k-tensor schema then costs one tokenizing pass and one walk at open
// instead of a million-node tree built and destroyed.
//
// Like every fast path of header reading (src/metatensor/json_dom.hpp), it
// only ever accepts, and only a narrow grammar it can vouch for:
//   root:       `$schema` (the dialect's URI), `type` "object", `properties`
//               (an object), `required` (an array of root property names),
//               `additionalProperties` false, `title`, `description`
//               (strings); `type` and `properties` present;
//   property:   a dimension node, at most 8 deep, ending in a leaf;
//   dimension:  `items` (an object), `type` "array", `minItems`,
//               `maxItems` (integers), `title`, `description`;
//   leaf:       one scalar `TypeDef:` keyword (§4.4) set to true, `type`
//               one of the names that keyword allows, `title`,
//               `description`;
// with root property names allowed by §3.2. Everything else (records,
// blobs, `$ref`, `$defs`, value keywords, `TypeDef:Align`, ...) is left to
// `compile_schema`, which judges it and names the first failure. For what it
// accepts, the result equals `compile_schema`'s (tests/metatensor/
// schema_fast_path_test.cpp, fuzz/fuzz_metatensor_schema.cpp). Not a public
// header.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metatensor/layout.hpp"

#include "schema_document.hpp"

namespace metatensor::detail {

/// A schema's text, read into its document, table and `$ref` targets on the
/// first call of `table()` or `ref_targets()` (thread-safe; shared by the
/// copies of a compiled schema). The text is shared, not copied: a file's
/// schema stays in the file's `__metadata__` (issue 27).
class deferred_document {
 public:
  /// `text` must be a strict JSON document (§3.1) that compiles.
  explicit deferred_document(std::shared_ptr<const std::string> text) : text_(std::move(text)) {}

  [[nodiscard]] const std::shared_ptr<const schema_document>& table();
  [[nodiscard]] const std::vector<std::size_t>& ref_targets();

 private:
  void build();

  std::once_flag built_;
  std::shared_ptr<const std::string> text_;  // released once built
  std::shared_ptr<const schema_document> table_;
  std::vector<std::size_t> ref_targets_;
};

struct schema_fast_path {
  /// A file's schema text (§3.1, `schema_source::embedded`) compiled as
  /// `compile_schema` would, when it is in the grammar above; nothing
  /// otherwise (the caller then parses and compiles it the reference way).
  /// `readable` bytes from `text.data()` may be read: with simdjson's
  /// padding after the text it is read in place, else from a padded copy.
  /// The result keeps a copy of the text (for its deferred document).
  [[nodiscard]] static std::optional<compiled_schema> compile_embedded(std::string_view text,
                                                                       std::size_t readable = 0);
  /// The same for a text the result shares instead of copying (a file's
  /// `__metadata__` value, `safetensors::file::metadata_value`), read in
  /// place when its capacity leaves simdjson's padding after it.
  [[nodiscard]] static std::optional<compiled_schema> compile_embedded(
      std::shared_ptr<const std::string> text);

 private:
  // The grammar's walk; the result's deferred document is left unset.
  [[nodiscard]] static std::optional<compiled_schema> compile_text(std::string_view text,
                                                                   std::size_t readable);
};

}  // namespace metatensor::detail

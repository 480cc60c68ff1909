// A JSON Schema draft 2020-12 evaluator for the metatensor dialect (spec 06
// §4.1–§4.3, §8.3).
//
// The evaluator is generic: it gives no binary meaning to any keyword (every
// `TypeDef:` keyword passes) and evaluates a JSON value — the logical value of
// a file (§8.3) or any part of it — against the schema document. Numbers
// follow §8.3: integers (int64/uint64) compare exactly, floating values
// (including NaN and ±infinity, stored as nlohmann number_float) compare as
// binary64, and a keyword fails only when its violation test is true.
//
// Construction compiles every schema location of the document once and
// rejects what the dialect does not evaluate, so a schema is either
// evaluated exactly as a 2020-12 validator would, or refused. The forms
// schema builders emit are read first (layout.hpp,
// `normalize_builder_schema`): a draft-07 tuple (`items` as an array, with
// `additionalItems`) is evaluated with its draft-07 meaning, as the
// `prefixItems` it stands for, and a root that is a bare `$ref` as the schema
// it designates; `document()` is then that rewritten copy. Refused:
//  * MT_SCHEMA_DIALECT: a §4.3 keyword (`additionalItems` without an `items`
//    array, ...);
//    `additionalProperties` other than `false`; `$schema` other than the
//    2020-12 URI (§4.1); a `$ref` that is neither a same-document JSON Pointer
//    fragment nor exactly the `$id` of a subschema, or that does not resolve;
//    a fragment `$ref` inside a subschema carrying its own `$id` (2020-12
//    would resolve it against that embedded resource, §4.3 against the
//    document: the two readings differ, so it is refused); a cycle of `$ref`
//    and in-place applicators (`allOf`, `anyOf`, `oneOf`, `not`, `if`,
//    `then`, `else`) that never descends into the value (evaluation could not
//    terminate); a malformed keyword value (e.g. `"minimum": "1"`).
//  * MT_SCHEMA_UNSUPPORTED: a `pattern` that PCRE2 cannot compile with its
//    ECMA-262-like options (§8.3).
//  * MT_LIMIT: subschemas nested deeper than 64 levels (§8.4).
// Messages carry the JSON Pointer of the offending schema location.
//
// Validation returns the first violation found, or nullopt. It throws
// MT_LIMIT when evaluation recursion exceeds `max_evaluation_depth` or when a
// `pattern` match exceeds the PCRE2 match/depth/heap limits (a hostile
// pattern is an error, never a hang and never a silent verdict).
#pragma once

#include <cstddef>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "metatensor/error.hpp"
#include "metatensor/layout.hpp"

namespace metatensor {

/// One failed keyword of deep validation (§8.3), reported as MT_VALUE by the
/// reader.
struct schema_violation {
  std::string pointer;  // JSON Pointer of the offending value, e.g. "/particles/1/mass"
  std::string keyword;  // the failing keyword, e.g. "minimum"
  std::string message;  // human-readable: what was expected
  std::string member;   // for "required": the missing member (not in `pointer`, which names the object)
};

/// Evaluates JSON values against a schema document of the metatensor dialect.
class json_schema_evaluator {
 public:
  /// Subschemas nested deeper than this are refused with MT_LIMIT (§8.4).
  static constexpr std::size_t max_schema_nesting = 64;
  /// Evaluation recursion (subschema applications, in place or into the
  /// value) deeper than this throws MT_LIMIT.
  static constexpr std::size_t max_evaluation_depth = 512;

  /// Keeps a reference: `document` must outlive the evaluator and must not be
  /// modified while the evaluator exists (unless it holds builder forms: then
  /// the evaluator keeps a rewritten copy). Throws metatensor::error as
  /// listed in the file comment.
  explicit json_schema_evaluator(const nlohmann::json& document);
  /// Evaluates against `schema`'s document, using the table of schema
  /// locations the compiler read (the document is not read again); shares
  /// ownership of the document, so `schema` may go away first.
  explicit json_schema_evaluator(const compiled_schema& schema);
  ~json_schema_evaluator();
  json_schema_evaluator(json_schema_evaluator&&) noexcept;
  json_schema_evaluator& operator=(json_schema_evaluator&&) noexcept;
  json_schema_evaluator(const json_schema_evaluator&) = delete;
  json_schema_evaluator& operator=(const json_schema_evaluator&) = delete;

  /// First violation of `value` against the document root, or nullopt.
  /// `value_pointer` prefixes the reported pointers (e.g. "/particles").
  [[nodiscard]] std::optional<schema_violation> validate(const nlohmann::json& value,
                                                         std::string_view value_pointer = "") const;

  /// Same against `schema_node`, which must be a schema node inside
  /// document() (compared by address); otherwise throws
  /// tensogram::invalid_arg_error.
  [[nodiscard]] std::optional<schema_violation> validate_node(const nlohmann::json& schema_node,
                                                              const nlohmann::json& value,
                                                              std::string_view value_pointer) const;

  [[nodiscard]] const nlohmann::json& document() const noexcept { return *document_; }

 private:
  struct compiled;
  const nlohmann::json* document_;
  std::unique_ptr<const compiled> compiled_;
};

}  // namespace metatensor

// Header schemas: "a model is one struct" (docs/metatensor.md, "Header
// schemas", an extension of spec 06).
//
// A header schema is a JSON Schema of the metatensor dialect (as
// `json_schema_evaluator` reads it, TypeBox output included) that describes
// the safetensors header itself rather than the data: its leaves are
// TensorRef objects `{"dtype", "shape", "data_offsets"}`, exactly the
// header's tensor entries. The header is seen grouped by dotted names: the
// tensor `conv1.weight` is the member `weight` of the member `conv1`, so
//
//   Model = {conv1: Layer, conv2: Layer}, Layer = {weight: TensorRef, ...}
//
// validates a file holding `conv1.weight`, `conv1.bias`, `conv2.weight`, ...
// The grouped header is a JSON object built from every tensor entry except,
// in a metatensor file, the padding tensors `__pad__N` (§3.3); a name that is
// both a tensor and a group (`a` and `a.b`) is an error.
//
// After validation the same grouping gives typed access:
// `model["conv1"]["weight"].as<float>()`.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "metatensor/error.hpp"
#include "metatensor/json_schema.hpp"
#include "metatensor/safetensors.hpp"

namespace metatensor {

class file;  // <metatensor/file.hpp>

/// A header schema, checked and ready to validate headers. Cheap to copy.
class header_schema {
 public:
  /// Reads `document` as the JSON Schema evaluator does (builder forms
  /// rewritten first). Throws `metatensor::error` MT_SCHEMA_DIALECT,
  /// MT_SCHEMA_UNSUPPORTED or MT_LIMIT naming the schema location.
  explicit header_schema(nlohmann::json document);
  /// Parses `text` strictly (UTF-8, no duplicate keys; MT_SCHEMA_JSON).
  [[nodiscard]] static header_schema from_text(std::string_view text);
  /// Reads the schema file at `path` (`tensogram::io_error` when unreadable).
  [[nodiscard]] static header_schema open(const std::filesystem::path& path);

  /// The document the evaluator uses (builder forms rewritten).
  [[nodiscard]] const nlohmann::json& document() const noexcept;
  /// The first violation of a grouped header (see `grouped_header`), or nullopt.
  [[nodiscard]] std::optional<schema_violation> check(const nlohmann::json& grouped) const;

 private:
  struct impl;
  std::shared_ptr<const impl> impl_;
};

/// A node of the tensors of a file grouped by dotted names: a group (the
/// root, `conv1`) or a tensor (`conv1.weight`). Views point into the file,
/// which must outlive the group. Cheap to copy.
class tensor_group {
 public:
  /// The dotted name: "" for the root, "conv1", "conv1.weight".
  [[nodiscard]] const std::string& name() const noexcept;
  [[nodiscard]] bool is_tensor() const noexcept;
  [[nodiscard]] bool contains(std::string_view member) const noexcept;
  /// Member names in byte order (empty for a tensor).
  [[nodiscard]] std::vector<std::string> members() const;
  /// The member `member`; throws `tensogram::invalid_arg_error` naming the
  /// dotted name when there is none.
  [[nodiscard]] tensor_group operator[](std::string_view member) const;
  /// The tensor at this node; throws `tensogram::invalid_arg_error` for a group.
  [[nodiscard]] const safetensors::tensor_view& tensor() const;
  /// `tensor().as<T>()`: a zero-copy typed span.
  template <class T>
  [[nodiscard]] std::span<const T> as() const {
    return tensor().template as<T>();
  }
  /// Every tensor at or below this node, in dotted-name order.
  [[nodiscard]] std::vector<const safetensors::tensor_view*> tensors() const;

 private:
  struct node;
  friend tensor_group group_tensors(const safetensors::file& f);
  tensor_group(std::shared_ptr<const node> root, const node* at) : root_(std::move(root)), at_(at) {}
  std::shared_ptr<const node> root_;
  const node* at_;
};

/// The tensors of `f` grouped by dotted names (padding tensors of a
/// metatensor file left out). Throws `metatensor::error` MT_HEADER_SCHEMA when
/// a name is both a tensor and a group.
[[nodiscard]] tensor_group group_tensors(const safetensors::file& f);

/// The grouped header a header schema validates: nested objects whose leaves
/// are the tensor entries `{"dtype", "shape", "data_offsets"}` as in the
/// header. Same errors as `group_tensors`.
[[nodiscard]] nlohmann::json grouped_header(const safetensors::file& f);

/// Validates the header of `f` against `schema` and returns the grouped
/// tensors. Throws `metatensor::error` MT_HEADER_SCHEMA for the first
/// violation; the message names the tensor or group by its dotted name and
/// the JSON Pointer of the failing value, e.g.
/// `tensor "conv1.weight" (/conv1/weight/dtype): ...` or
/// `"conv1.running_var" is missing (/conv1): ...`.
[[nodiscard]] tensor_group validate_header(const safetensors::file& f, const header_schema& schema);
/// The same for a metatensor file (its physical tensors, `f.base()`).
[[nodiscard]] tensor_group validate_header(const file& f, const header_schema& schema);

}  // namespace metatensor

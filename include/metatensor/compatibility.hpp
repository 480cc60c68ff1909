// Schema evolution (spec 06 §11): how a reader schema relates to the schema a
// file was written with, per logical tensor and field path.
//
// The classification uses only the two schemas (never file contents), so the
// verdict for a pair of schemas is deterministic (§11.5).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "metatensor/layout.hpp"

namespace metatensor {

/// The §11.2 classes, from best to worst. `compatible` is the class of root
/// properties added (not required) or removed (§11.3).
enum class compatibility_class : std::uint8_t {
  identical,        ///< identical layout: every view works
  compatible,       ///< a root property added (optional) or removed
  view_compatible,  ///< field views work; missing fields read as their default
  convertible,      ///< some fields need an exact widening conversion (§11.4)
  incompatible,     ///< MT_SCHEMA_INCOMPATIBLE
};

/// "identical layout", "compatible", "view-compatible", "convertible",
/// "incompatible".
[[nodiscard]] std::string_view compatibility_class_name(compatibility_class c) noexcept;

/// One line of the diff (§11.5): a logical tensor or field path, what changed
/// and the class of that change.
struct schema_change {
  std::string path;    ///< "particles", "particles.vel", "labels[item]"
  std::string change;  ///< "field added with a default", "F32 -> F64 (widening)", ...
  compatibility_class verdict = compatibility_class::identical;
  /// JSON Pointer of the schema node concerned: the reader schema's node, or
  /// the writer schema's for something the reader no longer has, e.g.
  /// "/properties/points/items/properties/x".
  std::string pointer;
};

/// A dimension bound of the reader schema that files written with the
/// writer schema may not meet (`minItems` raised, `maxItems` lowered or
/// added on a dimension, §5.1): the layouts still agree, but such files
/// fail the reader's shape check (MT_SHAPE).
struct dimension_warning {
  std::string path;     ///< "points[dim 0]"
  std::string pointer;  ///< JSON Pointer of the reader's dimension node
  std::string change;   ///< "maxItems 10 -> 4: files with more than 4 items fail"
};

struct compatibility_report {
  /// The worst class over all changes (`identical` when nothing changed).
  compatibility_class verdict = compatibility_class::identical;
  /// Changes in path order: every logical tensor of either schema appears at
  /// least once (unchanged ones with "unchanged").
  std::vector<schema_change> changes;
  /// The class of each logical tensor of either schema, by name.
  std::map<std::string, compatibility_class> tensors;
  /// Dimension bounds old files may violate, in tensor then dimension order.
  std::vector<dimension_warning> dimension_warnings;
};

/// Classifies reading files written with `writer` through `reader` (§11.2–§11.4).
[[nodiscard]] compatibility_report compatibility(const compiled_schema& writer,
                                                 const compiled_schema& reader);

/// True when `from -> to` is one of the exact widening conversions of §11.4
/// (or a composition of them). Equal types are not a widening.
[[nodiscard]] bool is_widening(dtype from, dtype to) noexcept;

/// Throws `metatensor::error(MT_SCHEMA_INCOMPATIBLE, ...)` naming the JSON
/// Pointer, the tensor and field path and the reason of the first
/// incompatible change when the report's verdict is `incompatible`.
void require_compatible(const compatibility_report& report);

}  // namespace metatensor

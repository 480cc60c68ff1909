// Deep validation's last pass (spec 06 §8.1, §8.3): the schema's value
// keywords, evaluated on the logical value. Not a public header.
#pragma once

#include "metatensor/file.hpp"

namespace metatensor::detail {

/// Throws metatensor::error MT_VALUE, whose message starts with the JSON
/// Pointer of the first offending value, or MT_BOOL / MT_UTF8 for bytes the
/// logical value cannot hold (passes 1–2 of `validate_deep` report those
/// first), or MT_LIMIT from the evaluator.
void check_value_keywords(const file& f);

}  // namespace metatensor::detail

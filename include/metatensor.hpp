// Umbrella header of the metatensor library (spec 06): schema-driven tensors
// (flat arrays, records, strings, ragged lists) inside valid safetensors files.
#pragma once

#include "metatensor/compatibility.hpp"  // IWYU pragma: export
#include "metatensor/error.hpp"          // IWYU pragma: export
#include "metatensor/file.hpp"           // IWYU pragma: export
#include "metatensor/header_schema.hpp"  // IWYU pragma: export
#include "metatensor/json_schema.hpp"    // IWYU pragma: export
#include "metatensor/layout.hpp"         // IWYU pragma: export
#include "metatensor/migrate.hpp"        // IWYU pragma: export
#include "metatensor/safetensors.hpp"    // IWYU pragma: export
#include "metatensor/validate.hpp"       // IWYU pragma: export
#include "metatensor/writer.hpp"         // IWYU pragma: export

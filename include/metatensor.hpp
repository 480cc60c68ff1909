// Umbrella header of the metatensor library (spec 06): schema-driven tensors
// inside valid safetensors files. Currently: the safetensors base layer.
#pragma once

#include "metatensor/error.hpp"        // IWYU pragma: export
#include "metatensor/safetensors.hpp"  // IWYU pragma: export

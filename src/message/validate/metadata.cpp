// Level 2, metadata (spec 02 §15.1, §15.2): the CBOR bodies of metadata,
// index, hash and preceder frames and of every descriptor, and their
// consistency with the frames the structure level found.
#include <algorithm>
#include <limits>
#include <string>

#include "../masks_restore.hpp"
#include "tensogram/cbor/codec.hpp"
#include "tensogram/codecs/pipeline.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/format/aggregate_frames.hpp"
#include "tensogram/message/metadata.hpp"
#include "validate_internal.hpp"

namespace tensogram::validation {

using format::frame_type;

namespace {

// The validator's canonical check (spec 02 §1.6): empty when canonical,
// else why not.
std::optional<std::string> canonical_problem(std::span<const std::byte> body) {
  try {
    if (cbor::has_canonical_key_order(cbor::decode(body))) return std::nullopt;
    return std::string("CBOR map keys not in canonical order (or duplicated)");
  } catch (const std::exception& e) {
    return "failed to parse CBOR: " + std::string(e.what());
  }
}

}  // namespace

data_object_descriptor parse_descriptor(std::span<const std::byte> cbor_bytes) {
  cbor::value v;
  try {
    v = cbor::decode(cbor_bytes);
  } catch (const metadata_error& e) {
    throw metadata_error("failed to parse descriptor CBOR: " + std::string(e.detail()));
  }
  data_object_descriptor d = data_object_descriptor::from_cbor(v);
  (void)detail::parse_mask_entries(d, true);
  return d;
}

// Splits the payload region at the smallest mask offset (spec 01 §13.2).
bool split_masks(object_ctx& o) {
  const detail::mask_entries masks = detail::parse_mask_entries(*o.descriptor, true);
  if (masks.empty()) return true;
  std::uint64_t first = std::numeric_limits<std::uint64_t>::max();
  for (const detail::mask_entry& m : masks) first = std::min(first, m.offset);
  if (first > o.region.size()) return false;
  o.payload = o.region.first(static_cast<std::size_t>(first));
  return true;
}

namespace {

void check_descriptor(object_ctx& o, std::size_t i, issue_list& out, bool canonical) {
  if (canonical) {
    if (const auto problem = canonical_problem(o.descriptor_cbor)) {
      out.warning(issue_code::descriptor_cbor_non_canonical, k_metadata, i, std::nullopt,
                  "descriptor CBOR is not canonical: " + *problem);
    }
  }
  try {
    o.descriptor = parse_descriptor(o.descriptor_cbor);
  } catch (const std::exception& e) {
    o.descriptor_failed = true;
    out.error(issue_code::descriptor_cbor_parse_failed, k_metadata, i, std::nullopt,
              "descriptor CBOR parse failed: " + std::string(e.what()));
    return;
  }
  const data_object_descriptor& d = *o.descriptor;
  if (d.ndim != d.shape.size()) {
    out.error(issue_code::ndim_shape_mismatch, k_metadata, i, std::nullopt,
              "ndim " + str(d.ndim) + " != shape.len() " + str(d.shape.size()));
  }
  if (d.strides.size() != d.shape.size()) {
    out.error(issue_code::strides_shape_mismatch, k_metadata, i, std::nullopt,
              "strides.len() " + str(d.strides.size()) + " != shape.len() " + str(d.shape.size()));
  }
  if (!element_count(d.shape)) {
    out.error(issue_code::shape_overflow, k_metadata, i, std::nullopt, "shape product overflows u64");
  }
  if (!codecs::is_known_encoding(d.encoding)) {
    out.error(issue_code::unknown_encoding, k_metadata, i, std::nullopt,
              "unknown encoding '" + d.encoding + "'");
  }
  if (!codecs::is_known_filter(d.filter)) {
    out.error(issue_code::unknown_filter, k_metadata, i, std::nullopt, "unknown filter '" + d.filter + "'");
  }
  // Every name the wire format defines, built into this library or not
  // (spec 02 §15.2); level 3 reports codecs that cannot be run.
  if (!codecs::is_known_compression(d.compression)) {
    out.error(issue_code::unknown_compression, k_metadata, i, std::nullopt,
              "unknown compression '" + d.compression + "'");
  }
  if (d.type.empty()) {
    out.error(issue_code::empty_obj_type, k_metadata, i, std::nullopt, "obj_type is empty");
  }
  if (!split_masks(o)) {
    std::uint64_t first = std::numeric_limits<std::uint64_t>::max();
    for (const detail::mask_entry& m : detail::parse_mask_entries(d, true)) first = std::min(first, m.offset);
    out.error(
        issue_code::descriptor_cbor_parse_failed, k_metadata, i, o.frame_offset,
        "mask offset " + str(first) + " out of range (payload region is " + str(o.region.size()) + " bytes)");
  }
}

}  // namespace

void check_metadata(located_frames& w, issue_list& out, bool canonical) {
  std::optional<global_metadata> meta;
  const std::size_t objects = w.objects.size();
  for (const body_frame& f : w.frames) {
    switch (f.type) {
      case frame_type::header_metadata:
      case frame_type::footer_metadata:
        if (canonical) {
          if (const auto problem = canonical_problem(f.body)) {
            out.warning(issue_code::metadata_cbor_non_canonical, k_metadata, std::nullopt, std::nullopt,
                        "metadata CBOR is not canonical: " + *problem);
          }
        }
        try {
          meta = global_metadata::from_cbor_bytes(f.body);  // the last metadata frame wins (spec 01 §6)
        } catch (const std::exception& e) {
          // Without metadata the remaining checks have nothing to stand on.
          out.error(issue_code::metadata_cbor_parse_failed, k_metadata, std::nullopt, std::nullopt,
                    "failed to parse metadata CBOR: " + std::string(e.what()));
          return;
        }
        break;
      case frame_type::header_index:
      case frame_type::footer_index:
        try {
          const format::index_body idx = format::parse_index_body(f.body);
          if (idx.offsets.size() != objects) {
            // Reported twice, as the reference does (spec 02 §15.2).
            out.error(issue_code::index_count_mismatch, k_metadata, std::nullopt, std::nullopt,
                      "index offsets.len() " + str(idx.offsets.size()) + " != actual data object count " +
                          str(objects));
            out.error(
                issue_code::index_count_mismatch, k_metadata, std::nullopt, std::nullopt,
                "index offsets length " + str(idx.offsets.size()) + " != data object count " + str(objects));
          }
          for (std::size_t j = 0; j < idx.offsets.size() && j < objects; ++j) {
            if (idx.offsets[j] != w.objects[j].frame_offset) {
              out.error(issue_code::index_offset_mismatch, k_metadata, j, std::nullopt,
                        "index offset[" + str(j) + "] = " + str(idx.offsets[j]) +
                            " but actual data object frame at " + str(w.objects[j].frame_offset));
            }
          }
        } catch (const std::exception& e) {
          out.error(issue_code::index_cbor_parse_failed, k_metadata, std::nullopt, std::nullopt,
                    failure("failed to parse index CBOR", e));
        }
        break;
      case frame_type::header_hash:
      case frame_type::footer_hash:
        try {
          const format::hash_body hb = format::parse_hash_body(f.body);
          if (hb.hashes.size() != objects) {
            out.error(
                issue_code::hash_frame_count_mismatch, k_metadata, std::nullopt, std::nullopt,
                "hash frame has " + str(hb.hashes.size()) + " hashes but " + str(objects) + " data objects");
          }
        } catch (const std::exception& e) {
          out.error(issue_code::hash_frame_cbor_parse_failed, k_metadata, std::nullopt, std::nullopt,
                    failure("failed to parse hash frame CBOR", e));
        }
        break;
      default: break;
    }
  }

  for (const body_frame& f : w.frames) {
    if (f.type != frame_type::preceder_metadata) continue;
    if (canonical) {
      if (const auto problem = canonical_problem(f.body)) {
        out.warning(issue_code::preceder_cbor_non_canonical, k_metadata, std::nullopt, f.offset,
                    "preceder metadata CBOR is not canonical: " + *problem);
      }
    }
    try {
      const global_metadata p = global_metadata::from_cbor_bytes(f.body);
      if (p.base.size() != 1) {
        out.error(issue_code::preceder_base_count_wrong, k_metadata, std::nullopt, f.offset,
                  "PrecederMetadata base must have exactly 1 entry, got " + str(p.base.size()));
      }
    } catch (const std::exception& e) {
      out.error(issue_code::preceder_cbor_parse_failed, k_metadata, std::nullopt, f.offset,
                "failed to parse preceder metadata CBOR: " + std::string(e.what()));
    }
  }

  if (!meta) return;  // no_metadata_frame was reported by level 1
  if (meta->base.size() > objects) {
    out.error(issue_code::base_count_exceeds_objects, k_metadata, std::nullopt, std::nullopt,
              "metadata base has " + str(meta->base.size()) + " entries but message has " + str(objects) +
                  " data objects");
  }
  for (std::size_t i = 0; i < objects; ++i) check_descriptor(w.objects[i], i, out, canonical);

  for (std::size_t i = 0; i < meta->base.size() && i < objects; ++i) {
    const cbor::value* reserved = meta->base[i].find("_reserved_");
    if (reserved == nullptr) continue;  // a missing _reserved_ is not reported
    if (!reserved->is_map()) {
      out.error(issue_code::reserved_not_a_map, k_metadata, i, std::nullopt, "base._reserved_ is not a map");
    } else if (reserved->find("tensor") == nullptr) {
      out.warning(issue_code::reserved_missing_tensor, k_metadata, i, std::nullopt,
                  "base._reserved_ missing 'tensor' key");
    }
  }
}

}  // namespace tensogram::validation

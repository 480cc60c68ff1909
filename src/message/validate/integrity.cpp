// Level 3, integrity (spec 02 §15.2 integrity rows): the aggregate hash
// frames against each other and against the inline hash slots, each
// object's frame hash, and a decode of every object whose pipeline is not
// all `none` (feeding level 4 when it runs).
#include <cctype>
#include <string>
#include <vector>

#include "tensogram/codecs/pipeline.hpp"
#include "tensogram/core/buffer.hpp"
#include "tensogram/core/byte_order.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/core/hex.hpp"
#include "tensogram/format/aggregate_frames.hpp"
#include "tensogram/format/hash.hpp"
#include "tensogram/message/pipeline_params.hpp"
#include "validate_internal.hpp"

namespace tensogram::validation {

using format::frame_type;

namespace {

struct aggregate {
  frame_type type;
  std::size_t offset;
  std::vector<std::string> hashes;
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

// Returns hash_verified before the "no error anywhere" rule. Fidelity issues
// go to `fidelity` so that the report lists all integrity issues first, yet
// each object is decoded once and its decoded bytes dropped straight away.
bool check_integrity(located_frames& w, issue_list& out, issue_list& fidelity, bool checksum_only,
                     bool run_fidelity) {
  bool all_verified = true;
  bool any_verified = false;

  // Aggregate hash frames (spec 01 §11, spec 02 §15.2).
  std::vector<aggregate> aggregates;
  for (const body_frame& f : w.frames) {
    if (f.type != frame_type::header_hash && f.type != frame_type::footer_hash) continue;
    try {
      format::hash_body hb = format::parse_hash_body(f.body);
      if (hb.algorithm != "xxh3") {
        out.warning(issue_code::unknown_hash_algorithm, k_integrity, std::nullopt, f.offset,
                    "unknown hash algorithm '" + hb.algorithm +
                        "' in hash frame, aggregate entries cannot be verified (inline slots still checked)");
        continue;
      }
      aggregates.push_back({f.type, f.offset, std::move(hb.hashes)});
    } catch (const std::exception& e) {
      all_verified = false;
      out.error(issue_code::hash_frame_cbor_parse_failed, k_integrity, std::nullopt, f.offset,
                failure("failed to parse hash frame CBOR", e));
    }
  }
  for (std::size_t k = 1; k < aggregates.size(); ++k) {
    const aggregate& a = aggregates.front();
    const aggregate& b = aggregates[k];
    bool same = a.hashes.size() == b.hashes.size();
    for (std::size_t j = 0; same && j < a.hashes.size(); ++j) same = lower(a.hashes[j]) == lower(b.hashes[j]);
    if (!same) {
      all_verified = false;
      out.error(issue_code::hash_mismatch, k_integrity, std::nullopt, b.offset,
                std::string(format::frame_type_name(b.type)) + " at offset " + str(b.offset) +
                    " disagrees with " + std::string(format::frame_type_name(a.type)) + " at offset " +
                    str(a.offset));
    }
  }
  for (const aggregate& a : aggregates) {
    for (std::size_t j = 0; j < a.hashes.size() && j < w.objects.size(); ++j) {
      const object_ctx& o = w.objects[j];
      // A slot without HASH_PRESENT is meaningless (spec 01 §4.2).
      if (!o.hash_present || lower(a.hashes[j]) == hex16(o.hash_slot)) continue;
      all_verified = false;
      out.error(issue_code::hash_mismatch, k_integrity, j, a.offset,
                std::string(format::frame_type_name(a.type)) + " entry " + str(j) + " (" + a.hashes[j] +
                    ") differs from the inline hash slot of object " + str(j) + " (" + hex16(o.hash_slot) +
                    ")");
    }
  }

  const bool hashes_present = (w.preamble_flags & format::message_flags::hashes_present) != 0;
  for (std::size_t i = 0; i < w.objects.size(); ++i) {
    object_ctx& o = w.objects[i];
    if (!o.descriptor && !o.descriptor_failed) {
      // Level 2 did not run (checksum mode).
      try {
        o.descriptor = parse_descriptor(o.descriptor_cbor);
        if (!split_masks(o)) o.payload = o.region;
      } catch (const std::exception& e) {
        o.descriptor_failed = true;
        out.error(issue_code::hash_verification_error, k_integrity, i, std::nullopt,
                  "failed to parse descriptor: " + std::string(e.what()));
      }
    }

    if (!hashes_present) {
      out.warning(
          issue_code::no_hash_available, k_integrity, i, std::nullopt,
          "HASHES_PRESENT flag is clear — message was encoded without hashes; cannot verify integrity");
      all_verified = false;
    } else if (!o.hash_present) {
      out.error(issue_code::hash_verification_error, k_integrity, i, o.frame_offset,
                "frame hash verification error: " + std::string(missing_hash_error(i).what()));
      all_verified = false;
    } else if (const std::uint64_t actual = format::xxh3_64(o.hashed_body); actual != o.hash_slot) {
      out.error(issue_code::hash_mismatch, k_integrity, i, o.frame_offset,
                "frame hash mismatch (expected " + hex16(o.hash_slot) + ", got " + hex16(actual) + ")");
      all_verified = false;
    } else {
      any_verified = true;
    }

    if (!o.descriptor || checksum_only) continue;
    const data_object_descriptor& d = *o.descriptor;
    if (d.encoding == "none" && d.filter == "none" && d.compression == "none") {
      // No decode check for raw payloads (spec 02 §15.2 notes).
      if (run_fidelity) check_fidelity(o, i, o.payload, fidelity);
      continue;
    }
    const std::optional<std::uint64_t> n = element_count(d.shape);
    if (!n) continue;  // shape_overflow was reported by level 2
    std::optional<codecs::pipeline> pl;
    try {
      pl.emplace(build_pipeline(d));
    } catch (const std::exception& e) {
      out.error(issue_code::pipeline_config_failed, k_integrity, i, o.frame_offset,
                "cannot build pipeline config: " + std::string(e.what()));
      continue;
    }
    buffer decoded;
    try {
      const byte_order order = d.effective_byte_order();
      decoded = pl->decode(buffer::borrowed(o.payload), *n, order, order);
    } catch (const std::exception& e) {
      out.error(issue_code::decode_pipeline_failed, k_integrity, i, o.frame_offset,
                "decode pipeline failed: " + std::string(e.what()));
      continue;
    }
    if (run_fidelity) check_fidelity(o, i, decoded.bytes(), fidelity);
  }
  return any_verified && all_verified;
}

}  // namespace tensogram::validation

// BlobRef positions inside records (spec 06 §6.4), in the depth-first order
// writers fill heaps in: shared by the BlobRef checks (file.cpp) and schema
// migration (migrate_convert.cpp). Not a public header.
#pragma once

#include <cstdint>
#include <vector>

#include "metatensor/layout.hpp"

namespace metatensor::detail {

// One BlobRef position inside a record (§6.4): its offset from the record
// start and the String or List type it refers to. Fixed arrays and nested
// records are expanded, so a record has at most size/16 slots.
struct blob_slot {
  std::uint64_t offset;
  const type_layout* type;
};

inline void collect_slots(const record_layout& rec, std::uint64_t base, std::vector<blob_slot>& out);

inline void collect_type_slots(const type_layout& t, std::uint64_t base, std::vector<blob_slot>& out) {
  if (!t.has_blobs()) return;
  std::uint64_t n = 1;
  for (auto d : t.shape) n *= d;  // bounded by the record size (§6.2, §8.4)
  const std::uint64_t step = t.element_size();
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t at = base + i * step;
    if (t.type == value_type::string || t.type == value_type::list) {
      out.push_back(blob_slot{at, &t});
    } else if (t.type == value_type::record && t.record) {
      collect_slots(*t.record, at, out);
    }
  }
}

inline void collect_slots(const record_layout& rec, std::uint64_t base, std::vector<blob_slot>& out) {
  for (const auto& f : rec.fields) collect_type_slots(f.type, base + f.offset, out);
}

}  // namespace metatensor::detail

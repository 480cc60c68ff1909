#include "tensor_values.hpp"

#include "src/metatensor/text.hpp"

namespace metatensor::detail {

namespace {

void collect_slots(const type_layout& t, std::uint64_t base, slot_table& out) {
  if (!t.has_blobs()) return;
  const std::uint64_t n = element_count(t.shape);
  const std::uint64_t es = t.element_size();
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t off = base + i * es;
    switch (t.type) {
      case value_type::string: out.push_back({off, nullptr}); break;
      case value_type::list: out.push_back({off, t.elem.get()}); break;
      case value_type::record:
        for (const auto& f : t.record->fields) collect_slots(f.type, off + f.offset, out);
        break;
      case value_type::scalar: break;
    }
  }
}

}  // namespace

slot_table slots_of(const tensor_layout& layout) {
  slot_table out;
  if (layout.kind == tensor_kind::record) {
    for (const auto& f : layout.record->fields) collect_slots(f.type, f.offset, out);
  } else if (layout.kind == tensor_kind::blob) {
    out.push_back({0, layout.item.type == value_type::list ? layout.item.elem.get() : nullptr});
  }
  return out;
}

}  // namespace metatensor::detail

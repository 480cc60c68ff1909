// Laying out the physical tensors of a file (spec 06 §6.4–§6.6) and the
// canonical form (§3.5).
#include "canonical_form.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <unordered_set>

#include "src/metatensor/text.hpp"

namespace metatensor::detail {

namespace {

void store_u64(std::byte* p, std::uint64_t v) {
  std::memcpy(p, &v, 8);  // little-endian host (file_builder.cpp)
}

struct physical {
  std::string name;
  dtype type = dtype::u8;
  std::vector<std::uint64_t> shape;
  std::span<const std::byte> data;
  std::uint64_t placement = 1;  // R(t), §6.5
};

// Heap and BlobRefs of a struct or blob tensor (§6.4): blobs appended in
// record order and slot order, List blobs aligned to align(E), empty blobs
// as (0, 0).
void build_heap(const tensor_values& v, std::vector<std::byte>& primary, std::vector<std::byte>& heap) {
  const slot_table& slots = *v.slots;
  const std::string what = "tensor " + detail::quoted(v.layout->name) + " heap";
  for (std::uint64_t r = 0; r < v.count; ++r) {
    for (std::size_t s = 0; s < slots.size(); ++s) {
      const auto& blob = v.blobs[static_cast<std::size_t>(r) * slots.size() + s];
      if (blob.empty()) continue;  // the BlobRef stays (0, 0)
      if (slots[s].elem != nullptr) heap.resize(align_up(heap.size(), slots[s].elem->align));
      const std::uint64_t offset = heap.size();
      if (blob.size() > safetensors::max_json_integer - offset) {
        writer_error(errc::st_overflow, what + " exceeds 2^53-1 bytes");
      }
      heap.insert(heap.end(), blob.begin(), blob.end());
      std::byte* ref = primary.data() + r * v.element_size + slots[s].offset;
      store_u64(ref, offset);
      store_u64(ref + 8, blob.size());
    }
  }
}

}  // namespace

prepared prepare(const compiled_schema& schema, const writer_options& options,
                 std::span<const tensor_values* const> tensors) {
  {
    // A hash set: a scan of the values per required name would be
    // quadratic in a schema of 2^20 tensors (§8.4).
    std::unordered_set<std::string_view> set;
    set.reserve(tensors.size());
    for (const tensor_values* v : tensors) set.insert(v->layout->name);
    for (const auto& t : schema.tensors()) {
      if (t.required && !set.contains(t.name)) {
        writer_error(errc::mt_tensor_set,
                     "required tensor " + detail::quoted(t.name) + " has not been set (§4.6)");
      }
    }
  }
  const std::uint64_t a = options.alignment;
  prepared p;
  std::vector<std::string> present;
  std::vector<physical> phys;
  for (const tensor_values* values : tensors) {
    const tensor_values& v = *values;
    const tensor_layout& t = *v.layout;
    present.push_back(t.name);
    physical primary{t.name, t.primary_dtype(), v.dims, v.data, t.primary_placement(a)};
    if (const auto trailing = t.trailing_dim()) primary.shape.push_back(*trailing);
    // Struct tensors with blobs and blob indexes get their BlobRefs filled
    // in a copy; other primaries are written from the stored bytes.
    std::vector<std::byte>* built = nullptr;
    if (t.kind == tensor_kind::blob) {
      built = &p.owned.emplace_back(static_cast<std::size_t>(v.count * 16));
    } else if (t.has_heap) {
      built = &p.owned.emplace_back(v.data);
    }
    if (built != nullptr) primary.data = *built;
    phys.push_back(primary);
    if (t.has_heap) {
      auto& heap = p.owned.emplace_back();
      build_heap(v, *built, heap);
      phys.push_back({t.heap_name(), dtype::u8, {heap.size()}, heap, t.heap_placement(a)});
    }
  }
  // §3.5: decreasing R(t), then name byte-wise (std::string compares as
  // unsigned char).
  std::sort(phys.begin(), phys.end(), [](const physical& x, const physical& y) {
    if (x.placement != y.placement) return x.placement > y.placement;
    return x.name < y.name;
  });
  std::uint64_t r_max = a;
  for (const auto& t : phys) r_max = std::max(r_max, t.placement);
  p.zeros.resize(static_cast<std::size_t>(r_max));

  // §6.6 step 2: a cursor relative to D; padding only before a non-empty
  // tensor that is not at a multiple of its R(t).
  std::uint64_t cursor = 0;
  std::size_t pads = 0;
  for (const auto& t : phys) {
    if (!t.data.empty() && cursor % t.placement != 0) {
      const std::uint64_t pad = align_up(cursor, t.placement) - cursor;
      p.inputs.push_back({"__pad__" + std::to_string(pads++),
                          dtype::u8,
                          {pad},
                          std::span<const std::byte>(p.zeros).subspan(0, static_cast<std::size_t>(pad))});
      cursor += pad;
    }
    p.inputs.push_back({t.name, t.type, t.shape, t.data});
    if (t.data.size() > safetensors::max_json_integer - cursor) {
      writer_error(errc::st_overflow, "data section exceeds 2^53-1 bytes");
    }
    cursor += t.data.size();
  }

  // §3.1 keys; the std::map orders them byte-wise with the user's (§3.5).
  p.metadata = options.user_metadata;
  p.metadata["metatensor.alignment"] = std::to_string(a);
  p.metadata["metatensor.endianness"] = "little";
  p.metadata["metatensor.layout"] = layout_table_json(schema, present, a).dump();
  p.metadata["metatensor.schema"] = schema.document().dump();
  p.metadata["metatensor.version"] = "1";

  // §6.6 step 3: 8 + N a multiple of R_max, hence of every R(t) and of A.
  p.options.header_alignment = static_cast<std::size_t>(r_max);
  p.options.always_write_metadata = true;
  p.options.keep_order = true;
  return p;
}

}  // namespace metatensor::detail

// Filling the records of a struct tensor by field path (metatensor/writer.hpp).
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "element_encoding.hpp"
#include "metatensor/writer.hpp"
#include "src/metatensor/text.hpp"
#include "tensor_values.hpp"

namespace metatensor {

namespace {

using detail::api_misuse;
using detail::blob_slot;
using detail::element_count;
using detail::slot_table;

// The target of a field path inside a record (see writer.hpp).
struct field_target {
  std::uint64_t offset = 0;
  const type_layout* type = nullptr;
  std::size_t consumed = 0;  // fixed-array indices applied
  std::string path;          // for messages
};

field_target resolve_path(const record_layout& root, std::string_view path, const std::string& tensor) {
  const std::string what = "tensor " + detail::quoted(tensor) + ", field path " + detail::quoted(path);
  const record_layout* rec = &root;
  std::uint64_t base = 0;
  std::string_view rest = path;
  while (true) {
    const field_layout* best = nullptr;
    for (const auto& f : rec->fields) {
      if (!rest.starts_with(f.name)) continue;
      if (rest.size() != f.name.size() && rest[f.name.size()] != '.' && rest[f.name.size()] != '[') continue;
      if (best == nullptr || f.name.size() > best->name.size()) best = &f;
    }
    if (best == nullptr) api_misuse(what + ": no field matches " + detail::quoted(rest));
    rest.remove_prefix(best->name.size());
    field_target t{base + best->offset, &best->type, 0, std::string(path)};
    while (!rest.empty() && rest.front() == '[') {
      const std::size_t close = rest.find(']');
      if (close == std::string_view::npos || close == 1) api_misuse(what + ": malformed index");
      std::uint64_t index = 0;
      for (char c : rest.substr(1, close - 1)) {
        if (c < '0' || c > '9' || index > (std::numeric_limits<std::uint64_t>::max() - 9) / 10) {
          api_misuse(what + ": malformed index");
        }
        index = index * 10 + static_cast<std::uint64_t>(c - '0');
      }
      if (t.consumed >= t.type->shape.size()) api_misuse(what + ": too many indices (not a fixed array)");
      if (index >= t.type->shape[t.consumed]) {
        api_misuse(what + ": index " + std::to_string(index) + " out of range [0, " +
                   std::to_string(t.type->shape[t.consumed]) + ")");
      }
      const std::uint64_t stride =
          element_count(std::span<const std::uint64_t>(t.type->shape).subspan(t.consumed + 1)) *
          t.type->element_size();
      t.offset += index * stride;
      ++t.consumed;
      rest.remove_prefix(close + 1);
    }
    if (rest.empty()) return t;
    if (rest.front() != '.') api_misuse(what + ": unexpected " + detail::quoted(rest));
    if (t.consumed != t.type->shape.size() || t.type->type != value_type::record) {
      api_misuse(what + ": '.' after a field that is not a record");
    }
    rec = t.type->record.get();
    base = t.offset;
    rest.remove_prefix(1);
  }
}

std::size_t slot_index(const slot_table& slots, std::uint64_t offset) {
  const auto it = std::lower_bound(slots.begin(), slots.end(), offset,
                                   [](const blob_slot& s, std::uint64_t off) { return s.offset < off; });
  return static_cast<std::size_t>(it - slots.begin());  // present: the path resolved to a String/List
}

}  // namespace

record_writer::record_writer(std::unique_ptr<detail::tensor_values> values) : values_(std::move(values)) {}
record_writer::~record_writer() = default;

std::size_t record_writer::size() const noexcept {
  return static_cast<std::size_t>(values_->count);
}

namespace {

struct located {
  field_target target;
  std::byte* record = nullptr;  // start of the record
  std::string where;            // "tensor "x", record 3, field "a.b""
};

located locate(detail::tensor_values& v, std::size_t record, std::string_view path) {
  const std::string& name = v.layout->name;
  if (record >= v.count) {
    api_misuse("tensor " + detail::quoted(name) + ": record " + std::to_string(record) +
               " out of range [0, " + std::to_string(v.count) + ")");
  }
  located l;
  l.target = resolve_path(*v.layout->record, path, name);
  l.record = v.data.data() + record * v.element_size;
  l.where = "tensor " + detail::quoted(name) + ", record " + std::to_string(record) + ", field " +
            detail::quoted(path);
  return l;
}

}  // namespace

void record_writer::set_scalar(std::size_t record, std::string_view field_path,
                               bool (*accepts)(dtype) noexcept, std::span<const std::byte> raw) {
  auto l = locate(*values_, record, field_path);
  const type_layout& t = *l.target.type;
  if (l.target.consumed != t.shape.size() || t.type != value_type::scalar) {
    api_misuse(l.where + ": not a scalar (use set_bytes, set_string or set_list_bytes)");
  }
  if (!accepts(t.scalar) || raw.size() != t.element_size()) {
    api_misuse(l.where + ": the C++ type does not match dtype " +
               std::string(safetensors::dtype_name(t.scalar)));
  }
  detail::check_fixed(t, t.shape.size(), raw, l.where);
  std::memcpy(l.record + l.target.offset, raw.data(), raw.size());
}

void record_writer::set_bytes(std::size_t record, std::string_view field_path,
                              std::span<const std::byte> raw) {
  auto l = locate(*values_, record, field_path);
  const type_layout& t = *l.target.type;
  if (t.has_blobs()) api_misuse(l.where + ": holds a String or List (use set_string / set_list_bytes)");
  const std::uint64_t size =
      element_count(std::span<const std::uint64_t>(t.shape).subspan(l.target.consumed)) * t.element_size();
  if (raw.size() != size) {
    api_misuse(l.where + ": " + std::to_string(raw.size()) + " bytes given, the field has " +
               std::to_string(size));
  }
  detail::check_fixed(t, l.target.consumed, raw, l.where);
  if (!raw.empty()) std::memcpy(l.record + l.target.offset, raw.data(), raw.size());
}

void record_writer::set_string(std::size_t record, std::string_view field_path, std::string_view text) {
  auto l = locate(*values_, record, field_path);
  const type_layout& t = *l.target.type;
  if (l.target.consumed != t.shape.size() || t.type != value_type::string)
    api_misuse(l.where + ": not a String");
  auto bytes = detail::utf8_bytes(text, l.where);
  const std::size_t s = slot_index(*values_->slots, l.target.offset);
  values_->blobs[record * values_->slot_count() + s] = std::move(bytes);
}

void record_writer::set_list_bytes(std::size_t record, std::string_view field_path,
                                   std::span<const std::byte> packed) {
  auto l = locate(*values_, record, field_path);
  const type_layout& t = *l.target.type;
  if (l.target.consumed != t.shape.size() || t.type != value_type::list) api_misuse(l.where + ": not a List");
  const type_layout& elem = *t.elem;
  if (packed.size() % elem.size != 0) {
    api_misuse(l.where + ": " + std::to_string(packed.size()) + " bytes is not a whole number of " +
               std::to_string(elem.size) + "-byte elements");
  }
  for (std::size_t i = 0; i < packed.size(); i += elem.size) {
    detail::check_fixed(elem, 0, packed.subspan(i, elem.size),
                        l.where + "[" + std::to_string(i / elem.size) + "]");
  }
  const std::size_t s = slot_index(*values_->slots, l.target.offset);
  values_->blobs[record * values_->slot_count() + s].assign(packed.begin(), packed.end());
}

}  // namespace metatensor

namespace metatensor {

void record_writer::set_all_bytes(std::span<const std::byte> records) {
  detail::tensor_values& v = *values_;
  const std::string& name = v.layout->name;
  if (records.size() != v.data.size()) {
    api_misuse("tensor " + detail::quoted(name) + ": " + std::to_string(records.size()) +
               " bytes given for " + std::to_string(v.count) + " records of " +
               std::to_string(v.element_size) + " bytes");
  }
  // Checked on a copy, so that a refused call leaves the records as they were.
  std::vector<std::byte> data(records.begin(), records.end());
  for (std::uint64_t r = 0; r < v.count; ++r) {
    const std::span<std::byte> rec(data.data() + r * v.element_size, v.element_size);
    // BlobRefs are the writer's to compute (§6.4): whatever the caller left there is not a value.
    for (const auto& slot : *v.slots)
      std::fill_n(rec.begin() + static_cast<std::ptrdiff_t>(slot.offset), 16, std::byte{0});
    detail::check_record(*v.layout->record, rec,
                         "tensor " + detail::quoted(name) + ", record " + std::to_string(r));
  }
  v.data = std::move(data);
}

}  // namespace metatensor

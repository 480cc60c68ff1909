// Writing metatensor files: values → §6 layout → §3.5 canonical bytes.
//
// Values are kept per logical tensor until `serialize`: fixed-size bytes
// (flat elements or records with their BlobRef slots still zero) plus the
// content of every blob, indexed by (record, slot). Heaps and BlobRefs are
// built only when serialising, in the order §6.4 recommends, so the output
// does not depend on the order in which fields were set.
#include "metatensor/writer.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <utility>

#include "canonical_form.hpp"
#include "element_encoding.hpp"
#include "metatensor/safetensors.hpp"
#include "scalar_encoding.hpp"
#include "src/metatensor/strict_json.hpp"
#include "src/metatensor/text.hpp"
#include "tensogram/core/utf8.hpp"
#include "tensor_values.hpp"

namespace metatensor {

// Element bytes are copied from host values: the format is little-endian
// (§3.1 `metatensor.endianness`), so the writer needs a little-endian host.
static_assert(std::endian::native == std::endian::little, "the metatensor writer needs a little-endian host");

namespace {

using detail::api_misuse;
using detail::checked_mul;
using detail::slot_table;
using detail::tensor_values;
using detail::writer_error;

}  // namespace

struct file_builder::impl {
  compiled_schema schema;
  writer_options options;
  std::map<std::string, std::shared_ptr<const slot_table>, std::less<>> slot_cache;
  std::map<std::string, std::unique_ptr<record_writer>, std::less<>> tensors;

  const tensor_layout& lookup(std::string_view name) const {
    const tensor_layout* t = schema.find(name);
    if (t == nullptr)
      writer_error(errc::mt_tensor_set,
                   "tensor " + detail::quoted(name) + " is not a root property of the schema (§4.6)");
    return *t;
  }

  std::shared_ptr<const slot_table> slots(const tensor_layout& t) {
    auto it = slot_cache.find(t.name);
    if (it == slot_cache.end()) {
      it = slot_cache.emplace(t.name, std::make_shared<const slot_table>(detail::slots_of(t))).first;
    }
    return it->second;
  }

  // New values for `t` with `dims` checked against the schema (§5.1) and
  // zero-filled storage.
  std::unique_ptr<tensor_values> make(const tensor_layout& t, std::vector<std::uint64_t> dims) {
    const std::string what = "tensor " + detail::quoted(t.name);
    if (dims.size() != t.rank()) {
      writer_error(errc::mt_shape, what + ": rank " + std::to_string(dims.size()) +
                                       " given, the schema has " + std::to_string(t.rank()) +
                                       " dimensions (§5.1)");
    }
    std::uint64_t count = 1;
    for (std::size_t i = 0; i < dims.size(); ++i) {
      const auto& b = t.dims[i];
      if (dims[i] < b.min || (b.max && dims[i] > *b.max)) {
        writer_error(errc::mt_shape, what + ": dimension " + std::to_string(i) + " is " +
                                         std::to_string(dims[i]) + ", the schema allows [" +
                                         std::to_string(b.min) + ", " +
                                         (b.max ? std::to_string(*b.max) : std::string("inf")) + "] (§5.1)");
      }
      if (dims[i] > safetensors::max_json_integer)
        writer_error(errc::st_overflow, what + ": dimension above 2^53-1");
      count = checked_mul(count, dims[i], what);
    }
    auto v = std::make_unique<tensor_values>();
    v->layout = &t;
    v->dims = std::move(dims);
    v->count = count;
    std::uint64_t bytes = 0;
    switch (t.kind) {
      case tensor_kind::flat: {
        const std::uint64_t bits = checked_mul(count, safetensors::dtype_bits(t.flat_dtype), what);
        if (bits % 8 != 0) {
          writer_error(errc::st_subbyte, what + ": " + std::to_string(count) + " elements of " +
                                             std::string(safetensors::dtype_name(t.flat_dtype)) +
                                             " are not a whole number of bytes (§2 rule 8)");
        }
        bytes = bits / 8;
        break;
      }
      case tensor_kind::record:
        v->element_size = t.record->size;
        bytes = checked_mul(count, t.record->size, what);
        break;
      case tensor_kind::blob:
        v->element_size = 16;  // the index is built when serialising
        if (checked_mul(count, 16, what) > safetensors::max_json_integer) {
          writer_error(errc::st_overflow, what + ": more than 2^53-1 bytes");
        }
        break;
    }
    if (bytes > safetensors::max_json_integer)
      writer_error(errc::st_overflow, what + ": more than 2^53-1 bytes");
    v->data.resize(static_cast<std::size_t>(bytes));
    if (t.kind != tensor_kind::flat) {
      v->slots = slots(t);
      if (!v->slots->empty()) {
        v->blobs.resize(static_cast<std::size_t>(checked_mul(count, v->slots->size(), what)));
      }
    }
    return v;
  }

  record_writer& install(std::unique_ptr<tensor_values> v) {
    const std::string& name = v->layout->name;
    auto it = tensors.find(name);
    if (it != tensors.end()) {
      // Keep the record_writer object: references handed out stay valid.
      it->second->values_ = std::move(v);
      return *it->second;
    }
    auto w = std::unique_ptr<record_writer>(new record_writer(std::move(v)));
    return *tensors.emplace(name, std::move(w)).first->second;
  }
};

file_builder::file_builder(compiled_schema schema, writer_options options) : impl_(std::make_unique<impl>()) {
  const std::uint64_t a = options.alignment;
  if (a < 16 || a > 65536 || (a & (a - 1)) != 0) {
    writer_error(errc::mt_alignment_value,
                 "alignment " + std::to_string(a) + " is not a power of two between 16 and 65536 (§3.1)");
  }
  for (const auto& [key, value] : options.user_metadata) {
    if (key.starts_with("metatensor.")) {
      writer_error(errc::mt_unknown_key, "user metadata key " + detail::quoted(key) +
                                             ": the \"metatensor.\" prefix is reserved (§3.1)");
    }
    if (tensogram::first_invalid_utf8(key) != std::string::npos ||
        tensogram::first_invalid_utf8(value) != std::string::npos) {
      writer_error(errc::st_header_utf8, "user metadata key " + detail::quoted(key) +
                                             " or its value is not valid UTF-8 (§2 rule 3)");
    }
  }
  impl_->schema = std::move(schema);
  impl_->options = std::move(options);
}

file_builder::file_builder(file_builder&&) noexcept = default;
file_builder& file_builder::operator=(file_builder&&) noexcept = default;
file_builder::~file_builder() = default;

const compiled_schema& file_builder::schema() const noexcept {
  return impl_->schema;
}
const writer_options& file_builder::options() const noexcept {
  return impl_->options;
}

void file_builder::check_flat_type(std::string_view name, bool (*accepts)(dtype) noexcept,
                                   std::size_t size) const {
  const tensor_layout& t = impl_->lookup(name);
  if (t.kind != tensor_kind::flat)
    api_misuse("tensor " + detail::quoted(name) + " is a " + std::string(kind_name(t.kind)) + " tensor");
  if (!accepts(t.flat_dtype) || size * 8 != safetensors::dtype_bits(t.flat_dtype)) {
    api_misuse("tensor " + detail::quoted(name) + ": the C++ type does not match dtype " +
               std::string(safetensors::dtype_name(t.flat_dtype)));
  }
}

void file_builder::set_flat_bytes(std::string_view name, std::vector<std::uint64_t> dims,
                                  std::span<const std::byte> bytes) {
  const tensor_layout& t = impl_->lookup(name);
  if (t.kind != tensor_kind::flat)
    api_misuse("tensor " + detail::quoted(name) + " is a " + std::string(kind_name(t.kind)) + " tensor");
  auto v = impl_->make(t, std::move(dims));
  if (bytes.size() != v->data.size()) {
    api_misuse("tensor " + detail::quoted(name) + ": " + std::to_string(bytes.size()) +
               " bytes given, dtype x dims needs " + std::to_string(v->data.size()));
  }
  if (t.flat_dtype == dtype::boolean) {
    const auto it = std::find_if(bytes.begin(), bytes.end(),
                                 [](std::byte b) { return std::to_integer<unsigned>(b) > 1; });
    if (it != bytes.end()) {
      writer_error(errc::mt_bool, "tensor " + detail::quoted(name) + ": element " +
                                      std::to_string(it - bytes.begin()) +
                                      " is a BOOL byte other than 0 or 1");
    }
  }
  if (!bytes.empty()) std::memcpy(v->data.data(), bytes.data(), bytes.size());
  impl_->install(std::move(v));
}

void file_builder::set_strings(std::string_view name, std::vector<std::uint64_t> dims,
                               std::span<const std::string> values) {
  const tensor_layout& t = impl_->lookup(name);
  if (t.kind != tensor_kind::blob || t.item.type != value_type::string) {
    api_misuse("tensor " + detail::quoted(name) + " is not a blob tensor of strings");
  }
  auto v = impl_->make(t, std::move(dims));
  if (values.size() != v->count) {
    api_misuse("tensor " + detail::quoted(name) + ": " + std::to_string(values.size()) +
               " strings given, dims need " + std::to_string(v->count));
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    v->blobs[i] =
        detail::utf8_bytes(values[i], "tensor " + detail::quoted(name) + ", element " + std::to_string(i));
  }
  impl_->install(std::move(v));
}

void file_builder::set_list_bytes(std::string_view name, std::vector<std::uint64_t> dims,
                                  std::span<const std::vector<std::byte>> values) {
  const tensor_layout& t = impl_->lookup(name);
  if (t.kind != tensor_kind::blob || t.item.type != value_type::list) {
    api_misuse("tensor " + detail::quoted(name) + " is not a blob tensor of lists");
  }
  auto v = impl_->make(t, std::move(dims));
  if (values.size() != v->count) {
    api_misuse("tensor " + detail::quoted(name) + ": " + std::to_string(values.size()) +
               " lists given, dims need " + std::to_string(v->count));
  }
  const type_layout& elem = *t.item.elem;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::string where = "tensor " + detail::quoted(name) + ", element " + std::to_string(i);
    if (values[i].size() % elem.size != 0) {
      api_misuse(where + ": " + std::to_string(values[i].size()) + " bytes is not a whole number of " +
                 std::to_string(elem.size) + "-byte elements");
    }
    const std::span<const std::byte> packed(values[i]);
    for (std::size_t j = 0; j < packed.size(); j += elem.size) {
      detail::check_fixed(elem, 0, packed.subspan(j, elem.size),
                          where + "[" + std::to_string(j / elem.size) + "]");
    }
    v->blobs[i] = values[i];
  }
  impl_->install(std::move(v));
}

record_writer& file_builder::set_records(std::string_view name, std::vector<std::uint64_t> dims) {
  const tensor_layout& t = impl_->lookup(name);
  if (t.kind != tensor_kind::record) api_misuse("tensor " + detail::quoted(name) + " is not a struct tensor");
  return impl_->install(impl_->make(t, std::move(dims)));
}

namespace {

// Dimension lengths of a logical value: the first array at each level; an
// empty array leaves the inner lengths at their lower bound.
std::vector<std::uint64_t> infer_dims(const tensor_layout& t, const nlohmann::json& value,
                                      const std::string& root) {
  std::vector<std::uint64_t> dims;
  const nlohmann::json* cur = &value;
  std::string where = root;
  for (std::size_t i = 0; i < t.rank(); ++i) {
    if (cur == nullptr) {
      dims.push_back(t.dims[i].min);
      continue;
    }
    if (!cur->is_array()) {
      writer_error(errc::mt_value, where + ": expected an array (dimension " + std::to_string(i) + "), got " +
                                       detail::json_kind(*cur));
    }
    dims.push_back(cur->size());
    if (cur->empty()) {
      cur = nullptr;
    } else {
      cur = &(*cur)[0];
      where += "/0";
    }
  }
  return dims;
}

// Calls `leaf(element, flat_index, where)` for every element, row-major,
// checking that the arrays are not ragged [MT_SHAPE].
template <class F>
void walk_dims(const nlohmann::json& v, std::span<const std::uint64_t> dims, std::size_t level,
               std::uint64_t& index, std::string& where, F&& leaf) {
  if (level == dims.size()) {
    leaf(v, index++, where);
    return;
  }
  if (!v.is_array())
    writer_error(errc::mt_value, where + ": expected an array (dimension " + std::to_string(level) + ")");
  if (v.size() != dims[level]) {
    writer_error(errc::mt_shape, where + ": " + std::to_string(v.size()) + " items, dimension " +
                                     std::to_string(level) + " has " + std::to_string(dims[level]) +
                                     " (ragged array)");
  }
  const std::size_t mark = where.size();
  for (std::size_t i = 0; i < v.size(); ++i) {
    where += '/';
    where += std::to_string(i);
    walk_dims(v[i], dims, level + 1, index, where, leaf);
    where.resize(mark);
  }
}

}  // namespace

void file_builder::set_json(std::string_view name, const nlohmann::json& value) {
  const tensor_layout& t = impl_->lookup(name);
  std::string where = detail::child_pointer("", name);
  auto v = impl_->make(t, infer_dims(t, value, where));
  std::uint64_t index = 0;
  const std::vector<std::uint64_t> dims = v->dims;
  switch (t.kind) {
    case tensor_kind::flat: {
      const unsigned bits = safetensors::dtype_bits(t.flat_dtype);
      walk_dims(value, dims, 0, index, where,
                [&](const nlohmann::json& e, std::uint64_t i, const std::string& w) {
                  const std::uint64_t code = detail::scalar_bits(t.flat_dtype, e, w);
                  if (bits >= 8) {
                    std::memcpy(v->data.data() + i * (bits / 8), &code, bits / 8);
                    return;
                  }
                  // Sub-byte types: element i occupies bits [i*w, (i+1)*w) of the
                  // little-endian bit stream (LSB first within each byte).
                  for (unsigned b = 0; b < bits; ++b) {
                    if (((code >> b) & 1U) == 0) continue;
                    const std::uint64_t pos = i * bits + b;
                    v->data[pos / 8] |= std::byte{static_cast<std::uint8_t>(1U << (pos % 8))};
                  }
                });
      break;
    }
    case tensor_kind::record: {
      const std::size_t ns = v->slot_count();
      walk_dims(value, dims, 0, index, where,
                [&](const nlohmann::json& e, std::uint64_t i, const std::string& w) {
                  std::string p = w;
                  detail::blob_sink sink{&v->blobs, static_cast<std::size_t>(i) * ns};
                  detail::encode_record(*t.record, e, v->data.data() + i * t.record->size, p, sink);
                });
      break;
    }
    case tensor_kind::blob: {
      walk_dims(value, dims, 0, index, where,
                [&](const nlohmann::json& e, std::uint64_t i, const std::string& w) {
                  std::string p = w;
                  std::array<std::byte, 16> unused{};
                  detail::blob_sink sink{&v->blobs, static_cast<std::size_t>(i)};
                  detail::encode_type(t.item, 0, e, unused.data(), p, sink);
                });
      break;
    }
  }
  impl_->install(std::move(v));
}

void file_builder::set_logical_value(const nlohmann::json& object) {
  if (!object.is_object()) writer_error(errc::mt_value, "the logical value must be a JSON object (§8.3)");
  for (const auto& [key, value] : object.items()) set_json(key, value);
}

void file_builder::erase(std::string_view name) {
  const auto it = impl_->tensors.find(name);
  if (it != impl_->tensors.end()) impl_->tensors.erase(it);
}

bool file_builder::contains(std::string_view name) const noexcept {
  return impl_->tensors.find(name) != impl_->tensors.end();
}

std::vector<const detail::tensor_values*> file_builder::values() const {
  std::vector<const detail::tensor_values*> out;
  for (const auto& [name, writer] : impl_->tensors) out.push_back(writer->values_.get());
  return out;
}

std::vector<std::byte> file_builder::serialize() const {
  const detail::prepared p = detail::prepare(impl_->schema, impl_->options, values());
  return safetensors::serialize(p.inputs, p.metadata, p.options);
}

void file_builder::write(const std::filesystem::path& path,
                         const tensogram::atomic_write_options& durability) const {
  detail::prepared p = detail::prepare(impl_->schema, impl_->options, values());
  p.options.sync = durability.sync;
  safetensors::write_file(path, p.inputs, p.metadata, p.options);
}

}  // namespace metatensor

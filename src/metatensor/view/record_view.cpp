// The views of a struct tensor (metatensor/view/record_view.hpp): one
// record, its fields by path, and one field of every record.
#include "metatensor/view/record_view.hpp"

#include <string>

#include "src/metatensor/text.hpp"
#include "tensogram/core/error.hpp"

namespace metatensor {

record_ref::located record_ref::locate(std::string_view path) const {
  const record_layout* rec = layout_;
  std::uint64_t offset = 0;
  std::string_view rest = path;
  while (true) {
    const auto dot = rest.find('.');
    const auto part = rest.substr(0, dot);
    const auto* f = rec->find(part);
    if (f == nullptr) throw tensogram::invalid_arg_error("record has no field " + detail::quoted(path));
    offset += f->offset;
    if (dot == std::string_view::npos) return located{offset, &f->type};
    if (f->type.type != value_type::record || !f->type.shape.empty() || !f->type.record) {
      throw tensogram::invalid_arg_error("field path " + detail::quoted(path) + ": " + detail::quoted(part) +
                                         " is not a nested record without fixed-array dims");
    }
    rec = f->type.record.get();
    rest = rest.substr(dot + 1);
  }
}

std::span<const std::byte> record_ref::blob_at(std::uint64_t offset) const noexcept {
  return detail::blob_at(heap_, bytes_.data() + offset);
}

std::string_view record_ref::string(std::string_view field) const {
  const auto loc = locate(field);
  if (loc.type->type != value_type::string || !loc.type->shape.empty()) {
    detail::throw_type_mismatch(field, detail::type_name(*loc.type), 0);
  }
  return detail::as_text(blob_at(loc.offset));
}

std::span<const std::byte> record_ref::blob(std::string_view field) const {
  const auto loc = locate(field);
  if ((loc.type->type != value_type::string && loc.type->type != value_type::list) ||
      !loc.type->shape.empty()) {
    detail::throw_type_mismatch(field, detail::type_name(*loc.type), 16);
  }
  return blob_at(loc.offset);
}

record_ref record_ref::sub(std::string_view field) const {
  const auto loc = locate(field);
  if (loc.type->type != value_type::record || !loc.type->shape.empty() || !loc.type->record) {
    detail::throw_type_mismatch(field, detail::type_name(*loc.type), 0);
  }
  const auto* rec = loc.type->record.get();
  return record_ref(bytes_.subspan(static_cast<std::size_t>(loc.offset), static_cast<std::size_t>(rec->size)),
                    heap_, rec);
}

record_ref record_view::operator[](std::uint64_t i) const {
  detail::check_index(*name_, i, count_);
  const auto size = static_cast<std::size_t>(record_->size);
  return record_ref(bytes_.subspan(static_cast<std::size_t>(i) * size, size), heap_, record_);
}

field_view record_view::field(std::string_view path) const {
  const record_ref probe(bytes_.first(0), heap_, record_);
  const auto loc = probe.locate(path);
  field_view v;
  v.path_ = *name_ + "." + std::string(path);
  v.type_ = loc.type;
  v.base_ = bytes_.data() + loc.offset;
  v.record_size_ = record_->size;
  v.element_size_ = loc.type->element_size();
  v.dims_.assign(dims_.begin(), dims_.end());
  v.dims_.insert(v.dims_.end(), loc.type->shape.begin(), loc.type->shape.end());
  v.strides_.resize(v.dims_.size());
  std::uint64_t stride = v.element_size_;
  for (std::size_t i = loc.type->shape.size(); i-- > 0;) {
    v.strides_[dims_.size() + i] = stride;
    stride *= loc.type->shape[i];
  }
  v.inner_count_ = detail::element_count(loc.type->shape);  // bounded by the record size
  stride = record_->size;
  for (std::size_t i = dims_.size(); i-- > 0;) {
    v.strides_[i] = stride;
    stride *= dims_[i];  // bounded by the primary's byte size
  }
  v.count_ = count_ * v.inner_count_;  // bounded by the primary's byte size
  v.heap_ = heap_;
  return v;
}

}  // namespace metatensor

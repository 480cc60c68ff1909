// String and blob elements of a field view (metatensor/view/field_view.hpp).
#include "metatensor/view/field_view.hpp"

#include "metatensor/view/blob_ref.hpp"

namespace metatensor {

std::string_view field_view::string(std::uint64_t flat_index) const {
  if (type_->type != value_type::string) detail::throw_type_mismatch(path_, detail::type_name(*type_), 0);
  return detail::as_text(detail::blob_at(heap_, element(flat_index)));
}

std::span<const std::byte> field_view::blob(std::uint64_t flat_index) const {
  if (type_->type != value_type::string && type_->type != value_type::list) {
    detail::throw_type_mismatch(path_, detail::type_name(*type_), 16);
  }
  return detail::blob_at(heap_, element(flat_index));
}

}  // namespace metatensor

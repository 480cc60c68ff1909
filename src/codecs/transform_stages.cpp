// Stages 1 and 2 (spec 03 §4, §5) behind their interfaces, and their tables.
// The kernels are in simple_packing.cpp and shuffle.cpp.
#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

#include "tensogram/codecs/pipeline_spec.hpp"
#include "tensogram/codecs/shuffle.hpp"
#include "tensogram/codecs/simple_packing.hpp"
#include "tensogram/core/error.hpp"

#include "stage_table.hpp"
#include "transform_stage.hpp"

namespace tensogram::codecs {

namespace {

// simple_packing (spec 03 §4): float64 values in the declared order → B-bit
// fields, MSB first; decoded to float64 in the requested order.
class simple_packing_stage final : public encoding_stage {
 public:
  explicit simple_packing_stage(const simple_packing_params& p) : params_(p) {}

  [[nodiscard]] std::uint64_t encoded_size(std::uint64_t n) const override {
    return simple_packing_size(n, params_.bits_per_value);
  }
  [[nodiscard]] std::size_t decoded_width() const noexcept override { return 8; }

  void check_input(std::span<const std::byte> in, std::uint64_t n) const override {
    if (in.size() != checked_element_bytes(n, 8)) {
      throw metadata_error("simple_packing input of " + std::to_string(in.size()) + " bytes does not hold " +
                           std::to_string(n) + " float64 values");
    }
  }
  void encode(std::span<const std::byte> in, std::uint64_t /*n*/, byte_order declared,
              std::span<std::byte> out, std::uint32_t threads) const override {
    simple_packing_encode(in, declared, params_, out, threads);
  }
  void decode(std::span<const std::byte> in, std::uint64_t n, byte_order out_order, std::span<std::byte> out,
              std::uint32_t threads) const override {
    simple_packing_decode(in, n, params_, out_order, out, threads);
  }
  // Whole bytes per value: a piece of the stream is a run of values.
  [[nodiscard]] std::size_t chunk_unit() const noexcept override {
    const std::uint32_t b = params_.bits_per_value;
    return b != 0 && b % 8 == 0 ? b / 8 : 0;
  }
  void encode_part(std::span<const std::byte> in, std::uint64_t offset, byte_order declared,
                   std::span<std::byte> out) const override {
    const std::uint64_t unit = params_.bits_per_value / 8;
    simple_packing_encode_part(in, offset / unit, out.size() / unit, declared, params_, out);
  }

  [[nodiscard]] stream_range locate(std::uint64_t offset, std::uint64_t count) const noexcept override {
    const std::uint64_t b = params_.bits_per_value;
    const std::uint64_t bit_start = offset * b;
    const std::uint64_t bit_end = bit_start + count * b;
    return {bit_start / 8, (bit_end + 7) / 8 - bit_start / 8, bit_start % 8};
  }
  void decode_located(std::span<const std::byte> in, std::uint64_t first_bit, std::uint64_t count,
                      byte_order out_order, std::span<std::byte> out) const override {
    simple_packing_decode_bits(in, first_bit, count, params_, out_order, out);
  }

 private:
  simple_packing_params params_;
};

// shuffle (spec 03 §5).
class shuffle_stage final : public filter_stage {
 public:
  explicit shuffle_stage(const shuffle_params& p) : element_size_(p.element_size) {}

  void apply(std::span<const std::byte> in, std::span<std::byte> out, std::uint32_t threads) const override {
    shuffle(in, element_size_, out, threads);
  }
  void undo(std::span<const std::byte> in, std::span<std::byte> out, std::uint32_t threads) const override {
    unshuffle(in, element_size_, out, threads);
  }

 private:
  std::size_t element_size_;
};

template <class Params, class Stage>
std::unique_ptr<const encoding_stage> make_encoding(encoding_params&& p) {
  return std::make_unique<const Stage>(std::get<Params>(std::move(p)));
}
template <class Params, class Stage>
std::unique_ptr<const filter_stage> make_filter(filter_params&& p) {
  return std::make_unique<const Stage>(std::get<Params>(std::move(p)));
}

template <class Params>
constexpr std::size_t encoding_index = stage_table::index_in<Params, encoding_params>::value;
template <class Params>
constexpr std::size_t filter_index = stage_table::index_in<Params, filter_params>::value;

// The encodings and filters of spec 02 §17, in their variants' order.
constexpr std::array<encoding_entry, 2> k_encodings = {{
    {.name = "none",
     .params_index = encoding_index<no_encoding>,
     .defaults = &stage_table::defaults<encoding_params, no_encoding>,
     .make = nullptr,
     .only_dtype = std::nullopt,
     .uses_threads = false},
    {.name = "simple_packing",
     .params_index = encoding_index<simple_packing_params>,
     .defaults = &stage_table::defaults<encoding_params, simple_packing_params>,
     .make = &make_encoding<simple_packing_params, simple_packing_stage>,
     .only_dtype = dtype::float64,
     .uses_threads = true},
}};
static_assert(stage_table::rows_follow_variant(k_encodings));

constexpr std::array<filter_entry, 2> k_filters = {{
    {.name = "none",
     .params_index = filter_index<no_filter>,
     .defaults = &stage_table::defaults<filter_params, no_filter>,
     .make = nullptr,
     .uses_threads = false},
    {.name = "shuffle",
     .params_index = filter_index<shuffle_params>,
     .defaults = &stage_table::defaults<filter_params, shuffle_params>,
     .make = &make_filter<shuffle_params, shuffle_stage>,
     .uses_threads = true},
}};
static_assert(stage_table::rows_follow_variant(k_filters));

}  // namespace

std::uint64_t checked_element_bytes(std::uint64_t n, std::uint64_t width) {
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(n, width, &bytes)) throw metadata_error("element count overflows usize");
  return bytes;
}

const encoding_entry& encoding_entry_of(const encoding_params& params) noexcept {
  return k_encodings[params.index()];
}

const filter_entry& filter_entry_of(const filter_params& params) noexcept {
  return k_filters[params.index()];
}

void check_element_type(const encoding_entry& e, dtype element_type) {
  if (e.only_dtype && *e.only_dtype != element_type) {
    throw encoding_error(std::string(e.name) + " only supports " + std::string(dtype_name(*e.only_dtype)) +
                         " dtype; got " + std::string(dtype_name(element_type)));
  }
}

bool is_known_encoding(std::string_view name) noexcept {
  return stage_table::find_row(k_encodings, name) != nullptr;
}

bool is_known_filter(std::string_view name) noexcept {
  return stage_table::find_row(k_filters, name) != nullptr;
}

encoding_params select_encoding(std::string_view name, dtype element_type) {
  const encoding_entry& e = stage_table::named(k_encodings, name, "encoding");
  check_element_type(e, element_type);
  return e.defaults();
}

filter_params select_filter(std::string_view name) {
  return stage_table::named(k_filters, name, "filter").defaults();
}

}  // namespace tensogram::codecs

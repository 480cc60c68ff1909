// Elements of a logical tensor as bytes (spec 06 §6.1–§6.4, §8.3): from
// their logical value (JSON), and raw fixed-size bytes checked as deep
// validation would check them. Not a public header.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "metatensor/layout.hpp"

namespace metatensor::detail {

/// Where the String and List contents of one element go: consecutive
/// BlobRef slots of the tensor's blob table.
struct blob_sink {
  std::vector<std::vector<std::byte>>* blobs = nullptr;
  std::size_t next = 0;
};

/// `text` as blob bytes; MT_UTF8 naming `where` when it is not UTF-8.
[[nodiscard]] std::vector<std::byte> utf8_bytes(std::string_view text, const std::string& where);

/// The logical value `v` of a record into the record bytes at `dst`, its
/// blobs into `sink`; MT_VALUE / MT_UTF8 naming the JSON Pointer `where`
/// (extended while descending, restored on return).
void encode_record(const record_layout& rec, const nlohmann::json& v, std::byte* dst, std::string& where,
                   blob_sink& sink);
/// The same for a value of type `t`, from its fixed-array dimension `k` on.
void encode_type(const type_layout& t, std::size_t k, const nlohmann::json& v, std::byte* dst,
                 std::string& where, blob_sink& sink);

/// Fixed-size bytes given raw (the elements of `t` below its first
/// `consumed` fixed-array dims): BOOL bytes must be 0 or 1 [MT_BOOL] and
/// record padding zero [MT_NONZERO_PADDING] (§6.2, §8.1), so that the file
/// passes deep validation.
void check_fixed(const type_layout& t, std::size_t consumed, std::span<const std::byte> bytes,
                 const std::string& where);
/// `check_fixed` for one whole record (`rec.size` bytes).
void check_record(const record_layout& rec, std::span<const std::byte> bytes, const std::string& where);

}  // namespace metatensor::detail

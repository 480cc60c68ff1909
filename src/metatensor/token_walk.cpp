// Stage 1 of simdjson as a tokenizer (token_walk.hpp).
#include "src/metatensor/token_walk.hpp"

#include <algorithm>
#include <cstdint>

#include "tensogram/core/memory.hpp"

namespace metatensor::detail {

std::optional<structural_index> structural_index::build(std::string_view text, std::size_t readable) {
  structural_index out;
  // Only stage 1 runs: the parser implementation alone (no DOM document, so
  // no tape or string buffer).
  const std::size_t capacity = std::max(text.size(), simdjson::dom::MINIMAL_DOCUMENT_CAPACITY);
  if (simdjson::get_active_implementation()->create_dom_parser_implementation(
          capacity, simdjson::DEFAULT_MAX_DEPTH, out.index_) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  tensogram::advise_huge_pages(out.index_->structural_indexes.get(), std::min(capacity, SIZE_MAX / 8) * 4);
  out.text_ = text.data();
  if (readable < text.size() || readable - text.size() < simdjson::SIMDJSON_PADDING) {
    out.copy_ = simdjson::padded_string(text);
    out.text_ = out.copy_.data();
  }
  if (out.index_->stage1(reinterpret_cast<const std::uint8_t*>(out.text_), text.size(),
                         simdjson::stage1_mode::regular) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  return out;
}

bool unescape(const simdjson::internal::dom_parser_implementation& json, std::string_view raw,
              std::string& out) {
  const std::size_t room = raw.size() + simdjson::SIMDJSON_PADDING;
  if (room >= std::size_t{4096}) {
    out.reserve(tensogram::huge_page_capacity(room));
    tensogram::advise_huge_pages(out.data(), out.capacity());
  } else {
    out.reserve(room);
  }
  if (raw.find('\\') == std::string_view::npos) {
    out.assign(raw);
    return true;
  }
  out.resize(room);
  auto* const dst = reinterpret_cast<std::uint8_t*>(out.data());
  const std::uint8_t* const end = json.parse_string(reinterpret_cast<const std::uint8_t*>(raw.data()), dst);
  if (end == nullptr) return false;
  out.resize(static_cast<std::size_t>(end - dst));
  return true;
}

bool undo_escapes(const simdjson::internal::dom_parser_implementation& json, std::string_view& s,
                  std::string& scratch) {
  if (s.find('\\') == std::string_view::npos) return true;
  if (!unescape(json, s, scratch)) return false;
  s = scratch;
  return true;
}

}  // namespace metatensor::detail

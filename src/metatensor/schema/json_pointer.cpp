#include "json_pointer.hpp"

#include <algorithm>
#include <utility>

namespace metatensor::detail {

namespace {

int hex_digit(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::string> percent_decode_fragment(std::string_view fragment) {
  std::string out;
  out.reserve(fragment.size());
  for (std::size_t i = 0; i < fragment.size(); ++i) {
    if (fragment[i] != '%') {
      out += fragment[i];
      continue;
    }
    if (i + 2 >= fragment.size()) return std::nullopt;
    const int hi = hex_digit(fragment[i + 1]);
    const int lo = hex_digit(fragment[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

std::optional<std::vector<std::string>> pointer_tokens(std::string_view pointer) {
  std::vector<std::string> tokens;
  if (pointer.empty()) return tokens;
  if (pointer.front() != '/') return std::nullopt;
  std::size_t pos = 1;
  while (true) {
    const std::size_t end = std::min(pointer.find('/', pos), pointer.size());
    std::string token;
    for (std::size_t i = pos; i < end; ++i) {
      if (pointer[i] != '~') {
        token += pointer[i];
      } else if (i + 1 < end && (pointer[i + 1] == '0' || pointer[i + 1] == '1')) {
        token += pointer[i + 1] == '0' ? '~' : '/';
        ++i;
      } else {
        return std::nullopt;
      }
    }
    tokens.push_back(std::move(token));
    if (end == pointer.size()) break;
    pos = end + 1;
  }
  return tokens;
}

std::optional<std::size_t> array_index(const std::string& token, std::size_t size) {
  if (token.empty() || token.size() > 19 || (token.size() > 1 && token[0] == '0')) return std::nullopt;
  std::size_t index = 0;
  for (const char c : token) {
    if (c < '0' || c > '9') return std::nullopt;
    index = index * 10 + static_cast<std::size_t>(c - '0');
  }
  if (index >= size) return std::nullopt;
  return index;
}

std::optional<std::vector<const nlohmann::json*>> pointer_path(const nlohmann::json& document,
                                                               const std::vector<std::string>& tokens) {
  std::vector<const nlohmann::json*> path;
  path.reserve(tokens.size());
  const nlohmann::json* at = &document;
  for (const std::string& token : tokens) {
    if (at->is_object()) {
      const auto it = at->find(token);
      if (it == at->end()) return std::nullopt;
      at = &*it;
    } else if (at->is_array()) {
      const auto i = array_index(token, at->size());
      if (!i) return std::nullopt;
      at = &(*at)[*i];
    } else {
      return std::nullopt;
    }
    path.push_back(at);
  }
  return path;
}

}  // namespace metatensor::detail

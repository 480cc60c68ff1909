// Helpers shared by the validation tests (validate_*_test.cpp, spec 02 §15):
// options per mode and level, report queries, and crafted one-object
// messages with a hand-laid header metadata frame and data frame.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <tensogram.hpp>
#include "test_support.hpp"

namespace tgtest::validation {

namespace tg = tensogram;
namespace cbor = tensogram::cbor;
using tg::issue_code;
using tg::validation_level;
using tg::validation_mode;
using opt_u64 = std::optional<std::uint64_t>;

inline tg::validate_options mode(validation_mode m, bool canonical = false) {
  return tg::validate_options::for_mode(m, canonical);
}

inline tg::validate_options up_to(validation_level l) {
  tg::validate_options o;
  o.max_level = l;
  return o;
}

// "code@level(severity)#object@offset; ..." for failure messages.
inline std::string summary(const tg::message_report& r) {
  std::string s;
  for (const tg::validation_issue& i : r.issues) {
    s += std::string(tg::issue_code_name(i.code)) + "@" + std::string(tg::validation_level_name(i.level)) +
         "(" + std::string(tg::issue_severity_name(i.severity)) + ")";
    if (i.object_index) s += "#" + std::to_string(*i.object_index);
    if (i.byte_offset) s += "@" + std::to_string(*i.byte_offset);
    s += ": " + i.description + "; ";
  }
  return s;
}

inline std::vector<const tg::validation_issue*> issues_with(const tg::message_report& r, issue_code c) {
  std::vector<const tg::validation_issue*> out;
  for (const tg::validation_issue& i : r.issues) {
    if (i.code == c) out.push_back(&i);
  }
  return out;
}

inline bool has_at(const tg::message_report& r, issue_code c, validation_level l) {
  return std::any_of(r.issues.begin(), r.issues.end(),
                     [&](const tg::validation_issue& i) { return i.code == c && i.level == l; });
}

inline tg::message_report check(std::span<const std::byte> msg, const tg::validate_options& o = {}) {
  return tg::validate_message(msg, o);
}

// Big-endian float32 bit patterns.
inline bytes be32(std::initializer_list<std::uint32_t> words) {
  bytes out;
  for (std::uint32_t w : words) {
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<std::byte>((w >> s) & 0xFF));
  }
  return out;
}

inline constexpr std::uint32_t f1 = 0x3F800000;  // 1.0f
inline constexpr std::uint32_t f2 = 0x40000000;  // 2.0f
inline constexpr std::uint32_t fnan = 0x7FC00000;
inline constexpr std::uint32_t finf = 0x7F800000;

// A CBOR map written in exactly the given key order (cbor::encode would
// sort it canonically).
inline bytes raw_map(const std::vector<std::pair<std::string, cbor::value>>& entries) {
  bytes out{static_cast<std::byte>(0xA0 + entries.size())};
  for (const auto& [k, v] : entries) {
    const bytes key = cbor::encode(cbor::value(k));
    const bytes val = cbor::encode(v);
    out.insert(out.end(), key.begin(), key.end());
    out.insert(out.end(), val.begin(), val.end());
  }
  return out;
}

inline bytes enc(const cbor::value& v) {
  return cbor::encode(v);
}

inline cbor::value f32_descriptor(std::vector<std::uint64_t> shape = {2}) {
  return tgtest::descriptor_value("float32", std::move(shape));
}

// HEADER_METADATA | HASHES_PRESENT: what a header metadata frame and hashed
// data frames declare.
inline constexpr std::uint16_t k_flags = 0x0081;

struct crafted {
  bytes msg;
  std::size_t data_frame = 0;  // offset of the (last) data frame
};

// Header metadata frame ({"base": [{}]}, 36 bytes at 24, padded to 64) and
// one data-object frame at 64.
inline crafted one_object(const bytes& descriptor, const bytes& payload, std::uint16_t flags = k_flags,
                          bool hashed = true) {
  tgtest::message_builder b(flags);
  b.frame(1, tgtest::metadata_with_base(1));
  b.data_frame(payload, descriptor, true, hashed);
  crafted c;
  c.data_frame = b.last_frame();
  c.msg = b.finish();
  return c;
}

inline crafted good() {
  return one_object(enc(f32_descriptor()), be32({f1, f2}));
}

}  // namespace tgtest::validation

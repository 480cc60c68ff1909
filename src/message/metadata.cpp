#include "tensogram/message/metadata.hpp"

#include <array>
#include <chrono>
#include <ctime>
#include <random>

#include "tensogram/cbor/codec.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/core/hex.hpp"

#ifndef TENSOGRAM_VERSION_STRING
#define TENSOGRAM_VERSION_STRING "0.0.0"
#endif

namespace tensogram {

namespace {

// Builds a text-keyed map from `v`, moving its entries out, later
// duplicates replacing earlier ones (spec 02 §1.5). Throws
// metadata_error("failed to deserialize <section>").
cbor::value text_keyed_map(cbor::value&& v, std::string_view section) {
  cbor::map* m = v.as_map();
  if (m == nullptr) {
    throw metadata_error("failed to deserialize " + std::string(section) + ": expected a map");
  }
  // A builder, not `value::set`: linear in the number of keys (untrusted).
  cbor::text_map_builder out;
  out.reserve(m->size());
  for (cbor::map_entry& e : *m) {
    std::string* k = e.key.as_text();
    if (k == nullptr) {
      throw metadata_error("failed to deserialize " + std::string(section) + ": non-text key");
    }
    out.set(std::move(*k), std::move(e.val));
  }
  return out.take();
}

}  // namespace

global_metadata global_metadata::from_cbor(const cbor::value& v) {
  return from_cbor(cbor::value(v));
}

global_metadata global_metadata::from_cbor(cbor::value&& v) {
  cbor::map* top = v.as_map();
  if (top == nullptr) throw metadata_error("global metadata CBOR is not a map");
  global_metadata g;
  cbor::text_map_builder free_form;
  for (cbor::map_entry& e : *top) {
    std::string* key = e.key.as_text();
    if (key == nullptr) throw metadata_error("global metadata CBOR has non-text top-level key");
    if (*key == "base") {
      cbor::array* arr = e.val.as_array();
      if (arr == nullptr) throw metadata_error("failed to deserialize base: expected an array");
      g.base.clear();
      g.base.reserve(arr->size());
      for (cbor::value& entry : *arr) g.base.push_back(text_keyed_map(std::move(entry), "base"));
    } else if (*key == "_reserved_") {
      g.reserved = text_keyed_map(std::move(e.val), "_reserved_");
    } else if (*key == "_extra_") {
      g.extra = text_keyed_map(std::move(e.val), "_extra_");
    } else {
      free_form.set(std::move(*key), std::move(e.val));
    }
  }
  cbor::value top_level = free_form.take();
  cbor::text_map_builder extra(std::move(*g.extra.as_map()));
  for (const cbor::map_entry& e : *top_level.as_map()) {
    const std::string& k = *e.key.as_text();
    if (extra.contains(k)) {
      throw metadata_error("ambiguous metadata: key '" + k +
                           "' appears both at the top level and inside _extra_");
    }
  }
  for (cbor::map_entry& e : *top_level.as_map()) extra.set(std::move(*e.key.as_text()), std::move(e.val));
  g.extra = extra.take();
  return g;
}

global_metadata global_metadata::from_cbor_bytes(std::span<const std::byte> bytes) {
  cbor::value v;
  try {
    v = cbor::decode(bytes);
  } catch (const metadata_error& e) {
    throw metadata_error(std::string("failed to parse CBOR: ") + std::string(e.detail()));
  }
  return from_cbor(std::move(v));
}

cbor::value global_metadata::to_cbor() const {
  cbor::value m = cbor::value::make_map();
  if (!base.empty()) m.set("base", cbor::value(cbor::array(base.begin(), base.end())));
  if (extra.size() != 0) m.set("_extra_", extra);
  if (reserved.size() != 0) m.set("_reserved_", reserved);
  return m;
}

std::vector<std::byte> global_metadata::to_cbor_bytes() const {
  return cbor::encode(to_cbor());
}

const cbor::value* lookup_path(const cbor::value& root, std::string_view path) {
  const cbor::value* cur = &root;
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = path.find('.', start);
    const std::string_view seg =
        path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    cur = cur->find(seg);  // nullptr for non-maps
    if (cur == nullptr) return nullptr;
    if (dot == std::string_view::npos) return cur;
    start = dot + 1;
  }
}

namespace {
std::string_view first_segment(std::string_view path) {
  return path.substr(0, path.find('.'));
}
}  // namespace

const cbor::value* global_metadata::get(std::string_view path) const {
  const std::string_view first = first_segment(path);
  if (first.empty()) return nullptr;
  if (first == "_extra_" || first == "extra") {
    if (first.size() == path.size()) return nullptr;
    return lookup_path(extra, path.substr(first.size() + 1));
  }
  if (first != "_reserved_") {
    for (const cbor::value& entry : base) {
      if (const cbor::value* hit = lookup_path(entry, path)) return hit;
    }
  }
  return lookup_path(extra, path);
}

const cbor::value* global_metadata::get_at(std::size_t i, std::string_view path) const {
  const std::string_view first = first_segment(path);
  if (first.empty() || first == "_reserved_" || i >= base.size()) return nullptr;
  return lookup_path(base[i], path);
}

common_split compute_common(std::span<const cbor::value> base) {
  common_split out;
  if (base.empty()) return out;
  if (const cbor::map* first = base[0].as_map()) {
    for (const cbor::map_entry& e : *first) {
      const std::string* k = e.key.as_text();
      if (k == nullptr || *k == "_reserved_") continue;
      bool everywhere = true;
      for (std::size_t i = 1; i < base.size() && everywhere; ++i) {
        const cbor::value* other = base[i].find(*k);
        everywhere = other != nullptr && *other == e.val;
      }
      if (everywhere) out.common.set(*k, e.val);
    }
  }
  out.remaining.reserve(base.size());
  for (const cbor::value& entry : base) {
    cbor::value rest = cbor::value::make_map();
    if (const cbor::map* m = entry.as_map()) {
      for (const cbor::map_entry& e : *m) {
        const std::string* k = e.key.as_text();
        if (k != nullptr && (*k == "_reserved_" || out.common.contains(*k))) continue;
        rest.as_map()->push_back(e);
      }
    }
    out.remaining.push_back(std::move(rest));
  }
  return out;
}

std::string_view library_version() noexcept {
  return TENSOGRAM_VERSION_STRING;
}

provenance provenance::current() {
  provenance p;
  p.encoder_name = std::string(library_encoder_name);
  p.encoder_version = std::string(library_version());

  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &utc);
  p.time = buf.data();

  // RFC 4122 version 4: 122 random bits, version nibble 4, variant 10xx.
  std::random_device rd;
  std::array<unsigned char, 16> u{};
  for (std::size_t i = 0; i < u.size(); i += 4) {
    const std::uint32_t r = rd();
    for (std::size_t k = 0; k < 4; ++k) u[i + k] = static_cast<unsigned char>(r >> (8 * k));
  }
  u[6] = static_cast<unsigned char>((u[6] & 0x0F) | 0x40);
  u[8] = static_cast<unsigned char>((u[8] & 0x3F) | 0x80);
  for (std::size_t i = 0; i < u.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) p.uuid.push_back('-');
    append_hex_byte(p.uuid, u[i]);
  }
  return p;
}

}  // namespace tensogram

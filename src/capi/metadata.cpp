// C ABI: metadata handles — the legacy coercing getters and the precise
// cursor API (spec 04 §C.4 "Metadata", spec 07 C2.4).
#include <algorithm>
#include <string>
#include <string_view>

#include "capi.hpp"
#include "handles.hpp"
#include "tensogram/cbor/value.hpp"
#include "tensogram/message/metadata.hpp"
#include "tensogram/message/metadata_view.hpp"

namespace {

namespace capi = tensogram::capi;
namespace cbor = tensogram::cbor;

// Orders a section map's entries by key, bytewise on the UTF-8 text (the
// reference holds sections in ordered maps); non-text keys go last. Stable,
// so duplicate keys keep their relative order and `find` their meaning.
void sort_section(cbor::value& section) {
  cbor::map* m = section.as_map();
  if (m == nullptr) return;
  std::stable_sort(m->begin(), m->end(), [](const cbor::map_entry& a, const cbor::map_entry& b) {
    const std::string* ka = a.key.as_text();
    const std::string* kb = b.key.as_text();
    if (ka == nullptr || kb == nullptr) return ka != nullptr && kb == nullptr;
    return *ka < *kb;
  });
}

tensogram::global_metadata sorted_copy(const tensogram::global_metadata& g) {
  tensogram::global_metadata copy = g;
  for (cbor::value& entry : copy.base) sort_section(entry);
  sort_section(copy.extra);
  sort_section(copy.reserved);
  return copy;
}

// The handle for the getters. They take `const tgm_metadata_t*` but fill
// the string cache, which is why one handle must not be shared between
// threads (spec 07 C2.3 "Threading").
tgm_metadata_t* meta_or_null(const char* fn, const tgm_metadata_t* meta) noexcept {
  return const_cast<tgm_metadata_t*>(capi::live_or_null(fn, capi::metadata_type, meta));
}

const tensogram::global_metadata* global_or_null(const char* fn, const tgm_metadata_t* meta) noexcept {
  const tgm_metadata_t* h = meta_or_null(fn, meta);
  return h != nullptr ? &h->meta.global() : nullptr;
}

// A legacy getter's string result, cached under `cache_key`.
const char* legacy_string(tgm_metadata_t& h, const cbor::value* v, const std::string& cache_key) {
  const std::optional<std::string> text = tensogram::legacy_text(v);
  if (!text) return nullptr;
  return h.cached(cache_key, [&] { return *text; });
}

// Shared body of the legacy getters: `get(global, key)` on a live handle
// with a valid key, else `fallback`. Keys that are NULL, empty or not UTF-8
// give the fallback (a non-UTF-8 key also records a last error).
template <typename T, typename Get>
T legacy_get(const char* fn, const tgm_metadata_t* meta, const char* key, T fallback, Get get) noexcept {
  return capi::guarded_value<T>(fallback, [&]() -> T {
    tgm_metadata_t* h = meta_or_null(fn, meta);
    if (h == nullptr || key == nullptr) return fallback;
    const std::string k = capi::text_arg(fn, "key", key);
    if (k.empty()) return fallback;
    return get(*h, k);
  });
}

const cbor::value* cursor_value(const tgm_value_t* v) noexcept {
  return capi::from_cursor(v);
}

// The typed extractors: `*out` is written only on success (spec 07 C2.4).
template <typename T, typename Get>
bool extract(const tgm_value_t* v, T* out, Get get) noexcept {
  const cbor::value* c = cursor_value(v);
  const std::optional<T> x = c != nullptr ? get(*c) : std::nullopt;
  if (!x || out == nullptr) return false;
  *out = *x;
  return true;
}

}  // namespace

tgm_metadata_t::tgm_metadata_t(const tensogram::global_metadata& g) : meta(sorted_copy(g)) {}

namespace tensogram::capi {

tgm_metadata_t* new_metadata(const global_metadata& g) {
  return new tgm_metadata_t(g);
}

const tgm_value_t* to_cursor(const cbor::value* v) noexcept {
  while (v != nullptr && v->is_tag()) v = &v->as_tag()->content();
  return reinterpret_cast<const tgm_value_t*>(v);
}

const cbor::value* from_cursor(const tgm_value_t* v) noexcept {
  return reinterpret_cast<const cbor::value*>(v);
}

}  // namespace tensogram::capi

extern "C" {

uint64_t tgm_metadata_version(const tgm_metadata_t* meta) {
  return meta_or_null("tgm_metadata_version", meta) != nullptr ? TGM_WIRE_VERSION : 0;
}

size_t tgm_metadata_num_objects(const tgm_metadata_t* meta) {
  const auto* g = global_or_null("tgm_metadata_num_objects", meta);
  return g != nullptr ? g->base.size() : 0;
}

const char* tgm_metadata_get_string(const tgm_metadata_t* meta, const char* key) {
  return legacy_get<const char*>("tgm_metadata_get_string", meta, key, nullptr,
                                 [](tgm_metadata_t& h, const std::string& k) -> const char* {
                                   if (k == "version") return "3";  // pseudo-key (spec 02 §12)
                                   return legacy_string(h, h.meta.global().get(k), "get|" + k);
                                 });
}

int64_t tgm_metadata_get_int(const tgm_metadata_t* meta, const char* key, int64_t default_val) {
  return legacy_get<int64_t>("tgm_metadata_get_int", meta, key, default_val,
                             [&](tgm_metadata_t& h, const std::string& k) -> int64_t {
                               if (k == "version") return TGM_WIRE_VERSION;
                               const cbor::value* v = h.meta.global().get(k);
                               return v != nullptr ? v->as_int64().value_or(default_val) : default_val;
                             });
}

double tgm_metadata_get_float(const tgm_metadata_t* meta, const char* key, double default_val) {
  return legacy_get<double>("tgm_metadata_get_float", meta, key, default_val,
                            [&](tgm_metadata_t& h, const std::string& k) -> double {
                              const cbor::value* v = h.meta.global().get(k);
                              return v != nullptr ? v->as_double().value_or(default_val) : default_val;
                            });
}

const char* tgm_metadata_get_string_at(const tgm_metadata_t* meta, size_t obj_index, const char* key) {
  return legacy_get<const char*>("tgm_metadata_get_string_at", meta, key, nullptr,
                                 [&](tgm_metadata_t& h, const std::string& k) -> const char* {
                                   return legacy_string(h, h.meta.global().get_at(obj_index, k),
                                                        "at|" + std::to_string(obj_index) + "|" + k);
                                 });
}

int64_t tgm_metadata_get_int_at(const tgm_metadata_t* meta, size_t obj_index, const char* key,
                                int64_t default_val) {
  return legacy_get<int64_t>("tgm_metadata_get_int_at", meta, key, default_val,
                             [&](tgm_metadata_t& h, const std::string& k) -> int64_t {
                               const cbor::value* v = h.meta.global().get_at(obj_index, k);
                               return v != nullptr ? v->as_int64().value_or(default_val) : default_val;
                             });
}

double tgm_metadata_get_float_at(const tgm_metadata_t* meta, size_t obj_index, const char* key,
                                 double default_val) {
  return legacy_get<double>("tgm_metadata_get_float_at", meta, key, default_val,
                            [&](tgm_metadata_t& h, const std::string& k) -> double {
                              const cbor::value* v = h.meta.global().get_at(obj_index, k);
                              return v != nullptr ? v->as_double().value_or(default_val) : default_val;
                            });
}

const char* tgm_metadata_object_to_json(const tgm_metadata_t* meta, size_t obj_index) {
  return capi::guarded_value<const char*>(nullptr, [&]() -> const char* {
    tgm_metadata_t* h = meta_or_null("tgm_metadata_object_to_json", meta);
    if (h == nullptr || obj_index >= h->meta.num_objects()) return nullptr;
    return h->cached("json|" + std::to_string(obj_index), [&] { return h->meta.object_to_json(obj_index); });
  });
}

const char* tgm_metadata_to_json(const tgm_metadata_t* meta) {
  return capi::guarded_value<const char*>(nullptr, [&]() -> const char* {
    tgm_metadata_t* h = meta_or_null("tgm_metadata_to_json", meta);
    if (h == nullptr) return nullptr;
    return h->cached("json", [&] { return h->meta.to_json(); });
  });
}

const tgm_value_t* tgm_metadata_get(const tgm_metadata_t* meta, const char* path) {
  return capi::guarded_value<const tgm_value_t*>(nullptr, [&]() -> const tgm_value_t* {
    const auto* g = global_or_null("tgm_metadata_get", meta);
    if (g == nullptr || path == nullptr) return nullptr;
    return capi::to_cursor(g->get(capi::text_arg("tgm_metadata_get", "path", path)));
  });
}

const tgm_value_t* tgm_metadata_get_at(const tgm_metadata_t* meta, size_t obj_index, const char* path) {
  return capi::guarded_value<const tgm_value_t*>(nullptr, [&]() -> const tgm_value_t* {
    const auto* g = global_or_null("tgm_metadata_get_at", meta);
    if (g == nullptr || path == nullptr) return nullptr;
    return capi::to_cursor(g->get_at(obj_index, capi::text_arg("tgm_metadata_get_at", "path", path)));
  });
}

bool tgm_metadata_has(const tgm_metadata_t* meta, const char* path) {
  return tgm_metadata_get(meta, path) != nullptr;
}

bool tgm_metadata_has_at(const tgm_metadata_t* meta, size_t obj_index, const char* path) {
  return tgm_metadata_get_at(meta, obj_index, path) != nullptr;
}

const tgm_value_t* tgm_metadata_object(const tgm_metadata_t* meta, size_t obj_index) {
  const auto* g = global_or_null("tgm_metadata_object", meta);
  if (g == nullptr || obj_index >= g->base.size()) return nullptr;
  return capi::to_cursor(&g->base[obj_index]);
}

const tgm_value_t* tgm_metadata_extra(const tgm_metadata_t* meta) {
  const auto* g = global_or_null("tgm_metadata_extra", meta);
  return g != nullptr ? capi::to_cursor(&g->extra) : nullptr;
}

const tgm_value_t* tgm_metadata_reserved(const tgm_metadata_t* meta) {
  const auto* g = global_or_null("tgm_metadata_reserved", meta);
  return g != nullptr ? capi::to_cursor(&g->reserved) : nullptr;
}

tgm_value_type tgm_value_get_type(const tgm_value_t* v) {
  const cbor::value* c = cursor_value(v);
  if (c == nullptr) return TGM_VALUE_TYPE_NULL;
  switch (c->type()) {
    case cbor::value::kind::boolean: return TGM_VALUE_TYPE_BOOL;
    case cbor::value::kind::integer: return TGM_VALUE_TYPE_INT;
    case cbor::value::kind::floating: return TGM_VALUE_TYPE_FLOAT;
    case cbor::value::kind::text: return TGM_VALUE_TYPE_STRING;
    case cbor::value::kind::bytes: return TGM_VALUE_TYPE_BYTES;
    case cbor::value::kind::array: return TGM_VALUE_TYPE_ARRAY;
    case cbor::value::kind::map: return TGM_VALUE_TYPE_MAP;
    case cbor::value::kind::null:
    case cbor::value::kind::tag: break;  // cursors never point at tags (to_cursor)
  }
  return TGM_VALUE_TYPE_NULL;
}

bool tgm_value_as_bool(const tgm_value_t* v, bool* out) {
  return extract(v, out, [](const cbor::value& c) { return c.as_bool(); });
}

bool tgm_value_as_i64(const tgm_value_t* v, int64_t* out) {
  return extract(v, out, [](const cbor::value& c) { return c.as_int64(); });
}

bool tgm_value_as_u64(const tgm_value_t* v, uint64_t* out) {
  return extract(v, out, [](const cbor::value& c) { return c.as_uint64(); });
}

bool tgm_value_as_f64(const tgm_value_t* v, double* out) {
  // The only widening extractor: integers become doubles.
  return extract(v, out, [](const cbor::value& c) { return c.as_double(); });
}

const char* tgm_value_as_string(const tgm_value_t* v, size_t* len_out) {
  const cbor::value* c = cursor_value(v);
  const std::string* s = c != nullptr ? c->as_text() : nullptr;
  if (s == nullptr || len_out == nullptr) return nullptr;
  *len_out = s->size();
  return s->data();  // never NULL, even for ""
}

const uint8_t* tgm_value_as_bytes(const tgm_value_t* v, size_t* len_out) {
  static constexpr uint8_t empty = 0;  // a non-NULL pointer for zero-length values
  const cbor::value* c = cursor_value(v);
  const cbor::byte_string* b = c != nullptr ? c->as_bytes() : nullptr;
  if (b == nullptr || len_out == nullptr) return nullptr;
  *len_out = b->size();
  return b->empty() ? &empty : reinterpret_cast<const uint8_t*>(b->data());
}

size_t tgm_value_array_len(const tgm_value_t* v) {
  const cbor::value* c = cursor_value(v);
  return c != nullptr && c->is_array() ? c->size() : 0;
}

const tgm_value_t* tgm_value_array_get(const tgm_value_t* v, size_t index) {
  const cbor::value* c = cursor_value(v);
  const cbor::array* a = c != nullptr ? c->as_array() : nullptr;
  if (a == nullptr || index >= a->size()) return nullptr;
  return capi::to_cursor(&(*a)[index]);
}

size_t tgm_value_map_len(const tgm_value_t* v) {
  const cbor::value* c = cursor_value(v);
  return c != nullptr && c->is_map() ? c->size() : 0;
}

const char* tgm_value_map_key_at(const tgm_value_t* v, size_t index, size_t* len_out) {
  const cbor::value* c = cursor_value(v);
  const cbor::map* m = c != nullptr ? c->as_map() : nullptr;
  if (m == nullptr || index >= m->size() || len_out == nullptr) return nullptr;
  const std::string* k = (*m)[index].key.as_text();
  if (k == nullptr) return nullptr;
  *len_out = k->size();
  return k->data();
}

const tgm_value_t* tgm_value_map_value_at(const tgm_value_t* v, size_t index) {
  const cbor::value* c = cursor_value(v);
  const cbor::map* m = c != nullptr ? c->as_map() : nullptr;
  if (m == nullptr || index >= m->size()) return nullptr;
  return capi::to_cursor(&(*m)[index].val);
}

const tgm_value_t* tgm_value_map_get(const tgm_value_t* v, const char* key) {
  return capi::guarded_value<const tgm_value_t*>(nullptr, [&]() -> const tgm_value_t* {
    const cbor::value* c = cursor_value(v);
    if (c == nullptr || key == nullptr) return nullptr;
    // One segment: dots are part of the key (spec 07 C2.4).
    return capi::to_cursor(c->find(capi::text_arg("tgm_value_map_get", "key", key)));
  });
}

void tgm_metadata_free(tgm_metadata_t* meta) {
  capi::free_handle("tgm_metadata_free", capi::metadata_type, meta);
}

}  // extern "C"

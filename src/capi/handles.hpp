// The C ABI's message and metadata handles, shared by decode, files,
// iterators and the async joins (spec 04 §C.2, spec 07 C2.3–C2.4).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "capi.hpp"
#include "tensogram/cbor/value.hpp"
#include "tensogram/message/decode.hpp"
#include "tensogram/message/metadata.hpp"
#include "tensogram/message/metadata_view.hpp"

/// A decoded message (whole, one object, or one step of an object
/// iterator). Accessor strings that the C++ API builds on demand are built
/// once here, so the borrowed pointers stay valid until the handle is freed.
struct tgm_message_t : tensogram::capi::handle_tag<0x7467'6d6d'6573'7361> {  // "tgmmessa"
  explicit tgm_message_t(tensogram::message m);

  tensogram::message msg;
  struct object_strings {
    std::string dtype;
    std::string hash_value;       // empty without a hash
    std::string descriptor_json;  // tgm_object_descriptor_json
  };
  std::vector<object_strings> strings;  // one per object
};

/// Metadata with the caches the C getters hand out pointers into.
///
/// The model is a private copy whose section maps (`base[i]`, `_extra_`,
/// `_reserved_`) are ordered by key, the order in which the reference's
/// cursors enumerate sections (spec 07 C2.4 `tgm_value_map_key_at`); nested
/// maps keep their wire (canonical) order. Cursors (`tgm_value_t*`) are
/// pointers to values inside it, so none has to be allocated.
struct tgm_metadata_t : tensogram::capi::handle_tag<0x7467'6d6d'6574'6164> {  // "tgmmetad"
  explicit tgm_metadata_t(const tensogram::global_metadata& g);

  tensogram::metadata meta;
  /// Legacy getter results and JSON texts, keyed by call; repeated calls
  /// return the same pointer (spec 07 C2.3 "Memory").
  std::unordered_map<std::string, std::string> strings;
  /// The cached C string for `key`, computed by `make` on first use.
  template <typename F>
  const char* cached(const std::string& key, F&& make) {
    auto it = strings.find(key);
    if (it == strings.end()) it = strings.emplace(key, make()).first;
    return it->second.c_str();
  }
};

namespace tensogram::capi {

inline constexpr const char* message_type = "tgm_message_t";
inline constexpr const char* metadata_type = "tgm_metadata_t";

/// A new handle owning `m` (the caller hands it to C).
[[nodiscard]] tgm_message_t* new_message(message m);
[[nodiscard]] tgm_metadata_t* new_metadata(const global_metadata& g);

/// Decode options from the C arguments (the int32_t flags of the older
/// functions convert with `!= 0`).
[[nodiscard]] inline decode_options decode_opts(bool native_byte_order, std::uint32_t threads,
                                                bool verify_hash, bool restore_non_finite = true) {
  return {.native_byte_order = native_byte_order,
          .threads = threads,
          .restore_non_finite = restore_non_finite,
          .verify_hash = verify_hash};
}

/// A cursor for C: tags are looked through (their content is what the
/// reference's cursors report), NULL stays NULL.
[[nodiscard]] const tgm_value_t* to_cursor(const cbor::value* v) noexcept;
[[nodiscard]] const cbor::value* from_cursor(const tgm_value_t* v) noexcept;

}  // namespace tensogram::capi

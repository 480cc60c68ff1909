// §8.2 step 4 without an nlohmann tree (issue 27): the file's
// `metatensor.layout` held as simdjson's parse from step 2, where its
// syntax is checked, to step 4, where it is compared with the entries
// recomputed from the schema (§7). A 200 k-tensor table then costs one
// simdjson parse and one walk instead of building and destroying a tree of
// a million nodes. Not a public header.
//
// Like every fast path of header reading (src/metatensor/json_dom.hpp), it
// only ever accepts: a text it cannot vouch for, or a table it does not
// find equal, goes to the reference path (`parse_strict_json`, then the
// nlohmann comparison in file.cpp), which names the first failure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <utility>

#include "metatensor/layout.hpp"

namespace simdjson::dom {
class parser;
}  // namespace simdjson::dom

namespace metatensor::detail {

class layout_table_dom {
 public:
  /// A logical tensor present in the file and its recomputed layout.
  using named_layout = std::pair<std::string_view, const tensor_layout*>;

  /// Step 2 for the layout table's text: nothing when the reference path
  /// must parse it (invalid or duplicated, an integer beyond 2^53 - 1, or a
  /// construct only the reference reads, see json_dom.hpp). `readable` as
  /// for `parse_strict_dom`. The parse lives in `parser` when given (which
  /// must then outlive the result and parse nothing else meanwhile), else
  /// in a parser of the result's own.
  [[nodiscard]] static std::unique_ptr<layout_table_dom> read(std::string_view text, std::size_t readable = 0,
                                                              simdjson::dom::parser* parser = nullptr);

  struct parsed;  // the parser holding the document (the .cpp file's)
  explicit layout_table_dom(std::unique_ptr<parsed> p);
  ~layout_table_dom();
  layout_table_dom(const layout_table_dom&) = delete;
  layout_table_dom& operator=(const layout_table_dom&) = delete;

  /// Step 4: true when the table is `{"tensors": {...}}` holding exactly
  /// the entries `layout_entry_json` renders for `tensors` (in name order,
  /// as the table's own keys must come to be checked here) with file
  /// alignment `alignment`. False means "ask the reference path".
  [[nodiscard]] bool equals(std::span<const named_layout> tensors, std::uint64_t alignment) const;

 private:
  std::unique_ptr<parsed> parsed_;
};

/// Step 4 without parsing: true when `text` is, byte for byte, the table a
/// metatensor writer of this library renders for `tensors` (nlohmann's
/// compact `dump()` of `layout_table_json`: no spaces, members in byte
/// order) and every tensor is flat. Such a text is a valid, strict JSON
/// value equal to the recomputed table, so it passes steps 2 and 4 without
/// a parse (issue 27: a 200 k-tensor table is ~38 MB). False means "parse
/// it": any other spelling, a name that `dump()` would escape, records and
/// blobs.
[[nodiscard]] bool canonical_layout_text_equals(std::string_view text,
                                                std::span<const layout_table_dom::named_layout> tensors,
                                                std::uint64_t alignment);

/// Step 4 from the text's tokens (simdjson's stage 1, no DOM:
/// src/metatensor/token_walk.hpp): true when every tensor is flat and `text`
/// is `{"tensors": {...}}` holding exactly their entries, in name order,
/// with their members in any order and any JSON spelling of the same
/// strings and integers (the layout table of a writer that lists members in
/// the order of §7, for example). Whatever it accepts is strict JSON equal
/// to the recomputed table. False means "parse it": another spelling (a
/// float for an integer), an unequal table, records and blobs. `readable` as
/// for `parse_strict_dom`.
[[nodiscard]] bool flat_layout_tokens_equal(std::string_view text, std::size_t readable,
                                            std::span<const layout_table_dom::named_layout> tensors,
                                            std::uint64_t alignment);

}  // namespace metatensor::detail

// Opening a metatensor file: structural validation (spec 06 §3, §5–§7, §8.1,
// §8.2) and the zero-copy views of §9.
//
// The checks run as passes in the order of §8.2, each over the whole file,
// so the first failure reported is the one the spec prescribes:
//   1. base layer (safetensors::file, §2 rules 1–10);
//   2. §3.1 keys in table order, then unknown `metatensor.` keys;
//   3. the schema (§4) and the layout it implies (§5–§6.5);
//   4. layout table equality (§7);
//   5. tensor set (§3.2);
//   6. dtypes and shapes (§5.1);
//   7. padding tensors (§3.3), header length (§3.4), placement (§6.6);
//   8. BlobRefs (§6.4), deferred: never at open.
// Opening reads only the header, so it costs O(header) whatever the kinds
// and sizes of the tensors (§8.1 lets a reader defer the BlobRef checks of
// a tensor until it is first accessed). Step 8 runs per tensor: for files
// from `open` / `from_buffer`, automatically and once, before the first
// view or logical value of that tensor hands out a BlobRef; for
// `from_header_image` files, when the caller runs `file::check_blob_refs`
// once the tensor's bytes have arrived (§10.7).
#include "metatensor/file.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "src/metatensor/json_dom.hpp"
#include "src/metatensor/schema/layout_table.hpp"
#include "src/metatensor/schema/schema_fast_path.hpp"
#include "src/metatensor/strict_json.hpp"
#include "src/metatensor/text.hpp"
#include "src/metatensor/view/blob_slots.hpp"
#include "src/metatensor/view/layout_table_check.hpp"
#include "tensogram/core/memory.hpp"

namespace metatensor {

// §9: typed zero-copy views reinterpret little-endian bytes in place.
static_assert(
    std::endian::native == std::endian::little,
    "metatensor views need a little-endian host (metatensor-format §9: big-endian readers convert)");

namespace {

[[noreturn]] void fail(errc code, const std::string& detail) {
  throw error(code, detail);
}

std::string num(std::uint64_t v) {
  return std::to_string(v);
}

constexpr std::string_view pad_prefix = "__pad__";
constexpr std::string_view reserved_prefix = "metatensor.";

using detail::blob_slot;
using detail::collect_slots;

// The checked product of `dims` (0 as soon as a dimension is 0).
std::optional<std::uint64_t> product(std::span<const std::uint64_t> dims) {
  std::uint64_t n = 1;
  for (auto d : dims) {
    if (d == 0) return 0;
  }
  for (auto d : dims) {
    if (n > UINT64_MAX / d) return std::nullopt;
    n *= d;
  }
  return n;
}

// §3.1: decimal, no sign, no leading zeros, a power of two in [16, 65536].
std::optional<std::uint64_t> parse_alignment(std::string_view s) {
  if (s.empty() || s.size() > 5 || s.front() == '0') return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (v < 16 || v > 65536 || !std::has_single_bit(v)) return std::nullopt;
  return v;
}

}  // namespace

// ---------------------------------------------------------------------------
// State shared by every copy of a file.

struct file::state {
  struct logical {
    const tensor_layout* layout = nullptr;
    const safetensors::tensor_view* primary = nullptr;
    const safetensors::tensor_view* heap = nullptr;
    std::span<const std::uint64_t> dims;  // the primary's shape without its trailing dimension
    std::uint64_t count = 0;              // product(dims)
    // Step 8 passed for this tensor (files that check on first access).
    // Threads racing on a first access may each run the (read-only) check;
    // a failure leaves it false, so every access reports the error again.
    mutable std::atomic<bool> blob_refs_ok{false};
  };

  explicit state(safetensors::file b) : base(std::move(b)) {}

  safetensors::file base;
  std::uint64_t alignment = 0;
  std::uint64_t memory_alignment = 0;  // the largest R(t) of the file, at least A
  compiled_schema schema;
  // The file's `metatensor.layout` (text in `base`'s metadata), parsed on
  // the first call of `file::layout_table`: opening compares the table as
  // text, tokens or simdjson's parse and builds no tree
  // (layout_table_check.hpp).
  std::string_view layout_text;
  mutable std::once_flag layout_parsed;
  mutable nlohmann::json layout_table;
  // The logical tensors present, in the order of the schema's table (by
  // name). A table, not a tree: 200 k tensors per header (issue 27).
  // Built at its full size (a logical cannot move), hence the allocator:
  // the value-initialisation of 200 k rows then touches huge pages.
  std::vector<logical, tensogram::advised_allocator<logical>> tensors;
  // Run step 8 on first access (open / from_buffer). False for header
  // images, whose tensor bytes arrive later: a pass on not-yet-written
  // (zero) bytes must not be remembered.
  bool checks_on_access = false;

  [[nodiscard]] const logical* find(std::string_view name) const noexcept {
    return detail::find_by_name(tensors, name,
                                [](const logical& l) -> const std::string& { return l.layout->name; });
  }

  [[nodiscard]] const logical& at(std::string_view name) const {
    const logical* l = find(name);
    if (l == nullptr) throw tensogram::invalid_arg_error("no logical tensor named " + detail::quoted(name));
    return *l;
  }
};

namespace {

using state = file::state;

// During validation: the logical tensor whose primary is physical tensor i
// of `base.tensors()`, or null (saves a search by name per tensor).
using logical_by_physical = std::vector<const state::logical*>;

const json_errors layout_errors{errc::mt_layout_json, errc::mt_layout_json, "layout table"};

// The layout table's text parsed by the reference path, with §3.1's bound
// on integers (the step 2 errors of the layout table).
nlohmann::json parse_layout_table(std::string_view text) {
  auto out = parse_strict_json(text, layout_errors);
  if (const auto big = first_oversized_integer(out); !big.empty()) {
    fail(errc::mt_layout_json, "layout table: integer " + big + " exceeds 2^53-1");
  }
  return out;
}

// Step 2: §3.1 keys in table order. Returns the parsed schema and the
// layout table: simdjson's parse when the fast path vouches for it, else
// the reference path's value.
struct header_keys {
  std::uint64_t alignment = 0;
  // Compiled by the fast path (it only accepts, so running it before the
  // later step 2 checks changes no verdict); else parsed for step 3.
  std::optional<compiled_schema> fast_schema;
  nlohmann::json schema;
  std::string_view layout_text;
  std::size_t layout_readable = 0;  // bytes readable from its first (`parse_strict_dom`)
  // Not read yet: step 4 first compares the text with the canonical
  // rendering of the recomputed table (see `read_layout_table`).
  bool layout_deferred = false;
  std::unique_ptr<detail::layout_table_dom> layout_dom;
  std::optional<nlohmann::json> layout;
};

// Step 2 for the layout table: simdjson's parse, else the reference
// path's value (which throws MT_LAYOUT_JSON for a text that is no strict
// JSON).
void read_layout_table(header_keys& keys, simdjson::dom::parser& parser) {
  keys.layout_deferred = false;
  keys.layout_dom = detail::layout_table_dom::read(keys.layout_text, keys.layout_readable, &parser);
  if (!keys.layout_dom) keys.layout = parse_layout_table(keys.layout_text);
}

bool is_known_key(std::string_view key) {
  return key == "metatensor.version" || key == "metatensor.endianness" || key == "metatensor.alignment" ||
         key == "metatensor.schema" || key == "metatensor.layout";
}

// `parser` reads the layout table, whose parse it holds until step 4 (see
// `validate`).
header_keys check_keys(const safetensors::file& base, simdjson::dom::parser& parser) {
  const auto& md = base.metadata();
  const auto get = [&](const char* key) -> const std::string* {
    const auto it = md.find(key);
    return it == md.end() ? nullptr : &it->second;
  };
  header_keys out;
  const auto* version = get("metatensor.version");
  if (version == nullptr) {
    fail(errc::mt_not_metatensor, base.has_metadata() ? "__metadata__ has no \"metatensor.version\" key"
                                                      : "the header has no __metadata__");
  }
  if (*version != "1")
    fail(errc::mt_version, "metatensor.version is " + detail::quoted(*version) + ", expected \"1\"");
  const auto* endianness = get("metatensor.endianness");
  if (endianness == nullptr) fail(errc::mt_endianness, "metatensor.endianness is missing");
  if (*endianness != "little") {
    fail(errc::mt_endianness,
         "metatensor.endianness is " + detail::quoted(*endianness) + ", expected \"little\"");
  }
  const auto* alignment = get("metatensor.alignment");
  if (alignment == nullptr) fail(errc::mt_alignment_value, "metatensor.alignment is missing");
  const auto a = parse_alignment(*alignment);
  if (!a) {
    fail(errc::mt_alignment_value, "metatensor.alignment is " + detail::quoted(*alignment) +
                                       ", expected a power of two from 16 to 65536 in plain decimal");
  }
  out.alignment = *a;
  // Shared with the file's `__metadata__`, and so with the compiled schema.
  const auto schema = base.metadata_value("metatensor.schema");
  if (schema == nullptr) fail(errc::mt_schema_json, "metatensor.schema is missing");
  const auto* layout = get("metatensor.layout");
  const auto unknown = std::find_if(md.begin(), md.end(), [](const auto& kv) {
    return kv.first.starts_with(reserved_prefix) && !is_known_key(kv.first);
  });
  // Reading the table may wait for step 4 when nothing between can fail:
  // the fast path compiles the schema (step 3 passes), and no unknown key
  // fails the rest of step 2. A table that is no strict JSON then fails at
  // step 4 with the same MT_LAYOUT_JSON, the first failure of the file. The
  // fast path reads the schema from its tokens, without a parser; the base
  // layer left room for simdjson's padding after these strings
  // (`parse_ready_copy`): both are read in place.
  const bool may_defer = unknown == md.end();
  out.fast_schema = detail::schema_fast_path::compile_embedded(schema);
  if (!out.fast_schema) {
    out.schema =
        parse_strict_json(*schema, json_errors{errc::mt_schema_json, errc::mt_schema_json, "schema"});
    if (const auto big = first_oversized_integer(out.schema); !big.empty()) {
      fail(errc::mt_schema_json, "schema: integer " + big + " exceeds 2^53-1");
    }
  }
  if (layout == nullptr) fail(errc::mt_layout_json, "metatensor.layout is missing");
  out.layout_text = *layout;
  out.layout_readable = layout->capacity();
  out.layout_deferred = out.fast_schema && may_defer;
  if (!out.layout_deferred) read_layout_table(out, parser);
  if (unknown != md.end()) {
    fail(errc::mt_unknown_key, "unknown reserved __metadata__ key " + detail::quoted(unknown->first));
  }
  return out;
}

// True when `table` equals the table recomputed from the schema (§7),
// compared entry by entry in name order (`s.tensors` and a JSON object
// both sort their keys byte-wise) without rendering the recomputed table.
bool layout_table_matches(const state& s, const nlohmann::json& table) {
  if (!table.is_object() || table.size() != 1) return false;
  const auto it = table.find("tensors");
  if (it == table.end() || !it->is_object() || it->size() != s.tensors.size()) return false;
  auto entry = it->begin();
  for (const auto& lt : s.tensors) {
    if (entry.key() != lt.layout->name ||
        !detail::layout_entry_equals(entry.value(), *lt.layout, s.alignment)) {
      return false;
    }
    ++entry;
  }
  return true;
}

// Step 4: the file's table must equal the recomputed one (§7).
void check_layout_table(const state& s, const nlohmann::json& table) {
  if (layout_table_matches(s, table)) return;
  // The reference comparison decides and names the first difference.
  std::vector<std::string> present;
  present.reserve(s.tensors.size());
  for (const auto& lt : s.tensors) present.emplace_back(lt.layout->name);
  const nlohmann::json expected = layout_table_json(s.schema, present, s.alignment);
  if (expected == table) return;
  // Name the first difference: its JSON Pointer and both values.
  const auto patch = nlohmann::json::diff(table, expected);
  std::string detail = "metatensor.layout differs from the layout recomputed from the schema";
  if (patch.is_array() && !patch.empty() && patch[0].contains("path") && patch[0].contains("op")) try {
      const std::string path = patch[0]["path"].get<std::string>();
      const std::string op = patch[0]["op"].get<std::string>();
      const nlohmann::json::json_pointer ptr(path);
      detail += " at " + (path.empty() ? std::string("the root") : path) + ": ";
      if (op == "remove") {
        detail += "the file has " + table.at(ptr).dump() + ", the recomputed table has nothing";
      } else if (op == "add") {
        detail += "the file has nothing, the recomputed table has " + expected.at(ptr).dump();
      } else {
        detail +=
            "the file has " + table.at(ptr).dump() + ", the recomputed table has " + expected.at(ptr).dump();
      }
    } catch (const nlohmann::json::exception&) {
      // The detail is best effort; the verdict stands.
    }
  fail(errc::mt_layout_mismatch, detail);
}

// Step 5: exactly primaries + heaps + __pad__<j> (§3.2), required present.
void check_tensor_set(const state& s, const logical_by_physical& by_physical) {
  std::uint64_t next_pad = 0;
  const auto physical = s.base.tensors();
  for (std::size_t i = 0; i < physical.size(); ++i) {  // increasing begin order
    const auto& t = physical[i];
    const std::string_view name = t.name();
    if (by_physical[i] != nullptr) continue;
    if (const auto hash = name.rfind("#heap"); hash != std::string_view::npos && hash + 5 == name.size()) {
      const auto* owner = s.find(name.substr(0, hash));
      if (owner != nullptr && owner->layout->has_heap) continue;
      fail(errc::mt_tensor_set,
           "physical tensor " + detail::quoted(name) + " is not the heap of a logical tensor with one");
    }
    if (name.starts_with(pad_prefix)) {
      if (name != std::string(pad_prefix) + num(next_pad)) {
        fail(errc::mt_tensor_set, "padding tensor " + detail::quoted(name) + " at data offset " +
                                      num(t.begin()) + " should be named \"__pad__" + num(next_pad) + "\"");
      }
      ++next_pad;
      continue;
    }
    fail(errc::mt_tensor_set,
         "physical tensor " + detail::quoted(name) + " is not a root property of the schema");
  }
  for (const auto& lt : s.tensors) {
    if (lt.layout->has_heap && lt.heap == nullptr) {
      fail(errc::mt_tensor_set, "logical tensor " + detail::quoted(lt.layout->name) + " has no heap tensor " +
                                    detail::quoted(lt.layout->heap_name()));
    }
  }
  // Both tables are in the schema's order: one walk finds the missing.
  auto present = s.tensors.begin();
  for (const auto& t : s.schema.tensors()) {
    if (present != s.tensors.end() && present->layout == &t) {
      ++present;
    } else if (t.required) {
      fail(errc::mt_tensor_set, "required logical tensor " + detail::quoted(t.name) + " is missing");
    }
  }
}

// Step 6: §5.1 dtypes and shapes; sets the logical dims.
void check_dtypes_and_shapes(state& s) {
  for (auto& lt : s.tensors) {
    const auto& l = *lt.layout;
    const std::string& name = l.name;
    const auto& p = *lt.primary;
    if (p.type() != l.primary_dtype()) {
      fail(errc::mt_tensor_dtype, "tensor " + detail::quoted(name) + " has dtype " +
                                      std::string(dtype_name(p.type())) + ", the schema needs " +
                                      std::string(dtype_name(l.primary_dtype())));
    }
    const auto shape = p.shape();
    const auto trailing = l.trailing_dim();
    const std::size_t want_rank = l.rank() + (trailing ? 1 : 0);
    if (shape.size() != want_rank) {
      fail(errc::mt_shape, "tensor " + detail::quoted(name) + " has rank " + num(shape.size()) +
                               ", the schema needs " + num(want_rank));
    }
    if (trailing && shape.back() != *trailing) {
      fail(errc::mt_shape,
           "tensor " + detail::quoted(name) + " has trailing dimension " + num(shape.back()) + ", the " +
               (l.kind == tensor_kind::blob ? "BlobRef size is " : "record size is ") + num(*trailing));
    }
    for (std::size_t i = 0; i < l.rank(); ++i) {
      const auto& b = l.dims[i];
      if (shape[i] < b.min || (b.max && shape[i] > *b.max)) {
        fail(errc::mt_shape, "tensor " + detail::quoted(name) + " dimension " + num(i) + " is " +
                                 num(shape[i]) + ", the schema allows " + num(b.min) + ".." +
                                 (b.max ? num(*b.max) : std::string("unbounded")));
      }
    }
    lt.dims = shape.first(l.rank());
    // The primary's byte size bounds every partial product (§2 rule 8).
    lt.count = product(lt.dims).value_or(0);
    if (lt.heap != nullptr) {
      if (lt.heap->type() != dtype::u8) {
        fail(errc::mt_tensor_dtype, "heap " + detail::quoted(lt.heap->name()) + " has dtype " +
                                        std::string(dtype_name(lt.heap->type())) + ", expected U8");
      }
      if (lt.heap->shape().size() != 1) {
        fail(errc::mt_shape, "heap " + detail::quoted(lt.heap->name()) + " has rank " +
                                 num(lt.heap->shape().size()) + ", expected 1");
      }
    }
  }
}

// R(t) of a non-padding physical tensor (§6.5).
std::uint64_t placement(const state& s, const logical_by_physical& by_physical,
                        const safetensors::tensor_view& t) {
  const auto i = static_cast<std::size_t>(&t - s.base.tensors().data());
  if (const auto* lt = by_physical[i]) return lt->layout->primary_placement(s.alignment);
  return s.find(t.name().substr(0, t.name().size() - 5))->layout->heap_placement(s.alignment);
}

bool is_padding(const safetensors::tensor_view& t) {
  return t.name().starts_with(pad_prefix);
}

// Step 7: §3.3 padding tensors, §3.4 header length, §6.6 placement.
void check_placement(state& s, const logical_by_physical& by_physical) {
  const auto tensors = s.base.tensors();
  const std::uint64_t d = s.base.data_offset();
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const auto& p = tensors[i];
    if (!is_padding(p)) continue;
    const auto shape = p.shape();
    if (p.type() != dtype::u8 || shape.size() != 1 || shape[0] == 0) {
      fail(errc::mt_padding,
           "padding tensor " + detail::quoted(p.name()) + " must be U8 of shape [k] with k >= 1");
    }
    std::size_t j = i + 1;
    while (j < tensors.size() && tensors[j].begin() == tensors[j].end()) ++j;
    if (j == tensors.size())
      fail(errc::mt_padding, "padding tensor " + detail::quoted(p.name()) + " ends the file");
    const auto& next = tensors[j];
    if (is_padding(next)) {
      fail(errc::mt_padding, "padding tensor " + detail::quoted(p.name()) +
                                 " is followed by padding tensor " + detail::quoted(next.name()));
    }
    const std::uint64_t r = placement(s, by_physical, next);
    const std::uint64_t abs = d + p.begin();
    // abs <= 2^53 and r <= 2^16: align_up cannot overflow.
    const std::uint64_t want = detail::align_up(abs, r) - abs;
    if (want == 0) {
      fail(errc::mt_padding, "padding tensor " + detail::quoted(p.name()) + " at file offset " + num(abs) +
                                 " is not needed: " + detail::quoted(next.name()) + " needs alignment " +
                                 num(r));
    }
    if (shape[0] != want) {
      fail(errc::mt_padding, "padding tensor " + detail::quoted(p.name()) + " is " + num(shape[0]) +
                                 " bytes, " + detail::quoted(next.name()) + " needs exactly " + num(want) +
                                 " to reach alignment " + num(r));
    }
  }
  if (d % s.alignment != 0) {
    fail(errc::mt_misaligned,
         "data section starts at file offset " + num(d) + ", not a multiple of A = " + num(s.alignment));
  }
  std::uint64_t largest = s.alignment;
  for (const auto& t : tensors) {
    if (is_padding(t)) continue;
    const std::uint64_t r = placement(s, by_physical, t);
    largest = std::max(largest, r);
    if (t.begin() == t.end()) continue;
    if ((d + t.begin()) % r != 0) {
      fail(errc::mt_misaligned, "tensor " + detail::quoted(t.name()) + " starts at file offset " +
                                    num(d + t.begin()) + ", not a multiple of its alignment " + num(r));
    }
  }
  s.memory_alignment = largest;
}

// Step 8: every BlobRef inside its heap, List blobs aligned (§6.4).
void check_blob(const std::string& where, blob_ref ref, const type_layout& type, std::uint64_t heap_size) {
  if (ref.length > heap_size || ref.offset > heap_size - ref.length) {
    fail(errc::mt_blob_bounds, where + ": blob [offset " + num(ref.offset) + ", length " + num(ref.length) +
                                   "] exceeds the heap of " + num(heap_size) + " bytes");
  }
  if (type.type == value_type::list && type.elem) {
    const std::uint64_t size = type.elem->size;
    const std::uint64_t align = type.elem->align;
    if (size == 0 || ref.length % size != 0) {
      fail(errc::mt_blob_align, where + ": list blob length " + num(ref.length) +
                                    " is not a multiple of the element size " + num(size));
    }
    if (align != 0 && ref.offset % align != 0) {
      fail(errc::mt_blob_align, where + ": list blob offset " + num(ref.offset) +
                                    " is not a multiple of the element alignment " + num(align));
    }
  }
}

// The cheap test run for every BlobRef; `check_blob` explains a failure.
bool blob_ok(blob_ref ref, const type_layout& type, std::uint64_t heap_size) noexcept {
  if (ref.length > heap_size || ref.offset > heap_size - ref.length) return false;
  if (type.type != value_type::list || !type.elem) return true;
  const std::uint64_t size = type.elem->size;
  const std::uint64_t align = type.elem->align;
  return size != 0 && ref.length % size == 0 && (align == 0 || ref.offset % align == 0);
}

// Step 8 for one logical tensor: the BlobRefs of its index or records
// against its heap. Shared by `validate` (every tensor, at open) and
// `file::check_blob_refs` (one tensor, once its bytes arrived: §8.1 lets a
// reader defer these checks, §10.7 runs them per tensor).
void check_tensor_blob_refs(const state::logical& lt) {
  const std::string& name = lt.layout->name;
  const auto& l = *lt.layout;
  if (lt.heap == nullptr) return;
  const std::uint64_t heap_size = lt.heap->bytes().size();
  const auto bytes = lt.primary->bytes();
  if (l.kind == tensor_kind::blob) {
    for (std::uint64_t i = 0; i < lt.count; ++i) {
      const auto ref = detail::read_blob_ref(bytes.data() + i * 16);
      if (!blob_ok(ref, l.item, heap_size))
        check_blob(detail::quoted(name) + " element " + num(i), ref, l.item, heap_size);
    }
  } else if (l.kind == tensor_kind::record && l.record) {
    std::vector<blob_slot> slots;
    collect_slots(*l.record, 0, slots);
    const std::uint64_t rec = l.record->size;
    for (std::uint64_t i = 0; i < lt.count; ++i) {
      for (const auto& slot : slots) {
        const auto ref = detail::read_blob_ref(bytes.data() + i * rec + slot.offset);
        if (!blob_ok(ref, *slot.type, heap_size)) {
          check_blob(detail::quoted(name) + " record " + num(i) + " at byte " + num(slot.offset), ref,
                     *slot.type, heap_size);
        }
      }
    }
  }
}

// Step 8 for one tensor, remembered when the file checks on access.
void require_blob_refs(const state& s, const state::logical& lt) {
  if (lt.heap == nullptr) return;
  if (!s.checks_on_access) {
    check_tensor_blob_refs(lt);
    return;
  }
  if (lt.blob_refs_ok.load(std::memory_order_acquire)) return;
  check_tensor_blob_refs(lt);
  lt.blob_refs_ok.store(true, std::memory_order_release);
}

// Steps 1-7 of §8.2: everything that reads only the header.
std::shared_ptr<state> validate(tensogram::buffer image) {
  // The parser of the layout table (the header and the schema are read
  // from their tokens, without one: issue 27). It outlives `keys`, which
  // holds the layout table's parse.
  simdjson::dom::parser parser;
  auto s = std::make_shared<state>(safetensors::file::from_buffer(std::move(image)));  // step 1
  auto keys = check_keys(s->base, parser);                                             // step 2
  s->alignment = keys.alignment;
  s->schema = keys.fast_schema ? std::move(*keys.fast_schema)  // step 3
                               : compile_schema(std::move(keys.schema), schema_source::embedded);
  // The logical tensors present: physical names that are root properties.
  const auto physical = s->base.tensors();
  logical_by_physical by_physical(physical.size(), nullptr);
  // Writers usually place tensors in name order within a dtype class, so
  // the schema's next layout after the last one found is usually the one
  // wanted: one comparison instead of a search among 200 k names that share
  // long prefixes (issue 27).
  const auto layouts = s->schema.tensors();
  // (layout, physical tensor) of each logical tensor matched.
  std::vector<std::pair<const tensor_layout*, std::size_t>> matched;
  tensogram::reserve_advised(matched, std::min(physical.size(), layouts.size()));
  const tensor_layout* next = layouts.data();
  const tensor_layout* const end = layouts.data() + layouts.size();
  for (std::size_t i = 0; i < physical.size(); ++i) {
    const auto& t = physical[i];
    const tensor_layout* l = next != end && next->name == t.name() ? next : s->schema.find(t.name());
    if (l == nullptr) continue;
    next = l + 1;
    matched.emplace_back(l, i);
  }
  // The base layer refused duplicate names: each layout occurs once.
  if (!std::is_sorted(matched.begin(), matched.end())) std::sort(matched.begin(), matched.end());
  s->tensors = decltype(s->tensors)(matched.size());
  for (std::size_t k = 0; k < matched.size(); ++k) {
    auto& lt = s->tensors[k];
    const auto [l, i] = matched[k];
    lt.layout = l;
    lt.primary = &physical[i];
    if (l->has_heap) lt.heap = s->base.find(l->heap_name());
    by_physical[i] = &lt;
  }
  // Step 4: the text as this library's writers render it, else a table of
  // flat tensors read from its tokens, else simdjson's parse; the reference
  // comparison decides (and names the first difference) when none finds
  // the tables equal.
  s->layout_text = keys.layout_text;
  std::vector<detail::layout_table_dom::named_layout> present;
  tensogram::reserve_advised(present, s->tensors.size());
  for (const auto& lt : s->tensors) present.emplace_back(lt.layout->name, lt.layout);
  bool equal =
      keys.layout_deferred &&
      (detail::canonical_layout_text_equals(keys.layout_text, present, s->alignment) ||
       detail::flat_layout_tokens_equal(keys.layout_text, keys.layout_readable, present, s->alignment));
  if (!equal && keys.layout_deferred) read_layout_table(keys, parser);  // step 2's verdict
  if (!equal && keys.layout_dom) equal = keys.layout_dom->equals(present, s->alignment);
  keys.layout_dom.reset();
  if (!equal) {
    if (!keys.layout) keys.layout = parse_layout_table(keys.layout_text);
    check_layout_table(*s, *keys.layout);
    s->layout_table = std::move(*keys.layout);
    std::call_once(s->layout_parsed, [] {});
  }
  check_tensor_set(*s, by_physical);  // step 5
  check_dtypes_and_shapes(*s);        // step 6
  check_placement(*s, by_physical);   // step 7
  return s;
}

bool aligned(const tensogram::buffer& b, std::uint64_t a) {
  return reinterpret_cast<std::uintptr_t>(b.data()) % a == 0;
}

// A copy of `image` whose first byte is aligned to `a` (§9).
tensogram::buffer aligned_copy(const tensogram::buffer& image, std::uint64_t a) {
  const std::size_t size = image.size();
  auto raw = tensogram::buffer::allocate(size + static_cast<std::size_t>(a));
  const auto addr = reinterpret_cast<std::uintptr_t>(raw.data());
  const std::size_t shift = static_cast<std::size_t>((a - addr % a) % a);
  if (size != 0) std::memcpy(raw.mutable_data() + shift, image.data(), size);
  return raw.slice(shift, size);
}

}  // namespace

// ---------------------------------------------------------------------------
// Opening.

file file::from_buffer(tensogram::buffer image) {
  auto s = validate(image);
  if (!aligned(image, s->memory_alignment)) {
    // Views promise element alignment (§9): revalidate an aligned copy (its
    // bytes are identical, so it cannot fail differently).
    s = validate(aligned_copy(image, s->memory_alignment));
  }
  s->checks_on_access = true;  // step 8 (§8.1: deferred to first access)
  return file(std::move(s));
}

file file::from_header_image(tensogram::buffer image) {
  // Everything of §8.2 that reads only the header (§10.4 step 3); the
  // BlobRefs wait for their tensors (check_blob_refs, §8.1, §10.7).
  auto s = validate(image);
  if (!aligned(image, s->memory_alignment)) {
    // The caller writes tensor bytes into this very memory later, so a
    // copy (what from_buffer does, §9) would leave the views on stale bytes.
    throw tensogram::invalid_arg_error(
        "file image at address " + num(reinterpret_cast<std::uintptr_t>(image.data())) +
        " is not aligned to " + num(s->memory_alignment) +
        " bytes (the largest placement alignment of the file, §9); a header image cannot be copied "
        "into aligned memory because its tensor data arrives later");
  }
  return file(std::move(s));
}

void file::check_blob_refs(std::string_view logical_name) const {
  require_blob_refs(*state_, state_->at(logical_name));
}

void file::check_all_blob_refs() const {
  for (const auto& lt : state_->tensors) require_blob_refs(*state_, lt);
}

file file::open(const std::filesystem::path& path) {
  try {
    return from_buffer(tensogram::buffer::map_file(path));
  } catch (const error& e) {
    throw e.with_context(path.string());
  }
}

// ---------------------------------------------------------------------------
// Accessors.

const safetensors::file& file::base() const noexcept {
  return state_->base;
}
std::uint64_t file::alignment() const noexcept {
  return state_->alignment;
}
const compiled_schema& file::schema() const noexcept {
  return state_->schema;
}
const nlohmann::json& file::layout_table() const {
  std::call_once(state_->layout_parsed,
                 [&s = *state_] { s.layout_table = parse_layout_table(s.layout_text); });
  return state_->layout_table;
}

std::map<std::string, std::string> file::user_metadata() const {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : state_->base.metadata()) {
    if (!k.starts_with(reserved_prefix)) out.emplace(k, v);
  }
  return out;
}

std::vector<std::string> file::tensor_names() const {
  std::vector<std::string> out;
  out.reserve(state_->tensors.size());
  for (const auto& lt : state_->tensors) out.emplace_back(lt.layout->name);
  return out;
}

bool file::contains(std::string_view name) const noexcept {
  return state_->find(name) != nullptr;
}

const tensor_layout& file::layout(std::string_view name) const {
  return *state_->at(name).layout;
}

std::span<const std::uint64_t> file::dims(std::string_view name) const {
  return state_->at(name).dims;
}

const safetensors::tensor_view& file::primary(std::string_view name) const {
  return *state_->at(name).primary;
}

const safetensors::tensor_view* file::heap(std::string_view name) const {
  return state_->at(name).heap;
}

flat_view file::flat(std::string_view name) const {
  const auto& lt = state_->at(name);
  if (lt.layout->kind != tensor_kind::flat) {
    throw tensogram::invalid_arg_error("tensor " + detail::quoted(name) + " is a " +
                                       std::string(kind_name(lt.layout->kind)) + " tensor, not flat");
  }
  flat_view v;
  v.name_ = &lt.layout->name;
  v.type_ = lt.layout->flat_dtype;
  v.dims_ = lt.dims;
  v.count_ = lt.count;
  v.bytes_ = lt.primary->bytes();
  return v;
}

record_view file::records(std::string_view name) const {
  const auto& lt = state_->at(name);
  if (lt.layout->kind != tensor_kind::record) {
    throw tensogram::invalid_arg_error("tensor " + detail::quoted(name) + " is a " +
                                       std::string(kind_name(lt.layout->kind)) + " tensor, not struct");
  }
  if (state_->checks_on_access) require_blob_refs(*state_, lt);
  record_view v;
  v.name_ = &lt.layout->name;
  v.record_ = lt.layout->record.get();
  v.dims_ = lt.dims;
  v.count_ = lt.count;
  v.bytes_ = lt.primary->bytes();
  if (lt.heap != nullptr) v.heap_ = lt.heap->bytes();
  return v;
}

blob_view file::blobs(std::string_view name) const {
  const auto& lt = state_->at(name);
  if (lt.layout->kind != tensor_kind::blob) {
    throw tensogram::invalid_arg_error("tensor " + detail::quoted(name) + " is a " +
                                       std::string(kind_name(lt.layout->kind)) + " tensor, not blob");
  }
  if (state_->checks_on_access) require_blob_refs(*state_, lt);
  blob_view v;
  v.name_ = &lt.layout->name;
  v.item_ = &lt.layout->item;
  v.dims_ = lt.dims;
  v.count_ = lt.count;
  v.index_ = lt.primary->bytes();
  if (lt.heap != nullptr) v.heap_ = lt.heap->bytes();
  return v;
}

}  // namespace metatensor

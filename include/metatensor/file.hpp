// A validated metatensor file and its zero-copy views (spec 06 §3, §5–§9).
//
// `file::open` maps a file and runs the structural validation of §8.1 in
// the order of §8.2 (base layer, `metatensor.` keys, schema, layout table,
// tensor set, dtypes and shapes, placement and padding), reporting the
// first failure as a `metatensor::error`. It reads only the header, so its
// cost is O(header) whatever the kinds and sizes of the tensors: the last
// structural step, the BlobRef checks of §6.4, is deferred per tensor to
// the first access of that tensor (§8.1 allows this) — its first `records`
// / `blobs` view, logical value or deep validation — or to
// `check_all_blob_refs`. A bad BlobRef is thus reported (MT_BLOB_BOUNDS,
// MT_BLOB_ALIGN, naming the tensor and element) when the tensor is first
// accessed, never dereferenced. Deep validation (§8.1, §8.3: BOOL bytes,
// UTF-8, zero padding, value keywords) runs on request.
//
// "Logical tensors present" are the physical tensors whose name is a root
// property of the schema (the primary names, §3.2). Every other physical
// tensor must then be the heap of a present tensor or a padding tensor.
//
// Views (§9) are plain values holding addresses into the file image; they
// are valid while the `file` (or any copy of it: copies share the image) is
// alive. All bounds are established before a view is handed out, so element
// access checks only the index range. Typed views assume a little-endian
// host (§9). A file may be shared by threads: views may be created
// concurrently (the deferred checks are remembered in atomics).
//
// Memory alignment: a file opened from a buffer whose base address is not a
// multiple of the largest placement alignment R(t) of the file (at least
// `A`) is copied into a buffer aligned to it (§9); the same holds for a
// memory map when R exceeds the page size. Typed views are therefore always
// aligned to their element type.
//
// Remote files (§10): `from_header_image` validates a sparse image whose
// tensor data arrives later; its views never run the BlobRef checks
// themselves: the caller runs `check_blob_refs` per tensor once its bytes
// are in, before using its BlobRefs (§8.1, §10.7); such an image is never
// copied.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "metatensor/error.hpp"
#include "metatensor/layout.hpp"
#include "metatensor/safetensors.hpp"
#include "metatensor/view/blob_ref.hpp"     // IWYU pragma: export
#include "metatensor/view/blob_view.hpp"    // IWYU pragma: export
#include "metatensor/view/field_view.hpp"   // IWYU pragma: export
#include "metatensor/view/flat_view.hpp"    // IWYU pragma: export
#include "metatensor/view/record_view.hpp"  // IWYU pragma: export
#include "tensogram/core/buffer.hpp"

namespace metatensor {

class migrated_file;  // <metatensor/migrate.hpp>

/// A structurally validated metatensor file (§8.1). Cheap to copy (the
/// image and the compiled schema are shared).
class file {
 public:
  /// Maps `path` read-only and validates its header (§8.2 steps up to
  /// placement; BlobRefs on first access, see above). Throws
  /// `tensogram::io_error` for file-system failures and `metatensor::error`
  /// for the first violation in §8.2 order.
  [[nodiscard]] static file open(const std::filesystem::path& path);
  /// Opens `path` like `open` and presents it through `reader_schema`, a
  /// newer compatible schema (schema migration; include
  /// <metatensor/migrate.hpp>, see `migrated_file`). Throws
  /// MT_SCHEMA_INCOMPATIBLE naming the schema node for an incompatible pair.
  [[nodiscard]] static migrated_file open(const std::filesystem::path& path,
                                          const compiled_schema& reader_schema);
  /// Validates an in-memory image like `open` (copied into an aligned
  /// buffer when its base address is not aligned, §9).
  [[nodiscard]] static file from_buffer(tensogram::buffer image);
  /// Validates the header of a sparse file image (§10.4 step 3, §10.7): an
  /// image of the whole file size whose bytes [0, 8 + N) are present while
  /// its tensor data may not have arrived yet. Runs every structural check
  /// of §8.1 in §8.2 order except the BlobRef checks of §6.4 (step 8, the
  /// only one that reads tensor data): run `check_blob_refs` for a tensor
  /// once its primary and heap are in the image, before dereferencing any
  /// of its BlobRefs (§8.1 allows deferring them). Reads only the header.
  ///
  /// The image is never copied: views point into it, so bytes written into
  /// it later (through the memory the caller owns) are what they see. Throws
  /// `metatensor::error` for the first violation, and
  /// `tensogram::invalid_arg_error` when the base address is not aligned to
  /// the file's largest placement alignment (where `from_buffer` would copy).
  [[nodiscard]] static file from_header_image(tensogram::buffer image);

  [[nodiscard]] const safetensors::file& base() const noexcept;
  /// The file alignment A (§3.1).
  [[nodiscard]] std::uint64_t alignment() const noexcept;
  [[nodiscard]] const compiled_schema& schema() const noexcept;
  /// The file's `metatensor.layout`, parsed (equal to the recomputed table)
  /// on the first call: opening compares it without building this value.
  [[nodiscard]] const nlohmann::json& layout_table() const;
  /// `__metadata__` entries whose key does not start with `metatensor.`.
  [[nodiscard]] std::map<std::string, std::string> user_metadata() const;

  /// Logical tensors present, sorted by name.
  [[nodiscard]] std::vector<std::string> tensor_names() const;
  [[nodiscard]] bool contains(std::string_view name) const noexcept;
  /// Throws `tensogram::invalid_arg_error` when `name` is not present.
  [[nodiscard]] const tensor_layout& layout(std::string_view name) const;
  /// Logical dims (the primary shape without the trailing record/BlobRef dim).
  [[nodiscard]] std::span<const std::uint64_t> dims(std::string_view name) const;
  /// The primary physical tensor and the heap (nullptr when none).
  [[nodiscard]] const safetensors::tensor_view& primary(std::string_view name) const;
  [[nodiscard]] const safetensors::tensor_view* heap(std::string_view name) const;

  /// Views by kind; `tensogram::invalid_arg_error` for the wrong kind. The
  /// first `records` / `blobs` view of a tensor with a heap runs its BlobRef
  /// checks (O(elements), once; MT_BLOB_BOUNDS / MT_BLOB_ALIGN on failure,
  /// again at every later access). Not for `from_header_image` files.
  [[nodiscard]] flat_view flat(std::string_view name) const;
  [[nodiscard]] record_view records(std::string_view name) const;
  [[nodiscard]] blob_view blobs(std::string_view name) const;

  /// The BlobRef checks of §6.4 (step 8 of §8.2) for one logical tensor:
  /// every BlobRef of its index or records inside its heap, List blobs
  /// aligned. Throws `metatensor::error` (MT_BLOB_BOUNDS, MT_BLOB_ALIGN,
  /// naming the tensor and element); a no-op for tensors without a heap;
  /// `tensogram::invalid_arg_error` when `logical_name` is not present.
  /// Needed after `from_header_image` (whose files never run step 8 by
  /// themselves), once the tensor's primary and heap bytes are in the
  /// image: there it runs at every call. For files from `open` /
  /// `from_buffer` it runs once (what the first access would run).
  void check_blob_refs(std::string_view logical_name) const;
  /// Completes structural validation (§8.1): `check_blob_refs` for every
  /// logical tensor in name order, the first failure thrown. O(BlobRefs).
  void check_all_blob_refs() const;

  /// Deep validation (§8.1, §8.3), after `check_all_blob_refs` (§8.2: the
  /// BlobRefs precede the deep checks), in this order over the whole file: BOOL
  /// bytes [MT_BOOL], String UTF-8 [MT_UTF8], record padding, heap gaps and
  /// padding tensors all zero [MT_NONZERO_PADDING], then the schema's value
  /// keywords [MT_VALUE, message starts with the JSON Pointer]. Memory stays
  /// bounded by one element (or one sub-array when a dimension carries value
  /// keywords) except when the root schema itself carries value keywords.
  void validate_deep() const;
  /// The §8.3 logical value of one tensor (nested arrays of projected
  /// elements). Throws MT_BOOL / MT_UTF8 for bytes JSON cannot represent.
  [[nodiscard]] nlohmann::json logical_value(std::string_view name) const;
  /// The logical value of the whole file (one member per tensor present).
  [[nodiscard]] nlohmann::json logical_value() const;
  /// Elements [first, first + count) of a tensor in flat C order over its
  /// logical dims, each projected as in §8.3, as one flat JSON array (memory
  /// bounded by `count`; for dump tools). `tensogram::invalid_arg_error` when
  /// the range exceeds the element count; MT_BOOL / MT_UTF8 as above.
  [[nodiscard]] nlohmann::json logical_elements(std::string_view name, std::uint64_t first,
                                                std::uint64_t count) const;

  struct state;  // defined in src/metatensor/view/file.cpp

 private:
  explicit file(std::shared_ptr<const state> s) : state_(std::move(s)) {}
  std::shared_ptr<const state> state_;
};

/// Elements [first, first + count) of any safetensors tensor (a plain
/// safetensors file's included) in flat C order, each projected as in §8.3
/// (integers exact, every float dtype decoded, C64 as [re, im], BOOL as
/// true/false), as one flat JSON array; for dump tools. Throws
/// `tensogram::invalid_arg_error` when the range exceeds the element count,
/// MT_BOOL (message "/<name>/<index>: ...") for a BOOL byte other than 0/1.
[[nodiscard]] nlohmann::json flat_elements(const safetensors::tensor_view& t, std::uint64_t first,
                                           std::uint64_t count);

}  // namespace metatensor

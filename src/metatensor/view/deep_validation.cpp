// Deep validation (spec 06 §8.1, §8.3): four passes over the whole file, in
// this order, reporting the first failure:
//   1. BOOL bytes are 0 or 1 [MT_BOOL] (flat tensors, record fields, List
//      elements);
//   2. String bytes are UTF-8 [MT_UTF8];
//   3. record padding (inner and tail, nested records and records inside
//      List blobs included), heap bytes not covered by any blob, and padding
//      tensors are zero [MT_NONZERO_PADDING];
//   4. value keywords [MT_VALUE] with the JSON Schema evaluator
//      (value_keywords.cpp).
// BOOL and UTF-8 come first because the projection of pass 4 needs them.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "logical_value.hpp"
#include "metatensor/file.hpp"
#include "src/metatensor/text.hpp"
#include "value_keywords.hpp"

namespace metatensor {
namespace {

using json = nlohmann::json;
using detail::blob_at;
using detail::checked_text;
using detail::deep_failure;
using detail::element_count;
using detail::element_type;
using detail::escape_token;
using detail::index_pointer;
using detail::index_token;
using detail::project_scalar;
using detail::read_blob_ref;
using detail::rethrow_as_error;
using detail::tensor_access;

// ---------------------------------------------------------------------------
// Passes 1–2: BOOL bytes and UTF-8, without projecting.

enum class scan { bools, utf8 };

bool type_contains(const type_layout& t, scan mode) {
  switch (t.type) {
    case value_type::scalar: return mode == scan::bools && t.scalar == dtype::boolean;
    case value_type::string: return mode == scan::utf8;
    case value_type::list: return t.elem && type_contains(*t.elem, mode);
    case value_type::record:
      return std::any_of(t.record->fields.begin(), t.record->fields.end(),
                         [&](const field_layout& f) { return type_contains(f.type, mode); });
  }
  return false;
}

void scan_type(scan mode, const type_layout& t, const std::byte* p, std::span<const std::byte> heap);

void scan_element(scan mode, const type_layout& t, const std::byte* p, std::span<const std::byte> heap) {
  switch (t.type) {
    case value_type::scalar:
      if (mode == scan::bools && t.scalar == dtype::boolean) (void)project_scalar(t.scalar, p);
      return;
    case value_type::string:
      if (mode == scan::utf8) (void)checked_text(blob_at(heap, p));
      return;
    case value_type::list: {
      if (!type_contains(*t.elem, mode)) return;
      const auto blob = blob_at(heap, p);
      const std::uint64_t n = t.elem->size == 0 ? 0 : blob.size() / t.elem->size;
      for (std::uint64_t j = 0; j < n; ++j) {
        try {
          scan_type(mode, *t.elem, blob.data() + j * t.elem->size, heap);
        } catch (deep_failure& e) {
          e.pointer = index_token(j) + e.pointer;
          throw;
        }
      }
      return;
    }
    case value_type::record:
      for (const auto& f : t.record->fields) {
        try {
          scan_type(mode, f.type, p + f.offset, heap);
        } catch (deep_failure& e) {
          e.pointer = escape_token(f.name) + e.pointer;
          throw;
        }
      }
      return;
  }
}

void scan_type(scan mode, const type_layout& t, const std::byte* p, std::span<const std::byte> heap) {
  if (t.type == value_type::scalar && !(mode == scan::bools && t.scalar == dtype::boolean)) return;
  if (t.type == value_type::string && mode != scan::utf8) return;
  const std::uint64_t n = element_count(t.shape);
  const std::uint64_t es = t.element_size();
  for (std::uint64_t i = 0; i < n; ++i) {
    try {
      scan_element(mode, t, p + i * es, heap);
    } catch (deep_failure& e) {
      e.pointer = index_pointer(t.shape, i) + e.pointer;
      throw;
    }
  }
}

void scan_tensor(scan mode, const std::string& name, const tensor_access& a) {
  const auto& l = *a.layout;
  try {
    if (l.kind == tensor_kind::flat) {
      if (mode != scan::bools || l.flat_dtype != dtype::boolean) return;
      for (std::uint64_t i = 0; i < a.count; ++i) {
        const auto b = std::to_integer<unsigned>(a.data[static_cast<std::size_t>(i)]);
        if (b > 1) {
          throw deep_failure{errc::mt_bool, index_pointer(a.dims, i),
                             "BOOL byte is " + std::to_string(b) + ", not 0 or 1"};
        }
      }
      return;
    }
    const type_layout rec_type = element_type(l);
    if (!type_contains(rec_type, mode)) return;
    const std::uint64_t es = a.element_size();
    for (std::uint64_t i = 0; i < a.count; ++i) {
      try {
        scan_element(mode, rec_type, a.data.data() + i * es, a.heap);
      } catch (deep_failure& e) {
        e.pointer = index_pointer(a.dims, i) + e.pointer;
        throw;
      }
    }
  } catch (const deep_failure& e) {
    rethrow_as_error(e, name);
  }
}

// ---------------------------------------------------------------------------
// Pass 3: zero padding.

void expect_zero(std::span<const std::byte> bytes, std::uint64_t begin, std::uint64_t end, const char* what) {
  for (std::uint64_t k = begin; k < end; ++k) {
    const auto b = std::to_integer<unsigned>(bytes[static_cast<std::size_t>(k)]);
    if (b != 0) {
      throw deep_failure{
          errc::mt_nonzero_padding, "",
          std::string(what) + " byte " + std::to_string(k) + " is " + std::to_string(b) + ", not 0"};
    }
  }
}

// Inner and tail padding of the record at `p`, nested records included
// (§6.2: bytes not covered by a field are zero). List blobs of records are
// checked too: their records follow the same rule.
void check_record_padding(const record_layout& rec, const std::byte* p, std::span<const std::byte> heap) {
  const std::span<const std::byte> bytes(p, static_cast<std::size_t>(rec.size));
  std::uint64_t cursor = 0;
  for (const auto& f : rec.fields) {
    if (f.offset > cursor) expect_zero(bytes, cursor, f.offset, "record padding");
    try {
      const std::uint64_t n = element_count(f.type.shape);
      const std::uint64_t es = f.type.element_size();
      for (std::uint64_t i = 0; i < n; ++i) {
        try {
          const std::byte* at = p + f.offset + i * es;
          if (f.type.type == value_type::record) {
            check_record_padding(*f.type.record, at, heap);
          } else if (f.type.type == value_type::list && f.type.elem->type == value_type::record) {
            const auto blob = blob_at(heap, at);
            const std::uint64_t size = f.type.elem->size;
            const std::uint64_t elem_n = element_count(f.type.elem->shape);
            const std::uint64_t count = size == 0 ? 0 : blob.size() / size;
            const std::uint64_t rsize = f.type.elem->record->size;
            for (std::uint64_t j = 0; j < count * elem_n; ++j) {
              try {
                check_record_padding(*f.type.elem->record, blob.data() + j * rsize, heap);
              } catch (deep_failure& e) {
                e.pointer =
                    index_token(j / elem_n) + index_pointer(f.type.elem->shape, j % elem_n) + e.pointer;
                throw;
              }
            }
          }
        } catch (deep_failure& e) {
          e.pointer = index_pointer(f.type.shape, i) + e.pointer;
          throw;
        }
      }
    } catch (deep_failure& e) {
      e.pointer = escape_token(f.name) + e.pointer;
      throw;
    }
    cursor = f.offset + f.type.size;
  }
  if (rec.size > cursor) expect_zero(bytes, cursor, rec.size, "record tail padding");
}

// Every BlobRef of a record (nested records and fixed arrays included).
template <class F>
void for_each_ref(const type_layout& t, const std::byte* p, F& fn) {
  if (!t.has_blobs()) return;
  const std::uint64_t n = element_count(t.shape);
  const std::uint64_t es = t.element_size();
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::byte* at = p + i * es;
    if (t.type == value_type::string || t.type == value_type::list) {
      fn(read_blob_ref(at));
    } else if (t.type == value_type::record) {
      for (const auto& f : t.record->fields) for_each_ref(f.type, at + f.offset, fn);
    }
  }
}

// Heap bytes not covered by any blob are zero (§6.4). Blobs in increasing
// offset order (what writers produce) are checked in one streaming pass;
// otherwise the ranges are collected and sorted.
void check_heap_gaps(const tensor_access& a) {
  const auto& l = *a.layout;
  const type_layout whole = element_type(l);
  const std::uint64_t es = a.element_size();
  const auto for_all = [&](auto& fn) {
    for (std::uint64_t i = 0; i < a.count; ++i) for_each_ref(whole, a.data.data() + i * es, fn);
  };
  // First pass: are the non-empty blobs in nondecreasing offset order? A gap
  // can only be judged once no later blob may cover it.
  std::uint64_t last = 0;
  bool sorted = true;
  auto order = [&](blob_ref r) {
    if (r.length == 0) return;
    if (r.offset < last) sorted = false;
    last = r.offset;
  };
  for_all(order);
  std::uint64_t covered = 0;
  if (sorted) {
    auto stream = [&](blob_ref r) {
      if (r.length == 0) return;
      if (r.offset > covered) expect_zero(a.heap, covered, r.offset, "heap gap");
      covered = std::max(covered, r.offset + r.length);
    };
    for_all(stream);
  } else {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
    auto collect = [&](blob_ref r) {
      if (r.length != 0) ranges.emplace_back(r.offset, r.offset + r.length);
    };
    for_all(collect);
    std::sort(ranges.begin(), ranges.end());
    for (const auto& [b, e] : ranges) {
      if (b > covered) expect_zero(a.heap, covered, b, "heap gap");
      covered = std::max(covered, e);
    }
  }
  expect_zero(a.heap, covered, a.heap.size(), "heap gap");
}

}  // namespace

void file::validate_deep() const {
  check_all_blob_refs();  // §8.2: the structural BlobRef checks come first
  const auto names = tensor_names();
  // Passes 1 and 2.
  for (const scan mode : {scan::bools, scan::utf8}) {
    for (const auto& name : names) scan_tensor(mode, name, tensor_access(*this, name));
  }
  // Pass 3.
  for (const auto& name : names) {
    const tensor_access a(*this, name);
    try {
      if (a.layout->kind == tensor_kind::record) {
        for (std::uint64_t i = 0; i < a.count; ++i) {
          try {
            check_record_padding(*a.layout->record, a.data.data() + i * a.layout->record->size, a.heap);
          } catch (deep_failure& e) {
            e.pointer = index_pointer(a.dims, i) + e.pointer;
            throw;
          }
        }
      } else if (a.layout->kind == tensor_kind::blob && a.layout->item.type == value_type::list &&
                 a.layout->item.elem->type == value_type::record) {
        const auto& elem = *a.layout->item.elem;
        const std::uint64_t elem_n = element_count(elem.shape);
        for (std::uint64_t i = 0; i < a.count; ++i) {
          const auto blob = blob_at(a.heap, a.data.data() + i * 16);
          const std::uint64_t count = elem.size == 0 ? 0 : blob.size() / elem.size;
          for (std::uint64_t j = 0; j < count * elem_n; ++j) {
            try {
              check_record_padding(*elem.record, blob.data() + j * elem.record->size, a.heap);
            } catch (deep_failure& e) {
              e.pointer = index_pointer(a.dims, i) + index_token(j / elem_n) +
                          index_pointer(elem.shape, j % elem_n) + e.pointer;
              throw;
            }
          }
        }
      }
      if (heap(name) != nullptr) {
        try {
          check_heap_gaps(a);
        } catch (const deep_failure& e) {
          // Heap offsets are not logical values: name the heap tensor instead.
          throw error(e.code, "tensor \"" + name + "#heap\": " + e.what);
        }
      }
    } catch (const deep_failure& e) {
      rethrow_as_error(e, name);
    }
  }
  for (const auto& t : base().tensors()) {
    if (!t.name().starts_with("__pad__")) continue;
    const auto b = t.bytes();
    for (std::size_t k = 0; k < b.size(); ++k) {
      if (b[k] != std::byte{0}) {
        throw error(errc::mt_nonzero_padding,
                    "padding tensor \"" + std::string(t.name()) + "\" byte " + std::to_string(k) + " is " +
                        std::to_string(std::to_integer<unsigned>(b[k])) + ", not 0");
      }
    }
  }
  // Pass 4.
  detail::check_value_keywords(*this);
}

}  // namespace metatensor

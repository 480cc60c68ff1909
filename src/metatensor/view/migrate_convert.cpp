// Value conversion for schema migration (see migrate_convert.hpp). The
// inputs were structurally validated with the writer schema (BlobRefs in
// bounds) and the pair of types classified by `compatibility`, so only the
// classified changes occur here; anything else is an internal error.
#include "src/metatensor/view/migrate_convert.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "metatensor/compatibility.hpp"
#include "metatensor/view/blob_ref.hpp"
#include "src/metatensor/text.hpp"
#include "src/metatensor/view/blob_slots.hpp"
#include "src/metatensor/view/logical_value.hpp"
#include "src/metatensor/writer/element_encoding.hpp"
#include "tensogram/cbor/codec.hpp"

namespace metatensor::detail {

namespace {

[[noreturn]] void unexpected(const std::string& what) {
  throw std::logic_error("schema migration: unexpected conversion " + what);
}

bool is_float(dtype t) noexcept {
  return t == dtype::f16 || t == dtype::bf16 || t == dtype::f32 || t == dtype::f64;
}

// Every widening source read exactly: integers (U64 is never a source) as
// int64, floats as binary64.
std::int64_t read_integer(dtype t, const std::byte* p) {
  switch (t) {
    case dtype::boolean:
    case dtype::u8: return load<std::uint8_t>(p);
    case dtype::i8: return load<std::int8_t>(p);
    case dtype::u16: return load<std::uint16_t>(p);
    case dtype::i16: return load<std::int16_t>(p);
    case dtype::u32: return load<std::uint32_t>(p);
    case dtype::i32: return load<std::int32_t>(p);
    case dtype::i64: return load<std::int64_t>(p);
    default: unexpected("from " + std::string(safetensors::dtype_name(t)));
  }
}

double read_float(dtype t, const std::byte* p) {
  switch (t) {
    case dtype::f16: return tensogram::cbor::half_to_double(load<std::uint16_t>(p));
    case dtype::bf16: return decode_bf16(load<std::uint16_t>(p));
    case dtype::f32: return load<float>(p);
    case dtype::f64: return load<double>(p);
    default: return static_cast<double>(read_integer(t, p));  // exact: §11.4 bounds the width
  }
}

template <class T>
void store(std::byte* dst, T v) noexcept {
  std::memcpy(dst, &v, sizeof(T));
}

// The bytes of a reader type's default into `dst`, its blobs appended to
// the reader heap in slot order (the order `encode_type` fills them).
void write_default(const field_layout& f, std::byte* dst, conversion& c) {
  std::vector<blob_slot> slots;
  collect_type_slots(f.type, 0, slots);
  std::vector<std::vector<std::byte>> blobs(slots.size());
  blob_sink sink{&blobs, 0};
  std::string where = c.where + "/" + f.name + " (default)";
  encode_type(f.type, 0, *f.default_value, dst, where, sink);
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const type_layout& t = *slots[i].type;
    const std::uint64_t align = t.type == value_type::list ? t.elem->align : 1;
    append_blob(*c.heap, blobs[i], align, dst + slots[i].offset);
  }
}

}  // namespace

void append_blob(std::vector<std::byte>& heap, std::span<const std::byte> blob, std::uint64_t align,
                 std::byte* ref) {
  std::uint64_t offset = 0;
  if (!blob.empty()) {
    offset = align_up(heap.size(), align);
    heap.resize(offset);
    heap.insert(heap.end(), blob.begin(), blob.end());
  }
  store<std::uint64_t>(ref, offset);
  store<std::uint64_t>(ref + 8, blob.size());
}

void convert_scalar(dtype from, const std::byte* src, dtype to, std::byte* dst) {
  if (from == to) {
    std::memcpy(dst, src, safetensors::dtype_bits(to) / 8);
    return;
  }
  if (!is_widening(from, to)) {
    unexpected(std::string(safetensors::dtype_name(from)) + " -> " +
               std::string(safetensors::dtype_name(to)));
  }
  switch (to) {
    case dtype::f32: store(dst, static_cast<float>(read_float(from, src))); return;
    case dtype::f64: store(dst, read_float(from, src)); return;
    default: break;
  }
  if (is_float(from)) unexpected("float to integer");
  const std::int64_t v = read_integer(from, src);
  switch (to) {
    case dtype::u8: store(dst, static_cast<std::uint8_t>(v)); return;
    case dtype::i16: store(dst, static_cast<std::int16_t>(v)); return;
    case dtype::u16: store(dst, static_cast<std::uint16_t>(v)); return;
    case dtype::i32: store(dst, static_cast<std::int32_t>(v)); return;
    case dtype::u32: store(dst, static_cast<std::uint32_t>(v)); return;
    case dtype::i64: store(dst, v); return;
    case dtype::u64: store(dst, static_cast<std::uint64_t>(v)); return;
    default: unexpected("to " + std::string(safetensors::dtype_name(to)));
  }
}

void convert_type(const type_layout& w, const std::byte* src, const type_layout& r, std::byte* dst,
                  conversion& c) {
  if (w.shape != r.shape) unexpected("of fixed-array shape");
  const std::uint64_t n = element_count(r.shape);  // bounded by the record size (§8.4)
  const std::uint64_t ws = w.element_size();
  const std::uint64_t rs = r.element_size();
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::byte* s = src + i * ws;
    std::byte* d = dst + i * rs;
    if (w.type == value_type::scalar && r.type == value_type::scalar) {
      convert_scalar(w.scalar, s, r.scalar, d);
    } else if (w.type == value_type::record && r.type == value_type::record) {
      convert_record(*w.record, s, *r.record, d, c);
    } else if (r.type == value_type::string && (w.type == value_type::string || w.type == value_type::list)) {
      // A List of Uint8 read as a String must be UTF-8 (§11.3).
      const auto blob = blob_at(c.src_heap, s);
      const auto text = utf8_bytes(as_text(blob), c.where);
      append_blob(*c.heap, text, 1, d);
    } else if (r.type == value_type::list && w.type == value_type::string) {
      append_blob(*c.heap, blob_at(c.src_heap, s), r.elem->align, d);
    } else if (r.type == value_type::list && w.type == value_type::list) {
      const auto blob = blob_at(c.src_heap, s);
      const std::uint64_t count = blob.size() / w.elem->size;
      std::vector<std::byte> out(count * r.elem->size);
      conversion inner{{}, nullptr, c.where};  // List elements hold no blobs (§4.4)
      for (std::uint64_t k = 0; k < count; ++k) {
        convert_type(*w.elem, blob.data() + k * w.elem->size, *r.elem, out.data() + k * r.elem->size, inner);
      }
      append_blob(*c.heap, out, r.elem->align, d);
    } else {
      unexpected("between kinds");
    }
  }
}

void convert_record(const record_layout& w, const std::byte* src, const record_layout& r, std::byte* dst,
                    conversion& c) {
  const std::size_t depth = c.where.size();
  for (const auto& rf : r.fields) {
    const field_layout* wf = w.find(rf.name);
    if (wf == nullptr) {
      if (!rf.default_value)
        unexpected("of field " + metatensor::detail::quoted(rf.name) + " without a default");
      write_default(rf, dst + rf.offset, c);
      continue;
    }
    c.where += "/" + rf.name;
    convert_type(wf->type, src + wf->offset, rf.type, dst + rf.offset, c);
    c.where.resize(depth);
  }
}

void check_defaults(const record_layout& w, const record_layout& r, const std::string& where) {
  for (const auto& rf : r.fields) {
    const field_layout* wf = w.find(rf.name);
    if (wf == nullptr) {
      if (!rf.default_value)
        unexpected("of field " + metatensor::detail::quoted(rf.name) + " without a default");
      std::vector<std::byte> scratch(rf.type.size);  // at most 2^24 bytes (§8.4)
      std::vector<std::byte> heap;
      conversion c{{}, &heap, where};
      write_default(rf, scratch.data(), c);
    } else if (wf->type.type == value_type::record && rf.type.type == value_type::record) {
      check_defaults(*wf->type.record, *rf.type.record, where + "/" + rf.name);
    } else if (wf->type.type == value_type::list && rf.type.type == value_type::list &&
               wf->type.elem->type == value_type::record && rf.type.elem->type == value_type::record) {
      check_defaults(*wf->type.elem->record, *rf.type.elem->record, where + "/" + rf.name);
    }
  }
}

}  // namespace metatensor::detail

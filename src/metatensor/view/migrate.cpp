// Reading a file through a newer compatible schema (see
// include/metatensor/migrate.hpp and docs/metatensor.md "Schema
// migration"). The class of every tensor comes from `compatibility`, the
// rules `metatensor diff` prints; this file only decides, per class, between
// the file's own bytes and a converted copy, and builds the views.
#include "metatensor/migrate.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <utility>

#include "src/metatensor/text.hpp"
#include "src/metatensor/view/logical_value.hpp"
#include "src/metatensor/view/migrate_convert.hpp"
#include "tensogram/core/error.hpp"

namespace metatensor {

namespace {

// Frees what `aligned_bytes` allocated with the same alignment.
struct aligned_release {
  std::size_t align = 1;
  void operator()(std::byte* p) const noexcept { ::operator delete (p, std::align_val_t{align}); }
};

// Owned bytes aligned for the reader's element type: converted records may
// carry a raised alignment beyond what `operator new` guarantees.
class aligned_bytes {
 public:
  aligned_bytes() = default;
  aligned_bytes(std::size_t size, std::size_t align)
      : align_(std::max<std::size_t>(align, alignof(std::max_align_t))), size_(size) {
    if (size_ != 0) {
      data_.reset(static_cast<std::byte*>(::operator new (size_, std::align_val_t{align_})));
      data_.get_deleter().align = align_;
      std::memset(data_.get(), 0, size_);  // record padding is zero (§6.2)
    }
  }
  [[nodiscard]] std::byte* data() noexcept { return data_.get(); }
  [[nodiscard]] std::span<const std::byte> span() const noexcept { return {data_.get(), size_}; }

 private:
  struct release {
    std::size_t align = 1;
    void operator()(std::byte* p) const noexcept { ::operator delete (p, std::align_val_t{align}); }
  };
  std::size_t align_ = 1;
  std::size_t size_ = 0;
  std::unique_ptr<std::byte, aligned_release> data_;
};

// Same type (§7 JSON equality: type, shape, records field by field with
// offsets): a writer field of this type is already what the reader wants.
bool same_type(const type_layout& a, const type_layout& b) {
  return type_json(a) == type_json(b);
}

}  // namespace

struct migrated_file::state {
  struct tensor {
    const tensor_layout* reader = nullptr;
    const tensor_layout* writer = nullptr;
    compatibility_class verdict = compatibility_class::identical;
    // The file's bytes serve the reader: identical layouts, and blob tensors
    // whose index and heap are unchanged (String <-> List of Uint8).
    bool zero_copy = true;
    // Converted primary and heap, made once on first access. A failure
    // (MT_UTF8) leaves the flag unset, so every access reports it again.
    mutable std::once_flag once;
    mutable aligned_bytes data;
    mutable std::vector<std::byte> heap;
  };

  state(file f, compiled_schema r) : source(std::move(f)), reader(std::move(r)) {}

  file source;
  compiled_schema reader;
  compatibility_report report;
  std::map<std::string, std::unique_ptr<tensor>, std::less<>> tensors;

  [[nodiscard]] const tensor& at(std::string_view name) const {
    const auto it = tensors.find(name);
    if (it == tensors.end())
      throw tensogram::invalid_arg_error("no logical tensor named " + detail::quoted(name));
    return *it->second;
  }

  void convert(const tensor& t) const {
    std::call_once(t.once, [&] { materialize(t); });
  }

 private:
  void materialize(const tensor& t) const {
    const tensor_layout& r = *t.reader;
    const std::string& name = r.name;
    const std::uint64_t count = detail::element_count(source.dims(name));
    std::vector<std::byte> heap;
    detail::conversion c{{}, r.has_heap ? &heap : nullptr, "/" + name};
    if (r.kind == tensor_kind::flat) {
      const auto v = source.flat(name);
      const std::uint64_t ws = safetensors::dtype_bits(v.type()) / 8;
      const std::uint64_t rs = safetensors::dtype_bits(r.flat_dtype) / 8;
      aligned_bytes out(count * rs, safetensors::dtype_alignment(r.flat_dtype));
      for (std::uint64_t i = 0; i < count; ++i) {
        detail::convert_scalar(v.type(), v.bytes().data() + i * ws, r.flat_dtype, out.data() + i * rs);
      }
      t.data = std::move(out);
      return;
    }
    if (r.kind == tensor_kind::record) {
      const auto v = source.records(name);
      c.src_heap = v.heap();
      const std::uint64_t ws = v.record().size;
      const std::uint64_t rs = r.record->size;
      aligned_bytes out(count * rs, r.record->align);
      for (std::uint64_t i = 0; i < count; ++i) {
        c.where = "/" + name + detail::index_pointer(v.dims(), i);
        detail::convert_record(v.record(), v.bytes().data() + i * ws, *r.record, out.data() + i * rs, c);
      }
      t.data = std::move(out);
    } else {
      const auto v = source.blobs(name);
      c.src_heap = v.heap();
      aligned_bytes out(count * 16, 8);
      for (std::uint64_t i = 0; i < count; ++i) {
        c.where = "/" + name + detail::index_pointer(v.dims(), i);
        detail::convert_type(v.item(), v.index().data() + i * 16, r.item, out.data() + i * 16, c);
      }
      t.data = std::move(out);
    }
    t.heap = std::move(heap);
  }
};

migrated_file migrated_file::resolve(file source, const compiled_schema& reader) {
  auto s = std::make_shared<state>(std::move(source), reader);
  s->report = compatibility(s->source.schema(), s->reader);
  require_compatible(s->report);
  for (const auto& name : s->source.tensor_names()) {
    const tensor_layout* r = s->reader.find(name);
    if (r == nullptr) continue;  // removed in the reader schema: not exposed
    // §5.1 dimension bounds of the reader (maxItems lowered, minItems raised).
    const auto dims = s->source.dims(name);
    for (std::size_t i = 0; i < r->rank(); ++i) {
      const auto& b = r->dims[i];
      if (dims[i] < b.min || (b.max && dims[i] > *b.max)) {
        throw error(errc::mt_shape, r->node_pointer(i) + ": tensor " + detail::quoted(name) + " dimension " +
                                        std::to_string(i) + " is " + std::to_string(dims[i]) +
                                        ", the reader schema allows " + std::to_string(b.min) + ".." +
                                        (b.max ? std::to_string(*b.max) : std::string("unbounded")));
      }
    }
    if (r->kind == tensor_kind::record) {
      // Defaults that do not fit their type fail here, before any data is read.
      detail::check_defaults(*s->source.layout(name).record, *r->record, "/" + name);
    }
    auto t = std::make_unique<state::tensor>();
    t->reader = r;
    t->writer = &s->source.layout(name);
    t->verdict = s->report.tensors.at(name);
    if (t->verdict != compatibility_class::identical) {
      // A blob tensor whose item differs only as String <-> List of Uint8
      // keeps its index and heap; anything else is converted.
      const bool bytes_only = r->kind == tensor_kind::blob && r->item.type != t->writer->item.type &&
                              r->item.shape == t->writer->item.shape &&
                              r->item.type == value_type::list;  // String -> List of Uint8: no check needed
      t->zero_copy = bytes_only;
    }
    s->tensors.emplace(name, std::move(t));
  }
  return migrated_file(std::move(s));
}

migrated_file migrated_file::open(const std::filesystem::path& path, const compiled_schema& reader) {
  return resolve(file::open(path), reader);
}

migrated_file file::open(const std::filesystem::path& path, const compiled_schema& reader_schema) {
  return migrated_file::open(path, reader_schema);
}

const file& migrated_file::source() const noexcept {
  return state_->source;
}
const compiled_schema& migrated_file::schema() const noexcept {
  return state_->reader;
}
const compatibility_report& migrated_file::report() const noexcept {
  return state_->report;
}

std::vector<std::string> migrated_file::tensor_names() const {
  std::vector<std::string> out;
  for (const auto& [name, _] : state_->tensors) out.push_back(name);
  return out;
}
bool migrated_file::contains(std::string_view name) const noexcept {
  return state_->tensors.find(name) != state_->tensors.end();
}
const tensor_layout& migrated_file::layout(std::string_view name) const {
  return *state_->at(name).reader;
}
std::span<const std::uint64_t> migrated_file::dims(std::string_view name) const {
  (void)state_->at(name);  // throws for a tensor the reader does not expose
  return state_->source.dims(name);
}
compatibility_class migrated_file::tensor_class(std::string_view name) const {
  return state_->at(name).verdict;
}
bool migrated_file::zero_copy(std::string_view name) const {
  return state_->at(name).zero_copy;
}

namespace {
[[noreturn]] void wrong_kind(std::string_view name, tensor_kind k, std::string_view wanted) {
  throw tensogram::invalid_arg_error("tensor " + detail::quoted(name) + " is a " + std::string(kind_name(k)) +
                                     " tensor, not " + std::string(wanted));
}
}  // namespace

flat_view migrated_file::flat(std::string_view name) const {
  const auto& t = state_->at(name);
  if (t.reader->kind != tensor_kind::flat) wrong_kind(name, t.reader->kind, "flat");
  if (t.zero_copy) return state_->source.flat(name);
  state_->convert(t);
  flat_view v;
  v.name_ = &t.reader->name;
  v.type_ = t.reader->flat_dtype;
  v.dims_ = state_->source.dims(name);
  v.count_ = detail::element_count(v.dims_);
  v.bytes_ = t.data.span();
  return v;
}

record_view migrated_file::records(std::string_view name) const {
  const auto& t = state_->at(name);
  if (t.reader->kind != tensor_kind::record) wrong_kind(name, t.reader->kind, "struct");
  if (t.zero_copy) return state_->source.records(name);
  state_->convert(t);
  record_view v;
  v.name_ = &t.reader->name;
  v.record_ = t.reader->record.get();
  v.dims_ = state_->source.dims(name);
  v.count_ = detail::element_count(v.dims_);
  v.bytes_ = t.data.span();
  v.heap_ = t.heap;
  return v;
}

blob_view migrated_file::blobs(std::string_view name) const {
  const auto& t = state_->at(name);
  if (t.reader->kind != tensor_kind::blob) wrong_kind(name, t.reader->kind, "blob");
  blob_view v = state_->source.blobs(name);  // runs the BlobRef checks
  v.item_ = &t.reader->item;
  if (t.zero_copy) return v;
  state_->convert(t);
  v.index_ = t.data.span();
  v.heap_ = t.heap;
  return v;
}

namespace {
// The writer's field at `path` when it has the reader's type there (then
// the file's bytes are the reader's, at the writer's offset), else nullptr.
const type_layout* writer_field(const record_layout& w, const record_layout& r, std::string_view path) {
  const record_layout* wr = &w;
  const record_layout* rr = &r;
  while (true) {
    const auto dot = path.find('.');
    const std::string_view head = path.substr(0, dot);
    const field_layout* rf = rr->find(head);
    const field_layout* wf = wr->find(head);
    if (rf == nullptr || wf == nullptr) return nullptr;
    if (dot == std::string_view::npos) return same_type(wf->type, rf->type) ? &wf->type : nullptr;
    if (rf->type.type != value_type::record || wf->type.type != value_type::record) return nullptr;
    wr = wf->type.record.get();
    rr = rf->type.record.get();
    path.remove_prefix(dot + 1);
  }
}
}  // namespace

bool migrated_file::field_zero_copy(std::string_view name, std::string_view path) const {
  const auto& t = state_->at(name);
  if (t.reader->kind != tensor_kind::record) wrong_kind(name, t.reader->kind, "struct");
  return t.zero_copy || writer_field(*t.writer->record, *t.reader->record, path) != nullptr;
}

field_view migrated_file::field(std::string_view name, std::string_view path) const {
  if (field_zero_copy(name, path)) return state_->source.records(name).field(path);
  return records(name).field(path);
}

}  // namespace metatensor

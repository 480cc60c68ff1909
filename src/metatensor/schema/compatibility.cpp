// Schema evolution (spec 06 §11.2–§11.5).
//
// Each logical tensor is compared on its compiled layout (so `$defs` renames
// and `$ref` restructuring that resolve to the same types are invisible, as
// §11.3 wants) and, when the layouts agree, on its schema text (annotations
// and value constraints: still "identical layout").
#include "metatensor/compatibility.hpp"

#include <algorithm>
#include <array>
#include <set>
#include <string>

#include "src/metatensor/text.hpp"

namespace metatensor {
namespace {

using cls = compatibility_class;

cls worst(cls a, cls b) noexcept {
  return std::max(a, b);
}

// The direct edges of §11.4; `is_widening` takes their transitive closure.
std::vector<dtype> widening_edges(dtype from) {
  switch (from) {
    case dtype::boolean: return {dtype::u8};
    case dtype::i8: return {dtype::i16, dtype::f32, dtype::f64};
    case dtype::i16: return {dtype::i32, dtype::f32, dtype::f64};
    case dtype::i32: return {dtype::i64, dtype::f64};
    case dtype::u8: return {dtype::u16, dtype::i16, dtype::f32, dtype::f64};
    case dtype::u16: return {dtype::u32, dtype::i32, dtype::f32, dtype::f64};
    case dtype::u32: return {dtype::u64, dtype::i64, dtype::f64};
    case dtype::f16:
    case dtype::bf16: return {dtype::f32};
    case dtype::f32: return {dtype::f64};
    default: return {};
  }
}

std::string dims_text(const std::vector<std::uint64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

std::string type_text(const type_layout& t) {
  std::string base;
  switch (t.type) {
    case value_type::scalar: base = std::string(safetensors::dtype_name(t.scalar)); break;
    case value_type::record: base = t.record && t.record->tuple ? "tuple" : "struct"; break;
    case value_type::string: base = "string"; break;
    case value_type::list: base = "list of " + (t.elem ? type_text(*t.elem) : std::string("?")); break;
  }
  return t.shape.empty() ? base : base + dims_text(t.shape);
}

std::string root_pointer(const std::string& name) {
  return detail::child_pointer("/properties", name);
}

// §5.1 dimension bounds of the reader that files valid under the writer's
// bounds may miss (the layouts agree, so the diff class does not show it).
void check_dimensions(const tensor_layout& w, const tensor_layout& r, std::vector<dimension_warning>& out) {
  for (std::size_t i = 0; i < std::min(w.rank(), r.rank()); ++i) {
    const dimension_bounds& wb = w.dims[i];
    const dimension_bounds& rb = r.dims[i];
    const std::string path = r.name + "[dim " + std::to_string(i) + "]";
    if (rb.min > wb.min) {
      out.push_back({path, r.node_pointer(i),
                     "minItems " + std::to_string(wb.min) + " -> " + std::to_string(rb.min) +
                         ": files with fewer than " + std::to_string(rb.min) + " items fail (MT_SHAPE)"});
    }
    if (rb.max && (!wb.max || *wb.max > *rb.max)) {
      out.push_back({path, r.node_pointer(i),
                     "maxItems " + (wb.max ? std::to_string(*wb.max) : std::string("(none)")) + " -> " +
                         std::to_string(*rb.max) + ": files with more than " + std::to_string(*rb.max) +
                         " items fail (MT_SHAPE)"});
    }
  }
}

struct differ {
  std::vector<schema_change> changes;

  void add(std::string path, std::string change, cls verdict, std::string pointer) {
    changes.push_back(schema_change{std::move(path), std::move(change), verdict, std::move(pointer)});
  }

  // Compares two types found at `path` (the reader's node at `ptr`); returns
  // the class and records lines for what differs (nothing when identical).
  cls compare_type(const type_layout& w, const type_layout& r, const std::string& path,
                   const std::string& ptr) {
    if (w.type != r.type) {
      // §11.3: String <-> List of Uint8 is convertible (List -> String needs
      // a UTF-8 check), when the fixed-array shape around them agrees.
      const auto is_bytes_list = [](const type_layout& t) {
        return t.type == value_type::list && t.elem && t.elem->type == value_type::scalar &&
               t.elem->scalar == dtype::u8 && t.elem->shape.empty();
      };
      if (w.shape == r.shape && ((w.type == value_type::string && is_bytes_list(r)) ||
                                 (is_bytes_list(w) && r.type == value_type::string))) {
        add(path,
            type_text(w) + " -> " + type_text(r) +
                (r.type == value_type::string ? " (needs a UTF-8 check)" : ""),
            cls::convertible, ptr);
        return cls::convertible;
      }
      add(path, "kind changed: " + type_text(w) + " -> " + type_text(r), cls::incompatible, ptr);
      return cls::incompatible;
    }
    if (w.shape != r.shape) {
      add(path, "fixed-array shape changed: " + dims_text(w.shape) + " -> " + dims_text(r.shape),
          cls::incompatible, ptr);
      return cls::incompatible;
    }
    switch (w.type) {
      case value_type::scalar:
        if (w.scalar == r.scalar) return cls::identical;
        if (is_widening(w.scalar, r.scalar)) {
          add(path,
              std::string(safetensors::dtype_name(w.scalar)) + " -> " +
                  std::string(safetensors::dtype_name(r.scalar)) + " (widening)",
              cls::convertible, ptr);
          return cls::convertible;
        }
        add(path,
            std::string(safetensors::dtype_name(w.scalar)) + " -> " +
                std::string(safetensors::dtype_name(r.scalar)) + " (not a widening)",
            cls::incompatible, ptr);
        return cls::incompatible;
      case value_type::string: return cls::identical;
      case value_type::list: return compare_type(*w.elem, *r.elem, path + "[]", r.elem->pointer);
      case value_type::record: return compare_record(*w.record, *r.record, path, ptr);
    }
    return cls::incompatible;
  }

  cls compare_record(const record_layout& w, const record_layout& r, const std::string& path,
                     const std::string& ptr) {
    if (w.tuple != r.tuple) {
      add(path, std::string(w.tuple ? "tuple" : "struct") + " -> " + (r.tuple ? "tuple" : "struct"),
          cls::incompatible, ptr);
      return cls::incompatible;
    }
    if (w.tuple && w.fields.size() != r.fields.size()) {
      add(path, "tuple arity " + std::to_string(w.fields.size()) + " -> " + std::to_string(r.fields.size()),
          cls::incompatible, ptr);
      return cls::incompatible;
    }
    cls verdict = cls::identical;
    const auto sub = [&](const std::string& name) { return path + "." + name; };
    for (const auto& rf : r.fields) {
      const field_layout* wf = w.find(rf.name);
      if (!wf) {
        if (rf.default_value) {
          add(sub(rf.name), "field added with a default", cls::view_compatible, rf.pointer);
          verdict = worst(verdict, cls::view_compatible);
        } else {
          add(sub(rf.name), "field added without a default", cls::incompatible, rf.pointer);
          verdict = worst(verdict, cls::incompatible);
        }
        continue;
      }
      cls c = compare_type(wf->type, rf.type, sub(rf.name), rf.pointer);
      if (wf->offset != rf.offset && c < cls::view_compatible) {
        add(sub(rf.name), "offset " + std::to_string(wf->offset) + " -> " + std::to_string(rf.offset),
            cls::view_compatible, rf.pointer);
        c = cls::view_compatible;
      }
      verdict = worst(verdict, c);
    }
    for (const auto& wf : w.fields) {
      if (!r.find(wf.name)) {
        add(sub(wf.name), "field removed", cls::view_compatible, wf.pointer);
        verdict = worst(verdict, cls::view_compatible);
      }
    }
    // Same fields at the same offsets, yet a different size or alignment
    // (a raised struct `align`): the stride changes, field views still work.
    if (verdict < cls::view_compatible && (w.size != r.size || w.align != r.align)) {
      add(path,
          "record size/alignment " + std::to_string(w.size) + "/" + std::to_string(w.align) + " -> " +
              std::to_string(r.size) + "/" + std::to_string(r.align),
          cls::view_compatible, ptr);
      verdict = cls::view_compatible;
    }
    return verdict;
  }

  cls compare_tensor(const tensor_layout& w, const tensor_layout& r) {
    const std::string& path = r.name;
    const std::string root = root_pointer(r.name);
    if (w.kind != r.kind) {
      add(path,
          std::string("kind changed: ") + std::string(kind_name(w.kind)) + " -> " +
              std::string(kind_name(r.kind)),
          cls::incompatible, root);
      return cls::incompatible;
    }
    if (w.rank() != r.rank()) {
      add(path, "rank changed: " + std::to_string(w.rank()) + " -> " + std::to_string(r.rank()),
          cls::incompatible, root);
      return cls::incompatible;
    }
    switch (w.kind) {
      case tensor_kind::flat: {
        type_layout a, b;
        a.scalar = w.flat_dtype;
        b.scalar = r.flat_dtype;
        return compare_type(a, b, path, r.element_pointer());
      }
      case tensor_kind::record: return compare_record(*w.record, *r.record, path, r.element_pointer());
      case tensor_kind::blob: return compare_type(w.item, r.item, path + "[item]", r.element_pointer());
    }
    return cls::incompatible;
  }
};

}  // namespace

std::string_view compatibility_class_name(compatibility_class c) noexcept {
  switch (c) {
    case cls::identical: return "identical layout";
    case cls::compatible: return "compatible";
    case cls::view_compatible: return "view-compatible";
    case cls::convertible: return "convertible";
    case cls::incompatible: return "incompatible";
  }
  return "incompatible";
}

bool is_widening(dtype from, dtype to) noexcept {
  if (from == to) return false;
  std::array<bool, safetensors::dtype_count> seen{};
  std::vector<dtype> todo{from};
  while (!todo.empty()) {
    const dtype t = todo.back();
    todo.pop_back();
    for (dtype next : widening_edges(t)) {
      if (next == to) return true;
      auto& s = seen[static_cast<std::size_t>(next)];
      if (!s) {
        s = true;
        todo.push_back(next);
      }
    }
  }
  return false;
}

compatibility_report compatibility(const compiled_schema& writer, const compiled_schema& reader) {
  differ d;
  std::set<std::string> names;
  for (const auto& t : writer.tensors()) names.insert(t.name);
  for (const auto& t : reader.tensors()) names.insert(t.name);
  compatibility_report report;
  for (const auto& name : names) {
    const tensor_layout* w = writer.find(name);
    const tensor_layout* r = reader.find(name);
    const bool reader_requires = r != nullptr && r->required;
    const std::size_t before = d.changes.size();
    cls c = cls::identical;
    const std::string root = root_pointer(name);
    if (!w) {
      c = reader_requires ? cls::incompatible : cls::compatible;
      d.add(name,
            reader_requires ? "root property added to required (files without it fail)"
                            : "root property added (absent in old files)",
            c, root);
    } else if (!r) {
      c = cls::compatible;
      d.add(name, "root property removed (the reader ignores it)", c, root);
    } else {
      if (reader_requires && !w->required) {
        d.add(name, "root property became required (old files may lack it)", cls::incompatible, root);
        c = cls::incompatible;
      }
      c = worst(c, d.compare_tensor(*w, *r));
      if (w->rank() == r->rank()) check_dimensions(*w, *r, report.dimension_warnings);
      if (c == cls::identical) {
        // Same layout; the schema text may still differ in annotations or
        // value constraints (§11.3: identical layout, stricter readers may
        // reject old files in deep validation).
        if (writer.document().at("properties").at(name) != reader.document().at("properties").at(name) ||
            writer.property_schema(name) != reader.property_schema(name)) {
          d.add(name, "annotations, value constraints or $ref structure changed", cls::identical, root);
        } else if (w->root_align != r->root_align) {
          d.add(name, "TypeDef:Align on the root property changed", cls::identical, root);
        }
      }
    }
    if (d.changes.size() == before) d.add(name, "unchanged", cls::identical, root);
    report.tensors[name] = c;
    report.verdict = worst(report.verdict, c);
  }
  report.changes = std::move(d.changes);
  return report;
}

void require_compatible(const compatibility_report& report) {
  if (report.verdict != cls::incompatible) return;
  for (const auto& change : report.changes) {
    if (change.verdict == cls::incompatible) {
      throw error(errc::mt_schema_incompatible, change.pointer + ": " + change.path + ": " + change.change);
    }
  }
}

}  // namespace metatensor

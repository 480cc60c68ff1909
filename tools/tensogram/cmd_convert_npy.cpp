// `convert-npy`: NumPy .npy arrays → one Tensogram message (tensogram-cpp
// addition; the reference has no .npy importer).
#include <tensogram.hpp>

#include "atomic_file.hpp"
#include "commands.hpp"
#include "meta_option.hpp"
#include "npy.hpp"
#include "tool_error.hpp"

namespace tensogram::cli {

void run_convert_npy(const convert_npy_args& args, const encode_options& options, std::ostream& out,
                     std::ostream& err) {
  // --meta errors are found before any input is read.
  const cbor::value meta_map = build_meta_map(args.meta);

  // Everything the objects point into stays alive until encode: the mapped
  // inputs and, for Fortran-order inputs, the reordered copies.
  std::vector<buffer> inputs;
  std::vector<std::vector<std::byte>> reordered;
  std::vector<object_input> objects;
  inputs.reserve(args.inputs.size());
  reordered.reserve(args.inputs.size());
  objects.reserve(args.inputs.size());
  for (const std::string& path : args.inputs) {
    inputs.push_back(buffer::map_file(path));
    npy::array a;
    try {
      a = npy::parse(inputs.back().bytes());
    } catch (const npy::npy_error& e) {
      throw tool_error(path + ": " + e.what());
    }
    if (a.element.is_bool) {
      err << "warning: " << path << ": bool array stored as uint8 (0/1); Tensogram has no boolean dtype\n";
    }
    std::span<const std::byte> data = a.data;
    if (a.hdr.fortran_order && a.hdr.shape.size() > 1) {
      // Tensogram objects are C-order (spec 02 §7): reorder the elements
      // rather than reinterpret the shape.
      reordered.push_back(npy::fortran_to_c_order(a.data, a.hdr.shape, a.element.itemsize));
      data = reordered.back();
    }
    // Bytes are stored exactly as the file holds them; the descriptor
    // records their byte order (the encoder never swaps, spec 02 §6).
    objects.push_back(
        object_input{data_object_descriptor::contiguous(a.element.type, a.hdr.shape, a.element.order), data});
  }

  global_metadata meta;
  meta.base.assign(objects.size(), meta_map);
  const std::vector<std::byte> encoded = encode(meta, objects, options);
  write_file_atomically(args.output, encoded);
  out << "Wrote " << objects.size() << (objects.size() == 1 ? " object" : " objects") << " to " << args.output
      << '\n';
}

}  // namespace tensogram::cli

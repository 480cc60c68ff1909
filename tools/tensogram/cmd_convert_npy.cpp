// `convert-npy`: NumPy .npy arrays → one Tensogram message (tensogram-cpp
// addition; the reference has no .npy importer).
#include <tensogram.hpp>

#include <tensogram/io/file.hpp>
#include "commands.hpp"
#include "meta_option.hpp"
#include "npy.hpp"
#include "progress.hpp"
#include "tool_error.hpp"

namespace tensogram::cli {

void run_convert_npy(const convert_npy_args& args, const encode_options& options, std::ostream& out,
                     std::ostream& err, bool show_progress) {
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
  // One step per input, one for encoding and writing the message.
  progress bar("convert-npy", args.inputs.size() + 1, show_progress);
  for (const std::string& path : args.inputs) {
    inputs.push_back(buffer::map_file(path));
    npy::array a;
    try {
      a = npy::parse(inputs.back().bytes());
    } catch (const npy::npy_error& e) {
      throw tool_error(path + ": " + e.what());
    }
    if (!a.hdr.fields.empty()) {
      throw tool_error(
          path +
          ": structured dtypes (a list as 'descr') are not supported; Tensogram objects are plain "
          "N-d arrays (`metatensor from-npy` turns records into a struct tensor)");
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
    data_object_descriptor d =
        data_object_descriptor::contiguous(a.element.type, a.hdr.shape, a.element.order);
    apply_pipeline_flags(args.pipeline, d, path);
    objects.push_back(object_input{std::move(d), data});
    bar.advance();
  }

  global_metadata meta;
  meta.base.assign(objects.size(), meta_map);
  const std::vector<std::byte> encoded = encode(meta, objects, options);
  write_file_atomically(args.output, encoded, atomic_write_options{.sync = !args.no_sync});
  bar.advance();
  bar.finish();
  out << "Wrote " << objects.size() << (objects.size() == 1 ? " object" : " objects") << " to " << args.output
      << '\n';
}

}  // namespace tensogram::cli

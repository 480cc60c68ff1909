// `to-npy`: every decoded object of a .tgm file → one .npy file
// (tensogram-cpp addition).
#include <filesystem>
#include <system_error>

#include <tensogram.hpp>

#include <tensogram/io/file.hpp>
#include "commands.hpp"
#include "npy.hpp"
#include "tgm_file.hpp"
#include "tool_error.hpp"

namespace tensogram::cli {

void run_to_npy(const to_npy_args& args, const decode_options& options, std::ostream& out,
                std::ostream& err) {
  tgm_file f = open_tgm(args.input);
  // Scan before creating the output directory: a missing input creates nothing.
  const std::size_t count = f.count();
  const std::filesystem::path dir(args.output_dir);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw tool_error("cannot create output directory " + args.output_dir + ": " + ec.message());
  if (!std::filesystem::is_directory(dir)) throw tool_error(args.output_dir + " is not a directory");

  decode_options opts = options;
  opts.native_byte_order = true;  // .npy files are written in the host's byte order
  for (std::size_t i = 0; i < count; ++i) {
    const buffer bytes = f.message(i);
    const std::size_t objects = decode_descriptors(bytes.bytes()).second.size();
    for (std::size_t j = 0; j < objects; ++j) {
      const std::string name = std::to_string(i) + "_" + std::to_string(j) + ".npy";
      const std::string where =
          args.input + ": message " + std::to_string(i) + " object " + std::to_string(j);
      // One object at a time, so that a damaged payload is reported with the
      // object it belongs to (the library's texts are the reference's).
      message msg;
      try {
        msg = decode_object(bytes, j, opts);
      } catch (const tensogram::error& e) {
        throw tool_error(where + ": " + e.what());
      }
      const decoded_object& o = msg.object(0);
      const data_object_descriptor& d = o.descriptor();
      std::string descr;
      std::vector<std::uint64_t> shape = d.shape;
      switch (d.dtype) {
        case dtype::bitmask:
          // NumPy has no bit type: keep the packed bytes (MSB-first, spec 02
          // §5) as a flat uint8 array so nothing is lost, and say so.
          descr = "|u1";
          shape = {o.bytes().size()};
          err << "warning: " << where << ": bitmask of " << d.element_count()
              << " bits written as packed uint8 bytes to " << name << '\n';
          break;
        case dtype::bfloat16:
          // No bfloat16 in NumPy: the raw 16-bit patterns, same shape.
          descr = npy::descr_for(dtype::uint16, o.data_byte_order());
          err << "warning: " << where << ": bfloat16 written as raw uint16 bit patterns to " << name << '\n';
          break;
        default: descr = npy::descr_for(d.dtype, o.data_byte_order());
      }
      if (o.reinterpreted_as_float64()) {
        // The reference decoder's bytes (spec 03 §3.3): zfp gives 8·N bytes
        // whatever the dtype, so they go out flat when they do not fill the
        // shape — elements of the dtype where they divide into them, else
        // bytes — exactly as the Python module returns them.
        err << "warning: " << where << ": " << d.compression << " compressed " << dtype_name(d.dtype)
            << " data as reinterpreted float64; " << name << " holds the reference decoder's bytes, not the "
            << "original values\n";
        const std::size_t width = dtype_width(d.dtype);
        if (d.dtype != dtype::bitmask && o.bytes().size() != d.element_count() * width) {
          if (o.bytes().size() % width != 0) descr = "|u1";
          shape = {o.bytes().size() / (o.bytes().size() % width != 0 ? 1 : width)};
        }
      }
      const std::vector<std::byte> file = npy::serialize(descr, shape, o.bytes());
      const std::filesystem::path target = dir / name;
      write_file_atomically(target, file);
      out << target.string() << '\n';
    }
  }
}

}  // namespace tensogram::cli

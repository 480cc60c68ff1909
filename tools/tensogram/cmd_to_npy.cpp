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
    const message msg = decode(f.message(i), opts);
    for (std::size_t j = 0; j < msg.num_objects(); ++j) {
      const decoded_object& o = msg.object(j);
      const data_object_descriptor& d = o.descriptor();
      const std::string name = std::to_string(i) + "_" + std::to_string(j) + ".npy";
      const std::string where =
          args.input + ": message " + std::to_string(i) + " object " + std::to_string(j);
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
      const std::vector<std::byte> file = npy::serialize(descr, shape, o.bytes());
      const std::filesystem::path target = dir / name;
      write_file_atomically(target, file);
      out << target.string() << '\n';
    }
  }
}

}  // namespace tensogram::cli

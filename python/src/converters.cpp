// GRIB/NetCDF converters of the module (spec 04 B.5, spec 05): convert_grib,
// convert_grib_buffer, convert_netcdf, to_grib, to_netcdf. They exist in
// every build; without the importers they raise RuntimeError saying so.
#include <pybind11/stl.h>

#include <cerrno>
#include <string>
#include <vector>

#include "binding.hpp"
#include "tensogram/core/hex.hpp"

#if TENSOGRAM_HAS_IMPORTERS
#include "tensogram/importers/grib.hpp"
#include "tensogram/importers/netcdf.hpp"
#endif

namespace tensogram::python {

namespace {

#if TENSOGRAM_HAS_IMPORTERS

// Spec 08 §1.10: a one-argument FileNotFoundError (errno None).
std::string checked_path(const py::object& path) {
  const std::string p = py::str(py::module_::import("os").attr("fspath")(path));
  if (!py::module_::import("os").attr("path").attr("exists")(p).cast<bool>()) {
    PyErr_SetString(PyExc_FileNotFoundError, ("no such file: " + p).c_str());
    throw py::error_already_set();
  }
  return p;
}

// The pipeline and encode keywords shared by the importers (spec 05 §1).
importers::conversion_options conversion_of(const std::string& encoding, const py::object& bits,
                                            const std::string& filter, const std::string& compression,
                                            const py::object& level, threads_arg threads,
                                            const py::object& hash) {
  importers::conversion_options c;
  c.pipeline.encoding = encoding;
  if (!bits.is_none()) c.pipeline.bits = bits.cast<std::uint32_t>();
  c.pipeline.filter = filter;
  c.pipeline.compression = compression;
  if (!level.is_none()) c.pipeline.compression_level = level.cast<std::int32_t>();
  c.encode = make_encode_options(hash, threads, false, false, py::none(), py::none(), py::none(), py::none(),
                                 py::none());
  // The reference prints its warnings to stderr; so does the module (with
  // the GIL, which the conversion itself runs without).
  c.on_warning = [](std::string_view message) {
    py::gil_scoped_acquire gil;
    py::module_::import("sys").attr("stderr").attr("write")("warning: " + std::string(message) + "\n");
  };
  return c;
}

py::list to_list(std::vector<std::vector<std::byte>> messages) {
  py::list out;
  for (const auto& m : messages) out.append(to_bytes(m));
  return out;
}

importers::grib_grouping grouping_of(const std::string& g) {
  if (g == "merge_all") return importers::grib_grouping::merge_all;
  if (g == "one_to_one") return importers::grib_grouping::one_to_one;
  throw py::value_error("grouping must be 'one_to_one' or 'merge_all', got " + debug_quoted(g));
}

// `messages`: one bytes-like message or a list of them.
std::vector<std::vector<std::byte>> message_list(const py::object& messages) {
  std::vector<std::vector<std::byte>> out;
  auto add = [&out](py::handle h) {
    const borrowed_bytes b(h, "message");
    out.emplace_back(b.bytes().begin(), b.bytes().end());
  };
  if (PyList_Check(messages.ptr()) || PyTuple_Check(messages.ptr())) {
    for (py::handle h : messages) add(h);
  } else {
    add(messages);
  }
  return out;
}

#else

// The reference's first sentence (spec 08 §1.10), which scripts match on,
// then how to get the converters into *this* build (not maturin features).
[[noreturn]] void converter_missing(const char* format, const char* package) {
  throw std::runtime_error(std::string("tensogram was built without ") + format + " support. Install " +
                           package + " (`apt install " + package +
                           "`) and rebuild tensogram with -DTENSOGRAM_BUILD_IMPORTERS=ON.");
}

#endif

}  // namespace

void register_converters(py::module_& m) {
#if TENSOGRAM_HAS_IMPORTERS
  m.attr("__has_grib__") = true;
  m.attr("__has_netcdf__") = true;
  const auto grib = [](const py::object& source, bool from_buffer, const std::string& grouping, bool all_keys,
                       const std::string& encoding, const py::object& bits, const std::string& filter,
                       const std::string& compression, const py::object& level, threads_arg threads,
                       const py::object& hash) {
    // Spec 08 §1.10: the buffer is checked before the options.
    if (from_buffer && (PyUnicode_Check(source.ptr()) || PyObject_CheckBuffer(source.ptr()) == 0)) {
      throw py::value_error(
          "convert_grib_buffer expects a bytes-like object (bytes, bytearray, memoryview, numpy.uint8[:])");
    }
    importers::grib_options o;
    o.conversion = conversion_of(encoding, bits, filter, compression, level, threads, hash);
    o.grouping = grouping_of(grouping);
    o.preserve_all_keys = all_keys;
    std::vector<std::vector<std::byte>> messages;
    if (from_buffer) {
      const borrowed_bytes in(source, "buffer");
      py::gil_scoped_release release;
      messages = importers::convert_grib_buffer(in.bytes(), o);
    } else {
      const std::string path = checked_path(source);
      py::gil_scoped_release release;
      messages = importers::convert_grib_file(path, o);
    }
    return to_list(std::move(messages));
  };
  m.def(
      "convert_grib",
      [grib](const py::object& path, const std::string& grouping,
             strict_bool<"preserve_all_keys"> preserve_all_keys, const std::string& encoding,
             const py::object& bits, const std::string& filter, const std::string& compression,
             const py::object& level, threads_arg threads, const py::object& hash) {
        return grib(path, false, grouping, preserve_all_keys, encoding, bits, filter, compression, level,
                    threads, hash);
      },
      py::arg("path"), py::kw_only(), py::arg("grouping") = "merge_all", py::arg("preserve_all_keys") = false,
      py::arg("encoding") = "none", py::arg("bits") = py::none(), py::arg("filter") = "none",
      py::arg("compression") = "none", py::arg("compression_level") = py::none(), py::arg("threads") = 0,
      py::arg("hash") = "xxh3", R"doc(
convert_grib(path, *, grouping="merge_all", preserve_all_keys=False, encoding="none", bits=None, filter="none",
             compression="none", compression_level=None, threads=0, hash="xxh3") -> list[bytes]

Converts every GRIB message of a file (ecCodes) into Tensogram messages: one message holding all fields
(grouping "merge_all") or one per GRIB message ("one_to_one"). Values are float64 shaped [Nj, Ni]; points
missing in a GRIB bitmap become NaN (recorded in the NaN mask). base[i] holds "mars" (with "grid" and
"area"), "grib_repro" (what to_grib needs) and, with preserve_all_keys, "grib".
)doc");
  m.def(
      "convert_grib_buffer",
      [grib](const py::object& buffer, const std::string& grouping,
             strict_bool<"preserve_all_keys"> preserve_all_keys, const std::string& encoding,
             const py::object& bits, const std::string& filter, const std::string& compression,
             const py::object& level, threads_arg threads, const py::object& hash) {
        return grib(buffer, true, grouping, preserve_all_keys, encoding, bits, filter, compression, level,
                    threads, hash);
      },
      py::arg("buffer"), py::kw_only(), py::arg("grouping") = "merge_all",
      py::arg("preserve_all_keys") = false, py::arg("encoding") = "none", py::arg("bits") = py::none(),
      py::arg("filter") = "none", py::arg("compression") = "none", py::arg("compression_level") = py::none(),
      py::arg("threads") = 0, py::arg("hash") = "xxh3",
      "convert_grib for GRIB messages held in memory (any bytes-like object).");
  m.def(
      "convert_netcdf",
      [](const py::object& path, const std::string& split_by, strict_bool<"cf"> cf,
         strict_bool<"nested_groups"> nested_groups, const std::string& encoding, const py::object& bits,
         const std::string& filter, const std::string& compression, const py::object& level,
         threads_arg threads, const py::object& hash) {
        importers::netcdf_options o;
        o.conversion = conversion_of(encoding, bits, filter, compression, level, threads, hash);
        if (split_by == "file") {
          o.split_by = importers::netcdf_split::file;
        } else if (split_by == "variable") {
          o.split_by = importers::netcdf_split::variable;
        } else if (split_by == "record") {
          o.split_by = importers::netcdf_split::record;
        } else {
          throw py::value_error("split_by must be 'file', 'variable' or 'record', got " +
                                debug_quoted(split_by));
        }
        o.cf = cf;
        o.nested_groups = nested_groups;
        const std::string p = checked_path(path);
        std::vector<std::vector<std::byte>> messages;
        {
          py::gil_scoped_release release;
          messages = importers::convert_netcdf_file(p, o);
        }
        return to_list(std::move(messages));
      },
      py::arg("path"), py::kw_only(), py::arg("split_by") = "file", py::arg("cf") = false,
      py::arg("nested_groups") = true, py::arg("encoding") = "none", py::arg("bits") = py::none(),
      py::arg("filter") = "none", py::arg("compression") = "none", py::arg("compression_level") = py::none(),
      py::arg("threads") = 0, py::arg("hash") = "xxh3", R"doc(
convert_netcdf(path, *, split_by="file", cf=False, nested_groups=True, encoding="none", bits=None,
               filter="none", compression="none", compression_level=None, threads=0, hash="xxh3") -> list[bytes]

Converts the variables of a NetCDF-3 or NetCDF-4 file (netCDF-C): one message per file, per variable or per
record of the unlimited dimension. Packed variables (scale_factor/add_offset) are unpacked to float64 with
fill values as NaN. nested_groups=False converts the root group only, as the reference does.
)doc");
  m.def(
      "to_grib",
      [](const py::object& messages) {
        const auto list = message_list(messages);
        std::vector<std::byte> out;
        {
          py::gil_scoped_release release;
          for (const auto& msg : list) {
            const std::vector<std::byte> part = importers::to_grib(msg);
            out.insert(out.end(), part.begin(), part.end());
          }
        }
        return to_bytes(out);
      },
      py::arg("messages"), "GRIB bytes rebuilt from messages written by convert_grib (one bytes or a list).");
  m.def(
      "to_netcdf",
      [](const py::object& messages, const py::object& path) {
        const auto list = message_list(messages);
        const std::string p = py::str(py::module_::import("os").attr("fspath")(path));
        py::gil_scoped_release release;
        importers::to_netcdf(list, p);
      },
      py::arg("messages"), py::arg("path"),
      "Writes one NetCDF-4 file (atomically) from messages written by convert_netcdf.");
#else
  m.attr("__has_grib__") = false;
  m.attr("__has_netcdf__") = false;
  m.def("convert_grib",
        [](const py::args&, const py::kwargs&) { converter_missing("GRIB", "libeccodes-dev"); });
  m.def("convert_grib_buffer",
        [](const py::args&, const py::kwargs&) { converter_missing("GRIB", "libeccodes-dev"); });
  m.def("convert_netcdf",
        [](const py::args&, const py::kwargs&) { converter_missing("NetCDF", "libnetcdf-dev"); });
  m.def("to_grib", [](const py::args&, const py::kwargs&) { converter_missing("GRIB", "libeccodes-dev"); });
  m.def("to_netcdf",
        [](const py::args&, const py::kwargs&) { converter_missing("NetCDF", "libnetcdf-dev"); });
#endif
}

}  // namespace tensogram::python

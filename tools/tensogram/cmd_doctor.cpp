// `doctor [--json]` (spec 04 §A.5): build information, compiled-in features
// and a self-test, from the library's report (tensogram::run_doctor) plus the
// converter rows that only the command line carries.
#include <cstddef>
#include <ostream>
#include <string_view>

#include <tensogram/doctor.hpp>
#if TENSOGRAM_HAS_IMPORTERS
#include <tensogram/importers/doctor_checks.hpp>
#endif

#include "commands.hpp"

namespace tensogram::cli {

namespace {

// Column widths of the human report (spec 04 §A.5). Like the reference's
// `{:<22}` / `{:<42}`, a label is padded to the width and never cut, so a
// label as long as the column runs straight into the value.
constexpr std::size_t feature_width = 22;
constexpr std::size_t self_test_width = 42;

void cell(std::ostream& out, std::string_view label, std::size_t width) {
  out << "  " << label;
  for (std::size_t i = label.size(); i < width; ++i) out << ' ';
}

}  // namespace

doctor_report cli_doctor_report() {
  doctor_report r = tensogram::run_doctor();
#if TENSOGRAM_HAS_IMPORTERS
  importers::add_converter_rows(r);
#else
  // A build without the importers (TENSOGRAM_BUILD_IMPORTERS=OFF) says so
  // rather than pretend.
  r.features.push_back(feature_status::make_off("grib", feature_kind::converter));
  r.features.push_back(feature_status::make_off("netcdf", feature_kind::converter));
  r.self_test.push_back(self_test_result::not_built_in("convert        grib    (sanity.grib2)", "grib"));
  r.self_test.push_back(
      self_test_result::not_built_in("convert        netcdf3 (sanity-classic.nc)", "netcdf"));
  r.self_test.push_back(self_test_result::not_built_in("convert        netcdf4 (sanity-hdf5.nc)", "netcdf"));
#endif
  return r;
}

void print_doctor_human(const doctor_report& r, std::ostream& out) {
  out << "tensogram doctor\n================\n\nBuild\n";
  cell(out, "tensogram", feature_width);
  out << r.build.version << '\n';
  cell(out, "wire-format", feature_width);
  out << r.build.wire_version << '\n';
  cell(out, "target", feature_width);
  out << r.build.target << '\n';
  cell(out, "profile", feature_width);
  out << r.build.profile << "\n\nCompiled-in features\n";
  for (const feature_status& f : r.features) {
    cell(out, f.name, feature_width);
    if (f.on) {
      out << "on  (" << f.backend << ' ' << (f.linkage == feature_linkage::ffi ? "FFI" : "built-in") << ' '
          << f.version.value_or("unknown") << ")\n";
    } else {
      out << "off\n";
    }
  }
  out << "\nSelf-test\n";
  for (const self_test_result& t : r.self_test) {
    cell(out, t.label, self_test_width);
    switch (t.outcome) {
      case self_test_outcome::ok: out << "ok\n"; break;
      case self_test_outcome::failed: out << "FAILED  (" << t.detail << ")\n"; break;
      case self_test_outcome::skipped: out << "skipped (" << t.detail << ")\n"; break;
    }
  }
  out << "\nStatus: " << (r.healthy() ? "HEALTHY" : "UNHEALTHY") << '\n';
}

int write_doctor_report(const doctor_report& r, bool json, std::ostream& out) {
  if (json) {
    out << r.to_json() << '\n';
  } else {
    print_doctor_human(r, out);
  }
  // The report already shows the failure: exit 1 without an `error:` line
  // (spec 04 §A.1).
  return r.healthy() ? 0 : 1;
}

int run_doctor(const doctor_args& args, std::ostream& out) {
  return write_doctor_report(cli_doctor_report(), args.json, out);
}

}  // namespace tensogram::cli

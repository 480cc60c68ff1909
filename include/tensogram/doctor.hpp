// Environment diagnostics: build information, compiled-in features and a
// self-test that encodes and decodes through this library (spec 04 §A.5
// `doctor`, Part B `doctor()`, Part C `tgm_doctor_to_json`).
//
// `run_doctor()` returns the library's report: the twelve core feature rows
// and the core self-test rows. The `tensogram doctor` command appends the two
// converter feature rows (`grib`, `netcdf`) and the three converter
// self-test rows, exactly as the reference's CLI does; the library entry
// points omit them (spec 04 §A.5, last paragraph of `doctor`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tensogram {

/// Compile-time facts about the library (JSON `build`).
struct doctor_build_info {
  std::string version;             ///< `library_version()`, e.g. "0.1.0"
  std::uint16_t wire_version = 3;  ///< wire format read and written
  std::string target;              ///< target triple, e.g. "x86_64-unknown-linux-gnu"
  std::string profile;             ///< "release" (NDEBUG) or "debug"
};

/// Category of a feature row (JSON `kind`).
enum class feature_kind { compression, threading, io, converter };

/// How an "on" feature is provided (JSON `linkage`). The reference has `ffi`
/// (a C library) and `pure-rust` (a Rust crate); the port keeps `ffi` for the
/// C libraries it links and says `builtin` for code of tensogram-cpp itself,
/// as spec 04 §A.5 allows ("replace the backend/linkage text with its own").
enum class feature_linkage { ffi, builtin };

/// One row of "Compiled-in features".
struct feature_status {
  std::string name;
  feature_kind kind = feature_kind::compression;
  bool on = false;
  // Only meaningful when `on`.
  std::string backend;  ///< e.g. "libzstd"
  feature_linkage linkage = feature_linkage::ffi;
  std::optional<std::string> version;  ///< null in JSON, "unknown" for humans

  [[nodiscard]] static feature_status make_on(std::string name, feature_kind kind, std::string backend,
                                              feature_linkage linkage, std::optional<std::string> version);
  [[nodiscard]] static feature_status make_off(std::string name, feature_kind kind);
};

enum class self_test_outcome { ok, failed, skipped };

/// One row of "Self-test". `detail` is the error (failed) or the reason
/// (skipped) and empty for `ok`.
struct self_test_result {
  std::string label;
  self_test_outcome outcome = self_test_outcome::ok;
  std::string detail;

  [[nodiscard]] static self_test_result ok(std::string label);
  [[nodiscard]] static self_test_result failed(std::string label, std::string error);
  /// A row for a feature this build lacks: reason `feature '<name>' not built in`.
  [[nodiscard]] static self_test_result not_built_in(std::string label, std::string_view feature);
};

struct doctor_report {
  doctor_build_info build;
  std::vector<feature_status> features;
  std::vector<self_test_result> self_test;

  /// True iff no self-test row failed (skips are fine): `Status: HEALTHY`.
  [[nodiscard]] bool healthy() const noexcept;
  /// The report as pretty-printed JSON in the spec's shape (two-space
  /// indent, members in the reference's order, no trailing newline).
  [[nodiscard]] std::string to_json() const;
};

/// Collects build info and feature states and runs the self-test. Never
/// throws for a failing check: failures become `failed` rows.
[[nodiscard]] doctor_report run_doctor();

/// `run_doctor().to_json()`: the document `tgm_doctor_to_json` returns.
[[nodiscard]] std::string doctor_json();

/// Whether the codec registry of this build can run compression `name` (a
/// wire-format name such as "zstd" or "blosc2"). Asks the compressor table
/// itself (codecs::is_known_compression), so the answer follows the codecs
/// actually compiled in; used by the doctor's feature rows and by the CLI to
/// offer only codecs that exist.
[[nodiscard]] bool is_compression_built_in(std::string_view name);

/// JSON spellings: "compression", "threading", "io", "converter"; "ffi",
/// "pure-rust" (the reference's word for code without a foreign library, kept
/// for its consumers, spec 08 §9); "ok", "failed", "skipped".
[[nodiscard]] std::string_view to_string(feature_kind k) noexcept;
[[nodiscard]] std::string_view to_string(feature_linkage l) noexcept;
[[nodiscard]] std::string_view to_string(self_test_outcome o) noexcept;

}  // namespace tensogram

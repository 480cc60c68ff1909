// Environment diagnostics (spec 04 §A.5 `doctor`, Part B `doctor()`).
//
// Every self-test row runs the public encode/decode entry points on a small
// array and checks the decoded values, so a row says "ok" only when that
// path really works in this build. Codec rows ask the codec registry whether
// the codec exists (is_compression_built_in) instead of keeping their own
// list, so a codec added to src/codecs turns its rows on by itself.
#include "tensogram/doctor.hpp"

// The WebAssembly build (docs/wasm.md) has no libcurl, and libaec only when
// its source package could be obtained.
#ifndef __EMSCRIPTEN__
#include <curl/curl.h>
#endif
#if __has_include(<libaec.h>)
#include <libaec.h>
#endif
#include <lz4.h>
#include <zstd.h>

#include <algorithm>
#include <climits>  // also brings in <features.h> (__GLIBC__) on glibc systems
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tensogram/codecs/pipeline_spec.hpp"
#include "tensogram/codecs/szip.hpp"
#include "tensogram/core/buffer.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/format/wire.hpp"
#include "tensogram/message/decode.hpp"
#include "tensogram/message/encode.hpp"
#include "tensogram/message/metadata.hpp"
#include "tensogram/message/metadata_view.hpp"

namespace tensogram {

namespace {

// ---------------------------------------------------------------------------
// Build information.

// The Rust-style target triple the reference prints (rustc's TARGET), built
// from the compiler's predefined macros.
std::string target_triple() {
#if defined(__x86_64__) || defined(_M_X64)
  std::string arch = "x86_64";
#elif defined(__aarch64__) || defined(_M_ARM64)
  std::string arch = "aarch64";
#elif defined(__i386__) || defined(_M_IX86)
  std::string arch = "i686";
#elif defined(__arm__)
  std::string arch = "arm";
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
  std::string arch = "powerpc64le";
#elif defined(__powerpc64__)
  std::string arch = "powerpc64";
#elif defined(__riscv) && __riscv_xlen == 64
  std::string arch = "riscv64gc";
#elif defined(__s390x__)
  std::string arch = "s390x";
#elif defined(__loongarch64)
  std::string arch = "loongarch64";
#else
  std::string arch = "unknown";
#endif

#if defined(__APPLE__)
  return arch + "-apple-darwin";
#elif defined(__ANDROID__)
  return arch + "-linux-android";
#elif defined(__linux__)
#if defined(__GLIBC__)
  std::string env = "gnu";
#else
  std::string env = "musl";  // the other libc Rust targets name on Linux
#endif
#if defined(__arm__) && defined(__ARM_PCS_VFP)
  env += "eabihf";
#elif defined(__arm__)
  env += "eabi";
#endif
  return arch + "-unknown-linux-" + env;
#elif defined(_WIN32) && defined(_MSC_VER)
  return arch + "-pc-windows-msvc";
#elif defined(_WIN32)
  return arch + "-pc-windows-gnu";
#elif defined(__FreeBSD__)
  return arch + "-unknown-freebsd";
#else
  return arch + "-unknown-unknown";
#endif
}

doctor_build_info collect_build_info() {
  doctor_build_info b;
  b.version = std::string(library_version());
  b.wire_version = format::wire_version;
#ifdef NDEBUG
  b.profile = "release";
#else
  b.profile = "debug";
#endif
  b.target = target_triple();
  return b;
}

// ---------------------------------------------------------------------------
// Features (spec 04 §A.5: szip, szip-pure, zstd, zstd-pure, lz4, blosc2, zfp,
// sz3, threads, remote, mmap, async, in this order).

#if __has_include(<libaec.h>)
std::optional<std::string> libaec_version() {
#ifdef AEC_VERSION_STR
  return std::string(AEC_VERSION_STR);  // libaec >= 1.1
#else
  return std::nullopt;  // libaec 1.0.x has no version API
#endif
}
#endif

#ifndef __EMSCRIPTEN__
std::optional<std::string> curl_version_text() {
  const curl_version_info_data* info = curl_version_info(CURLVERSION_NOW);
  if (info == nullptr || info->version == nullptr) return std::nullopt;
  return std::string(info->version);
}
#endif

// A compression feature row: "on" iff the registry can run the codec. The
// backend text describes what this port uses for it.
feature_status codec_row(const char* name, std::string backend, feature_linkage linkage,
                         const std::function<std::optional<std::string>()>& version) {
  if (!is_compression_built_in(name)) return feature_status::make_off(name, feature_kind::compression);
  return feature_status::make_on(name, feature_kind::compression, std::move(backend), linkage, version());
}

std::vector<feature_status> collect_features() {
  const std::string own_version(library_version());
  const auto own = [&own_version] { return std::optional<std::string>(own_version); };
  std::vector<feature_status> f;
#if __has_include(<libaec.h>)
  f.push_back(codec_row("szip", "libaec", feature_linkage::ffi, libaec_version));
#else
  // Without libaec (the WebAssembly build, docs/wasm.md): our own CCSDS
  // 121.0-B-3 encoder and decoder, which write and read libaec's bytes.
  f.push_back(codec_row("szip", "tensogram-cpp", feature_linkage::builtin, own));
#endif
  // "szip-pure" is the reference's pure-Rust coder, whose streams differ
  // from libaec's (spec 03 §7.1): none here.
  f.push_back(feature_status::make_off("szip-pure", feature_kind::compression));
  f.push_back(codec_row("zstd", "libzstd", feature_linkage::ffi,
                        [] { return std::optional<std::string>(ZSTD_versionString()); }));
  f.push_back(feature_status::make_off("zstd-pure", feature_kind::compression));
  // Our lz4 block encoder reproduces lz4_flex (docs/pipeline.md); liblz4
  // decodes, so its version is the one that matters for reading.
  f.push_back(codec_row("lz4", "liblz4", feature_linkage::ffi,
                        [] { return std::optional<std::string>(LZ4_versionString()); }));
  // Blosc2, zfp and SZ3 are clean-room code of this library (DESIGN.md).
  f.push_back(codec_row("blosc2", "tensogram-cpp", feature_linkage::builtin, own));
  f.push_back(codec_row("zfp", "tensogram-cpp", feature_linkage::builtin, own));
  f.push_back(codec_row("sz3", "tensogram-cpp", feature_linkage::builtin, own));
#ifdef __EMSCRIPTEN__
  // The WebAssembly build is sequential and works on memory buffers only
  // (docs/wasm.md, spec 07 G.10): no threads, remote reads, mmap or async.
  for (const char* name : {"threads", "remote", "mmap", "async"}) {
    const bool threading = std::string_view(name) == "threads";
    f.push_back(feature_status::make_off(name, threading ? feature_kind::threading : feature_kind::io));
  }
#else
  // Always compiled in: the thread budget (core/parallel, core/thread_pool),
  // HTTP range reads (io/http_source over libcurl), memory-mapped files
  // (core/buffer) and the std::future API (io/async).
  f.push_back(feature_status::make_on("threads", feature_kind::threading, "std::thread pool",
                                      feature_linkage::builtin, own_version));
  f.push_back(feature_status::make_on("remote", feature_kind::io, "libcurl", feature_linkage::ffi,
                                      curl_version_text()));
  f.push_back(
      feature_status::make_on("mmap", feature_kind::io, "POSIX mmap", feature_linkage::builtin, own_version));
  f.push_back(feature_status::make_on("async", feature_kind::io, "std::future", feature_linkage::builtin,
                                      own_version));
#endif
  return f;
}

// ---------------------------------------------------------------------------
// Self-test helpers. A check reports failure by throwing; run_row turns the
// exception text into a `failed` row.

class check_failed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <typename T>
std::vector<std::byte> to_bytes(const std::vector<T>& values) {
  std::vector<std::byte> out(values.size() * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

template <typename T>
std::vector<T> from_bytes(std::span<const std::byte> bytes) {
  if (bytes.size() % sizeof(T) != 0) {
    throw check_failed("decoded payload of " + std::to_string(bytes.size()) + " bytes is not a multiple of " +
                       std::to_string(sizeof(T)));
  }
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

data_object_descriptor descriptor_1d(dtype t, std::size_t n, std::string encoding, std::string filter,
                                     std::string compression, cbor::value params = cbor::value::make_map()) {
  data_object_descriptor d = data_object_descriptor::contiguous(t, {n});
  d.encoding = std::move(encoding);
  d.filter = std::move(filter);
  d.compression = std::move(compression);
  d.params = std::move(params);
  return d;
}

encode_options hashing(bool on) {
  encode_options o;
  o.hash_algo = on ? "xxh3" : "none";
  return o;
}

std::vector<std::byte> encode_one(const data_object_descriptor& d, std::span<const std::byte> raw,
                                  const global_metadata& meta = {}, bool hash = false) {
  const object_input in{d, raw};
  return encode(meta, std::span<const object_input>(&in, 1), hashing(hash));
}

// Encodes one object, decodes the message and returns the decoded object.
decoded_object round_trip(const data_object_descriptor& d, std::span<const std::byte> raw) {
  const message m = decode(buffer::owned(encode_one(d, raw)));
  if (m.num_objects() != 1) {
    throw check_failed("decode produced " + std::to_string(m.num_objects()) +
                       " objects from a 1-object encode");
  }
  return m.object(0);
}

template <typename T>
void expect_equal(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) {
    throw check_failed("decoded " + std::to_string(got.size()) + " values, expected " +
                       std::to_string(want.size()));
  }
  for (std::size_t i = 0; i < want.size(); ++i) {
    // Bitwise: a lossless pipeline must give back the very same values.
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) {
      throw check_failed("decoded data does not match input (" + std::to_string(want.size()) +
                         " values, first mismatch at index " + std::to_string(i) + ")");
    }
  }
}

template <typename T>
void expect_close(const std::vector<T>& got, const std::vector<T>& want, double tolerance) {
  if (got.size() != want.size()) {
    throw check_failed("decoded " + std::to_string(got.size()) + " values, expected " +
                       std::to_string(want.size()));
  }
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double err = std::fabs(static_cast<double>(got[i]) - static_cast<double>(want[i]));
    if (!(err <= tolerance)) {
      throw check_failed("value " + std::to_string(i) + " decoded as " + std::to_string(got[i]) +
                         " instead of " + std::to_string(want[i]) + " (error " + std::to_string(err) +
                         " > tolerance " + std::to_string(tolerance) + ")");
    }
  }
}

self_test_result run_row(std::string label, const std::function<void()>& check) {
  try {
    check();
    return self_test_result::ok(std::move(label));
  } catch (const std::exception& e) {
    return self_test_result::failed(std::move(label), e.what());
  } catch (...) {
    return self_test_result::failed(std::move(label), "unknown exception");
  }
}

// A codec row: skipped unless the registry has `codec`.
self_test_result run_codec_row(std::string label, const char* codec, const std::function<void()>& check) {
  if (!is_compression_built_in(codec)) return self_test_result::not_built_in(std::move(label), codec);
  return run_row(std::move(label), check);
}

std::vector<float> ramp_f32(std::size_t n, float step) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i) * step;
  return v;
}

std::vector<double> ramp_f64(std::size_t n, double step) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<double>(i) * step;
  return v;
}

// A lossless float32 pipeline: the decoded values must be bit-identical.
void lossless_f32(const std::string& filter, const std::string& compression, cbor::value params) {
  const std::vector<float> data = ramp_f32(16, 1.5F);
  const decoded_object o =
      round_trip(descriptor_1d(dtype::float32, data.size(), "none", filter, compression, std::move(params)),
                 to_bytes(data));
  expect_equal(from_bytes<float>(o.bytes()), data);
}

std::int64_t int_param(const data_object_descriptor& d, std::string_view key) {
  const cbor::value* v = d.params.find(key);
  const auto i = v != nullptr ? v->as_int64() : std::nullopt;
  if (!i) throw check_failed("decoded descriptor lacks integer parameter " + std::string(key));
  return *i;
}

// ---------------------------------------------------------------------------
// The self-test rows (labels: spec 04 §A.5, exact strings).

std::vector<self_test_result> run_self_test() {
  std::vector<self_test_result> rows;

  rows.push_back(run_row("encode/decode  none/none/none", [] {
    const std::vector<float> data = ramp_f32(16, 0.5F);
    const decoded_object o =
        round_trip(descriptor_1d(dtype::float32, data.size(), "none", "none", "none"), to_bytes(data));
    expect_equal(from_bytes<float>(o.bytes()), data);
  }));

  rows.push_back(run_row("decode_metadata round-trip", [] {
    const std::vector<float> data = {1.0F, 2.0F, 3.0F, 4.0F};
    global_metadata meta;
    meta.extra.set("param", cbor::value("2t"));
    const std::vector<std::byte> msg =
        encode_one(descriptor_1d(dtype::float32, data.size(), "none", "none", "none"), to_bytes(data), meta);
    const metadata got = decode_metadata(std::span<const std::byte>(msg));
    const cbor::value* param = got.global().extra.find("param");
    if (param == nullptr) throw check_failed("global metadata missing 'param' key");
    if (param->as_text() == nullptr || *param->as_text() != "2t") {
      throw check_failed("global metadata 'param' does not read back as \"2t\"");
    }
  }));

  rows.push_back(run_row("scan multi-message buffer", [] {
    const std::vector<float> data(4, 0.0F);
    const std::vector<std::byte> one =
        encode_one(descriptor_1d(dtype::float32, data.size(), "none", "none", "none"), to_bytes(data));
    std::vector<std::byte> buf;
    for (int i = 0; i < 3; ++i) buf.insert(buf.end(), one.begin(), one.end());
    const std::vector<scan_entry> found = scan(std::span<const std::byte>(buf));
    if (found.size() != 3) throw check_failed("expected 3 messages, got " + std::to_string(found.size()));
    for (std::size_t i = 0; i < found.size(); ++i) {
      if (found[i].offset != i * one.size() || found[i].length != one.size()) {
        throw check_failed("message " + std::to_string(i) + " found at the wrong offset or length");
      }
    }
  }));

  rows.push_back(run_row("hash xxh3 verify", [] {
    const std::vector<float> data = ramp_f32(16, 1.0F);
    const std::vector<std::byte> raw = to_bytes(data);
    std::vector<std::byte> msg =
        encode_one(descriptor_1d(dtype::float32, data.size(), "none", "none", "none"), raw, global_metadata{},
                   /*hash=*/true);
    decode_options verify;
    verify.verify_hash = true;
    (void)decode(buffer::owned(msg), verify);
    // A check that cannot fail proves nothing: flip one payload bit and the
    // digest must no longer match.
    const auto at = std::search(msg.begin(), msg.end(), raw.begin(), raw.end());
    if (at == msg.end()) throw check_failed("payload not found in the encoded message");
    *(at + 5) ^= std::byte{0x01};
    try {
      verify_hashes(std::span<const std::byte>(msg));
    } catch (const hash_mismatch_error&) {
      return;
    }
    throw check_failed("a corrupted payload passed hash verification");
  }));

  rows.push_back(run_codec_row("pipeline       simple_packing+szip", "szip", [] {
    const std::vector<double> data = ramp_f64(16, 1.5);
    cbor::value params = cbor::value::make_map();
    params.set("sp_bits_per_value", cbor::value(24));
    params.set("szip_rsi", cbor::value(128));
    params.set("szip_block_size", cbor::value(16));
    params.set("szip_flags", cbor::value(8));
    const decoded_object o = round_trip(
        descriptor_1d(dtype::float64, data.size(), "simple_packing", "none", "szip", std::move(params)),
        to_bytes(data));
    // Packing rounds to the nearest multiple of 2^E / 10^D (spec 03 §4).
    const auto e = static_cast<double>(int_param(o.descriptor(), "sp_binary_scale_factor"));
    const auto dsf = static_cast<double>(int_param(o.descriptor(), "sp_decimal_scale_factor"));
    const double half_quantum = 0.5 * std::exp2(e) / std::pow(10.0, dsf);
    expect_close(from_bytes<double>(o.bytes()), data, half_quantum * (1 + 1e-9) + 1e-12);
  }));

  rows.push_back(run_codec_row("pipeline       shuffle+zstd", "zstd", [] {
    cbor::value params = cbor::value::make_map();
    params.set("shuffle_element_size", cbor::value(4));
    params.set("zstd_level", cbor::value(3));
    lossless_f32("shuffle", "zstd", std::move(params));
  }));

  rows.push_back(run_codec_row("pipeline       lz4", "lz4",
                               [] { lossless_f32("none", "lz4", cbor::value::make_map()); }));

  rows.push_back(run_codec_row("pipeline       blosc2", "blosc2", [] {
    cbor::value params = cbor::value::make_map();
    params.set("blosc2_codec", cbor::value("lz4"));
    params.set("blosc2_clevel", cbor::value(5));
    lossless_f32("none", "blosc2", std::move(params));
  }));

  rows.push_back(run_codec_row("pipeline       zfp (fixed-rate)", "zfp", [] {
    // float64: this library's zfp compresses float64 only (docs/pipeline.md).
    const std::vector<double> data = ramp_f64(16, 1.5);
    cbor::value params = cbor::value::make_map();
    params.set("zfp_mode", cbor::value("fixed_rate"));
    params.set("zfp_rate", cbor::value(16.0));
    const decoded_object o = round_trip(
        descriptor_1d(dtype::float64, data.size(), "none", "none", "zfp", std::move(params)), to_bytes(data));
    // Fixed rate bounds the size, not the error; 16 bits per value keep a
    // linear ramp to well within 1e-3 of its range (22.5).
    expect_close(from_bytes<double>(o.bytes()), data, 22.5e-3);
  }));

  rows.push_back(run_codec_row("pipeline       sz3 (absolute error)", "sz3", [] {
    // sz3 reads float64 (spec 03 §8.7); the bound holds exactly.
    const std::vector<double> data = ramp_f64(256, 1.5);
    cbor::value params = cbor::value::make_map();
    params.set("sz3_error_bound_mode", cbor::value("abs"));
    params.set("sz3_error_bound", cbor::value(0.1));
    const decoded_object o = round_trip(
        descriptor_1d(dtype::float64, data.size(), "none", "none", "sz3", std::move(params)), to_bytes(data));
    expect_close(from_bytes<double>(o.bytes()), data, 0.1);
  }));

  return rows;
}

}  // namespace

// ---------------------------------------------------------------------------

feature_status feature_status::make_on(std::string name, feature_kind kind, std::string backend,
                                       feature_linkage linkage, std::optional<std::string> version) {
  feature_status f;
  f.name = std::move(name);
  f.kind = kind;
  f.on = true;
  f.backend = std::move(backend);
  f.linkage = linkage;
  f.version = std::move(version);
  return f;
}

feature_status feature_status::make_off(std::string name, feature_kind kind) {
  feature_status f;
  f.name = std::move(name);
  f.kind = kind;
  return f;
}

self_test_result self_test_result::ok(std::string label) {
  return {std::move(label), self_test_outcome::ok, {}};
}

self_test_result self_test_result::failed(std::string label, std::string error) {
  return {std::move(label), self_test_outcome::failed, std::move(error)};
}

self_test_result self_test_result::not_built_in(std::string label, std::string_view feature) {
  return {std::move(label), self_test_outcome::skipped,
          "feature '" + std::string(feature) + "' not built in"};
}

bool doctor_report::healthy() const noexcept {
  return std::none_of(self_test.begin(), self_test.end(),
                      [](const self_test_result& r) { return r.outcome == self_test_outcome::failed; });
}

std::string doctor_report::to_json() const {
  // ordered_json keeps members in insertion order, which is the reference's
  // serde field order (spec 04 §A.5 `--json`).
  using json = nlohmann::ordered_json;
  json doc = json::object();
  doc["build"] = json{{"version", build.version},
                      {"wire_version", build.wire_version},
                      {"target", build.target},
                      {"profile", build.profile}};
  json features_json = json::array();
  for (const feature_status& f : features) {
    json row{{"name", f.name}, {"kind", std::string(to_string(f.kind))}, {"state", f.on ? "on" : "off"}};
    if (f.on) {
      row["backend"] = f.backend;
      row["linkage"] = std::string(to_string(f.linkage));
      row["version"] = f.version ? json(*f.version) : json(nullptr);
    }
    features_json.push_back(std::move(row));
  }
  doc["features"] = std::move(features_json);
  json rows = json::array();
  for (const self_test_result& r : self_test) {
    json row{{"label", r.label}, {"outcome", std::string(to_string(r.outcome))}};
    if (r.outcome == self_test_outcome::failed) row["error"] = r.detail;
    if (r.outcome == self_test_outcome::skipped) row["reason"] = r.detail;
    rows.push_back(std::move(row));
  }
  doc["self_test"] = std::move(rows);
  // Error texts may carry arbitrary bytes: replace invalid UTF-8 rather than
  // throw from a diagnostic.
  return doc.dump(2, ' ', false, json::error_handler_t::replace);
}

doctor_report run_doctor() {
  doctor_report r;
  r.build = collect_build_info();
  r.features = collect_features();
  r.self_test = run_self_test();
  return r;
}

std::string doctor_json() {
  return run_doctor().to_json();
}

bool is_compression_built_in(std::string_view name) {
  // The compressor table holds exactly the codecs compiled in (spec 02 §16,
  // spec 03 §6).
  // szip: libaec, or our own coder in a build without it (docs/wasm.md).
  if (name == "szip") return codecs::szip_available();
  return codecs::is_known_compression(name);
}

std::string_view to_string(feature_kind k) noexcept {
  switch (k) {
    case feature_kind::compression: return "compression";
    case feature_kind::threading: return "threading";
    case feature_kind::io: return "io";
    case feature_kind::converter: return "converter";
  }
  return "compression";
}

std::string_view to_string(feature_linkage l) noexcept {
  // Spec 08 §9: the reference's two words; "pure-rust" = no foreign library.
  return l == feature_linkage::ffi ? "ffi" : "pure-rust";
}

std::string_view to_string(self_test_outcome o) noexcept {
  switch (o) {
    case self_test_outcome::ok: return "ok";
    case self_test_outcome::failed: return "failed";
    case self_test_outcome::skipped: return "skipped";
  }
  return "failed";
}

}  // namespace tensogram

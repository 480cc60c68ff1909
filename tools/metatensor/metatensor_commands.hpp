// The subcommands of the `metatensor` tool (spec 06; issue "Metatensor v1").
//
// Each `run_*` writes its normal output to `out`, warnings to `err`, and
// throws `tensogram::cli::tool_error` (or a library error) on failure; main()
// turns exceptions into `error: ...` and exit code 1, as the `tensogram` tool
// does. Commands with a verdict (validate, diff) return their exit code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline_flags.hpp"

namespace metatensor::cli {

/// Exit codes beyond 0 (success) and 2 (usage error, main.cpp): 1 for a
/// runtime failure or a negative verdict, and `validate`'s 3 for "every file
/// is valid, but some are plain safetensors files without a metatensor
/// schema" (their base layer, safetensors rules 1-10, passed).
inline constexpr int exit_invalid = 1;
inline constexpr int exit_plain_safetensors = 3;

/// The base-metadata key under which `to-tgm` records the safetensors dtype
/// and shape of a tensor stored as raw bytes, read back by `from-tgm`.
inline constexpr std::string_view raw_dtype_key = "safetensors";

/// `info FILE...`: format, alignment, logical and physical tensors.
struct info_args {
  std::vector<std::string> files;
  bool json = false;
};
void run_info(const info_args& args, std::ostream& out);

/// `validate [--deep] FILE...`: structural (default) or deep validation
/// (spec 06 §8.1). Returns 0 when every file is a valid metatensor file,
/// `exit_invalid` when any is invalid, else `exit_plain_safetensors` when
/// some are valid plain safetensors files.
struct validate_args {
  std::vector<std::string> files;
  bool deep = false;
  bool json = false;
  /// `--header-schema S`: also validate each file's safetensors header,
  /// grouped by dotted names, against the JSON Schema in file S
  /// (docs/metatensor.md "Header schemas"; MT_HEADER_SCHEMA).
  std::string header_schema;
};
int run_validate(const validate_args& args, std::ostream& out, bool show_progress);

/// `dump FILE`: header metadata, schema, layout table and the first values
/// of every logical tensor (their §8.3 logical value).
struct dump_args {
  std::string file;
  std::vector<std::string> tensors;  ///< only these (default: all)
  std::uint64_t count = 8;           ///< values shown per tensor (0 = all)
  bool json = false;
};
void run_dump(const dump_args& args, std::ostream& out);

/// `diff OLD NEW`: schema evolution (§11.5) between two schemas, each given
/// as a JSON schema file or as a metatensor file (its embedded schema).
/// Returns 1 when the verdict is "incompatible", 3 when it is not but a
/// dimension bound of NEW is tighter than OLD's, 0 otherwise.
struct diff_args {
  std::string old_path;
  std::string new_path;
  bool json = false;
};
int run_diff(const diff_args& args, std::ostream& out);

/// `from-tgm IN.tgm -o OUT`: every Tensogram object becomes a flat tensor.
struct from_tgm_args {
  std::string input;
  std::string output;
  std::uint64_t alignment = 64;
  std::string name_key;  ///< metadata key naming each tensor (default: m<i>_o<j>)
  /// --no-sync: skip the fsync of the output (atomic_write_options::sync).
  bool no_sync = false;
};
void run_from_tgm(const from_tgm_args& args, std::ostream& out, std::ostream& err, bool show_progress);

/// `to-tgm IN -o OUT.tgm [PIPELINE]`: flat tensors of a metatensor or plain
/// safetensors file become the objects of one Tensogram message.
struct to_tgm_args {
  std::string input;
  std::string output;
  tensogram::cli::pipeline_flags pipeline;
  /// --no-sync: skip the fsync of the output (atomic_write_options::sync).
  bool no_sync = false;
};
void run_to_tgm(const to_tgm_args& args, std::ostream& out, std::ostream& err, bool show_progress);

/// `from-npy IN.npy... -o OUT`: one logical tensor per .npy file (named after
/// the file stem); structured dtypes become struct tensors.
struct from_npy_args {
  std::vector<std::string> inputs;
  std::string output;
  std::uint64_t alignment = 64;
  /// --no-sync: skip the fsync of the output (atomic_write_options::sync).
  bool no_sync = false;
};
void run_from_npy(const from_npy_args& args, std::ostream& out, std::ostream& err, bool show_progress);

/// `from-json SCHEMA VALUES -o OUT`: the logical value in VALUES (a JSON
/// object, one member per tensor, spec 06 §8.3) written with the schema in
/// SCHEMA (a schema document or a metatensor file).
struct from_json_args {
  std::string schema;
  std::string values;
  std::string output;
  std::uint64_t alignment = 64;
  std::vector<std::string> metadata;  ///< --metadata KEY=VALUE: user `__metadata__` keys
  /// --no-sync: skip the fsync of the output (atomic_write_options::sync).
  bool no_sync = false;
};
void run_from_json(const from_json_args& args, std::ostream& out);

/// `serve DIR`: serves the files of DIR over QUIC (spec 06 §10) until
/// SIGINT/SIGTERM. The first stdout line is
/// "serving DIR at metatensor://HOST:PORT/ (certificate: PATH)" with the
/// bound port (also for --port 0) and the certificate clients can trust.
struct serve_args {
  std::string dir;
  std::string host = "127.0.0.1";
  std::uint16_t port = 4433;
  std::string cert;          ///< PEM certificate (with `key`); empty: self-signed in `tls_dir`
  std::string key;           ///< PEM private key
  std::string tls_dir;       ///< where the self-signed pair lives (default ~/.config/metatensor/tls)
  std::string reset_secret;  ///< file of the stateless reset secret (default: reset.key in tls_dir)
  bool log = false;          ///< one line per connection event on stderr
  // Protection (see streaming::server_options for the meaning).
  std::size_t max_connections = 256;
  std::size_t max_connections_per_address = 16;
  std::size_t retry_threshold = 16;
  std::uint64_t max_streams = 128;
  std::uint64_t max_queued_mib = 32;
  double idle_timeout = 30;       ///< seconds
  double handshake_timeout = 10;  ///< seconds
  std::uint32_t resets_per_second = 100;
};
int run_serve(const serve_args& args, std::ostream& out, std::ostream& err);

/// `fetch URL [TENSOR...] -o FILE`: the remote file's header and the named
/// physical tensors (all by default) written into FILE at their offsets,
/// over QUIC (metatensor://) or HTTP range requests (http://, https://).
/// FILE is replaced atomically; tensors not fetched are zero. Unless
/// `no_validate`, the BlobRef checks (spec 06 §6.4, §8.2 step 8) run on
/// what arrived first and a failure leaves FILE untouched.
struct fetch_args {
  std::string url;
  std::vector<std::string> tensors;
  std::string output;
  bool insecure = false;      ///< do not verify the server's certificate (tests only)
  std::string ca_file;        ///< extra trusted certificate (PEM)
  unsigned urgency = 3;       ///< §10.3 urgency of every request, 0 (highest) .. 7
  std::size_t parallel = 16;  ///< requests in flight (QUIC streams, HTTP connections)
  bool no_validate = false;   ///< skip the BlobRef checks: a raw copy of what arrived
};
void run_fetch(const fetch_args& args, std::ostream& out, std::ostream& err, bool show_progress);

}  // namespace metatensor::cli

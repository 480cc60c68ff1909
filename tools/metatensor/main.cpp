// `metatensor`: the command-line tool for metatensor files (spec 06), which
// are safetensors files with a schema, records, strings and ragged data.
//
// Exit codes, as the `tensogram` tool: 0 success; 1 runtime failure
// (`error: <message>` on stderr) or a negative verdict (`validate` found an
// invalid file, `diff` found an incompatible change); 2 usage error; and
// `validate`'s 3: every file valid, some plain safetensors files without a
// metatensor schema, and `diff`'s 3: compatible, but a tightened dimension
// bound may reject old files (metatensor_commands.hpp).
#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>
#include <metatensor.hpp>
#include <tensogram.hpp>

#include "global_options.hpp"
#include "metatensor_commands.hpp"
#include "pipeline_flags.hpp"

namespace {

constexpr int exit_runtime_error = 1;
constexpr int exit_usage_error = 2;

int usage_failure(const std::string& message) {
  std::cerr << "error: " << message << "\nRun with --help for more information.\n";
  return exit_usage_error;
}

bool progress_wanted(bool quiet) {
  if (quiet) return false;
  if (const char* env = std::getenv("METATENSOR_QUIET"); env && *env && std::string(env) != "0") return false;
  return isatty(2) != 0;
}

// `serve`: a directory over QUIC (spec 06 §10).
CLI::App* add_serve(CLI::App& app, metatensor::cli::serve_args& serve) {
  CLI::App* serve_cmd = app.add_subcommand("serve",
                                           "Serve the metatensor/safetensors files of a directory over QUIC "
                                           "(metatensor-format §10) until SIGINT/SIGTERM");
  serve_cmd
      ->add_option("dir", serve.dir, "Directory whose files are served (resource = path relative to DIR)")
      ->required()
      ->type_name("DIR");
  serve_cmd
      ->add_option("--host", serve.host, "Address to bind: 127.0.0.1 (default), ::1, 0.0.0.0 or :: for all")
      ->type_name("H");
  serve_cmd->add_option("--port", serve.port, "UDP port (default 4433; 0 picks a free one, shown on stdout)")
      ->type_name("P");
  CLI::Option* cert_opt =
      serve_cmd->add_option("--cert", serve.cert, "TLS certificate (PEM); needs --key")->type_name("FILE");
  CLI::Option* key_opt =
      serve_cmd->add_option("--key", serve.key, "TLS private key (PEM); needs --cert")->type_name("FILE");
  cert_opt->needs(key_opt);
  key_opt->needs(cert_opt);
  serve_cmd
      ->add_option("--tls-dir", serve.tls_dir,
                   "Without --cert/--key: where a self-signed certificate is made on first run and reused "
                   "(default $XDG_CONFIG_HOME/metatensor/tls or ~/.config/metatensor/tls)")
      ->type_name("DIR")
      ->excludes(cert_opt)
      ->excludes(key_opt);
  serve_cmd
      ->add_option("--reset-secret", serve.reset_secret,
                   "File of the 32-byte secret behind stateless resets, made on first run: a restarted "
                   "server then tells its predecessor's clients at once that their connection is gone "
                   "(default: reset.key in the TLS directory with a self-signed certificate, else a new "
                   "secret at each start)")
      ->type_name("FILE");
  serve_cmd->add_flag("--log", serve.log,
                      "One line per connection event (open, file served, errors) on stderr");
  serve_cmd
      ->add_option("--max-connections", serve.max_connections,
                   "Connections over all clients, handshakes included (default 256); more are refused")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20))
      ->type_name("N");
  serve_cmd
      ->add_option("--max-connections-per-address", serve.max_connections_per_address,
                   "Connections per client address, IPv6 clients counted per /64 (default 16)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20))
      ->type_name("N");
  serve_cmd
      ->add_option("--retry-threshold", serve.retry_threshold,
                   "Handshakes in progress from which new clients must prove their address with a QUIC "
                   "Retry round trip first (default 16; 0: always)")
      ->type_name("N");
  serve_cmd
      ->add_option("--max-streams", serve.max_streams,
                   "Concurrent streams per connection, control stream included (default 128)")
      ->check(CLI::Range(std::uint64_t{2}, std::uint64_t{1} << 16))
      ->type_name("N");
  serve_cmd
      ->add_option("--max-queued-mib", serve.max_queued_mib,
                   "Response MiB queued per connection before further requests wait (default 32)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 20))
      ->type_name("MIB");
  serve_cmd
      ->add_option("--idle-timeout", serve.idle_timeout,
                   "Seconds without a packet after which a connection is closed (default 30)")
      ->check(CLI::Range(0.01, 86400.0))
      ->type_name("S");
  serve_cmd
      ->add_option("--handshake-timeout", serve.handshake_timeout,
                   "Seconds a handshake may take before it is dropped (default 10)")
      ->check(CLI::Range(0.01, 3600.0))
      ->type_name("S");
  serve_cmd
      ->add_option("--resets-per-second", serve.resets_per_second,
                   "Stateless resets sent per second at most, in answer to packets for unknown "
                   "connections (default 100; 0: none)")
      ->type_name("N");
  serve_cmd->footer(
      "The first line on stdout is 'serving DIR at metatensor://HOST:PORT/ (certificate: PATH)'. Clients "
      "fetch metatensor://HOST:PORT/NAME for DIR/NAME and verify the server's certificate: pass PATH to "
      "`metatensor fetch --ca-file` when it is self-signed. Refused clients and packets (limits reached, "
      "Retry sent, stateless resets, handshake timeouts) are reported on stderr, at most one line per "
      "kind per second.\nExample: metatensor serve ./models --port 4433");
  return serve_cmd;
}

// `fetch`: a remote file or some of its tensors (spec 06 §10).
CLI::App* add_fetch(CLI::App& app, metatensor::cli::fetch_args& fetch) {
  CLI::App* fetch_cmd = app.add_subcommand("fetch",
                                           "Fetch a remote file, or some of its tensors, into a local file "
                                           "of the same size (metatensor-format §10)");
  fetch_cmd
      ->add_option("url", fetch.url,
                   "metatensor://HOST[:PORT]/NAME (QUIC, port 4433 by default, as served by `metatensor "
                   "serve`) or http(s)://HOST/PATH (HTTP range requests against any web server)")
      ->required()
      ->type_name("URL");
  fetch_cmd
      ->add_option("tensors", fetch.tensors,
                   "Physical tensors to fetch (default: all); a logical tensor brings its heap too. The "
                   "others are left zero in the output")
      ->type_name("TENSOR");
  fetch_cmd->add_option("-o,--output", fetch.output, "Output file (replaced atomically, only if all succeed)")
      ->required()
      ->type_name("FILE");
  fetch_cmd->add_flag("--insecure", fetch.insecure,
                      "Do not verify the server's certificate (tests against self-signed servers only; "
                      "prefer --ca-file)");
  fetch_cmd
      ->add_option("--ca-file", fetch.ca_file,
                   "Also trust this certificate or CA bundle (PEM), e.g. the one `metatensor serve` prints")
      ->type_name("PEM");
  fetch_cmd
      ->add_option("--urgency", fetch.urgency,
                   "Priority of the requests, 0 (highest) to 7 (lowest), default 3 (QUIC only; "
                   "metatensor-format §10.5)")
      ->check(CLI::Range(0u, 7u))
      ->type_name("U");
  fetch_cmd
      ->add_option("--parallel", fetch.parallel,
                   "Requests in flight at once: QUIC streams or HTTP connections (default 16)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1024}))
      ->type_name("N");
  fetch_cmd->add_flag("--no-validate", fetch.no_validate,
                      "Skip the BlobRef checks (metatensor-format §6.4) on what arrived and write a raw copy "
                      "(the header is validated in any case)");
  fetch_cmd->footer(
      "Certificates are verified by default, against the system's CAs plus --ca-file, and must match the "
      "URL's host. --insecure turns verification off and is meant for tests. What arrived is validated "
      "before FILE is written (metatensor-format §8.1: the header on arrival, then every BlobRef of the "
      "tensors fetched); the first problem is reported by its MT_ name, exit code 1, and FILE is left as "
      "it was. Prints a summary (tensors, bytes, seconds, MB/s); progress bars on stderr when it is a "
      "terminal, unless -q.\n"
      "Example: metatensor fetch --ca-file cert.pem metatensor://127.0.0.1:4433/model.safetensors "
      "layer0.weight -o model.safetensors");
  return fetch_cmd;
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  const std::string version(tensogram::library_version());
  CLI::App app(
      "metatensor " + version +
          ": schema-driven tensors (flat arrays, records, strings, ragged lists) inside valid "
          "safetensors files, format version 1 (docs/metatensor-format.md; §N.M in messages cite its "
          "sections). See docs/metatensor.md.",
      "metatensor");
  app.set_version_flag("-V,--version", "metatensor " + version, "Print version and exit");
  app.require_subcommand(1, 1);
  bool quiet = false;
  app.add_flag("-q,--quiet", quiet, "No progress bars on stderr (also METATENSOR_QUIET=1)");

  metatensor::cli::info_args info;
  CLI::App* info_cmd =
      app.add_subcommand("info", "Summarise files: format, alignment, logical and physical tensors");
  info_cmd->add_option("files", info.files, "Metatensor or safetensors files")
      ->required()
      ->type_name("FILES");
  info_cmd->add_flag("-j,--json", info.json, "JSON output (an array, one object per file)");

  metatensor::cli::validate_args validate;
  CLI::App* validate_cmd = app.add_subcommand(
      "validate", "Check files against metatensor-format §8: structural by default, every value with --deep");
  validate_cmd->add_option("files", validate.files, "Metatensor or plain safetensors files")
      ->required()
      ->type_name("FILES");
  validate_cmd->add_flag("--deep", validate.deep,
                         "Deep validation: value keywords of the schema, BOOL bytes, UTF-8, zero padding "
                         "(plain safetensors files: BOOL bytes)");
  validate_cmd->add_flag("-j,--json", validate.json, "JSON output (an array, one object per file)");
  validate_cmd
      ->add_option("--header-schema", validate.header_schema,
                   "Also check each header, tensors grouped by dotted names (conv1.weight -> "
                   "conv1/weight), against this JSON Schema of TensorRef leaves (TypeBox output accepted)")
      ->type_name("SCHEMA");
  validate_cmd->footer(
      "Each file is first checked as safetensors (metatensor-format §2: header, dtypes, shapes, data "
      "offsets). One "
      "without a metatensor.version key is reported as 'valid safetensors, no metatensor schema'.\nExit "
      "status: 0 every file is a valid metatensor file; 1 some file is invalid (the format's error name is "
      "shown); 2 usage error; 3 every file is valid but some are plain safetensors files (metatensor-format "
      "§8.5). With --header-schema, a plain safetensors file whose header passes the schema counts as valid "
      "(0).");

  metatensor::cli::dump_args dump;
  CLI::App* dump_cmd = app.add_subcommand(
      "dump",
      "Show the header, schema, layout table and the first values of each tensor (plain safetensors files: "
      "metadata and values)");
  dump_cmd->add_option("file", dump.file, "A metatensor or plain safetensors file")
      ->required()
      ->type_name("FILE");
  dump_cmd
      ->add_option("-t,--tensor", dump.tensors,
                   "Only this tensor (logical; physical in a plain file; repeatable)")
      ->type_name("NAME");
  dump_cmd->add_option("-n,--count", dump.count, "Values shown per tensor, 0 for all (default 8)")
      ->type_name("N");
  dump_cmd->add_flag("-j,--json", dump.json, "JSON output");

  metatensor::cli::diff_args diff;
  CLI::App* diff_cmd =
      app.add_subcommand("diff",
                         "Classify schema changes (metatensor-format §11): exit 1 when files written with "
                         "OLD cannot be read as NEW, 3 when they can "
                         "but a tightened dimension bound (minItems/maxItems) may reject some of them");
  diff_cmd->add_option("old", diff.old_path, "The writer schema: a .json schema or a metatensor file")
      ->required()
      ->type_name("OLD");
  diff_cmd->add_option("new", diff.new_path, "The reader schema: a .json schema or a metatensor file")
      ->required()
      ->type_name("NEW");
  diff_cmd->add_flag("-j,--json", diff.json, "JSON output");

  metatensor::cli::from_tgm_args from_tgm;
  CLI::App* from_tgm_cmd = app.add_subcommand(
      "from-tgm",
      "Convert a Tensogram file: each object becomes a flat tensor, metadata is kept as JSON; objects to-tgm "
      "stored as raw bytes get back their safetensors dtype and shape");
  from_tgm_cmd->add_option("input", from_tgm.input, "Input .tgm file")->required()->type_name("IN.tgm");
  from_tgm_cmd->add_option("-o,--output", from_tgm.output, "Output file (replaced atomically)")
      ->required()
      ->type_name("OUT");
  from_tgm_cmd->add_option("--alignment", from_tgm.alignment, "File alignment A (power of two, 16..65536)")
      ->type_name("A");
  from_tgm_cmd
      ->add_option("--name-key", from_tgm.name_key,
                   "Name each tensor by this metadata key of its object (e.g. mars.param); default m<i>_o<j>")
      ->type_name("KEY");
  from_tgm_cmd->add_flag(
      "--no-sync", from_tgm.no_sync,
      "Do not fsync the output: faster, but a power loss soon after may lose it (a crash of the "
      "process still leaves the old file or the new one)");

  metatensor::cli::to_tgm_args to_tgm;
  CLI::App* to_tgm_cmd = app.add_subcommand(
      "to-tgm",
      "Convert the flat tensors of a metatensor or safetensors file into one Tensogram message (every dtype: "
      "BOOL, F8_*, F4, F6_* as raw uint8 bytes with the dtype recorded for from-tgm; no tensors: no "
      "objects)");
  to_tgm_cmd->add_option("input", to_tgm.input, "Input metatensor or safetensors file")
      ->required()
      ->type_name("IN");
  to_tgm_cmd->add_option("-o,--output", to_tgm.output, "Output .tgm file (replaced atomically)")
      ->required()
      ->type_name("OUT.tgm");
  tensogram::cli::add_pipeline_flags(*to_tgm_cmd, to_tgm.pipeline,
                                     tensogram::cli::pipeline_flag_set::extended);
  to_tgm_cmd->add_flag(
      "--no-sync", to_tgm.no_sync,
      "Do not fsync the output: faster, but a power loss soon after may lose it (a crash of the "
      "process still leaves the old file or the new one)");

  metatensor::cli::from_npy_args from_npy;
  CLI::App* from_npy_cmd = app.add_subcommand(
      "from-npy",
      "Convert NumPy .npy arrays (one tensor per file; structured dtypes become struct tensors, S<n>/U<n> "
      "text arrays string tensors)");
  from_npy_cmd->add_option("inputs", from_npy.inputs, "Input .npy files; the file stem names the tensor")
      ->required()
      ->type_name("IN.npy");
  from_npy_cmd->add_option("-o,--output", from_npy.output, "Output file (replaced atomically)")
      ->required()
      ->type_name("OUT");
  from_npy_cmd->add_option("--alignment", from_npy.alignment, "File alignment A (power of two, 16..65536)")
      ->type_name("A");
  from_npy_cmd->add_flag(
      "--no-sync", from_npy.no_sync,
      "Do not fsync the output: faster, but a power loss soon after may lose it (a crash of the "
      "process still leaves the old file or the new one)");

  metatensor::cli::from_json_args from_json;
  CLI::App* from_json_cmd = app.add_subcommand(
      "from-json",
      "Write a file of any kind from a schema and a logical value: a JSON object with one member per tensor "
      "(nested arrays for the dims, records as objects, strings, ragged lists as arrays; metatensor-format "
      "§8.3)");
  from_json_cmd->add_option("schema", from_json.schema, "The schema: a .json schema or a metatensor file")
      ->required()
      ->type_name("SCHEMA");
  from_json_cmd->add_option("values", from_json.values, "The logical value (JSON object)")
      ->required()
      ->type_name("VALUES.json");
  from_json_cmd->add_option("-o,--output", from_json.output, "Output file (replaced atomically)")
      ->required()
      ->type_name("OUT");
  from_json_cmd->add_option("--alignment", from_json.alignment, "File alignment A (power of two, 16..65536)")
      ->type_name("A");
  from_json_cmd->add_option("--metadata", from_json.metadata, "A user __metadata__ entry (repeatable)")
      ->type_name("KEY=VALUE");
  from_json_cmd->add_flag(
      "--no-sync", from_json.no_sync,
      "Do not fsync the output: faster, but a power loss soon after may lose it (a crash of the "
      "process still leaves the old file or the new one)");

  metatensor::cli::serve_args serve;
  CLI::App* serve_cmd = add_serve(app, serve);

  metatensor::cli::fetch_args fetch;
  CLI::App* fetch_cmd = add_fetch(app, fetch);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    return usage_failure(e.what());
  }

  const bool show_progress = progress_wanted(quiet);
  try {
    if (info_cmd->parsed()) {
      metatensor::cli::run_info(info, std::cout);
    } else if (validate_cmd->parsed()) {
      return metatensor::cli::run_validate(validate, std::cout, show_progress);
    } else if (dump_cmd->parsed()) {
      metatensor::cli::run_dump(dump, std::cout);
    } else if (diff_cmd->parsed()) {
      return metatensor::cli::run_diff(diff, std::cout);
    } else if (from_tgm_cmd->parsed()) {
      metatensor::cli::run_from_tgm(from_tgm, std::cout, std::cerr, show_progress);
    } else if (to_tgm_cmd->parsed()) {
      metatensor::cli::run_to_tgm(to_tgm, std::cout, std::cerr, show_progress);
    } else if (from_npy_cmd->parsed()) {
      metatensor::cli::run_from_npy(from_npy, std::cout, std::cerr, show_progress);
    } else if (from_json_cmd->parsed()) {
      metatensor::cli::run_from_json(from_json, std::cout);
    } else if (serve_cmd->parsed()) {
      return metatensor::cli::run_serve(serve, std::cout, std::cerr);
    } else if (fetch_cmd->parsed()) {
      metatensor::cli::run_fetch(fetch, std::cout, std::cerr, show_progress);
    }
  } catch (const tensogram::cli::usage_error& e) {
    return usage_failure(e.what());
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "error: " << e.what() << '\n';
    return exit_runtime_error;
  }
  std::cout.flush();
  return std::cout ? 0 : exit_runtime_error;
}

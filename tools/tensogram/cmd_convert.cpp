// The GRIB and NetCDF converters (spec 04 §A.5, spec 05): `convert-grib`,
// `convert-netcdf`, `to-grib`, `to-netcdf`, on the importers library.
//
// Outputs are written only when every input converted (temporary file and
// rename), so a failing input never leaves a partial output file or
// clobbers an existing one.
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <tensogram/importers/grib.hpp>
#include <tensogram/importers/netcdf.hpp>
#include <tensogram/io/file.hpp>

#include "commands.hpp"
#include "progress.hpp"
#include "tool_error.hpp"

namespace tensogram::cli {

namespace {

importers::pipeline_options pipeline_of(const pipeline_flags& f) {
  importers::pipeline_options p;
  p.encoding = f.encoding;
  p.bits = f.bits;
  p.filter = f.filter;
  p.compression = f.compression;
  p.compression_level = f.compression_level;
  return p;
}

// A progress bar per input, created at the first report (when the total is
// known) and labelled with the input's name.
class input_progress {
 public:
  input_progress(std::string label, bool enabled) : label_(std::move(label)), enabled_(enabled) {}
  void operator()(std::size_t done, std::size_t total) {
    if (!bar_) bar_ = std::make_unique<progress>(label_, total, enabled_);
    bar_->advance(done - reported_);
    reported_ = done;
  }
  void finish() {
    if (bar_) bar_->finish();
  }

 private:
  std::string label_;
  bool enabled_;
  std::unique_ptr<progress> bar_;
  std::size_t reported_ = 0;
};

importers::conversion_options conversion_of(const pipeline_flags& flags, const encode_options& encode,
                                            std::ostream& err) {
  importers::conversion_options c;
  c.pipeline = pipeline_of(flags);
  c.encode = encode;
  c.on_warning = [&err](std::string_view message) { err << "warning: " << message << '\n'; };
  return c;
}

// All messages to OUT (atomically, with the summary line) or raw to stdout.
void write_messages(const std::vector<std::vector<std::byte>>& messages,
                    const std::optional<std::string>& output, std::ostream& out) {
  if (output) {
    std::vector<std::byte> all;
    for (const auto& m : messages) all.insert(all.end(), m.begin(), m.end());
    write_file_atomically(*output, all);
    out << "Converted " << messages.size() << " message(s) to " << *output << '\n';
    return;
  }
  for (const auto& m : messages) {
    out.write(reinterpret_cast<const char*>(m.data()), static_cast<std::streamsize>(m.size()));
  }
}

template <typename Convert>
std::vector<std::vector<std::byte>> convert_inputs(const std::vector<std::string>& inputs,
                                                   const char* command, bool show_progress, Convert convert) {
  std::vector<std::vector<std::byte>> all;
  for (const std::string& input : inputs) {
    input_progress bar(std::string(command) + " " + input, show_progress);
    std::vector<std::vector<std::byte>> messages;
    try {
      messages = convert(input, [&bar](std::size_t done, std::size_t total) { bar(done, total); });
    } catch (const importers::conversion_error& e) {
      throw tool_error(input + ": " + e.what());
    }
    bar.finish();
    for (auto& m : messages) all.push_back(std::move(m));
  }
  return all;
}

// Every message of a .tgm file, in order.
std::vector<std::vector<std::byte>> read_messages(const std::string& input) {
  file f = file::open(input);
  std::vector<std::vector<std::byte>> messages;
  const std::size_t n = f.message_count();
  messages.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const buffer b = f.message_bytes(i);
    messages.emplace_back(b.bytes().begin(), b.bytes().end());
  }
  if (messages.empty()) throw tool_error(input + ": no Tensogram messages");
  return messages;
}

}  // namespace

void run_convert_grib(const convert_grib_args& args, const encode_options& options, std::ostream& out,
                      std::ostream& err, bool show_progress) {
  const auto messages = convert_inputs(
      args.inputs, "convert-grib", show_progress, [&](const std::string& input, auto on_progress) {
        importers::grib_options o;
        o.conversion = conversion_of(args.pipeline, options, err);
        o.conversion.on_progress = on_progress;
        o.grouping = args.split ? importers::grib_grouping::one_to_one : importers::grib_grouping::merge_all;
        o.preserve_all_keys = args.all_keys;
        return importers::convert_grib_file(input, o);
      });
  write_messages(messages, args.output, out);
}

void run_convert_netcdf(const convert_netcdf_args& args, const encode_options& options, std::ostream& out,
                        std::ostream& err, bool show_progress) {
  importers::netcdf_split split = importers::netcdf_split::file;
  if (args.split_by == "variable") {
    split = importers::netcdf_split::variable;
  } else if (args.split_by == "record") {
    split = importers::netcdf_split::record;
  } else if (args.split_by != "file") {
    throw tool_error("unknown --split-by value '" + args.split_by + "'; expected file, variable, or record");
  }
  const auto messages = convert_inputs(args.inputs, "convert-netcdf", show_progress,
                                       [&](const std::string& input, auto on_progress) {
                                         importers::netcdf_options o;
                                         o.conversion = conversion_of(args.pipeline, options, err);
                                         o.conversion.on_progress = on_progress;
                                         o.split_by = split;
                                         o.cf = args.cf;
                                         o.nested_groups = !args.root_group_only;
                                         return importers::convert_netcdf_file(input, o);
                                       });
  write_messages(messages, args.output, out);
}

void run_to_grib(const to_grib_args& args, std::ostream& out) {
  const auto messages = read_messages(args.input);
  std::vector<std::byte> grib;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    std::vector<std::byte> part;
    try {
      part = importers::to_grib(messages[i]);
    } catch (const importers::conversion_error& e) {
      throw tool_error(args.input + ": message " + std::to_string(i) + ": " + e.what());
    }
    grib.insert(grib.end(), part.begin(), part.end());
  }
  if (args.output) {
    write_file_atomically(*args.output, grib);
    out << "Wrote GRIB (" << grib.size() << " bytes) to " << *args.output << '\n';
  } else {
    out.write(reinterpret_cast<const char*>(grib.data()), static_cast<std::streamsize>(grib.size()));
  }
}

void run_to_netcdf(const to_netcdf_args& args, std::ostream& out) {
  const auto messages = read_messages(args.input);
  try {
    importers::to_netcdf(messages, args.output);
  } catch (const importers::conversion_error& e) {
    throw tool_error(args.input + ": " + e.what());
  }
  out << "Wrote NetCDF to " << args.output << '\n';
}

}  // namespace tensogram::cli

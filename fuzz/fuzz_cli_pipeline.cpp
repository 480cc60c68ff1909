// libFuzzer target: the command line's argument-to-pipeline path
// (tools/tensogram/pipeline_flags.cpp, spec 04 §A.5 "PIPELINE flags"): the
// strings of `--encoding/--bits/--filter/--compression/--compression-level`
// and the zfp, sz3 and szip tuning flags, parsed by CLI11, checked by
// validate_pipeline_flags and applied to a descriptor, then used to encode
// and decode a small array.
//
// Input: byte 0 picks the flag set (reference or extended), the dtype and
// the shape; the rest is split at NUL bytes into argv tokens (at most 32).
// Accepted outcomes: a CLI11 parse or validation error (a usage error, exit
// 2 in the tool), `tool_error` (a pipeline the data cannot take) and
// `tensogram::error` from encode. Once a pipeline has encoded, its own
// message must decode to the same shape and, for lossless pipelines, the
// same bytes: anything else traps.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <tensogram.hpp>

#include "tools/tensogram/global_options.hpp"
#include "tools/tensogram/pipeline_flags.hpp"
#include "tools/tensogram/tool_error.hpp"

namespace {

namespace tc = tensogram::cli;

constexpr std::size_t k_max_tokens = 32;

bool lossless(const tensogram::data_object_descriptor& d) {
  return d.encoding == "none" && d.compression != "zfp" && d.compression != "sz3";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t selector = data[0];
  const auto set = (selector & 1u) != 0 ? tc::pipeline_flag_set::extended : tc::pipeline_flag_set::reference;
  static constexpr tensogram::dtype types[] = {tensogram::dtype::float64, tensogram::dtype::float32,
                                               tensogram::dtype::int16, tensogram::dtype::uint8};
  const tensogram::dtype type = types[(selector >> 1) & 3u];
  const std::uint64_t n = 1 + ((selector >> 3) & 31u) * 7;  // 1 .. 218 elements

  // argv tokens, in CLI11's reversed order (App::parse(std::vector&) pops
  // from the back).
  std::vector<std::string> tokens;
  std::string current;
  for (std::size_t i = 1; i < size && tokens.size() < k_max_tokens; ++i) {
    if (data[i] == 0) {
      tokens.push_back(std::move(current));
      current.clear();
    } else {
      current += static_cast<char>(data[i]);
    }
  }
  if (tokens.size() < k_max_tokens && !current.empty()) tokens.push_back(std::move(current));
  std::vector<std::string> reversed(tokens.rbegin(), tokens.rend());

  tc::pipeline_flags flags;
  CLI::App app("fuzz");
  tc::add_pipeline_flags(app, flags, set);
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError&) {
    return 0;  // the tool's usage error
  }
  // Whatever the parser let through must pass the combination check it ran.
  try {
    tc::validate_pipeline_flags(flags, set);
  } catch (const tc::usage_error&) {
    __builtin_trap();
  }

  tensogram::data_object_descriptor d = tensogram::data_object_descriptor::contiguous(type, {n});
  try {
    tc::apply_pipeline_flags(flags, d, "fuzz");
  } catch (const tc::tool_error&) {
    return 0;
  }

  // zstd's ultra levels (20-22) size their tables for a window of 128 MB and
  // more whatever the input: without a pledged size (the reference's call
  // sequence, kept for byte identity) one call allocates and clears ~700 MB,
  // seconds under AddressSanitizer (a campaign reported it as a timeout when
  // starved). A cost of the level, documented in docs/pipeline.md, not of
  // the input; levels up to 19 and every other codec run as usual.
  if (d.compression == "zstd") {
    const tensogram::cbor::value* level = d.params.find("zstd_level");
    if (level != nullptr && level->as_int64().value_or(0) > 19) return 0;
  }

  // Smooth values (what lossy codecs are made for) of the chosen dtype.
  const std::size_t width = tensogram::dtype_width(type);
  std::vector<std::byte> raw(static_cast<std::size_t>(n) * width);
  for (std::uint64_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(i % 97) * 0.5;
    std::byte* at = raw.data() + i * width;
    if (type == tensogram::dtype::float64) {
      std::memcpy(at, &v, 8);
    } else if (type == tensogram::dtype::float32) {
      const auto f = static_cast<float>(v);
      std::memcpy(at, &f, 4);
    } else if (type == tensogram::dtype::int16) {
      const auto s = static_cast<std::int16_t>(i % 97);
      std::memcpy(at, &s, 2);
    } else {
      *at = static_cast<std::byte>(i % 97);
    }
  }
  std::vector<std::byte> encoded;
  try {
    const tensogram::object_input objects[] = {{d, raw}};
    tensogram::global_metadata meta;
    meta.base.assign(1, tensogram::cbor::value::make_map());
    encoded = tensogram::encode(meta, objects, {});
  } catch (const tensogram::error&) {
    return 0;  // e.g. a codec parameter the codec refuses
  }
  try {
    const tensogram::message m = tensogram::decode(tensogram::buffer::borrowed(encoded));
    if (m.num_objects() != 1) __builtin_trap();
    const tensogram::decoded_object& o = *m.begin();
    if (o.shape().size() != 1 || o.shape()[0] != n) __builtin_trap();
    if (lossless(d) &&
        (o.bytes().size() != raw.size() || std::memcmp(o.bytes().data(), raw.data(), raw.size()) != 0))
      __builtin_trap();
  } catch (const tensogram::error&) {
    __builtin_trap();  // our own message must decode
  }
  return 0;
}

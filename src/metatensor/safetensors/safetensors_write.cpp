// Writing safetensors files in the canonical form of spec 06 §3.5.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "metatensor/safetensors.hpp"
#include "tensogram/io/file.hpp"

namespace metatensor::safetensors {
namespace {

[[noreturn]] void bad(const std::string& msg) {
  throw tensogram::invalid_arg_error(msg);
}

// A JSON string literal; rejects invalid UTF-8 (§2 rule 3).
std::string json_string(const std::string& s, std::string_view what) {
  try {
    return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
  } catch (const nlohmann::json::exception&) {
    bad(std::string(what) + " is not valid UTF-8");
  }
}

struct planned {
  const tensor_input* input;
  std::uint64_t begin;
  std::uint64_t end;
};

struct plan {
  std::string prefix_and_header;  // 8-byte length + padded header JSON
  std::vector<planned> order;     // tensors in data (begin) order
};

plan make_plan(std::span<const tensor_input> tensors, const std::map<std::string, std::string>& metadata,
               const write_options& options) {
  const std::size_t a = options.header_alignment;
  if (a == 0 || (a & (a - 1)) != 0) bad("header_alignment " + std::to_string(a) + " is not a power of two");
  plan p;
  std::set<std::string_view> names;
  for (const auto& t : tensors) {
    const std::string what = "tensor name \"" + t.name + "\"";
    if (t.name == "__metadata__") bad("\"__metadata__\" cannot be a tensor name (§2)");
    if (!names.insert(t.name).second) bad("duplicate " + what);
    if (t.shape.size() > max_rank) bad(what + ": rank above 32 (§8.4)");
    std::uint64_t count = 1;
    for (auto d : t.shape) {
      if (d > max_json_integer) bad(what + ": dimension above 2^53-1 (§2 rule 7)");
      if (d != 0 && count > UINT64_MAX / d) bad(what + ": element count overflows (§2 rule 8)");
      count *= d;
    }
    const std::uint64_t bits = dtype_bits(t.type);
    if (count > UINT64_MAX / bits) bad(what + ": size overflows (§2 rule 8)");
    if ((count * bits) % 8 != 0) bad(what + ": not a whole number of bytes (§2 rule 8)");
    if (t.data.size() != count * bits / 8) {
      bad(what + ": " + std::to_string(t.data.size()) + " data bytes, dtype x shape needs " +
          std::to_string(count * bits / 8));
    }
    p.order.push_back({&t, 0, 0});
  }
  // §3.5: decreasing alignment, then name byte-wise. Every tensor size is a
  // multiple of its alignment, so each tensor starts naturally aligned.
  if (!options.keep_order) {
    std::sort(p.order.begin(), p.order.end(), [](const planned& x, const planned& y) {
      const auto ax = dtype_alignment(x.input->type), ay = dtype_alignment(y.input->type);
      if (ax != ay) return ax > ay;
      return x.input->name < y.input->name;
    });
  }
  std::uint64_t pos = 0;
  for (auto& e : p.order) {
    e.begin = pos;
    pos += e.input->data.size();
    e.end = pos;
    if (pos > max_json_integer) bad("data section exceeds 2^53-1 bytes (§2 rule 7)");
  }

  std::string h = "{";
  bool first = true;
  if (!metadata.empty() || options.always_write_metadata) {
    // std::map orders std::string keys by unsigned byte value (§3.5).
    h += "\"__metadata__\":{";
    for (const auto& [k, v] : metadata) {
      if (!first) h += ',';
      first = false;
      h += json_string(k, "metadata key");
      h += ':';
      h += json_string(v, "metadata value of \"" + k + "\"");
    }
    h += '}';
    first = false;
  }
  for (const auto& e : p.order) {
    if (!first) h += ',';
    first = false;
    h += json_string(e.input->name, "tensor name");
    h += ":{\"dtype\":\"";
    h += dtype_name(e.input->type);
    h += "\",\"shape\":[";
    for (std::size_t i = 0; i < e.input->shape.size(); ++i) {
      if (i != 0) h += ',';
      h += std::to_string(e.input->shape[i]);
    }
    h += "],\"data_offsets\":[" + std::to_string(e.begin) + "," + std::to_string(e.end) + "]}";
  }
  h += '}';
  // §3.4: pad with trailing spaces so that D = 8 + N is a multiple of A.
  const std::size_t unpadded = 8 + h.size();
  h.append((a - unpadded % a) % a, ' ');
  if (h.size() > max_header_length) bad("header exceeds 100000000 bytes (§2 rule 2)");

  std::uint64_t n = h.size();
  p.prefix_and_header.resize(8);
  for (std::size_t i = 0; i < 8; ++i) p.prefix_and_header[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  p.prefix_and_header += h;
  return p;
}

std::span<const std::byte> as_bytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

}  // namespace

std::vector<std::byte> serialize(std::span<const tensor_input> tensors,
                                 const std::map<std::string, std::string>& metadata,
                                 const write_options& options) {
  const plan p = make_plan(tensors, metadata, options);
  const auto head = as_bytes(p.prefix_and_header);
  std::vector<std::byte> out(head.begin(), head.end());
  for (const auto& e : p.order) out.insert(out.end(), e.input->data.begin(), e.input->data.end());
  return out;
}

void write_file(const std::filesystem::path& path, std::span<const tensor_input> tensors,
                const std::map<std::string, std::string>& metadata, const write_options& options) {
  const plan p = make_plan(tensors, metadata, options);
  tensogram::atomic_file_writer w(path, tensogram::atomic_write_options{.sync = options.sync});
  w.write(as_bytes(p.prefix_and_header));
  for (const auto& e : p.order) {
    if (!e.input->data.empty()) w.write(e.input->data);
  }
  w.commit();
}

}  // namespace metatensor::safetensors

#include "message_edit.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <tensogram/core/error.hpp>
#include <tensogram/format/data_frame.hpp>
#include <tensogram/format/frame.hpp>
#include <tensogram/format/hash.hpp>
#include <tensogram/message/decode.hpp>
#include <tensogram/message/encode.hpp>

#include "key_lookup.hpp"
#include "tool_error.hpp"

namespace tensogram::cli {

namespace {

// The library-managed key (spec 02 §3.3).
constexpr std::string_view reserved_key = "_reserved_";

std::vector<std::string_view> split_dots(std::string_view key) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = key.find('.', start);
    parts.push_back(key.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) return parts;
    start = dot + 1;
  }
}

std::string_view trim(std::string_view s) {
  // Rust's str::trim on ASCII input (the reference trims keys and values).
  constexpr std::string_view space = " \t\n\r\f\v";
  const std::size_t first = s.find_first_not_of(space);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(space) - first + 1);
}

// Keys whose change would make the stored bytes mean something else (spec 04
// §A.5 `set`, the reference's list). Matched against the last path segment.
constexpr std::array<std::string_view, 18> immutable_keys = {
    "shape",
    "strides",
    "dtype",
    "ndim",
    "type",
    "encoding",
    "filter",
    "compression",
    "hash",
    "szip_rsi",
    "szip_block_size",
    "szip_flags",
    "szip_block_offsets",
    "sp_reference_value",
    "sp_binary_scale_factor",
    "sp_decimal_scale_factor",
    "sp_bits_per_value",
    "shuffle_element_size",
};

// The fixed fields of a descriptor map (spec 02 §4). The descriptor's free
// parameters are written flattened next to them, so a parameter with one of
// these names would give the descriptor a duplicate key; the reference lets
// `objects.N.byte_order=...` through and writes such a descriptor, which
// then decodes as something else. Refused here.
constexpr std::array<std::string_view, 10> descriptor_fields = {
    "type", "ndim", "shape", "strides", "dtype", "byte_order", "encoding", "filter", "compression", "masks",
};

bool contains(std::span<const std::string_view> list, std::string_view s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

// Writes `value` (as text) at `path` below the map `root`, creating maps on
// the way and replacing non-map values in the way by maps (§A.5).
void insert_text(cbor::value& root, std::span<const std::string_view> path, const std::string& value) {
  cbor::value* node = &root;
  for (std::size_t i = 0; i + 1 < path.size(); ++i) {
    cbor::value& child = (*node)[path[i]];
    if (!child.is_map()) child = cbor::value::make_map();
    node = &child;
  }
  node->set(path.back(), cbor::value(value));
}

// Rust's `usize::from_str`: an optional `+`, then decimal digits only.
std::optional<std::size_t> parse_index(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty() || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  std::size_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

wire_message read_wire_message(const buffer& msg, std::uint32_t threads) {
  message_layout layout = read_message_layout(msg.bytes());
  wire_message out;
  out.metadata = std::move(layout.metadata);
  out.objects.reserve(layout.objects.size());

  // The check decode skips the work whose result is thrown away (byte
  // swapping, NaN restoration) but runs every pipeline stage.
  decode_options check;
  check.threads = threads;
  check.native_byte_order = false;
  check.restore_non_finite = false;

  for (std::size_t k = 0; k < layout.objects.size(); ++k) {
    const object_frame_extent& e = layout.objects[k];
    if (e.offset > msg.size() || e.length > msg.size() - e.offset) {
      throw framing_error("data object " + std::to_string(k) + " frame (offset " + std::to_string(e.offset) +
                          ", length " + std::to_string(e.length) + ") lies outside the message");
    }
    const buffer frame = msg.slice(static_cast<std::size_t>(e.offset), static_cast<std::size_t>(e.length));
    const format::frame_header h =
        format::read_frame_header(frame.bytes(), static_cast<std::size_t>(e.offset));
    if (h.type != format::frame_type::ntensor) {
      throw framing_error("expected a data object frame at offset " + std::to_string(e.offset));
    }
    const format::frame_view view = format::locate_frame(frame.bytes(), 0, h, frame.size());
    const format::data_frame_parts parts = format::split_data_frame(view);

    if (view.hash_present()) {
      // The stored bytes are exactly what their writer hashed: reusing them
      // verbatim cannot lose anything, so no decode is needed.
      const std::uint64_t actual = format::xxh3_64(view.body());
      if (actual != view.hash_slot()) throw hash_mismatch_error(k, view.hash_slot(), actual);
    } else {
      // Nothing vouches for the bytes: decode them once (as the reference
      // does for every object) so that a damaged payload is reported
      // instead of being hashed into a message that then verifies.
      (void)decode_data_frame(frame, k, check);
    }
    out.objects.push_back(
        wire_object{data_object_descriptor::from_cbor(parts.descriptor), parts.payload_region, frame, k});
  }
  return out;
}

output_file::output_file(const std::string& path, atomic_write_options options) : path_(path) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st)) {
    direct_fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (direct_fd_ < 0) throw io_error("cannot open " + path + " for writing: " + std::strerror(errno));
    return;
  }
  atomic_.emplace(path, options);
}

output_file::~output_file() {
  if (direct_fd_ >= 0) ::close(direct_fd_);
}

void output_file::write(std::span<const std::byte> bytes) {
  if (atomic_) {
    atomic_->write(bytes);
    return;
  }
  const std::byte* p = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(direct_fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw io_error("cannot write " + path_ + ": " + std::strerror(errno));
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

void output_file::commit() {
  if (atomic_) atomic_->commit();
}

void write_output(const std::string& path, std::span<const std::byte> bytes, atomic_write_options options) {
  output_file out(path, options);
  out.write(bytes);
  out.commit();
}

void strip_reserved(global_metadata& meta) {
  meta.reserved = cbor::value::make_map();
  for (cbor::value& entry : meta.base) entry.erase(reserved_key);
}

bool wire_object::storable_verbatim() const {
  if (descriptor.encoding != "none") return true;
  const std::optional<std::uint64_t> raw_size = raw_byte_size(descriptor.dtype, descriptor.element_count());
  return raw_size && *raw_size == payload.size();
}

namespace {

// The values a decode returns in the stored byte order, NaN/Inf restored:
// what a raw-mode encode takes as input, and what it must give back.
decode_options values_options(std::uint32_t threads) {
  decode_options o;
  o.native_byte_order = false;
  o.restore_non_finite = true;
  o.threads = threads;
  return o;
}

// Mask options reproducing the objects' own masks: NaN/Inf allowed for each
// kind some object has a mask for, with the method that object recorded
// (the first one, if objects disagree; the method only changes how the mask
// is stored). The recorded method is the effective one, so the small-mask
// fallback is switched off.
void masks_from_objects(std::span<const wire_object> objects, encode_options& o) {
  std::string* methods[] = {&o.nan_mask_method, &o.pos_inf_mask_method, &o.neg_inf_mask_method};
  constexpr std::array<std::string_view, 3> kinds = {"nan", "inf+", "inf-"};
  bool taken[3] = {false, false, false};
  o.allow_nan = false;
  o.allow_inf = false;
  o.small_mask_threshold_bytes = 0;
  for (const wire_object& w : objects) {
    if (!w.descriptor.masks) continue;
    for (std::size_t k = 0; k < kinds.size(); ++k) {
      const cbor::value* entry = w.descriptor.masks->find(kinds[k]);
      if (entry == nullptr) continue;
      (k == 0 ? o.allow_nan : o.allow_inf) = true;
      const cbor::value* method = entry->find("method");
      if (!taken[k] && method != nullptr && method->as_text() != nullptr) {
        *methods[k] = *method->as_text();
        taken[k] = true;
      }
    }
  }
}

std::vector<std::byte> encode_from_values(const global_metadata& meta, std::span<const wire_object> objects,
                                          const encode_options& options) {
  const decode_options dopts = values_options(options.threads);
  std::vector<buffer> values;
  std::vector<object_input> inputs;
  values.reserve(objects.size());
  inputs.reserve(objects.size());
  for (const wire_object& w : objects) {
    values.push_back(decode_data_frame(w.frame, w.index, dopts).data_buffer());
    // The stored descriptor, parameters included (simple_packing keeps its
    // reference value and scale factors, so the values quantise to the same
    // integers); raw mode computes the masks afresh.
    inputs.push_back(object_input{w.descriptor, values.back().bytes()});
  }
  encode_options raw = options;
  masks_from_objects(objects, raw);
  std::vector<std::byte> encoded = encode(meta, inputs, raw);

  // The promise of this file: the values are the input's, bit for bit.
  const message check = decode(buffer::borrowed(encoded), dopts);
  for (std::size_t k = 0; k < objects.size(); ++k) {
    const std::span<const std::byte> a = values[k].bytes();
    const std::span<const std::byte> b = check.object(k).bytes();
    if (!std::equal(a.begin(), a.end(), b.begin(), b.end())) {
      const data_object_descriptor& d = objects[k].descriptor;
      throw tool_error("cannot carry over data object " + std::to_string(k) + " (encoding " + d.encoding +
                       ", filter " + d.filter + ", compression " + d.compression +
                       ") unchanged: it has to be re-encoded, and re-encoding changes its values");
    }
  }
  return encoded;
}

}  // namespace

std::vector<std::byte> encode_wire(const global_metadata& meta, std::span<const wire_object> objects,
                                   const encode_options& options) {
  const bool verbatim =
      std::all_of(objects.begin(), objects.end(), [](const wire_object& w) { return w.storable_verbatim(); });
  if (!verbatim) return encode_from_values(meta, objects, options);
  std::vector<object_input> inputs;
  inputs.reserve(objects.size());
  for (const wire_object& o : objects) inputs.push_back(object_input{o.descriptor, o.payload});
  return encode_pre_encoded(meta, inputs, options);
}

std::vector<set_pair> parse_set_pairs(std::string_view text) {
  std::vector<set_pair> pairs;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::string_view item =
        text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) throw tool_error("invalid set value: " + std::string(item));
    pairs.push_back(set_pair{std::string(trim(item.substr(0, eq))), std::string(trim(item.substr(eq + 1)))});
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  // Checked for every pair before anything is read or written (§A.5).
  for (const set_pair& p : pairs) {
    const std::vector<std::string_view> parts = split_dots(p.key);
    if (contains(immutable_keys, parts.back())) throw tool_error("cannot modify immutable key: " + p.key);
    if (parts.size() >= 3 && parts[0] == "objects" && contains(descriptor_fields, parts[2])) {
      throw tool_error("cannot modify immutable key: " + p.key);
    }
    if (parts.front() == reserved_key) {
      throw tool_error("cannot modify '_reserved_' \xE2\x80\x94 this namespace is managed by the library");
    }
  }
  return pairs;
}

void apply_set_pair(global_metadata& meta, std::vector<data_object_descriptor>& descriptors,
                    const set_pair& pair) {
  const std::vector<std::string_view> parts = split_dots(pair.key);
  const std::span<const std::string_view> all(parts);
  if (parts[0] == "objects") {
    // Object N's descriptor parameters (not base[N]), as the reference does.
    if (parts.size() < 3) throw tool_error("invalid object key: " + pair.key);
    const std::optional<std::size_t> index = parse_index(parts[1]);
    if (!index) throw tool_error("invalid object index in key: " + pair.key);
    if (*index >= descriptors.size()) throw tool_error("object index out of range in key: " + pair.key);
    insert_text(descriptors[*index].params, all.subspan(2), pair.value);
    return;
  }
  if (parts[0] == "extra" || parts[0] == "_extra_") {
    if (parts.size() < 2) throw tool_error("invalid extra key: " + pair.key + " (expected extra.key)");
    insert_text(meta.extra, all.subspan(1), pair.value);
    return;
  }
  if (meta.base.empty()) {
    // A message without objects can have no base entries (their count may
    // not exceed the object count), so the key goes into `_extra_`.
    if (descriptors.empty()) {
      insert_text(meta.extra, all, pair.value);
      return;
    }
    meta.base.assign(descriptors.size(), cbor::value::make_map());
  }
  for (cbor::value& entry : meta.base) insert_text(entry, all, pair.value);
}

bool is_key_template(std::string_view output) {
  return output.find('[') != std::string_view::npos && output.find(']') != std::string_view::npos;
}

std::string expand_key_template(std::string_view templ, const global_metadata& meta) {
  std::string out;
  std::size_t pos = 0;
  while (pos < templ.size()) {
    const std::size_t open = templ.find('[', pos);
    if (open == std::string_view::npos) break;
    const std::size_t close = templ.find(']', open + 1);
    if (close == std::string_view::npos) break;
    out.append(templ.substr(pos, open - pos));
    out += lookup_key(meta, templ.substr(open + 1, close - open - 1)).value_or("unknown");
    pos = close + 1;
  }
  out.append(templ.substr(std::min(pos, templ.size())));
  return out;
}

std::string expand_index_template(std::string_view templ, std::uint64_t index) {
  char digits[24];
  std::snprintf(digits, sizeof digits, "%04llu", static_cast<unsigned long long>(index));
  const std::string number(digits);
  constexpr std::string_view placeholder = "[index]";
  if (templ.find(placeholder) != std::string_view::npos) {
    std::string out;
    std::size_t pos = 0;
    for (std::size_t hit = templ.find(placeholder); hit != std::string_view::npos;
         hit = templ.find(placeholder, pos)) {
      out.append(templ.substr(pos, hit - pos));
      out += number;
      pos = hit + placeholder.size();
    }
    out.append(templ.substr(pos));
    return out;
  }
  // Split the last path component off as the reference's std::path does:
  // trailing slashes do not count, the stem ends at the last dot unless that
  // dot starts the name.
  std::string_view path = templ;
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  std::string_view parent;
  std::string_view name = path;
  if (const std::size_t slash = path.rfind('/'); slash != std::string_view::npos) {
    parent = path.substr(0, slash + 1);
    name = path.substr(slash + 1);
  }
  std::string stem = "split";
  std::string ext;
  if (!name.empty() && name != "." && name != "..") {
    const std::size_t dot = name.rfind('.');
    if (dot == std::string_view::npos || dot == 0) {
      stem = std::string(name);
    } else {
      stem = std::string(name.substr(0, dot));
      ext = std::string(name.substr(dot));
    }
  }
  return std::string(parent) + stem + "_" + number + ext;
}

}  // namespace tensogram::cli

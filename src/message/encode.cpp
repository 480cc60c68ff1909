#include "tensogram/message/encode.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "tensogram/cbor/codec.hpp"
#include "tensogram/core/byte_order.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/core/hex.hpp"
#include "tensogram/core/memory.hpp"
#include "tensogram/core/parallel.hpp"
#include "tensogram/format/aggregate_frames.hpp"
#include "tensogram/format/frame.hpp"
#include "tensogram/format/hash.hpp"
#include "tensogram/format/preamble.hpp"
#include "tensogram/format/wire.hpp"
#include "tensogram/message/masks.hpp"
#include "tensogram/message/non_finite.hpp"
#include "tensogram/message/pipeline_params.hpp"

#include "encode_internal.hpp"

namespace tensogram {

namespace {
std::string unknown_hash_text(const std::string& name) {
  return "unknown hash type: " + name + "; expected \"xxh3\" or \"none\"";
}
}  // namespace

// The reference core's check (a metadata error), which its Python module
// reports (spec 08 §1.2).
bool hash_name_enables_hashing(const std::string& name) {
  if (name == "xxh3") return true;
  if (name == "none") return false;
  throw metadata_error(unknown_hash_text(name));
}

bool encode_options::hashing() const {
  if (hash_algo.empty() || hash_algo == "none") return false;
  if (hash_algo == "xxh3") return true;
  // An argument error, as the reference C++ wrapper reports it (its C layer
  // checks the name: spec 07 C2.3); the same text as the core's.
  throw invalid_arg_error(unknown_hash_text(hash_algo));
}

namespace detail {
namespace {

cbor::value tensor_info(const data_object_descriptor& d) {
  cbor::array shape;
  cbor::array strides;
  for (std::uint64_t s : d.shape) shape.emplace_back(s);
  for (std::uint64_t s : d.strides) strides.emplace_back(s);
  return cbor::value::make_map({{"ndim", cbor::value(d.ndim)},
                                {"shape", cbor::value(std::move(shape))},
                                {"strides", cbor::value(std::move(strides))},
                                {"dtype", cbor::value(std::string(dtype_name(d.dtype)))}});
}

// Encode-time object validation (spec 02 §13): all metadata errors.
void validate_object(const object_input& in, std::size_t index) {
  const data_object_descriptor& d = in.descriptor;
  const std::string where = " (object " + std::to_string(index) + ")";
  if (d.type.empty()) throw metadata_error("descriptor type must not be empty" + where);
  if (d.ndim != d.shape.size()) {
    throw metadata_error("ndim " + std::to_string(d.ndim) + " does not match shape length " +
                         std::to_string(d.shape.size()) + where);
  }
  if (d.strides.size() != d.shape.size()) {
    throw metadata_error("strides length " + std::to_string(d.strides.size()) +
                         " does not match shape length " + std::to_string(d.shape.size()) + where);
  }
  const std::uint64_t n = d.element_count();
  if (d.encoding == "none") {
    const auto expected = raw_byte_size(d.dtype, n);
    if (!expected) throw metadata_error("element count overflows usize" + where);
    if (*expected != in.data.size()) {
      throw metadata_error("data length " + std::to_string(in.data.size()) + " does not match descriptor: " +
                           std::to_string(n) + " element(s) of " + std::string(dtype_name(d.dtype)) +
                           " need " + std::to_string(*expected) + " byte(s)" + where);
    }
  }
}

// The data frame's payload region, copied to `dst` (screened for
// non-finite values in the same loop) and hashed block by block while the
// block is still in cache: one read of the source from memory. Then the
// CBOR descriptor.
std::uint64_t copy_frame_body(std::byte* payload_dst, const prepared_object& obj, bool hashing) {
  const std::size_t p = obj.payload.size();
  const dtype t = obj.descriptor.dtype;
  const byte_order order = obj.descriptor.effective_byte_order();
  const bool scan = obj.scan_nan || obj.scan_inf;
  const std::size_t width = std::max<std::size_t>(dtype_width(t), 1);
  format::xxh3_stream stream;
  // Block size is a multiple of every element width (16 bytes max).
  constexpr std::size_t block = 32 * 1024;
  for (std::size_t off = 0; off < p; off += block) {
    const std::size_t n = std::min(block, p - off);
    const std::span<const std::byte> chunk(payload_dst + off, n);
    if (!scan) {
      // Already in place when the message was built in the payload's own
      // buffer (encode_message): hash only.
      if (payload_dst != obj.payload.data()) std::memcpy(payload_dst + off, obj.payload.data() + off, n);
    } else if (copy_and_screen_non_finite(t, order, obj.payload.subspan(off, n), payload_dst + off)) {
      // Rare: the screen saw an all-ones exponent; locate the exact element.
      if (auto hit = find_non_finite(t, order, chunk, obj.scan_nan, obj.scan_inf, off / width)) {
        throw encoding_error(strict_non_finite_message(t, *hit));
      }
    }
    if (hashing) stream.update(chunk);
  }
  std::byte* cbor_dst = payload_dst + p;
  std::memcpy(cbor_dst, obj.cbor.data(), obj.cbor.size());
  if (!hashing) return 0;
  stream.update(std::span<const std::byte>(cbor_dst, obj.cbor.size()));
  return stream.digest();
}

// Mask methods requested by the options, validated once (spec 02 §13).
struct mask_request {
  std::array<std::string, 3> methods;
  std::size_t threshold = default_small_mask_threshold;
};

mask_request mask_request_from(const encode_options& o) {
  mask_request r;
  const std::array<const std::string*, 3> given = {&o.nan_mask_method, &o.pos_inf_mask_method,
                                                   &o.neg_inf_mask_method};
  for (std::size_t k = 0; k < 3; ++k) {
    r.methods[k] = given[k]->empty() ? std::string(default_mask_method) : *given[k];
    require_known_mask_method(r.methods[k]);
  }
  if (o.small_mask_threshold_bytes >= 0) r.threshold = static_cast<std::size_t>(o.small_mask_threshold_bytes);
  return r;
}

// Caller-supplied `masks` entries: known kinds' methods and param keys
// (spec 03 §11.3.2).
void validate_caller_masks(const data_object_descriptor& d) {
  if (!d.masks) return;
  for (std::string_view kind : mask_kind_names) {
    const cbor::value* e = d.masks->find(kind);
    if (e == nullptr) continue;
    const cbor::value* m = e->find("method");
    const std::string* method = m != nullptr ? m->as_text() : nullptr;
    if (method == nullptr || !is_known_mask_method(*method)) {
      throw metadata_error("masks." + std::string(kind) + ": unknown or missing method");
    }
    if (const cbor::value* params = e->find("params")) {
      const cbor::map* pm = params->as_map();
      if (pm == nullptr) throw metadata_error("masks." + std::string(kind) + ".params must be a map");
      for (const cbor::map_entry& pe : *pm) {
        const std::string* key = pe.key.as_text();
        const bool ok = key != nullptr && ((*method == "zstd" && *key == "level") ||
                                           (*method == "blosc2" && (*key == "level" || *key == "codec")));
        if (!ok)
          throw metadata_error("masks." + std::string(kind) + ": parameter not allowed for method " +
                               *method);
      }
    }
  }
}

prepared_object prepare_pre_encoded(const object_input& in) {
  prepared_object obj;
  obj.descriptor = in.descriptor;
  if (!obj.descriptor.byte_order) obj.descriptor.byte_order = native_byte_order();
  // Resolved exactly as for decoding: every parameter must be present.
  (void)build_pipeline(obj.descriptor);
  validate_caller_masks(obj.descriptor);
  check_pre_encoded_szip_offsets(obj.descriptor, in.data.size());
  obj.payload = in.data;
  return obj;
}

// Raw mode (spec 03 §1.1): substitute-and-mask, simple_packing parameter
// resolution on the original values, pipeline, mask blobs.
prepared_object prepare_raw(const object_input& in, const encode_options& options, std::uint32_t intra) {
  prepared_object obj;
  obj.descriptor = in.descriptor;
  data_object_descriptor& d = obj.descriptor;
  if (!d.byte_order) d.byte_order = native_byte_order();
  validate_caller_masks(d);
  d.masks.reset();  // raw mode computes its own masks
  const bool is_float = dtype_is_float(d.dtype);
  const mask_request masks = mask_request_from(options);
  std::optional<substituted_data> sub;
  if (is_float && (options.allow_nan || options.allow_inf)) {
    sub = substitute_non_finite(d.dtype, *d.byte_order, in.data, options.allow_nan, options.allow_inf);
  }
  // Computing simple_packing parameters scans every value and rejects
  // NaN/Inf (spec 03 §4.4); the strict scan below is then redundant.
  const bool params_computed = resolve_simple_packing_params(d, in.data, intra);
  const bool proven_finite = params_computed && !sub;
  const codecs::pipeline pl = build_pipeline(d);
  pl.check_encodable();
  const std::uint64_t n = d.element_count();
  if (pl.is_identity() && !sub) {
    // Fast path: bytes stored verbatim, the strict NaN/Inf check fused into
    // the copy into the frame.
    obj.payload = in.data;
    obj.scan_nan = is_float && !options.allow_nan;
    obj.scan_inf = is_float && !options.allow_inf;
    return obj;
  }
  if (is_float && !sub && !proven_finite) {
    if (auto hit = find_non_finite(d.dtype, *d.byte_order, in.data, !options.allow_nan, !options.allow_inf)) {
      throw encoding_error(strict_non_finite_message(d.dtype, *hit));
    }
  }
  const std::span<const std::byte> data = sub ? std::span<const std::byte>(sub->data) : in.data;
  if (pl.is_identity()) {
    obj.owned = std::move(sub->data);  // identity with substitution: sub is set
  } else {
    codecs::pipeline::encoded e = pl.encode(data, n, *d.byte_order, intra);
    obj.owned = std::move(e.payload);
    if (e.szip_block_offsets) write_szip_block_offsets(d, *e.szip_block_offsets);
  }
  if (sub) {
    // Blobs follow the stage-3 output in the order nan, inf+, inf-
    // (spec 03 §11.4).
    cbor::value mask_map = cbor::value::make_map();
    for (std::size_t k = 0; k < 3; ++k) {
      if (!sub->masks[k]) continue;
      const std::string method = effective_mask_method(masks.methods[k], n, masks.threshold);
      const std::vector<std::byte> blob = encode_mask_blob(*sub->masks[k], n, method);
      cbor::value entry = cbor::value::make_map({{"length", cbor::value(blob.size())},
                                                 {"method", cbor::value(method)},
                                                 {"offset", cbor::value(obj.owned.size())}});
      if (std::optional<cbor::value> params = mask_blob_params(method))
        entry.set("params", std::move(*params));
      mask_map.set(mask_kind_names[k], std::move(entry));
      obj.owned.insert(obj.owned.end(), blob.begin(), blob.end());
    }
    d.masks = std::move(mask_map);
  }
  obj.payload = obj.owned;
  return obj;
}

}  // namespace

prepared_object prepare_object(const object_input& in, std::size_t index, const encode_options& options,
                               bool pre_encoded, std::uint32_t intra) {
  validate_object(in, index);
  prepared_object obj;
  try {
    obj = pre_encoded ? prepare_pre_encoded(in) : prepare_raw(in, options, intra);
  } catch (const std::bad_alloc&) {
    // As on decode (spec 01 §19.1): memory the pipeline needs for an object
    // is fallible and surfaces as an error naming the object.
    const data_object_descriptor& d = in.descriptor;
    throw encoding_error("cannot allocate memory to encode object " + std::to_string(index) + " of " +
                         std::to_string(d.element_count()) + " element(s) of " +
                         std::string(dtype_name(d.dtype)) + " (encoding " + d.encoding + ", filter " +
                         d.filter + ", compression " + d.compression + ")");
  }
  obj.cbor = cbor::encode(obj.descriptor.to_cbor());
  obj.frame_length =
      format::frame_header_size + obj.payload.size() + obj.cbor.size() + format::data_footer_size;
  return obj;
}

// Thread budget (spec 03 §13): the option if > 0, else TENSOGRAM_THREADS.
std::uint32_t thread_budget(const encode_options& o) {
  if (o.threads > 0) return o.threads;
  const char* env = std::getenv("TENSOGRAM_THREADS");
  if (env == nullptr) return 0;
  std::string_view v(env);
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front())) != 0) v.remove_prefix(1);
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back())) != 0) v.remove_suffix(1);
  if (v.empty()) return 0;
  std::uint32_t n = 0;
  const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || ptr != v.data() + v.size()) {
    throw encoding_error("invalid TENSOGRAM_THREADS value: '" + std::string(v) + "'");
  }
  return n;
}

void validate_mask_options(const encode_options& options) {
  (void)mask_request_from(options);
}

void validate_client_metadata(const global_metadata& metadata, std::optional<std::size_t> object_count) {
  if (metadata.reserved.size() != 0) {
    throw metadata_error("client code must not write to '_reserved_' at message level");
  }
  if (object_count && metadata.base.size() > *object_count) {
    throw metadata_error("metadata base has " + std::to_string(metadata.base.size()) +
                         " entries but message contains " + std::to_string(*object_count) + " objects");
  }
  for (std::size_t i = 0; i < metadata.base.size(); ++i) {
    if (!metadata.base[i].is_map()) {
      throw metadata_error("base[" + std::to_string(i) + "] must be a map");
    }
    if (metadata.base[i].contains("_reserved_")) {
      throw metadata_error("client code must not write '_reserved_' in base[" + std::to_string(i) + "]");
    }
  }
}

format::frame_header data_frame_header(const prepared_object& obj, bool hashing) noexcept {
  format::frame_header h;
  h.type = format::frame_type::ntensor;
  h.flags = static_cast<std::uint16_t>(format::frame_flags::cbor_after_payload |
                                       (hashing ? format::frame_flags::hash_present : 0));
  h.total_length = obj.frame_length;
  return h;
}

std::array<std::byte, format::data_footer_size> data_frame_footer(const prepared_object& obj,
                                                                  std::uint64_t digest) noexcept {
  std::array<std::byte, format::data_footer_size> f{};
  store_be64(f.data(), format::frame_header_size + obj.payload.size());  // cbor_offset
  store_be64(f.data() + 8, digest);
  std::memcpy(f.data() + 16, format::frame_end_marker.data(), 4);
  return f;
}

// Writes one data-object frame at `dst` (CBOR-after layout, spec 01 §13.1)
// and returns its slot digest.
std::uint64_t write_data_frame(std::byte* dst, const prepared_object& obj, bool hashing) {
  format::write_frame_header(std::span<std::byte, 16>(dst, 16), data_frame_header(obj, hashing));
  const std::uint64_t digest = copy_frame_body(dst + format::frame_header_size, obj, hashing);
  const auto footer = data_frame_footer(obj, digest);
  std::memcpy(dst + format::frame_header_size + obj.payload.size() + obj.cbor.size(), footer.data(),
              footer.size());
  return digest;
}

namespace {

// Appends `obj`'s data-object frame to `out` (which ends where the frame
// starts and has the capacity for it): the payload is appended block by
// block straight from the source, screened for non-finite values in the
// same loop as the copy, and hashed after it is appended, while it is in
// cache. Returns the slot
// digest.
std::uint64_t append_data_frame(std::vector<std::byte>& out, const prepared_object& obj, bool hashing) {
  const std::size_t at = out.size();
  out.resize(at + format::frame_header_size);
  format::write_frame_header(std::span<std::byte, 16>(out.data() + at, 16), data_frame_header(obj, hashing));
  const std::size_t p = obj.payload.size();
  const dtype t = obj.descriptor.dtype;
  const byte_order order = obj.descriptor.effective_byte_order();
  const std::size_t width = std::max<std::size_t>(dtype_width(t), 1);
  format::xxh3_stream stream;
  constexpr std::size_t block = 32 * 1024;  // a multiple of every element width
  const bool scan = obj.scan_nan || obj.scan_inf;
  for (std::size_t off = 0; off < p; off += block) {
    const std::span<const std::byte> src = obj.payload.subspan(off, std::min(block, p - off));
    const std::size_t pos = out.size();
    if (scan) {
      // The screen fused into the copy, so that the source is read from
      // memory once: a separate screen pass before the copy costs about as
      // much as the copy itself. The zero fill of the block by resize is a
      // store to cache, overwritten at once.
      out.resize(pos + src.size());
      if (copy_and_screen_non_finite(t, order, src, out.data() + pos)) {
        // Rare: the screen saw an all-ones exponent; locate the exact element.
        if (auto hit = find_non_finite(t, order, src, obj.scan_nan, obj.scan_inf, off / width)) {
          throw encoding_error(strict_non_finite_message(t, *hit));
        }
      }
    } else {
      out.insert(out.end(), src.begin(), src.end());
    }
    if (hashing) stream.update(std::span<const std::byte>(out.data() + pos, src.size()));
  }
  out.insert(out.end(), obj.cbor.begin(), obj.cbor.end());
  std::uint64_t digest = 0;
  if (hashing) {
    stream.update(obj.cbor);
    digest = stream.digest();
  }
  const auto footer = data_frame_footer(obj, digest);
  out.insert(out.end(), footer.begin(), footer.end());
  return digest;
}

}  // namespace

data_object_descriptor tensor_fields(const data_object_descriptor& d) {
  data_object_descriptor slim;
  slim.ndim = d.ndim;
  slim.shape = d.shape;
  slim.strides = d.strides;
  slim.dtype = d.dtype;
  return slim;
}

}  // namespace detail

namespace {

using detail::prepared_object;
using format::align8;
using format::frame_type;

std::vector<std::byte> index_body(const std::vector<std::uint64_t>& lengths,
                                  const std::vector<std::uint64_t>& offsets) {
  return format::encode_index_body(format::index_body{offsets, lengths});
}

std::vector<std::byte> hash_body(const std::vector<std::uint64_t>& digests) {
  return format::encode_hash_body(digests);
}

std::vector<std::uint64_t> offsets_from(std::uint64_t start, const std::vector<std::uint64_t>& lengths) {
  std::vector<std::uint64_t> out(lengths.size());
  std::uint64_t o = start;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    out[i] = o;
    o = align8(o + lengths[i]);
  }
  return out;
}

void zero(std::vector<std::byte>& out, std::size_t from, std::size_t to) {
  if (to > from) std::memset(out.data() + from, 0, to - from);
}

void encode_message(const global_metadata& metadata, std::span<const object_input> objects,
                    const encode_options& options, bool pre_encoded, std::vector<std::byte>& out) {
  const bool hashing = options.hashing();
  // Streaming-only policies are fine here; buffered Auto means header.
  const aggregate_hash_policy policy = options.aggregate_hash;
  const bool any = !objects.empty();
  const bool header_hash = hashing && any &&
                           (policy == aggregate_hash_policy::automatic ||
                            policy == aggregate_hash_policy::header || policy == aggregate_hash_policy::both);
  const bool footer_hash =
      hashing && any && (policy == aggregate_hash_policy::footer || policy == aggregate_hash_policy::both);

  // 1. Objects: validate, build pipelines, final descriptors. Objects run
  // in order; each codec may use the whole budget (spec 03 §13).
  std::uint64_t total_input = 0;
  for (const object_input& in : objects) total_input += in.data.size();
  const std::uint32_t budget = detail::thread_budget(options);
  const bool parallel = budget > 0 && total_input >= detail::parallel_threshold_bytes;
  // Objects in parallel ("axis A") only when no object's codec would use the
  // budget itself; otherwise objects run in order and each codec gets it.
  bool any_intra = false;
  if (parallel && budget > 1 && objects.size() > 1) {
    for (const object_input& in : objects) {
      try {
        data_object_descriptor probe = in.descriptor;
        if (probe.encoding == "simple_packing") any_intra = true;  // params may still be absent
        any_intra = any_intra || build_pipeline(probe).uses_intra_threads();
      } catch (const error&) {
        any_intra = true;  // the sequential pass reports the error in order
      }
    }
  }
  const bool axis_a = parallel && budget > 1 && objects.size() > 1 && !any_intra;
  const std::uint32_t intra = (parallel && !axis_a) ? budget : 0;
  std::vector<prepared_object> prepared(objects.size());
  parallel_for(objects.size(), axis_a ? budget : 0, [&](std::size_t i) {
    prepared[i] = detail::prepare_object(objects[i], i, options, pre_encoded, intra);
  });

  // 2. Metadata enrichment.
  std::vector<data_object_descriptor> descriptors;
  descriptors.reserve(prepared.size());
  for (const prepared_object& o : prepared) descriptors.push_back(o.descriptor);
  const provenance prov = options.fixed_provenance ? *options.fixed_provenance : provenance::current();
  const std::vector<std::byte> meta_body = enrich_metadata(metadata, descriptors, prov).to_cbor_bytes();

  // 3. Hash frame body size (digests are fixed-width hex, so placeholders
  // size it exactly).
  std::vector<std::uint64_t> digests(prepared.size(), 0);
  const std::size_t hash_body_size = (header_hash || footer_hash) ? hash_body(digests).size() : 0;

  // 4. Two-pass index (spec 01 §17.1).
  std::vector<std::uint64_t> lengths;
  lengths.reserve(prepared.size());
  for (const prepared_object& o : prepared) lengths.push_back(o.frame_length);
  const std::uint64_t h = format::preamble_size + align8(format::min_frame_size + meta_body.size()) +
                          (header_hash ? align8(format::min_frame_size + hash_body_size) : 0);
  std::vector<std::byte> idx;
  std::vector<std::uint64_t> offsets;
  if (any) {
    const std::vector<std::byte> c0 = index_body(lengths, std::vector<std::uint64_t>(lengths.size(), 0));
    std::vector<std::uint64_t> o1 = offsets_from(h + align8(format::min_frame_size + c0.size()), lengths);
    std::vector<std::byte> c1 = index_body(lengths, o1);
    if (c1.size() == c0.size()) {
      idx = std::move(c1);
      offsets = std::move(o1);
    } else {
      std::vector<std::uint64_t> o2 = offsets_from(h + align8(format::min_frame_size + c1.size()), lengths);
      std::vector<std::byte> c2 = index_body(lengths, o2);
      if (align8(format::min_frame_size + c2.size()) != align8(format::min_frame_size + c1.size())) {
        throw framing_error("index CBOR size changed unexpectedly on third pass");
      }
      idx = std::move(c2);
      offsets = std::move(o2);
    }
  }

  // 5. Layout.
  const std::size_t meta_at = format::preamble_size;
  const std::size_t index_at = meta_at + align8(format::min_frame_size + meta_body.size());
  const std::size_t hash_at = any ? index_at + align8(format::min_frame_size + idx.size()) : index_at;
  std::size_t end_of_data = any ? align8(offsets.back() + lengths.back()) : index_at;
  const std::size_t footer_hash_at = end_of_data;
  const std::size_t post_at =
      footer_hash ? align8(footer_hash_at + format::min_frame_size + hash_body_size) : end_of_data;
  const std::size_t total = post_at + format::postamble_size;

  // One object whose payload the pipeline produced, in a vector with room
  // for the whole message (zstd's and blosc2's compress bounds, the headroom
  // of lz4 and of an uncompressed last stage leave it): the message is built
  // in that vector, the payload moved up into its place, instead of in a
  // second buffer the payload is copied into. Peak memory is then input +
  // message rather than input + payload + message. Every byte of [0, total)
  // is written below.
  //
  // Otherwise, into a fresh vector, the message grows in order (capacity
  // reserved once): the small regions by resize, the payloads appended from
  // their source (append_data_frame), so that no payload byte is zero-filled
  // first. A vector with the capacity already (encode_into reusing it) is
  // written in place, copy and screen fused.
  prepared_object* const single = prepared.size() == 1 ? &prepared.front() : nullptr;
  const bool in_place = single != nullptr && out.capacity() < total && !single->owned.empty() &&
                        single->payload.data() == single->owned.data() && single->owned.capacity() >= total;
  if (in_place) {
    std::vector<std::byte> body = std::move(single->owned);
    const std::size_t payload_at = offsets.front() + format::frame_header_size;
    const std::size_t payload_size = single->payload.size();
    body.resize(total);  // within capacity: no reallocation
    std::memmove(body.data() + payload_at, body.data(), payload_size);
    single->payload = std::span<const std::byte>(body.data() + payload_at, payload_size);
    out.swap(body);
  } else if (out.capacity() < total) {
    try {
      reserve_advised(out, total);
    } catch (const std::bad_alloc&) {
      throw encoding_error("cannot allocate an encoded message of " + std::to_string(total) + " bytes");
    }
    out.clear();
  } else {
    out.resize(total);  // a reused vector: its pages are already mapped
  }
  // Makes [0, end) part of `out` (a no-op when it already is).
  const auto cover = [&out](std::size_t end) {
    if (out.size() < end) out.resize(end);
  };
  std::uint16_t flags = format::message_flags::header_metadata;
  if (any) flags |= format::message_flags::header_index;
  if (header_hash) flags |= format::message_flags::header_hashes;
  if (footer_hash) flags |= format::message_flags::footer_hashes;
  if (hashing) flags |= format::message_flags::hashes_present;
  format::preamble pre;
  pre.flags = flags;
  pre.total_length = total;
  cover(any ? offsets.front() : total);  // everything before the first data frame
  format::write_preamble(std::span<std::byte, 24>(out.data(), 24), pre);

  std::size_t pos = meta_at + format::write_frame(std::span<std::byte>(out).subspan(meta_at),
                                                  frame_type::header_metadata, meta_body, hashing);
  if (any) {
    zero(out, pos, index_at);
    pos = index_at + format::write_frame(std::span<std::byte>(out).subspan(index_at),
                                         frame_type::header_index, idx, hashing);
    zero(out, pos, hash_at);
    pos = hash_at;
    if (header_hash) pos = hash_at + format::min_frame_size + hash_body_size;  // written below
    for (std::size_t i = 0; i < prepared.size(); ++i) {
      cover(offsets[i]);
      zero(out, pos, offsets[i]);
      if (out.size() == offsets[i]) {
        digests[i] = detail::append_data_frame(out, prepared[i], hashing);
      } else {
        digests[i] = detail::write_data_frame(out.data() + offsets[i], prepared[i], hashing);
      }
      pos = offsets[i] + lengths[i];
    }
    cover(total);
    zero(out, pos, end_of_data);
    pos = end_of_data;
    if (header_hash || footer_hash) {
      const std::vector<std::byte> hb = hash_body(digests);
      if (header_hash) {
        const std::size_t n = format::write_frame(std::span<std::byte>(out).subspan(hash_at),
                                                  frame_type::header_hash, hb, hashing);
        zero(out, hash_at + n, offsets.front());
      }
      if (footer_hash) {
        pos = footer_hash_at + format::write_frame(std::span<std::byte>(out).subspan(footer_hash_at),
                                                   frame_type::footer_hash, hb, hashing);
      }
    }
  }
  zero(out, pos, post_at);
  format::postamble post;
  post.first_footer_offset = footer_hash ? footer_hash_at : post_at;
  post.total_length = total;
  format::write_postamble(std::span<std::byte, 24>(out.data() + post_at, 24), post);
}

}  // namespace

global_metadata enrich_metadata(const global_metadata& metadata,
                                std::span<const data_object_descriptor> descriptors, const provenance& prov) {
  detail::validate_client_metadata(metadata, descriptors.size());
  global_metadata g = metadata;
  g.base.resize(descriptors.size(), cbor::value::make_map());
  for (std::size_t i = 0; i < descriptors.size(); ++i) {
    g.base[i].set("_reserved_", cbor::value::make_map({{"tensor", detail::tensor_info(descriptors[i])}}));
  }
  g.reserved.set("encoder", cbor::value::make_map({{"name", cbor::value(prov.encoder_name)},
                                                   {"version", cbor::value(prov.encoder_version)}}));
  g.reserved.set("time", cbor::value(prov.time));
  g.reserved.set("uuid", cbor::value(prov.uuid));
  return g;
}

void encode_into(const global_metadata& metadata, std::span<const object_input> objects,
                 const encode_options& options, std::vector<std::byte>& out) {
  encode_message(metadata, objects, options, false, out);
}

std::vector<std::byte> encode(const global_metadata& metadata, std::span<const object_input> objects,
                              const encode_options& options) {
  std::vector<std::byte> out;
  encode_message(metadata, objects, options, false, out);
  return out;
}

std::vector<std::byte> encode_pre_encoded(const global_metadata& metadata,
                                          std::span<const object_input> objects,
                                          const encode_options& options) {
  std::vector<std::byte> out;
  encode_message(metadata, objects, options, true, out);
  return out;
}

}  // namespace tensogram

#include "tensogram/message/encode.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "tensogram/cbor/codec.hpp"
#include "tensogram/codecs/pipeline.hpp"
#include "tensogram/core/byte_order.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/core/hex.hpp"
#include "tensogram/format/aggregate_frames.hpp"
#include "tensogram/format/frame.hpp"
#include "tensogram/format/hash.hpp"
#include "tensogram/format/preamble.hpp"
#include "tensogram/format/wire.hpp"
#include "tensogram/message/non_finite.hpp"

namespace tensogram {

bool encode_options::hashing() const {
  if (hash_algo == "xxh3") return true;
  if (hash_algo.empty() || hash_algo == "none") return false;
  throw metadata_error("unknown hash type: " + hash_algo);
}

namespace {

using format::align8;
using format::frame_type;

struct prepared_object {
  data_object_descriptor descriptor;
  std::vector<std::byte> cbor;
  std::span<const std::byte> payload;
  bool scan_nan = false;
  bool scan_inf = false;
  std::uint64_t frame_length = 0;
};

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

// Writes one data-object frame at `at` (CBOR-after layout, spec 01 §13.1)
// and returns its slot digest. The payload is copied (screened for
// non-finite values in the same loop) and hashed block by block while the
// block is still in cache: one read of the source from memory.
std::uint64_t write_data_frame(std::vector<std::byte>& out, std::size_t at, const prepared_object& obj,
                               bool hashing) {
  const std::size_t p = obj.payload.size();
  format::frame_header h;
  h.type = frame_type::ntensor;
  h.flags = static_cast<std::uint16_t>(format::frame_flags::cbor_after_payload |
                                       (hashing ? format::frame_flags::hash_present : 0));
  h.total_length = obj.frame_length;
  std::byte* base = out.data() + at;
  format::write_frame_header(std::span<std::byte, 16>(base, 16), h);

  std::byte* payload_dst = base + format::frame_header_size;
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
      std::memcpy(payload_dst + off, obj.payload.data() + off, n);
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
  std::uint64_t digest = 0;
  if (hashing) {
    stream.update(std::span<const std::byte>(cbor_dst, obj.cbor.size()));
    digest = stream.digest();
  }
  std::byte* footer = cbor_dst + obj.cbor.size();
  store_be64(footer, format::frame_header_size + p);  // cbor_offset
  store_be64(footer + 8, digest);
  std::memcpy(footer + 16, format::frame_end_marker.data(), 4);
  return digest;
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

  // 1. Objects: validate, build pipelines, final descriptors.
  std::vector<prepared_object> prepared;
  prepared.reserve(objects.size());
  for (std::size_t i = 0; i < objects.size(); ++i) {
    const object_input& in = objects[i];
    validate_object(in, i);
    const codecs::pipeline pl = codecs::pipeline::build(in.descriptor);
    (void)pl;  // only the identity pipeline exists in this build
    prepared_object obj;
    obj.descriptor = in.descriptor;
    if (!obj.descriptor.byte_order) obj.descriptor.byte_order = native_byte_order();
    obj.payload = in.data;
    if (!pre_encoded && dtype_is_float(obj.descriptor.dtype)) {
      // Substitute-and-mask needs the mask codecs (pipeline issue); until
      // then non-finite input is rejected even when allowed, never stored.
      obj.scan_nan = true;
      obj.scan_inf = true;
      if (options.allow_nan || options.allow_inf) {
        if (auto hit =
                find_non_finite(obj.descriptor.dtype, *obj.descriptor.byte_order, in.data, true, true)) {
          const bool allowed = hit->kind == non_finite_kind::nan ? options.allow_nan : options.allow_inf;
          if (allowed) {
            throw encoding_error(
                "NaN/Inf substitution masks (allow_nan/allow_inf) are not available "
                "in this build; element " +
                std::to_string(hit->element) + " is non-finite");
          }
          throw encoding_error(strict_non_finite_message(obj.descriptor.dtype, *hit));
        }
        obj.scan_nan = obj.scan_inf = false;
      }
    }
    obj.cbor = cbor::encode(obj.descriptor.to_cbor());
    obj.frame_length =
        format::frame_header_size + obj.payload.size() + obj.cbor.size() + format::data_footer_size;
    prepared.push_back(std::move(obj));
  }

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

  out.resize(total);
  std::uint16_t flags = format::message_flags::header_metadata;
  if (any) flags |= format::message_flags::header_index;
  if (header_hash) flags |= format::message_flags::header_hashes;
  if (footer_hash) flags |= format::message_flags::footer_hashes;
  if (hashing) flags |= format::message_flags::hashes_present;
  format::preamble pre;
  pre.flags = flags;
  pre.total_length = total;
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
      zero(out, pos, offsets[i]);
      digests[i] = write_data_frame(out, offsets[i], prepared[i], hashing);
      pos = offsets[i] + lengths[i];
    }
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
  if (metadata.reserved.size() != 0) {
    throw metadata_error("client code must not write to '_reserved_' at message level");
  }
  if (metadata.base.size() > descriptors.size()) {
    throw metadata_error("metadata base has " + std::to_string(metadata.base.size()) +
                         " entries but message contains " + std::to_string(descriptors.size()) + " objects");
  }
  global_metadata g = metadata;
  for (std::size_t i = 0; i < g.base.size(); ++i) {
    if (!g.base[i].is_map()) {
      throw metadata_error("base[" + std::to_string(i) + "] must be a map");
    }
    if (g.base[i].contains("_reserved_")) {
      throw metadata_error("client code must not write '_reserved_' in base[" + std::to_string(i) + "]");
    }
  }
  g.base.resize(descriptors.size(), cbor::value::make_map());
  for (std::size_t i = 0; i < descriptors.size(); ++i) {
    g.base[i].set("_reserved_", cbor::value::make_map({{"tensor", tensor_info(descriptors[i])}}));
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

#include "tensogram/codecs/pipeline.hpp"

#include <cstring>
#include <string>
#include <utility>
#include <variant>

#include "tensogram/core/error.hpp"
#include "tensogram/core/memory.hpp"

#include "compressor.hpp"
#include "transform_stage.hpp"

namespace tensogram::codecs {

namespace {

// What stage 3 is told about its input (spec 03 §7.2, §8.4.1): the
// reference decides by simple_packing first, then by the filter, then by the
// dtype.
compressor_input input_of(const pipeline_spec& spec) {
  compressor_input in;
  in.element_type = spec.element_type;
  if (const auto* packing = std::get_if<simple_packing_params>(&spec.encoding)) {
    in.sample_bits = packing->bits_per_value;
    in.bit_packed = true;
  } else if (!std::holds_alternative<no_filter>(spec.filter)) {
    in.sample_bits = 8;
  } else {
    in.sample_bits = static_cast<std::uint32_t>(8 * dtype_width(spec.element_type));
  }
  return in;
}

// Where an encode stage writes: the payload vector itself when the stage is
// the last one and compression stores its input (it becomes the payload, no
// copy), else uninitialised scratch that the next stage reads once. Both are
// advised for huge pages before their first touch; the payload vector has
// room for the message around it.
std::span<std::byte> stage_output(std::size_t size, bool writes_payload, std::vector<std::byte>& payload,
                                  buffer& scratch) {
  if (writes_payload) {
    payload = make_advised_bytes(size, message_headroom);
    return payload;
  }
  scratch = buffer::allocate(size);
  return {scratch.mutable_data(), size};
}

// One pass from bytes we do not own into a buffer of our own, swapping on
// the way when `unit` > 1.
buffer copy_out(std::span<const std::byte> bytes, std::size_t unit) {
  buffer out = buffer::allocate(bytes.size());
  const std::span<std::byte> dst(out.mutable_data(), out.size());
  if (unit > 1) {
    copy_swapped(bytes, dst, unit);
  } else if (!bytes.empty()) {
    std::memcpy(dst.data(), bytes.data(), bytes.size());
  }
  return out;
}

}  // namespace

pipeline::pipeline(pipeline_spec spec) : dtype_(spec.element_type) {
  // Encoding, then filter, then compression (spec 03 §3.1 step 4). What
  // stage 3 is told about its input is read before the stages take their
  // parameters.
  const compressor_input input = input_of(spec);
  const encoding_entry& encoding = encoding_entry_of(spec.encoding);
  check_element_type(encoding, dtype_);
  if (encoding.make != nullptr) encoding_ = encoding.make(std::move(spec.encoding));
  encoding_name_ = encoding.name;
  const filter_entry& filter = filter_entry_of(spec.filter);
  if (filter.make != nullptr) filter_ = filter.make(std::move(spec.filter));
  compression_ = &compressor_entry_of(spec.compression);
  check_element_type(*compression_, dtype_);
  compressor_ = compression_->make(std::move(spec.compression), input);
  uses_intra_threads_ = encoding.uses_threads || filter.uses_threads || compression_->traits.uses_threads;
}

pipeline::~pipeline() = default;
pipeline::pipeline(pipeline&&) noexcept = default;
pipeline& pipeline::operator=(pipeline&&) noexcept = default;

void pipeline::check_encodable() const {
  if (compression_->traits.float64_only) {
    const std::string name(compression_->name);
    if (encoding_ || filter_) {
      throw encoding_error(
          name + " must not follow simple_packing or shuffle: it would compress meaningless numbers");
    }
    if (dtype_ != dtype::float64) {
      throw encoding_error(name + " compresses float64 data only; got " + std::string(dtype_name(dtype_)));
    }
  }
  compressor_->check_encodable();
}

bool pipeline::is_identity() const noexcept {
  return !encoding_ && !filter_ && compression_->traits.stores_input;
}

bool pipeline::uses_intra_threads() const noexcept {
  return uses_intra_threads_;
}

std::uint64_t pipeline::encoded_size(std::uint64_t n) const {
  if (encoding_) return encoding_->encoded_size(n);
  const auto size = raw_byte_size(dtype_, n);
  if (!size) throw metadata_error("element count overflows usize");
  return *size;
}

std::uint64_t pipeline::decoded_size(std::uint64_t n) const {
  if (encoding_) return checked_element_bytes(n, encoding_->decoded_width());
  if (compression_->traits.decodes_n_doubles) return checked_element_bytes(n, 8);
  return encoded_size(n);
}

pipeline::encoded pipeline::encode(std::span<const std::byte> raw, std::uint64_t n, byte_order declared,
                                   std::uint32_t threads) const {
  // Each stage reads the previous stage's bytes and writes a buffer of its
  // own; an absent stage passes the span on (no copy).
  const bool stored = compression_->traits.stores_input;
  const std::size_t unit = encoding_ ? encoding_->chunk_unit() : 0;
  if (unit != 0 && !filter_ && compressor_->chunked() && (threads <= 1 || compressor_->chunked_threads())) {
    // Packed piece by piece into a buffer the codec reads while it is in
    // cache (no packed copy of the whole object; with threads a codec that
    // cannot split its stream has the packing split instead, below).
    encoding_->check_input(raw, n);
    return compressor_->compress_chunked(
        encoding_->encoded_size(n), unit,
        [&](std::uint64_t offset, std::span<std::byte> out) {
          encoding_->encode_part(raw, offset, declared, out);
        },
        threads);
  }
  std::vector<std::byte> payload;
  buffer encoded_scratch;
  buffer filtered_scratch;
  std::span<const std::byte> bytes = raw;
  if (encoding_) {
    encoding_->check_input(raw, n);
    const auto size = static_cast<std::size_t>(encoding_->encoded_size(n));
    const std::span<std::byte> dst = stage_output(size, stored && !filter_, payload, encoded_scratch);
    encoding_->encode(raw, n, declared, dst, threads);
    bytes = dst;
  }
  if (filter_) {
    const std::span<std::byte> dst = stage_output(bytes.size(), stored, payload, filtered_scratch);
    filter_->apply(bytes, dst, threads);
    bytes = dst;
  }
  // The last stage already wrote the payload; only an identity pipeline
  // (which callers short-cut) has the compressor copy the input.
  if (stored && (encoding_ || filter_)) return {std::move(payload), std::nullopt};
  return compressor_->compress(bytes, {.declared = declared, .threads = threads});
}

buffer pipeline::decode(const buffer& payload, std::uint64_t n, byte_order declared, byte_order out_order,
                        const decode_settings& settings) const {
  const std::uint64_t x = encoded_size(n);
  // Size gate (spec 03 §9.1) before anything is allocated from the payload.
  if (!filter_ && compression_->traits.stores_input && payload.size() != x) {
    const std::string where = is_identity() && settings.payload_offset
                                  ? " (payload at offset " + std::to_string(*settings.payload_offset) + ")"
                                  : " (encoding " + std::string(encoding_name_) + ", dtype width " +
                                        std::to_string(dtype_width(dtype_)) + ")";
    throw encoding_error(payload_size_mismatch(x, payload.size()) + where);
  }
  if (x > (std::uint64_t{1} << 62)) throw metadata_error("element count overflows usize");
  const std::size_t piece_unit = encoding_ ? encoding_->chunk_unit() : 0;
  if (piece_unit != 0 && !filter_ && compressor_->chunked() &&
      (settings.threads <= 1 || compressor_->chunked_threads())) {
    // Decompressed piece by piece into one small buffer and decoded from
    // there into the result: no buffer of the whole packed stream.
    const std::size_t w = encoding_->decoded_width();
    buffer values = buffer::allocate(static_cast<std::size_t>(checked_element_bytes(n, w)));
    std::byte* const dst = values.mutable_data();
    compressor_->decompress_chunked(
        payload, static_cast<std::size_t>(x), piece_unit,
        [&](std::uint64_t offset, std::span<const std::byte> bytes) {
          const std::uint64_t first = offset / piece_unit;
          const std::uint64_t count = bytes.size() / piece_unit;
          encoding_->decode_located(bytes, 0, count, out_order,
                                    {dst + first * w, static_cast<std::size_t>(count * w)});
        },
        settings.threads);
    return values;
  }
  const std::size_t unit = dtype_swap_unit(dtype_);
  // Stage 3, then 2, then 1: each into uninitialised memory of its own that
  // the next stage reads once (compression `none` hands the payload on).
  decompressed stage = compressor_->decompress(payload, {.count = n,
                                                         .expected = static_cast<std::size_t>(x),
                                                         .declared = declared,
                                                         .swap_unit = unit,
                                                         .last_stage = !filter_ && !encoding_,
                                                         .threads = settings.threads});
  if (filter_) {
    buffer unfiltered = buffer::allocate(stage.bytes.size());
    filter_->undo(stage.bytes.bytes(), {unfiltered.mutable_data(), unfiltered.size()}, settings.threads);
    stage.bytes = std::move(unfiltered);
  }
  if (encoding_) {
    // Decoded straight into the result, in the requested order.
    buffer values =
        buffer::allocate(static_cast<std::size_t>(checked_element_bytes(n, encoding_->decoded_width())));
    encoding_->decode(stage.bytes.bytes(), n, out_order, {values.mutable_data(), values.size()},
                      settings.threads);
    return values;
  }
  const std::size_t swap_unit = stage.order != out_order && unit > 1 ? unit : 1;
  if (is_identity()) {
    // Nothing decoded: the stored bytes are already the answer (a view), or
    // one pass from them makes the caller a buffer of its own.
    if (swap_unit == 1 && !settings.writable) return payload;
    return copy_out(payload.bytes(), swap_unit);
  }
  if (swap_unit > 1) swap_bytes_in_place({stage.bytes.mutable_data(), stage.bytes.size()}, swap_unit);
  return std::move(stage.bytes);
}

void pipeline::check_range_decode() const {
  if (filter_) throw encoding_error("decode_range is not supported when a filter (e.g. shuffle) is applied");
  if (dtype_ == dtype::bitmask) throw encoding_error("partial range decode not supported for bitmask dtype");
  if (compression_->traits.range == range_decode::unsupported) {
    throw encoding_error("range decode not supported for this compressor");
  }
  compressor_->check_range_decode();
}

std::vector<std::byte> pipeline::decode_range(std::span<const std::byte> payload, std::uint64_t n,
                                              byte_order declared, byte_order out_order, std::uint64_t offset,
                                              std::uint64_t count) const {
  check_range_decode();
  std::uint64_t last = 0;
  if (__builtin_add_overflow(offset, count, &last) || last > n) {
    throw encoding_error("range (offset=" + std::to_string(offset) + ", count=" + std::to_string(count) +
                         "): exceeds the object's " + std::to_string(n) + " elements");
  }
  if (compression_->traits.range == range_decode::whole_then_slice && !encoding_ &&
      dtype_width(dtype_) == 8 && dtype_swap_unit(dtype_) == 8 && compression_->traits.decodes_n_doubles) {
    // zfp over 8-byte elements: element i is double i of the decode, which
    // the codec may produce alone (fixed-rate seeking, spec 03 §8.6). The
    // full decode would hand back host-order doubles turned to out_order
    // with 8-byte swaps; so is this.
    if (encoded_size(n) > (std::uint64_t{1} << 62)) throw metadata_error("element count overflows usize");
    if (std::optional<std::vector<std::byte>> part =
            compressor_->decompress_doubles_range(payload, n, offset, count)) {
      if (native_byte_order() != out_order) swap_bytes_in_place(*part, 8);
      return std::move(*part);
    }
  }
  if (compression_->traits.range == range_decode::whole_then_slice) {
    // The whole stream is decoded and the elements' bytes sliced out of it
    // (spec 03 §8.6). Where the decoded bytes are not N·W (spec 03 §3.3) the
    // slice is still taken in elements of the dtype, so a range is always
    // the matching part of what a full decode returns.
    const buffer all = decode(buffer::borrowed(payload), n, declared, out_order);
    const std::uint64_t w = encoding_ ? encoding_->decoded_width() : dtype_width(dtype_);
    if ((offset + count) * w > all.size()) {
      throw encoding_error("range (offset=" + std::to_string(offset) + ", count=" + std::to_string(count) +
                           "): the object decodes to " + std::to_string(all.size()) + " bytes, fewer than " +
                           std::to_string((offset + count) * w) + " (" + std::to_string(offset + count) +
                           " elements of " + std::to_string(w) + " bytes)");
    }
    const std::span<const std::byte> part =
        all.bytes().subspan(static_cast<std::size_t>(offset * w), static_cast<std::size_t>(count * w));
    return std::vector<std::byte>(part.begin(), part.end());
  }
  // The bytes of the encoded stream that hold the elements, decompressed
  // alone (spec 03 §10), then decoded.
  const std::uint64_t x = encoded_size(n);
  const std::uint64_t w = dtype_width(dtype_);
  const stream_range r =
      encoding_ ? encoding_->locate(offset, count) : stream_range{offset * w, count * w, 0};
  std::vector<std::byte> bytes = compressor_->decompress_range(payload, r.byte_start, r.byte_size, x);
  if (encoding_) {
    std::vector<std::byte> values(static_cast<std::size_t>(count * encoding_->decoded_width()));
    encoding_->decode_located(bytes, r.first_bit, count, out_order, values);
    return values;
  }
  if (declared != out_order) swap_bytes_in_place(bytes, dtype_swap_unit(dtype_));
  return bytes;
}

}  // namespace tensogram::codecs

// The nine compressors of spec 02 §17 behind the stage-3 interface
// (compressor.hpp), and their table. Each class holds its codec's resolved
// parameters and decides how its output is allocated; the codecs
// themselves are in szip.cpp, zstd.cpp, lz4.cpp, blosc2/, zfp.cpp, sz3/ and
// bitmask_codecs.cpp.
#include <array>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

#include "tensogram/codecs/bitmask_codecs.hpp"
#include "tensogram/codecs/blosc2.hpp"
#include "tensogram/codecs/lz4.hpp"
#include "tensogram/codecs/sz3.hpp"
#include "tensogram/codecs/szip.hpp"
#include "tensogram/codecs/zfp.hpp"
#include "tensogram/codecs/zstd.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/core/memory.hpp"

#include "compressor.hpp"
#include "stage_table.hpp"

namespace tensogram::codecs {

std::vector<std::byte> compressor::decompress_range(std::span<const std::byte> /*payload*/,
                                                    std::uint64_t /*byte_pos*/, std::uint64_t /*byte_size*/,
                                                    std::uint64_t /*total*/) const {
  throw encoding_error("range decode not supported for this compressor");
}

pipeline::encoded compressor::compress_chunked(std::uint64_t /*size*/, std::size_t /*unit*/,
                                               const chunk_fill& /*fill*/, std::uint32_t /*threads*/) const {
  throw std::logic_error("compress_chunked on a codec that is not chunked");
}

void compressor::decompress_chunked(const buffer& /*payload*/, std::size_t /*expected*/, std::size_t /*unit*/,
                                    const chunk_sink& /*sink*/, std::uint32_t /*threads*/) const {
  throw std::logic_error("decompress_chunked on a codec that is not chunked");
}

std::string payload_size_mismatch(std::uint64_t claimed, std::size_t payload_size) {
  return "descriptor claims " + std::to_string(claimed) + " decoded byte(s) but frame payload is " +
         std::to_string(payload_size) + " byte(s)";
}

namespace {

[[noreturn]] void size_mismatch(const char* codec, std::size_t got, std::uint64_t expected) {
  throw encoding_error(std::string("compression error: ") + codec + " error: decompressed " +
                       std::to_string(got) + " bytes, expected " + std::to_string(expected));
}

// Uninitialised memory of `size` bytes for a decoder that fills it.
std::span<std::byte> writable(buffer& b) noexcept {
  return {b.mutable_data(), b.size()};
}

// Largest expansion for which zstd/lz4 decode straight into memory of the
// expected size (zstd and lz4 blocks rarely exceed ~250:1 on real data);
// beyond it the output grows with what the payload actually produces, so a
// descriptor claiming far more than the payload holds allocates only what
// the frames produce.
constexpr std::size_t k_direct_expansion = 256;

using decompress_into_fn = void (*)(std::span<const std::byte>, std::span<std::byte>);
using vector_decompress_fn = std::vector<std::byte> (*)(std::span<const std::byte>, std::size_t);

buffer decompress_bounded(std::span<const std::byte> payload, std::size_t expected, decompress_into_fn into,
                          vector_decompress_fn growing, const char* codec) {
  if (expected <= payload.size() * k_direct_expansion + (std::size_t{1} << 20)) {
    buffer out = buffer::allocate(expected);
    into(payload, writable(out));
    return out;
  }
  std::vector<std::byte> bytes = growing(payload, expected);
  if (bytes.size() != expected) size_mismatch(codec, bytes.size(), expected);
  return buffer::owned(std::move(bytes));
}

// zfp and sz3 read host-order doubles (spec 03 §8.6, §8.7): input in the
// other order is swapped into a copy first.
template <class Compress>
std::vector<std::byte> compress_host_doubles(std::span<const std::byte> in, byte_order declared,
                                             Compress&& compress) {
  if (declared != native_byte_order()) {
    std::vector<std::byte> host = make_advised_bytes(in.size());
    copy_swapped(in, host, 8);
    return compress(std::span<const std::byte>(host));
  }
  return compress(in);
}

// zfp and sz3 hand back host-order doubles; the reference writes them in the
// declared order before the common swap to the requested order (spec 03
// §1.2, §3.3). For 8-byte swap units the two swaps cancel, so nothing is
// done and the host order is reported; for other dtypes (and complex,
// swapped per component) the doubles are reversed here so that the
// dtype-sized swap that follows gives the reference's bytes. With a filter
// or simple_packing after the codec the bytes themselves matter, so the
// shortcut is taken only for the last stage.
decompressed doubles_in_declared_order(buffer doubles, const decompress_context& c) {
  if (c.declared == native_byte_order() || (c.swap_unit == 8 && c.last_stage)) {
    return {std::move(doubles), native_byte_order()};
  }
  swap_bytes_in_place(writable(doubles), 8);
  return {std::move(doubles), c.declared};
}

// ---------------------------------------------------------------------------

// `none` (spec 03 §8.3): the payload is the stage-2 output.
class uncompressed final : public compressor {
 public:
  using params_type = no_compression;

  uncompressed(const no_compression& /*p*/, const compressor_input& /*in*/) {}

  [[nodiscard]] pipeline::encoded compress(std::span<const std::byte> in,
                                           const compress_context& /*c*/) const override {
    return {std::vector<std::byte>(in.begin(), in.end()), std::nullopt};
  }
  [[nodiscard]] decompressed decompress(const buffer& payload, const decompress_context& c) const override {
    return {payload, c.declared};
  }
  [[nodiscard]] std::vector<std::byte> decompress_range(std::span<const std::byte> payload,
                                                        std::uint64_t byte_pos, std::uint64_t byte_size,
                                                        std::uint64_t total) const override {
    // The size gate (spec 03 §10: "slice (size gate applies first)").
    if (payload.size() != total) throw encoding_error(payload_size_mismatch(total, payload.size()));
    return std::vector<std::byte>(payload.begin() + static_cast<std::ptrdiff_t>(byte_pos),
                                  payload.begin() + static_cast<std::ptrdiff_t>(byte_pos + byte_size));
  }
};

// `szip` (spec 03 §7) through libaec, with our own RSI offsets.
class szip_compressor final : public compressor {
 public:
  using params_type = szip_stage_params;

  szip_compressor(szip_stage_params p, const compressor_input& in)
      : offsets_(std::move(p.block_offsets)), bit_packed_(in.bit_packed) {
    szip_.rsi = p.rsi;
    szip_.block_size = p.block_size;
    szip_.flags = p.flags;
    // Bits per sample and the flags OR-ed at run time (spec 03 §7.2).
    szip_.bits_per_sample = in.sample_bits;
    if (in.bit_packed) szip_.flags |= szip_flags::data_msb;
    if (szip_.bits_per_sample >= 17 && szip_.bits_per_sample <= 24) szip_.flags |= szip_flags::data_3byte;
    szip_validate(szip_);
  }

  [[nodiscard]] pipeline::encoded compress(std::span<const std::byte> in,
                                           const compress_context& /*c*/) const override {
    szip_encoded e = szip_compress(in, szip_);
    return {std::move(e.payload), std::move(e.block_offsets)};
  }
  [[nodiscard]] bool chunked() const noexcept override { return true; }
  [[nodiscard]] bool chunked_threads() const noexcept override { return true; }
  [[nodiscard]] pipeline::encoded compress_chunked(std::uint64_t size, std::size_t unit,
                                                   const chunk_fill& fill,
                                                   std::uint32_t threads) const override {
    szip_encoded e = szip_compress_chunked(size, unit, fill, szip_, threads);
    return {std::move(e.payload), std::move(e.block_offsets)};
  }
  [[nodiscard]] decompressed decompress(const buffer& payload, const decompress_context& c) const override {
    // Into uninitialised memory (no zero fill before libaec writes it).
    buffer out = buffer::allocate(c.expected);
    szip_decompress_into(payload.bytes(), szip_, {out.mutable_data(), out.size()});
    return {std::move(out), c.declared};
  }
  void decompress_chunked(const buffer& payload, std::size_t expected, std::size_t unit,
                          const chunk_sink& sink, std::uint32_t threads) const override {
    szip_decompress_chunked(payload.bytes(), szip_, expected, unit, sink, threads);
  }
  [[nodiscard]] std::vector<std::byte> decompress_range(std::span<const std::byte> payload,
                                                        std::uint64_t byte_pos, std::uint64_t byte_size,
                                                        std::uint64_t total) const override {
    return szip_decompress_range(payload, szip_, *offsets_, total, byte_pos, byte_size);
  }
  void check_range_decode() const override {
    if (!offsets_) {
      throw compression_error(
          "missing szip_block_offsets in payload metadata (required for partial range decode)");
    }
  }
  void check_encodable() const override {
    if (!bit_packed_) return;
    const std::uint32_t b = szip_.bits_per_sample;
    if (b != 8 && b != 16 && b != 24 && b != 32) {
      throw encoding_error(
          "simple_packing with sp_bits_per_value " + std::to_string(b) +
          " followed by szip is lossy (szip codes whole 1/2/3/4-byte containers): use 8, 16, 24 or "
          "32 bits");
    }
  }

 private:
  szip_params szip_;
  std::optional<std::vector<std::uint64_t>> offsets_;
  bool bit_packed_;
};

// `zstd` (spec 03 §8.1).
class zstd_compressor final : public compressor {
 public:
  using params_type = zstd_params;

  zstd_compressor(const zstd_params& p, const compressor_input& /*in*/) : level_(p.level) {}

  [[nodiscard]] pipeline::encoded compress(std::span<const std::byte> in,
                                           const compress_context& c) const override {
    return {zstd_compress(in, level_, c.threads), std::nullopt};
  }
  [[nodiscard]] decompressed decompress(const buffer& payload, const decompress_context& c) const override {
    return {decompress_bounded(payload.bytes(), c.expected, &zstd_decompress_into, &zstd_decompress, "zstd"),
            c.declared};
  }

 private:
  int level_;
};

// `blosc2` (spec 03 §8.4): codec and level from the object; typesize from
// the stages before; the reference's fixed filters (byte shuffle in slot 5)
// and chunking.
class blosc2_compressor final : public compressor {
 public:
  using params_type = blosc2_stage_params;

  blosc2_compressor(const blosc2_stage_params& p, const compressor_input& in)
      : element_type_(in.element_type) {
    params_.codec = p.codec;
    params_.clevel = p.clevel;
    params_.typesize = (in.sample_bits + 7) / 8;
  }

  [[nodiscard]] pipeline::encoded compress(std::span<const std::byte> in,
                                           const compress_context& c) const override {
    // typesize 0 (bitmask, 0-bit packing) is c-blosc2's InvalidParam, an
    // empty input its refusal to append an empty chunk (spec 03 §3.2).
    if (params_.typesize == 0) {
      throw encoding_error("compression error: blosc2 error: typesize 0 (dtype " +
                           std::string(dtype_name(element_type_)) + ") is not a valid blosc2 typesize");
    }
    return {blosc2_compress(in, params_, c.threads), std::nullopt};
  }
  [[nodiscard]] decompressed decompress(const buffer& payload, const decompress_context& c) const override {
    buffer out = buffer::allocate(c.expected);
    blosc2_decompress_into(payload.bytes(), writable(out), c.threads);
    return {std::move(out), c.declared};
  }
  [[nodiscard]] std::vector<std::byte> decompress_range(std::span<const std::byte> payload,
                                                        std::uint64_t byte_pos, std::uint64_t byte_size,
                                                        std::uint64_t total) const override {
    // Only the chunks and blocks holding the bytes (spec 03 §8.4.4). The
    // reference asks c-blosc2 for whole items of the frame's typesize and
    // so cannot serve a last partial item; bytes have no such limit.
    return blosc2_decompress_range(payload, byte_pos, byte_size, total);
  }

 private:
  blosc2_params params_;
  dtype element_type_;
};

// zfp decode bound (spec 03 §8.6): the reference encoded the N·W/8 doubles
// of its input (N elements of W bytes; bitmask: W = 1/8), in blocks of four
// doubles of at least `minbits` bits each (1 bit for fixed precision and
// accuracy, exactly the block size for fixed rate), so a payload of P bytes
// stands for at most 4·(8·P/minbits + 1) doubles: N·W/8 above that is
// refused before anything is allocated. The slack covers tiny payloads.
// (A fixed per-byte ratio of 2048 values let 1 MiB claim 2^31 values, which
// decode as zeros past the stream's end for minutes.)
constexpr std::uint64_t k_zfp_value_slack = std::uint64_t{1} << 16;

// `zfp` (spec 03 §8.6).
class zfp_compressor final : public compressor {
 public:
  using params_type = zfp_params;

  zfp_compressor(const zfp_params& p, const compressor_input& in)
      : params_(p), sample_bits_(in.sample_bits == 0 ? 1 : in.sample_bits) {}

  [[nodiscard]] pipeline::encoded compress(std::span<const std::byte> in,
                                           const compress_context& c) const override {
    return {
        compress_host_doubles(
            in, c.declared, [this](std::span<const std::byte> host) { return zfp_compress(host, params_); }),
        std::nullopt};
  }
  [[nodiscard]] decompressed decompress(const buffer& payload, const decompress_context& c) const override {
    // The reference decodes N doubles, N the element count whatever the
    // dtype (spec 03 §3.3, §8.6): 8·N bytes, which is N·W only for 8-byte
    // dtypes. A stream the reference wrote holds at least one bit per four
    // doubles of its N·W/8 input, so it cannot stand for more than
    // check_claim allows; a descriptor claiming more is refused before
    // anything is allocated.
    const std::uint64_t n = c.count;
    check_claim(payload.size(), n);
    buffer out = buffer::allocate(static_cast<std::size_t>(n) * 8);
    zfp_decompress_into(payload.bytes(), n, params_, writable(out));
    return doubles_in_declared_order(std::move(out), c);
  }
  [[nodiscard]] std::optional<std::vector<std::byte>> decompress_doubles_range(
      std::span<const std::byte> payload, std::uint64_t n, std::uint64_t first,
      std::uint64_t count) const override {
    // Only fixed-rate streams can be entered mid-way (block b at bit
    // b·maxbits, spec 03 §8.6); the other modes are decoded whole.
    if (params_.mode != zfp_mode::fixed_rate) return std::nullopt;
    check_claim(payload.size(), n);
    std::vector<std::byte> out(static_cast<std::size_t>(count) * 8);
    zfp_decompress_range_into(payload, n, params_, first, count, out);
    return out;
  }

 private:
  void check_claim(std::size_t payload_size, std::uint64_t n) const {
    const std::uint64_t minbits = std::max<std::uint64_t>(zfp_stream_parameters(params_).minbits, 1);
    const std::uint64_t doubles = 4 * (static_cast<std::uint64_t>(payload_size) * 8 / minbits + 1);
    // N·W/8 encoded doubles, N·sample_bits/64 (sample_bits ≤ 64, N < 2^60).
    const std::uint64_t encoded = n / 64 * sample_bits_ + (n % 64) * sample_bits_ / 64;
    if (encoded > doubles && n > k_zfp_value_slack) {
      throw encoding_error("compression error: zfp error: a payload of " + std::to_string(payload_size) +
                           " bytes cannot encode the " + std::to_string(n) + " values the descriptor claims");
    }
  }

  zfp_params params_;
  std::uint64_t sample_bits_;  // bits per element of the codec input (1 for bitmask)
};

// `sz3` (spec 03 §8.7).
class sz3_compressor final : public compressor {
 public:
  using params_type = sz3_params;

  sz3_compressor(const sz3_params& p, const compressor_input& /*in*/) : params_(p) {}

  [[nodiscard]] pipeline::encoded compress(std::span<const std::byte> in,
                                           const compress_context& c) const override {
    return {
        compress_host_doubles(
            in, c.declared, [this](std::span<const std::byte> host) { return sz3_compress(host, params_); }),
        std::nullopt};
  }
  [[nodiscard]] decompressed decompress(const buffer& payload, const decompress_context& c) const override {
    // The stream's own count must give the expected size (spec 03 §9.2);
    // checked before the output is allocated. Every stream the reference
    // writes satisfies it: SZ3 was given the N·W input bytes as doubles.
    if (c.expected % 8 != 0) {
      throw encoding_error("sz3 decodes float64 values; " + std::to_string(c.expected) +
                           " decoded bytes are not a whole number of them");
    }
    if (const auto info = sz3_inspect(payload.bytes()); info.num * 8 != c.expected) {
      size_mismatch("sz3", info.num * 8, c.expected);
    }
    buffer out = buffer::allocate(c.expected);
    sz3_decompress_into(payload.bytes(), c.expected / 8, writable(out));
    return doubles_in_declared_order(std::move(out), c);
  }

 private:
  sz3_params params_;
};

// A codec without parameters or threads: `Compress` codes the whole input,
// `Decompress` gives exactly the expected bytes.
using compress_fn = std::vector<std::byte> (*)(std::span<const std::byte>);
using decompress_fn = buffer (*)(std::span<const std::byte>, std::size_t);

template <class Params, compress_fn Compress, decompress_fn Decompress>
class plain_compressor final : public compressor {
 public:
  using params_type = Params;

  plain_compressor(const Params& /*p*/, const compressor_input& /*in*/) {}

  [[nodiscard]] pipeline::encoded compress(std::span<const std::byte> in,
                                           const compress_context& /*c*/) const override {
    return {Compress(in), std::nullopt};
  }
  [[nodiscard]] decompressed decompress(const buffer& payload, const decompress_context& c) const override {
    return {Decompress(payload.bytes(), c.expected), c.declared};
  }
};

// `lz4` (spec 03 §8.2).
buffer lz4_decompress_bounded(std::span<const std::byte> payload, std::size_t expected) {
  return decompress_bounded(payload, expected, &lz4_decompress_into, &lz4_decompress, "lz4");
}
using lz4_compressor = plain_compressor<lz4_params, &lz4_compress, &lz4_decompress_bounded>;

// `rle` and `roaring` (spec 03 §8.8, §8.9): bitmask tensors, into vectors
// of their own.
template <vector_decompress_fn Decompress>
buffer decompress_owned(std::span<const std::byte> payload, std::size_t expected) {
  return buffer::owned(Decompress(payload, expected));
}
using rle_compressor = plain_compressor<rle_params, &rle_compress, &decompress_owned<&rle_decompress>>;
using roaring_compressor =
    plain_compressor<roaring_params, &roaring_compress, &decompress_owned<&roaring_decompress>>;

// ---------------------------------------------------------------------------
// The table.

template <class Impl>
std::unique_ptr<const compressor> make(compression_params&& p, const compressor_input& in) {
  return std::make_unique<const Impl>(std::get<typename Impl::params_type>(std::move(p)), in);
}

template <class Impl>
constexpr compressor_entry row(std::string_view name, compressor_traits traits) {
  using params = typename Impl::params_type;
  return {.name = name,
          .params_index = stage_table::index_in<params, compression_params>::value,
          .defaults = &stage_table::defaults<compression_params, params>,
          .make = &make<Impl>,
          .traits = traits};
}

// The nine compressions of spec 02 §17 in the order of `compression_params`:
// dtypes from spec 03 §3.2, range support from §10 (sz3, which the
// reference cannot range-decode, the way zfp is), threads from §13.
constexpr auto whole = range_decode::whole_then_slice;
constexpr auto bytes = range_decode::byte_range;
constexpr auto no_range = range_decode::unsupported;
// clang-format off
constexpr std::array<compressor_entry, 9> k_compressors = {{
    //                                  only dtype      range     threads stores f64 only N doubles
    row<uncompressed>("none",          {std::nullopt,   bytes,    false,  true,  false,   false}),
    row<szip_compressor>("szip",       {std::nullopt,   bytes,    false,  false, false,   false}),
    row<zstd_compressor>("zstd",       {std::nullopt,   no_range, true,   false, false,   false}),
    row<lz4_compressor>("lz4",         {std::nullopt,   no_range, false,  false, false,   false}),
    row<blosc2_compressor>("blosc2",   {std::nullopt,   bytes,    true,   false, false,   false}),
    row<zfp_compressor>("zfp",         {std::nullopt,   whole,    false,  false, true,    true}),
    row<sz3_compressor>("sz3",         {std::nullopt,   whole,    false,  false, true,    false}),
    row<rle_compressor>("rle",         {dtype::bitmask, no_range, false,  false, false,   false}),
    row<roaring_compressor>("roaring", {dtype::bitmask, no_range, false,  false, false,   false}),
}};
// clang-format on
static_assert(stage_table::rows_follow_variant(k_compressors));

}  // namespace

const compressor_entry& compressor_entry_of(const compression_params& params) noexcept {
  return k_compressors[params.index()];
}

void check_element_type(const compressor_entry& e, dtype element_type) {
  if (e.traits.only_dtype && *e.traits.only_dtype != element_type) {
    throw encoding_error("compression \"" + std::string(e.name) +
                         "\" only supports dtype=" + std::string(dtype_name(*e.traits.only_dtype)) +
                         ", got dtype=" + std::string(dtype_name(element_type)));
  }
}

bool is_known_compression(std::string_view name) noexcept {
  return stage_table::find_row(k_compressors, name) != nullptr;
}

compression_params select_compression(std::string_view name, dtype element_type) {
  const compressor_entry& e = stage_table::named(k_compressors, name, "compression");
  check_element_type(e, element_type);
  return e.defaults();
}

}  // namespace tensogram::codecs

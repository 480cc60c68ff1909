#include "tensogram/message/masks.hpp"

#include <algorithm>
#include <cstring>

#include "tensogram/codecs/bitmask_codecs.hpp"
#include "tensogram/codecs/blosc2.hpp"
#include "tensogram/codecs/lz4.hpp"
#include "tensogram/codecs/zstd.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/message/non_finite.hpp"

namespace tensogram {

namespace {

std::size_t packed_size(std::uint64_t n) {
  return static_cast<std::size_t>(n / 8 + (n % 8 != 0 ? 1 : 0));
}

// The blosc2 mask blob (spec 03 §11.3): typesize 1, bit shuffle in filter
// slot 0, one chunk, the reference's defaults lz4 / level 5 (the options
// name the method only); level clamped to 1..9 as the reference does.
constexpr codecs::blosc2_codec k_mask_blosc2_codec = codecs::blosc2_codec::lz4;
constexpr int k_mask_blosc2_level = 5;

std::vector<std::byte> blosc2_mask_blob(std::span<const std::byte> bits) {
  if (bits.empty()) return {};
  codecs::blosc2_params p;
  p.codec = k_mask_blosc2_codec;
  p.clevel = std::clamp(k_mask_blosc2_level, 1, 9);
  p.typesize = 1;
  p.filters = {codecs::blosc2_filter::bitshuffle, codecs::blosc2_filter::none, codecs::blosc2_filter::none,
               codecs::blosc2_filter::none,       codecs::blosc2_filter::none, codecs::blosc2_filter::none};
  p.chunk_bytes = codecs::blosc2_max_chunk_bytes;
  return codecs::blosc2_compress(bits, p);
}

std::size_t kind_index(non_finite_kind k) {
  switch (k) {
    case non_finite_kind::nan: return 0;
    case non_finite_kind::pos_inf: return 1;
    case non_finite_kind::neg_inf: return 2;
  }
  return 0;
}

}  // namespace

std::optional<substituted_data> substitute_non_finite(dtype t, byte_order order,
                                                      std::span<const std::byte> data, bool allow_nan,
                                                      bool allow_inf) {
  if (!dtype_is_float(t) || data.empty()) return std::nullopt;
  const std::size_t width = dtype_width(t);
  const std::uint64_t n = data.size() / width;
  std::optional<substituted_data> out;
  std::uint64_t from = 0;
  while (from < n) {
    const auto hit =
        find_non_finite(t, order, data.subspan(static_cast<std::size_t>(from * width)), true, true, from);
    if (!hit) break;
    const bool allowed = hit->kind == non_finite_kind::nan ? allow_nan : allow_inf;
    if (!allowed) throw encoding_error(strict_non_finite_message(t, *hit));
    if (!out) {
      out.emplace();
      out->data.assign(data.begin(), data.end());
    }
    auto& mask = out->masks[kind_index(hit->kind)];
    if (!mask) mask.emplace(packed_size(n), std::byte{0});
    (*mask)[static_cast<std::size_t>(hit->element / 8)] |=
        static_cast<std::byte>(0x80U >> (hit->element % 8));
    std::memset(out->data.data() + hit->element * width, 0, width);
    from = hit->element + 1;
  }
  return out;
}

bool is_known_mask_method(std::string_view m) noexcept {
  return m == "none" || m == "rle" || m == "roaring" || m == "lz4" || m == "zstd" || m == "blosc2";
}

void require_known_mask_method(std::string_view method) {
  if (!is_known_mask_method(method)) {
    throw invalid_arg_error(
        "unknown mask method \"" + std::string(method) +
        "\" (expected \"none\" | \"rle\" | \"roaring\" | \"lz4\" | \"zstd\" | \"blosc2\")");
  }
}

std::string effective_mask_method(std::string_view requested, std::uint64_t n, std::size_t threshold) {
  if (threshold > 0 && packed_size(n) <= threshold) return "none";
  return std::string(requested);
}

std::vector<std::byte> encode_mask_blob(std::span<const std::byte> packed, std::uint64_t n,
                                        std::string_view method) {
  const std::span<const std::byte> bits = packed.first(std::min(packed.size(), packed_size(n)));
  if (method == "none") return std::vector<std::byte>(bits.begin(), bits.end());
  if (method == "rle") return codecs::rle_encode_bits(bits, n);
  if (method == "roaring") return codecs::roaring_encode_bits(bits, n);
  if (method == "lz4") return codecs::lz4_compress(bits);
  if (method == "zstd") return codecs::zstd_compress(bits, codecs::zstd_default_level);
  if (method == "blosc2") return blosc2_mask_blob(bits);
  require_known_mask_method(method);
  return {};  // not reached: every known method is handled above
}

std::optional<cbor::value> mask_blob_params(std::string_view method) {
  if (method != "blosc2") return std::nullopt;
  return cbor::value::make_map(
      {{"codec", cbor::value(std::string(codecs::blosc2_codec_name(k_mask_blosc2_codec)))},
       {"level", cbor::value(k_mask_blosc2_level)}});
}

std::vector<std::byte> decode_mask_blob(std::span<const std::byte> blob, std::uint64_t n,
                                        std::string_view method) {
  const std::size_t need = packed_size(n);
  const std::string m(method);
  try {
    std::vector<std::byte> out;
    if (method == "none") {
      if (blob.size() != need) {
        throw encoding_error("blob of " + std::to_string(blob.size()) + " bytes, expected " +
                             std::to_string(need));
      }
      out.assign(blob.begin(), blob.end());
    } else if (method == "rle") {
      out = codecs::rle_decode_bits(blob, n);
    } else if (method == "roaring") {
      out = codecs::roaring_decode_bits(blob, n);
    } else if (method == "lz4") {
      out = codecs::lz4_decompress(blob, need);
    } else if (method == "zstd") {
      out = codecs::zstd_decompress(blob, need);
    } else if (method == "blosc2") {
      if (!blob.empty() || need != 0) out = codecs::blosc2_decompress(blob, need);
    } else {
      throw encoding_error("unknown mask method: " + m);
    }
    if (out.size() != need) {
      throw encoding_error("decoded " + std::to_string(out.size()) + " bytes, expected " +
                           std::to_string(need));
    }
    return out;
  } catch (const encoding_error& e) {
    const std::string_view d = e.detail();
    if (d.starts_with("bitmask decode") || d.starts_with("unknown mask method")) throw;
    throw encoding_error("bitmask decode (" + m + "): " + std::string(d));
  }
}

}  // namespace tensogram

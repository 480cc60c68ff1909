// The parts of the szip codec (spec 03 §7) that do not depend on libaec:
// parameter checks, sample widths, the RSI offsets of the CDS walk and the
// checks in front of decodes. Built with src/codecs/szip.cpp and
// szip_libaec.cpp (native) and with src/codecs/szip_builtin.cpp (our own
// encoder and decoder only).
#include "szip_common.hpp"

#include <string>
#include <vector>

#include "szip_walk.hpp"

namespace tensogram::codecs {

using szip_walk::bit_reader;
using szip_walk::fail;

std::size_t szip_sample_bytes(const szip_params& p) noexcept {
  if (p.bits_per_sample > 24) return 4;
  if (p.bits_per_sample > 16) return (p.flags & szip_flags::data_3byte) != 0 ? 3 : 4;
  if (p.bits_per_sample > 8) return 2;
  return 1;
}

void szip_validate(const szip_params& p) {
  if (p.bits_per_sample < 1 || p.bits_per_sample > 32) {
    fail("bits_per_sample must be 1..=32, got " + std::to_string(p.bits_per_sample));
  }
  if (p.block_size == 0) fail("block_size must not be 0");
  if ((p.flags & szip_flags::not_enforce) != 0) {
    if (p.block_size % 2 != 0) fail("block_size must be even, got " + std::to_string(p.block_size));
  } else if (p.block_size != 8 && p.block_size != 16 && p.block_size != 32 && p.block_size != 64) {
    fail("block_size must be 8, 16, 32 or 64, got " + std::to_string(p.block_size));
  }
  if (p.rsi < 1 || p.rsi > 4096) fail("rsi must be 1..=4096, got " + std::to_string(p.rsi));
  if ((p.flags & szip_flags::restricted) != 0 && p.bits_per_sample > 4) {
    fail("AEC_RESTRICTED requires bits_per_sample <= 4");
  }
}

std::vector<std::uint64_t> szip_rsi_offsets(std::span<const std::byte> payload, const szip_params& p,
                                            std::uint64_t num_samples, std::size_t count) {
  szip_validate(p);
  std::vector<std::uint64_t> offsets;
  if (count == 0) return offsets;
  offsets.reserve(count);
  offsets.push_back(0);
  const std::uint64_t per_rsi = static_cast<std::uint64_t>(p.rsi) * p.block_size;
  bit_reader r(payload, 0);
  for (std::size_t j = 0; j + 1 < count; ++j) {
    if ((j + 1) * per_rsi > num_samples) fail("RSI " + std::to_string(j) + " is not complete");
    szip_walk::walk_rsi(r, p, p.rsi);
    offsets.push_back(r.position());
  }
  return offsets;
}

namespace szip_common {

bool check_decode_sizes(std::span<const std::byte> payload, const szip_params& p, std::size_t expected) {
  szip_validate(p);
  if (expected == 0) {
    if (!payload.empty()) fail("non-empty payload for zero decoded bytes");
    return false;
  }
  if (payload.empty()) fail("empty payload for " + std::to_string(expected) + " decoded bytes");
  return true;
}

range_start locate_range(std::span<const std::byte> payload, const szip_params& p,
                         std::span<const std::uint64_t> stored_offsets, std::uint64_t total_bytes,
                         std::uint64_t byte_pos, std::uint64_t byte_size) {
  if (payload.empty()) fail("empty payload");
  if (byte_pos > total_bytes || byte_size > total_bytes - byte_pos) {
    fail("range [" + std::to_string(byte_pos) + ", +" + std::to_string(byte_size) + ") exceeds the " +
         std::to_string(total_bytes) + " decoded bytes");
  }
  const std::size_t s = szip_sample_bytes(p);
  const std::uint64_t rsi_bytes = static_cast<std::uint64_t>(p.rsi) * p.block_size * s;
  const std::uint64_t j = byte_pos / rsi_bytes;
  if (j >= stored_offsets.size())
    fail("aec_decode_range failed with code -3 (RSI " + std::to_string(j) + ")");
  // Re-derive the RSI start from the stream: reference-written offsets can
  // be one block early (spec 03 §7.4).
  const std::uint64_t samples = total_bytes / s;
  return {szip_rsi_offsets(payload, p, samples, static_cast<std::size_t>(j) + 1).back(),
          byte_pos - j * rsi_bytes};
}

std::optional<range_start> start_range(std::span<const std::byte> payload, const szip_params& p,
                                       std::span<const std::uint64_t> stored_offsets,
                                       std::uint64_t total_bytes, std::uint64_t byte_pos,
                                       std::uint64_t byte_size) {
  szip_validate(p);
  if (byte_size == 0) return std::nullopt;
  return locate_range(payload, p, stored_offsets, total_bytes, byte_pos, byte_size);
}

}  // namespace szip_common

}  // namespace tensogram::codecs

// The szip entry points of a build without libaec (the WebAssembly build when
// the libaec source package cannot be obtained, docs/wasm.md): every call
// fails with one clear "not built into this build" error, raised when the
// pipeline is set up (szip_validate runs in the compressor's constructor), so
// no szip object is encoded or decoded half-way (spec 03 §7).
#include <string>

#include "tensogram/codecs/szip.hpp"
#include "tensogram/core/error.hpp"

namespace tensogram::codecs {

namespace {

[[noreturn]] void not_built() {
  throw compression_error("codec \"szip\" is not built into this build (compiled without libaec)");
}

}  // namespace

bool szip_available() noexcept {
  return false;
}

std::size_t szip_sample_bytes(const szip_params& p) noexcept {
  if (p.bits_per_sample > 24) return 4;
  if (p.bits_per_sample > 16) return (p.flags & szip_flags::data_3byte) != 0 ? 3 : 4;
  if (p.bits_per_sample > 8) return 2;
  return 1;
}

void szip_validate(const szip_params& /*p*/) {
  not_built();
}

szip_encoded szip_compress(std::span<const std::byte> /*in*/, const szip_params& /*p*/) {
  not_built();
}

szip_encoded szip_compress_chunked(std::uint64_t /*size*/, std::size_t /*unit*/,
                                   const szip_chunk_fill& /*fill*/, const szip_params& /*p*/,
                                   std::uint32_t /*threads*/) {
  not_built();
}

std::vector<std::byte> szip_decompress(std::span<const std::byte> /*payload*/, const szip_params& /*p*/,
                                       std::size_t /*expected*/) {
  not_built();
}

void szip_decompress_into(std::span<const std::byte> /*payload*/, const szip_params& /*p*/,
                          std::span<std::byte> /*out*/) {
  not_built();
}

void szip_decompress_chunked(std::span<const std::byte> /*payload*/, const szip_params& /*p*/,
                             std::size_t /*expected*/, std::size_t /*unit*/, const szip_chunk_sink& /*sink*/,
                             std::uint32_t /*threads*/) {
  not_built();
}

std::vector<std::uint64_t> szip_rsi_offsets(std::span<const std::byte> /*payload*/, const szip_params& /*p*/,
                                            std::uint64_t /*num_samples*/, std::size_t /*count*/) {
  not_built();
}

std::vector<std::byte> szip_decompress_range(std::span<const std::byte> /*payload*/, const szip_params& /*p*/,
                                             std::span<const std::uint64_t> /*stored_offsets*/,
                                             std::uint64_t /*total_bytes*/, std::uint64_t /*byte_pos*/,
                                             std::uint64_t /*byte_size*/) {
  not_built();
}

}  // namespace tensogram::codecs

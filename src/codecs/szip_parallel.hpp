// Splitting an szip stream (spec 03 §7) into runs of whole RSIs that are
// coded or decoded on several threads, whatever codes them: our own encoder
// and decoder (src/codecs/szip.cpp) or libaec (src/codecs/szip_libaec.cpp).
// Private to src/codecs/szip*.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "szip_walk.hpp"
#include "tensogram/codecs/szip.hpp"

namespace tensogram::codecs::szip_parallel {

/// Stage bytes handed to a coder per call: whole RSIs and whole `unit`s of
/// the producer, about 64 KiB, so that a piece packed just before is still
/// in L2 when it is coded (and decoded bytes when they are unpacked).
[[nodiscard]] std::size_t chunk_bytes(const szip_params& p, std::size_t unit);

/// The smallest run of whole RSIs that is also whole `unit`s.
[[nodiscard]] std::size_t step_bytes(const szip_params& p, std::size_t unit);

/// Part k is steps [first[k], first[k+1]) of `steps`, sized so that every
/// part ends at the same time when the task of part k first spends `lead`
/// (per step, relative to coding one) for each step before it.
[[nodiscard]] std::vector<std::uint64_t> split_steps(std::uint64_t steps, std::size_t parts, double lead);

/// How many parts a parallel call splits `size` stage bytes into: 1 (not
/// parallel) for one thread, one step, or AEC_PAD_RSI (whose byte-aligned
/// RSIs the CDS walk does not model).
[[nodiscard]] std::size_t parallel_parts(const szip_params& p, std::uint64_t size, std::size_t unit,
                                         std::uint32_t threads);

/// Throws unless `size` is whole samples (the error text of both coders).
void check_sample_multiple(std::uint64_t size, const szip_params& p);

/// Codes stage bytes [begin, end) (from the producer's fill; the part's own
/// RSIs start at `own`, those before are its lead-in) into `e`: its payload
/// and the bit offsets of its RSIs, counted from `begin`. `capacity`: input
/// bytes to reserve payload room for (at least end - begin). Returns the bit
/// length of the coded part.
using part_coder = std::function<std::uint64_t(std::uint64_t begin, std::uint64_t own, std::uint64_t end,
                                               std::size_t capacity, szip_encoded& e)>;

/// szip_compress_chunked on `parts` threads, each part coded by `code` and
/// the parts' bit streams joined at their exact bit lengths into the stream
/// one encoder writes. Both coders start each RSI from its own reference
/// sample and end zero-block runs at the end of an RSI, but choose the split
/// option by a search that starts from the previous block's k, across RSIs:
/// a part therefore first codes the previous part's last RSIs again (its
/// lead-in) and is kept only where the lead-in came out bit for bit as the
/// previous part wrote those RSIs and holds a block coded with a split
/// option (that block's k is then the one the single encoder had there, and
/// the two agree from it on). std::nullopt otherwise (the caller codes the
/// stream serially).
[[nodiscard]] std::optional<szip_encoded> compress_parts(std::uint64_t size, std::size_t unit,
                                                         const szip_params& p, std::size_t parts,
                                                         std::uint32_t threads, const part_coder& code);

/// Decodes stage bytes [begin, end) from bit `bit` (the start of an RSI;
/// `last`: the stream's last part). Returns the bit after the part's last
/// CDS when the decoder knows it, for decode_parts to check.
using part_decoder = std::function<std::optional<std::uint64_t>(std::uint64_t bit, std::size_t begin,
                                                                std::size_t end, bool last)>;

/// szip_decompress_chunked on `parts` threads: runs of whole RSIs (and
/// units), part k decoded by `decode` from its first RSI, whose bit offset
/// one walk of the stream finds (never taken from the stored offsets, which
/// the reference writes one block early in a data-dependent case, spec 03
/// §7.4), shared by the parts' tasks; a part that ends elsewhere than where
/// the walk puts the next one fails. Any failure throws (the caller then
/// decodes otherwise). `walk_share`: the walk's cost per RSI relative to
/// decoding it; later parts are made that much shorter.
void decode_parts(std::span<const std::byte> payload, const szip_params& p, std::size_t expected,
                  std::size_t unit, std::size_t parts, std::uint32_t threads, double walk_share,
                  const part_decoder& decode);

}  // namespace tensogram::codecs::szip_parallel

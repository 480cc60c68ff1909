#include "tensogram/format/hash.hpp"

#include <xxhash.h>

#include <algorithm>
#include <cstring>

namespace tensogram::format {

struct xxh3_stream::state {
  XXH3_state_t* s;
};

void xxh3_stream::state_deleter::operator()(state* s) const noexcept {
  if (s != nullptr) {
    XXH3_freeState(s->s);
    std::default_delete<state>()(s);
  }
}

std::uint64_t xxh3_64(std::span<const std::byte> bytes) noexcept {
  return XXH3_64bits(bytes.data(), bytes.size());
}

xxh3_stream::xxh3_stream() : state_(std::make_unique<state>().release()) {
  state_->s = XXH3_createState();
  if (state_->s == nullptr) throw std::bad_alloc();
  XXH3_64bits_reset(state_->s);
}
xxh3_stream::xxh3_stream(xxh3_stream&&) noexcept = default;
xxh3_stream& xxh3_stream::operator=(xxh3_stream&&) noexcept = default;
xxh3_stream::~xxh3_stream() = default;

void xxh3_stream::update(std::span<const std::byte> bytes) noexcept {
  XXH3_64bits_update(state_->s, bytes.data(), bytes.size());
}

std::uint64_t xxh3_stream::digest() const noexcept {
  return XXH3_64bits_digest(state_->s);
}

std::uint64_t copy_and_hash(std::span<const std::byte> src, std::byte* dst, xxh3_stream& stream) noexcept {
  // Blocks small enough to stay in L1/L2 between the copy and the hash, so
  // the source is read from memory once.
  constexpr std::size_t block = 32 * 1024;
  for (std::size_t off = 0; off < src.size(); off += block) {
    const std::size_t n = std::min(block, src.size() - off);
    std::memcpy(dst + off, src.data() + off, n);
    stream.update(std::span<const std::byte>(dst + off, n));
  }
  return stream.digest();
}

}  // namespace tensogram::format

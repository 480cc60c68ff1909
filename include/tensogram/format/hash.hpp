// XXH3-64 (seed 0, default secret) via libxxhash: the only hash of the
// format (spec 01 §12).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace tensogram::format {

[[nodiscard]] std::uint64_t xxh3_64(std::span<const std::byte> bytes) noexcept;

/// Incremental XXH3-64, for hashing a frame body written in pieces.
class xxh3_stream {
 public:
  xxh3_stream();
  xxh3_stream(xxh3_stream&&) noexcept;
  xxh3_stream& operator=(xxh3_stream&&) noexcept;
  xxh3_stream(const xxh3_stream&) = delete;
  xxh3_stream& operator=(const xxh3_stream&) = delete;
  ~xxh3_stream();

  void update(std::span<const std::byte> bytes) noexcept;
  [[nodiscard]] std::uint64_t digest() const noexcept;

 private:
  struct state;
  struct state_deleter {
    void operator()(state* s) const noexcept;
  };
  std::unique_ptr<state, state_deleter> state_;
};

/// Copies `src` into `dst` (same size) and returns XXH3-64 of the bytes, in
/// one pass over cache-sized blocks: the encoder's fused copy+hash.
std::uint64_t copy_and_hash(std::span<const std::byte> src, std::byte* dst, xxh3_stream& stream) noexcept;

}  // namespace tensogram::format

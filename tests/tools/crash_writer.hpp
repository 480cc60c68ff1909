// What crash_writer writes, shared with the test that checks it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tensogram::crash_test {

/// Elements of message (or streamed object) `k`: 8 Ki to 40 Ki float32s,
/// varying so that messages end at many different offsets.
[[nodiscard]] inline std::size_t message_elements(std::uint64_t k) {
  return 8192 + static_cast<std::size_t>((k * 7919) % 32768);
}

/// The values of message `k` from writer `tag`.
[[nodiscard]] inline std::vector<float> message_values(std::uint64_t tag, std::uint64_t k) {
  std::vector<float> v(message_elements(k));
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = static_cast<float>(tag * 100000 + k * 10 + i % 7);
  }
  return v;
}

}  // namespace tensogram::crash_test

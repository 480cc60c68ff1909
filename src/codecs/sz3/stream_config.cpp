// The SZ3 configuration record (docs/sz3-format.md §2).
#include "stream_config.hpp"

#include <algorithm>
#include <numeric>
#include <string>

namespace tensogram::codecs::sz3 {

void stream_config::set_dims(std::span<const std::size_t> shape) {
  dims.clear();
  for (std::size_t d : shape) {
    if (d > 1) dims.push_back(d);
  }
  if (dims.empty()) dims = {1};
  N = static_cast<std::uint8_t>(dims.size());
  num = std::accumulate(dims.begin(), dims.end(), std::uint64_t{1},
                        [](std::uint64_t a, std::size_t b) { return a * b; });
  predDim = N;
  blockSize = N == 1 ? 128 : (N == 2 ? 16 : 6);
}

namespace {

// Bits needed for the largest dimension (0 for none): SZ3 packs every
// dimension at that width.
std::uint8_t bit_width(std::span<const std::size_t> dims) {
  std::uint64_t largest = 0;
  for (std::size_t d : dims) largest = std::max<std::uint64_t>(largest, d);
  std::uint8_t bits = 0;
  while (largest > 0) {
    largest >>= 1;
    ++bits;
  }
  return bits;
}

// Dimensions packed LSB-first: value i occupies bits [i·w, (i+1)·w) of a
// little-endian bit string.
void pack_dims(std::span<const std::size_t> dims, std::uint8_t width, byte_writer& w) {
  const std::size_t bytes = (dims.size() * width + 7) / 8;
  const std::size_t at = w.reserve(bytes);
  std::size_t bit = 0;
  for (std::size_t d : dims) {
    for (std::uint8_t j = 0; j < width; ++j, ++bit) {
      if ((static_cast<std::uint64_t>(d) >> j) & 1u) {
        w.bytes()[at + bit / 8] |= std::byte{static_cast<unsigned char>(1u << (bit % 8))};
      }
    }
  }
}

std::vector<std::size_t> unpack_dims(byte_reader& r, std::uint8_t n, std::uint8_t width) {
  const auto packed = r.get_bytes((static_cast<std::size_t>(n) * width + 7) / 8, "configuration dimensions");
  std::vector<std::size_t> dims(n);
  std::size_t bit = 0;
  for (auto& d : dims) {
    std::uint64_t v = 0;
    for (std::uint8_t j = 0; j < width; ++j, ++bit) {
      v |= static_cast<std::uint64_t>((std::to_integer<unsigned>(packed[bit / 8]) >> (bit % 8)) & 1u) << j;
    }
    d = static_cast<std::size_t>(v);
  }
  return dims;
}

}  // namespace

void save_config(const stream_config& c, byte_writer& w) {
  const std::size_t start = w.reserve(1);  // record size, written last
  w.put<std::uint8_t>(c.N);
  const std::uint8_t width = bit_width(c.dims);
  w.put<std::uint8_t>(width);
  pack_dims(c.dims, width, w);
  w.put<std::uint64_t>(c.num);
  w.put<std::uint8_t>(static_cast<std::uint8_t>(c.cmprAlgo));
  w.put<std::uint8_t>(static_cast<std::uint8_t>(c.errorBoundMode));
  switch (c.errorBoundMode) {
    case error_bound_mode::abs: w.put<double>(c.absErrorBound); break;
    case error_bound_mode::rel: w.put<double>(c.relErrorBound); break;
    case error_bound_mode::psnr: w.put<double>(c.psnrErrorBound); break;
    case error_bound_mode::l2norm: w.put<double>(c.l2normErrorBound); break;
    case error_bound_mode::abs_and_rel:
    case error_bound_mode::abs_or_rel:
      w.put<double>(c.absErrorBound);
      w.put<double>(c.relErrorBound);
      break;
  }
  const auto flags =
      static_cast<std::uint8_t>((c.lorenzo ? 0x80 : 0) | (c.lorenzo2 ? 0x40 : 0) | (c.regression ? 0x20 : 0) |
                                (c.regression2 ? 0x10 : 0) | (c.openmp ? 0x08 : 0));
  w.put<std::uint8_t>(flags);
  w.put<std::uint8_t>(c.dataType);
  w.put<std::int32_t>(c.quantbinCnt);
  w.put<std::int32_t>(c.blockSize);
  w.put<std::uint8_t>(c.predDim);
  w.put_at<std::uint8_t>(start, static_cast<std::uint8_t>(w.size() - start));
}

stream_config load_config(std::span<const std::byte> record) {
  byte_reader outer(record);
  const auto size = outer.get<std::uint8_t>("configuration record size");
  if (size < 1 || size > record.size()) {
    fail("configuration record claims " + std::to_string(size) + " bytes, " + std::to_string(record.size()) +
         " present after the algorithm output");
  }
  byte_reader r(record.subspan(1, size - 1u));
  stream_config c;
  c.N = r.get<std::uint8_t>("configuration N");
  if (c.N < 1 || c.N > 4) fail("configuration: " + std::to_string(c.N) + " dimensions (SZ3 supports 1 to 4)");
  const auto width = r.get<std::uint8_t>("configuration dimension width");
  if (width > 64) fail("configuration: dimension bit width " + std::to_string(width) + " exceeds 64");
  c.dims = unpack_dims(r, c.N, width);
  c.num = r.get<std::uint64_t>("configuration num");
  std::uint64_t product = 1;
  for (std::size_t d : c.dims) {
    if (d == 0 || product > UINT64_MAX / d) fail("configuration: dimensions are zero or overflow");
    product *= d;
  }
  if (product != c.num) {
    fail("configuration: dimensions multiply to " + std::to_string(product) + " but num is " +
         std::to_string(c.num));
  }
  const auto algo = r.get<std::uint8_t>("configuration cmprAlgo");
  if (algo > static_cast<std::uint8_t>(algorithm::bio_md_xtc)) {
    fail("configuration: unknown algorithm " + std::to_string(algo));
  }
  c.cmprAlgo = static_cast<algorithm>(algo);
  const auto mode = r.get<std::uint8_t>("configuration errorBoundMode");
  if (mode > static_cast<std::uint8_t>(error_bound_mode::abs_or_rel)) {
    fail("configuration: unknown error bound mode " + std::to_string(mode));
  }
  c.errorBoundMode = static_cast<error_bound_mode>(mode);
  switch (c.errorBoundMode) {
    case error_bound_mode::abs: c.absErrorBound = r.get<double>("configuration absErrorBound"); break;
    case error_bound_mode::rel: c.relErrorBound = r.get<double>("configuration relErrorBound"); break;
    case error_bound_mode::psnr: c.psnrErrorBound = r.get<double>("configuration psnrErrorBound"); break;
    case error_bound_mode::l2norm:
      c.l2normErrorBound = r.get<double>("configuration l2normErrorBound");
      break;
    case error_bound_mode::abs_and_rel:
    case error_bound_mode::abs_or_rel:
      c.absErrorBound = r.get<double>("configuration absErrorBound");
      c.relErrorBound = r.get<double>("configuration relErrorBound");
      break;
  }
  // Older SZ3 versions wrote shorter records; the remaining fields are
  // read while the record lasts, as SZ3 does.
  if (r.remaining() > 0) {
    const auto flags = r.get<std::uint8_t>("configuration flags");
    c.lorenzo = (flags & 0x80) != 0;
    c.lorenzo2 = (flags & 0x40) != 0;
    c.regression = (flags & 0x20) != 0;
    c.regression2 = (flags & 0x10) != 0;
    c.openmp = (flags & 0x08) != 0;
  }
  if (r.remaining() > 0) c.dataType = r.get<std::uint8_t>("configuration dataType");
  if (r.remaining() > 0) c.quantbinCnt = r.get<std::int32_t>("configuration quantbinCnt");
  if (r.remaining() > 0) c.blockSize = r.get<std::int32_t>("configuration blockSize");
  if (r.remaining() > 0) c.predDim = r.get<std::uint8_t>("configuration predDim");
  return c;
}

}  // namespace tensogram::codecs::sz3

// `sz3` stage (spec 03 §8.7): the SZ3 3.3.2 stream envelope, the choice of
// algorithm SZ3's ALGO_INTERP_LORENZO makes, and the dispatch of a stream
// to its decoder. The layout is written down in docs/sz3-format.md.
#include "tensogram/codecs/sz3.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string>

#include "byte_io.hpp"
#include "composed_lorenzo.hpp"
#include "generic_compressor.hpp"
#include "interpolation.hpp"
#include "lorenzo_regression.hpp"
#include "lossless.hpp"
#include "stream_config.hpp"
#include "tensogram/core/error.hpp"

namespace tensogram::codecs {

namespace sz3 {
namespace {

// docs/sz3-format.md §1.
constexpr std::uint32_t stream_magic = 0xF342F310u;
// Data version 3.3.2 as SZ3 encodes it: major, minor, patch in the top
// three bytes. SZ3 compares the "major.minor.patch" text, so the low byte
// is not significant.
constexpr std::uint32_t data_version = 0x03030200u;
constexpr std::size_t envelope_size = 16;

// SZ3's per-N defaults (anchor stride of the interpolation, the edge of a
// sampled block in the tuning).
constexpr std::array<std::int32_t, 4> default_anchor_stride = {4096, 128, 32, 16};
constexpr std::array<std::size_t, 4> default_sample_block = {4096, 128, 32, 16};
constexpr double sample_rate = 0.005;

struct envelope {
  std::span<const std::byte> algo_bytes;
  stream_config config;
};

envelope parse_envelope(std::span<const std::byte> stream) {
  byte_reader r(stream);
  const auto magic = r.get<std::uint32_t>("magic number");
  if (magic != stream_magic) fail("not an SZ3 stream (magic number mismatch)");
  const auto version = r.get<std::uint32_t>("data version");
  if ((version & 0xFFFFFF00u) != data_version) {
    fail("unsupported SZ3 feature: data version " + std::to_string(version >> 24) + "." +
         std::to_string((version >> 16) & 0xFF) + "." + std::to_string((version >> 8) & 0xFF) +
         " (only 3.3.2 streams are read, as SZ3 3.3.2 itself requires)");
  }
  const auto size = r.get<std::uint64_t>("compressed size");
  envelope e;
  e.algo_bytes = r.get_bytes(size, "algorithm output");
  const auto record = r.rest();
  e.config = load_config(record);
  if (record.size() != std::to_integer<std::size_t>(record[0])) {
    fail(std::to_string(record.size() - std::to_integer<std::size_t>(record[0])) +
         " bytes follow the configuration record");
  }
  return e;
}

template <class T>
T value_range(std::span<const T> data) {
  T lo = data[0];
  T hi = data[0];
  for (std::size_t i = 1; i < data.size(); ++i) {
    if (hi < data[i]) hi = data[i];
    if (lo > data[i]) lo = data[i];
  }
  return hi - lo;
}

// SZ3's calAbsErrorBound: rel and psnr become an absolute bound from the
// value range (docs/sz3-format.md §7); the record then says "abs".
template <class T>
void resolve_error_bound(stream_config& conf, std::span<const T> data) {
  switch (conf.errorBoundMode) {
    case error_bound_mode::abs: return;
    case error_bound_mode::rel:
      conf.absErrorBound = conf.relErrorBound * static_cast<double>(value_range(data));
      break;
    case error_bound_mode::psnr: {
      const double threshold = 0.99;
      const double v = (conf.psnrErrorBound + 10 * std::log10(1 - 2.0 / 3.0 * threshold)) / -20;
      conf.absErrorBound = static_cast<double>(value_range(data)) * std::pow(10, v);
      break;
    }
    default: fail("error bound mode not offered by this encoder");
  }
  conf.errorBoundMode = error_bound_mode::abs;
}

// The Huffman side streams of the 3-D Lorenzo/regression predictor
// (block choices, regression coefficients): each is a table followed by its
// coded bits (docs/sz3-format.md §6.2).
class huffman_side_stream final : public int_stream_coder {
 public:
  void encode(std::span<const int> symbols, int state_count, byte_writer& w) const override {
    huffman_coder coder;
    coder.build(symbols, state_count);
    coder.save(w);
    coder.encode(symbols, w);
  }
  std::vector<int> decode(byte_reader& r, std::size_t count) const override {
    huffman_coder coder;
    coder.load(r);
    return coder.decode(r, count);
  }
};

template <class T>
std::vector<std::byte> run_interpolation(const stream_config& conf, std::vector<T>& work,
                                         lossless_context& zstd) {
  std::vector<std::byte> out;
  interpolation_decomposition<T> d(conf);
  generic_compress(d, conf, work.data(), zstd, out);
  return out;
}

// ALGO_LORENZO_REG as SZ3 3.3.2 runs it: the composed Lorenzo compressor
// for 1-D data (the only shape the pipeline gives), the blockwise
// decomposition for 3-D (docs/sz3-format.md §6).
template <class T>
std::vector<std::byte> run_lorenzo(const stream_config& conf, std::vector<T>& work, lossless_context& zstd) {
  std::vector<std::byte> out;
  if (conf.N == 1) {
    composed_lorenzo_1d<T> d(conf);
    generic_compress(d, conf, work.data(), zstd, out);
    return out;
  }
  const huffman_side_stream side;
  lorenzo_regression_decomposition<T> d(conf, &side);
  generic_compress(d, conf, work.data(), zstd, out);
  return out;
}

// Compression ratio of a predictor over the sampled blocks, measured the way
// SZ3's tuning does: every block through one decomposition, the symbols of
// all blocks through one Huffman table and the lossless stage.
template <class T, class Decomposition>
double sampled_ratio(const stream_config& test, const std::vector<std::vector<T>>& blocks,
                     lossless_context& zstd) {
  Decomposition d(test);
  std::vector<int> symbols;
  for (const auto& block : blocks) {
    std::vector<T> work = block;
    const std::vector<int> s = d.compress(test, work.data());
    symbols.insert(symbols.end(), s.begin(), s.end());
  }
  std::vector<std::byte> packed;
  frame_symbols(d, symbols, zstd, packed);
  return static_cast<double>(test.num * blocks.size() * sizeof(T)) / static_cast<double>(packed.size());
}

// The sampled blocks of SZ3's tuning for a 1-D field (docs/sz3-format.md
// §7): blocks of `edge` + 1 values at multiples of `edge`; when enough of
// them vary by more than the error bound, every k-th such block, else every
// k-th block.
template <class T>
std::vector<std::vector<T>> sample_blocks_1d(std::span<const T> data, std::size_t edge, double eb) {
  const std::size_t n = data.size();
  std::vector<std::vector<T>> blocks;
  if (n < edge) return blocks;
  // Profiling: blocks whose strided min/max differ by more than eb.
  const std::size_t stride = std::max<std::size_t>(edge / 4, 1);
  std::vector<std::size_t> varying;
  for (std::size_t i = 0; i < n - edge; i += edge) {
    T lo = data[i];
    T hi = data[i];
    for (std::size_t k = 0; k <= edge; k += stride) {
      const T v = data[i + k];
      if (v < lo) {
        lo = v;
      } else if (v > hi) {
        hi = v;
      }
    }
    if (static_cast<double>(hi - lo) > eb) varying.push_back(i);
  }
  const std::size_t per_block = edge + 1;
  const bool profiling =
      static_cast<double>(varying.size() * per_block) >= 0.5 * sample_rate * static_cast<double>(n);
  auto take = [&](std::size_t start) {
    blocks.emplace_back(data.begin() + static_cast<std::ptrdiff_t>(start),
                        data.begin() + static_cast<std::ptrdiff_t>(start + per_block));
  };
  if (profiling) {
    const std::size_t total = (n - 1) / edge;
    auto step = static_cast<std::size_t>(static_cast<double>(varying.size()) /
                                         (static_cast<double>(total) * sample_rate));
    step = std::max<std::size_t>(step, 1);
    for (std::size_t i = 0; i < varying.size(); i += step) take(varying[i]);
  } else {
    const auto step = std::max<std::size_t>(static_cast<std::size_t>(1.0 / sample_rate), 1);
    std::size_t index = 0;
    for (std::size_t start = 0; start < n - edge; start += edge, ++index) {
      if (index % step == 0) take(start);
    }
  }
  return blocks;
}

// SZ3's ALGO_INTERP_LORENZO for a 1-D field: sample, compare the
// interpolation settings and Lorenzo on the samples, compress with the
// winner. Other N use interpolation with SZ3's default settings.
template <class T>
std::vector<std::byte> compress_interp_lorenzo(stream_config& conf, std::vector<T>& work,
                                               lossless_context& zstd) {
  const std::size_t N = conf.N;
  if (conf.interpAnchorStride < 0) conf.interpAnchorStride = default_anchor_stride[N - 1];
  conf.cmprAlgo = algorithm::interp;
  if (N != 1) return run_interpolation(conf, work, zstd);

  const std::size_t n = conf.dims[0];
  std::size_t edge = default_sample_block[0];
  while (edge >= n) edge /= 2;
  while (edge >= 16 && static_cast<double>(edge + 1) / static_cast<double>(n) > 1.5 * sample_rate) edge /= 2;
  edge = std::max<std::size_t>(edge, 8);
  const bool to_tune = static_cast<double>(edge + 1) <= 0.05 * static_cast<double>(n) && n >= edge;
  if (!to_tune) return run_interpolation(conf, work, zstd);

  const auto blocks = sample_blocks_1d<T>(work, edge, conf.absErrorBound);
  const std::size_t sampled = blocks.size() * (edge + 1);
  if (sampled == 0 || static_cast<double>(sampled) >= static_cast<double>(n) * 0.2) {
    return run_interpolation(conf, work, zstd);
  }

  // Interpolation: linear vs cubic, then three (alpha, beta) pairs; a
  // later candidate must beat the best by 2 %.
  conf.interpDirection = 0;
  conf.interpAlpha = 1.25;
  conf.interpBeta = 2.0;
  stream_config test = conf;
  const std::array<std::size_t, 1> sample_dims{edge + 1};
  test.set_dims(sample_dims);
  double best_interp = 0;
  for (auto kind : {interpolation_kind::linear, interpolation_kind::cubic}) {
    test.interpAlgo = kind;
    const double ratio = sampled_ratio<T, interpolation_decomposition<T>>(test, blocks, zstd);
    if (ratio > best_interp) {
      best_interp = ratio;
      conf.interpAlgo = kind;
    }
  }
  test.interpAlgo = conf.interpAlgo;
  constexpr std::array<std::pair<double, double>, 3> alpha_beta{{{1.0, 1.0}, {1.5, 2.5}, {2.0, 3.0}}};
  for (const auto& [alpha, beta] : alpha_beta) {
    test.interpAlpha = alpha;
    test.interpBeta = beta;
    const double ratio = sampled_ratio<T, interpolation_decomposition<T>>(test, blocks, zstd);
    if (ratio > best_interp * 1.02) {
      best_interp = ratio;
      conf.interpAlpha = alpha;
      conf.interpBeta = beta;
    }
  }

  // Lorenzo (first and second order), tried only while interpolation
  // compresses less than 50:1.
  stream_config lorenzo = conf;
  double best_lorenzo = 0;
  if (best_interp < 50) {
    lorenzo.cmprAlgo = algorithm::lorenzo_regression;
    lorenzo.set_dims(sample_dims);
    lorenzo.lorenzo = true;
    lorenzo.lorenzo2 = true;
    lorenzo.regression = false;
    lorenzo.regression2 = false;
    lorenzo.openmp = false;
    lorenzo.blockSize = 5;
    best_lorenzo = sampled_ratio<T, composed_lorenzo_1d<T>>(lorenzo, blocks, zstd);
  }
  const bool use_interp = !(best_lorenzo >= best_interp * 1.1 && best_lorenzo < 50 && best_interp < 50);
  if (use_interp) return run_interpolation(conf, work, zstd);

  if (conf.relErrorBound < 1.01e-6 && best_lorenzo > 5 && lorenzo.quantbinCnt != 16384) {
    const auto previous = lorenzo.quantbinCnt;
    lorenzo.quantbinCnt = 16384;
    const double ratio = sampled_ratio<T, composed_lorenzo_1d<T>>(lorenzo, blocks, zstd);
    if (!(ratio > best_lorenzo * 1.02)) lorenzo.quantbinCnt = previous;
  }
  lorenzo.set_dims(conf.dims);
  conf = lorenzo;
  return run_lorenzo(conf, work, zstd);
}

template <class T>
std::vector<std::byte> compress_typed(std::span<const T> data, std::span<const std::size_t> shape,
                                      const sz3_params& p, lossless_context& zstd) {
  if (data.empty()) fail("cannot compress zero values (SZ3 needs at least one)");
  std::uint64_t product = 1;
  for (std::size_t d : shape) product *= d;
  if (product != data.size()) {
    fail("shape holds " + std::to_string(product) + " values, data " + std::to_string(data.size()));
  }
  if (!(std::isfinite(p.bound) && p.bound >= 0)) fail("error bound must be a finite number >= 0");

  // The configuration the reference passes (spec 03 §8.7).
  stream_config conf;
  conf.set_dims(shape);
  if (conf.N > 4)
    fail("unsupported SZ3 feature: " + std::to_string(conf.N) +
         " dimensions (1 to 4 after dropping size-1 ones)");
  conf.cmprAlgo = algorithm::interp_lorenzo;
  conf.lorenzo = true;
  conf.lorenzo2 = true;
  conf.regression = true;
  conf.openmp = false;
  conf.dataType = sizeof(T) == 8 ? 1 : 0;
  conf.quantbinCnt = 65536;
  switch (p.mode) {
    case sz3_error_bound_mode::abs:
      conf.errorBoundMode = error_bound_mode::abs;
      conf.absErrorBound = p.bound;
      break;
    case sz3_error_bound_mode::rel:
      conf.errorBoundMode = error_bound_mode::rel;
      conf.relErrorBound = p.bound;
      break;
    case sz3_error_bound_mode::psnr:
      conf.errorBoundMode = error_bound_mode::psnr;
      conf.psnrErrorBound = p.bound;
      break;
  }
  resolve_error_bound(conf, data);

  const std::span<const std::byte> raw = std::as_bytes(data);
  std::vector<std::byte> algo;
  // An absolute bound of 0 (or one that is not a usable number) selects
  // SZ3's lossless mode.
  if (conf.absErrorBound == 0 || !std::isfinite(conf.absErrorBound)) {
    conf.cmprAlgo = algorithm::lossless;
    zstd.compress(raw, algo);
  } else {
    std::vector<T> work(data.begin(), data.end());
    algo = compress_interp_lorenzo(conf, work, zstd);
    // Below 3:1, SZ3 keeps whichever of the lossy and the plain zstd
    // stream is smaller.
    if (static_cast<double>(raw.size()) / static_cast<double>(algo.size()) < 3) {
      std::vector<std::byte> plain;
      zstd.compress(raw, plain);
      if (plain.size() < algo.size()) {
        conf.cmprAlgo = algorithm::lossless;
        algo = std::move(plain);
      }
    }
  }

  std::vector<std::byte> out;
  out.reserve(envelope_size + algo.size() + 64);
  byte_writer w(out);
  w.put<std::uint32_t>(stream_magic);
  w.put<std::uint32_t>(data_version);
  w.put<std::uint64_t>(algo.size());
  w.put_bytes(algo);
  save_config(conf, w);
  return out;
}

template <class T>
void decompress_typed(std::span<const std::byte> stream, std::span<T> out) {
  const envelope e = parse_envelope(stream);
  const stream_config& conf = e.config;
  if (conf.num != out.size()) {
    fail("stream holds " + std::to_string(conf.num) + " values, " + std::to_string(out.size()) + " expected");
  }
  if (conf.openmp && conf.cmprAlgo != algorithm::lossless) {
    fail("unsupported SZ3 feature: OpenMP-chunked stream (openmp flag set)");
  }
  switch (conf.cmprAlgo) {
    case algorithm::lossless: lossless_decompress_into(e.algo_bytes, std::as_writable_bytes(out)); return;
    case algorithm::interp: {
      interpolation_decomposition<T> d(conf);
      generic_decompress(d, conf, e.algo_bytes, out.data());
      return;
    }
    case algorithm::lorenzo_regression: {
      if (conf.N == 1) {
        composed_lorenzo_1d<T> d(conf);
        generic_decompress(d, conf, e.algo_bytes, out.data());
        return;
      }
      if (const char* why = lorenzo_regression_unsupported_reason(conf)) {
        fail(std::string("unsupported SZ3 feature: ") + why);
      }
      const huffman_side_stream side;
      lorenzo_regression_decomposition<T> d(conf, &side);
      generic_decompress(d, conf, e.algo_bytes, out.data());
      return;
    }
    case algorithm::no_prediction: fail("unsupported SZ3 feature: ALGO_NOPRED");
    case algorithm::bio_md: fail("unsupported SZ3 feature: ALGO_BIOMD");
    case algorithm::bio_md_xtc: fail("unsupported SZ3 feature: ALGO_BIOMDXTC");
    case algorithm::interp_lorenzo: fail("configuration records ALGO_INTERP_LORENZO, which SZ3 never writes");
  }
  fail("unknown algorithm");
}

const char* algorithm_name(algorithm a) {
  switch (a) {
    case algorithm::lorenzo_regression: return "lorenzo_regression";
    case algorithm::interp_lorenzo: return "interp_lorenzo";
    case algorithm::interp: return "interpolation";
    case algorithm::no_prediction: return "no_prediction";
    case algorithm::lossless: return "lossless";
    case algorithm::bio_md: return "bio_md";
    case algorithm::bio_md_xtc: return "bio_md_xtc";
  }
  return "unknown";
}

}  // namespace
}  // namespace sz3

std::vector<std::byte> sz3_compress(std::span<const std::byte> in, const sz3_params& p) {
  if (in.size() % 8 != 0) {
    throw encoding_error("data length " + std::to_string(in.size()) + " is not a multiple of 8");
  }
  const std::size_t n = in.size() / 8;
  const std::array<std::size_t, 1> shape{n};
  // Read in place when the bytes are aligned for doubles (every buffer the
  // library allocates is), as sz3_decompress_into writes in place.
  if (reinterpret_cast<std::uintptr_t>(in.data()) % alignof(double) == 0) {
    return sz3_compression_context().compress(
        std::span<const double>(reinterpret_cast<const double*>(in.data()), n), shape, p);
  }
  std::vector<double> values(n);
  if (n != 0) std::memcpy(values.data(), in.data(), in.size());
  return sz3_compression_context().compress(std::span<const double>(values), shape, p);
}

void sz3_decompress_into(std::span<const std::byte> payload, std::uint64_t n, std::span<std::byte> out) {
  if (out.size() != n * 8) throw encoding_error("sz3: output buffer is not n * 8 bytes");
  if (n == 0) {
    if (!payload.empty()) throw encoding_error("sz3: payload present for zero values");
    return;
  }
  // Decoded straight into the caller's memory when it is aligned for
  // doubles (it is for every buffer the library allocates).
  if (reinterpret_cast<std::uintptr_t>(out.data()) % alignof(double) == 0) {
    sz3::decompress_typed<double>(payload,
                                  {reinterpret_cast<double*>(out.data()), static_cast<std::size_t>(n)});
    return;
  }
  std::vector<double> values(static_cast<std::size_t>(n));
  sz3::decompress_typed<double>(payload, values);
  std::memcpy(out.data(), values.data(), out.size());
}

std::vector<std::byte> sz3_compress(std::span<const double> data, std::span<const std::size_t> shape,
                                    const sz3_params& p) {
  return sz3_compression_context().compress(data, shape, p);
}
std::vector<std::byte> sz3_compress(std::span<const float> data, std::span<const std::size_t> shape,
                                    const sz3_params& p) {
  return sz3_compression_context().compress(data, shape, p);
}

sz3_compression_context::sz3_compression_context() : zstd_(std::make_unique<sz3::lossless_context>()) {}
sz3_compression_context::~sz3_compression_context() = default;
sz3_compression_context::sz3_compression_context(sz3_compression_context&&) noexcept = default;
sz3_compression_context& sz3_compression_context::operator=(sz3_compression_context&&) noexcept = default;

std::vector<std::byte> sz3_compression_context::compress(std::span<const double> data,
                                                         std::span<const std::size_t> shape,
                                                         const sz3_params& p) {
  return sz3::compress_typed<double>(data, shape, p, *zstd_);
}
std::vector<std::byte> sz3_compression_context::compress(std::span<const float> data,
                                                         std::span<const std::size_t> shape,
                                                         const sz3_params& p) {
  return sz3::compress_typed<float>(data, shape, p, *zstd_);
}
void sz3_decompress(std::span<const std::byte> payload, std::span<double> out) {
  sz3::decompress_typed<double>(payload, out);
}
void sz3_decompress(std::span<const std::byte> payload, std::span<float> out) {
  sz3::decompress_typed<float>(payload, out);
}

sz3_stream_info sz3_inspect(std::span<const std::byte> payload) {
  const auto e = sz3::parse_envelope(payload);
  sz3_stream_info info;
  info.algorithm = sz3::algorithm_name(e.config.cmprAlgo);
  info.dims = e.config.dims;
  info.num = e.config.num;
  info.abs_error_bound = e.config.absErrorBound;
  info.float64 = e.config.dataType == 1;
  return info;
}

}  // namespace tensogram::codecs

// `sz3`: error-bounded lossy compression, stream-compatible with SZ3 3.3.2
// (data version 3.3.2; spec 03 §8.7; the stream layout in
// docs/sz3-format.md). A clean-room implementation: interpolation and
// Lorenzo predictors, SZ3's linear quantiser, Huffman coder and zstd stage.
//
// The pipeline stage reads host-order float64 as one 1-D field, as the
// reference does. The typed functions below also serve float32 and 1- to
// 4-D shapes (dimensions slowest first, as in the tensor's shape).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace tensogram::codecs {

namespace sz3 {
class lossless_context;
}

/// The three modes the descriptor's `sz3_error_bound_mode` allows.
enum class sz3_error_bound_mode {
  abs,   // |decoded − original| ≤ bound
  rel,   // ≤ bound · (max − min) of the data
  psnr,  // bound in dB; SZ3 derives an absolute bound from the value range
};

struct sz3_params {
  sz3_error_bound_mode mode = sz3_error_bound_mode::abs;
  double bound = 1e-3;
};

/// What a stream's configuration record says (docs/sz3-format.md §2).
struct sz3_stream_info {
  std::string algorithm;  // "interpolation", "lorenzo_regression", "lossless", ...
  std::vector<std::size_t> dims;
  std::uint64_t num = 0;
  double abs_error_bound = 0;  // after SZ3's conversion of rel/psnr
  bool float64 = true;         // the record's data type byte (SZ3 itself ignores it)
};

/// Pipeline stage: `in` is host-order float64 (length a multiple of 8,
/// at least one value). Throws `encoding_error` otherwise.
[[nodiscard]] std::vector<std::byte> sz3_compress(std::span<const std::byte> in, const sz3_params& p);

/// Pipeline stage: decodes exactly `n` float64 values (host order) into
/// `out` (`n`·8 bytes). A stream for another count, a corrupt stream or one
/// using an SZ3 feature this implementation lacks gives `encoding_error`
/// ("sz3: unsupported SZ3 feature: …" for the latter).
void sz3_decompress_into(std::span<const std::byte> payload, std::uint64_t n, std::span<std::byte> out);

/// Typed, shaped compression (`shape` slowest first; its product must be
/// `data.size()`).
[[nodiscard]] std::vector<std::byte> sz3_compress(std::span<const double> data,
                                                  std::span<const std::size_t> shape, const sz3_params& p);
[[nodiscard]] std::vector<std::byte> sz3_compress(std::span<const float> data,
                                                  std::span<const std::size_t> shape, const sz3_params& p);

/// What compression keeps from one field to the next: the zstd context of
/// SZ3's lossless stage (docs/sz3-format.md §3). Each `sz3_compress` call
/// makes its own, whose first frame allocates and clears a workspace of
/// ~280 KB at level 3 even for a 16 KB field; a caller compressing many
/// fields (chunks, a fuzzer) keeps one of these and pays that once. The
/// bytes are `sz3_compress`'s: zstd makes the same frame from a reused
/// context. Not shared between threads: one per thread.
class sz3_compression_context {
 public:
  sz3_compression_context();
  ~sz3_compression_context();
  sz3_compression_context(sz3_compression_context&&) noexcept;
  sz3_compression_context& operator=(sz3_compression_context&&) noexcept;
  sz3_compression_context(const sz3_compression_context&) = delete;
  sz3_compression_context& operator=(const sz3_compression_context&) = delete;

  /// `sz3_compress(data, shape, p)` with this context.
  [[nodiscard]] std::vector<std::byte> compress(std::span<const double> data,
                                                std::span<const std::size_t> shape, const sz3_params& p);
  [[nodiscard]] std::vector<std::byte> compress(std::span<const float> data,
                                                std::span<const std::size_t> shape, const sz3_params& p);

 private:
  std::unique_ptr<sz3::lossless_context> zstd_;
};

/// Typed decompression; `out.size()` must equal the stream's element count.
void sz3_decompress(std::span<const std::byte> payload, std::span<double> out);
void sz3_decompress(std::span<const std::byte> payload, std::span<float> out);

/// Parses the envelope and configuration record only.
[[nodiscard]] sz3_stream_info sz3_inspect(std::span<const std::byte> payload);

}  // namespace tensogram::codecs

#include "raw_peers.hpp"

#include <libaec.h>
#include <lz4.h>
#include <zfp.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <thread>

namespace tensogram_bench {

namespace {

struct zfp_handles {
  struct field_del {
    void operator()(zfp_field* f) const noexcept { zfp_field_free(f); }
  };
  struct stream_del {
    void operator()(zfp_stream* s) const noexcept { zfp_stream_close(s); }
  };
  struct bits_del {
    void operator()(bitstream* b) const noexcept { stream_close(b); }
  };
  std::unique_ptr<zfp_field, field_del> field;
  std::unique_ptr<zfp_stream, stream_del> stream;
  std::unique_ptr<bitstream, bits_del> bits;

  zfp_handles(double* data, std::size_t n, double rate, std::span<std::byte> buf)
      : field(zfp_field_1d(data, zfp_type_double, n)), stream(zfp_stream_open(nullptr)) {
    if (!field || !stream) throw std::bad_alloc();
    zfp_stream_set_rate(stream.get(), rate, zfp_type_double, 1, 0);
    zfp_stream_set_execution(stream.get(), zfp_exec_serial);
    bits.reset(stream_open(buf.data(), buf.size()));
    zfp_stream_set_bit_stream(stream.get(), bits.get());
    zfp_stream_rewind(stream.get());
  }
};

std::size_t zfp_capacity(std::size_t n, double rate) {
  std::vector<double> dummy(1);
  const zfp_handles h(dummy.data(), n, rate, std::span<std::byte>());
  return zfp_stream_maximum_size(h.stream.get(), h.field.get());
}

}  // namespace

std::vector<std::byte> faulted(std::size_t size) {
  return std::vector<std::byte>(size, std::byte{1});
}

peer measure_libzstd(std::span<const std::byte> raw, int reps, double budget) {
  std::vector<std::byte> cbuf = faulted(ZSTD_compressBound(raw.size()));
  std::vector<std::byte> dbuf = faulted(raw.size());
  peer p{"libzstd level 3", {}, best_time{}, 0};
  p.encode = measure_best(reps, budget, [&] {
    p.bytes = ZSTD_compress(cbuf.data(), cbuf.size(), raw.data(), raw.size(), 3);
    if (ZSTD_isError(p.bytes)) throw std::runtime_error("ZSTD_compress failed");
  });
  p.decode = measure_best(reps, budget, [&] {
    if (ZSTD_decompress(dbuf.data(), dbuf.size(), cbuf.data(), p.bytes) != raw.size()) {
      throw std::runtime_error("ZSTD_decompress failed");
    }
  });
  return p;
}

peer measure_liblz4(std::span<const std::byte> raw, int reps, double budget) {
  const int in_size = static_cast<int>(raw.size());
  std::vector<std::byte> cbuf = faulted(static_cast<std::size_t>(LZ4_compressBound(in_size)));
  std::vector<std::byte> dbuf = faulted(raw.size());
  peer p{"liblz4 default", {}, best_time{}, 0};
  p.encode = measure_best(reps, budget, [&] {
    const int z =
        LZ4_compress_default(reinterpret_cast<const char*>(raw.data()), reinterpret_cast<char*>(cbuf.data()),
                             in_size, static_cast<int>(cbuf.size()));
    if (z <= 0) throw std::runtime_error("LZ4_compress_default failed");
    p.bytes = static_cast<std::size_t>(z);
  });
  p.decode = measure_best(reps, budget, [&] {
    if (LZ4_decompress_safe(reinterpret_cast<const char*>(cbuf.data()), reinterpret_cast<char*>(dbuf.data()),
                            static_cast<int>(p.bytes), in_size) != in_size) {
      throw std::runtime_error("LZ4_decompress_safe failed");
    }
  });
  return p;
}

peer measure_libaec(std::span<const std::byte> packed, int bits, int reps, double budget) {
  unsigned flags = AEC_DATA_PREPROCESS | AEC_DATA_MSB;
  if (bits > 16 && bits <= 24) flags |= AEC_DATA_3BYTE;
  std::vector<std::byte> cbuf = faulted(packed.size() + packed.size() / 8 + (1 << 20));
  std::vector<std::byte> dbuf = faulted(packed.size());
  const auto stream_for = [&](const std::byte* in, std::size_t in_len, std::byte* out, std::size_t out_len) {
    aec_stream s{};
    s.bits_per_sample = static_cast<unsigned>(bits);
    s.block_size = 16;
    s.rsi = 128;
    s.flags = flags;
    s.next_in = reinterpret_cast<const unsigned char*>(in);
    s.avail_in = in_len;
    s.next_out = reinterpret_cast<unsigned char*>(out);
    s.avail_out = out_len;
    return s;
  };
  peer p{"libaec (sp" + std::to_string(bits) + " bytes)", {}, best_time{}, 0};
  p.encode = measure_best(reps, budget, [&] {
    aec_stream s = stream_for(packed.data(), packed.size(), cbuf.data(), cbuf.size());
    if (aec_buffer_encode(&s) != AEC_OK) throw std::runtime_error("aec_buffer_encode failed");
    p.bytes = s.total_out;
  });
  p.decode = measure_best(reps, budget, [&] {
    aec_stream s = stream_for(cbuf.data(), p.bytes, dbuf.data(), dbuf.size());
    if (aec_buffer_decode(&s) != AEC_OK || s.total_out != packed.size()) {
      throw std::runtime_error("aec_buffer_decode failed");
    }
  });
  return p;
}

peer measure_libzfp(std::span<const double> field, double rate, int reps, double budget) {
  const std::size_t n = field.size();
  std::vector<std::byte> cbuf = faulted(zfp_capacity(n, rate));
  std::vector<double> dbuf(n, 1.0);
  std::vector<double> in(field.begin(), field.end());  // zfp_field takes a non-const pointer
  peer p{"libzfp rate " + std::to_string(static_cast<int>(rate)), {}, best_time{}, 0};
  p.encode = measure_best(reps, budget, [&] {
    const zfp_handles h(in.data(), n, rate, cbuf);
    p.bytes = zfp_compress(h.stream.get(), h.field.get());
    if (p.bytes == 0) throw std::runtime_error("zfp_compress failed");
  });
  p.decode = measure_best(reps, budget, [&] {
    const zfp_handles h(dbuf.data(), n, rate, cbuf);
    if (zfp_decompress(h.stream.get(), h.field.get()) == 0) throw std::runtime_error("zfp_decompress failed");
  });
  return p;
}

std::vector<scaling_peer> measure_thread_peers(std::span<const std::byte> raw, int reps, double budget) {
  std::vector<scaling_peer> out;
  std::vector<std::byte> dst = faulted(raw.size());
  const auto split_copy = [&](unsigned threads, std::byte* to) {
    std::vector<std::thread> pool;
    const std::size_t part = raw.size() / threads;
    for (unsigned t = 0; t < threads; ++t) {
      const std::size_t from = t * part;
      const std::size_t len = t + 1 == threads ? raw.size() - from : part;
      pool.emplace_back([&, from, len] { std::memcpy(to + from, raw.data() + from, len); });
    }
    for (std::thread& th : pool) th.join();
  };
  scaling_peer pre{"memcpy (pre-faulted dst)", {}, {}};
  scaling_peer fr{"memcpy (fresh THP dst)", {}, {}};
  std::optional<mapped_buffer> fresh;
  for (unsigned t : {1U, 2U}) {
    (t == 1 ? pre.t1 : pre.t2) = measure_best(std::max(reps, 5), budget, [&] { split_copy(t, dst.data()); });
    (t == 1 ? fr.t1 : fr.t2) = measure_best(
        std::max(reps, 5), budget, [&] { fresh.reset(); },
        [&] {
          fresh.emplace(raw.size());
          split_copy(t, fresh->data());
        });
  }
  out.push_back(pre);
  out.push_back(fr);
  // libzstd's multithreaded compressor (what `threads` >= 1 selects, spec 03
  // §13) with 1 and 2 workers.
  std::vector<std::byte> cbuf = faulted(ZSTD_compressBound(raw.size()));
  scaling_peer z{"libzstd level 3, nbWorkers 1 / 2", {}, {}};
  const std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> cctx(ZSTD_createCCtx(), &ZSTD_freeCCtx);
  for (int workers : {1, 2}) {
    ZSTD_CCtx_reset(cctx.get(), ZSTD_reset_session_and_parameters);
    ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_compressionLevel, 3);
    ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_nbWorkers, workers);
    (workers == 1 ? z.t1 : z.t2) = measure_best(reps, budget, [&] {
      const std::size_t r = ZSTD_compress2(cctx.get(), cbuf.data(), cbuf.size(), raw.data(), raw.size());
      if (ZSTD_isError(r)) throw std::runtime_error("ZSTD_compress2 failed");
    });
  }
  out.push_back(z);
  return out;
}

}  // namespace tensogram_bench

// Payloads produced by our codecs, decoded by independent implementations:
// Debian's python3 with the `zstandard` and `lz4.block` modules, and
// libaec's `aec` command-line tool for szip.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "codec_support.hpp"

namespace {

using namespace codectest;
namespace fs = std::filesystem;

constexpr const char* python = "/usr/bin/python3";

class scratch {
 public:
  scratch() {
    std::random_device rd;
    dir_ = fs::temp_directory_path() / ("tgm-codec-" + std::to_string(rd()) + std::to_string(rd()));
    fs::create_directories(dir_);
  }
  ~scratch() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;
  [[nodiscard]] fs::path operator/(const std::string& name) const { return dir_ / name; }

 private:
  fs::path dir_;
};

void write_file(const fs::path& p, std::span<const std::byte> b) {
  std::ofstream f(p, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

bytes read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  const std::vector<char> c((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  bytes out(c.size());
  if (!c.empty()) std::memcpy(out.data(), c.data(), c.size());
  return out;
}

int run(const std::string& cmd) {
  return std::system((cmd + " >/dev/null 2>&1").c_str());
}

bool python_has(const std::string& module) {
  if (!fs::exists(python)) return false;
  return run(std::string(python) + " -c 'import " + module + "'") == 0;
}

bool have_aec() {
  return run("command -v aec") == 0;
}

bytes sample_data(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  bytes out;
  // A mixture of runs and noise so that the codecs do some work.
  while (out.size() < n) {
    const unsigned kind = rng() % 3;
    const std::size_t len = 1 + rng() % 200;
    for (std::size_t i = 0; i < len && out.size() < n; ++i) {
      out.push_back(static_cast<std::byte>(kind == 0 ? 0 : kind == 1 ? (i & 0xFF) : (rng() & 0xFF)));
    }
  }
  return out;
}

bytes pipeline_payload(const std::string& compression, tg::dtype t, std::uint64_t n, const bytes& raw,
                       const cbor::value& params = cbor::value::make_map()) {
  tg::data_object_descriptor d = tg::data_object_descriptor::contiguous(t, {n}, tg::byte_order::little);
  d.compression = compression;
  d.params = params;
  const auto p = tg::build_pipeline(d);
  return p.encode(raw, n, tg::byte_order::little).payload;
}

TEST(ExternalDecoders, PythonZstandardDecodesOurFrames) {
  if (!python_has("zstandard")) GTEST_SKIP() << "/usr/bin/python3 with module zstandard not available";
  const scratch dir;
  for (int level : {1, 3, 9, 19, -5}) {
    for (std::size_t size : {std::size_t{0}, std::size_t{1}, std::size_t{1000}, std::size_t{300000}}) {
      SCOPED_TRACE(testing::Message() << "level " << level << " size " << size);
      const bytes raw = sample_data(size, static_cast<unsigned>(size) + static_cast<unsigned>(level + 100));
      cbor::value params = cbor::value::make_map();
      params.set("zstd_level", cbor::value(level));
      const bytes z = pipeline_payload("zstd", tg::dtype::uint8, size, raw, params);
      write_file(dir / "in.zst", z);
      const std::string cmd =
          std::string(python) +
          " -c 'import sys, zstandard; d = zstandard.ZstdDecompressor().decompressobj(); "
          "open(sys.argv[2], \"wb\").write(d.decompress(open(sys.argv[1], \"rb\").read()))' " +
          (dir / "in.zst").string() + " " + (dir / "out.bin").string();
      ASSERT_EQ(run(cmd), 0) << cmd;
      EXPECT_EQ(read_file(dir / "out.bin"), raw);
    }
  }
}

TEST(ExternalDecoders, PythonLz4BlockDecodesOurPayloads) {
  if (!python_has("lz4.block")) GTEST_SKIP() << "/usr/bin/python3 with module lz4.block not available";
  const scratch dir;
  for (std::size_t size : {std::size_t{0}, std::size_t{5}, std::size_t{64}, std::size_t{4096},
                           std::size_t{70000}, std::size_t{300001}}) {
    SCOPED_TRACE(testing::Message() << "size " << size);
    const bytes raw = sample_data(size, static_cast<unsigned>(size) * 3 + 1);
    const bytes z = pipeline_payload("lz4", tg::dtype::uint8, size, raw);
    write_file(dir / "in.lz4", z);
    const std::string cmd = std::string(python) +
                            " -c 'import sys, lz4.block; open(sys.argv[2], \"wb\").write("
                            "lz4.block.decompress(open(sys.argv[1], \"rb\").read()))' " +
                            (dir / "in.lz4").string() + " " + (dir / "out.bin").string();
    ASSERT_EQ(run(cmd), 0) << cmd;
    EXPECT_EQ(read_file(dir / "out.bin"), raw);
  }
}

TEST(ExternalDecoders, AecCliDecodesOurSzipPayloads) {
  if (!have_aec()) GTEST_SKIP() << "libaec's aec tool not available";
  const scratch dir;
  struct aec_case {
    std::uint32_t bits;
    std::uint32_t block;
    std::uint32_t rsi;
    std::uint32_t flags;
    std::size_t bytes;
  };
  using namespace tg::codecs::szip_flags;
  const std::vector<aec_case> cases = {
      {8, 16, 128, data_preprocess, 10000},
      {8, 8, 3, data_preprocess, 777},
      {16, 32, 64, data_preprocess, 20000},
      {16, 16, 128, data_preprocess | data_msb, 20000},
      {24, 16, 32, data_preprocess | data_msb | data_3byte, 30000},
      {32, 64, 16, data_preprocess, 40000},
      {12, 16, 128, 0, 8000},
  };
  for (const aec_case& c : cases) {
    SCOPED_TRACE(testing::Message() << "bits " << c.bits << " block " << c.block << " rsi " << c.rsi
                                    << " flags " << c.flags);
    tg::codecs::szip_params p;
    p.bits_per_sample = c.bits;
    p.block_size = c.block;
    p.rsi = c.rsi;
    p.flags = c.flags;
    bytes raw = sample_data(c.bytes, c.bits * 31 + c.rsi);
    if (c.bits == 12) {
      // 12-bit samples in 2-byte little-endian containers.
      for (std::size_t i = 1; i < raw.size(); i += 2) raw[i] &= std::byte{0x0F};
    }
    const auto enc = tg::codecs::szip_compress(raw, p);
    write_file(dir / "in.aec", enc.payload);
    std::string cmd = "aec -d -n " + std::to_string(c.bits) + " -j " + std::to_string(c.block) + " -r " +
                      std::to_string(c.rsi);
    if ((c.flags & data_msb) != 0) cmd += " -m";
    if ((c.flags & data_3byte) != 0) cmd += " -3";
    if ((c.flags & data_preprocess) == 0) cmd += " -N";
    cmd += " " + (dir / "in.aec").string() + " " + (dir / "out.bin").string();
    ASSERT_EQ(run(cmd), 0) << cmd;
    // The aec tool pads its output (to a whole block, or without
    // preprocessing to a whole RSI).
    const bytes out = read_file(dir / "out.bin");
    const std::size_t sample_bytes = tg::codecs::szip_sample_bytes(p);
    ASSERT_GE(out.size(), raw.size());
    EXPECT_LE(out.size(), raw.size() + std::size_t{c.block} * c.rsi * sample_bytes);
    EXPECT_EQ(tgtest::slice(out, 0, raw.size()), raw);
    // And the other way round: aec's stream decodes with ours.
    write_file(dir / "raw.bin", raw);
    std::string enc_cmd = "aec -n " + std::to_string(c.bits) + " -j " + std::to_string(c.block) + " -r " +
                          std::to_string(c.rsi);
    if ((c.flags & data_msb) != 0) enc_cmd += " -m";
    if ((c.flags & data_3byte) != 0) enc_cmd += " -3";
    if ((c.flags & data_preprocess) == 0) enc_cmd += " -N";
    enc_cmd += " " + (dir / "raw.bin").string() + " " + (dir / "theirs.aec").string();
    ASSERT_EQ(run(enc_cmd), 0) << enc_cmd;
    const bytes theirs = read_file(dir / "theirs.aec");
    EXPECT_EQ(tg::codecs::szip_decompress(theirs, p, raw.size()), raw);
    // libaec 1.0.6 and our encoder produce the same stream (spec 03 §7.3).
    EXPECT_EQ(theirs, enc.payload);
  }
}

}  // namespace

// The C++ side of the Fortran round trips (interop.F90 states the content):
//   interop_peer read <file>   checks what Fortran wrote, through the C++ API
//   interop_peer write <file>  writes the peer file Fortran checks
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include <tensogram.hpp>

namespace {

namespace tg = tensogram;

void expect(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("check failed: " + what);
}

void read_fortran_file(const std::string& path) {
  tg::file f = tg::file::open(path);
  expect(f.message_count() == 2, "two messages");
  tg::decode_options verify;
  verify.verify_hash = true;
  // a(3,4) in Fortran is row-major [4][3]: arr[j][i] == a(i+1, j+1).
  const tg::message m1 = f.decode_message(0, verify);
  const tg::decoded_object& a = m1.object(0);
  expect(a.dtype_string() == "float64", "float64");
  expect(a.shape() == std::vector<std::uint64_t>{4, 3}, "shape [4, 3]");
  expect(a.strides() == std::vector<std::uint64_t>{3, 1}, "strides [3, 1]");
  const double* av = a.data_as<double>();
  for (int j = 0; j < 4; ++j) {
    for (int i = 0; i < 3; ++i) expect(av[j * 3 + i] == 10.0 * (i + 1) + (j + 1), "a value");
  }
  const tg::metadata md = m1.get_metadata();
  expect(md.get_string("name") == "grid", "name");
  expect(md.get_int("level", -1) == 850, "level");
  // b(2,3,4) is row-major [4][3][2]: arr[k][j][i] == b(i+1, j+1, k+1).
  const tg::message m2 = f.decode_message(1, verify);
  const tg::decoded_object& b = m2.object(0);
  expect(b.dtype_string() == "int32" && b.filter() == "shuffle", "int32, shuffled");
  expect(b.shape() == std::vector<std::uint64_t>{4, 3, 2}, "shape [4, 3, 2]");
  const std::int32_t* bv = b.data_as<std::int32_t>();
  for (int k = 0; k < 4; ++k) {
    for (int j = 0; j < 3; ++j) {
      for (int i = 0; i < 2; ++i) {
        expect(bv[(k * 3 + j) * 2 + i] == 100 * (i + 1) + 10 * (j + 1) + (k + 1), "b value");
      }
    }
  }
  std::printf("C++ read %s\n", path.c_str());
}

void write_peer_file(const std::string& path) {
  std::vector<float> x(2 * 3 * 4);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 4; ++k) x[(i * 3 + j) * 4 + k] = static_cast<float>(100 * i + 10 * j + k);
    }
  }
  std::vector<std::int64_t> y(5);
  for (int n = 0; n < 5; ++n) y[n] = -1000000000000LL * n;
  tg::file f = tg::file::create(path);
  tg::global_metadata meta;
  meta.extra.set("source", "c++");
  meta.extra.set("blob", tg::cbor::value(tg::cbor::byte_string{std::byte{1}, std::byte{2}, std::byte{0xff}}));
  const tg::object_input xs[] = {
      {tg::data_object_descriptor::contiguous(tg::dtype::float32, {2, 3, 4}), std::as_bytes(std::span(x))}};
  f.append(meta, xs);
  const tg::object_input ys[] = {
      {tg::data_object_descriptor::contiguous(tg::dtype::int64, {5}), std::as_bytes(std::span(y))}};
  f.append(tg::global_metadata{}, ys);
  std::printf("C++ wrote %s\n", path.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: interop_peer read|write <file>\n");
    return 2;
  }
  try {
    const std::string mode = argv[1];
    if (mode == "read") {
      read_fortran_file(argv[2]);
    } else if (mode == "write") {
      write_peer_file(argv[2]);
    } else {
      std::fprintf(stderr, "unknown mode %s\n", argv[1]);
      return 2;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "interop_peer: %s\n", e.what());
    return 1;
  }
  return 0;
}

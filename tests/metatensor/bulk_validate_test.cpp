// record_writer::set_all_bytes (whole records at once, as the Python writer
// passes numpy structured arrays) and validate_image (the verdict of
// `metatensor validate`, shared with Python).
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <metatensor/file.hpp>
#include <metatensor/safetensors.hpp>
#include <metatensor/validate.hpp>
#include <metatensor/writer.hpp>
#include <string>
#include <vector>

namespace {

using metatensor::errc;

// A record {i: I32, flag: BOOL, x: F64, name: String}: i at 0, flag at 4,
// padding 5..8, x at 8, name (BlobRef) at 16; size 32.
const char* const record_schema = R"({
  "type": "object", "required": ["r"],
  "properties": {"r": {"type": "array", "items": {
    "type": "object", "TypeDef:Struct": true, "required": ["i", "flag", "x", "name"],
    "properties": {"i": {"type": "integer", "TypeDef:Int32": true},
                   "flag": {"type": "boolean", "TypeDef:Bool": true},
                   "x": {"type": "number", "TypeDef:Float64": true},
                   "name": {"type": "string", "TypeDef:String": true}}}}}
})";

std::vector<std::byte> record_bytes(std::int32_t i, bool flag, double x) {
  std::vector<std::byte> r(32);
  std::memcpy(r.data(), &i, 4);
  r[4] = std::byte{flag ? std::uint8_t{1} : std::uint8_t{0}};
  std::memcpy(r.data() + 8, &x, 8);
  return r;
}

metatensor::errc code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const metatensor::error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "no metatensor::error";
  return errc::mt_value;
}

TEST(SetAllBytes, SameFileAsFieldByField) {
  const auto schema = metatensor::compile_schema_text(record_schema);
  metatensor::file_builder by_field(schema);
  auto& w1 = by_field.set_records("r", {2});
  w1.set<std::int32_t>(0, "i", -7);
  w1.set<bool>(0, "flag", true);
  w1.set<double>(0, "x", 2.5);
  w1.set_string(0, "name", "alpha");
  w1.set<std::int32_t>(1, "i", 9);
  w1.set<double>(1, "x", -1.0);
  w1.set_string(1, "name", "be");

  metatensor::file_builder bulk(schema);
  auto& w2 = bulk.set_records("r", {2});
  std::vector<std::byte> all = record_bytes(-7, true, 2.5);
  const auto second = record_bytes(9, false, -1.0);
  all.insert(all.end(), second.begin(), second.end());
  all[16] = std::byte{0xff};  // a stale BlobRef: ignored, the writer computes them
  w2.set_all_bytes(all);
  w2.set_string(0, "name", "alpha");
  w2.set_string(1, "name", "be");
  EXPECT_EQ(by_field.serialize(), bulk.serialize());
}

TEST(SetAllBytes, RefusesBadBytesAndKeepsTheRecords) {
  metatensor::file_builder b(metatensor::compile_schema_text(record_schema));
  auto& w = b.set_records("r", {1});
  w.set<std::int32_t>(0, "i", 5);
  EXPECT_THROW(w.set_all_bytes(std::vector<std::byte>(31)), tensogram::invalid_arg_error);
  auto padded = record_bytes(1, false, 0.0);
  padded[6] = std::byte{1};
  EXPECT_EQ(code_of([&] { w.set_all_bytes(padded); }), errc::mt_nonzero_padding);
  auto bad_bool = record_bytes(1, false, 0.0);
  bad_bool[4] = std::byte{2};
  EXPECT_EQ(code_of([&] { w.set_all_bytes(bad_bool); }), errc::mt_bool);
  w.set_string(0, "name", "");
  const auto f = metatensor::file::from_buffer(tensogram::buffer::owned(b.serialize()));
  EXPECT_EQ(f.records("r")[0].get<std::int32_t>("i"), 5);  // the refused calls changed nothing
}

TEST(ValidateImage, Verdicts) {
  metatensor::file_builder b(metatensor::compile_schema_text(record_schema));
  auto& w = b.set_records("r", {1});
  w.set_string(0, "name", "ok");
  auto image = b.serialize();
  EXPECT_EQ(metatensor::validate_image(tensogram::buffer::owned(image), true),
            metatensor::file_format::metatensor);

  // A plain safetensors file is valid, as such; a BOOL byte of 2 fails only deep validation.
  std::vector<std::byte> flag{std::byte{2}};
  const std::vector<metatensor::safetensors::tensor_input> in = {
      {"b", metatensor::dtype::boolean, {1}, flag}};
  const auto plain = metatensor::safetensors::serialize(in, {});
  EXPECT_EQ(metatensor::validate_image(tensogram::buffer::owned(plain), false),
            metatensor::file_format::safetensors);
  EXPECT_EQ(code_of([&] { (void)metatensor::validate_image(tensogram::buffer::owned(plain), true); }),
            errc::mt_bool);

  // A BlobRef past the heap: opening defers it, validation does not.
  const auto f = metatensor::safetensors::file::from_buffer(tensogram::buffer::owned(image));
  const auto* r = f.find("r");
  ASSERT_NE(r, nullptr);
  const auto at = static_cast<std::size_t>(r->bytes().data() - f.image().data()) + 16;
  image[at] = std::byte{200};
  EXPECT_EQ(code_of([&] { (void)metatensor::validate_image(tensogram::buffer::owned(image), false); }),
            errc::mt_blob_bounds);
  EXPECT_EQ(code_of([&] { (void)metatensor::validate_image(tensogram::buffer::owned({}), false); }),
            errc::st_header_too_small);
}

}  // namespace

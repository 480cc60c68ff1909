#include "tensogram/format/aggregate_frames.hpp"

#include "tensogram/cbor/codec.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/core/hex.hpp"

namespace tensogram::format {

namespace {

std::vector<std::uint64_t> uint_array(const cbor::value& v, const char* key) {
  const cbor::array* a = v.as_array();
  if (a == nullptr) throw metadata_error(std::string(key) + " must be an array");
  std::vector<std::uint64_t> out;
  out.reserve(a->size());
  for (const cbor::value& item : *a) {
    const auto u = item.as_uint64();
    if (!u) throw metadata_error(std::string(key) + " must be an integer in [0, 2^64)");
    out.push_back(*u);
  }
  return out;
}

}  // namespace

index_body parse_index_body(std::span<const std::byte> body) {
  cbor::value v;
  try {
    v = cbor::decode(body);
  } catch (const metadata_error& e) {
    throw metadata_error(std::string("failed to parse index CBOR: ") + std::string(e.detail()));
  }
  const cbor::map* m = v.as_map();
  if (m == nullptr) throw metadata_error("index CBOR is not a map");
  index_body out;
  for (const cbor::map_entry& e : *m) {
    const std::string* k = e.key.as_text();
    if (k == nullptr) throw metadata_error("index CBOR has a non-text key");
    if (*k == "offsets") out.offsets = uint_array(e.val, "offsets");
    if (*k == "lengths") out.lengths = uint_array(e.val, "lengths");
  }
  if (out.offsets.size() != out.lengths.size()) {
    throw metadata_error("index offsets.len() (" + std::to_string(out.offsets.size()) +
                         ") != lengths.len() (" + std::to_string(out.lengths.size()) + ")");
  }
  return out;
}

std::vector<std::byte> encode_index_body(const index_body& index) {
  cbor::array l(index.lengths.begin(), index.lengths.end());
  cbor::array o(index.offsets.begin(), index.offsets.end());
  return cbor::encode(cbor::value::make_map(
      {{"lengths", cbor::value(std::move(l))}, {"offsets", cbor::value(std::move(o))}}));
}

hash_body parse_hash_body(std::span<const std::byte> body) {
  cbor::value v;
  try {
    v = cbor::decode(body);
  } catch (const metadata_error& e) {
    throw metadata_error(std::string("failed to parse hash CBOR: ") + std::string(e.detail()));
  }
  const cbor::map* m = v.as_map();
  if (m == nullptr) throw metadata_error("hash frame CBOR is not a map");
  hash_body out;
  for (const cbor::map_entry& e : *m) {
    const std::string* k = e.key.as_text();
    if (k == nullptr) throw metadata_error("hash frame CBOR has a non-text key");
    if (*k == "algorithm") {
      const std::string* a = e.val.as_text();
      if (a == nullptr) throw metadata_error("algorithm must be text");
      out.algorithm = *a;
    } else if (*k == "hashes") {
      const cbor::array* arr = e.val.as_array();
      if (arr == nullptr) throw metadata_error("hashes must be an array");
      out.hashes.clear();
      out.hashes.reserve(arr->size());
      for (const cbor::value& item : *arr) {
        const std::string* h = item.as_text();
        if (h == nullptr) throw metadata_error("hash entry must be text");
        out.hashes.push_back(*h);
      }
    }
  }
  return out;
}

std::vector<std::byte> encode_hash_body(std::span<const std::uint64_t> digests) {
  cbor::array h;
  h.reserve(digests.size());
  for (std::uint64_t d : digests) h.emplace_back(hex16(d));
  return cbor::encode(cbor::value::make_map({{"hashes", cbor::value(std::move(h))}, {"algorithm", "xxh3"}}));
}

}  // namespace tensogram::format

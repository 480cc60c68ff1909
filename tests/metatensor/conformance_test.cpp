// Conformance corpus (spec 06 §13), structural checks: small files, each
// with its expected verdict — valid, or the first error name of §8.2. Files
// are built byte by byte from the §6.7 worked example and Appendix A, then
// altered. Deep validation's cases are in conformance_deep_test.cpp, hostile
// sweeps in conformance_hostile_test.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <metatensor.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "conformance_support.hpp"

namespace {

using namespace metatensor_test;               // NOLINT: test helpers
using namespace metatensor_test::conformance;  // NOLINT: test helpers

TEST(ConformanceValid, ExampleAndAppendix) {
  EXPECT_EQ(verdict(example(), true), "valid");
  EXPECT_EQ(verdict(appendix(), true), "valid");
  auto f = example();
  f.metadata["user.note"] = "free-form";  // keys not starting with metatensor. are ignored
  EXPECT_EQ(verdict(f, true), "valid");
}

// --- Header -------------------------------------------------------------------

TEST(ConformanceHeader, NotMetatensor) {
  auto f = appendix();
  f.with_metadata = false;
  EXPECT_EQ(verdict(f), "MT_NOT_METATENSOR");
  f = appendix();
  f.metadata.erase("metatensor.version");
  EXPECT_EQ(verdict(f), "MT_NOT_METATENSOR");
  f = appendix();
  f.metadata = {{"other", "x"}};
  EXPECT_EQ(verdict(f), "MT_NOT_METATENSOR");
}

TEST(ConformanceHeader, EachKeyMissingOrInvalid) {
  const auto with = [](const std::string& key, std::optional<std::string> value) {
    auto f = appendix();
    if (value) {
      f.metadata[key] = *value;
    } else {
      f.metadata.erase(key);
    }
    return verdict(f);
  };
  EXPECT_EQ(with("metatensor.version", "2"), "MT_VERSION");
  EXPECT_EQ(with("metatensor.version", "1.0"), "MT_VERSION");
  EXPECT_EQ(with("metatensor.version", ""), "MT_VERSION");
  EXPECT_EQ(with("metatensor.endianness", std::nullopt), "MT_ENDIANNESS");
  EXPECT_EQ(with("metatensor.endianness", "big"), "MT_ENDIANNESS");
  EXPECT_EQ(with("metatensor.endianness", "Little"), "MT_ENDIANNESS");
  EXPECT_EQ(with("metatensor.alignment", std::nullopt), "MT_ALIGNMENT_VALUE");
  for (const char* bad :
       {"8", "24", "016", "+16", "-16", "16 ", "0x10", "131072", "", "1e2", "abc", "00016"}) {
    EXPECT_EQ(with("metatensor.alignment", bad), "MT_ALIGNMENT_VALUE") << bad;
  }
  EXPECT_EQ(with("metatensor.schema", std::nullopt), "MT_SCHEMA_JSON");
  EXPECT_EQ(with("metatensor.schema", "{"), "MT_SCHEMA_JSON");
  EXPECT_EQ(with("metatensor.schema", R"({"type":"object","type":"object","properties":{}})"),
            "MT_SCHEMA_JSON");
  EXPECT_EQ(with("metatensor.schema", R"({"type":"object","properties":{},"x":9007199254740992})"),
            "MT_SCHEMA_JSON");
  EXPECT_EQ(with("metatensor.layout", std::nullopt), "MT_LAYOUT_JSON");
  EXPECT_EQ(with("metatensor.layout", "{\"tensors\":"), "MT_LAYOUT_JSON");
  EXPECT_EQ(with("metatensor.layout", R"({"tensors":{},"tensors":{}})"), "MT_LAYOUT_JSON");
  EXPECT_EQ(with("metatensor.layout", R"({"tensors":{"w":{"rank":18014398509481984}}})"), "MT_LAYOUT_JSON");
  EXPECT_EQ(with("metatensor.compression", "none"), "MT_UNKNOWN_KEY");
  EXPECT_EQ(with("metatensor.", ""), "MT_UNKNOWN_KEY");
  EXPECT_EQ(with("Metatensor.compression", "none"), "valid");
  for (const char* good : {"16", "32", "64", "4096", "65536"}) {
    auto f = appendix();
    f.metadata["metatensor.alignment"] = good;
    f.metadata["metatensor.layout"] = R"({"tensors":{"w":{"kind":"flat","data":"w","rank":1,"align":)" +
                                      std::string(good) + R"(,"dtype":"F32"}}})";
    f.pad_to = std::stoul(good);
    EXPECT_EQ(verdict(f), "valid") << good;
  }
}

// Step 4 has two fast paths (the writer's canonical text, simdjson's
// parse) before the JSON comparison; each spelling of a table must reach
// the same verdict.
TEST(ConformanceHeader, LayoutTableVerdictDoesNotDependOnItsSpelling) {
  const auto with = [](const std::string& layout) {
    auto f = appendix();
    f.metadata["metatensor.layout"] = layout;
    return verdict(f);
  };
  const std::string canonical =
      R"({"tensors":{"w":{"align":16,"data":"w","dtype":"F32","kind":"flat","rank":1}}})";
  EXPECT_EQ(with(canonical), "valid");
  EXPECT_EQ(with(appendix_layout), "valid");
  EXPECT_EQ(with(nlohmann::json::parse(canonical).dump(2)), "valid");
  EXPECT_EQ(with(R"({"tensors":{"w":{"align":32,"data":"w","dtype":"F32","kind":"flat","rank":1}}})"),
            "MT_LAYOUT_MISMATCH");
  EXPECT_EQ(with(R"({"tensors":{"w":{"align":16,"data":"w","dtype":"F32","kind":"flat","rank":1}}} x)"),
            "MT_LAYOUT_JSON");
  EXPECT_EQ(with(R"({"tensors":{"w":{"align":16,"data":"w","dtype":"F32","kind":"flat","rank":1}},)"
                 R"("tensors":{}})"),
            "MT_LAYOUT_JSON");
  EXPECT_EQ(with(R"({"tensors":{}})"), "MT_LAYOUT_MISMATCH");
  // A table that is no JSON still fails at step 2, before later steps'
  // failures (here a tensor set without the required "w", step 5).
  auto f = appendix();
  f.metadata["metatensor.layout"] = "{\"tensors\":";
  f.erase("w");
  EXPECT_EQ(verdict(f), "MT_LAYOUT_JSON");
}

TEST(ConformanceHeader, KeysCheckedInTableOrder) {
  auto f = appendix();
  f.metadata["metatensor.version"] = "2";
  f.metadata["metatensor.endianness"] = "big";
  f.metadata["metatensor.zzz"] = "";
  EXPECT_EQ(verdict(f), "MT_VERSION");
  f.metadata["metatensor.version"] = "1";
  EXPECT_EQ(verdict(f), "MT_ENDIANNESS");
  f.metadata["metatensor.endianness"] = "little";
  f.metadata["metatensor.layout"] = "not json";
  EXPECT_EQ(verdict(f), "MT_LAYOUT_JSON");  // before the unknown key
  f.metadata["metatensor.layout"] = appendix_layout;
  EXPECT_EQ(verdict(f), "MT_UNKNOWN_KEY");
  // Base-layer failures come first (§8.2).
  f = appendix();
  f.metadata["metatensor.version"] = "2";
  f.tensors[0].shape = {3};
  EXPECT_EQ(verdict(f), "ST_SIZE_MISMATCH");
  // Schema errors come before layout table equality.
  f = appendix();
  f.metadata["metatensor.schema"] =
      R"({"type":"object","properties":{"w":{"type":"array","items":{"TypeDef:Float33":true}}}})";
  f.metadata["metatensor.layout"] = "{}";
  EXPECT_EQ(verdict(f), "MT_UNKNOWN_TYPEDEF");
}

TEST(ConformanceHeader, DataSectionNotMultipleOfA) {
  auto f = appendix();
  f.metadata["metatensor.alignment"] = "32";
  f.metadata["metatensor.layout"] =
      R"({"tensors":{"w":{"kind":"flat","data":"w","rank":1,"align":32,"dtype":"F32"}}})";
  f.pad_to = 32;
  ASSERT_EQ(verdict(f), "valid");
  // Pad to 16 only and pick a user key length giving D = 16 (mod 32).
  bool found = false;
  for (std::size_t extra = 0; extra < 32 && !found; ++extra) {
    auto g = f;
    g.pad_to = 16;
    g.metadata["user"] = std::string(extra, 'x');
    const auto bytes = g.bytes();
    std::uint64_t n = 0;
    std::memcpy(&n, bytes.data(), 8);
    if ((8 + n) % 32 == 16) {
      found = true;
      EXPECT_EQ(verdict(g), "MT_MISALIGNED");
    }
  }
  EXPECT_TRUE(found);
}

// --- §7 layout table --------------------------------------------------------

TEST(ConformanceLayout, TableMismatch) {
  auto f = example();
  auto layout = example_layout();
  layout["tensors"]["particles"]["record"]["fields"][2]["offset"] = 17;  // one offset off
  f.metadata["metatensor.layout"] = layout.dump();
  EXPECT_EQ(verdict(f), "MT_LAYOUT_MISMATCH");

  layout = example_layout();
  layout["tensors"]["positions"]["align"] = 32;
  f.metadata["metatensor.layout"] = layout.dump();
  EXPECT_EQ(verdict(f), "MT_LAYOUT_MISMATCH");

  layout = example_layout();
  layout["tensors"].erase("labels");  // table must list exactly the tensors present
  f.metadata["metatensor.layout"] = layout.dump();
  EXPECT_EQ(verdict(f), "MT_LAYOUT_MISMATCH");

  layout = example_layout();
  layout["extra"] = true;
  f.metadata["metatensor.layout"] = layout.dump();
  EXPECT_EQ(verdict(f), "MT_LAYOUT_MISMATCH");

  // Member order and whitespace do not matter (§7: equal as JSON values).
  f.metadata["metatensor.layout"] = example_layout().dump(2);
  EXPECT_EQ(verdict(f), "valid");
}

// Opening compares the table on simdjson's parse and leaves whatever that
// does not find equal to the nlohmann comparison (issue 27): both must give
// the verdict of §7 (equal as JSON values) and the same message.
TEST(ConformanceLayout, FastAndReferenceComparisonsAgree) {
  const auto flat = [](const std::string& entry) { return R"({"tensors":{"w":)" + entry + "}}"; };
  // Equal as JSON values, however written.
  for (const std::string& layout : {
           appendix_layout,
           flat(R"({"dtype":"F32","align":16,"rank":1,"data":"w","kind":"flat"})"),      // members unsorted
           flat(R"({"kind":"flat","data":"w","rank":1.0,"align":16e0,"dtype":"F32"})"),  // numbers as floats
           flat(R"({"kind":"fl\u0061t","data":"\u0077","rank":1,"align":16,"dtype":"F32"})"),  // escapes
           " \n" + appendix_layout + "\t",
       }) {
    auto f = appendix();
    f.metadata["metatensor.layout"] = layout;
    EXPECT_EQ(verdict(f), "valid") << layout;
    const auto file = mt::file::from_buffer(tensogram::buffer::owned(f.bytes()));
    EXPECT_EQ(file.layout_table(), json::parse(layout)) << layout;
  }
  // Different, each named at its first difference.
  const std::vector<std::pair<std::string, std::string>> different = {
      {flat(R"({"kind":"flat","data":"w","rank":1,"align":16,"dtype":"F64"})"), "/tensors/w/dtype"},
      {flat(R"({"kind":"flat","data":"w","rank":"1","align":16,"dtype":"F32"})"), "/tensors/w/rank"},
      {flat(R"({"kind":"flat","data":"w","rank":1,"align":16.5,"dtype":"F32"})"), "/tensors/w/align"},
      {flat(R"({"kind":"flat","data":"w","rank":1,"align":16})"), "/tensors/w/dtype"},
      {flat(R"({"kind":"flat","data":"w","rank":1,"align":16,"dtype":"F32","x":0})"), "/tensors/w/x"},
      {flat(R"({"kind":"flat","data":"w","heap":"w#heap","rank":1,"align":16,"dtype":"F32"})"),
       "/tensors/w/heap"},
      {flat(R"({"kind":"blob","data":"w","rank":1,"align":16,"dtype":"F32"})"), "/tensors/w/kind"},
      {flat("[]"), "/tensors/w"},
      {R"({"tensors":{"v":{},"w":{"kind":"flat","data":"w","rank":1,"align":16,"dtype":"F32"}}})",
       "/tensors/v"},
      {R"({"tensors":{}})", "/tensors/w"},
      {R"({"tensors":[]})", "/tensors"},
      {R"({"tables":{}})", "/tables"},
  };
  for (const auto& [layout, where] : different) {
    auto f = appendix();
    f.metadata["metatensor.layout"] = layout;
    try {
      (void)mt::file::from_buffer(tensogram::buffer::owned(f.bytes()));
      ADD_FAILURE() << layout << " was accepted";
    } catch (const mt::error& e) {
      EXPECT_EQ(e.kind(), mt::errc::mt_layout_mismatch) << layout;
      EXPECT_NE(std::string(e.what()).find(" at " + where), std::string::npos) << layout << ": " << e.what();
    }
  }
  // The worked example's table lists its tensors out of name order, which
  // the fast comparison leaves to the reference one.
  const auto file = mt::file::from_buffer(tensogram::buffer::owned(example().bytes()));
  EXPECT_EQ(file.layout_table(), example_layout());
}

// --- §3.2 tensor set ----------------------------------------------------------

TEST(ConformanceTensorSet, ExtraAndMissingPhysicalTensors) {
  auto f = example();
  f.tensors.push_back({"junk", "U8", {0}, {}});
  EXPECT_EQ(verdict(f), "MT_TENSOR_SET");

  f = example();
  f.tensors.push_back({"positions#heap", "U8", {0}, {}});  // flat tensors have no heap
  EXPECT_EQ(verdict(f), "MT_TENSOR_SET");

  f = example();
  f.at("__pad__1").name = "__pad__7";
  EXPECT_EQ(verdict(f), "MT_TENSOR_SET");

  f = example();
  std::swap(f.at("__pad__0").name, f.at("__pad__1").name);  // numbered out of begin order
  EXPECT_EQ(verdict(f), "MT_TENSOR_SET");

  // Missing heap: the labels index without labels#heap (heap replaced by padding).
  f = example();
  f.at("labels#heap").name = "__pad__x";
  EXPECT_EQ(verdict(f), "MT_TENSOR_SET");

  // A required logical tensor absent (table adjusted so §7 passes first).
  f = example();
  f.erase("positions");
  f.erase("__pad__3");
  auto layout = example_layout();
  layout["tensors"].erase("positions");
  f.metadata["metatensor.layout"] = layout.dump();
  EXPECT_EQ(verdict(f), "MT_TENSOR_SET");

  // Without `required`, the same file is valid: optional root properties may be absent.
  auto schema = json::parse(example_schema());
  schema.erase("required");
  f.metadata["metatensor.schema"] = schema.dump();
  EXPECT_EQ(verdict(f, true), "valid");
}

// --- §5.1 dtypes and shapes ------------------------------------------------------

TEST(ConformanceShape, WrongDtypeAndShape) {
  auto f = example();
  f.at("positions").dtype = "I32";  // same size, wrong dtype
  EXPECT_EQ(verdict(f), "MT_TENSOR_DTYPE");

  f = example();
  f.at("labels").dtype = "I8";
  EXPECT_EQ(verdict(f), "MT_TENSOR_DTYPE");

  f = example();
  f.at("particles#heap").dtype = "I8";
  EXPECT_EQ(verdict(f), "MT_TENSOR_DTYPE");

  f = example();
  f.at("particles").shape = {4, 24};  // wrong trailing record dimension
  EXPECT_EQ(verdict(f), "MT_SHAPE");

  f = example();
  f.at("labels").shape = {6, 8};  // trailing dimension must be 16
  EXPECT_EQ(verdict(f), "MT_SHAPE");

  f = example();
  f.at("labels").shape = {48};  // rank
  EXPECT_EQ(verdict(f), "MT_SHAPE");

  f = example();
  f.at("positions").shape = {3, 2};  // minItems/maxItems 3 on the inner dimension
  EXPECT_EQ(verdict(f), "MT_SHAPE");

  f = example();
  f.at("labels#heap").shape = {3, 4};
  EXPECT_EQ(verdict(f), "MT_SHAPE");
}

// --- §3.3, §3.4, §6.6 placement and padding -------------------------------------

TEST(ConformancePadding, MisplacedTooLongAdjacentAndMissing) {
  // Missing padding: labels#heap at 48 is not a multiple of 64.
  auto f = example();
  f.erase("__pad__0");
  for (int j = 1; j <= 3; ++j) f.at("__pad__" + std::to_string(j)).name = "__pad__" + std::to_string(j - 1);
  EXPECT_EQ(verdict(f), "MT_PADDING");  // __pad__0 at 60 should now be 4 bytes: §3.3 is checked before §6.6
  f.at("__pad__0").data = zeros(4);
  f.at("__pad__0").shape = {4};
  EXPECT_EQ(verdict(f), "MT_MISALIGNED");

  // Too long: 80 bytes instead of 16 (labels#heap then at 128, aligned).
  f = example();
  f.at("__pad__0").data = zeros(80);
  f.at("__pad__0").shape = {80};
  f.at("__pad__1").data = zeros(52);
  EXPECT_EQ(verdict(f), "MT_PADDING");

  // Misplaced: a padding tensor before a tensor already aligned.
  f = example();
  f.tensors.insert(f.tensors.begin(), phys{"__pad__0", "U8", {64}, zeros(64)});
  for (int j = 3; j >= 0; --j)
    f.tensors[static_cast<std::size_t>(2 * j + 2)].name = "__pad__" + std::to_string(j + 1);
  EXPECT_EQ(verdict(f), "MT_PADDING");

  // Adjacent padding tensors (16 = 8 + 8).
  f = example();
  f.at("__pad__0").data = zeros(8);
  f.at("__pad__0").shape = {8};
  f.tensors.insert(f.tensors.begin() + 2, phys{"__pad__1", "U8", {8}, zeros(8)});
  for (int j = 1; j <= 3; ++j)
    f.tensors[static_cast<std::size_t>(2 * j + 2)].name = "__pad__" + std::to_string(j + 1);
  EXPECT_EQ(verdict(f), "MT_PADDING");

  // Padding that ends the file.
  f = example();
  f.tensors.push_back({"__pad__4", "U8", {8}, zeros(8)});
  EXPECT_EQ(verdict(f), "MT_PADDING");

  // Zero-size and non-U8 padding.
  f = example();
  f.tensors.insert(f.tensors.begin(), phys{"__pad__0", "U8", {0}, {}});
  for (int j = 3; j >= 0; --j)
    f.tensors[static_cast<std::size_t>(2 * j + 2)].name = "__pad__" + std::to_string(j + 1);
  EXPECT_EQ(verdict(f), "MT_PADDING");
  f = example();
  f.at("__pad__0").dtype = "I8";
  EXPECT_EQ(verdict(f), "MT_PADDING");

  // Non-zero padding bytes: structurally valid, deep MT_NONZERO_PADDING.
  f = example();
  f.at("__pad__2").data[31] = std::byte{1};
  EXPECT_EQ(verdict(f), "valid");
  EXPECT_EQ(verdict(f, true), "MT_NONZERO_PADDING");
}

TEST(ConformancePadding, RootAlignRaisesPlacement) {
  // TypeDef:Align 128 on "w": R(w) = 128, so w needs a 128-aligned offset.
  const std::string schema =
      R"({"type":"object","properties":{"v":{"type":"array","items":{"type":"integer","TypeDef:Uint8":true}},)"
      R"("w":{"type":"array","TypeDef:Align":128,"items":{"type":"number","TypeDef:Float32":true}}}})";
  const std::string layout = R"({"tensors":{"v":{"kind":"flat","data":"v","rank":1,"align":64,"dtype":"U8"},)"
                             R"("w":{"kind":"flat","data":"w","rank":1,"align":128,"dtype":"F32"}}})";
  spec_file f;
  f.metadata = mt_metadata(schema, layout);
  f.pad_to = 128;
  f.tensors = {{"w", "F32", {1}, zeros(4)}, {"__pad__0", "U8", {60}, zeros(60)}, {"v", "U8", {3}, zeros(3)}};
  EXPECT_EQ(verdict(f), "valid");
  f.tensors = {{"v", "U8", {3}, zeros(3)}, {"__pad__0", "U8", {61}, zeros(61)}, {"w", "F32", {1}, zeros(4)}};
  EXPECT_EQ(verdict(f), "MT_PADDING");  // 64 is not a multiple of 128: needs 125 bytes
  f.tensors[1] = {"__pad__0", "U8", {125}, zeros(125)};
  EXPECT_EQ(verdict(f), "valid");
}

// --- §6.4 BlobRefs ----------------------------------------------------------------

TEST(ConformanceBlobRefs, BoundsAndOverflow) {
  auto f = example();
  poke<std::uint64_t>(f.at("labels").data, 40, 5);  // (8, 5) ends at 13 > 12
  EXPECT_EQ(verdict(f), "MT_BLOB_BOUNDS");

  f = example();
  poke<std::uint64_t>(f.at("labels").data, 32, 13);  // empty blob past the end
  poke<std::uint64_t>(f.at("labels").data, 40, 0);
  EXPECT_EQ(verdict(f), "MT_BLOB_BOUNDS");

  f = example();
  poke<std::uint64_t>(f.at("labels").data, 32, 12);  // empty blob at H: valid
  poke<std::uint64_t>(f.at("labels").data, 40, 0);
  EXPECT_EQ(verdict(f), "valid");

  // Hostile: offset near 2^64 so that offset + length wraps around.
  f = example();
  poke<std::uint64_t>(f.at("labels").data, 0, std::numeric_limits<std::uint64_t>::max() - 1);
  poke<std::uint64_t>(f.at("labels").data, 8, 4);
  EXPECT_EQ(verdict(f), "MT_BLOB_BOUNDS");
  f = example();
  poke<std::uint64_t>(f.at("particles").data, 48 + 32, std::numeric_limits<std::uint64_t>::max());
  poke<std::uint64_t>(f.at("particles").data, 48 + 40, 1);
  EXPECT_EQ(verdict(f), "MT_BLOB_BOUNDS");
  f = example();
  poke<std::uint64_t>(f.at("particles").data, 40, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(verdict(f), "MT_BLOB_BOUNDS");

  // Overlapping and shared blobs are valid.
  f = example();
  poke<std::uint64_t>(f.at("labels").data, 32, 7);  // "blue" -> "nblue", overlapping "green"
  poke<std::uint64_t>(f.at("labels").data, 40, 5);
  EXPECT_EQ(verdict(f, true), "valid");
  const auto file = mt::file::from_buffer(tensogram::buffer::owned(f.bytes()));
  EXPECT_EQ(file.blobs("labels").string(2), "nblue");
  f = example();
  poke<std::uint64_t>(f.at("labels").data, 16, 0);  // "green" -> "redgr": shares "red"
  poke<std::uint64_t>(f.at("labels").data, 32, 3);  // "blue" -> "green" at [3, 8)
  poke<std::uint64_t>(f.at("labels").data, 40, 5);
  EXPECT_EQ(verdict(f), "valid");
  EXPECT_EQ(verdict(f, true), "MT_NONZERO_PADDING");  // "blue" bytes [8, 12) now uncovered
}

spec_file ragged(std::initializer_list<std::pair<std::uint64_t, std::uint64_t>> refs,
                 std::size_t heap_floats) {
  const std::string schema =
      R"({"type":"object","properties":{"rows":{"type":"array","items":{"type":"array","TypeDef:List":true,)"
      R"("items":{"type":"number","TypeDef:Float32":true}}}}})";
  const std::string layout =
      R"({"tensors":{"rows":{"kind":"blob","data":"rows","heap":"rows#heap","rank":1,"align":64,)"
      R"("item":{"type":"list","elem":{"type":"F32","shape":[]}}}}})";
  spec_file f;
  f.metadata = mt_metadata(schema, layout);
  const auto index = blob_index(refs);
  const std::uint64_t pad = (64 - index.size() % 64) % 64;
  f.tensors.push_back({"rows", "U8", {refs.size(), 16}, index});
  if (pad != 0 && heap_floats != 0) f.tensors.push_back({"__pad__0", "U8", {pad}, zeros(pad)});
  std::vector<std::byte> heap;
  for (std::size_t i = 0; i < heap_floats; ++i) put(heap, static_cast<float>(i));
  f.tensors.push_back({"rows#heap", "U8", {heap.size()}, heap});
  return f;
}

TEST(ConformanceBlobRefs, ListAlignmentAndLength) {
  EXPECT_EQ(verdict(ragged({{0, 8}, {8, 4}}, 3), true), "valid");
  EXPECT_EQ(verdict(ragged({{0, 8}, {2, 4}}, 3)), "MT_BLOB_ALIGN");  // misaligned List blob
  EXPECT_EQ(verdict(ragged({{0, 6}, {8, 4}}, 3)), "MT_BLOB_ALIGN");  // length not a multiple of 4
  EXPECT_EQ(verdict(ragged({{0, 8}, {8, 8}}, 3)), "MT_BLOB_BOUNDS");
  EXPECT_EQ(verdict(ragged({{0, 8}, {12, 0}}, 3)), "valid");        // empty blob at H
  EXPECT_EQ(verdict(ragged({{0, 12}, {4, 4}}, 3), true), "valid");  // overlap
  EXPECT_EQ(verdict(ragged({{0, 0}, {0, 0}}, 0), true), "valid");   // empty heap
  // Bounds are checked before alignment for the same BlobRef.
  EXPECT_EQ(verdict(ragged({{2, 16}}, 3)), "MT_BLOB_BOUNDS");
  // A heap gap (bytes not covered by any blob) must be zero: deep check.
  EXPECT_EQ(verdict(ragged({{0, 4}, {8, 4}}, 3), true), "MT_NONZERO_PADDING");
  EXPECT_EQ(verdict(ragged({{4, 8}, {0, 0}}, 3), true), "valid");  // uncovered heap[0..4) is 0.0f
}

std::string structural_message(const spec_file& f) {
  try {
    mt::file::from_buffer(tensogram::buffer::owned(f.bytes())).check_all_blob_refs();
    return "valid";
  } catch (const mt::error& e) {
    return e.what();
  }
}

// Messages say what and where (tensor, field path, offsets, values).
TEST(ConformanceMessages, WhatAndWhere) {
  auto f = example();
  auto layout = example_layout();
  layout["tensors"]["particles"]["record"]["fields"][2]["offset"] = 17;
  f.metadata["metatensor.layout"] = layout.dump();
  EXPECT_EQ(structural_message(f),
            "framing error: MT_LAYOUT_MISMATCH: metatensor.layout differs from the layout recomputed from "
            "the schema "
            "at /tensors/particles/record/fields/2/offset: the file has 17, the recomputed table has 16");
  f = example();
  poke<std::uint64_t>(f.at("particles").data, 48 + 32, std::numeric_limits<std::uint64_t>::max());
  poke<std::uint64_t>(f.at("particles").data, 48 + 40, 1);
  EXPECT_EQ(
      structural_message(f),
      "framing error: MT_BLOB_BOUNDS: \"particles\" record 1 at byte 32: blob [offset 18446744073709551615, "
      "length 1] exceeds the heap of 9 bytes");
  f = example();
  f.at("__pad__0").data = zeros(80);
  f.at("__pad__0").shape = {80};
  EXPECT_EQ(
      structural_message(f),
      "framing error: MT_PADDING: padding tensor \"__pad__0\" is 80 bytes, \"labels#heap\" needs exactly 16 "
      "to reach alignment 64");
  f = example();
  f.at("positions").shape = {3, 2};
  EXPECT_EQ(structural_message(f),
            "framing error: MT_SHAPE: tensor \"positions\" dimension 1 is 2, the schema allows 3..3");
  f = example();
  f.at("particles").data[48 + 29] = std::byte{1};
  EXPECT_EQ(deep_message(f),
            "framing error: MT_NONZERO_PADDING: /particles/1: record padding byte 29 is 1, not 0");
  poke<std::uint64_t>(f.at("particles").data, 48 + 40, 3);
  f.at("particles").data[48 + 29] = std::byte{0};
  EXPECT_EQ(deep_message(f),
            "framing error: MT_NONZERO_PADDING: tensor \"particles#heap\": heap gap byte 8 is 97, not 0");
  f = example();
  f.at("particles#heap").data[6] = std::byte{0xC0};
  EXPECT_EQ(deep_message(f),
            "framing error: MT_UTF8: /particles/1/name: invalid UTF-8 at byte 1 of the string");
}

}  // namespace

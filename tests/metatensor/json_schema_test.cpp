// The JSON Schema evaluator of the metatensor dialect (spec 06 §4.2, §4.3,
// §8.3): measured on the official draft 2020-12 test suite (§13 "Oracles"),
// then unit tests for the §8.3 number rules, lengths, patterns and pointers.
#include "metatensor/json_schema.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "tensogram/core/error.hpp"

namespace {

using json = nlohmann::json;
using metatensor::errc;
using metatensor::json_schema_evaluator;

// ---------------------------------------------------------------------------
// An independent scan of a suite schema for features outside the dialect
// (§4.1, §4.3): a group the evaluator rejects must have at least one.

constexpr const char* outside_keywords[] = {
    "$anchor",           "$dynamicRef",   "$dynamicAnchor",    "$recursiveRef",    "$recursiveAnchor",
    "$vocabulary",       "definitions",   "additionalItems",   "unevaluatedItems", "unevaluatedProperties",
    "patternProperties", "propertyNames", "dependentRequired", "dependentSchemas", "dependencies",
    "minProperties",     "maxProperties",
};

struct dialect_scan {
  std::set<std::string> ids;
  std::vector<std::string> reasons;
  bool has_pattern = false;

  // Calls f(subschema, embedded) for the subschemas of an object schema.
  template <class F>
  static void children(const json& s, F&& f) {
    for (const char* k : {"items", "contains", "not", "if", "then", "else", "additionalProperties"}) {
      if (s.contains(k) && (s[k].is_object() || s[k].is_boolean())) f(s[k]);
    }
    for (const char* k : {"prefixItems", "allOf", "anyOf", "oneOf", "items"}) {
      if (s.contains(k) && s[k].is_array()) {
        for (const auto& sub : s[k]) f(sub);
      }
    }
    for (const char* k : {"properties", "$defs"}) {
      if (s.contains(k) && s[k].is_object()) {
        for (const auto& [name, sub] : s[k].items()) f(sub);
      }
    }
  }

  void collect_ids(const json& s) {
    if (!s.is_object()) return;
    if (s.contains("$id") && s["$id"].is_string()) ids.insert(s["$id"].get<std::string>());
    children(s, [&](const json& sub) { collect_ids(sub); });
  }

  void scan(const json& s, bool embedded) {
    if (!s.is_object()) return;
    for (const char* k : outside_keywords) {
      if (s.contains(k)) reasons.push_back(std::string("keyword ") + k);
    }
    if (s.contains("$schema") && s["$schema"] != "https://json-schema.org/draft/2020-12/schema") {
      reasons.push_back("$schema other than 2020-12");
    }
    if (s.contains("items") && s["items"].is_array()) reasons.push_back("items array");
    if (s.contains("additionalProperties") && s["additionalProperties"] != false) {
      reasons.push_back("additionalProperties other than false");
    }
    if (s.contains("pattern")) has_pattern = true;
    if (s.contains("$ref") && s["$ref"].is_string()) {
      const std::string ref = s["$ref"].get<std::string>();
      if (!ref.empty() && ref[0] == '#') {
        if (ref.size() > 1 && ref[1] != '/') reasons.push_back("anchor $ref " + ref);
        if (embedded) reasons.push_back("fragment $ref inside an embedded $id resource");
      } else if (ids.count(ref) == 0) {
        reasons.push_back("remote or relative $ref " + ref);
      }
    }
    children(s, [&](const json& sub) { scan(sub, embedded || (sub.is_object() && sub.contains("$id"))); });
  }
};

std::filesystem::path suite_dir() {
  return std::filesystem::path(TENSOGRAM_FIXTURES) / "json-schema-test-suite";
}

TEST(JsonSchemaSuite, Draft202012RequiredTests) {
  const auto dir = suite_dir();
  if (!std::filesystem::exists(dir / "type.json")) GTEST_SKIP() << "suite not found at " << dir;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_GT(files.size(), 40u);

  // TENSOGRAM_SCHEMA_SUITE_VERBOSE=1 lists every rejected group and why.
  const bool verbose = std::getenv("TENSOGRAM_SCHEMA_SUITE_VERBOSE") != nullptr;
  std::size_t total_groups = 0, total_evaluated = 0, total_rejected = 0, total_unsupported = 0;
  std::size_t total_cases = 0, total_passed = 0, mis_evaluations = 0, wrong_rejections = 0,
              missed_rejections = 0;
  std::size_t total_skipped = 0;
  std::printf("%-28s %8s %10s %14s %9s %14s\n", "file", "groups", "evaluated", "cases passed", "rejected",
              "cases skipped");
  for (const auto& file : files) {
    std::ifstream in(file);
    const json groups = json::parse(in);
    std::size_t evaluated = 0, rejected = 0, cases = 0, passed = 0, skipped = 0;
    for (const auto& group : groups) {
      const json& schema = group["schema"];
      const std::string where = file.filename().string() + " / " + group["description"].get<std::string>();
      dialect_scan scan;
      scan.collect_ids(schema);
      scan.scan(schema, false);
      try {
        const json_schema_evaluator evaluator(schema);
        if (!scan.reasons.empty()) {
          ++missed_rejections;
          ADD_FAILURE() << where << ": accepted although it uses " << scan.reasons.front();
          continue;
        }
        ++evaluated;
        for (const auto& test : group["tests"]) {
          ++cases;
          const bool expected = test["valid"].get<bool>();
          bool actual = false;
          try {
            actual = !evaluator.validate(test["data"]).has_value();
          } catch (const std::exception& e) {
            ADD_FAILURE() << where << " / " << test["description"] << ": threw " << e.what();
            ++mis_evaluations;
            continue;
          }
          if (actual == expected) {
            ++passed;
          } else {
            ++mis_evaluations;
            ADD_FAILURE() << where << " / " << test["description"] << ": expected " << expected;
          }
        }
      } catch (const metatensor::error& e) {
        const bool unsupported_pattern = e.kind() == errc::mt_schema_unsupported && scan.has_pattern;
        if ((e.kind() == errc::mt_schema_dialect && !scan.reasons.empty()) || unsupported_pattern) {
          ++rejected;
          skipped += group["tests"].size();
          if (verbose) std::printf("  rejected %s: %s\n", where.c_str(), e.what());
          if (unsupported_pattern) ++total_unsupported;
        } else {
          ++wrong_rejections;
          ADD_FAILURE() << where << ": wrongly rejected: " << e.what();
        }
      }
    }
    std::printf("%-28s %8zu %10zu %8zu/%-5zu %9zu %14zu\n", file.filename().string().c_str(), groups.size(),
                evaluated, passed, cases, rejected, skipped);
    total_skipped += skipped;
    total_groups += groups.size();
    total_evaluated += evaluated;
    total_rejected += rejected;
    total_cases += cases;
    total_passed += passed;
  }
  std::printf("%-28s %8zu %10zu %8zu/%-5zu %9zu %14zu\n", "TOTAL", total_groups, total_evaluated,
              total_passed, total_cases, total_rejected, total_skipped);
  std::printf("rejected for an unsupported pattern: %zu\n", total_unsupported);
  EXPECT_EQ(mis_evaluations, 0u);
  EXPECT_EQ(wrong_rejections, 0u);
  EXPECT_EQ(missed_rejections, 0u);
  EXPECT_EQ(total_passed, total_cases);
  EXPECT_EQ(total_groups, total_evaluated + total_rejected + missed_rejections + wrong_rejections);
  // Guards against a suite run that silently evaluates nothing.
  EXPECT_GT(total_evaluated, 200u);
}

// ---------------------------------------------------------------------------
// Helpers for the unit tests.

std::optional<metatensor::schema_violation> check(const json& schema, const json& value) {
  const json_schema_evaluator evaluator(schema);
  return evaluator.validate(value);
}

bool valid(const json& schema, const json& value) {
  return !check(schema, value).has_value();
}

std::string failing_keyword(const json& schema, const json& value) {
  const auto v = check(schema, value);
  return v ? v->keyword : std::string();
}

errc construction_error(const json& schema) {
  try {
    const json_schema_evaluator evaluator(schema);
  } catch (const metatensor::error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "accepted: " << schema.dump();
  return errc::st_incomplete;
}

const double nan = std::numeric_limits<double>::quiet_NaN();
const double inf = std::numeric_limits<double>::infinity();

// §8.3: NaN passes every bound; ±inf compare normally; multipleOf fails for
// non-finite values; enum/const never match NaN.
TEST(JsonSchemaNumbers, NanAndInfinityAgainstBounds) {
  const json bounds = {{"minimum", 0}, {"maximum", 10}, {"exclusiveMinimum", -1}, {"exclusiveMaximum", 11}};
  EXPECT_TRUE(valid(bounds, json(nan)));
  EXPECT_EQ(failing_keyword(bounds, json(inf)), "maximum");
  EXPECT_EQ(failing_keyword(bounds, json(-inf)), "minimum");
  EXPECT_EQ(failing_keyword({{"exclusiveMaximum", 11}}, json(inf)), "exclusiveMaximum");
  EXPECT_EQ(failing_keyword({{"exclusiveMinimum", -1}}, json(-inf)), "exclusiveMinimum");
  EXPECT_TRUE(valid({{"minimum", 0}}, json(inf)));
  EXPECT_TRUE(valid({{"maximum", 0}}, json(-inf)));
  EXPECT_TRUE(valid({{"type", "number"}}, json(nan)));
  EXPECT_EQ(failing_keyword({{"type", "integer"}}, json(inf)), "type");
  EXPECT_EQ(failing_keyword({{"type", "integer"}}, json(nan)), "type");
}

TEST(JsonSchemaNumbers, MultipleOf) {
  EXPECT_EQ(failing_keyword({{"multipleOf", 1}}, json(nan)), "multipleOf");
  EXPECT_EQ(failing_keyword({{"multipleOf", 1}}, json(inf)), "multipleOf");
  EXPECT_EQ(failing_keyword({{"multipleOf", 0.5}}, json(-inf)), "multipleOf");
  EXPECT_TRUE(valid({{"multipleOf", 0.0001}}, json(0.0075)));
  EXPECT_FALSE(valid({{"multipleOf", 0.0001}}, json(0.00751)));
  EXPECT_FALSE(valid({{"multipleOf", 0.123456789}}, json(1e308)));  // quotient overflows to inf
  EXPECT_TRUE(valid({{"multipleOf", 1.5}}, json(4.5)));
  EXPECT_TRUE(valid({{"multipleOf", 1e-8}}, json(12391239123)));
  // Integers are exact: 2^64 - 1 is odd (binary64 would round it to 2^64) and
  // divisible by 5.
  const json top = std::numeric_limits<std::uint64_t>::max();
  EXPECT_EQ(failing_keyword({{"multipleOf", 2}}, top), "multipleOf");
  EXPECT_EQ(failing_keyword({{"multipleOf", 2.0}}, top), "multipleOf");
  EXPECT_TRUE(valid({{"multipleOf", 5}}, top));
  const json bottom = std::numeric_limits<std::int64_t>::min();
  EXPECT_TRUE(valid({{"multipleOf", 2}}, bottom));
  EXPECT_EQ(failing_keyword({{"multipleOf", 3}}, bottom), "multipleOf");
  EXPECT_EQ(construction_error({{"multipleOf", 0}}), errc::mt_schema_dialect);
  EXPECT_EQ(construction_error({{"multipleOf", -2}}), errc::mt_schema_dialect);
}

TEST(JsonSchemaNumbers, EnumAndConstNeverMatchNan) {
  json schema = {{"const", 0}};
  schema["const"] = nan;  // not expressible in JSON text; a programmatic schema
  EXPECT_EQ(failing_keyword(schema, json(nan)), "const");
  json with_nan = {{"enum", {1, 2}}};
  with_nan["enum"].push_back(nan);
  EXPECT_EQ(failing_keyword(with_nan, json(nan)), "enum");
  EXPECT_TRUE(valid(with_nan, json(2.0)));
  EXPECT_EQ(failing_keyword({{"enum", {1, 2}}}, json(nan)), "enum");
  json inf_const = {{"const", 0}};
  inf_const["const"] = inf;
  EXPECT_TRUE(valid(inf_const, json(inf)));
  EXPECT_EQ(failing_keyword(inf_const, json(-inf)), "const");
  EXPECT_TRUE(valid({{"const", 1}}, json(1.0)));
  EXPECT_TRUE(valid({{"const", {{"a", {1, 2.0}}}}}, json({{"a", {1.0, 2}}})));
  EXPECT_FALSE(valid({{"const", false}}, json(0)));
}

TEST(JsonSchemaNumbers, Uint64NearTwoToThe64) {
  const json top = std::numeric_limits<std::uint64_t>::max();
  const json below = std::numeric_limits<std::uint64_t>::max() - 1;
  EXPECT_TRUE(valid({{"maximum", top}}, top));
  EXPECT_EQ(failing_keyword({{"maximum", below}}, top), "maximum");
  EXPECT_EQ(failing_keyword({{"exclusiveMaximum", top}}, top), "exclusiveMaximum");
  EXPECT_TRUE(valid({{"exclusiveMaximum", top}}, below));
  EXPECT_EQ(failing_keyword({{"minimum", top}}, below), "minimum");
  // Integer value against a floating bound: exact (2^64 - 1 < 2^64).
  EXPECT_EQ(failing_keyword({{"exclusiveMinimum", 18446744073709551616.0}}, top), "exclusiveMinimum");
  EXPECT_TRUE(valid({{"exclusiveMaximum", 18446744073709551616.0}}, top));
  // Floating value against an integer bound: the bound is read as binary64
  // (2^64 - 1 -> 2^64), so 2^64 is not above it.
  EXPECT_TRUE(valid({{"maximum", top}}, json(18446744073709551616.0)));
  EXPECT_EQ(failing_keyword({{"maximum", top}}, json(18446744073709555712.0)), "maximum");
  // int64 extremes and mixed signs.
  const json low = std::numeric_limits<std::int64_t>::min();
  EXPECT_TRUE(valid({{"minimum", low}}, low));
  EXPECT_EQ(failing_keyword({{"minimum", 0}}, low), "minimum");
  EXPECT_EQ(failing_keyword({{"maximum", low}}, top), "maximum");
  // Exact equality above 2^53.
  EXPECT_EQ(failing_keyword({{"const", 9007199254740992}}, json(9007199254740993)), "const");
  EXPECT_TRUE(valid({{"const", 9007199254740992}}, json(9007199254740992.0)));
  EXPECT_TRUE(valid({{"enum", {top}}}, top));
  EXPECT_FALSE(valid({{"enum", {below}}}, top));
  EXPECT_TRUE(valid({{"type", "integer"}}, top));
}

TEST(JsonSchemaStrings, LengthsCountCodePoints) {
  EXPECT_TRUE(valid({{"maxLength", 5}}, json("h\xC3\xA9llo")));  // 6 bytes, 5 code points
  EXPECT_EQ(failing_keyword({{"maxLength", 4}}, json("h\xC3\xA9llo")), "maxLength");
  EXPECT_EQ(failing_keyword({{"minLength", 3}}, json("\xE6\x97\xA5\xE6\x9C\xAC")), "minLength");  // 2 CJK
  EXPECT_TRUE(valid({{"maxLength", 1}}, json("\xF0\x9F\x98\x80")));  // one emoji, 4 bytes
  EXPECT_TRUE(valid({{"minLength", 2.0}}, json("ab")));
  EXPECT_EQ(construction_error({{"minLength", -1}}), errc::mt_schema_dialect);
  EXPECT_EQ(construction_error({{"maxLength", 1.5}}), errc::mt_schema_dialect);
}

TEST(JsonSchemaStrings, PatternIsUnanchoredEcmaLike) {
  EXPECT_TRUE(valid({{"pattern", "b+"}}, json("abbbc")));
  EXPECT_EQ(failing_keyword({{"pattern", "^b"}}, json("ab")), "pattern");
  EXPECT_TRUE(valid({{"pattern", "^a*$"}}, json("aaa")));
  // ECMA-262 `$` without the m flag matches only at the very end.
  EXPECT_EQ(failing_keyword({{"pattern", "a$"}}, json("a\n")), "pattern");
  // `\u` escapes and UTF mode: one code point, not one byte.
  EXPECT_TRUE(valid({{"pattern", "^\\u00e9$"}}, json("\xC3\xA9")));
  EXPECT_TRUE(valid({{"pattern", "^.$"}}, json("\xE6\x97\xA5")));
  EXPECT_TRUE(valid({{"pattern", "^\\d+$"}}, json("0123")));
  EXPECT_TRUE(valid({{"pattern", "x"}}, json(12)));  // pattern ignores non-strings
  // ECMA-262 u-mode meanings that PCRE2 spells or reads differently.
  EXPECT_TRUE(valid({{"pattern", "^\\p{Letter}+$"}}, json("\xC3\xB1"
                                                          "a")));
  EXPECT_FALSE(valid({{"pattern", "^\\p{Letter}+$"}}, json("a1")));
  EXPECT_TRUE(valid({{"pattern", "^\\p{gc=Lu}\\P{General_Category=Uppercase_Letter}$"}}, json("Ab")));
  EXPECT_TRUE(valid({{"pattern", "^\\p{Script=Greek}$"}}, json("\xCE\xB1")));
  EXPECT_TRUE(valid({{"pattern", "^\\s$"}}, json("\xC2\xA0")));       // U+00A0 is ECMA white space
  EXPECT_FALSE(valid({{"pattern", "^\\S$"}}, json("\xE2\x80\xA8")));  // U+2028 too
  EXPECT_TRUE(valid({{"pattern", "^[\\sx]+$"}}, json("x \xEF\xBB\xBF")));
  EXPECT_FALSE(valid({{"pattern", "^.$"}}, json("\xE2\x80\xA9")));  // `.` excludes U+2029
  EXPECT_FALSE(valid({{"pattern", "^.$"}}, json("\r")));
  EXPECT_TRUE(valid({{"pattern", "^.$"}}, json("\x0B")));
  EXPECT_TRUE(valid({{"pattern", "^[.]$"}}, json(".")));
  EXPECT_FALSE(valid({{"pattern", "^[.]$"}}, json("a")));
  EXPECT_TRUE(valid({{"pattern", "^\\.$"}}, json(".")));
  // `[` inside a class is literal in ECMA-262, not a POSIX class.
  EXPECT_TRUE(valid({{"pattern", "^[[:alpha:]]$"}}, json("a]")));
  EXPECT_FALSE(valid({{"pattern", "^[[:alpha:]]$"}}, json("b")));
  EXPECT_FALSE(valid({{"pattern", "[]"}}, json("a")));  // the empty class matches nothing
  EXPECT_TRUE(valid({{"pattern", "^[^]$"}}, json("\n")));
  EXPECT_EQ(construction_error({{"pattern", "[\\S]"}}), errc::mt_schema_unsupported);
  EXPECT_EQ(construction_error({{"pattern", "\\p{Letter"}}), errc::mt_schema_unsupported);
  EXPECT_EQ(construction_error({{"pattern", "("}}), errc::mt_schema_unsupported);
  EXPECT_EQ(construction_error({{"pattern", "a{2,1}"}}), errc::mt_schema_unsupported);
}

TEST(JsonSchemaStrings, HostilePatternReturnsPromptly) {
  const json schema = {{"pattern", "(a+)+$"}};
  const json_schema_evaluator evaluator(schema);
  const json value = std::string(5000, 'a') + "!";
  const auto start = std::chrono::steady_clock::now();
  // A hit of PCRE2's match limit is an MT_LIMIT error, never a verdict.
  try {
    const auto v = evaluator.validate(value, "/s");
    ADD_FAILURE() << "expected MT_LIMIT, got " << (v ? v->message : std::string("valid"));
  } catch (const metatensor::error& e) {
    EXPECT_EQ(e.kind(), errc::mt_limit);
    EXPECT_NE(std::string(e.what()).find("/s"), std::string::npos) << e.what();
  }
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count(), 3000);
  // The same pattern on a matching or short subject is evaluated normally.
  EXPECT_FALSE(evaluator.validate(json(std::string(5000, 'a'))).has_value());
  EXPECT_EQ(evaluator.validate(json("aaab!"))->keyword, "pattern");
}

TEST(JsonSchemaPointers, ReportedPointersAreEscaped) {
  const json schema = {
      {"properties",
       {{"a", {{"items", {{"properties", {{"b", {{"type", "string"}}}}}}}}}, {"x/y~z", {{"maximum", 1}}}}}};
  const json_schema_evaluator evaluator(schema);
  auto v = evaluator.validate(json({{"a", {{{"b", "ok"}}, {{"b", 1}}}}}));
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->pointer, "/a/1/b");
  EXPECT_EQ(v->keyword, "type");
  EXPECT_NE(v->message.find("/properties/a/items/properties/b"), std::string::npos) << v->message;
  v = evaluator.validate(json({{"x/y~z", 2}}), "/particles");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->pointer, "/particles/x~1y~0z");
  EXPECT_EQ(v->keyword, "maximum");

  const json closed = {{"properties", {{"a", true}}}, {"additionalProperties", false}, {"required", {"a"}}};
  v = check(closed, json({{"a", 1}, {"b~", 2}}));
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->pointer, "/b~0");
  EXPECT_EQ(v->keyword, "additionalProperties");
  v = check(closed, json::object());
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->pointer, "");
  EXPECT_EQ(v->keyword, "required");
}

TEST(JsonSchemaPointers, ValidateNode) {
  const json schema = {{"$defs", {{"mass", {{"type", "number"}, {"minimum", 0}}}}},
                       {"properties", {{"m", {{"$ref", "#/$defs/mass"}}}}}};
  const json_schema_evaluator evaluator(schema);
  const auto v = evaluator.validate_node(schema["$defs"]["mass"], json(-1), "/particles/1/mass");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->pointer, "/particles/1/mass");
  EXPECT_EQ(v->keyword, "minimum");
  EXPECT_FALSE(evaluator.validate_node(schema["properties"]["m"], json(3), "/m").has_value());
  EXPECT_EQ(&evaluator.document(), &schema);
  const json elsewhere = {{"type", "number"}};
  EXPECT_THROW((void)evaluator.validate_node(elsewhere, json(1), ""), tensogram::invalid_arg_error);
  // `properties` itself is not a schema node.
  EXPECT_THROW((void)evaluator.validate_node(schema["properties"], json(1), ""),
               tensogram::invalid_arg_error);
}

TEST(JsonSchemaDialect, RejectedKeywords) {
  for (const char* k : {"$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor",
                        "$vocabulary", "definitions", "additionalItems", "unevaluatedItems",
                        "unevaluatedProperties", "patternProperties", "propertyNames", "dependentRequired",
                        "dependentSchemas", "dependencies", "minProperties", "maxProperties"}) {
    json schema = {{"properties", {{"a", {{"type", "object"}}}}}};
    schema["properties"]["a"][k] = json::object();
    try {
      const json_schema_evaluator evaluator(schema);
      ADD_FAILURE() << k << " accepted";
    } catch (const metatensor::error& e) {
      EXPECT_EQ(e.kind(), errc::mt_schema_dialect) << k;
      EXPECT_NE(std::string(e.what()).find("/properties/a"), std::string::npos) << e.what();
    }
  }
  // A draft-07 tuple (`items` as an array, as TypeBox writes) is read as the
  // `prefixItems` it stands for; `additionalItems` alone stays outside.
  EXPECT_TRUE(valid({{"items", {{{"type", "string"}}}}}, json({"a", 1})));
  EXPECT_FALSE(valid({{"items", {{{"type", "string"}}}}}, json({1})));
  EXPECT_FALSE(valid({{"items", {{{"type", "string"}}}}, {"additionalItems", false}}, json({"a", 1})));
  EXPECT_EQ(construction_error({{"items", {{"type", "string"}}}, {"additionalItems", false}}),
            errc::mt_schema_dialect);
  EXPECT_EQ(construction_error({{"additionalProperties", true}}), errc::mt_schema_dialect);
  EXPECT_EQ(construction_error({{"additionalProperties", {{"type", "string"}}}}), errc::mt_schema_dialect);
  EXPECT_EQ(construction_error({{"$schema", "http://json-schema.org/draft-07/schema#"}}),
            errc::mt_schema_dialect);
  EXPECT_EQ(construction_error(json(3)), errc::mt_schema_dialect);
  EXPECT_EQ(construction_error({{"type", "float"}}), errc::mt_schema_dialect);
  EXPECT_EQ(construction_error({{"minimum", "1"}}), errc::mt_schema_dialect);
  // Keywords under an annotation are not schemas, and neither are enum values.
  EXPECT_TRUE(valid({{"x-note", {{"patternProperties", 1}}}, {"enum", {{{"$ref", "nowhere"}}}}},
                    json({{"$ref", "nowhere"}})));
  // Annotations and every TypeDef: keyword pass.
  EXPECT_TRUE(valid({{"TypeDef:Float32", true},
                     {"TypeDef:Whatever", 7},
                     {"format", "email"},
                     {"title", "t"},
                     {"deprecated", true},
                     {"readOnly", true},
                     {"contentEncoding", "base64"},
                     {"default", 1}},
                    json("not an email")));
}

TEST(JsonSchemaDialect, References) {
  // By JSON Pointer (percent-encoded, escaped) and by exact $id.
  const json by_pointer = {{"$defs", {{"a/b%", {{"type", "integer"}}}}}, {"$ref", "#/$defs/a~1b%25"}};
  EXPECT_TRUE(valid(by_pointer, json(3)));
  EXPECT_EQ(failing_keyword(by_pointer, json("x")), "type");
  const json by_id = {{"$defs", {{"P", {{"$id", "Particle"}, {"required", {"mass"}}}}}},
                      {"items", {{"$ref", "Particle"}}}};
  EXPECT_EQ(check(by_id, json::array({json::object()}))->pointer, "/0");
  EXPECT_TRUE(valid(by_id, json({{{"mass", 1}}})));
  // Recursion through the value terminates.
  const json tree = {{"type", "array"}, {"items", {{"$ref", "#"}}}};
  EXPECT_TRUE(valid(tree, json::parse("[[[]],[]]")));
  EXPECT_FALSE(valid(tree, json::parse("[[[1]]]")));
  // Remote, relative, anchor and dangling references are refused.
  EXPECT_EQ(construction_error({{"$ref", "https://example.com/s.json"}}), errc::mt_schema_dialect);
  EXPECT_EQ(construction_error({{"$ref", "other.json#/a"}}), errc::mt_schema_dialect);
  EXPECT_EQ(construction_error({{"$ref", "#foo"}}), errc::mt_schema_dialect);
  EXPECT_EQ(construction_error({{"$ref", "#/$defs/missing"}}), errc::mt_schema_dialect);
  EXPECT_EQ(construction_error({{"$ref", "#/$defs/%zz"}}), errc::mt_schema_dialect);
  // A fragment inside a subschema with its own $id (2020-12 would resolve it
  // against that subschema).
  EXPECT_EQ(construction_error({{"$defs", {{"A", {{"$id", "A"}, {"$ref", "#/$defs/B"}}}, {"B", true}}}}),
            errc::mt_schema_dialect);
  // Cycles that never descend into the value.
  EXPECT_EQ(construction_error({{"$defs", {{"a", {{"$ref", "#/$defs/b"}}}, {"b", {{"$ref", "#/$defs/a"}}}}}}),
            errc::mt_schema_dialect);
  EXPECT_EQ(construction_error({{"anyOf", {{{"type", "string"}}, {{"$ref", "#"}}}}}),
            errc::mt_schema_dialect);
  EXPECT_EQ(construction_error({{"$ref", "#"}}), errc::mt_schema_dialect);
}

TEST(JsonSchemaLimits, SchemaNesting) {
  auto nested = [](std::size_t levels) {
    json s = {{"type", "integer"}};
    for (std::size_t i = 1; i < levels; ++i) s = json{{"items", s}};
    return s;
  };
  EXPECT_NO_THROW(json_schema_evaluator{nested(64)});
  EXPECT_EQ(construction_error(nested(65)), errc::mt_limit);
  // Value nesting is guarded at evaluation time.
  const json tree = {{"items", {{"$ref", "#"}}}};
  const json_schema_evaluator evaluator(tree);
  json deep = json::array();
  for (int i = 0; i < 2000; ++i) {
    json outer = json::array();
    outer.push_back(std::move(deep));
    deep = std::move(outer);
  }
  json shallow = json::array();
  for (int i = 0; i < 100; ++i) shallow = json::array({shallow});
  EXPECT_FALSE(evaluator.validate(shallow).has_value());
  try {
    (void)evaluator.validate(deep);
    ADD_FAILURE() << "expected MT_LIMIT";
  } catch (const metatensor::error& e) {
    EXPECT_EQ(e.kind(), errc::mt_limit);
  }
}

TEST(JsonSchemaArrays, UniqueItemsContainsAndTuples) {
  const auto v =
      check({{"uniqueItems", true}}, json::parse(R"([3, {"a":1,"b":[2]}, 1, {"b":[2.0],"a":1.0}])"));
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->keyword, "uniqueItems");
  EXPECT_NE(v->message.find("items 1 and 3"), std::string::npos) << v->message;
  json nans = json::array({nan, nan});
  EXPECT_TRUE(valid({{"uniqueItems", true}}, nans));
  EXPECT_FALSE(valid({{"uniqueItems", true}}, json::parse("[1, true, 1.0]")));
  EXPECT_TRUE(valid({{"uniqueItems", true}}, json::parse("[1, true, \"1\", [1], {\"1\": 1}, null]")));

  const json c = {{"contains", {{"minimum", 5}}}, {"minContains", 2}, {"maxContains", 3}};
  EXPECT_EQ(failing_keyword(c, json({5, 1})), "minContains");
  EXPECT_TRUE(valid(c, json({5, 6, 1})));
  EXPECT_EQ(failing_keyword(c, json({5, 6, 7, 8})), "maxContains");
  EXPECT_EQ(failing_keyword({{"contains", {{"const", 1}}}}, json::array()), "contains");

  const json tuple = {{"prefixItems", {{{"type", "string"}}, {{"type", "number"}}}}, {"items", false}};
  EXPECT_TRUE(valid(tuple, json({"a", 1})));
  const auto extra = check(tuple, json({"a", 1, 2}));
  ASSERT_TRUE(extra.has_value());
  EXPECT_EQ(extra->pointer, "/2");
  EXPECT_EQ(extra->keyword, "false");
}

TEST(JsonSchemaCombinators, Verdicts) {
  const json one = {{"oneOf", {{{"multipleOf", 2}}, {{"multipleOf", 3}}}}};
  EXPECT_TRUE(valid(one, json(4)));
  EXPECT_EQ(failing_keyword(one, json(6)), "oneOf");
  EXPECT_EQ(failing_keyword(one, json(5)), "oneOf");
  const json any = {{"anyOf", {{{"const", "a"}}, {{"const", "b"}}}}};
  EXPECT_EQ(failing_keyword(any, json("c")), "anyOf");
  EXPECT_EQ(failing_keyword({{"not", {{"type", "string"}}}}, json("x")), "not");
  const json cond = {{"if", {{"minimum", 0}}}, {"then", {{"maximum", 10}}}, {"else", {{"minimum", -10}}}};
  EXPECT_EQ(failing_keyword(cond, json(11)), "maximum");
  EXPECT_EQ(failing_keyword(cond, json(-11)), "minimum");
  EXPECT_TRUE(valid(cond, json(-5)));
  EXPECT_EQ(failing_keyword({{"allOf", {{{"type", "number"}}, {{"maximum", 1}}}}}, json(2)), "maximum");
}

TEST(JsonSchemaEvaluator, MovesKeepTheDocument) {
  const json schema = {{"type", "string"}};
  json_schema_evaluator a(schema);
  json_schema_evaluator b(std::move(a));
  EXPECT_EQ(&b.document(), &schema);
  EXPECT_EQ(b.validate(json(1))->keyword, "type");
}

// An evaluator made from a compiled schema uses the compiler's reading of the
// document (one schema document for both) and keeps it alive.
TEST(JsonSchemaEvaluator, FromACompiledSchema) {
  auto schema = std::make_unique<metatensor::compiled_schema>(metatensor::compile_schema_text(R"({
    "type": "object",
    "$defs": {"mass": {"type": "number", "TypeDef:Float64": true, "minimum": 0}},
    "properties": {"m": {"type": "array", "items": {"$ref": "#/$defs/mass"}}}
  })"));
  const json_schema_evaluator from_schema(*schema);
  const json_schema_evaluator from_json(schema->document());
  EXPECT_EQ(&from_schema.document(), &schema->document());
  const json values[] = {json({{"m", {1.0, 2.0}}}), json({{"m", {1.0, -2.0}}}), json({{"m", "x"}})};
  for (const auto& v : values) {
    const auto a = from_schema.validate(v);
    const auto b = from_json.validate(v);
    ASSERT_EQ(a.has_value(), b.has_value()) << v.dump();
    if (a) {
      EXPECT_EQ(a->pointer, b->pointer);
      EXPECT_EQ(a->keyword, b->keyword);
      EXPECT_EQ(a->message, b->message);
    }
  }
  const json& items = schema->document()["properties"]["m"]["items"];
  schema.reset();  // the evaluator shares the document
  const auto v = from_schema.validate_node(items, json(-1), "/m/0");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->pointer, "/m/0");
  EXPECT_EQ(v->keyword, "minimum");
}

}  // namespace

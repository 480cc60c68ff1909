// The simdjson fast path of header parsing (src/metatensor/fast_json.hpp)
// against the reference path (nlohmann, rule by rule), on valid headers and
// on many random mutations of them: whenever the fast path accepts a text,
// the reference path must accept it too and read the same values (the fast
// path only ever accepts; every failure is named by the reference path).
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "src/metatensor/fast_json.hpp"
#include "src/metatensor/json_dom.hpp"
#include "src/metatensor/strict_json.hpp"
#include "src/metatensor/text.hpp"

namespace {

using metatensor::detail::header_entry;

const metatensor::json_errors header_errors{metatensor::errc::st_header_json,
                                            metatensor::errc::st_duplicate_key, "header"};

// 8-byte length + text + `data` zero bytes (the fast path reads in place when
// at least 64 bytes follow the text, and copies otherwise).
std::vector<std::byte> image_of(const std::string& text, std::size_t data) {
  std::vector<std::byte> out(8 + text.size() + data, std::byte{0});
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = std::byte((text.size() >> (8 * i)) & 0xFF);
  for (std::size_t i = 0; i < text.size(); ++i) out[8 + i] = static_cast<std::byte>(text[i]);
  return out;
}

struct reference_header {
  bool ok = false;
  std::map<std::string, std::string> metadata;
  bool has_metadata = false;
  std::vector<header_entry> entries;
  metatensor::detail::header_storage storage;  // what the entries view
};

reference_header read_reference(const std::string& text) {
  reference_header r;
  try {
    metatensor::detail::read_header_reference(text, r.metadata, r.has_metadata, r.entries, r.storage);
    r.ok = true;
  } catch (const metatensor::error&) {
  }
  return r;
}

// Checks the fast path against the reference on `text`; returns whether
// the fast path accepted it.
bool check_header(const std::string& text, std::size_t data) {
  const auto image = image_of(text, data);
  const auto fast = metatensor::detail::read_header_fast(image, text.size());
  if (!fast) return false;
  const auto ref = read_reference(text);
  EXPECT_TRUE(ref.ok) << "fast path accepts what the reference rejects: " << text;
  if (!ref.ok) return true;
  EXPECT_EQ(fast->has_metadata, ref.has_metadata) << text;
  const std::map<std::string, std::string> fast_metadata(fast->metadata.begin(), fast->metadata.end());
  EXPECT_EQ(fast_metadata, ref.metadata) << text;
  EXPECT_EQ(fast->entries.size(), ref.entries.size()) << text;
  for (std::size_t i = 0; i < std::min(fast->entries.size(), ref.entries.size()); ++i) {
    const auto& a = fast->entries[i];
    const auto& b = ref.entries[i];
    EXPECT_EQ(a.name, b.name) << text;
    EXPECT_EQ(a.type, b.type) << text;
    EXPECT_TRUE(std::ranges::equal(a.shape, b.shape)) << text;
    EXPECT_EQ(a.begin, b.begin) << text;
    EXPECT_EQ(a.end, b.end) << text;
  }
  return true;
}

// The same for an embedded document: equal values and equal number kinds
// (nlohmann tells unsigned, signed and float apart; the schema code does too).
bool same_json(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.type() != b.type()) return false;
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (const auto& [k, v] : a.items()) {
      if (!b.contains(k) || !same_json(v, b.at(k))) return false;
    }
    return true;
  }
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!same_json(a[i], b[i])) return false;
    }
    return true;
  }
  return a == b && a.dump() == b.dump();
}

bool check_document(const std::string& text) {
  const auto fast = metatensor::detail::parse_json_fast(text);
  if (!fast) return false;
  try {
    const auto ref = metatensor::parse_strict_json_reference(text, header_errors);
    EXPECT_TRUE(same_json(*fast, ref)) << text << "\nfast: " << fast->dump() << "\nref:  " << ref.dump();
  } catch (const metatensor::error& e) {
    ADD_FAILURE() << "fast path accepts what the reference rejects (" << e.what() << "): " << text;
  }
  return true;
}

const std::string valid_header = R"({"__metadata__":{"k":"v\"\u00e9\n","metatensor.version":"1"},)"
                                 R"("b":{"dtype":"F32","shape":[2,1],"data_offsets":[8,16]},)"
                                 R"( "a" : {"shape":[],"dtype":"U8","data_offsets":[0,1]},)"
                                 R"("z\u0041":{"data_offsets":[1,8],"dtype":"I8","shape":[7]}}   )";

const std::string valid_document =
    R"({"type":"object","properties":{"x":{"type":"array","items":{"type":"number","minimum":-1.5e3,)"
    R"("maximum":9007199254740991,"TypeDef:Float32":true}},"y":[null,false,true,-7,0,"s\ud83d\ude00"]},)"
    R"("required":["x"],"big":18446744073709551615,"f":0.1})";

TEST(FastJson, ValidHeaderMatchesReference) {
  EXPECT_TRUE(check_header(valid_header, 16));   // in place (>= 64 bytes follow with the padding)
  EXPECT_TRUE(check_header(valid_header, 100));  // in place
  EXPECT_TRUE(check_header(R"({"__metadata__":null})", 0));
  EXPECT_TRUE(check_header("{}", 0));
}

TEST(FastJson, DeclinesWhatOnlyTheReferenceCanName) {
  // Each of these is refused by the reference path; the fast path must
  // leave them to it.
  const char* const bad[] = {
      R"({"a":{"dtype":"U8","shape":[-0],"data_offsets":[0,0]}})",
      R"({"a":{"dtype":"U8","shape":[1.0],"data_offsets":[0,1]}})",
      R"({"a":{"dtype":"U8","shape":[9007199254740992],"data_offsets":[0,0]}})",
      R"({"a":{"dtype":"U8","shape":[],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[],"data_offsets":[1,2]}})",
      R"({"__metadata__":{"k":"1","k":"2"}})",
      R"({"__metadata__":{"k":1}})",
      R"({"a":{"dtype":"u8","shape":[],"data_offsets":[0,1]}})",
      R"({"a":{"dtype":"U8","shape":[],"data_offsets":[0,1],"x":1}})",
      R"({"a":{"dtype":"U8","shape":[],"data_offsets":[2,1]}})",
      R"({"a":{"dtype":"U8","shape":[]}})",
      R"({} {})",
      "\xEF\xBB\xBF{}",
      R"({"a":"\udc00"})",
      "[]",
  };
  for (const char* text : bad) {
    EXPECT_FALSE(check_header(text, 64)) << text;
  }
  EXPECT_FALSE(check_header(std::string("{}\0", 3), 64));
  EXPECT_FALSE(check_document(R"({"a":1,"a":2})"));
  EXPECT_FALSE(check_document(R"([-0])"));
  EXPECT_FALSE(check_document(std::string(65, '[') + std::string(65, ']')));
  EXPECT_TRUE(check_document(std::string(64, '[') + std::string(64, ']')));
}

// Names of ~120 bytes sharing a 100-byte prefix (as in large models), in
// the order `order` gives: the fast path reads them in name order whether the
// text lists them sorted or not, as the reference does.
std::string long_names_header(const std::vector<std::size_t>& order) {
  std::string text = "{";
  for (const std::size_t i : order) {
    if (text.size() > 1) text += ',';
    std::string name = "model." + std::string(94, 'p') + "." + std::to_string(i) + ".weight";
    text += "\"" + name + "\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[" + std::to_string(i) + "," +
            std::to_string(i + 1) + "]}";
  }
  return text + "}";
}

TEST(FastJson, LongSharedPrefixNamesInAnyOrder) {
  std::vector<std::size_t> order(3000);
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [](std::size_t a, std::size_t b) {
    return std::to_string(a) < std::to_string(b);  // the names' byte order
  });
  const std::string sorted = long_names_header(order);
  EXPECT_TRUE(check_header(sorted, 64));
  std::mt19937 rng(4);
  std::shuffle(order.begin(), order.end(), rng);
  const std::string shuffled = long_names_header(order);
  EXPECT_TRUE(check_header(shuffled, 64));
  const auto image = image_of(shuffled, 64);  // the names view it
  const auto fast = metatensor::detail::read_header_fast(image, shuffled.size());
  ASSERT_TRUE(fast);
  ASSERT_EQ(fast->entries.size(), order.size());
  for (std::size_t i = 1; i < fast->entries.size(); ++i)
    EXPECT_LT(fast->entries[i - 1].name, fast->entries[i].name);
  // A duplicate far from its twin (not adjacent in the text) or right next to
  // it in a sorted text: the fast path declines, the reference names it.
  for (const std::size_t at : {std::size_t{0}, std::size_t{1500}, order.size() - 1}) {
    auto dup = order;
    dup.insert(dup.begin() + static_cast<std::ptrdiff_t>(at), order[order.size() / 2]);
    EXPECT_FALSE(check_header(long_names_header(dup), 64)) << at;
  }
  std::vector<std::size_t> sorted_dup(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) sorted_dup[i] = i;
  std::sort(sorted_dup.begin(), sorted_dup.end(),
            [](std::size_t a, std::size_t b) { return std::to_string(a) < std::to_string(b); });
  sorted_dup.insert(sorted_dup.begin() + 10, sorted_dup[10]);
  EXPECT_FALSE(check_header(long_names_header(sorted_dup), 64));
}

// What only the reference can read (`-0`, NUL) at any offset, across the
// 64-byte blocks of the scan of embedded documents and of simdjson's stage 1,
// anywhere in a header's entry or after it, sends the text the reference way;
// a `0` there does not.
TEST(FastJson, NegativeZeroAndNulFoundAtEveryOffset) {
  for (std::size_t pad = 0; pad < 200; ++pad) {
    const std::string head = R"({"a":{"dtype":"U8","shape":[)" + std::string(pad, ' ');
    const std::string tail = R"(],"data_offsets":[0,0]}})";
    EXPECT_TRUE(check_header(head + "0" + tail, 64)) << pad;
    EXPECT_FALSE(check_header(head + "-0" + tail, 64)) << pad;
    EXPECT_FALSE(check_header(head + std::string("\0", 1) + "0" + tail, 64)) << pad;
    EXPECT_FALSE(check_header(head + "0" + tail + std::string(pad % 70, ' ') + std::string("\0", 1), 64))
        << pad;
    EXPECT_TRUE(check_document("[" + std::string(pad, ' ') + "0]")) << pad;
    EXPECT_FALSE(check_document("[" + std::string(pad, ' ') + "-0]")) << pad;
    EXPECT_FALSE(check_document("[" + std::string(pad, ' ') + "0]" + std::string("\0", 1))) << pad;
  }
}

// The fast path walks simdjson's structural index (names as views of the
// text, a string ending at its last quote before the next token): spaces
// everywhere, escaped quotes after runs of backslashes, escaped names and
// field names, and `-0` inside names and metadata strings, where it is no
// number.
TEST(FastJson, TokenWalkAgreesWithReference) {
  const std::string text = R"json({
  "__metadata__" : {"k\\" : "v \"-0\\\\", "x":"[-0]", "y\"":"}{"} ,
  "a-0" :	{ "shape" : [ 2 ] , "dtype" : "U8", "data_offsets" : [SHAPE_A, 2] },
  "b\\\"c" : {"d\u0074ype":"\u0055\u0038","shape":[],"data_offsets":[2,3]},
  "\u00e9\/" : {"dtype":"U8","shape":[SHAPE_E],"data_offsets":[3,3]},
  "z" : {"dtype":"U8","shape":[1],"data_offsets":[3,4]}
}  )json";
  const auto with = [&](const std::string& a, const std::string& e) {
    std::string t = text;
    t.replace(t.find("SHAPE_A"), 7, a);
    t.replace(t.find("SHAPE_E"), 7, e);
    return t;
  };
  EXPECT_TRUE(check_header(with("0", "0"), 64));
  EXPECT_TRUE(check_header(with("0", "0"), 0));  // parsed from a copy, names still view the image
  EXPECT_FALSE(check_header(with("-0", "0"), 64));
  EXPECT_FALSE(check_header(with(" -0 ", "0"), 64));
  EXPECT_FALSE(check_header(with("0", "-0"), 64));
  EXPECT_FALSE(check_header(with("0", "0,-0"), 64));
}

TEST(FastJson, ValidDocumentMatchesReference) {
  EXPECT_TRUE(check_document(valid_document));
}

// The scan for bytes that send a text to the reference path (a NUL, a `-0`
// after `[`, `,`, `:` or at the start, a BOM), 64 bytes at a time, agrees
// with a byte-by-byte reading: random texts of those bytes and others, seen
// through views that end anywhere, so a `-` at a view's end is followed in
// memory by a `0` the scan must not read.
TEST(FastJson, NeedsReferencePathAgreesWithByteByByteReading) {
  const auto by_bytes = [](std::string_view t) {
    if (t.starts_with("\xEF\xBB\xBF")) return true;
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (t[i] == '\0') return true;
      if (t[i] != '-' || i + 1 == t.size() || t[i + 1] != '0') continue;
      std::size_t q = i;
      while (q > 0 && (t[q - 1] == ' ' || t[q - 1] == '\n' || t[q - 1] == '\t' || t[q - 1] == '\r')) --q;
      if (q == 0 || t[q - 1] == '[' || t[q - 1] == ',' || t[q - 1] == ':') return true;
    }
    return false;
  };
  std::mt19937 rng(29);
  const std::string alphabet = std::string("-0-0[,: \n\"a1") + '\0';
  int hits = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::string t(rng() % 300, 'a');
    // Mostly plain text, with a few of the bytes that matter in most texts.
    const unsigned share = 1 + rng() % 20;
    for (auto& c : t) {
      if (rng() % 100 < share) c = alphabet[rng() % alphabet.size()];
    }
    if (rng() % 50 == 0) t.insert(0, "\xEF\xBB\xBF");
    t += "0";  // read past a view's end, this would turn a final `-` into `-0`
    const std::size_t size = rng() % t.size();
    const std::string_view view(t.data(), size);
    const bool want = by_bytes(view);
    ASSERT_EQ(metatensor::detail::needs_reference_path(view), want)
        << testing::PrintToString(std::string(view));
    hits += want ? 1 : 0;
  }
  EXPECT_GT(hits, 2000);
  EXPECT_LT(hits, 18000);
}

// The fast path walks simdjson's structural index (no DOM): texts that are
// not JSON, or not the grammar of a header, in every token it reads, go to
// the reference path; a metadata string keeps simdjson's padding after it.
TEST(FastJson, TokenWalkDeclinesMalformedText) {
  const std::string entry = R"("dtype":"U8","shape":[1],"data_offsets":[0,1])";
  const std::string bad[] = {
      "{\"a\x01\":{" + entry + "}}",                                 // control character in a name
      "{\"__metadata__\":{\"k\":\"v\x1f\"},\"a\":{" + entry + "}}",  // ... in a metadata value
      R"({"a\q":{)" + entry + "}}",                                  // invalid escape
      R"({"a\ud800":{)" + entry + "}}",                              // lone surrogate
      R"({"__metadata__":{"k":"\ud800x"}})",
      R"({"a":{"dtype":"U\8","shape":[1],"data_offsets":[0,1]}})",
      R"({"a":{"dtype":"U8","shape":[1 2],"data_offsets":[0,2]}})",  // missing comma
      R"({"a":{"dtype":"U8","shape":[1,],"data_offsets":[0,1]}})",
      R"({"a":{"dtype":"U8","shape":[,1],"data_offsets":[0,1]}})",
      R"({"a":{"dtype":"U8","shape":[01],"data_offsets":[0,1]}})",  // leading zero
      R"({"a":{"dtype":"U8","shape":[1e0],"data_offsets":[0,1]}})",
      R"({"a":{"dtype":"U8","shape":[+1],"data_offsets":[0,1]}})",
      R"({"a":{"dtype":"U8","shape":[1x],"data_offsets":[0,1]}})",
      R"({"a":{"dtype":"U8","shape":[true],"data_offsets":[0,1]}})",
      R"({"a":{"dtype":"U8","shape":[99999999999999999],"data_offsets":[0,0]}})",
      R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1,2]}})",
      R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0]}})",
      R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})"
      "x",
      R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})"
      "]",
      R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]})",  // unclosed
      R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},})",
      R"({"a" {"dtype":"U8","shape":[1],"data_offsets":[0,1]}})",
      R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]} "b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
      R"({"a":{"dtype":"U8","dtype":"U8","shape":[1],"data_offsets":[0,1]}})",
      R"({"a":{"dtype":"U8","shape":[[1]],"data_offsets":[0,1]}})",
      R"({"\u005f_metadata__":{)" + entry + "}}",  // the metadata, spelled with an escape
      R"({"__metadata__":nul})",
      R"({"__metadata__":nullx})",
      R"({"__metadata__":{"k":"v",}})",
      R"({"__metadata__":{"k":null}})",
      R"({"__metadata__":"v"})",
      R"({"a":"x" "y"})",
      R"("a")",
      "",
  };
  for (const std::string& text : bad) {
    EXPECT_FALSE(check_header(text, 64)) << text;
    EXPECT_FALSE(check_header(text, 0)) << text;
  }
  // An escaped NUL in a name or a metadata string: whichever path reads it,
  // the values agree (check_header compares whatever the fast path accepts).
  check_header(R"({"a\u0000b":{)" + entry + "}}", 64);
  check_header(R"({"__metadata__":{"k\u0000":"v\u0000"}})", 64);
  // Escaped field names, dtype and names, and metadata strings are undone.
  const std::string escaped =
      R"({"__metadata__":{"k\u00e9":"a\"b\\c\u00e9\n"},)"
      R"("n\u0041me":{"d\u0074ype":"\u00558","sh\u0061pe":[3],"data_offsets":[0,3]}})";
  EXPECT_TRUE(check_header(escaped, 64));
  EXPECT_TRUE(check_header(escaped, 0));
  const auto image = image_of(escaped, 0);
  const auto fast = metatensor::detail::read_header_fast(image, escaped.size());
  ASSERT_TRUE(fast);
  ASSERT_EQ(fast->entries.size(), 1U);
  EXPECT_EQ(fast->entries[0].name, "nAme");
  ASSERT_EQ(fast->metadata.size(), 1U);
  EXPECT_EQ(fast->metadata[0].first, "k\xc3\xa9");
  EXPECT_EQ(fast->metadata[0].second, "a\"b\\c\xc3\xa9\n");
  // Whatever a metadata string holds is parsed in place: the padding fits.
  EXPECT_GE(fast->metadata[0].second.capacity(),
            fast->metadata[0].second.size() + simdjson::SIMDJSON_PADDING);
}

// Random single-byte edits of the valid texts: whatever the fast path
// accepts, the reference accepts with the same values.
TEST(FastJson, MutationsAgreeWithReference) {
  std::mt19937 rng(27);
  const std::string alphabet =
      std::string("{}[],:\"\\-+.0123456789eEuU \t\n\r\x01\x7f\xc3\xa9\xff\xed\xa0 aAnulltruefalse") + '\0';
  int accepted = 0;
  for (const std::string* base : {&valid_header, &valid_document}) {
    for (int iter = 0; iter < 20000; ++iter) {
      std::string t = *base;
      const int edits = 1 + static_cast<int>(rng() % 3);
      for (int e = 0; e < edits && !t.empty(); ++e) {
        const std::size_t pos = rng() % t.size();
        const char c = alphabet[rng() % alphabet.size()];
        switch (rng() % 3) {
          case 0: t[pos] = c; break;
          case 1: t.erase(pos, 1); break;
          default: t.insert(t.begin() + static_cast<std::ptrdiff_t>(pos), c); break;
        }
      }
      const bool ok = base == &valid_header ? check_header(t, rng() % 2 == 0 ? 0 : 64) : check_document(t);
      accepted += ok ? 1 : 0;
    }
  }
  // Some mutants stay valid (e.g. an edited string), so both sides of the
  // comparison are exercised.
  EXPECT_GT(accepted, 100);
}

// The metadata strings a header carries (schema, layout table) are copied
// with room for the parser's padding and parsed in place; a short or
// unpadded text is copied by the parser. Both read the same document.
TEST(FastJson, DocumentsParsedInPlaceOrCopiedAlike) {
  std::string doc = "{\"tensors\":{";
  for (int i = 0; i < 400; ++i) {
    if (i > 0) doc += ',';
    doc += "\"tensor." + std::to_string(1000 + i) + "\":{\"rank\":" + std::to_string(i % 5) + "}";
  }
  doc += "}}";
  ASSERT_GE(doc.size(), 4096U);
  const std::string ready = metatensor::detail::parse_ready_copy(doc);
  EXPECT_EQ(ready, doc);
  EXPECT_GE(ready.capacity(), ready.size() + 64);
  const std::string shorter = metatensor::detail::parse_ready_copy("{\"a\":1}");
  EXPECT_EQ(shorter, "{\"a\":1}");

  simdjson::dom::parser in_place;
  simdjson::dom::parser copied;
  const auto a = metatensor::detail::parse_strict_dom(ready, in_place, ready.capacity());
  const auto b = metatensor::detail::parse_strict_dom(doc, copied);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(simdjson::to_string(*a), simdjson::to_string(*b));
  // A capacity claimed but too small for the padding: the parser copies.
  const auto c = metatensor::detail::parse_strict_dom(doc, copied, doc.size() + 1);
  ASSERT_TRUE(c);
  EXPECT_EQ(simdjson::to_string(*c), simdjson::to_string(*a));
  // The strict checks hold in place too: a duplicate key is declined.
  std::string dup =
      metatensor::detail::parse_ready_copy("{\"k\":1,\"k\":2," + std::string(5000, ' ') + "\"z\":0}");
  EXPECT_FALSE(metatensor::detail::parse_strict_dom(dup, in_place, dup.capacity()));
}

// JSON Pointer tokens (RFC 6901 §3): '~' and '/' escaped wherever they
// occur, the rest appended whole.
TEST(FastJson, PointerTokensEscapeTildeAndSlash) {
  const auto token = [](std::string_view t) {
    std::string p = "/properties";
    metatensor::detail::append_pointer_token(p, t);
    return p;
  };
  EXPECT_EQ(token("layer.0.weight"), "/properties/layer.0.weight");
  EXPECT_EQ(token(""), "/properties/");
  EXPECT_EQ(token("a~b/c"), "/properties/a~0b~1c");
  EXPECT_EQ(token("~"), "/properties/~0");
  EXPECT_EQ(token("//~~"), "/properties/~1~1~0~0");
  EXPECT_EQ(token("x/"), "/properties/x~1");
  EXPECT_EQ(token("~01"), "/properties/~001");
}

}  // namespace

// The transport-free streaming protocol (spec 06 §10.3–§10.6): varints
// against RFC 9000's examples, frames split at every byte boundary, the JSON
// payloads' defaults and refusals, and the client's check of a tensor stream
// (the §13 case "a server that sends a short DATA frame makes the client
// fail", without a network).
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "src/metatensor/streaming/protocol/stream_protocol.hpp"

namespace {

namespace ms = metatensor::streaming;
using bytes = std::vector<std::byte>;

bytes hex(std::initializer_list<unsigned> v) {
  bytes out;
  for (unsigned x : v) out.push_back(static_cast<std::byte>(x));
  return out;
}

bytes text(std::string_view s) {
  bytes out;
  for (char c : s) out.push_back(static_cast<std::byte>(c));
  return out;
}

ms::stream_errc code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ms::protocol_error& e) {
    return e.code();
  }
  ADD_FAILURE() << "no protocol_error";
  return ms::stream_errc::no_error;
}

// RFC 9000 §A.1's sample varints.
TEST(StreamVarint, RfcExamples) {
  const std::vector<std::pair<bytes, std::uint64_t>> cases = {
      {hex({0x25}), 37},
      {hex({0x7b, 0xbd}), 15293},
      {hex({0x9d, 0x7f, 0x3e, 0x7d}), 494878333},
      {hex({0xc2, 0x19, 0x7c, 0x5e, 0xff, 0x14, 0xe8, 0x8c}), 151288809941952652ULL},
  };
  for (const auto& [enc, value] : cases) {
    const auto r = ms::read_varint(enc);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->value, value);
    EXPECT_EQ(r->length, enc.size());
    bytes out;
    ms::append_varint(out, value);
    EXPECT_EQ(out, enc) << value;  // the shortest form
    // Any prefix is incomplete.
    for (std::size_t n = 0; n < enc.size(); ++n) {
      EXPECT_FALSE(ms::read_varint(std::span(enc).first(n)).has_value());
    }
  }
  // RFC 9000 allows a longer form than needed: 0x40 0x25 is also 37.
  EXPECT_EQ(ms::read_varint(hex({0x40, 0x25}))->value, 37u);
  bytes out;
  ms::append_varint(out, ms::max_varint);
  EXPECT_EQ(ms::read_varint(out)->value, ms::max_varint);
  EXPECT_THROW(ms::append_varint(out, ms::max_varint + 1), std::invalid_argument);
}

TEST(StreamFrames, ErrorCodeNames) {
  EXPECT_EQ(ms::stream_errc_name(0x0), "MT_NO_ERROR");
  EXPECT_EQ(ms::stream_errc_name(0x5), "MT_BAD_RANGE");
  EXPECT_EQ(ms::stream_errc_name(0x9), "MT_INVALID_FILE");
  EXPECT_EQ(ms::stream_errc_name(0x1f), "MT_UNKNOWN(0x1f)");
  const ms::protocol_error e(ms::stream_errc::frame_error, "x");
  EXPECT_EQ(std::string(e.what()), "framing error: MT_FRAME_ERROR: x");
}

// A GET frame, byte for byte: type 04, length (one byte, < 64), the JSON.
TEST(StreamFrames, GetFrameBytes) {
  ms::get_payload g;
  g.tensor = "w";
  g.range = ms::byte_range{2, 10};
  const bytes f = ms::encode(g);
  const std::string json = R"({"incremental":false,"range":[2,10],"tensor":"w","urgency":3})";
  bytes want = hex({0x04, static_cast<unsigned>(json.size())});
  const bytes body = text(json);
  want.insert(want.end(), body.begin(), body.end());
  EXPECT_EQ(f, want);
}

TEST(StreamFrames, ReaderSplitsFramesFedByteByByte) {
  bytes stream;
  for (const bytes& f :
       {ms::encode(ms::open_payload{"weights.mt", {"1"}}),
        ms::encode(ms::opened_payload{"1", 1000, 120, std::string("\"v7\"")}),
        ms::encode(ms::priority_update_payload{4, 0, true}), ms::encode(ms::goaway_payload{8})}) {
    stream.insert(stream.end(), f.begin(), f.end());
  }
  ms::frame_reader r;
  std::vector<ms::frame> got;
  for (std::byte b : stream) {
    r.feed(std::span(&b, 1));
    while (auto f = r.next()) got.push_back(std::move(*f));
  }
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(r.pending(), 0u);
  EXPECT_EQ(ms::parse_open(got[0].payload).resource, "weights.mt");
  const ms::opened_payload o = ms::parse_opened(got[1].payload);
  EXPECT_EQ(o.file_size, 1000u);
  EXPECT_EQ(o.header_size, 120u);
  EXPECT_EQ(o.etag, "\"v7\"");
  const ms::priority_update_payload u = ms::parse_priority_update(got[2].payload);
  EXPECT_EQ(u.stream, 4u);
  EXPECT_EQ(u.urgency, 0);
  EXPECT_TRUE(u.incremental);
  EXPECT_EQ(ms::parse_goaway(got[3].payload).last_stream, 8u);
}

TEST(StreamFrames, UnknownTypesAndOversizedFramesFailEarly) {
  {
    ms::frame_reader r;
    r.feed(hex({0x0A, 0x00}));
    EXPECT_EQ(code_of([&] { (void)r.next(); }), ms::stream_errc::frame_error);
  }
  {
    ms::frame_reader r;
    r.feed(hex({0x00}));
    EXPECT_EQ(code_of([&] { (void)r.next(); }), ms::stream_errc::frame_error);
  }
  {
    // A GET claiming 1 MiB + 1 bytes fails on its length, before any payload.
    bytes f;
    ms::append_varint(f, 0x04);
    ms::append_varint(f, ms::max_control_json + 1);
    ms::frame_reader r;
    r.feed(f);
    EXPECT_EQ(code_of([&] { (void)r.next(); }), ms::stream_errc::frame_error);
  }
  {
    // DATA is bounded by what the caller announced, once.
    bytes f;
    ms::append_frame(f, ms::frame_type::data, hex({1, 2, 3}));
    ms::frame_reader none;
    none.feed(f);
    EXPECT_EQ(code_of([&] { (void)none.next(); }), ms::stream_errc::frame_error);
    ms::frame_reader r;
    r.expect_payload_limit(3);
    r.feed(f);
    r.feed(f);
    const auto first = r.next();
    ASSERT_TRUE(first.has_value());
    EXPECT_EQ(first->payload, hex({1, 2, 3}));
    EXPECT_EQ(code_of([&] { (void)r.next(); }), ms::stream_errc::frame_error);
  }
}

TEST(StreamPayloads, DefaultsAndUnknownMembers) {
  const ms::get_payload g = ms::parse_get(text(R"({"tensor":"a","future":{"x":1}})"));
  EXPECT_EQ(g.tensor, "a");
  EXPECT_FALSE(g.range.has_value());
  EXPECT_EQ(g.urgency, 3);
  EXPECT_FALSE(g.incremental);
  const ms::error_payload e = ms::parse_error(text(R"({"code":4,"message":"no tensor \"b\""})"));
  EXPECT_EQ(e.code, 4u);
  EXPECT_EQ(e.message, "no tensor \"b\"");
}

TEST(StreamPayloads, MalformedPayloadsAreFrameErrors) {
  for (const char* bad : {
           R"({"tensor":"a","urgency":8})",  // urgency 0..7
           R"({"tensor":"a","urgency":-1})",
           R"({"tensor":"a","incremental":1})",  // not a boolean
           R"({"tensor":"a","range":[5,3]})",    // begins after it ends
           R"({"tensor":"a","range":[1]})",
           R"({"tensor":"a","tensor":"b"})",  // duplicate key
           R"({"tensor":7})",
           R"(["tensor","a"])",      // not an object
           R"({"tensor":"a")",       // not JSON
           "{\"tensor\":\"\xff\"}",  // not UTF-8
       }) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(code_of([&] { (void)ms::parse_get(text(bad)); }), ms::stream_errc::frame_error);
  }
  EXPECT_EQ(
      code_of([&] { (void)ms::parse_opened(text(R"({"version":"1","file_size":10,"header_size":12})")); }),
      ms::stream_errc::frame_error);
  EXPECT_EQ(code_of([&] { (void)ms::parse_open(text(R"({"resource":"a","versions":[]})")); }),
            ms::stream_errc::frame_error);
}

// ---- the client's check of one tensor stream ---------------------------------

ms::frame frame_from(const bytes& encoded) {
  ms::frame_reader r;
  r.feed(encoded);
  return *r.next();
}

ms::frame data_frame(std::size_t n) {
  return {ms::frame_type::data, bytes(n, std::byte{7})};
}

TEST(TensorStreamCheck, RequestResponseDataFin) {
  ms::get_payload g;
  g.tensor = "w";
  g.range = ms::byte_range{16, 48};
  ms::tensor_stream_check c(g, 1000, 64);  // abs(t) 1000, 64 bytes
  EXPECT_EQ(c.data_size(), 32u);
  EXPECT_FALSE(c.on_frame(frame_from(ms::encode(ms::response_payload{"w", {16, 48}, 1016}))).has_value());
  EXPECT_EQ(c.on_frame(data_frame(32)), 1016u);  // where the bytes go in the file image
  EXPECT_TRUE(c.complete());
  EXPECT_NO_THROW(c.on_fin());
}

TEST(TensorStreamCheck, WholeTensorWhenNoRange) {
  ms::tensor_stream_check c(ms::get_payload{"w", std::nullopt, 3, false}, 8, 100);
  EXPECT_EQ(c.requested(), (ms::byte_range{0, 100}));
  (void)c.on_frame(frame_from(ms::encode(ms::response_payload{"w", {0, 100}, 8})));
  EXPECT_EQ(c.on_frame(data_frame(100)), 8u);
}

TEST(TensorStreamCheck, ShortDataFrameMakesTheClientFail) {
  ms::tensor_stream_check c(ms::get_payload{"w", std::nullopt, 3, false}, 8, 100);
  (void)c.on_frame(frame_from(ms::encode(ms::response_payload{"w", {0, 100}, 8})));
  EXPECT_EQ(code_of([&] { (void)c.on_frame(data_frame(99)); }), ms::stream_errc::protocol_error);
}

TEST(TensorStreamCheck, EveryDeviationIsAProtocolError) {
  const ms::get_payload g{"w", ms::byte_range{0, 10}, 3, false};
  const auto fresh = [&] { return ms::tensor_stream_check(g, 100, 10); };
  {
    auto c = fresh();  // DATA before RESPONSE
    EXPECT_EQ(code_of([&] { (void)c.on_frame(data_frame(10)); }), ms::stream_errc::protocol_error);
  }
  for (const ms::response_payload& wrong :
       {ms::response_payload{"v", {0, 10}, 100}, ms::response_payload{"w", {0, 9}, 100},
        ms::response_payload{"w", {0, 10}, 101}}) {
    auto c = fresh();
    EXPECT_EQ(code_of([&] { (void)c.on_frame(frame_from(ms::encode(wrong))); }),
              ms::stream_errc::protocol_error);
  }
  {
    auto c = fresh();  // the stream ends early
    EXPECT_EQ(code_of([&] { c.on_fin(); }), ms::stream_errc::protocol_error);
    (void)c.on_frame(frame_from(ms::encode(ms::response_payload{"w", {0, 10}, 100})));
    EXPECT_EQ(code_of([&] { c.on_fin(); }), ms::stream_errc::protocol_error);
    (void)c.on_frame(data_frame(10));
    // Nothing may follow DATA.
    EXPECT_EQ(code_of([&] { (void)c.on_frame(data_frame(10)); }), ms::stream_errc::protocol_error);
  }
}

TEST(TensorStreamCheck, ServerErrorsKeepTheirCode) {
  ms::tensor_stream_check c(ms::get_payload{"nope", std::nullopt, 3, false}, 0, 0);
  EXPECT_EQ(code_of([&] {
              (void)c.on_frame(frame_from(ms::encode(ms::error_payload{4, "unknown tensor"})));
            }),
            ms::stream_errc::not_found);
}

TEST(TensorStreamCheck, RangesOutsideTheTensorAreBadRange) {
  EXPECT_EQ(code_of([] {
              ms::tensor_stream_check(ms::get_payload{"w", ms::byte_range{0, 11}, 3, false}, 0, 10);
            }),
            ms::stream_errc::bad_range);
  EXPECT_EQ(
      code_of([] {
        ms::tensor_stream_check(ms::get_payload{"w", ms::byte_range{0, 10}, 3, false}, ~std::uint64_t{0}, 10);
      }),
      ms::stream_errc::bad_range);
}

// ---- the receiver: frames split anywhere, DATA streamed to its destination ---------

bytes whole_stream(const ms::response_payload& r, const bytes& data) {
  bytes out = ms::encode(r);
  ms::append_frame(out, ms::frame_type::data, data);
  return out;
}

TEST(TensorStreamReceiver, DataLandsInTheDestinationWhateverTheSplit) {
  bytes payload(300);
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::byte>(i * 7);
  const bytes stream = whole_stream(ms::response_payload{"w", {100, 400}, 1100}, payload);
  for (const std::size_t piece :
       {std::size_t{1}, std::size_t{2}, std::size_t{5}, std::size_t{64}, stream.size()}) {
    bytes dest(300);
    ms::tensor_stream_receiver r(ms::get_payload{"w", ms::byte_range{100, 400}, 3, false}, 1000, 500, dest);
    for (std::size_t at = 0; at < stream.size(); at += piece) {
      r.feed(std::span<const std::byte>(stream).subspan(at, std::min(piece, stream.size() - at)));
    }
    EXPECT_EQ(r.data_received(), 300u);
    EXPECT_NO_THROW(r.finish());
    EXPECT_EQ(dest, payload) << "pieces of " << piece;
  }
}

TEST(TensorStreamReceiver, EmptyRange) {
  bytes dest;
  ms::tensor_stream_receiver r(ms::get_payload{"w", ms::byte_range{4, 4}, 3, false}, 8, 10, dest);
  r.feed(whole_stream(ms::response_payload{"w", {4, 4}, 12}, {}));
  EXPECT_NO_THROW(r.finish());
}

TEST(TensorStreamReceiver, ShortDataFrameFailsAtTheEnd) {
  bytes dest(100);
  ms::tensor_stream_receiver r(ms::get_payload{"w", std::nullopt, 3, false}, 8, 100, dest);
  const bytes stream = whole_stream(ms::response_payload{"w", {0, 100}, 8}, bytes(100));
  r.feed(std::span<const std::byte>(stream).first(stream.size() - 10));  // the server stops short, then FIN
  EXPECT_EQ(r.data_received(), 90u);
  EXPECT_EQ(code_of([&] { r.finish(); }), ms::stream_errc::protocol_error);
}

TEST(TensorStreamReceiver, ViolationsAndRefusals) {
  const ms::get_payload g{"w", ms::byte_range{0, 10}, 3, false};
  bytes dest(10);
  {  // a DATA frame announcing the wrong size is refused before its payload
    ms::tensor_stream_receiver r(g, 100, 10, dest);
    r.feed(ms::encode(ms::response_payload{"w", {0, 10}, 100}));
    bytes head;
    ms::append_varint(head, 0x06);
    ms::append_varint(head, 1u << 30);
    EXPECT_EQ(code_of([&] { r.feed(head); }), ms::stream_errc::protocol_error);
  }
  {  // unknown frame type
    ms::tensor_stream_receiver r(g, 100, 10, dest);
    EXPECT_EQ(code_of([&] { r.feed(hex({0x2a, 0x00})); }), ms::stream_errc::frame_error);
  }
  {  // a control frame on a tensor stream
    ms::tensor_stream_receiver r(g, 100, 10, dest);
    EXPECT_EQ(code_of([&] { r.feed(ms::encode(ms::goaway_payload{4})); }), ms::stream_errc::protocol_error);
  }
  {  // a JSON frame above 1 MiB fails on its length
    ms::tensor_stream_receiver r(g, 100, 10, dest);
    bytes head;
    ms::append_varint(head, 0x05);
    ms::append_varint(head, (1u << 20) + 1);
    EXPECT_EQ(code_of([&] { r.feed(head); }), ms::stream_errc::frame_error);
  }
  {  // the server's ERROR keeps its code and is marked as a refusal
    ms::tensor_stream_receiver r(g, 100, 10, dest);
    EXPECT_EQ(code_of([&] {
                r.feed(ms::encode(ms::error_payload{5, "bad range"}));
              }),
              ms::stream_errc::bad_range);
    EXPECT_TRUE(r.refused());
  }
  {  // bytes after DATA
    ms::tensor_stream_receiver r(g, 100, 10, dest);
    bytes stream = whole_stream(ms::response_payload{"w", {0, 10}, 100}, bytes(10));
    stream.push_back(std::byte{0x06});
    stream.push_back(std::byte{0x00});
    EXPECT_EQ(code_of([&] { r.feed(stream); }), ms::stream_errc::protocol_error);
    EXPECT_FALSE(r.refused());
  }
  bytes wrong(9);
  EXPECT_THROW(ms::tensor_stream_receiver(g, 100, 10, wrong), std::invalid_argument);
}

}  // namespace

// Frame encoding and the incremental decoder: round trips, every way of
// splitting the byte stream, and each error the decoder reports.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>

#include "msg/crc32c.h"
#include "msg/frame.h"

using namespace strata::msg;
using strata::Status;

namespace {

Message sample(uint16_t type, std::size_t payload, std::vector<std::size_t> segs, uint32_t seed = 1) {
  std::mt19937 rng(seed);
  Message m;
  m.type = type;
  m.payload.resize(payload);
  for (auto &c : m.payload) c = static_cast<char>(rng());
  for (auto n : segs) {
    std::string s(n, '\0');
    for (auto &c : s) c = static_cast<char>(rng());
    m.segments.push_back(std::move(s));
  }
  return m;
}

// Feeds `bytes` in chunks of `chunk`, collecting frames; fails the test on error.
std::vector<Message> decode_all(const std::string &bytes, std::size_t chunk, FrameLimits lim = {}) {
  FrameDecoder dec(lim);
  std::vector<Message> out;
  std::size_t off = 0;
  while (off < bytes.size()) {
    std::size_t n = std::min(chunk, bytes.size() - off);
    auto used = dec.feed(bytes.data() + off, n);
    REQUIRE(used.ok());
    off += used.value();
    if (dec.ready()) out.push_back(dec.take());
  }
  CHECK(dec.at_frame_boundary());
  return out;
}

void require_same(const Message &a, const Message &b) {
  REQUIRE(a.type == b.type);
  REQUIRE(a.payload == b.payload);
  REQUIRE(a.segments == b.segments);
}

// Decodes `bytes` in one go and returns the error message ("" if none).
std::string decode_error(const std::string &bytes, FrameLimits lim = {}) {
  FrameDecoder dec(lim);
  auto used = dec.feed(bytes.data(), bytes.size());
  if (used.ok()) return "";
  CHECK(dec.failed());
  CHECK(used.status().code() == -EBADMSG);
  return used.status().message();
}

void put32(std::string &s, std::size_t off, uint32_t v) {
  for (int i = 0; i < 4; ++i) s[off + i] = static_cast<char>(v >> (8 * i));
}
// Recomputes the header crc after a test edits header fields.
void reseal_header(std::string &frame) { put32(frame, 28, crc32c(frame.data(), 28)); }

}  // namespace

TEST_CASE("crc32c matches the standard check value") {
  CHECK(crc32c("123456789", 9) == 0xE3069283u);
  CHECK(crc32c_extend(crc32c("1234", 4), "56789", 5) == 0xE3069283u);
  CHECK(crc32c("", 0) == 0u);
}

TEST_CASE("frame header layout") {
  Message m = sample(33, 24, {5, 0, 7});
  std::string f = encode_frame(m);
  REQUIRE(f.size() == 32 + 12 + 24 + 12);
  CHECK(f.substr(0, 4) == "STRM");
  auto u16 = [&](int o) { return uint16_t(uint8_t(f[o]) | uint8_t(f[o + 1]) << 8); };
  auto u32 = [&](int o) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | uint8_t(f[o + i]);
    return v;
  };
  CHECK(u16(4) == 33);
  CHECK(u16(6) == 3);
  CHECK(u32(8) == 24);
  CHECK(u32(12) == 12);
  CHECK(u32(16) == crc32c(f.data() + 32, 12 + 24));
  CHECK(u32(20) == crc32c(f.data() + 32 + 12 + 24, 12));
  CHECK(u32(24) == 0);
  CHECK(u32(28) == crc32c(f.data(), 28));
  CHECK(u32(32) == 5);
  CHECK(u32(36) == 0);
  CHECK(u32(40) == 7);
}

TEST_CASE("frames round trip through the decoder at every chunk size") {
  std::vector<Message> msgs = {
      sample(16, 0, {}),              // nothing but a header
      sample(17, 8, {}),              // payload only
      sample(18, 0, {0, 0}),          // empty segments
      sample(19, 40, {1, 0, 300}),
      sample(20, 4096, {4096}),
      sample(21, 0, {100000}),        // large segment, no payload
  };
  std::string stream;
  for (const auto &m : msgs) stream += encode_frame(m);
  for (std::size_t chunk : {std::size_t{1}, std::size_t{3}, std::size_t{31}, std::size_t{32},
                            std::size_t{33}, std::size_t{4096}, stream.size()}) {
    INFO("chunk " << chunk);
    auto out = decode_all(stream, chunk);
    REQUIRE(out.size() == msgs.size());
    for (std::size_t i = 0; i < msgs.size(); ++i) require_same(out[i], msgs[i]);
  }
}

TEST_CASE("want/commit receives frames in place") {
  Message m = sample(40, 1000, {70000, 5});
  std::string f = encode_frame(m);
  FrameDecoder dec;
  std::size_t off = 0;
  while (!dec.ready()) {
    auto w = dec.want();
    REQUIRE(!w.empty());
    std::size_t n = std::min<std::size_t>(w.size(), 5000);
    std::memcpy(w.data(), f.data() + off, n);
    off += n;
    REQUIRE(dec.commit(n).ok());
  }
  CHECK(off == f.size());
  require_same(dec.take(), m);
  CHECK(dec.at_frame_boundary());
  CHECK(!dec.commit(dec.want().size() + 1).ok());  // more than wanted
}

TEST_CASE("check_encodable enforces the limits") {
  FrameLimits lim{100, 1000, 2};
  CHECK(check_encodable(sample(16, 100, {500, 500}), lim).ok());
  Status s = check_encodable(sample(16, 101, {}), lim);
  CHECK(s.code() == -EMSGSIZE);
  CHECK_THAT(s.message(), Catch::Contains("payload"));
  CHECK_THAT(check_encodable(sample(16, 0, {1, 1, 1}), lim).message(), Catch::Contains("segments"));
  CHECK_THAT(check_encodable(sample(16, 0, {600, 401}), lim).message(), Catch::Contains("data bytes"));
  CHECK(check_encodable(sample(16, 0, std::vector<std::size_t>(70000, 0)),
                        FrameLimits{100, 1000, 100000})
            .code() == -EMSGSIZE);  // the u16 segment count
}

TEST_CASE("decoder errors name the problem") {
  Message m = sample(33, 64, {10, 20});
  const std::string good = encode_frame(m);
  REQUIRE(decode_error(good).empty());

  SECTION("bad magic") {
    std::string f = good;
    f[0] = 'X';
    CHECK_THAT(decode_error(f), Catch::Contains("bad frame magic"));
  }
  SECTION("header crc") {
    std::string f = good;
    f[8] ^= 1;  // payload_len, crc not updated
    CHECK_THAT(decode_error(f), Catch::Contains("header crc mismatch"));
  }
  SECTION("payload too large") {
    CHECK_THAT(decode_error(good, FrameLimits{63, 1000, 10}), Catch::Contains("payload too large"));
  }
  SECTION("too many segments") {
    CHECK_THAT(decode_error(good, FrameLimits{1000, 1000, 1}), Catch::Contains("too many data segments"));
  }
  SECTION("data too large") {
    CHECK_THAT(decode_error(good, FrameLimits{1000, 29, 10}), Catch::Contains("data too large"));
  }
  SECTION("segment lengths disagree with data_len") {
    std::string f = good;
    put32(f, 12, 31);
    reseal_header(f);
    f += std::string(1, 'x');
    CHECK_THAT(decode_error(f), Catch::Contains("segment lengths add up to 30"));
  }
  SECTION("payload crc") {
    std::string f = good;
    f[32 + 8 + 5] ^= 0x40;
    CHECK_THAT(decode_error(f), Catch::Contains("payload crc mismatch"));
  }
  SECTION("segment table covered by the payload crc") {
    std::string f = good;
    put32(f, 32, 11);
    put32(f, 36, 19);
    CHECK_THAT(decode_error(f), Catch::Contains("payload crc mismatch"));
  }
  SECTION("data crc") {
    std::string f = good;
    f[f.size() - 1] ^= 1;
    CHECK_THAT(decode_error(f), Catch::Contains("data crc mismatch"));
  }
  SECTION("the error sticks") {
    std::string f = good;
    f[0] = 'X';
    FrameDecoder dec;
    CHECK(!dec.feed(f.data(), f.size()).ok());
    CHECK(!dec.feed(good.data(), good.size()).ok());
    CHECK(dec.want().empty());
    CHECK(!dec.commit(0).ok());
    CHECK_THAT(dec.error().message(), Catch::Contains("bad frame magic"));
  }
}

TEST_CASE("limits apply from the next frame header") {
  Message big = sample(50, 2000, {});
  std::string two = encode_frame(sample(50, 8, {})) + encode_frame(big);
  FrameDecoder dec(FrameLimits{16, 0, 0});
  auto used = dec.feed(two.data(), two.size());
  REQUIRE(used.ok());
  REQUIRE(dec.ready());
  dec.take();
  dec.set_limits(FrameLimits{4096, 0, 0});
  auto rest = dec.feed(two.data() + used.value(), two.size() - used.value());
  REQUIRE(rest.ok());
  REQUIRE(dec.ready());
  require_same(dec.take(), big);
}

TEST_CASE("a truncated frame is incomplete, not an error") {
  std::string f = encode_frame(sample(33, 64, {10}));
  for (std::size_t cut = 0; cut < f.size(); ++cut) {
    FrameDecoder dec;
    auto used = dec.feed(f.data(), cut);
    REQUIRE(used.ok());
    CHECK(!dec.ready());
    CHECK(dec.at_frame_boundary() == (cut == 0));
  }
}

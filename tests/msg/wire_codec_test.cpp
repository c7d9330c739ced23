// Cap'n Proto payloads through make_message / read_message / segment.
#include <catch2/catch.hpp>

#include "msg/message_types.h"
#include "msg/schema/wire.capnp.h"
#include "msg/wire_codec.h"

using namespace strata::msg;
using strata::Status;

TEST_CASE("a message round trips through the payload helpers") {
  capnp::MallocMessageBuilder b;
  auto req = b.initRoot<strata::wire::OpRequest>();
  req.setTid(42);
  req.setOid("obj");
  auto ops = req.initOps(1);
  ops[0].setCode(strata::wire::OpCode::WRITE_FULL);
  ops[0].setDataSeg(0);
  Message m = make_message(kMsgOpRequest, b, {"DATA"});
  CHECK(m.type == kMsgOpRequest);
  CHECK(m.payload.size() % 8 == 0);
  // Unaligned copies are fine: the reader copies into aligned words.
  std::string shifted = "x" + m.payload;
  m.payload = shifted.substr(1);
  Status s = read_message<strata::wire::OpRequest>(m, "OpRequest", [&](strata::wire::OpRequest::Reader r) {
    CHECK(r.getTid() == 42);
    CHECK(r.getOid() == "obj");
    auto seg = segment(m, r.getOps()[0].getDataSeg(), "OpRequest");
    REQUIRE(seg.ok());
    CHECK(seg.value() == "DATA");
    CHECK(!segment(m, 1, "OpRequest").ok());
    CHECK(!segment(m, -1, "OpRequest").ok());
    return Status::OK();
  });
  CHECK(s.ok());
}

TEST_CASE("read_message reports bad payloads as errors") {
  auto read = [](std::string payload) {
    Message m;
    m.type = kMsgOpReply;
    m.payload = std::move(payload);
    return read_message<strata::wire::OpReply>(m, "OpReply from osd.1", [](strata::wire::OpReply::Reader r) {
      (void)r.toString();  // touches everything
      return Status::OK();
    });
  };
  Status s = read("");
  CHECK(s.code() == -EBADMSG);
  CHECK_THAT(s.message(), Catch::StartsWith("OpReply from osd.1: "));
  CHECK(!read("1234567").ok());
  // Segment table claims far more data than present.
  CHECK_THAT(read(std::string("\0\0\0\0\xff\xff\0\0", 8)).message(), Catch::Contains("OpReply from osd.1"));
  // A root pointer to beyond the segment.
  std::string bad("\0\0\0\0\x02\0\0\0" "\x7c\0\0\0\x01\0\x01\0" "\0\0\0\0\0\0\0\0", 24);
  CHECK(!read(bad).ok());
  // Trailing garbage after the message.
  capnp::MallocMessageBuilder b;
  b.initRoot<strata::wire::OpReply>().setTid(1);
  CHECK(!read(to_payload(b) + std::string(8, '\0')).ok());
  CHECK(read(to_payload(b)).ok());
}

TEST_CASE("a handler's own error passes through read_message") {
  capnp::MallocMessageBuilder b;
  b.initRoot<strata::wire::Heartbeat>();
  Message m = make_message(kMsgHeartbeat, b);
  Status s = read_message<strata::wire::Heartbeat>(m, "hb", [](auto) { return Status::Error(ENOENT, "no"); });
  CHECK(s.code() == -ENOENT);
}

TEST_CASE("pointer amplification is stopped by the traversal limit") {
  // A list of 1000 struct pointers all pointing... capnp forbids aliasing in
  // a builder, so build the words by hand: a Data list read repeatedly.
  capnp::MallocMessageBuilder b;
  auto root = b.initRoot<strata::wire::AuthEntry>();
  std::string big(4096, 'z');
  root.setSecret(capnp::Data::Reader(reinterpret_cast<const kj::byte *>(big.data()), big.size()));
  Message m = make_message(kMsgAuthUpdate, b);
  // Reading the same 4 KiB field 10,000 times is 5000x the payload: refused.
  Status s = read_message<strata::wire::AuthEntry>(m, "AuthEntry", [](strata::wire::AuthEntry::Reader r) {
    std::size_t total = 0;
    for (int i = 0; i < 10000; ++i) total += r.getSecret().size();
    return total > 0 ? Status::OK() : Status::Error(EIO, "empty");
  });
  CHECK(s.code() == -EBADMSG);
  CHECK_THAT(s.message(), Catch::Contains("malformed payload"));
}

TEST_CASE("multi-segment builders flatten correctly") {
  for (unsigned first : {8u, 16u, 64u}) {
    capnp::MallocMessageBuilder b(first, capnp::AllocationStrategy::FIXED_SIZE);
    auto st = b.initRoot<strata::wire::OsdStats>();
    st.setId(7);
    auto pgs = st.initPgs(50);
    for (unsigned i = 0; i < 50; ++i) {
      pgs[i].setSeed(i);
      pgs[i].setState("active+clean");
    }
    REQUIRE(b.getSegmentsForOutput().size() > 1);
    INFO("segments " << b.getSegmentsForOutput().size());
    std::string flat = to_payload(b);
    auto words = capnp::messageToFlatArray(b);
    CHECK(flat == std::string(reinterpret_cast<const char *>(words.asBytes().begin()), words.asBytes().size()));
    Message m = make_message(kMsgOsdStats, b);
    Status s = read_message<strata::wire::OsdStats>(m, "OsdStats", [](strata::wire::OsdStats::Reader r) {
      CHECK(r.getId() == 7);
      CHECK(r.getPgs().size() == 50);
      CHECK(r.getPgs()[49].getSeed() == 49);
      return Status::OK();
    });
    CHECK(s.ok());
  }
}

// The NBD handshake: every option the server knows, the ones it refuses,
// and the inputs that make it hang up.
#include <catch2/catch.hpp>

#include "mem_device.h"
#include "nbd_protocol.h"
#include "nbd_test_client.h"

using namespace rbdtest;
using namespace strata::rbd::nbd;

namespace {

std::shared_ptr<MemDevice> device(uint64_t size = 1 << 20) { return std::make_shared<MemDevice>(size); }

// Greeting and client flags done, ready for options.
void hello(TestClient &c) {
  REQUIRE(c.read_greeting() == (kFlagFixedNewstyle | kFlagNoZeroes));
  c.send_client_flags(kClientFixedNewstyle | kClientNoZeroes);
}

}  // namespace

TEST_CASE("nbd negotiation: GO answers export, name, description, block size", "[nbd]") {
  TestServer s(device(3 << 20));
  TestClient c(s.path);
  hello(c);
  c.send_option(kOptGo, TestClient::info_request("other", {kInfoName, kInfoDescription, kInfoBlockSize}));
  bool export_seen = false, name_seen = false, desc_seen = false, block_seen = false;
  for (;;) {
    OptionReply r = c.read_option_reply();
    REQUIRE(r.option == kOptGo);
    if (r.type == kRepAck) break;
    REQUIRE(r.type == kRepInfo);
    switch (be16_at(r.data, 0)) {
      case kInfoExport:
        export_seen = true;
        CHECK(be64_at(r.data, 2) == (3u << 20));
        CHECK((be16_at(r.data, 10) & (kTxHasFlags | kTxSendFlush | kTxSendFua | kTxSendTrim |
                                      kTxSendWriteZeroes | kTxCanMultiConn | kTxSendCache)) ==
              (kTxHasFlags | kTxSendFlush | kTxSendFua | kTxSendTrim | kTxSendWriteZeroes |
               kTxCanMultiConn | kTxSendCache));
        CHECK((be16_at(r.data, 10) & (kTxReadOnly | kTxSendDf | kTxSendFastZero)) == 0);
        break;
      case kInfoName:
        name_seen = true;
        CHECK(r.data.substr(2) == "other");
        break;
      case kInfoDescription:
        desc_seen = true;
        CHECK(r.data.substr(2) == "the same device again");
        break;
      case kInfoBlockSize:
        block_seen = true;
        CHECK(be32_at(r.data, 2) == 1);
        CHECK(be32_at(r.data, 6) == 4096);
        CHECK(be32_at(r.data, 10) == (32u << 20));
        break;
    }
  }
  CHECK(export_seen);
  CHECK(name_seen);
  CHECK(desc_seen);
  CHECK(block_seen);
  // Transmission: a flush works.
  c.send_request(kCmdFlush, 0, 7, 0, 0);
  SimpleReply r = c.read_simple();
  CHECK(r.cookie == 7);
  CHECK(r.error == 0);
}

TEST_CASE("nbd negotiation: INFO stays in negotiation, unknown export is ERR_UNKNOWN", "[nbd]") {
  TestServer s(device());
  TestClient c(s.path);
  hello(c);
  c.send_option(kOptInfo, TestClient::info_request("nope", {}));
  OptionReply r = c.read_option_reply();
  CHECK(r.type == kRepErrUnknown);
  c.send_option(kOptGo, TestClient::info_request("nope", {}));
  CHECK(c.read_option_reply().type == kRepErrUnknown);
  c.send_option(kOptInfo, TestClient::info_request("", {}));
  do {
    r = c.read_option_reply();
  } while (r.type == kRepInfo);
  CHECK(r.type == kRepAck);
  // Malformed: the name length runs past the data.
  c.send_option(kOptInfo, std::string("\0\0\0\x09" "ab", 6));
  CHECK(c.read_option_reply().type == kRepErrInvalid);
  // Still negotiating: GO works.
  c.send_option(kOptGo, TestClient::info_request("", {}));
  do {
    r = c.read_option_reply();
  } while (r.type == kRepInfo);
  CHECK(r.type == kRepAck);
}

TEST_CASE("nbd negotiation: LIST names every export", "[nbd]") {
  TestServer s(device());
  TestClient c(s.path);
  hello(c);
  c.send_option(kOptList, {});
  std::vector<std::string> names;
  for (;;) {
    OptionReply r = c.read_option_reply();
    if (r.type == kRepAck) break;
    REQUIRE(r.type == kRepServer);
    names.push_back(r.data.substr(4, be32_at(r.data, 0)));
  }
  CHECK(names == std::vector<std::string>{"", "other"});
  c.send_option(kOptList, "x");
  CHECK(c.read_option_reply().type == kRepErrInvalid);
}

TEST_CASE("nbd negotiation: EXPORT_NAME with and without zeroes, and an unknown name closes", "[nbd]") {
  TestServer s(device(5 << 20));
  {
    TestClient c(s.path);
    hello(c);
    c.send_option(kOptExportName, "other");
    std::string ans = c.read_raw(10);
    CHECK(be64_at(ans, 0) == (5u << 20));
    CHECK((be16_at(ans, 8) & kTxHasFlags) != 0);
    c.send_request(kCmdFlush, 0, 1, 0, 0);
    CHECK(c.read_simple().error == 0);
  }
  {
    TestClient c(s.path);
    c.read_greeting();
    c.send_client_flags(kClientFixedNewstyle);
    c.send_option(kOptExportName, "");
    std::string ans = c.read_raw(10 + 124);
    CHECK(ans.substr(10) == std::string(124, '\0'));
  }
  {
    TestClient c(s.path);
    hello(c);
    c.send_option(kOptExportName, "missing");
    CHECK(c.closed_by_server());
  }
}

TEST_CASE("nbd negotiation: unknown options, STARTTLS, ABORT", "[nbd]") {
  TestServer s(device());
  TestClient c(s.path);
  hello(c);
  c.send_option(4242, "whatever");
  OptionReply r = c.read_option_reply();
  CHECK(r.option == 4242);
  CHECK(r.type == kRepErrUnsup);
  c.send_option(kOptStartTls, {});
  r = c.read_option_reply();
  CHECK((r.type == kRepErrPolicy || r.type == kRepErrUnsup));
  c.send_option(kOptAbort, {});
  CHECK(c.read_option_reply().type == kRepAck);
  CHECK(c.closed_by_server());
}

TEST_CASE("nbd negotiation: bad magic and bad client flags close the connection", "[nbd]") {
  TestServer s(device());
  {
    TestClient c(s.path);
    hello(c);
    c.send_option(kOptList, {}, 0x1122334455667788ull);
    CHECK(c.closed_by_server());
  }
  {
    TestClient c(s.path);
    c.read_greeting();
    c.send_client_flags(kClientFixedNewstyle | 0x80);
    CHECK(c.closed_by_server());
  }
  {
    TestClient c(s.path);
    c.read_greeting();
    c.send_client_flags(0);  // old-style newstyle: not spoken here
    CHECK(c.closed_by_server());
  }
  CHECK(s.server->stats().protocol_errors >= 3);
}

TEST_CASE("nbd negotiation: meta contexts", "[nbd]") {
  TestServer s(device());
  TestClient c(s.path);
  hello(c);
  auto contexts = [&](uint32_t opt, const std::string &data, uint32_t *last_type) {
    c.send_option(opt, data);
    std::vector<std::pair<uint32_t, std::string>> out;
    for (;;) {
      OptionReply r = c.read_option_reply();
      if (r.type != kRepMetaContext) {
        *last_type = r.type;
        return out;
      }
      out.emplace_back(be32_at(r.data, 0), r.data.substr(4));
    }
  };
  uint32_t last = 0;
  // SET before STRUCTURED_REPLY is invalid; LIST is fine.
  CHECK(contexts(kOptSetMetaContext, TestClient::meta_request("", {"base:allocation"}), &last).empty());
  CHECK(last == kRepErrInvalid);
  auto listed = contexts(kOptListMetaContext, TestClient::meta_request("", {}), &last);
  CHECK(last == kRepAck);
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].second == "base:allocation");
  listed = contexts(kOptListMetaContext, TestClient::meta_request("", {"base:"}), &last);
  CHECK(listed.size() == 1);
  listed = contexts(kOptListMetaContext, TestClient::meta_request("", {"qemu:dirty-bitmap:x"}), &last);
  CHECK(listed.empty());
  CHECK(last == kRepAck);
  contexts(kOptListMetaContext, TestClient::meta_request("nope", {}), &last);
  CHECK(last == kRepErrUnknown);
  contexts(kOptListMetaContext, "\0\0", &last);
  CHECK(last == kRepErrInvalid);

  c.send_option(kOptStructuredReply, {});
  CHECK(c.read_option_reply().type == kRepAck);
  auto set = contexts(kOptSetMetaContext,
                      TestClient::meta_request("", {"base:allocation", "other:thing"}), &last);
  CHECK(last == kRepAck);
  REQUIRE(set.size() == 1);
  CHECK(set[0].first != 0);
  CHECK(set[0].second == "base:allocation");
  // A failed SET drops the selection; "base:" alone selects nothing.
  contexts(kOptSetMetaContext, TestClient::meta_request("nope", {"base:allocation"}), &last);
  CHECK(last == kRepErrUnknown);
  CHECK(contexts(kOptSetMetaContext, TestClient::meta_request("", {"base:"}), &last).empty());
  CHECK(last == kRepAck);
  set = contexts(kOptSetMetaContext, TestClient::meta_request("", {"base:allocation"}), &last);
  REQUIRE(set.size() == 1);
  // GO: DF advertised once structured replies are on.
  c.send_option(kOptGo, TestClient::info_request("", {}));
  uint16_t flags = 0;
  for (;;) {
    OptionReply r = c.read_option_reply();
    if (r.type == kRepAck) break;
    if (be16_at(r.data, 0) == kInfoExport) flags = be16_at(r.data, 10);
  }
  CHECK((flags & kTxSendDf) != 0);
  c.send_request(kCmdBlockStatus, 0, 9, 0, 4096);
  Chunk ch = c.read_chunk();
  CHECK(ch.type == kReplyTypeBlockStatus);
  CHECK(be32_at(ch.payload, 0) == set[0].first);
}

TEST_CASE("nbd negotiation: a client that does not finish the handshake is closed", "[nbd]") {
  strata::rbd::NbdServerOptions opts;
  opts.handshake_timeout_ms = 200;
  TestServer s(device(), opts);
  TestClient c(s.path);
  c.read_greeting();
  CHECK(c.closed_by_server());
}

TEST_CASE("nbd negotiation: a read-only export says so", "[nbd]") {
  strata::rbd::NbdServerOptions opts;
  opts.read_only = true;
  TestServer s(device(), opts);
  TestClient c(s.path);
  ExportInfo info = c.go();
  CHECK((info.flags & kTxReadOnly) != 0);
  CHECK((info.flags & (kTxSendTrim | kTxSendWriteZeroes)) == 0);
}

TEST_CASE("nbd negotiation: meta contexts set for another export do not carry over", "[nbd]") {
  TestServer s(device());
  TestClient c(s.path);
  hello(c);
  c.send_option(kOptStructuredReply, {});
  CHECK(c.read_option_reply().type == kRepAck);
  c.send_option(kOptSetMetaContext, TestClient::meta_request("other", {"base:allocation"}));
  CHECK(c.read_option_reply().type == kRepMetaContext);
  CHECK(c.read_option_reply().type == kRepAck);
  c.send_option(kOptGo, TestClient::info_request("", {}));
  while (c.read_option_reply().type != kRepAck) {
  }
  c.send_request(kCmdBlockStatus, 0, 1, 0, 4096);
  Chunk ch = c.read_chunk();
  CHECK(ch.type == kReplyTypeError);
  CHECK(be32_at(ch.payload, 0) == kErrInval);
}

TEST_CASE("nbd negotiation: an oversized option is drained and refused", "[nbd]") {
  TestServer s(device());
  TestClient c(s.path);
  hello(c);
  c.send_option(kOptInfo, std::string(100 * 1024, 'x'));
  CHECK(c.read_option_reply().type == kRepErrTooBig);
  c.send_option(kOptList, {});
  OptionReply r = c.read_option_reply();
  CHECK(r.type == kRepServer);
}

TEST_CASE("nbd negotiation: block sizes are clamped to what the spec allows", "[nbd]") {
  // A device preferring 256-byte blocks: the preferred size goes up to 512.
  struct SmallBlocks : MemDevice {
    SmallBlocks() : MemDevice(1 << 20) {}
    uint32_t preferred_block() const override { return 256; }
  };
  strata::rbd::NbdServerOptions opts;
  opts.max_payload = 100000;
  TestServer s(std::make_shared<SmallBlocks>(), opts);
  TestClient c(s.path);
  hello(c);
  c.send_option(kOptInfo, TestClient::info_request("", {kInfoBlockSize}));
  for (;;) {
    OptionReply r = c.read_option_reply();
    if (r.type == kRepAck) break;
    if (be16_at(r.data, 0) != kInfoBlockSize) continue;
    CHECK(be32_at(r.data, 2) == 1);
    CHECK(be32_at(r.data, 6) == 512);
    CHECK(be32_at(r.data, 10) == 100000);
  }
}

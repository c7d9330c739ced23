// The client's messages: what an ObjectOperation becomes on the wire, and
// how replies (good and bad) are read back.
#include <capnp/message.h>

#include <catch2/catch.hpp>

#include "client/op_codec.h"
#include "msg/message_types.h"
#include "msg/schema/wire.capnp.h"

using namespace strata;
using namespace strata::client;

namespace {

std::string str(capnp::Text::Reader t) { return std::string(t.cStr(), t.size()); }
std::string str(capnp::Data::Reader d) {
  return std::string(reinterpret_cast<const char *>(d.begin()), d.size());
}

// Builds an OpReply message the way an OSD would.
msg::Message make_reply(uint64_t tid, int rc, uint64_t version,
                        const std::function<void(wire::OpReply::Builder)> &fill,
                        std::vector<std::string> segments = {}) {
  capnp::MallocMessageBuilder b;
  auto r = b.initRoot<wire::OpReply>();
  r.setTid(tid);
  r.setRc(rc);
  r.setVersion(version);
  if (fill) fill(r);
  return msg::make_message(msg::kMsgOpReply, b, std::move(segments));
}

}  // namespace

TEST_CASE("an OpRequest carries every step with its arguments and data segments") {
  ObjectOperation op;
  op.assert_version(7);
  op.cmpxattr("owner", CmpMode::kGe, "bob");
  op.write(4096, "hello");
  op.setxattr("owner", "alice");
  op.omap_set({"k1", std::string("k\0two", 5)}, {"v1", "v2"});
  op.omap_rm_range("a", std::string("z\0", 2));
  op.create(true);

  OpRequestHeader h;
  h.tid = 42;
  h.client = "client.admin.00ff";
  h.pool = 3;
  h.seed = 0x1f;
  h.oid = "obj";
  h.map_epoch = 9;
  msg::Message m = encode_op_request(h, op);
  REQUIRE(m.type == msg::kMsgOpRequest);
  REQUIRE(m.segments == std::vector<std::string>{"bob", "hello", "alice"});

  Status st = msg::read_message<wire::OpRequest>(m, "test", [&](wire::OpRequest::Reader r) {
    CHECK(r.getTid() == 42);
    CHECK(str(r.getClient()) == "client.admin.00ff");
    CHECK(r.getPool() == 3);
    CHECK(r.getSeed() == 0x1f);
    CHECK(str(r.getOid()) == "obj");
    CHECK(r.getMapEpoch() == 9);
    CHECK(r.getIsWrite());
    auto ops = r.getOps();
    REQUIRE(ops.size() == 7);
    CHECK(ops[0].getCode() == wire::OpCode::ASSERT_VERSION);
    CHECK(ops[0].getVersion() == 7);
    CHECK(ops[0].getDataSeg() == -1);
    CHECK(ops[1].getCode() == wire::OpCode::CMP_XATTR);
    CHECK(str(ops[1].getName()) == "owner");
    CHECK(ops[1].getCmpMode() == wire::CmpMode::GE);
    CHECK(ops[1].getDataSeg() == 0);
    CHECK(ops[2].getCode() == wire::OpCode::WRITE);
    CHECK(ops[2].getOffset() == 4096);
    CHECK(ops[2].getLength() == 5);
    CHECK(ops[2].getDataSeg() == 1);
    CHECK(ops[3].getCode() == wire::OpCode::SET_XATTR);
    CHECK(ops[3].getDataSeg() == 2);
    CHECK(ops[4].getCode() == wire::OpCode::OMAP_SET);
    REQUIRE(ops[4].getKeys().size() == 2);
    CHECK(str(ops[4].getKeys()[1]) == std::string("k\0two", 5));
    CHECK(str(ops[4].getValues()[0]) == "v1");
    CHECK(ops[5].getCode() == wire::OpCode::OMAP_RM_RANGE);
    CHECK(str(ops[5].getName()) == "a");
    CHECK(str(ops[5].getName2()) == std::string("z\0", 2));  // binary keys survive Text
    CHECK(ops[6].getCode() == wire::OpCode::CREATE);
    CHECK(ops[6].getFlags() == kCreateExclusive);
    return Status::OK();
  });
  REQUIRE(st.ok());
}

TEST_CASE("a read-only operation is not flagged as a write") {
  ObjectOperation op;
  op.stat(nullptr);
  op.read(0, 100, nullptr);
  op.omap_list("", "", 0, nullptr);
  CHECK_FALSE(op.is_write());
  OpRequestHeader h;
  h.oid = "x";
  h.client = "client.a.1";
  msg::Message m = encode_op_request(h, op);
  Status st = msg::read_message<wire::OpRequest>(m, "test", [&](wire::OpRequest::Reader r) {
    CHECK_FALSE(r.getIsWrite());
    CHECK(r.getOps()[2].getLength() == 1000);  // max 0 means the default page
    return Status::OK();
  });
  REQUIRE(st.ok());
}

TEST_CASE("every step code matches the wire enum") {
  // StepCode mirrors wire::OpCode by value: a renumbering on either side
  // would silently send the wrong op.
  CHECK(static_cast<uint16_t>(StepCode::kRead) == static_cast<uint16_t>(wire::OpCode::READ));
  CHECK(static_cast<uint16_t>(StepCode::kOmapList) ==
        static_cast<uint16_t>(wire::OpCode::OMAP_LIST));
  CHECK(static_cast<uint16_t>(StepCode::kAssertExists) ==
        static_cast<uint16_t>(wire::OpCode::ASSERT_EXISTS));
  CHECK(static_cast<uint16_t>(StepCode::kCmpXattr) ==
        static_cast<uint16_t>(wire::OpCode::CMP_XATTR));
  CHECK(static_cast<uint16_t>(StepCode::kSnapContext) ==
        static_cast<uint16_t>(wire::OpCode::SNAP_CONTEXT));
  CHECK(static_cast<uint16_t>(StepCode::kListSnaps) ==
        static_cast<uint16_t>(wire::OpCode::LIST_SNAPS));
  CHECK(static_cast<uint16_t>(CmpMode::kLe) == static_cast<uint16_t>(wire::CmpMode::LE));
}

TEST_CASE("an OpReply is read with its step results, data segments and flags") {
  msg::Message m = make_reply(
      5, 0, 77,
      [](wire::OpReply::Builder r) {
        r.setReplayed(true);
        auto res = r.initResults(2);
        res[0].setDataSeg(0);
        res[0].setSize(11);
        res[0].setMtimeNs(123);
        auto keys = res[1].initKeys(2);
        keys.set(0, capnp::Data::Reader(reinterpret_cast<const capnp::byte *>("a"), 1));
        keys.set(1, capnp::Data::Reader(reinterpret_cast<const capnp::byte *>("b\0c"), 3));
        auto vals = res[1].initValues(2);
        vals.set(0, capnp::Data::Reader(reinterpret_cast<const capnp::byte *>("1"), 1));
        vals.set(1, capnp::Data::Reader(reinterpret_cast<const capnp::byte *>("2"), 1));
        res[1].setMore(true);
      },
      {"hello world"});
  auto v = OpReplyView::parse(m);
  REQUIRE(v.ok());
  CHECK(v->tid == 5);
  CHECK(v->rc == 0);
  CHECK(v->version == 77);
  CHECK(v->replayed);
  CHECK(v->retry_epoch == 0);
  REQUIRE(v->results.size() == 2);
  CHECK(v->results[0].data == "hello world");
  CHECK(v->results[0].size == 11);
  CHECK(v->results[0].mtime_ns == 123);
  REQUIRE(v->results[1].keys.size() == 2);
  CHECK(v->results[1].keys[1] == std::string_view("b\0c", 3));
  CHECK(v->results[1].values[0] == "1");
  CHECK(v->results[1].more);

  // The views stay valid when the parsed reply moves.
  OpReplyView moved = std::move(*v);
  CHECK(moved.results[1].keys[0] == "a");
}

TEST_CASE("an OpReply naming a data segment it does not carry is an error") {
  msg::Message m = make_reply(1, 0, 0, [](wire::OpReply::Builder r) {
    r.initResults(1)[0].setDataSeg(3);
  });
  auto v = OpReplyView::parse(m);
  REQUIRE_FALSE(v.ok());
  CHECK(v.status().code() == -EBADMSG);
}

TEST_CASE("garbage instead of an OpReply is an error, not an exception") {
  msg::Message m;
  m.type = msg::kMsgOpReply;
  m.payload = std::string(24, '\xff');
  auto v = OpReplyView::parse(m);
  CHECK_FALSE(v.ok());
  m.payload = "abc";  // not a whole number of words
  CHECK_FALSE(OpReplyView::parse(m).ok());
}

TEST_CASE("a retry reply carries the epoch to wait for") {
  msg::Message m = make_reply(9, 0, 0, [](wire::OpReply::Builder r) { r.setRetryEpoch(12); });
  auto v = OpReplyView::parse(m);
  REQUIRE(v.ok());
  CHECK(v->retry_epoch == 12);
}

TEST_CASE("PG list, PG command and monitor command messages round-trip") {
  msg::Message l = encode_pg_list(3, 1, 0xa, "after", 100, 4);
  CHECK(l.type == msg::kMsgPgListRequest);
  Status st = msg::read_message<wire::PgListRequest>(l, "t", [](auto r) {
    CHECK(r.getTid() == 3);
    CHECK(r.getPool() == 1);
    CHECK(r.getSeed() == 0xa);
    CHECK(str(r.getStartAfter()) == "after");
    CHECK(r.getLimit() == 100);
    CHECK(r.getMapEpoch() == 4);
    return Status::OK();
  });
  REQUIRE(st.ok());

  capnp::MallocMessageBuilder b;
  auto rep = b.initRoot<wire::PgListReply>();
  rep.setTid(3);
  rep.setMore(true);
  auto names = rep.initNames(2);
  names.set(0, "x");
  names.set(1, "y");
  auto d = decode_pg_list_reply(msg::make_message(msg::kMsgPgListReply, b));
  REQUIRE(d.ok());
  CHECK(d->names == std::vector<std::string>{"x", "y"});
  CHECK(d->more);

  msg::Message c = encode_pg_command(8, 2, 5, true, true, 11);
  st = msg::read_message<wire::PgCommand>(c, "t", [](auto r) {
    CHECK(r.getDeep());
    CHECK(r.getRepair());
    CHECK(r.getMapEpoch() == 11);
    return Status::OK();
  });
  REQUIRE(st.ok());

  msg::Message mc = encode_mon_command(6, "pool set", {{"name", "rbd"}, {"key", "size"}});
  st = msg::read_message<wire::MonCommand>(mc, "t", [](auto r) {
    CHECK(str(r.getPrefix()) == "pool set");
    REQUIRE(r.getArgs().size() == 2);
    CHECK(str(r.getArgs()[1].getValue()) == "size");
    return Status::OK();
  });
  REQUIRE(st.ok());

  capnp::MallocMessageBuilder b2;
  auto mr = b2.initRoot<wire::MonCommandReply>();
  mr.setTid(6);
  mr.setRc(-17);
  mr.setMessage("pool exists");
  mr.setJson("{}");
  mr.setEpoch(30);
  auto md = decode_mon_command_reply(msg::make_message(msg::kMsgMonCommandReply, b2));
  REQUIRE(md.ok());
  CHECK(md->rc == -17);
  CHECK(md->message == "pool exists");
  CHECK(md->epoch == 30);
}

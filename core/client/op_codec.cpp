#include "client/op_codec.h"

#include <capnp/message.h>

#include "msg/message_types.h"
#include "msg/schema/wire.capnp.h"

namespace strata::client {

namespace {

// Text fields may carry omap keys (any bytes): set them with their length.
capnp::Text::Reader text(const std::string &s) { return capnp::Text::Reader(s.data(), s.size()); }
capnp::Text::Reader text(std::string_view s, std::string &holder) {
  holder.assign(s);
  return text(holder);
}
capnp::Data::Reader bytes(std::string_view s) {
  return capnp::Data::Reader(reinterpret_cast<const capnp::byte *>(s.data()), s.size());
}
std::string_view view(capnp::Data::Reader d) {
  return std::string_view(reinterpret_cast<const char *>(d.begin()), d.size());
}

void fill_step(const Step &s, wire::OsdOp::Builder b) {
  b.setCode(static_cast<wire::OpCode>(static_cast<uint16_t>(s.code)));
  b.setOffset(s.offset);
  b.setLength(s.length);
  if (!s.name.empty()) b.setName(text(s.name));
  if (!s.name2.empty()) b.setName2(text(s.name2));
  b.setDataSeg(s.data_index);
  if (!s.keys.empty()) {
    auto keys = b.initKeys(static_cast<unsigned>(s.keys.size()));
    for (size_t i = 0; i < s.keys.size(); ++i) keys.set(static_cast<unsigned>(i), bytes(s.keys[i]));
  }
  if (!s.values.empty()) {
    auto values = b.initValues(static_cast<unsigned>(s.values.size()));
    for (size_t i = 0; i < s.values.size(); ++i)
      values.set(static_cast<unsigned>(i), bytes(s.values[i]));
  }
  b.setVersion(s.version);
  b.setCmpMode(static_cast<wire::CmpMode>(static_cast<uint16_t>(s.cmp)));
  b.setFlags(s.flags);
}

}  // namespace

msg::Message encode_op_request(const OpRequestHeader &h, const ObjectOperation &op) {
  capnp::MallocMessageBuilder builder;
  auto req = builder.initRoot<wire::OpRequest>();
  std::string holder;
  req.setTid(h.tid);
  req.setClient(text(h.client, holder));
  req.setPool(h.pool);
  req.setSeed(h.seed);
  req.setOid(text(h.oid, holder));
  req.setMapEpoch(h.map_epoch);
  req.setIsWrite(op.is_write());
  if (!op.request_id().empty()) req.setRequestId(text(op.request_id()));
  req.setFullTry(op.full_try());
  auto ops = req.initOps(static_cast<unsigned>(op.steps().size()));
  for (size_t i = 0; i < op.steps().size(); ++i) fill_step(op.steps()[i], ops[static_cast<unsigned>(i)]);
  std::vector<std::string> segments;
  segments.reserve(op.segments().size());
  for (const auto &seg : op.segments()) segments.emplace_back(seg.view());
  return msg::make_message(msg::kMsgOpRequest, builder, std::move(segments));
}

Result<OpReplyView> OpReplyView::parse(const msg::Message &m) {
  auto opened = msg::PayloadReader::open(m.payload);
  if (!opened.ok()) return opened.status().Context("OpReply");
  OpReplyView v;
  v.reader_ = std::make_unique<msg::PayloadReader>(std::move(opened.value()));
  try {
    auto r = v.reader_->root<wire::OpReply>();
    v.tid = r.getTid();
    v.rc = r.getRc();
    v.version = r.getVersion();
    v.retry_epoch = r.getRetryEpoch();
    v.replayed = r.getReplayed();
    v.message = std::string(r.getMessage().cStr(), r.getMessage().size());
    auto results = r.getResults();
    v.results.reserve(results.size());
    for (auto res : results) {
      StepResult s;
      s.rc = res.getRc();
      if (res.getDataSeg() >= 0) {
        auto seg = msg::segment(m, res.getDataSeg(), "OpReply");
        if (!seg.ok()) return seg.status();
        s.data = *seg;
      }
      auto keys = res.getKeys();
      s.keys.reserve(keys.size());
      for (auto k : keys) s.keys.push_back(view(k));
      auto values = res.getValues();
      s.values.reserve(values.size());
      for (auto val : values) s.values.push_back(view(val));
      s.size = res.getSize();
      s.mtime_ns = res.getMtimeNs();
      s.more = res.getMore();
      v.results.push_back(std::move(s));
    }
  } catch (const kj::Exception &e) {
    return Status::Error(EBADMSG, std::string("OpReply: malformed payload: ") +
                                      e.getDescription().cStr());
  }
  return v;
}

msg::Message encode_pg_list(uint64_t tid, uint32_t pool, uint32_t seed,
                            std::string_view start_after, uint32_t limit, uint64_t epoch) {
  capnp::MallocMessageBuilder builder;
  auto req = builder.initRoot<wire::PgListRequest>();
  std::string holder;
  req.setTid(tid);
  req.setPool(pool);
  req.setSeed(seed);
  req.setStartAfter(text(start_after, holder));
  req.setLimit(limit);
  req.setMapEpoch(epoch);
  return msg::make_message(msg::kMsgPgListRequest, builder);
}

Result<PgListReplyData> decode_pg_list_reply(const msg::Message &m) {
  PgListReplyData d;
  Status st = msg::read_message<wire::PgListReply>(m, "PgListReply", [&](auto r) {
    d.tid = r.getTid();
    d.rc = r.getRc();
    d.more = r.getMore();
    d.retry_epoch = r.getRetryEpoch();
    for (auto n : r.getNames()) d.names.emplace_back(n.cStr(), n.size());
    return Status::OK();
  });
  if (!st.ok()) return st;
  return d;
}

msg::Message encode_pg_command(uint64_t tid, uint32_t pool, uint32_t seed, bool deep, bool repair,
                               uint64_t epoch) {
  capnp::MallocMessageBuilder builder;
  auto req = builder.initRoot<wire::PgCommand>();
  req.setTid(tid);
  req.setPool(pool);
  req.setSeed(seed);
  req.setDeep(deep);
  req.setRepair(repair);
  req.setMapEpoch(epoch);
  return msg::make_message(msg::kMsgPgCommand, builder);
}

Result<PgCommandReplyData> decode_pg_command_reply(const msg::Message &m) {
  PgCommandReplyData d;
  Status st = msg::read_message<wire::PgCommandReply>(m, "PgCommandReply", [&](auto r) {
    d.tid = r.getTid();
    d.rc = r.getRc();
    d.message = std::string(r.getMessage().cStr(), r.getMessage().size());
    d.json = std::string(r.getJson().cStr(), r.getJson().size());
    d.retry_epoch = r.getRetryEpoch();
    return Status::OK();
  });
  if (!st.ok()) return st;
  return d;
}

msg::Message encode_mon_command(uint64_t tid, std::string_view prefix, const CommandArgs &args) {
  capnp::MallocMessageBuilder builder;
  auto req = builder.initRoot<wire::MonCommand>();
  std::string holder;
  req.setTid(tid);
  req.setPrefix(text(prefix, holder));
  auto list = req.initArgs(static_cast<unsigned>(args.size()));
  for (size_t i = 0; i < args.size(); ++i) {
    list[static_cast<unsigned>(i)].setKey(text(args[i].first));
    list[static_cast<unsigned>(i)].setValue(text(args[i].second));
  }
  return msg::make_message(msg::kMsgMonCommand, builder);
}

Result<MonCommandReplyData> decode_mon_command_reply(const msg::Message &m) {
  MonCommandReplyData d;
  Status st = msg::read_message<wire::MonCommandReply>(m, "MonCommandReply", [&](auto r) {
    d.tid = r.getTid();
    d.rc = r.getRc();
    d.message = std::string(r.getMessage().cStr(), r.getMessage().size());
    d.json = std::string(r.getJson().cStr(), r.getJson().size());
    d.epoch = r.getEpoch();
    return Status::OK();
  });
  if (!st.ok()) return st;
  return d;
}

msg::Message encode_mon_subscribe(uint64_t have_epoch) {
  capnp::MallocMessageBuilder builder;
  auto req = builder.initRoot<wire::MonSubscribe>();
  req.setHaveEpoch(have_epoch);
  req.setWantAuth(false);
  return msg::make_message(msg::kMsgMonSubscribe, builder);
}

}  // namespace strata::client

#include "osd/op_reply.h"

#include <capnp/message.h>

#include <cerrno>

#include "msg/message_types.h"
#include "msg/schema/wire.capnp.h"
#include "msg/wire_codec.h"

namespace strata::osd {

void send_reply_too_big(const msg::ConnectionRef &conn, uint64_t tid, size_t bytes,
                        const std::string &what) {
  conn->send(build_op_reply(tid, -EMSGSIZE, 0, {}, false,
                            what + ": its reply of " + std::to_string(bytes) +
                                " bytes is over the messenger's limits (ask for less at once)"));
}

msg::Message build_op_reply(uint64_t tid, int32_t rc, uint64_t version,
                            std::vector<OpResult> results, bool replayed,
                            const std::string &message) {
  capnp::MallocMessageBuilder b;
  auto r = b.initRoot<wire::OpReply>();
  r.setTid(tid);
  r.setRc(rc);
  r.setVersion(version);
  r.setReplayed(replayed);
  if (!message.empty()) r.setMessage(message);
  std::vector<std::string> segs;
  auto list = r.initResults(static_cast<unsigned>(results.size()));
  for (unsigned k = 0; k < results.size(); ++k) {
    OpResult &x = results[k];
    auto o = list[k];
    o.setRc(x.rc);
    if (x.data) {
      o.setDataSeg(static_cast<int32_t>(segs.size()));
      segs.push_back(std::move(*x.data));
    }
    if (!x.keys.empty()) {
      auto keys = o.initKeys(static_cast<unsigned>(x.keys.size()));
      for (unsigned j = 0; j < x.keys.size(); ++j)
        keys.set(j, capnp::Data::Reader(reinterpret_cast<const capnp::byte *>(x.keys[j].data()),
                                        x.keys[j].size()));
    }
    if (!x.values.empty()) {
      auto vals = o.initValues(static_cast<unsigned>(x.values.size()));
      for (unsigned j = 0; j < x.values.size(); ++j)
        vals.set(j, capnp::Data::Reader(reinterpret_cast<const capnp::byte *>(x.values[j].data()),
                                        x.values[j].size()));
    }
    o.setSize(x.size);
    o.setMtimeNs(x.mtime_ns);
    o.setMore(x.more);
  }
  return msg::make_message(msg::kMsgOpReply, b, std::move(segs));
}

msg::Message build_retry_reply(uint64_t tid, uint64_t retry_epoch) {
  capnp::MallocMessageBuilder b;
  auto r = b.initRoot<wire::OpReply>();
  r.setTid(tid);
  r.setRetryEpoch(retry_epoch);
  return msg::make_message(msg::kMsgOpReply, b);
}

}  // namespace strata::osd

// The replies an OSD sends for a client's op (OpReply): results, a retry
// at a newer map, and the fallback for a reply too big to send.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "msg/messenger.h"
#include "osd/op_types.h"

namespace strata::osd {

msg::Message build_op_reply(uint64_t tid, int32_t rc, uint64_t version,
                            std::vector<OpResult> results, bool replayed = false,
                            const std::string &message = {});
msg::Message build_retry_reply(uint64_t tid, uint64_t retry_epoch);
// EMSGSIZE for the op `tid` whose reply of `bytes` could not be sent.
void send_reply_too_big(const msg::ConnectionRef &conn, uint64_t tid, size_t bytes,
                        const std::string &what);
// Sends an op's reply. One the messenger refuses while the connection is
// open (past its frame limits: a read of many large values at once) is
// answered with EMSGSIZE and describe()'s text instead: the client must
// hear something, or it waits for ever. describe() runs only then: no
// string is built on the path of every reply.
template <class Describe>
void send_op_reply(const msg::ConnectionRef &conn, uint64_t tid, msg::Message reply,
                   Describe &&describe) {
  if (!conn) return;
  size_t bytes = reply.payload.size();
  for (const auto &s : reply.segments) bytes += s.size();
  if (conn->send(std::move(reply)) || !conn->is_open()) return;
  send_reply_too_big(conn, tid, bytes, describe());
}

}  // namespace strata::osd

// The client's messages in and out of their wire form (wire.capnp). Pure
// functions of their inputs, so they are unit-tested without a cluster.
// Decoding is defensive: a reply that does not parse becomes an error Status
// naming the message, never an exception.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "client/object_operation.h"
#include "common/status.h"
#include "msg/messenger.h"
#include "msg/wire_codec.h"

namespace strata::client {

struct OpRequestHeader {
  uint64_t tid = 0;
  std::string_view client;  // instance id "client.NAME.<hex>"
  uint32_t pool = 0;
  uint32_t seed = 0;
  std::string_view oid;
  uint64_t map_epoch = 0;
};

// kMsgOpRequest carrying op's steps; data segments are copied into the
// message (the operation keeps its own for resends).
msg::Message encode_op_request(const OpRequestHeader &h, const ObjectOperation &op);

// An OpReply with its step results. The StepResult views point into this
// object (and into the Message it was parsed from, which must outlive it).
class OpReplyView {
 public:
  static Result<OpReplyView> parse(const msg::Message &m);

  uint64_t tid = 0;
  int rc = 0;
  uint64_t version = 0;
  uint64_t retry_epoch = 0;
  bool replayed = false;
  std::string message;
  std::vector<StepResult> results;

 private:
  OpReplyView() = default;
  std::unique_ptr<msg::PayloadReader> reader_;
};

msg::Message encode_pg_list(uint64_t tid, uint32_t pool, uint32_t seed,
                            std::string_view start_after, uint32_t limit, uint64_t epoch);
struct PgListReplyData {
  uint64_t tid = 0;
  int rc = 0;
  std::vector<std::string> names;
  bool more = false;
  uint64_t retry_epoch = 0;
};
Result<PgListReplyData> decode_pg_list_reply(const msg::Message &m);

msg::Message encode_pg_command(uint64_t tid, uint32_t pool, uint32_t seed, bool deep, bool repair,
                               uint64_t epoch);
struct PgCommandReplyData {
  uint64_t tid = 0;
  int rc = 0;
  std::string message;
  std::string json;
  uint64_t retry_epoch = 0;
};
Result<PgCommandReplyData> decode_pg_command_reply(const msg::Message &m);

using CommandArgs = std::vector<std::pair<std::string, std::string>>;
msg::Message encode_mon_command(uint64_t tid, std::string_view prefix, const CommandArgs &args);
struct MonCommandReplyData {
  uint64_t tid = 0;
  int rc = 0;
  std::string message;
  std::string json;
  uint64_t epoch = 0;
};
Result<MonCommandReplyData> decode_mon_command_reply(const msg::Message &m);

msg::Message encode_mon_subscribe(uint64_t have_epoch);

}  // namespace strata::client

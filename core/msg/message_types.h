// Frame `type` numbers: which root struct of schema/wire.capnp a frame's
// payload holds. Numbers are wire format: never reuse or renumber one.
#pragma once

#include <cstdint>

namespace strata::msg {

enum MessageType : uint16_t {
  // 1..15: the messenger's own handshake (not visible to handlers).
  kMsgAuthChallenge = 1,
  kMsgAuthRequest = 2,
  kMsgAuthReply = 3,
  kMsgAuthError = 4,

  // Monitor.
  kMsgMonSubscribe = 16,
  kMsgMapUpdate = 17,
  kMsgAuthUpdate = 18,
  kMsgOsdBoot = 19,
  kMsgOsdFailure = 20,
  kMsgMonCommand = 21,
  kMsgMonCommandReply = 22,
  kMsgOsdStats = 23,
  kMsgMdsBeacon = 24,

  // Client <-> OSD.
  kMsgOpRequest = 32,
  kMsgOpReply = 33,
  kMsgPgListRequest = 34,
  kMsgPgListReply = 35,
  kMsgPgCommand = 36,
  kMsgPgCommandReply = 37,

  // OSD <-> OSD: 48..127 (the OSD allocates its own in this range).
  kMsgHeartbeat = 48,
  kMsgRepOp = 49,
  kMsgRepOpReply = 50,
  kMsgPgQuery = 51,
  kMsgPgNotify = 52,
  kMsgPgActivate = 53,
  kMsgPgPush = 54,
  kMsgPgPushReply = 55,
  kMsgPgPull = 56,
  kMsgPgScan = 57,
  kMsgPgScanReply = 58,
  kMsgPgBackfillDone = 59,
  kMsgPgRemove = 60,

  // 1024..2047: service protocols carried over client sessions
  // (strata_session_* in sdk/include/strata/client.h). The messenger and
  // the client library pass them through opaquely; the service defines
  // them (the filesystem: sdk/proto/fs.capnp).
  kMsgServiceFirst = 1024,
  kMsgServiceLast = 2047,
};

}  // namespace strata::msg

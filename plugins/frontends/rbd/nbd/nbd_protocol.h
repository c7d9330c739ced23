// The NBD wire protocol as doc/proto.md of github.com/NetworkBlockDevice/nbd
// defines it: magic numbers, option / reply / command numbers, flags, error
// values, and big-endian field helpers. Only what this server speaks (fixed
// newstyle handshake, simple and structured replies, "base:allocation").
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace strata::rbd::nbd {

// Handshake.
constexpr uint64_t kNbdMagic = 0x4e42444d41474943ull;     // "NBDMAGIC"
constexpr uint64_t kOptionMagic = 0x49484156454f5054ull;  // "IHAVEOPT"
constexpr uint64_t kOptionReplyMagic = 0x0003e889045565a9ull;

constexpr uint16_t kFlagFixedNewstyle = 1u << 0;  // handshake flags (server)
constexpr uint16_t kFlagNoZeroes = 1u << 1;
constexpr uint32_t kClientFixedNewstyle = 1u << 0;  // client flags
constexpr uint32_t kClientNoZeroes = 1u << 1;

// Options.
constexpr uint32_t kOptExportName = 1;
constexpr uint32_t kOptAbort = 2;
constexpr uint32_t kOptList = 3;
constexpr uint32_t kOptStartTls = 5;
constexpr uint32_t kOptInfo = 6;
constexpr uint32_t kOptGo = 7;
constexpr uint32_t kOptStructuredReply = 8;
constexpr uint32_t kOptListMetaContext = 9;
constexpr uint32_t kOptSetMetaContext = 10;

// Option replies; errors have bit 31 set.
constexpr uint32_t kRepAck = 1;
constexpr uint32_t kRepServer = 2;
constexpr uint32_t kRepInfo = 3;
constexpr uint32_t kRepMetaContext = 4;
constexpr uint32_t kRepErrUnsup = (1u << 31) + 1;
constexpr uint32_t kRepErrPolicy = (1u << 31) + 2;
constexpr uint32_t kRepErrInvalid = (1u << 31) + 3;
constexpr uint32_t kRepErrPlatform = (1u << 31) + 4;
constexpr uint32_t kRepErrTlsReqd = (1u << 31) + 5;
constexpr uint32_t kRepErrUnknown = (1u << 31) + 6;
constexpr uint32_t kRepErrShutdown = (1u << 31) + 7;
constexpr uint32_t kRepErrBlockSizeReqd = (1u << 31) + 8;
constexpr uint32_t kRepErrTooBig = (1u << 31) + 9;

// NBD_REP_INFO payload types.
constexpr uint16_t kInfoExport = 0;
constexpr uint16_t kInfoName = 1;
constexpr uint16_t kInfoDescription = 2;
constexpr uint16_t kInfoBlockSize = 3;

// Transmission flags.
constexpr uint16_t kTxHasFlags = 1u << 0;
constexpr uint16_t kTxReadOnly = 1u << 1;
constexpr uint16_t kTxSendFlush = 1u << 2;
constexpr uint16_t kTxSendFua = 1u << 3;
constexpr uint16_t kTxRotational = 1u << 4;
constexpr uint16_t kTxSendTrim = 1u << 5;
constexpr uint16_t kTxSendWriteZeroes = 1u << 6;
constexpr uint16_t kTxSendDf = 1u << 7;
constexpr uint16_t kTxCanMultiConn = 1u << 8;
constexpr uint16_t kTxSendCache = 1u << 10;
constexpr uint16_t kTxSendFastZero = 1u << 11;

// Requests.
constexpr uint32_t kRequestMagic = 0x25609513;
constexpr size_t kRequestSize = 28;  // magic, flags, type, cookie, offset, length

constexpr uint16_t kCmdRead = 0;
constexpr uint16_t kCmdWrite = 1;
constexpr uint16_t kCmdDisc = 2;
constexpr uint16_t kCmdFlush = 3;
constexpr uint16_t kCmdTrim = 4;
constexpr uint16_t kCmdCache = 5;
constexpr uint16_t kCmdWriteZeroes = 6;
constexpr uint16_t kCmdBlockStatus = 7;

constexpr uint16_t kCmdFlagFua = 1u << 0;
constexpr uint16_t kCmdFlagNoHole = 1u << 1;
constexpr uint16_t kCmdFlagDf = 1u << 2;
constexpr uint16_t kCmdFlagReqOne = 1u << 3;
constexpr uint16_t kCmdFlagFastZero = 1u << 4;

// Replies.
constexpr uint32_t kSimpleReplyMagic = 0x67446698;
constexpr size_t kSimpleReplySize = 16;  // magic, error, cookie
constexpr uint32_t kStructuredReplyMagic = 0x668e33ef;
constexpr size_t kStructuredReplySize = 20;  // magic, flags, type, cookie, length

constexpr uint16_t kReplyFlagDone = 1u << 0;
constexpr uint16_t kReplyTypeNone = 0;
constexpr uint16_t kReplyTypeOffsetData = 1;
constexpr uint16_t kReplyTypeOffsetHole = 2;
constexpr uint16_t kReplyTypeBlockStatus = 5;
constexpr uint16_t kReplyTypeError = (1u << 15) + 1;

// base:allocation descriptor flags.
constexpr uint32_t kStateHole = 1u << 0;
constexpr uint32_t kStateZero = 1u << 1;

constexpr const char *kBaseAllocation = "base:allocation";
constexpr uint32_t kBaseAllocationId = 1;  // the one meta context id this server hands out

// Error values on the wire (not the host's errno numbers, though Linux's agree).
constexpr uint32_t kErrPerm = 1;
constexpr uint32_t kErrIo = 5;
constexpr uint32_t kErrNoMem = 12;
constexpr uint32_t kErrInval = 22;
constexpr uint32_t kErrNoSpc = 28;
constexpr uint32_t kErrOverflow = 75;
constexpr uint32_t kErrNotSup = 95;
constexpr uint32_t kErrShutdown = 108;

// A device result (0 or -errno) as an NBD error; the protocol only has a
// small set, so everything it does not name becomes EIO. The spec asks
// for EDQUOT and EFBIG to be reported as ENOSPC, for ENOMEM to be avoided,
// and for ENOTSUP only in answer to a fast zero (not offered here).
inline uint32_t nbd_error_from_errno(int result) {
  switch (-result) {
    case 0: return 0;
    case EPERM: case EROFS: case EACCES: return kErrPerm;
    case EINVAL: return kErrInval;
    case ENOSPC: case EDQUOT: case EFBIG: return kErrNoSpc;
    case EOVERFLOW: return kErrOverflow;
    case ESHUTDOWN: return kErrShutdown;
    default: return kErrIo;
  }
}

// Big-endian fields, read from and appended to byte buffers.
inline uint16_t get16(const unsigned char *p) { return uint16_t(p[0] << 8 | p[1]); }
inline uint32_t get32(const unsigned char *p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}
inline uint64_t get64(const unsigned char *p) { return uint64_t(get32(p)) << 32 | get32(p + 4); }

template <class Buf>
void put16(Buf &b, uint16_t v) {
  b.push_back(char(v >> 8));
  b.push_back(char(v));
}
template <class Buf>
void put32(Buf &b, uint32_t v) {
  put16(b, uint16_t(v >> 16));
  put16(b, uint16_t(v));
}
template <class Buf>
void put64(Buf &b, uint64_t v) {
  put32(b, uint32_t(v >> 32));
  put32(b, uint32_t(v));
}

}  // namespace strata::rbd::nbd

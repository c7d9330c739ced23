#include "nbd_client_handshake.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include "nbd_protocol.h"
#include "nbd_socket.h"

namespace strata::rbd {

namespace {

using namespace nbd;

// The oldstyle greeting's second magic (instead of IHAVEOPT).
constexpr uint64_t kOldstyleMagic = 0x00420281861253ull;
// Replies to GO carry an info record or an error message; a server that
// announces more than this is not one to trust with a kernel device.
constexpr uint32_t kMaxReplyLength = 64 * 1024;

class Handshake {
 public:
  Handshake(int fd, const std::string &name, uint32_t timeout_ms, std::string *why)
      : fd_(fd),
        name_(name),
        deadline_(Clock::now() + std::chrono::milliseconds(timeout_ms)),
        why_(why) {}

  int run(NbdClientExport *out);

 private:
  // -errno with *why_ = "nbd export 'NAME': " + text.
  int fail(int err, const std::string &text) {
    *why_ = "nbd export '" + name_ + "': " + text;
    return err;
  }
  // Reads n bytes; `what` says which part of the handshake, for the error.
  int read(void *buf, size_t n, const char *what);
  int write(const void *buf, size_t n, const char *what);
  int send_go();
  int reply_error(uint32_t type, const std::string &message);
  int info(const std::vector<unsigned char> &data, NbdClientExport *out, bool *export_seen);

  int fd_;
  const std::string &name_;
  Clock::time_point deadline_;
  std::string *why_;
};

int Handshake::read(void *buf, size_t n, const char *what) {
  int rc = read_exact(fd_, buf, n, -1, deadline_);
  if (rc == 0) return 0;
  if (rc == -ECONNRESET) return fail(rc, std::string("the server closed the connection during ") + what);
  if (rc == -ETIMEDOUT) return fail(rc, std::string("no complete ") + what + " in time");
  return fail(rc, std::string("reading the ") + what + ": " + std::strerror(-rc));
}

int Handshake::write(const void *buf, size_t n, const char *what) {
  int rc = write_all(fd_, buf, n);
  if (rc == 0) return 0;
  // A peer that hung up shows as EPIPE on a write: the same story as EOF.
  if (rc == -EPIPE || rc == -ECONNRESET)
    return fail(-ECONNRESET, std::string("the server closed the connection before ") + what);
  return fail(rc, std::string("sending ") + what + ": " + std::strerror(-rc));
}

int Handshake::send_go() {
  // IHAVEOPT, NBD_OPT_GO, length; then the name and one information
  // request: NBD_INFO_BLOCK_SIZE, by which we promise to honour the
  // server's block sizes (the caller sizes the kernel's requests by them).
  std::vector<char> b;
  put64(b, kOptionMagic);
  put32(b, kOptGo);
  put32(b, uint32_t(4 + name_.size() + 2 + 2));
  put32(b, uint32_t(name_.size()));
  b.insert(b.end(), name_.begin(), name_.end());
  put16(b, 1);
  put16(b, kInfoBlockSize);
  return write(b.data(), b.size(), "NBD_OPT_GO");
}

int Handshake::reply_error(uint32_t type, const std::string &message) {
  std::string said = message.empty() ? "" : " (\"" + message + "\")";
  switch (type) {
    case kRepErrUnknown: return fail(-ENOENT, "the server has no such export" + said);
    case kRepErrUnsup: return fail(-EOPNOTSUPP, "the server does not support NBD_OPT_GO" + said);
    case kRepErrPolicy: return fail(-EACCES, "the server refuses it by policy" + said);
    case kRepErrTlsReqd: return fail(-EACCES, "the server requires TLS" + said);
    case kRepErrShutdown: return fail(-ESHUTDOWN, "the server is shutting down" + said);
    case kRepErrInvalid: return fail(-EPROTO, "the server calls the request invalid" + said);
    case kRepErrBlockSizeReqd:
      // We asked for block sizes, so this answer breaks the protocol.
      return fail(-EPROTO, "the server demands block sizes that were asked for" + said);
    default: return fail(-EPROTO, "the server refused NBD_OPT_GO with error " +
                                      std::to_string(type & 0x7fffffffu) + said);
  }
}

int Handshake::info(const std::vector<unsigned char> &d, NbdClientExport *out, bool *export_seen) {
  if (d.size() < 2) return fail(-EPROTO, "an NBD_REP_INFO with no type");
  switch (get16(d.data())) {
    case kInfoExport:
      if (d.size() != 12) return fail(-EPROTO, "NBD_INFO_EXPORT of " + std::to_string(d.size()) + " bytes (12 expected)");
      out->size = get64(d.data() + 2);
      out->transmission_flags = get16(d.data() + 10);
      *export_seen = true;
      return 0;
    case kInfoBlockSize: {
      if (d.size() != 14) return fail(-EPROTO, "NBD_INFO_BLOCK_SIZE of " + std::to_string(d.size()) + " bytes (14 expected)");
      uint32_t min = get32(d.data() + 2), pref = get32(d.data() + 6), max = get32(d.data() + 10);
      // The spec's rules: minimum a power of two up to 64 KiB; preferred a
      // power of two at least the minimum; maximum a multiple of the minimum
      // and at least the preferred (or 0xffffffff: no limit).
      bool pow2_min = min != 0 && (min & (min - 1)) == 0 && min <= 64 * 1024;
      bool pow2_pref = pref != 0 && (pref & (pref - 1)) == 0 && pref >= min;
      bool ok_max = max == 0xffffffffu || (max >= pref && max % min == 0);
      if (!pow2_min || !pow2_pref || !ok_max)
        return fail(-EPROTO, "block sizes " + std::to_string(min) + "/" + std::to_string(pref) +
                                 "/" + std::to_string(max) + " break the protocol's rules");
      out->min_block = min;
      out->preferred_block = pref;
      out->max_block = max;
      out->block_sizes_sent = true;
      return 0;
    }
    default:
      return 0;  // NAME, DESCRIPTION or newer records: may be sent, may be ignored
  }
}

int Handshake::run(NbdClientExport *out) {
  unsigned char greet[18];
  if (int rc = read(greet, sizeof greet, "greeting")) return rc;
  if (get64(greet) != kNbdMagic) return fail(-EPROTO, "no NBDMAGIC in the greeting (not an NBD server?)");
  uint64_t second = get64(greet + 8);
  if (second == kOldstyleMagic) return fail(-EOPNOTSUPP, "the server speaks only the oldstyle handshake");
  if (second != kOptionMagic) return fail(-EPROTO, "bad magic in the greeting");
  uint16_t server_flags = get16(greet + 16);
  if (!(server_flags & kFlagFixedNewstyle))
    return fail(-EOPNOTSUPP, "the server does not offer the fixed newstyle handshake");

  unsigned char cf[4];
  uint32_t client_flags = kClientFixedNewstyle | (server_flags & kFlagNoZeroes ? kClientNoZeroes : 0);
  cf[0] = uint8_t(client_flags >> 24);
  cf[1] = uint8_t(client_flags >> 16);
  cf[2] = uint8_t(client_flags >> 8);
  cf[3] = uint8_t(client_flags);
  if (int rc = write(cf, 4, "the client flags")) return rc;
  if (int rc = send_go()) return rc;

  NbdClientExport got;
  bool export_seen = false;
  for (;;) {
    unsigned char head[20];
    if (int rc = read(head, sizeof head, "option reply")) return rc;
    if (get64(head) != kOptionReplyMagic) return fail(-EPROTO, "bad option reply magic");
    uint32_t opt = get32(head + 8), type = get32(head + 12), len = get32(head + 16);
    if (opt != kOptGo)
      return fail(-EPROTO, "a reply to option " + std::to_string(opt) + " (NBD_OPT_GO was sent)");
    if (len > kMaxReplyLength) return fail(-EPROTO, "an option reply of " + std::to_string(len) + " bytes");
    std::vector<unsigned char> data(len);
    if (len)
      if (int rc = read(data.data(), len, "option reply")) return rc;
    if (type & (1u << 31)) return reply_error(type, std::string(data.begin(), data.end()));
    if (type == kRepInfo) {
      if (int rc = info(data, &got, &export_seen)) return rc;
      continue;
    }
    if (type != kRepAck) return fail(-EPROTO, "unexpected option reply type " + std::to_string(type));
    if (len != 0) return fail(-EPROTO, "NBD_REP_ACK with a payload");
    if (!export_seen) return fail(-EPROTO, "NBD_REP_ACK before NBD_INFO_EXPORT");
    if (!(got.transmission_flags & kTxHasFlags))
      return fail(-EPROTO, "transmission flags without NBD_FLAG_HAS_FLAGS");
    *out = got;
    return 0;
  }
}

}  // namespace

int nbd_client_go(int fd, const std::string &export_name, uint32_t timeout_ms,
                  NbdClientExport *out, std::string *why) {
  if (export_name.size() > 4096) {
    *why = "nbd export name longer than 4096 bytes";
    return -EINVAL;
  }
  return Handshake(fd, export_name, timeout_ms, why).run(out);
}

}  // namespace strata::rbd

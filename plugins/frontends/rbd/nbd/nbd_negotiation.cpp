#include "nbd_negotiation.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "nbd_protocol.h"

namespace strata::rbd::nbd {

namespace {

// Options carry at most an export name (<= 4096 bytes by the spec) and a
// few meta context queries; anything larger is drained and refused.
constexpr uint32_t kMaxOptionLength = 64 * 1024;
constexpr uint32_t kMaxDrainLength = 16u << 20;

using Bytes = std::vector<char>;

// Reads fields off an option's payload, remembering whether it ran short.
class Cursor {
 public:
  explicit Cursor(const Bytes &b) : p_(reinterpret_cast<const unsigned char *>(b.data())), left_(b.size()) {}
  bool ok() const { return ok_; }
  size_t left() const { return left_; }
  uint16_t u16() { return take(2) ? get16(p_ - 2) : 0; }
  uint32_t u32() { return take(4) ? get32(p_ - 4) : 0; }
  std::string str(size_t n) {
    if (!take(n)) return {};
    return std::string(reinterpret_cast<const char *>(p_ - n), n);
  }

 private:
  bool take(size_t n) {
    if (!ok_ || n > left_) return ok_ = false;
    p_ += n;
    left_ -= n;
    return true;
  }
  const unsigned char *p_;
  size_t left_;
  bool ok_ = true;
};

class Negotiation {
 public:
  Negotiation(int fd, ServerContext &ctx, Clock::time_point deadline)
      : fd_(fd), ctx_(ctx), deadline_(deadline) {}

  bool run(Negotiated *out);

 private:
  enum class Next { option, transmit, close };

  bool read(void *buf, size_t n) { return read_exact(fd_, buf, n, ctx_.stop_fd, deadline_) == 0; }
  bool reply(uint32_t opt, uint32_t type, const Bytes &data = {});
  bool error(uint32_t opt, uint32_t type, const std::string &why);
  const NbdExport *lookup(const std::string &name) const;

  Next option(uint32_t opt, const Bytes &data, Negotiated *out);
  Next export_name(const Bytes &data, Negotiated *out);
  Next info_or_go(uint32_t opt, const Bytes &data, Negotiated *out);
  Next list(uint32_t opt, const Bytes &data);
  Next meta_context(uint32_t opt, const Bytes &data);
  void agree(const NbdExport &exp, const std::string &asked_name, Negotiated *out) const;

  int fd_;
  ServerContext &ctx_;
  Clock::time_point deadline_;
  bool no_zeroes_ = false;
  bool structured_ = false;
  bool base_allocation_ = false;      // selected by the last SET_META_CONTEXT...
  std::string meta_context_export_;   // ...for this export name
};

bool Negotiation::reply(uint32_t opt, uint32_t type, const Bytes &data) {
  Bytes head;
  put64(head, kOptionReplyMagic);
  put32(head, opt);
  put32(head, type);
  put32(head, uint32_t(data.size()));
  iovec iov[2] = {{head.data(), head.size()}, {const_cast<char *>(data.data()), data.size()}};
  return write_all(fd_, iov, 2) == 0;
}

bool Negotiation::error(uint32_t opt, uint32_t type, const std::string &why) {
  ctx_.log(kLogDebug, "nbd: option %u refused: %s", opt, why.c_str());
  return reply(opt, type, Bytes(why.begin(), why.end()));
}

// "" is the default export: the one named "", else the first one.
const NbdExport *Negotiation::lookup(const std::string &name) const {
  if (const NbdExport *e = ctx_.find_export(name)) return e;
  if (name.empty() && !ctx_.exports.empty()) return &ctx_.exports.front();
  return nullptr;
}

void Negotiation::agree(const NbdExport &exp, const std::string &asked_name, Negotiated *out) const {
  out->exp = &exp;
  out->structured = structured_;
  out->base_allocation = structured_ && base_allocation_ && meta_context_export_ == asked_name;
  out->read_only = ctx_.read_only(exp);
  out->transmission_flags = transmission_flags(ctx_, exp, structured_);
}

bool Negotiation::run(Negotiated *out) {
  Bytes greet;
  put64(greet, kNbdMagic);
  put64(greet, kOptionMagic);
  put16(greet, kFlagFixedNewstyle | kFlagNoZeroes);
  if (write_all(fd_, greet.data(), greet.size()) != 0) return false;

  unsigned char cf[4];
  if (!read(cf, 4)) return false;
  uint32_t client_flags = get32(cf);
  if ((client_flags & ~(kClientFixedNewstyle | kClientNoZeroes)) != 0 ||
      !(client_flags & kClientFixedNewstyle)) {
    ctx_.stats.protocol_errors++;
    ctx_.log(kLogWarning, "nbd: client flags 0x%x refused (fixed newstyle only)", client_flags);
    return false;
  }
  no_zeroes_ = client_flags & kClientNoZeroes;

  for (;;) {
    unsigned char head[16];
    if (!read(head, sizeof(head))) return false;
    uint64_t magic = get64(head);
    uint32_t opt = get32(head + 8), len = get32(head + 12);
    if (magic != kOptionMagic) {
      ctx_.stats.protocol_errors++;
      ctx_.log(kLogWarning, "nbd: bad option magic 0x%llx", static_cast<unsigned long long>(magic));
      return false;
    }
    if (len > kMaxOptionLength) {
      // The payload must be consumed to find the next option; past a
      // sane size the client is not worth it.
      if (len > kMaxDrainLength) return false;
      std::vector<char> sink(len);
      if (!read(sink.data(), len)) return false;
      if (!error(opt, kRepErrTooBig, "option too long")) return false;
      continue;
    }
    Bytes data(len);
    if (len && !read(data.data(), len)) return false;
    switch (option(opt, data, out)) {
      case Next::option: continue;
      case Next::transmit: return true;
      case Next::close: return false;
    }
  }
}

Negotiation::Next Negotiation::option(uint32_t opt, const Bytes &data, Negotiated *out) {
  auto sent = [](bool ok) { return ok ? Next::option : Next::close; };
  switch (opt) {
    case kOptExportName:
      return export_name(data, out);
    case kOptAbort:
      // The client may already be gone; the acknowledgement is a courtesy.
      reply(opt, kRepAck);
      return Next::close;
    case kOptList:
      return list(opt, data);
    case kOptStartTls:
      if (!data.empty()) return sent(error(opt, kRepErrInvalid, "STARTTLS takes no data"));
      return sent(error(opt, kRepErrPolicy, "TLS is not offered"));
    case kOptInfo:
    case kOptGo:
      return info_or_go(opt, data, out);
    case kOptStructuredReply:
      if (!data.empty()) return sent(error(opt, kRepErrInvalid, "STRUCTURED_REPLY takes no data"));
      structured_ = true;
      return sent(reply(opt, kRepAck));
    case kOptListMetaContext:
    case kOptSetMetaContext:
      return meta_context(opt, data);
    default:
      return sent(error(opt, kRepErrUnsup, "option not supported"));
  }
}

Negotiation::Next Negotiation::export_name(const Bytes &data, Negotiated *out) {
  std::string name(data.begin(), data.end());
  const NbdExport *exp = lookup(name);
  if (!exp) {
    // EXPORT_NAME has no way to say no but closing.
    ctx_.log(kLogInfo, "nbd: EXPORT_NAME for unknown export '%s'", name.c_str());
    return Next::close;
  }
  agree(*exp, name, out);
  Bytes ans;
  put64(ans, exp->device->size());
  put16(ans, out->transmission_flags);
  if (!no_zeroes_) ans.resize(ans.size() + 124, 0);
  return write_all(fd_, ans.data(), ans.size()) == 0 ? Next::transmit : Next::close;
}

Negotiation::Next Negotiation::info_or_go(uint32_t opt, const Bytes &data, Negotiated *out) {
  auto sent = [](bool ok) { return ok ? Next::option : Next::close; };
  Cursor c(data);
  uint32_t name_len = c.u32();
  std::string name = c.str(name_len);
  uint16_t count = c.u16();
  std::vector<uint16_t> asked;
  for (uint16_t i = 0; i < count && c.ok(); ++i) asked.push_back(c.u16());
  if (!c.ok() || c.left() != 0) return sent(error(opt, kRepErrInvalid, "malformed INFO/GO request"));
  const NbdExport *exp = lookup(name);
  if (!exp) return sent(error(opt, kRepErrUnknown, "no such export: " + name));

  BlockDevice &dev = *exp->device;
  uint16_t flags = transmission_flags(ctx_, *exp, structured_);
  Bytes info;
  put16(info, kInfoExport);
  put64(info, dev.size());
  put16(info, flags);
  if (!reply(opt, kRepInfo, info)) return Next::close;

  auto wants = [&](uint16_t t) { return std::find(asked.begin(), asked.end(), t) != asked.end(); };
  if (wants(kInfoName)) {
    info.clear();
    put16(info, kInfoName);
    info.insert(info.end(), exp->name.begin(), exp->name.end());
    if (!reply(opt, kRepInfo, info)) return Next::close;
  }
  if (wants(kInfoDescription)) {
    info.clear();
    put16(info, kInfoDescription);
    info.insert(info.end(), exp->description.begin(), exp->description.end());
    if (!reply(opt, kRepInfo, info)) return Next::close;
  }
  // Sent whether asked or not: the device's sizes are what it serves best,
  // and max_payload is a limit the client had better know.
  // The spec's bounds: minimum a power of two up to 64 KiB, preferred at
  // least 512 and the minimum, maximum a multiple of the minimum.
  uint32_t min_block = std::clamp<uint32_t>(dev.min_block(), 1, 64 * 1024);
  uint32_t preferred = std::max({512u, min_block, dev.preferred_block()});
  uint32_t max_block = std::max(ctx_.opts.max_payload, preferred) / min_block * min_block;
  info.clear();
  put16(info, kInfoBlockSize);
  put32(info, min_block);
  put32(info, preferred);
  put32(info, max_block);
  if (!reply(opt, kRepInfo, info)) return Next::close;

  if (!reply(opt, kRepAck)) return Next::close;
  if (opt == kOptInfo) return Next::option;
  agree(*exp, name, out);
  return Next::transmit;
}

Negotiation::Next Negotiation::list(uint32_t opt, const Bytes &data) {
  auto sent = [](bool ok) { return ok ? Next::option : Next::close; };
  if (!data.empty()) return sent(error(opt, kRepErrInvalid, "LIST takes no data"));
  for (const auto &e : ctx_.exports) {
    Bytes one;
    put32(one, uint32_t(e.name.size()));
    one.insert(one.end(), e.name.begin(), e.name.end());
    one.insert(one.end(), e.description.begin(), e.description.end());
    if (!reply(opt, kRepServer, one)) return Next::close;
  }
  return sent(reply(opt, kRepAck));
}

Negotiation::Next Negotiation::meta_context(uint32_t opt, const Bytes &data) {
  auto sent = [](bool ok) { return ok ? Next::option : Next::close; };
  bool set = opt == kOptSetMetaContext;
  // SET replaces the selection even when it fails.
  if (set) base_allocation_ = false;
  if (set && !structured_) return sent(error(opt, kRepErrInvalid, "structured replies not negotiated"));
  Cursor c(data);
  uint32_t name_len = c.u32();
  std::string name = c.str(name_len);
  uint32_t count = c.u32();
  std::vector<std::string> queries;
  for (uint32_t i = 0; i < count && c.ok(); ++i) {
    uint32_t qlen = c.u32();
    queries.push_back(c.str(qlen));
  }
  if (!c.ok() || c.left() != 0) return sent(error(opt, kRepErrInvalid, "malformed meta context request"));
  if (!lookup(name)) return sent(error(opt, kRepErrUnknown, "no such export: " + name));

  // The only context is base:allocation. LIST answers it for no query (list
  // everything), "base:" (everything in the namespace) or its own name;
  // SET selects it only by its full name.
  bool match = false;
  if (!set && queries.empty()) match = true;
  for (const auto &q : queries) {
    if (q == kBaseAllocation || (!set && q == "base:")) match = true;
  }
  if (set) {
    base_allocation_ = match;
    meta_context_export_ = name;
  }
  if (match) {
    Bytes ctxrep;
    put32(ctxrep, set ? kBaseAllocationId : 0);
    std::string n = kBaseAllocation;
    ctxrep.insert(ctxrep.end(), n.begin(), n.end());
    if (!reply(opt, kRepMetaContext, ctxrep)) return Next::close;
  }
  return sent(reply(opt, kRepAck));
}

}  // namespace

uint16_t transmission_flags(const ServerContext &ctx, const NbdExport &exp, bool structured) {
  uint16_t f = kTxHasFlags | kTxSendFlush | kTxSendFua | kTxCanMultiConn | kTxSendCache;
  if (ctx.read_only(exp)) {
    f |= kTxReadOnly;
  } else {
    f |= kTxSendTrim | kTxSendWriteZeroes;
  }
  if (structured) f |= kTxSendDf;
  return f;
}

bool negotiate(int fd, ServerContext &ctx, Clock::time_point deadline, Negotiated *out) {
  return Negotiation(fd, ctx, deadline).run(out);
}

}  // namespace strata::rbd::nbd

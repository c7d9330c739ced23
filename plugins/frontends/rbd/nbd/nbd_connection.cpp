#include "nbd_connection.h"

#include <sys/socket.h>
#include <unistd.h>

#include <vector>

#include "nbd_protocol.h"
#include "nbd_reply.h"

namespace strata::rbd::nbd {

struct Connection::Request {
  uint16_t flags = 0, type = 0;
  uint64_t cookie = 0, offset = 0;
  uint32_t length = 0;
  std::vector<char> buf;  // the write payload, or the read's destination
};

Connection::Connection(int fd, ServerContext &ctx) : fd_(fd), ctx_(ctx) {
  ctx_.stats.connections_total++;
  ctx_.stats.connections_open++;
}

Connection::~Connection() { ::close(fd_); }

void Connection::run() {
  auto deadline = Clock::now() + std::chrono::milliseconds(ctx_.opts.handshake_timeout_ms);
  if (negotiate(fd_, ctx_, deadline, &neg_)) {
    ctx_.log(kLogDebug, "nbd: serving '%s' (%s)", neg_.exp->name.c_str(),
             neg_.structured ? "structured replies" : "simple replies");
    serve();
  }
  wait_idle();
  // Replies are all out: say goodbye at once rather than at destruction,
  // which waits for the server to reap this connection.
  ::shutdown(fd_, SHUT_RDWR);
  ctx_.stats.connections_open--;
  finished_ = true;
}

void Connection::serve() {
  while (!broken_ && next_request()) {
  }
}

bool Connection::next_request() {
  unsigned char head[kRequestSize];
  if (read_exact(fd_, head, sizeof(head), ctx_.stop_fd, Clock::time_point::max()) != 0) return false;
  if (get32(head) != kRequestMagic) {
    ctx_.stats.protocol_errors++;
    ctx_.log(kLogWarning, "nbd: bad request magic 0x%x, closing", get32(head));
    return false;
  }
  auto req = std::make_shared<Request>();
  req->flags = get16(head + 4);
  req->type = get16(head + 6);
  req->cookie = get64(head + 8);
  req->offset = get64(head + 16);
  req->length = get32(head + 24);
  ctx_.stats.requests++;

  if (req->type == kCmdDisc) return false;
  uint32_t error = check(*req);
  if (error) {
    // A refused write's payload still follows: consume it to stay in step.
    if (req->type == kCmdWrite && !drain_payload(req->length)) return false;
    send_error(*req, error);
    return true;
  }
  if (req->type == kCmdBlockStatus) {
    block_status(*req);
    return true;
  }
  // Room first, then the payload: the budget bounds the memory of the
  // buffers as well as the number of requests.
  uint64_t bytes = req->type == kCmdRead || req->type == kCmdWrite ? req->length : 0;
  wait_for_room(bytes);
  if (req->type == kCmdWrite) {
    // Read in full before anything is done, so a client that leaves
    // mid-way has nothing executed.
    req->buf.resize(req->length);
    if (read_exact(fd_, req->buf.data(), req->length, ctx_.stop_fd, Clock::time_point::max()) != 0) {
      release(bytes);
      return false;
    }
  }
  submit(std::move(req));
  return true;
}

bool Connection::drain_payload(uint32_t len) {
  char sink[64 * 1024];
  while (len > 0) {
    uint32_t n = std::min<uint32_t>(len, sizeof(sink));
    if (read_exact(fd_, sink, n, ctx_.stop_fd, Clock::time_point::max()) != 0) return false;
    len -= n;
  }
  return true;
}

// 0 when the request may go to the device, else the NBD error to answer.
uint32_t Connection::check(const Request &req) const {
  uint16_t allowed = kCmdFlagFua;  // FUA is advertised and harmless on any command
  bool writes = false, has_range = true, payload_limited = false;
  switch (req.type) {
    case kCmdRead:
      if (neg_.structured) allowed |= kCmdFlagDf;
      payload_limited = true;
      break;
    case kCmdWrite:
      writes = payload_limited = true;
      break;
    case kCmdFlush:
      has_range = false;
      break;
    case kCmdTrim:
      writes = true;
      break;
    case kCmdWriteZeroes:
      writes = true;
      allowed |= kCmdFlagNoHole;
      break;
    case kCmdCache:
      break;
    case kCmdBlockStatus:
      if (!neg_.base_allocation) return kErrInval;  // no meta context negotiated
      allowed |= kCmdFlagReqOne;
      break;
    default:
      return kErrInval;
  }
  if (req.flags & ~allowed) return kErrInval;
  if (writes && neg_.read_only) return kErrPerm;
  if (!has_range) return req.offset == 0 && req.length == 0 ? 0 : kErrInval;
  if (req.length == 0) return kErrInval;
  if (payload_limited && req.length > ctx_.opts.max_payload) {
    return neg_.structured && req.type == kCmdRead ? kErrOverflow : kErrInval;
  }
  uint64_t size = neg_.exp->device->size();
  if (req.offset > size || req.length > size - req.offset) {
    // The spec: ENOSPC for writing past the end, EINVAL for the rest.
    return req.type == kCmdWrite || req.type == kCmdWriteZeroes ? kErrNoSpc : kErrInval;
  }
  return 0;
}

void Connection::wait_for_room(uint64_t bytes) {
  uint32_t max_requests = std::max<uint32_t>(1, ctx_.opts.max_inflight_per_connection);
  uint64_t max_bytes = std::max<uint64_t>(kInflightBytes, ctx_.opts.max_payload);
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait(l, [&] {
    return inflight_ == 0 || (inflight_ < max_requests && inflight_bytes_ + bytes <= max_bytes);
  });
  inflight_++;
  inflight_bytes_ += bytes;
}

void Connection::release(uint64_t bytes) {
  {
    std::lock_guard<std::mutex> l(mu_);
    inflight_--;
    inflight_bytes_ -= bytes;
  }
  cv_.notify_all();
}

void Connection::wait_idle() {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait(l, [this] { return inflight_ == 0; });
}

void Connection::submit(std::shared_ptr<Request> req) {
  BlockDevice &dev = *neg_.exp->device;
  bool fua = req->flags & kCmdFlagFua;
  auto self = shared_from_this();
  Done done = [self, req](int result) { self->complete(req, result); };
  switch (req->type) {
    case kCmdRead:
      ctx_.stats.reads++;
      req->buf.resize(req->length);
      dev.read(req->offset, req->length, req->buf.data(), std::move(done));
      break;
    case kCmdWrite:
      ctx_.stats.writes++;
      dev.write(req->offset, req->length, req->buf.data(), fua, std::move(done));
      break;
    case kCmdFlush:
      ctx_.stats.flushes++;
      dev.flush(std::move(done));
      break;
    case kCmdTrim:
      ctx_.stats.trims++;
      dev.discard(req->offset, req->length, fua, std::move(done));
      break;
    case kCmdWriteZeroes:
      ctx_.stats.zeroes++;
      dev.write_zeroes(req->offset, req->length, !(req->flags & kCmdFlagNoHole), fua, std::move(done));
      break;
    case kCmdCache:
      ctx_.stats.caches++;
      dev.cache(req->offset, req->length, std::move(done));
      break;
  }
}

void Connection::complete(const std::shared_ptr<Request> &req, int result) {
  uint32_t error = nbd_error_from_errno(result);
  if (error) {
    ctx_.log(kLogDebug, "nbd: command %u at %llu+%u failed: %d", req->type,
             static_cast<unsigned long long>(req->offset), req->length, result);
    send_error(*req, error);
  } else {
    Reply reply;
    bool is_read = req->type == kCmdRead;
    if (is_read) ctx_.stats.bytes_read += req->length;
    if (req->type == kCmdWrite) ctx_.stats.bytes_written += req->length;
    if (!neg_.structured) {
      reply.simple(req->cookie, 0, is_read ? req->buf.data() : nullptr, is_read ? req->length : 0);
    } else if (is_read) {
      structured_read(&reply, req->cookie, req->offset, req->buf.data(), req->length,
                      std::max<uint32_t>(4096, neg_.exp->device->preferred_block()),
                      req->flags & kCmdFlagDf);
    } else {
      reply.chunk(req->cookie, kReplyTypeNone, true, {});
    }
    send(reply);
  }
  // Last: once inflight_ drops to 0 the reader may close the socket.
  release(req->type == kCmdRead || req->type == kCmdWrite ? req->length : 0);
}

void Connection::block_status(const Request &req) {
  ctx_.stats.block_status++;
  std::vector<Extent> extents;
  int rc = neg_.exp->device->extents(req.offset, req.length, &extents);
  Reply reply;
  if (rc != 0) {
    send_error(req, nbd_error_from_errno(rc));
  } else if (!structured_block_status(&reply, req.cookie, kBaseAllocationId, req.offset, req.length,
                                      extents, req.flags & kCmdFlagReqOne)) {
    send_error(req, kErrIo);
  } else {
    send(reply);
  }
}

void Connection::send_error(const Request &req, uint32_t error) {
  ctx_.stats.errors++;
  Reply reply;
  if (neg_.structured) {
    structured_error(&reply, req.cookie, error, {});
  } else {
    reply.simple(req.cookie, error);
  }
  send(reply);
}

void Connection::send(const Reply &reply) {
  std::lock_guard<std::mutex> l(write_mu_);
  if (broken_) return;
  const auto &iov = reply.iov();
  if (write_all(fd_, iov.data(), int(iov.size())) != 0) {
    // The client is gone (or stopped reading): wake the reader so the
    // connection ends; the requests still in flight finish unanswered.
    broken_ = true;
    ::shutdown(fd_, SHUT_RDWR);
  }
}

}  // namespace strata::rbd::nbd

// The messenger on Boost.Asio. One Conn per TCP connection; everything that
// touches a Conn's socket runs on that Conn's strand, so with several I/O
// threads each connection is still handled by one thread at a time.
//
// Hot path, chosen for latency: frames are decoded and handed to
// on_message inline in the read handler (no thread handoff); a send() made
// from a handler starts the gather write inline on the same strand (Asio
// tries the write at once, without waiting for epoll); a send() from another
// thread posts one start_write, and everything queued meanwhile goes out in
// the same gather write. Large payloads and segments are read straight into
// the frame's buffers.
#include "msg/messenger.h"
#include "common/thread_name.h"

#include <boost/asio.hpp>
#include <kj/exception.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "msg/frame.h"
#include "msg/handshake.h"
#include "msg/message_types.h"
#include "msg/peer_log_limiter.h"

namespace strata::msg {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

constexpr const char *kLogComponent = "msg";
// Bytes read per syscall into the staging buffer; anything of the current
// frame part at least kDirectRead long is read into place instead.
constexpr std::size_t kReadBuffer = 64 * 1024;
constexpr std::size_t kDirectRead = 16 * 1024;
// Unauthenticated peers get a small buffer: a crowd of half-open
// connections should not cost 64 KiB each.
constexpr std::size_t kHandshakeReadBuffer = 4096;
// Frame types below this are the messenger's handshake.
constexpr uint16_t kFirstUserType = 16;

// io_context whose pending handlers can be dropped on stop() (they hold
// Conn references that would otherwise keep the context alive forever).
struct IoContext : asio::io_context {
  using asio::io_context::shutdown;
};

std::string endpoint_string(const tcp::endpoint &ep) {
  auto addr = ep.address();
  std::string host = addr.is_v6() ? "[" + addr.to_string() + "]" : addr.to_string();
  return host + ":" + std::to_string(ep.port());
}

FrameLimits limits_of(const MessengerOptions &o) {
  return FrameLimits{o.max_payload, o.max_data, o.max_segments};
}

// "host:port" or "[v6]:port" -> (host, port).
Result<std::pair<std::string, std::string>> split_address(const std::string &address) {
  std::size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size())
    return Status::Error(EINVAL, "bad address '" + address + "' (expected host:port)");
  std::string host = address.substr(0, colon);
  std::string port = address.substr(colon + 1);
  if (host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return std::make_pair(host, port);
}

class Conn;

// Everything connections share with the Messenger; kept alive by each
// Conn, so a ConnectionRef held past the Messenger stays safe to use.
struct Core {
  Core(std::string self_, std::string secret_, SecretLookup lookup_, Logger &log_,
       MessengerOptions opts_)
      : self(std::move(self_)), secret(std::move(secret_)), lookup(std::move(lookup_)), log(log_),
        opts(opts_), limits(limits_of(opts_)), unauthenticated_log(opts_.unauthenticated_log_interval) {
    if (opts.io_threads < 1) opts.io_threads = 1;
  }

  const std::string self;
  const std::string secret;
  const SecretLookup lookup;
  Logger &log;
  MessengerOptions opts;
  const FrameLimits limits;
  PeerLogLimiter unauthenticated_log;
  Handlers handlers;

  IoContext io;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::vector<std::thread> threads;
  std::vector<std::thread::id> thread_ids;
  std::vector<std::unique_ptr<tcp::acceptor>> acceptors;

  std::mutex mu;  // conns, started, stopping
  std::unordered_map<Conn *, std::shared_ptr<Conn>> conns;
  bool started = false;
  std::atomic<bool> stopping{false};
  std::atomic<bool> finished{false};  // I/O threads joined: nothing runs any more
  // Bumped by close_entity before it looks for connections to close; an
  // incoming handshake that saw another value when it started may have
  // checked a key that is gone, and is closed as it opens.
  std::atomic<uint64_t> revocations{0};

  bool on_io_thread() const {
    auto me = std::this_thread::get_id();
    for (auto id : thread_ids)
      if (id == me) return true;
    return false;
  }
  bool add(const std::shared_ptr<Conn> &c) {
    std::lock_guard lk(mu);
    if (stopping) return false;
    conns.emplace(c.get(), c);
    return true;
  }
  void remove(Conn *c) {
    std::lock_guard lk(mu);
    conns.erase(c);
  }
  void warn(const std::string &m) { log.warn(kLogComponent, self + ": " + m); }
  void info(const std::string &m) { log.info(kLogComponent, self + ": " + m); }
  void debug(const std::string &m) { log.debug(kLogComponent, self + ": " + m); }

  // An I/O thread. A handler that throws is a bug in the caller, but one
  // bad message must not take the whole daemon's messenger down with it.
  void run_io() {
    for (;;) {
      try {
        io.run();
        return;
      } catch (const std::exception &e) {
        log.error(kLogComponent, self + ": handler threw: " + e.what());
      } catch (...) {
        log.error(kLogComponent, self + ": handler threw a non-standard exception");
      }
    }
  }
};

class Conn;
bool in_send_batch();
void hold_in_batch(std::shared_ptr<Conn> c);

class Conn final : public Connection, public std::enable_shared_from_this<Conn> {
 public:
  // The end of a SendBatch that held frames here (see release_held below).
  void release_batch() { release_held(); }

  Conn(std::shared_ptr<Core> core, tcp::socket sock, bool incoming)
      : core_(std::move(core)),
        sock_(std::move(sock)),
        strand_(asio::make_strand(core_->io)),
        timer_(strand_),
        incoming_(incoming),
        decoder_(kHandshakeLimits),
        rbuf_(kHandshakeReadBuffer) {}

  // --- Connection ---------------------------------------------------------
  bool send(Message m) override {
    Status s = check_encodable(m, core_->limits);
    if (!s.ok()) {
      core_->warn("not sending to " + describe() + ": " + s.message());
      return false;
    }
    return enqueue(std::move(m));
  }
  const std::string &peer_entity() const override { return peer_entity_; }
  std::string peer_address() const override { return peer_address_; }
  void close(const std::string &reason) override {
    open_.store(false, std::memory_order_release);
    {
      std::lock_guard lk(wmu_);
      closing_ = true;
    }
    if (core_->finished) return;  // the messenger stopped: already closed
    // Always posted, even from a handler on this strand, so on_close never
    // runs re-entrantly inside the caller's on_message.
    asio::post(strand_, [self = shared_from_this(), reason] { self->do_close(reason, false); });
  }
  bool is_open() const override { return open_.load(std::memory_order_acquire); }

  // For close_entity: closes this connection if it is open and its peer is
  // `entity`. peer_entity_ is only read once open_ is seen true (it is
  // written before become_open publishes it).
  bool close_if_peer(const std::string &entity, const std::string &reason) {
    if (!open_.load() || peer_entity_ != entity) return false;
    close(reason);
    return true;
  }

  // --- Messenger side ---------------------------------------------------------
  // An accepted connection: challenge the peer.
  void start_incoming() {
    asio::dispatch(strand_, [self = shared_from_this()] {
      self->init_socket();
      self->revocations_at_start_ = self->core_->revocations.load();
      self->server_hs_ = std::make_unique<ServerHandshake>(self->core_->self, &self->core_->lookup);
      self->arm_handshake_timer(self->core_->opts.handshake_timeout);
      self->enqueue(self->server_hs_->challenge());
      self->start_read();
    });
  }

  // An outgoing connection: connect, then answer the challenge. The future
  // becomes ready when authenticated or failed.
  std::future<Status> start_outgoing(std::vector<tcp::endpoint> eps, std::string address,
                                     std::chrono::milliseconds timeout) {
    peer_address_ = address;
    std::future<Status> f = connected_.get_future();
    asio::dispatch(strand_, [self = shared_from_this(), eps = std::move(eps), timeout] {
      self->client_hs_ = std::make_unique<ClientHandshake>(self->core_->self, self->core_->secret);
      self->arm_handshake_timer(timeout);
      asio::async_connect(self->sock_, eps,
                          asio::bind_executor(self->strand_, [self](error_code ec, const tcp::endpoint &) {
                            if (self->state_ == State::kClosed) return;
                            if (ec) {
                              self->do_close("connect failed: " + ec.message(), true, ec.value());
                              return;
                            }
                            self->init_socket();
                            self->start_read();
                          }));
    });
    return f;
  }

 private:
  enum class State { kHandshake, kOpen, kClosed };

  struct Out {
    FrameHead head;
    Message msg;
    size_t sent = 0;  // bytes of this frame already on the wire (a direct send's part)
  };

  std::string describe() const {
    std::string who = peer_entity_.empty() ? "unauthenticated peer" : peer_entity_;
    return who + " at " + peer_address_ + (incoming_ ? " (incoming)" : " (outgoing)");
  }

  void init_socket() {
    error_code ec;
    sock_.set_option(tcp::no_delay(true), ec);
    sock_.set_option(asio::socket_base::keep_alive(true), ec);
    // Probe an idle peer after 5 s, every 2 s, give up after 3 misses: a
    // connection whose peer vanished (a cut network, a dead host) ends in
    // ~11 s instead of the system default of hours. Best effort.
    int fd = sock_.native_handle(), idle = 5, intvl = 2, cnt = 3;
    ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
    ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
    auto ep = sock_.remote_endpoint(ec);
    if (!ec) peer_address_ = endpoint_string(ep);
  }

  void arm_handshake_timer(std::chrono::milliseconds after) {
    timer_.expires_after(after);
    timer_.async_wait([self = shared_from_this(), after](error_code ec) {
      if (ec || self->state_ != State::kHandshake) return;
      self->do_close("handshake timed out after " + std::to_string(after.count()) + " ms", true,
                     ETIMEDOUT);
    });
  }

  // Queues a frame (any thread). False once the connection is closing.
  bool enqueue(Message m) {
    Out out{encode_frame_head(m), std::move(m)};
    bool kick = false;
    if (in_send_batch() && !strand_.running_in_this_thread()) {
      bool first = false;
      {
        std::lock_guard lk(wmu_);
        if (closing_) return false;
        pending_.push_back(std::move(out));
        // Someone else's write (or an earlier batch) takes it along.
        if (!writing_ && !held_) held_ = first = true;
      }
      if (first) hold_in_batch(shared_from_this());
      return true;
    }
    {
      std::lock_guard lk(wmu_);
      if (closing_) return false;
      // Nothing queued or being written on an open connection: the frame
      // goes out from this thread at once. Waking an I/O thread for it
      // costs a context switch, and on a VM whose idle vCPUs halt, tens of
      // microseconds per message. wmu_ keeps the socket open meanwhile
      // (do_close sets closing_ under it before closing) and the frames in
      // order (no write runs while writing_ is false).
      if (!writing_ && pending_.empty() && open_.load(std::memory_order_acquire) &&
          !strand_.running_in_this_thread() && send_now_locked(out))
        return true;
      pending_.push_back(std::move(out));
      if (!writing_) writing_ = kick = true;
    }
    if (kick) {
      if (strand_.running_in_this_thread())
        start_write();
      else
        asio::post(strand_, [self = shared_from_this()] { self->start_write(); });
    }
    return true;
  }

  // The end of the SendBatch that held frames here: they go out at once in
  // one gather write if the socket takes them, else from the strand.
  void release_held() {
    bool kick = false;
    {
      std::lock_guard lk(wmu_);
      held_ = false;
      if (writing_ || pending_.empty() || closing_) return;
      if (open_.load(std::memory_order_acquire) && send_pending_now_locked()) return;
      writing_ = kick = true;
    }
    if (kick) asio::post(strand_, [self = shared_from_this()] { self->start_write(); });
  }

  // Writes as many of the pending frames as the socket takes without
  // blocking; true when all went. Frames sent whole leave the queue; the
  // first one left may be part-sent (its `sent` says how much).
  // REQUIRES: wmu_, no write in progress.
  bool send_pending_now_locked() {
    std::array<iovec, 64> iov{};
    size_t n = 0;
    for (const Out &o : pending_) {
      for_each_unsent_part(o, [&](const char *p, size_t len) {
        if (n < iov.size()) iov[n++] = iovec{const_cast<char *>(p), len};
      });
      if (n == iov.size()) break;
    }
    msghdr mh{};
    mh.msg_iov = iov.data();
    mh.msg_iovlen = n;
    ssize_t w = ::sendmsg(sock_.native_handle(), &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (w <= 0) return false;  // EAGAIN, or an error the strand's write reports
    size_t left = static_cast<size_t>(w), done = 0;
    for (Out &o : pending_) {
      size_t rest = frame_bytes(o) - o.sent;
      if (left < rest) {
        o.sent += left;
        break;
      }
      left -= rest;
      ++done;
    }
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(done));
    return pending_.empty();
  }

  // Calls add(pointer, length) for each part of o's frame (header, table,
  // payload, segments) not yet on the wire, skipping the o.sent bytes that are.
  template <class Add>
  static void for_each_unsent_part(const Out &o, Add &&add) {
    size_t skip = o.sent;
    auto part = [&](const void *p, size_t len) {
      if (skip >= len) {
        skip -= len;
        return;
      }
      add(static_cast<const char *>(p) + skip, len - skip);
      skip = 0;
    };
    part(o.head.header.data(), o.head.header.size());
    part(o.head.table.data(), o.head.table.size());
    part(o.msg.payload.data(), o.msg.payload.size());
    for (const auto &seg : o.msg.segments) part(seg.data(), seg.size());
  }

  static size_t frame_bytes(const Out &o) {
    size_t total = o.head.header.size() + o.head.table.size() + o.msg.payload.size();
    for (const auto &seg : o.msg.segments) total += seg.size();
    return total;
  }

  // Writes as much of `out` as the socket takes without blocking; true when
  // all of it went. The rest (out.sent says how much went) is for the strand.
  // REQUIRES: wmu_, no write in progress.
  bool send_now_locked(Out &out) {
    std::array<iovec, 16> iov{};
    size_t n = 0, total = 0;
    auto add = [&](const void *p, size_t len) {
      if (len == 0) return true;
      if (n == iov.size()) return false;
      iov[n++] = iovec{const_cast<void *>(p), len};
      total += len;
      return true;
    };
    bool fits = add(out.head.header.data(), out.head.header.size()) &&
                add(out.head.table.data(), out.head.table.size()) &&
                add(out.msg.payload.data(), out.msg.payload.size());
    for (const auto &seg : out.msg.segments) fits = fits && add(seg.data(), seg.size());
    if (!fits) return false;  // many segments: the strand's gather write does it
    msghdr mh{};
    mh.msg_iov = iov.data();
    mh.msg_iovlen = n;
    ssize_t w = ::sendmsg(sock_.native_handle(), &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (w < 0) return false;  // EAGAIN, or an error the strand's write reports
    out.sent = static_cast<size_t>(w);
    return out.sent == total;
  }

  void start_write() {
    if (state_ == State::kClosed) return;
    {
      std::lock_guard lk(wmu_);
      inflight_.clear();
      if (pending_.empty()) {
        writing_ = false;
        if (!close_after_write_.empty()) {
          std::string reason = std::move(close_after_write_);
          close_after_write_.clear();
          asio::post(strand_, [self = shared_from_this(), reason] { self->do_close(reason, true); });
        }
        return;
      }
      inflight_.swap(pending_);
    }
    bufs_.clear();
    for (const Out &o : inflight_) {
      // Only the first frame can be part-sent (a direct send found the
      // socket buffer full).
      for_each_unsent_part(o, [&](const char *p, size_t len) { bufs_.emplace_back(p, len); });
    }
    asio::async_write(sock_, bufs_,
                      asio::bind_executor(strand_, [self = shared_from_this()](error_code ec, std::size_t) {
                        if (self->state_ == State::kClosed) return;
                        if (ec) {
                          self->do_close("write failed: " + ec.message(), true);
                          return;
                        }
                        self->start_write();
                      }));
  }

  void start_read() {
    if (state_ == State::kClosed || reading_stopped_) return;
    std::span<char> w = decoder_.want();
    if (w.size() >= kDirectRead) {
      // A large payload or segment: receive it in place.
      sock_.async_read_some(asio::buffer(w.data(), w.size()),
                            asio::bind_executor(strand_, [self = shared_from_this()](error_code ec, std::size_t n) {
                              if (self->state_ == State::kClosed) return;
                              if (ec) return self->on_read_error(ec);
                              Status s = self->decoder_.commit(n);
                              if (!s.ok()) return self->on_bad_frame(s);
                              if (self->decoder_.ready() && !self->deliver(self->decoder_.take())) return;
                              self->start_read();
                            }));
      return;
    }
    sock_.async_read_some(asio::buffer(rbuf_.data(), rbuf_.size()),
                          asio::bind_executor(strand_, [self = shared_from_this()](error_code ec, std::size_t n) {
                            if (self->state_ == State::kClosed) return;
                            if (ec) return self->on_read_error(ec);
                            if (!self->consume(n)) return;
                            self->start_read();
                          }));
  }

  // Decodes and delivers the n staged bytes; false when reading must stop.
  bool consume(std::size_t n) {
    std::size_t off = 0;
    while (off < n) {
      auto used = decoder_.feed(rbuf_.data() + off, n - off);
      if (!used.ok()) {
        on_bad_frame(used.status());
        return false;
      }
      off += used.value();
      if (decoder_.ready() && !deliver(decoder_.take())) return false;
    }
    return true;
  }

  void on_read_error(const error_code &ec) {
    if (ec == asio::error::eof) {
      if (decoder_.at_frame_boundary())
        do_close("peer closed the connection", state_ == State::kHandshake);
      else
        do_close("peer closed the connection in the middle of a frame (truncated frame)", true);
    } else if (ec != asio::error::operation_aborted) {
      do_close("read failed: " + ec.message(), true);
    }
  }

  void on_bad_frame(const Status &s) { do_close("bad frame: " + s.message(), true); }

  // One whole frame; false when reading must stop (closed, or refused).
  bool deliver(Message &&m) {
    if (state_ == State::kHandshake) return handshake_frame(m);
    if (m.type < kFirstUserType) {
      do_close("handshake frame type " + std::to_string(m.type) + " after authentication", true);
      return false;
    }
    // close() was called (e.g. the peer's key was revoked): nothing more
    // from this connection reaches the handler, even frames already read.
    if (!is_open()) return false;
    if (core_->handlers.on_message) {
      auto self = shared_from_this();
      if (!guarded("on_message", [&] { core_->handlers.on_message(self, std::move(m)); })) return false;
    }
    // The handler may have closed us.
    return state_ != State::kClosed && is_open();
  }

  bool handshake_frame(const Message &m) {
    if (incoming_) {
      ServerHandshake::Outcome o = server_hs_->on_frame(m);
      if (!o.ok) {
        if (!o.peer_entity.empty()) peer_entity_ = o.peer_entity;
        refuse(std::move(o.reply), "authentication failed: " + o.reason);
        return false;
      }
      peer_entity_ = o.peer_entity;
      // Raise the limits before the reply goes out: the peer may send big
      // frames as soon as it has it.
      decoder_.set_limits(core_->limits);
      enqueue(std::move(o.reply));
      become_open();
      // Published open first, then checked (both sequentially consistent):
      // either close_entity's scan sees this connection open, or this sees
      // its revocation.
      if (core_->revocations.load() != revocations_at_start_) {
        do_close("keys changed while " + peer_entity_ + " authenticated; it must reconnect", true);
        return false;
      }
      core_->debug("accepted " + describe());
      if (core_->handlers.on_accept) {
        auto self = shared_from_this();
        if (!guarded("on_accept", [&] { core_->handlers.on_accept(self); })) return false;
      }
      return state_ != State::kClosed && is_open();
    }
    if (got_challenge_) {
      Status s = client_hs_->on_reply(m);
      if (!s.ok()) {
        do_close(s.message(), true, s.code());
        return false;
      }
      decoder_.set_limits(core_->limits);
      become_open();
      if (!connect_reported_) {
        connect_reported_ = true;
        connected_.set_value(Status::OK());
      }
      return state_ != State::kClosed;
    }
    got_challenge_ = true;
    auto req = client_hs_->on_challenge(m);
    if (!req.ok()) {
      do_close(req.status().message(), true, req.status().code());
      return false;
    }
    peer_entity_ = client_hs_->server_entity();
    enqueue(std::move(req.value()));
    return true;
  }

  void become_open() {
    state_ = State::kOpen;
    // consume() may be part-way through rbuf_: it re-reads rbuf_.data()
    // every round and resize keeps the bytes, so growing here is safe.
    rbuf_.resize(kReadBuffer);
    timer_.cancel();
    open_.store(true);  // seq_cst: see the revocation check in handshake_frame
  }

  // Sends the AuthError and closes once it is written; reads nothing more.
  void refuse(Message error_frame, const std::string &reason) {
    reading_stopped_ = true;
    enqueue(std::move(error_frame));
    std::lock_guard lk(wmu_);
    closing_ = true;  // nothing else goes out
    close_after_write_ = reason;
    if (!writing_)
      asio::post(strand_, [self = shared_from_this(), reason] { self->do_close(reason, true); });
  }

  // `code`: the errno connect() reports when this ends an outgoing attempt.
  void do_close(const std::string &reason, bool error, int code = 0) {
    if (state_ == State::kClosed) return;
    State was = state_;
    state_ = State::kClosed;
    open_.store(false, std::memory_order_release);
    {
      std::lock_guard lk(wmu_);
      closing_ = true;
      pending_.clear();
    }
    timer_.cancel();
    error_code ec;
    sock_.shutdown(tcp::socket::shutdown_both, ec);
    sock_.close(ec);
    auto self = shared_from_this();
    core_->remove(this);
    std::string msg = "connection with " + describe() + " closed: " + reason;
    // An outgoing connection that never opened hands its error to the
    // caller of connect(), who knows whether it matters (a client retrying
    // a down OSD every few hundred ms should not fill stderr).
    const bool caller_told = !incoming_ && was != State::kOpen;
    if (error && !caller_told && incoming_ && was == State::kHandshake) {
      // Anyone can cause this line: limited per peer address.
      PeerLogLimiter::Decision d = core_->unauthenticated_log.admit(peer_address_);
      if (d.log)
        core_->warn(msg + core_->unauthenticated_log.suffix(d));
      else
        core_->debug(msg);
    } else if (error && !caller_told) {
      core_->warn(msg);
    } else {
      core_->info(msg);
    }
    if (!incoming_ && !connect_reported_) {
      connect_reported_ = true;
      connected_.set_value(Status::Error(code ? code : ECONNABORTED, reason));
    }
    if (was == State::kOpen && core_->handlers.on_close)
      guarded("on_close", [&] { core_->handlers.on_close(self, reason); });
  }

  // Runs a user handler. One that throws is a bug in the caller; the
  // connection it was serving is closed (its state is unknown) and the
  // messenger keeps serving the others. False when it threw.
  template <class Fn>
  bool guarded(const char *which, Fn &&fn) {
    std::string what;
    try {
      fn();
      return true;
    } catch (const std::exception &e) {
      what = e.what();
    } catch (const kj::Exception &e) {
      what = e.getDescription().cStr();
    } catch (...) {
      what = "unknown exception";
    }
    core_->log.error(kLogComponent, core_->self + ": " + which + " handler threw for " +
                                        describe() + ": " + what);
    if (std::string_view(which) != "on_close") do_close(std::string(which) + " handler threw: " + what, true);
    return false;
  }

  std::shared_ptr<Core> core_;
  tcp::socket sock_;
  asio::strand<asio::io_context::executor_type> strand_;
  asio::steady_timer timer_;
  const bool incoming_;
  std::string peer_entity_;
  std::string peer_address_;
  std::atomic<bool> open_{false};

  // Strand-only state.
  State state_ = State::kHandshake;
  bool reading_stopped_ = false;
  bool got_challenge_ = false;
  bool connect_reported_ = false;
  uint64_t revocations_at_start_ = 0;
  std::unique_ptr<ServerHandshake> server_hs_;
  std::unique_ptr<ClientHandshake> client_hs_;
  std::promise<Status> connected_;
  FrameDecoder decoder_;
  std::vector<char> rbuf_;
  std::vector<Out> inflight_;
  std::vector<asio::const_buffer> bufs_;

  // Write queue, shared with senders on other threads.
  std::mutex wmu_;
  std::vector<Out> pending_;
  bool writing_ = false;
  bool closing_ = false;
  bool held_ = false;  // a SendBatch holds pending_ and releases it (release_held)
  std::string close_after_write_;
};

// The innermost SendBatch alive on this thread (the guards live on the
// thread's stack and own what they hold; this only finds them).
thread_local SendBatch *t_send_batch = nullptr;

}  // namespace

class BatchAccess {
 public:
  static SendBatch *outermost() {
    SendBatch *b = t_send_batch;
    while (b && b->outer_) b = b->outer_;
    return b;
  }
  static void hold(std::shared_ptr<Conn> c) { outermost()->held_.push_back(std::move(c)); }
  static void enter(SendBatch *b) {
    b->outer_ = t_send_batch;
    t_send_batch = b;
  }
  static void leave(SendBatch *b);
};

namespace {

bool in_send_batch() { return t_send_batch != nullptr; }
void hold_in_batch(std::shared_ptr<Conn> c) { BatchAccess::hold(std::move(c)); }

void start_accept(const std::shared_ptr<Core> &core, tcp::acceptor *acc) {
  acc->async_accept([core, acc](error_code ec, tcp::socket sock) {
    if (ec == asio::error::operation_aborted || core->stopping) return;
    if (ec) {
      // Out of descriptors and the like: back off instead of spinning.
      core->warn("accept failed: " + ec.message());
      auto t = std::make_shared<asio::steady_timer>(core->io, std::chrono::milliseconds(100));
      t->async_wait([core, acc, t](error_code) {
        if (!core->stopping) start_accept(core, acc);
      });
      return;
    }
    auto c = std::make_shared<Conn>(core, std::move(sock), true);
    if (core->add(c)) c->start_incoming();
    start_accept(core, acc);
  });
}

}  // namespace

struct Messenger::Impl {
  std::shared_ptr<Core> core;
};

void BatchAccess::leave(SendBatch *b) {
  t_send_batch = b->outer_;
  if (b->outer_) return;  // the outermost one releases
  // In the order first held; nothing sent now is held again (no batch is
  // left on this thread).
  for (const auto &c : b->held_) static_cast<Conn &>(*c).release_batch();
  b->held_.clear();
}

SendBatch::SendBatch() { BatchAccess::enter(this); }
SendBatch::~SendBatch() { BatchAccess::leave(this); }

Messenger::Messenger(std::string self, std::string self_secret, SecretLookup lookup, Logger &log,
                     MessengerOptions opts)
    : impl_(std::make_unique<Impl>()) {
  impl_->core = std::make_shared<Core>(std::move(self), std::move(self_secret), std::move(lookup),
                                       log, opts);
}

Messenger::~Messenger() { stop(); }

const std::string &Messenger::self() const { return impl_->core->self; }

std::size_t Messenger::close_entity(const std::string &entity, const std::string &reason) {
  auto &core = impl_->core;
  core->revocations.fetch_add(1);
  std::vector<std::shared_ptr<Conn>> conns;
  {
    std::lock_guard lk(core->mu);
    for (auto &[p, c] : core->conns) conns.push_back(c);
  }
  std::size_t closed = 0;
  for (auto &c : conns) closed += c->close_if_peer(entity, reason);
  return closed;
}

void Messenger::set_handlers(Handlers h) { impl_->core->handlers = std::move(h); }

Result<std::string> Messenger::listen(const std::string &host, uint16_t port) {
  auto &core = impl_->core;
  error_code ec;
  tcp::endpoint ep;
  auto addr = asio::ip::make_address(host, ec);
  if (!ec) {
    ep = tcp::endpoint(addr, port);
  } else {
    tcp::resolver res(core->io);
    auto r = res.resolve(host, std::to_string(port), tcp::resolver::passive, ec);
    if (ec || r.empty())
      return Status::Error(EINVAL, "listen: cannot resolve '" + host + "': " + ec.message());
    ep = *r.begin();
  }
  auto acc = std::make_unique<tcp::acceptor>(core->io);
  auto fail = [&](const std::string &what) {
    return Status::Error(ec.value() ? ec.value() : EIO,
                         "listen on " + endpoint_string(ep) + ": " + what + ": " + ec.message());
  };
  acc->open(ep.protocol(), ec);
  if (ec) return fail("socket");
  acc->set_option(tcp::acceptor::reuse_address(true), ec);
  if (ec) return fail("SO_REUSEADDR");
  acc->bind(ep, ec);
  if (ec) return fail("bind");
  acc->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return fail("listen");
  auto bound = acc->local_endpoint(ec);
  if (ec) return fail("getsockname");
  std::lock_guard lk(core->mu);
  if (core->stopping) return Status::Error(ESHUTDOWN, "listen: messenger stopped");
  core->acceptors.push_back(std::move(acc));
  start_accept(core, core->acceptors.back().get());
  core->info("listening on " + endpoint_string(bound));
  return endpoint_string(bound);
}

void Messenger::start() {
  auto &core = impl_->core;
  std::lock_guard lk(core->mu);
  if (core->started || core->stopping) return;
  core->started = true;
  core->work.emplace(core->io.get_executor());
  for (int i = 0; i < core->opts.io_threads; ++i) {
    core->threads.emplace_back([c = core.get(), i] {
      name_this_thread("msg-io-" + std::to_string(i));
      c->run_io();
    });
    core->thread_ids.push_back(core->threads.back().get_id());
  }
}

void Messenger::stop() {
  auto &core = impl_->core;
  std::unordered_map<Conn *, std::shared_ptr<Conn>> conns;
  {
    std::lock_guard lk(core->mu);
    if (core->stopping) return;
    core->stopping = true;
    conns.swap(core->conns);
  }
  if (core->on_io_thread()) {
    // Joining our own thread would deadlock; this is a programming error.
    core->log.error(kLogComponent, core->self + ": Messenger::stop() called from an I/O thread");
    std::abort();
  }
  for (auto &[p, c] : conns) c->close("messenger stopping");
  asio::post(core->io, [c = core.get()] {
    for (auto &a : c->acceptors) {
      error_code ec;
      a->close(ec);
    }
  });
  if (core->started) {
    core->work.reset();
    for (auto &t : core->threads) t.join();
    core->threads.clear();
  } else {
    core->io.run();  // runs the closes queued above
  }
  core->finished = true;
  // Drop whatever is still queued (handlers holding connections) so the
  // connections and the context can be freed.
  core->io.shutdown();
  core->acceptors.clear();
  core->handlers = Handlers{};
}

Result<ConnectionRef> Messenger::connect(const std::string &address,
                                         std::chrono::milliseconds timeout) {
  auto &core = impl_->core;
  if (core->on_io_thread())
    return Status::Error(EDEADLK, "connect to " + address +
                                      ": called from a messenger I/O thread (would deadlock)");
  {
    std::lock_guard lk(core->mu);
    if (!core->started || core->stopping)
      return Status::Error(ESHUTDOWN, "connect to " + address + ": messenger not running");
  }
  auto hp = split_address(address);
  if (!hp.ok()) return hp.status();
  auto [host, port] = hp.value();
  std::vector<tcp::endpoint> eps;
  error_code ec;
  auto addr = asio::ip::make_address(host, ec);
  if (!ec) {
    char *end = nullptr;
    unsigned long p = std::strtoul(port.c_str(), &end, 10);
    if (*end != '\0' || p > 65535)
      return Status::Error(EINVAL, "bad address '" + address + "' (port)");
    eps.emplace_back(addr, static_cast<uint16_t>(p));
  } else {
    tcp::resolver res(core->io);
    auto r = res.resolve(host, port, ec);
    if (ec) return Status::Error(EHOSTUNREACH, "connect to " + address + ": " + ec.message());
    for (const auto &e : r) eps.push_back(e.endpoint());
  }
  auto c = std::make_shared<Conn>(core, tcp::socket(core->io), false);
  if (!core->add(c))
    return Status::Error(ESHUTDOWN, "connect to " + address + ": messenger stopping");
  std::future<Status> f = c->start_outgoing(std::move(eps), address, timeout);
  // The connection's own timer ends the attempt at `timeout`; the extra
  // second only guards against an I/O thread stuck in a handler.
  if (f.wait_for(timeout + std::chrono::seconds(1)) != std::future_status::ready) {
    c->close("connect timed out");
    return Status::Error(ETIMEDOUT, "connect to " + address + ": timed out after " +
                                        std::to_string(timeout.count()) + " ms");
  }
  Status s = f.get();
  if (!s.ok()) return Status::Error(s.code(), "connect to " + address + ": " + s.message());
  return ConnectionRef(c);
}

}  // namespace strata::msg

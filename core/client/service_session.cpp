#include "client/service_session.h"

#include <algorithm>
#include <cerrno>
#include <vector>

#include "common/json.h"
#include "msg/message_types.h"
#include "strata/client.h"

namespace strata::client {

namespace {

constexpr const char *kLog = "session";
using Clock = std::chrono::steady_clock;

}  // namespace

ServiceSession::ServiceSession(Options opts, std::shared_ptr<void> owner, msg::Messenger &messenger,
                               ServiceSessions &registry, Logger &log, SessionCallback cb)
    : opts_(std::move(opts)),
      owner_(std::move(owner)),
      messenger_(messenger),
      registry_(registry),
      log_(log),
      cb_(std::move(cb)) {}

ServiceSession::~ServiceSession() {
  // close() joined or detached the thread; a session never started has none.
  if (thread_.joinable()) thread_.join();
}

std::optional<ServiceSession::Instance> ServiceSession::wanted_from(
    const cluster::ClusterMap &map) const {
  const cluster::FsInfo *fs = map.fs_by_name(opts_.target);
  if (!fs) return std::nullopt;
  const cluster::MdsInfo *mds = map.active_mds(fs->id);
  if (!mds || mds->addr.empty()) return std::nullopt;
  return Instance{mds->name, mds->addr, mds->incarnation};
}

void ServiceSession::start(const cluster::ClusterMap &map) {
  on_map(map);
  std::lock_guard lk(mu_);
  // The thread keeps the session (and through owner_ the client) alive,
  // so a close() from the callback may let go of the handle at once.
  thread_ = std::thread([self = shared_from_this()] { self->run(); });
  thread_id_ = thread_.get_id();
}

void ServiceSession::deliver_events() {
  std::lock_guard lk(mu_);
  delivering_ = true;
  cv_.notify_all();
}

void ServiceSession::on_map(const cluster::ClusterMap &map) {
  std::lock_guard lk(mu_);
  if (stopping_ || map.epoch < map_epoch_) return;
  map_epoch_ = map.epoch;
  std::optional<Instance> want = wanted_from(map);
  if (want == wanted_) return;
  wanted_ = std::move(want);
  if (conn_ && !(wanted_ && *wanted_ == connected_)) {
    drop_locked("map epoch " + std::to_string(map.epoch) +
                (wanted_
                     ? " names mds." + wanted_->name + " at " + wanted_->addr + " (incarnation " +
                           std::to_string(wanted_->incarnation) + ") as active"
                     : " has no active " + opts_.service + " for " + opts_.target));
  }
  if (wanted_) {
    // Someone new to try: at once, not after the back-off of the old one.
    backoff_ = std::chrono::milliseconds(0);
    next_attempt_ = Clock::now();
  }
  cv_.notify_all();
}

void ServiceSession::drop_locked(const std::string &reason) {
  msg::ConnectionRef c = std::move(conn_);
  conn_.reset();
  registry_.unbind(c.get());
  events_.push_back({STRATA_SESSION_DISCONNECTED, 0, "mds." + connected_.name + ": " + reason});
  c->close(reason);  // never blocks; its on_close finds no owner any more
  next_attempt_ = Clock::now();
  cv_.notify_all();
}

void ServiceSession::on_frame(const msg::ConnectionRef &c, msg::Message &&m) {
  std::lock_guard lk(mu_);
  // A frame of a connection already dropped is never delivered: it would
  // come after that connection's DISCONNECTED.
  if (stopping_ || c != conn_) return;
  events_.push_back({STRATA_SESSION_MESSAGE, m.type, std::move(m.payload)});
  cv_.notify_all();
}

void ServiceSession::on_close(const msg::ConnectionRef &c, const std::string &reason) {
  std::lock_guard lk(mu_);
  if (stopping_ || c != conn_) return;
  log_.info(kLog, opts_.service + " session for " + opts_.target + ": lost mds." + connected_.name +
                      ": " + reason);
  drop_locked(reason);
}

int ServiceSession::send(uint32_t type, std::string_view payload) {
  if (type < STRATA_SESSION_TYPE_FIRST || type > STRATA_SESSION_TYPE_LAST) return -EINVAL;
  if (opts_.max_payload && payload.size() > opts_.max_payload) return -EMSGSIZE;
  msg::Message m;
  m.type = static_cast<uint16_t>(type);
  m.payload.assign(payload);
  // Under the lock: sends of concurrent callers reach the connection in
  // the order they were accepted, and never a connection already dropped.
  std::lock_guard lk(mu_);
  if (stopping_ || !conn_) return -ENOTCONN;
  return conn_->send(std::move(m)) ? 0 : -ENOTCONN;
}

std::string ServiceSession::status_json() const {
  std::lock_guard lk(mu_);
  // The connected instance; while there is none, the one being sought.
  const Instance *i = conn_ ? &connected_ : (wanted_ ? &*wanted_ : nullptr);
  std::string name = i ? opts_.service + "." + i->name : "";
  std::string addr = i ? i->addr : "";
  return "{\"name\":" + json::quote(name) + ",\"addr\":" + json::quote(addr) +
         ",\"connected\":" + (conn_ ? "true" : "false") +
         ",\"reconnects\":" + std::to_string(reconnects_) + "}";
}

void ServiceSession::close() {
  msg::ConnectionRef c;
  {
    std::lock_guard lk(mu_);
    if (stopping_) return;
    stopping_ = true;
    c = std::move(conn_);
    conn_.reset();
    events_.clear();
    cv_.notify_all();
  }
  registry_.remove(this);
  if (c) {
    registry_.unbind(c.get());
    c->close("session closed");
  }
  if (!thread_.joinable()) return;
  if (std::this_thread::get_id() == thread_id_)
    thread_.detach();  // from the callback: it exits once the callback returns
  else
    thread_.join();
}

void ServiceSession::run() {
  std::unique_lock lk(mu_);
  while (!stopping_) {
    if (delivering_ && !events_.empty()) {
      Event e = std::move(events_.front());
      events_.pop_front();
      lk.unlock();
      cb_(e.event, e.type, e.payload);
      lk.lock();
      continue;
    }
    if (!conn_ && wanted_ && Clock::now() >= next_attempt_) {
      try_connect(lk);
      continue;
    }
    if (!conn_ && wanted_)
      cv_.wait_until(lk, next_attempt_);
    else
      cv_.wait(lk);
  }
  // Let go of the client (and the log) on this thread only after the last
  // use of either.
  lk.unlock();
}

void ServiceSession::try_connect(std::unique_lock<std::mutex> &lk) {
  Instance want = *wanted_;
  lk.unlock();
  auto r = messenger_.connect(want.addr, opts_.connect_timeout);
  std::string why;
  if (r.ok() && (*r)->peer_entity() != opts_.service + "." + want.name)
    why = "the daemon at " + want.addr + " is " + (*r)->peer_entity() + ", not " + opts_.service +
          "." + want.name;
  if (!why.empty()) (*r)->close(why);
  lk.lock();
  bool current = wanted_ && *wanted_ == want && !stopping_;
  if (r.ok() && why.empty() && current) {
    conn_ = *r;
    connected_ = want;
    registry_.bind(conn_.get(), shared_from_this());
    if (ever_connected_) ++reconnects_;
    ever_connected_ = true;
    backoff_ = std::chrono::milliseconds(0);
    events_.push_back({STRATA_SESSION_CONNECTED, 0, opts_.service + "." + want.name});
    // It may have closed before it was bound: its on_close found no owner.
    if (!conn_->is_open()) drop_locked("connection closed as it opened");
    log_.info(kLog, opts_.service + " session for " + opts_.target + ": connected to " +
                        opts_.service + "." + want.name + " at " + want.addr);
    return;
  }
  if (r.ok() && why.empty()) {
    (*r)->close("the map moved on while connecting");
    return;  // the next loop tries whoever is wanted now
  }
  if (!current) return;
  if (why.empty()) why = r.status().ToString();
  backoff_ = std::min(opts_.max_backoff, std::max(opts_.min_backoff, backoff_ * 2));
  next_attempt_ = Clock::now() + backoff_;
  log_.debug(kLog, opts_.service + " session for " + opts_.target + ": cannot reach " +
                       opts_.service + "." + want.name + ": " + why + "; again in " +
                       std::to_string(backoff_.count()) + " ms");
}

// ------------------------------------------------------------ the registry

void ServiceSessions::add(const std::shared_ptr<ServiceSession> &s) {
  std::lock_guard lk(mu_);
  sessions_[s.get()] = s;
}

void ServiceSessions::remove(const ServiceSession *s) {
  std::lock_guard lk(mu_);
  sessions_.erase(s);
}

void ServiceSessions::bind(const msg::Connection *c, const std::shared_ptr<ServiceSession> &s) {
  std::lock_guard lk(mu_);
  by_conn_[c] = s;
}

void ServiceSessions::unbind(const msg::Connection *c) {
  std::lock_guard lk(mu_);
  by_conn_.erase(c);
}

bool ServiceSessions::handle_message(const msg::ConnectionRef &c, msg::Message &m) {
  if (m.type < msg::kMsgServiceFirst || m.type > msg::kMsgServiceLast) return false;
  std::shared_ptr<ServiceSession> s;
  {
    std::lock_guard lk(mu_);
    auto it = by_conn_.find(c.get());
    if (it != by_conn_.end()) s = it->second.lock();
  }
  if (s)
    s->on_frame(c, std::move(m));
  else
    log_.debug(kLog, "dropping service frame type " + std::to_string(m.type) + " from " +
                         c->peer_entity() + ": no session owns the connection");
  return true;
}

void ServiceSessions::handle_close(const msg::ConnectionRef &c, const std::string &reason) {
  std::shared_ptr<ServiceSession> s;
  {
    std::lock_guard lk(mu_);
    auto it = by_conn_.find(c.get());
    if (it == by_conn_.end()) return;
    s = it->second.lock();
  }
  if (s) s->on_close(c, reason);
}

void ServiceSessions::handle_new_map(const cluster::ClusterMap &map) {
  std::vector<std::shared_ptr<ServiceSession>> all;
  {
    std::lock_guard lk(mu_);
    for (auto &[p, w] : sessions_)
      if (auto s = w.lock()) all.push_back(std::move(s));
  }
  for (auto &s : all) s->on_map(map);
}

}  // namespace strata::client

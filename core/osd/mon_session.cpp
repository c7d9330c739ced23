#include "osd/mon_session.h"

#include "common/thread_name.h"

namespace strata::osd {

MonSession::MonSession(msg::Messenger &messenger, Logger &log, std::string mon_addr,
                       std::function<std::vector<msg::Message>()> on_connect,
                       msg::SessionKeepalive keepalive)
    : messenger_(messenger),
      log_(log),
      mon_addr_(std::move(mon_addr)),
      on_connect_(std::move(on_connect)),
      keepalive_(keepalive) {}

MonSession::~MonSession() { stop(); }

void MonSession::start() {
  thread_ = std::thread([this] {
    name_this_thread("osd-mon-session");
    loop();
  });
}

void MonSession::stop() {
  msg::ConnectionRef c;
  {
    std::lock_guard lk(mu_);
    stopping_ = true;
    c = conn_;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (c) c->close("OSD stopping");
}

bool MonSession::send(msg::Message m) {
  msg::ConnectionRef c;
  {
    std::lock_guard lk(mu_);
    c = conn_;
  }
  return c && c->send(std::move(m));
}

bool MonSession::connected() {
  std::lock_guard lk(mu_);
  return conn_ && conn_->is_open();
}

bool MonSession::is_mon(const msg::ConnectionRef &conn) {
  std::lock_guard lk(mu_);
  return conn_ == conn;
}

void MonSession::on_rx(const msg::ConnectionRef &conn) {
  std::lock_guard lk(mu_);
  if (conn_ == conn) keepalive_.on_rx(msg::SessionKeepalive::Clock::now());
}

bool MonSession::on_close(const msg::ConnectionRef &conn) {
  {
    std::lock_guard lk(mu_);
    if (conn_ != conn) return false;
    conn_.reset();
  }
  log_.warn("osd", "lost the monitor connection; reconnecting");
  cv_.notify_all();
  return true;
}

void MonSession::loop() {
  bool warned = false;
  std::unique_lock lk(mu_);
  while (!stopping_) {
    if (conn_ && conn_->is_open()) {
      cv_.wait_for(lk, std::chrono::milliseconds(250));
      if (stopping_ || !conn_) continue;
      auto now = msg::SessionKeepalive::Clock::now();
      msg::ConnectionRef c = conn_;
      auto action = keepalive_.due(now);
      if (action == msg::SessionKeepalive::Action::kPing) {
        uint64_t tid = next_ping_tid_++;
        lk.unlock();
        c->send(msg::make_mon_ping(tid));
        lk.lock();
      } else if (action == msg::SessionKeepalive::Action::kGiveUp) {
        std::string why = "no answer from the monitor at " + mon_addr_ + " for " +
                          std::to_string(keepalive_.silent_for(now).count()) + " ms (keepalive)";
        lk.unlock();
        c->close(why);
        lk.lock();
      }
      continue;
    }
    lk.unlock();
    auto c = messenger_.connect(mon_addr_, std::chrono::milliseconds(2000));
    lk.lock();
    if (stopping_) {
      if (c.ok()) (*c)->close("OSD stopping");
      break;
    }
    if (!c.ok()) {
      if (!warned)
        log_.warn("osd", "cannot reach the monitor at " + mon_addr_ + ": " + c.status().ToString() +
                             " (retrying)");
      warned = true;
      cv_.wait_for(lk, std::chrono::milliseconds(300));
      continue;
    }
    warned = false;
    conn_ = *c;
    keepalive_.reset(msg::SessionKeepalive::Clock::now());
    msg::ConnectionRef conn = conn_;
    lk.unlock();
    log_.info("osd", "connected to the monitor at " + mon_addr_);
    for (msg::Message &m : on_connect_()) conn->send(std::move(m));
    lk.lock();
  }
}

}  // namespace strata::osd

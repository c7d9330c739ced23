#include "mon/mon_client.h"

#include <capnp/message.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "cluster/map_wire.h"
#include "msg/keepalive.h"
#include "msg/message_types.h"
#include "msg/wire_codec.h"

namespace strata::mon {

using cluster::ClusterMap;
using MapRef = std::shared_ptr<const ClusterMap>;

namespace {
constexpr const char *kLog = "monclient";
std::string text(capnp::Text::Reader t) { return std::string(t.cStr(), t.size()); }
}  // namespace

struct MonClient::Impl {
  MonClientOptions opts;
  Logger &log;
  std::unique_ptr<msg::Messenger> messenger;
  MapCallback map_cb;
  AuthCallback auth_cb;
  ConnectCallback connect_cb;

  struct Pending {
    bool done = false;
    MonCommandResult result;
    Status error;
  };

  mutable std::mutex mu;
  std::condition_variable cv;
  msg::ConnectionRef conn;                               // GUARDED_BY(mu)
  MapRef map;                                            // GUARDED_BY(mu)
  uint64_t next_tid = 1;                                 // GUARDED_BY(mu)
  std::map<uint64_t, std::shared_ptr<Pending>> pending;  // GUARDED_BY(mu)
  bool stopping = false;                                 // GUARDED_BY(mu)
  msg::SessionKeepalive keepalive;                       // GUARDED_BY(mu)
  bool started = false;
  std::thread reconnector;
  // Map updates are applied one at a time, in arrival order.
  std::mutex apply_mu;

  Impl(MonClientOptions o, Logger &l)
      : opts(std::move(o)), log(l), keepalive(opts.keepalive_interval, opts.keepalive_timeout) {}

  msg::Message subscribe_message(uint64_t have) {
    capnp::MallocMessageBuilder b;
    auto s = b.initRoot<wire::MonSubscribe>();
    s.setHaveEpoch(have);
    s.setWantAuth(opts.want_auth);
    return msg::make_message(msg::kMsgMonSubscribe, b);
  }

  // Connects once and subscribes; on success the connection is current.
  Status connect_once() {
    auto c = messenger->connect(opts.mon_addr, opts.connect_timeout);
    if (!c.ok()) return c.status().Context("monitor " + opts.mon_addr);
    uint64_t have;
    {
      std::lock_guard lk(mu);
      if (stopping) {
        (*c)->close("stopping");
        return Status::Error(ECANCELED, "stopping");
      }
      conn = *c;
      keepalive.reset(msg::SessionKeepalive::Clock::now());
      have = map ? map->epoch : 0;
    }
    if (opts.subscribe) (*c)->send(subscribe_message(have));
    cv.notify_all();
    if (connect_cb) connect_cb();
    return Status::OK();
  }

  void reconnect_loop() {
    std::unique_lock lk(mu);
    while (!stopping) {
      cv.wait_for(lk, opts.reconnect_interval, [&] { return stopping || !conn; });
      if (stopping) break;
      if (conn && conn->is_open()) {
        keep_alive(lk);
        continue;
      }
      conn.reset();
      lk.unlock();
      Status s = connect_once();
      if (!s.ok() && s.code() != -ECANCELED) {
        log.debug(kLog, "reconnecting: " + s.message());
        lk.lock();
        cv.wait_for(lk, opts.reconnect_interval, [&] { return stopping; });
        continue;
      }
      if (s.ok()) log.info(kLog, "reconnected to the monitor at " + opts.mon_addr);
      lk.lock();
    }
  }

  // Pings the monitor, or closes a connection it no longer answers on (the
  // loop then makes a new one). REQUIRES: lk holds mu, conn set.
  void keep_alive(std::unique_lock<std::mutex> &lk) {
    auto now = msg::SessionKeepalive::Clock::now();
    msg::ConnectionRef c = conn;
    switch (keepalive.due(now)) {
      case msg::SessionKeepalive::Action::kNothing:
        return;
      case msg::SessionKeepalive::Action::kPing: {
        uint64_t tid = next_tid++;  // its reply matches no pending command
        lk.unlock();
        c->send(msg::make_mon_ping(tid));
        lk.lock();
        return;
      }
      case msg::SessionKeepalive::Action::kGiveUp: {
        std::string why = "no answer from the monitor at " + opts.mon_addr + " for " +
                          std::to_string(keepalive.silent_for(now).count()) +
                          " ms (keepalive); reconnecting";
        lk.unlock();
        c->close(why);
        lk.lock();
        return;
      }
    }
  }

  void on_close(const msg::ConnectionRef &c, const std::string &reason) {
    std::lock_guard lk(mu);
    if (c != conn) return;
    conn.reset();
    if (!stopping) log.warn(kLog, "lost the monitor connection: " + reason);
    for (auto &[tid, p] : pending) {
      if (p->done) continue;
      p->done = true;
      p->error = Status::Error(ECONNRESET, "monitor connection lost before the reply: " + reason);
    }
    pending.clear();
    cv.notify_all();
  }

  void on_message(const msg::ConnectionRef &c, msg::Message &&m) {
    {
      std::lock_guard lk(mu);
      if (c == conn) keepalive.on_rx(msg::SessionKeepalive::Clock::now());
    }
    Status s;
    switch (m.type) {
      case msg::kMsgMapUpdate:
        s = msg::read_message<wire::MapUpdate>(
            m, "MapUpdate from the monitor",
            [&](wire::MapUpdate::Reader r) { return map_update(c, r); });
        break;
      case msg::kMsgAuthUpdate:
        s = msg::read_message<wire::AuthUpdate>(
            m, "AuthUpdate from the monitor", [&](wire::AuthUpdate::Reader r) {
              std::map<std::string, std::string> keys;
              for (auto e : r.getEntries()) {
                auto d = e.getSecret();
                keys[text(e.getEntity())] =
                    std::string(reinterpret_cast<const char *>(d.begin()), d.size());
              }
              if (auth_cb) auth_cb(r.getVersion(), keys);
              return Status::OK();
            });
        break;
      case msg::kMsgMonCommandReply:
        s = msg::read_message<
            wire::MonCommandReply>(m, "MonCommandReply", [&](wire::MonCommandReply::Reader r) {
          std::lock_guard lk(mu);
          auto it = pending.find(r.getTid());
          if (it == pending.end()) return Status::OK();  // timed out already
          it->second->result = {r.getRc(), text(r.getMessage()), text(r.getJson()), r.getEpoch()};
          it->second->done = true;
          pending.erase(it);
          cv.notify_all();
          return Status::OK();
        });
        break;
      default:
        log.debug(kLog, "ignoring message type " + std::to_string(m.type) + " from the monitor");
    }
    if (!s.ok()) {
      log.error(kLog, s.message());
      c->close(s.message());
    }
  }

  Status map_update(const msg::ConnectionRef &c, wire::MapUpdate::Reader r) {
    std::lock_guard al(apply_mu);
    MapRef cur;
    {
      std::lock_guard lk(mu);
      cur = map;
    }
    std::vector<MapRef> produced;
    auto base = [&] { return produced.empty() ? cur : produced.back(); };
    if (r.getHasFull()) {
      auto m = cluster::from_wire(r.getFull());
      if (!m.ok()) return m.status();
      if (!cur || m->epoch > cur->epoch)
        produced.push_back(std::make_shared<ClusterMap>(std::move(*m)));
    } else {
      for (auto inc : r.getIncrementals()) {
        MapRef b = base();
        if (b && inc.getEpoch() <= b->epoch) continue;  // already have it
        if (!b || inc.getEpoch() != b->epoch + 1) {
          // A gap: ask again from what we have (the monitor sends a full
          // map if it cannot fill it).
          log.warn(kLog,
                   "map gap before epoch " + std::to_string(inc.getEpoch()) + ", resubscribing");
          c->send(subscribe_message(b ? b->epoch : 0));
          break;
        }
        auto m = cluster::apply_incremental(*b, inc);
        if (!m.ok()) return m.status();
        produced.push_back(std::make_shared<ClusterMap>(std::move(*m)));
      }
    }
    if (produced.empty()) return Status::OK();
    {
      std::lock_guard lk(mu);
      map = produced.back();
    }
    cv.notify_all();
    if (map_cb)
      for (const MapRef &m : produced) map_cb(m);
    return Status::OK();
  }
};

MonClient::MonClient(MonClientOptions opts, Logger &log)
    : impl_(std::make_shared<Impl>(std::move(opts), log)) {}

MonClient::~MonClient() { stop(); }

void MonClient::on_map(MapCallback cb) { impl_->map_cb = std::move(cb); }
void MonClient::on_auth(AuthCallback cb) { impl_->auth_cb = std::move(cb); }
void MonClient::on_connect(ConnectCallback cb) { impl_->connect_cb = std::move(cb); }

Status MonClient::start() {
  Impl *im = impl_.get();
  if (im->started) return Status::Error(EALREADY, "MonClient already started");
  im->messenger = std::make_unique<msg::Messenger>(
      im->opts.entity, im->opts.secret, msg::SecretLookup(), im->log, im->opts.messenger);
  msg::Handlers h;
  h.on_message = [im](const msg::ConnectionRef &c, msg::Message &&m) {
    im->on_message(c, std::move(m));
  };
  h.on_close = [im](const msg::ConnectionRef &c, const std::string &why) { im->on_close(c, why); };
  im->messenger->set_handlers(std::move(h));
  im->messenger->start();
  Status s = im->connect_once();
  if (!s.ok()) {
    im->messenger->stop();
    im->messenger.reset();
    return s;
  }
  im->started = true;
  im->reconnector = std::thread([im] { im->reconnect_loop(); });
  return Status::OK();
}

void MonClient::stop() {
  Impl *im = impl_.get();
  {
    std::lock_guard lk(im->mu);
    if (im->stopping) return;
    im->stopping = true;
  }
  im->cv.notify_all();
  if (im->reconnector.joinable()) im->reconnector.join();
  if (im->messenger) im->messenger->stop();
}

bool MonClient::connected() const {
  std::lock_guard lk(impl_->mu);
  return impl_->conn && impl_->conn->is_open();
}

std::shared_ptr<const ClusterMap> MonClient::map() const {
  std::lock_guard lk(impl_->mu);
  return impl_->map;
}

uint64_t MonClient::epoch() const {
  std::lock_guard lk(impl_->mu);
  return impl_->map ? impl_->map->epoch : 0;
}

Result<std::shared_ptr<const ClusterMap>> MonClient::wait_for_map(
    uint64_t min_epoch, std::chrono::milliseconds timeout) {
  std::unique_lock lk(impl_->mu);
  bool ok = impl_->cv.wait_for(lk, timeout, [&] {
    return impl_->stopping || (impl_->map && impl_->map->epoch >= std::max<uint64_t>(min_epoch, 1));
  });
  if (!ok || !impl_->map || impl_->map->epoch < min_epoch)
    return Status::Error(ETIMEDOUT, "no map of epoch " + std::to_string(min_epoch) +
                                        " or newer from the monitor at " + impl_->opts.mon_addr +
                                        " within " + std::to_string(timeout.count()) + " ms");
  return impl_->map;
}

Result<MonCommandResult> MonClient::command(const std::string &prefix, const MonCommandArgs &args,
                                            std::chrono::milliseconds timeout) {
  Impl *im = impl_.get();
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock lk(im->mu);
  if (!im->cv.wait_until(lk, deadline,
                         [&] { return im->stopping || (im->conn && im->conn->is_open()); }) ||
      im->stopping)
    return Status::Error(ETIMEDOUT,
                         "'" + prefix + "': no connection to the monitor at " + im->opts.mon_addr);
  uint64_t tid = im->next_tid++;
  auto p = std::make_shared<Impl::Pending>();
  im->pending[tid] = p;
  capnp::MallocMessageBuilder b;
  auto c = b.initRoot<wire::MonCommand>();
  c.setTid(tid);
  c.setPrefix(prefix);
  auto l = c.initArgs(unsigned(args.size()));
  for (unsigned i = 0; i < args.size(); ++i) {
    l[i].setKey(args[i].first);
    l[i].setValue(args[i].second);
  }
  msg::ConnectionRef conn = im->conn;
  msg::Message m = msg::make_message(msg::kMsgMonCommand, b);
  lk.unlock();
  bool sent = conn->send(std::move(m));
  lk.lock();
  if (!sent) {
    im->pending.erase(tid);
    return Status::Error(ECONNRESET, "'" + prefix + "': the monitor connection closed");
  }
  if (!im->cv.wait_until(lk, deadline, [&] { return p->done || im->stopping; })) {
    im->pending.erase(tid);
    return Status::Error(ETIMEDOUT, "'" + prefix + "': no reply from the monitor within " +
                                        std::to_string(timeout.count()) + " ms");
  }
  if (!p->done) return Status::Error(ECANCELED, "'" + prefix + "': client stopping");
  if (!p->error.ok()) return p->error;
  return p->result;
}

bool MonClient::send(msg::Message m) {
  msg::ConnectionRef c;
  {
    std::lock_guard lk(impl_->mu);
    c = impl_->conn;
  }
  return c && c->send(std::move(m));
}

}  // namespace strata::mon

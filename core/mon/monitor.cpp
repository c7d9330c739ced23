#include "mon/monitor.h"

#include <capnp/message.h>
#include <capnp/serialize.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "cluster/map_wire.h"
#include "cluster/placement_gen.h"
#include "mon/mds_tracker.h"
#include "msg/message_types.h"
#include "msg/messenger.h"
#include "msg/wire_codec.h"

namespace strata::mon {

using cluster::ClusterMap;
using cluster::MapView;
using cluster::OsdInfo;

namespace {

constexpr const char *kLog = "mon";
constexpr const char *kMetaAuthVersion = "auth_version";
// More epochs behind than this get the full map instead of incrementals.
constexpr uint64_t kMaxIncrementals = 64;

std::string text(capnp::Text::Reader t) { return std::string(t.cStr(), t.size()); }

// osd.N -> N; -1 for any other entity.
int32_t osd_of(const std::string &entity) {
  return entity.rfind("osd.", 0) == 0 ? parse_osd_id(entity) : -1;
}

// A stored incremental, readable as a Cap'n Proto struct (copied into a
// word-aligned buffer first).
class StoredIncremental {
 public:
  explicit StoredIncremental(const std::string &bytes)
      : words_(kj::heapArray<capnp::word>(bytes.size() / sizeof(capnp::word))) {
    std::memcpy(words_.begin(), bytes.data(), words_.size() * sizeof(capnp::word));
    reader_ = std::make_unique<capnp::FlatArrayMessageReader>(words_);
  }
  wire::MapIncremental::Reader root() { return reader_->getRoot<wire::MapIncremental>(); }

 private:
  kj::Array<capnp::word> words_;
  std::unique_ptr<capnp::FlatArrayMessageReader> reader_;
};

}  // namespace

struct Monitor::State {
  MonitorOptions opts;
  std::unique_ptr<MapStore> store;
  host::Plugin placement;
  Logger &log;
  Env &env;
  std::unique_ptr<msg::Messenger> messenger;

  // Things to do once the state lock is released, in order.
  struct Out {
    msg::ConnectionRef conn;
    msg::Message m;
    std::string close_reason;  // non-empty: close instead of sending
  };
  using Outbox = std::vector<Out>;

  mutable std::mutex mu;
  std::mutex send_mu;                   // taken before mu is released; keeps sends in commit order
  std::shared_ptr<const MapView> view;  // GUARDED_BY(mu)
  std::map<std::string, std::string> auth;  // GUARDED_BY(mu)
  uint64_t auth_version = 0;                // GUARDED_BY(mu)
  std::set<int32_t> admin_out;              // GUARDED_BY(mu)
  PgStatsTable stats;                       // GUARDED_BY(mu)
  // Entities whose key a commit removed or changed, with why: the next
  // flush closes their sessions, after its sends (so that the reply to the
  // command that did it still goes out).
  std::vector<std::pair<std::string, std::string>> revoked;  // GUARDED_BY(mu)
  struct Sub {
    msg::ConnectionRef conn;
    bool want_auth = false;
  };
  std::map<const msg::Connection *, Sub> subs;  // GUARDED_BY(mu)
  // Open connections per OSD (an OSD may hold more than one).
  std::map<int32_t, std::set<msg::ConnectionRef>> osd_conns;  // GUARDED_BY(mu)
  std::map<int32_t, uint64_t> conn_lost_ms;                   // GUARDED_BY(mu)
  std::map<int32_t, msg::ConnectionRef> booted_conn;  // GUARDED_BY(mu); where each OSD booted
  std::map<int32_t, uint64_t> last_beacon_ms;         // GUARDED_BY(mu)
  uint64_t last_tick_ms = 0;                          // GUARDED_BY(mu)
  std::map<int32_t, std::map<int32_t, uint64_t>> failure_reports;  // target -> reporter -> ms
  MdsTracker mds;                                                  // GUARDED_BY(mu)
  std::map<std::string, msg::ConnectionRef> mds_conns;  // GUARDED_BY(mu); last beacon's session
  FlapGuard flaps;                                      // GUARDED_BY(mu)
  std::set<int32_t> held_boot_logged;                   // GUARDED_BY(mu); one log line per hold
  std::mutex events_mu;  // a leaf lock: nothing is taken while it is held
  std::vector<std::pair<msg::ConnectionRef, std::string>> closed;  // GUARDED_BY(events_mu)

  std::thread timer;
  std::condition_variable timer_cv;
  bool stopping = false;  // GUARDED_BY(mu)
  bool started = false;

  State(MonitorOptions o, std::unique_ptr<MapStore> st, host::Plugin p, Logger &l, Env &e)
      : opts(std::move(o)),
        store(std::move(st)),
        placement(std::move(p)),
        log(l),
        env(e),
        flaps(opts.failure) {}

  // Wall time: down_since_ms and flap holds are stored in the map and meta.
  uint64_t now() const { return env.clock().wall_ms(); }

  // Releases `lk` and runs the outbox, in the order the lock was taken.
  void flush(std::unique_lock<std::mutex> &lk, Outbox &out) {
    std::unique_lock sl(send_mu);
    std::vector<std::pair<std::string, std::string>> revoke;
    revoke.swap(revoked);
    lk.unlock();
    for (Out &o : out) {
      if (!o.close_reason.empty())
        o.conn->close(o.close_reason);
      else
        o.conn->send(std::move(o.m));
    }
    for (const auto &[entity, why] : revoke) {
      size_t n = messenger ? messenger->close_entity(entity, why) : 0;
      log.info(kLog, why + ": closed " + std::to_string(n) + " session(s)");
    }
    out.clear();
  }

  // ------------------------------------------------------------ map updates

  msg::Message full_update(const ClusterMap &m) {
    capnp::MallocMessageBuilder b;
    auto u = b.initRoot<wire::MapUpdate>();
    cluster::to_wire(m, u.initFull());
    u.setHasFull(true);
    return msg::make_message(msg::kMsgMapUpdate, b);
  }

  // What a subscriber at `have` needs to reach the current epoch; nothing
  // when it is current. REQUIRES: mu held.
  std::optional<msg::Message> update_from(uint64_t have) {
    const ClusterMap &cur = view->map();
    if (have == cur.epoch) return std::nullopt;
    if (have == 0 || have > cur.epoch || have < store->first_epoch() ||
        cur.epoch - have > kMaxIncrementals)
      return full_update(cur);
    std::vector<std::unique_ptr<StoredIncremental>> incs;
    for (uint64_t e = have + 1; e <= cur.epoch; ++e) {
      auto bytes = store->incremental(e);
      if (!bytes.ok() || bytes->empty() || bytes->size() % sizeof(capnp::word))
        return full_update(cur);
      incs.push_back(std::make_unique<StoredIncremental>(*bytes));
    }
    capnp::MallocMessageBuilder b;
    auto u = b.initRoot<wire::MapUpdate>();
    auto list = u.initIncrementals(unsigned(incs.size()));
    try {
      for (unsigned i = 0; i < incs.size(); ++i) list.setWithCaveats(i, incs[i]->root());
    } catch (const kj::Exception &e) {
      log.error(kLog, std::string("stored incremental unreadable, sending the full map: ") +
                          e.getDescription().cStr());
      return full_update(cur);
    }
    return msg::make_message(msg::kMsgMapUpdate, b);
  }

  msg::Message auth_update() {
    capnp::MallocMessageBuilder b;
    auto u = b.initRoot<wire::AuthUpdate>();
    u.setVersion(auth_version);
    auto entries = u.initEntries(unsigned(auth.size()));
    unsigned i = 0;
    for (const auto &[entity, secret] : auth) {
      entries[i].setEntity(entity);
      entries[i].setSecret(
          capnp::Data::Reader(reinterpret_cast<const capnp::byte *>(secret.data()), secret.size()));
      ++i;
    }
    return msg::make_message(msg::kMsgAuthUpdate, b);
  }

  // Commits `next` (if any) as epoch cur+1 together with the auth and meta
  // changes, then queues the pushes. REQUIRES: mu held.
  Status commit(std::optional<ClusterMap> next,
                std::map<std::string, std::optional<std::string>> auth_changes,
                std::map<std::string, std::optional<std::string>> meta, Outbox &out) {
    const ClusterMap &cur = view->map();
    MapStoreUpdate u;
    std::shared_ptr<const MapView> new_view;
    if (next) {
      next->epoch = cur.epoch + 1;
      next->modified_ms = now();
      auto pm = cluster::generate_placement(next->osds, cur.placement);
      if (!pm.ok()) return pm.status();
      next->placement = std::move(*pm);
      u.epoch = next->epoch;
      u.full = cluster::encode_map(*next);
      u.incremental = cluster::encode_incremental(cur, *next);
      auto v = MapView::create(*next, placement);
      if (!v.ok()) return v.status().Context("refusing map epoch " + std::to_string(u.epoch));
      new_view = std::move(*v);
    }
    if (!auth_changes.empty()) {
      meta[kMetaAuthVersion] = std::to_string(auth_version + 1);
      u.auth = auth_changes;
    }
    u.meta = meta;
    if (Status s = store->commit(u); !s.ok()) return s;

    if (meta.count(kMetaAdminOut)) admin_out = parse_id_set(meta[kMetaAdminOut].value_or(""));
    if (meta.count(kMetaFlapHolds)) {
      // `osd unhold` proposes the holds without the released OSD.
      FlapGuard proposed(opts.failure);
      proposed.restore_holds(meta[kMetaFlapHolds].value_or(""));
      std::vector<int32_t> released;
      for (const auto &[id, h] : flaps.holds())
        if (!proposed.holds().count(id)) released.push_back(id);
      for (int32_t id : released) {
        flaps.release(id);
        held_boot_logged.erase(id);
        log.info(kLog, "osd." + std::to_string(id) + " is no longer held down");
      }
    }
    if (!auth_changes.empty()) {
      ++auth_version;
      std::vector<std::pair<std::string, bool>> changed;  // entity, removed (else changed)
      for (const auto &[entity, secret] : auth_changes) {
        auto old = auth.find(entity);
        if (old != auth.end() && (!secret || *secret != old->second))
          changed.emplace_back(entity, !secret);
        if (secret)
          auth[entity] = *secret;
        else
          auth.erase(entity);
      }
      msg::Message m = auth_update();
      for (auto &[c, sub] : subs)
        if (sub.want_auth) out.push_back({sub.conn, m, {}});
      // A removed or changed key ends the entity's sessions here; the
      // daemons do the same when they apply this auth version.
      for (const auto &[entity, removed] : changed)
        revoked.emplace_back(entity, entity + (removed ? "'s key was removed" : "'s key changed") +
                                         " in auth version " + std::to_string(auth_version));
    }
    if (new_view) {
      std::shared_ptr<const MapView> old = view;
      view = new_view;
      log.info(kLog, "map epoch " + std::to_string(view->epoch()));
      capnp::MallocMessageBuilder b;
      auto upd = b.initRoot<wire::MapUpdate>();
      cluster::incremental_to_wire(old->map(), view->map(), upd.initIncrementals(1)[0]);
      msg::Message m = msg::make_message(msg::kMsgMapUpdate, b);
      for (auto &[c, sub] : subs) out.push_back({sub.conn, m, {}});
    }
    return Status::OK();
  }

  using MetaChanges = std::map<std::string, std::optional<std::string>>;

  // Marks `id` down in `next` (no commit). A markdown of an OSD that may
  // well be alive (`flapping`: peer reports, missing beacons) counts
  // towards a flap hold, which goes into *meta. REQUIRES: mu held.
  void mark_down(ClusterMap &next, int32_t id, const std::string &why, bool flapping,
                 MetaChanges *meta) {
    OsdInfo &o = next.osds[id];
    if (!o.up) return;
    o.up = false;
    o.down_at = view->epoch() + 1;
    o.down_since_ms = now();
    stats.drop(id);
    failure_reports.erase(id);
    log.warn(kLog, "marking osd." + std::to_string(id) + " down: " + why);
    if (flapping && flaps.on_markdown(id, now())) {
      (*meta)[kMetaFlapHolds] = flaps.encode_holds();
      const FailurePolicyOptions &f = opts.failure;
      log.warn(kLog, "osd." + std::to_string(id) + " was marked down " +
                         std::to_string(f.flap_max_markdowns) + " times within " +
                         std::to_string(f.flap_window_ms / 1000) +
                         " s: holding it down (flapping) until `strata osd unhold " +
                         std::to_string(id) + "`" +
                         (f.flap_hold_ms ? " or for " + std::to_string(f.flap_hold_ms / 1000) + " s"
                                         : std::string()));
    }
  }

  // ------------------------------------------------------------ handlers

  void on_message(const msg::ConnectionRef &conn, msg::Message &&m) {
    std::unique_lock lk(mu);
    if (stopping) return;
    drain_closed();
    Outbox out;
    const std::string &who = conn->peer_entity();
    Status s;
    switch (m.type) {
      case msg::kMsgMonSubscribe:
        s = msg::read_message<wire::MonSubscribe>(
            m, "MonSubscribe from " + who,
            [&](wire::MonSubscribe::Reader r) { return subscribe(conn, r, out); });
        break;
      case msg::kMsgOsdBoot:
        s = msg::read_message<wire::OsdBoot>(
            m, "OsdBoot from " + who, [&](wire::OsdBoot::Reader r) { return boot(conn, r, out); });
        break;
      case msg::kMsgOsdFailure:
        s = msg::read_message<wire::OsdFailure>(
            m, "OsdFailure from " + who,
            [&](wire::OsdFailure::Reader r) { return failure(conn, r, out); });
        break;
      case msg::kMsgOsdStats:
        s = msg::read_message<wire::OsdStats>(
            m, "OsdStats from " + who,
            [&](wire::OsdStats::Reader r) { return osd_stats(conn, r, out); });
        break;
      case msg::kMsgMdsBeacon:
        s = msg::read_message<wire::MdsBeacon>(
            m, "MdsBeacon from " + who,
            [&](wire::MdsBeacon::Reader r) { return mds_beacon(conn, r, out); });
        break;
      case msg::kMsgMonCommand:
        s = msg::read_message<wire::MonCommand>(
            m, "MonCommand from " + who,
            [&](wire::MonCommand::Reader r) { return command(conn, r, out); });
        break;
      default:
        // A newer peer may send what this monitor does not know yet.
        log.warn(kLog, "ignoring message type " + std::to_string(m.type) + " from " + who);
        break;
    }
    if (!s.ok()) {
      log.error(kLog, s.message());
      // Bad payloads and impersonation end the connection; the monitor
      // keeps serving everyone else.
      if (s.code() == -EBADMSG || s.code() == -EPERM) out.push_back({conn, {}, s.message()});
    }
    flush(lk, out);
  }

  void on_accept(const msg::ConnectionRef &conn) {
    std::lock_guard lk(mu);
    drain_closed();
    int32_t id = osd_of(conn->peer_entity());
    if (id >= 0) {
      osd_conns[id].insert(conn);
      conn_lost_ms.erase(id);
    }
  }

  // Connection ends are queued and handled under the state lock by whoever
  // takes it next: on_close may run inside a send() that the flush of
  // another thread makes while this one waits for send_mu.
  void on_close(const msg::ConnectionRef &conn, const std::string &reason) {
    {
      std::lock_guard el(events_mu);
      closed.emplace_back(conn, reason);
    }
    std::unique_lock lk(mu, std::try_to_lock);
    if (lk.owns_lock()) drain_closed();
  }

  // REQUIRES: mu held.
  void drain_closed() {
    std::vector<std::pair<msg::ConnectionRef, std::string>> batch;
    {
      std::lock_guard el(events_mu);
      batch.swap(closed);
    }
    for (auto &[conn, reason] : batch) {
      subs.erase(conn.get());
      int32_t id = osd_of(conn->peer_entity());
      if (auto b = booted_conn.find(id); b != booted_conn.end() && b->second == conn)
        booted_conn.erase(b);
      auto it = osd_conns.find(id);
      if (id >= 0 && it != osd_conns.end() && it->second.erase(conn) && it->second.empty()) {
        osd_conns.erase(it);
        const OsdInfo *o = view->map().osd(id);
        if (o && o->up) {
          conn_lost_ms[id] = now();
          log.info(kLog, "osd." + std::to_string(id) + " lost its connection (" + reason + ")");
        }
      }
    }
  }

  Status subscribe(const msg::ConnectionRef &conn, wire::MonSubscribe::Reader r, Outbox &out) {
    const std::string &who = conn->peer_entity();
    // An MDS verifies its clients' keys like an OSD does.
    bool daemon = who == "mon" || osd_of(who) >= 0 || !mds_name_of(who).empty();
    if (r.getWantAuth() && !daemon)
      log.warn(kLog, who + " asked for the auth keys; only daemons get them");
    Sub &sub = subs[conn.get()];
    sub.conn = conn;
    sub.want_auth = r.getWantAuth() && daemon;
    if (auto m = update_from(r.getHaveEpoch())) out.push_back({conn, std::move(*m), {}});
    if (sub.want_auth) out.push_back({conn, auth_update(), {}});
    return Status::OK();
  }

  Status check_osd(const msg::ConnectionRef &conn, int32_t id, const char *what) {
    if (osd_of(conn->peer_entity()) != id || id < 0)
      return Status::Error(EPERM, std::string(what) + " for osd." + std::to_string(id) + " from " +
                                      conn->peer_entity() + " refused");
    return Status::OK();
  }

  Status boot(const msg::ConnectionRef &conn, wire::OsdBoot::Reader r, Outbox &out) {
    int32_t id = r.getId();
    if (Status s = check_osd(conn, id, "OsdBoot"); !s.ok()) return s;
    const ClusterMap &cur = view->map();
    std::string fsid = text(r.getFsid());
    if (!fsid.empty() && fsid != cur.fsid)
      return Status::Error(
          EPERM, "osd." + std::to_string(id) + " belongs to cluster " + fsid + ", not " + cur.fsid);
    std::string addr = text(r.getAddr()), host = text(r.getHost());
    last_beacon_ms[id] = now();
    conn_lost_ms.erase(id);
    osd_conns[id].insert(conn);
    MetaChanges meta;
    bool hold_expired = false;
    if (flaps.held(id, now(), &hold_expired)) {
      if (held_boot_logged.insert(id).second)
        log.warn(kLog, "refusing the boot of osd." + std::to_string(id) +
                           ": held down for flapping (strata osd unhold " + std::to_string(id) +
                           ")");
      return Status::OK();
    }
    if (hold_expired) {
      held_boot_logged.erase(id);
      meta[kMetaFlapHolds] = flaps.encode_holds();
      log.info(kLog, "osd." + std::to_string(id) + " held long enough; letting it boot");
    }
    const OsdInfo *old = cur.osd(id);
    // The same run asking again (it has not seen the map with its boot
    // yet). A boot on any other connection may be a restarted process, which
    // must get a new up_from so that its peers notice.
    auto booted = booted_conn.find(id);
    if (old && old->up && old->addr == addr && (host.empty() || host == old->host) &&
        booted != booted_conn.end() && booted->second == conn)
      return Status::OK();
    booted_conn[id] = conn;
    ClusterMap next = cur;
    OsdInfo &o = next.osds[id];
    if (!old) {
      o.id = id;
      o.weight = r.getWeight() ? r.getWeight() : 0x10000;
      o.in = !admin_out.count(id);
    }
    if (!host.empty()) o.host = host;
    if (o.host.empty()) o.host = cluster::kDefaultHost;
    o.up = true;
    o.addr = addr;
    o.up_from = cur.epoch + 1;
    o.down_since_ms = 0;
    if (!o.in && !admin_out.count(id)) o.in = true;  // out only because it was down
    failure_reports.erase(id);
    log.info(kLog, "osd." + std::to_string(id) + (old ? " booted" : " is new, booted") + " at " +
                       addr + " on host " + o.host);
    return commit(std::move(next), {}, std::move(meta), out);
  }

  Status failure(const msg::ConnectionRef &conn, wire::OsdFailure::Reader r, Outbox &out) {
    int32_t reporter = r.getReporter(), target = r.getTarget();
    if (Status s = check_osd(conn, reporter, "OsdFailure"); !s.ok()) return s;
    const OsdInfo *t = view->map().osd(target);
    const OsdInfo *rep = view->map().osd(reporter);
    if (!t || !t->up || !rep || !rep->up) return Status::OK();
    if (r.getEpoch() != 0 && r.getEpoch() < t->up_from) return Status::OK();  // an older life
    auto &reports = failure_reports[target];
    if (r.getStillAlive()) {
      reports.erase(reporter);
      return Status::OK();
    }
    bool first = !reports.count(reporter);
    reports[reporter] = now();
    std::set<int32_t> reporters;
    for (const auto &[id, at] : reports) reporters.insert(id);
    ReporterVerdict v = judge_reporters(view->map(), target, reporters, opts.failure);
    if (!v.enough) {
      if (first)
        log.info(kLog, "osd." + std::to_string(reporter) + " reports osd." +
                           std::to_string(target) + " down; not yet believed: " + v.why);
      return Status::OK();
    }
    ClusterMap next = view->map();
    MetaChanges meta;
    mark_down(next, target,
              v.why + "; osd." + std::to_string(reporter) + " has not heard from it for " +
                  std::to_string(r.getFailedForMs()) + " ms",
              true, &meta);
    return commit(std::move(next), {}, std::move(meta), out);
  }

  Status osd_stats(const msg::ConnectionRef &conn, wire::OsdStats::Reader r, Outbox &out) {
    int32_t id = r.getId();
    if (Status s = check_osd(conn, id, "OsdStats"); !s.ok()) return s;
    last_beacon_ms[id] = now();
    const OsdInfo *o = view->map().osd(id);
    if (!o || !o->up) return Status::OK();  // it will boot again
    OsdStatEntry e;
    e.id = id;
    e.epoch = r.getEpoch();
    e.used_bytes = r.getUsedBytes();
    e.total_bytes = r.getTotalBytes();
    for (auto w : r.getWarnings()) e.warnings.push_back(text(w));
    for (auto p : r.getPgs()) {
      PgStatEntry pe;
      pe.pg = cluster::PgId{p.getPool(), p.getSeed()};
      pe.state = text(p.getState());
      pe.objects = p.getObjects();
      pe.bytes = p.getBytes();
      pe.last_update = p.getLastUpdate();
      pe.epoch = p.getEpoch();
      for (int32_t a : p.getActing()) pe.acting.push_back(a);
      for (auto d : p.getDamaged()) pe.damaged.emplace_back(text(d.getOid()), text(d.getReason()));
      pe.damaged_total = std::max<uint64_t>(p.getDamagedTotal(), pe.damaged.size());
      pe.read_repairs = p.getReadRepairs();
      e.pgs.push_back(std::move(pe));
    }
    uint64_t used = e.used_bytes, total = e.total_bytes;
    stats.update(std::move(e));
    return update_fullness(id, used, total, r.getRefusedFull(), out);
  }

  // Publishes a change of an OSD's fullness level in the map, so that every
  // primary refuses writes to a full OSD's PGs and recovery avoids a
  // backfillfull one.
  // An OSD that refused writes by its own count (refused_full: its queued
  // writes or the refused one would pass the full ratio) is full even if
  // its last statvfs is a little below the ratio.
  Status update_fullness(int32_t id, uint64_t used, uint64_t total, bool refused_full,
                         Outbox &out) {
    const OsdInfo *o = view->map().osd(id);
    if (!o) return Status::OK();
    cluster::Fullness level = cluster::next_fullness(used, total, opts.full_ratios, o->fullness);
    if (refused_full) level = cluster::Fullness::kFull;
    if (o->fullness == level) return Status::OK();
    log.info(kLog, "osd." + std::to_string(id) + " is now " + cluster::fullness_name(level) + " (" +
                       std::to_string(total ? used * 100 / total : 0) + "% of " +
                       std::to_string(total) + " bytes used" +
                       (refused_full ? "; it refused writes past the full ratio" : "") + ")");
    ClusterMap next = view->map();
    next.osds[id].fullness = level;
    return commit(std::move(next), {}, {}, out);
  }

  // Beacons come every mds_beacon_interval_ms from every MDS: the map only
  // changes (a new epoch) when the beacon means something new.
  Status mds_beacon(const msg::ConnectionRef &conn, wire::MdsBeacon::Reader r, Outbox &out) {
    const std::string &who = conn->peer_entity();
    MdsBeaconInfo b;
    b.name = text(r.getName());
    if (mds_name_of(who).empty() || "mds." + b.name != who)
      return Status::Error(EPERM, "MdsBeacon for mds." + b.name + " from " + who + " refused");
    const ClusterMap &cur = view->map();
    std::string fsid = text(r.getFsid());
    if (!fsid.empty() && fsid != cur.fsid)
      return Status::Error(EPERM, who + " belongs to cluster " + fsid + ", not " + cur.fsid);
    b.addr = text(r.getAddr());
    uint8_t st = r.getState();
    if (st > uint8_t(cluster::MdsState::kActive))
      return Status::Error(EBADMSG,
                           "MdsBeacon from " + who + ": unknown state " + std::to_string(st));
    b.state = static_cast<cluster::MdsState>(st);
    b.fs_id = r.getFsId();
    b.incarnation = r.getIncarnation();
    b.want_fs = text(r.getWantFs());
    b.stats.sessions = r.getSessions();
    b.stats.leases = r.getLeases();
    b.stats.cache_bytes = r.getCacheBytes();
    b.stats.cache_limit_bytes = r.getCacheLimitBytes();
    b.stats.inodes = r.getInodes();
    b.stats.journal_bytes = r.getJournalBytes();
    b.stats.requests = r.getRequests();
    b.stats.journal_writes = r.getJournalWrites();
    b.stats.apply_writes = r.getApplyWrites();
    b.stats.purged_objects = r.getPurgedObjects();
    ClusterMap next = cur;
    std::vector<std::string> events;
    bool changed = mds.on_beacon(cur, b, conn.get(), now(), next, &events);
    // Holding the session keeps its address from being reused by a later
    // one, which the tracker would take for the same session.
    mds_conns[b.name] = conn;
    if (!changed) return Status::OK();
    for (const std::string &e : events) log.info(kLog, e);
    return commit(std::move(next), {}, {}, out);
  }

  Status command(const msg::ConnectionRef &conn, wire::MonCommand::Reader r, Outbox &out) {
    CommandRequest req;
    req.prefix = text(r.getPrefix());
    req.entity = conn->peer_entity();
    for (auto kv : r.getArgs()) req.args[text(kv.getKey())] = text(kv.getValue());
    CommandState st;
    st.view = view;
    st.stats = &stats;
    st.auth = &auth;
    st.admin_out = admin_out;
    st.flap_holds = flaps.holds();
    st.flap_hold_ms = opts.failure.flap_hold_ms;
    st.defaults = opts.pool_defaults;
    st.mds_stats = &mds.stats();
    CommandEffect effect;
    CommandReply reply = run_command(req, st, &effect);
    if (reply.rc == 0 && effect.next) {
      // A new filesystem gets a standby in the same epoch.
      std::vector<std::string> events;
      mds.assign(*effect.next, &events);
      for (const std::string &e : events) log.info(kLog, e);
    }
    if (reply.rc == 0 && !effect.empty()) {
      Status s =
          commit(std::move(effect.next), std::move(effect.auth), std::move(effect.meta), out);
      if (!s.ok()) {
        reply.rc = s.code();
        reply.message = "'" + req.prefix + "' failed: " + s.message();
        reply.json = json::Value();
        reply.json.set("error", reply.message);
      }
    }
    if (reply.rc == 0 && is_mutating(req.prefix))
      log.info(kLog, req.entity + ": " + req.prefix + ": " + reply.message);
    capnp::MallocMessageBuilder b;
    auto rep = b.initRoot<wire::MonCommandReply>();
    rep.setTid(r.getTid());
    rep.setRc(reply.rc);
    rep.setMessage(reply.message);
    rep.setJson(reply.json.dump());
    rep.setEpoch(view->epoch());
    out.push_back({conn, msg::make_message(msg::kMsgMonCommandReply, b), {}});
    return Status::OK();
  }

  // ------------------------------------------------------------ timers

  uint64_t tick_period_ms() const {
    return opts.tick_ms ? opts.tick_ms
                        : std::clamp<uint64_t>(opts.heartbeat_grace_ms / 10, 10, 500);
  }

  // A monitor that did not run for a while (the machine stalled, or its
  // own store blocked it) cannot tell a silent daemon from beacons it did
  // not read: whoever was silent only during that time is not blamed, as
  // after an election. (A CI run saw every process stop for 6.4 s; the
  // monitor then marked a healthy OSD down and dropped the active MDS.)
  void excuse_own_stall(uint64_t t) {
    constexpr uint64_t kStallMs = 1000;
    const uint64_t expected = last_tick_ms + tick_period_ms();
    if (last_tick_ms != 0 && t > expected + kStallMs) {
      const uint64_t stalled = t - expected;
      for (auto &[id, at] : last_beacon_ms) at += stalled;
      mds.excuse(stalled);
      log.warn(kLog, "the monitor did not run for " + std::to_string(stalled) +
                         " ms: beacon silence in that time is not held against anyone");
    }
    last_tick_ms = t;
  }

  void tick() {
    std::unique_lock lk(mu);
    drain_closed();
    Outbox out;
    uint64_t t = now();
    excuse_own_stall(t);
    uint64_t grace = opts.heartbeat_grace_ms;
    const ClusterMap &cur = view->map();
    ClusterMap next = cur;
    MetaChanges meta;
    bool changed = false;
    for (const auto &[id, o] : cur.osds) {
      if (o.up) {
        auto lost = conn_lost_ms.find(id);
        auto beacon = last_beacon_ms.find(id);
        if (lost != conn_lost_ms.end() && t - lost->second > grace) {
          mark_down(next, id,
                    "mon connection closed " + std::to_string(t - lost->second) + " ms ago", false,
                    &meta);
          changed = true;
        } else if (beacon != last_beacon_ms.end() && t > beacon->second &&
                   t - beacon->second > 2 * grace) {
          mark_down(next, id, "no beacon for " + std::to_string(t - beacon->second) + " ms", true,
                    &meta);
          changed = true;
        }
      } else if (opts.down_out_interval_ms > 0 && o.in && o.down_since_ms && t > o.down_since_ms &&
                 t - o.down_since_ms > opts.down_out_interval_ms) {
        next.osds[id].in = false;
        log.warn(kLog, "marking osd." + std::to_string(id) + " out: down for " +
                           std::to_string(t - o.down_since_ms) + " ms");
        changed = true;
      }
    }
    // Forget peer reports older than two graces.
    for (auto &[target, reports] : failure_reports)
      std::erase_if(reports,
                    [&](const auto &kv) { return t > kv.second && t - kv.second > 2 * grace; });
    std::vector<std::string> mds_events;
    if (mds.expire(t, opts.mds_beacon_grace_ms, next, &mds_events)) changed = true;
    for (const std::string &e : mds_events) log.warn(kLog, e);
    if (changed) {
      if (Status s = commit(std::move(next), {}, std::move(meta), out); !s.ok())
        log.error(kLog, "timer: " + s.message());
    }
    flush(lk, out);
  }

  void timer_loop() {
    uint64_t period = tick_period_ms();
    std::unique_lock lk(mu);
    while (!stopping) {
      timer_cv.wait_for(lk, std::chrono::milliseconds(period));
      if (stopping) break;
      lk.unlock();
      tick();
      lk.lock();
    }
  }
};

Status Monitor::mkfs(MapStore &store, const std::string &fsid,
                     const std::map<std::string, std::string> &keys,
                     const std::string &placement_plugin, uint64_t now_ms) {
  if (store.last_epoch() != 0)
    return Status::Error(EEXIST,
                         "the map store already holds epoch " + std::to_string(store.last_epoch()));
  if (fsid.empty()) return Status::Error(EINVAL, "mkfs needs an fsid");
  ClusterMap m;
  m.epoch = 1;
  m.fsid = fsid;
  m.placement_plugin = placement_plugin;
  m.created_ms = m.modified_ms = now_ms;
  auto pm = cluster::generate_placement({}, {});
  if (!pm.ok()) return pm.status();
  m.placement = std::move(*pm);
  MapStoreUpdate u;
  u.epoch = 1;
  u.full = cluster::encode_map(m);
  for (const auto &[entity, secret] : keys) u.auth[entity] = secret;
  u.meta["fsid"] = fsid;
  u.meta[kMetaAuthVersion] = "1";
  return store.commit(u);
}

std::string Monitor::new_fsid() {
  std::random_device rd;
  uint8_t b[16];
  for (uint8_t &x : b) x = uint8_t(rd());
  b[6] = uint8_t((b[6] & 0x0f) | 0x40);  // version 4
  b[8] = uint8_t((b[8] & 0x3f) | 0x80);  // RFC 4122 variant
  char out[40];
  std::snprintf(out, sizeof out,
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                b[15]);
  return out;
}

Result<std::unique_ptr<Monitor>> Monitor::open(MonitorOptions opts, std::unique_ptr<MapStore> store,
                                               host::Plugin placement, Logger &log, Env &env) {
  uint64_t last = store->last_epoch();
  if (last == 0) return Status::Error(ENOENT, "the map store is empty (run mkfs)");
  auto bytes = store->full_map(last);
  if (!bytes.ok()) return bytes.status();
  auto map = cluster::decode_map(*bytes);
  if (!map.ok()) return map.status().Context("loading map epoch " + std::to_string(last));
  auto view = MapView::create(std::move(*map), placement);
  if (!view.ok()) return view.status();
  auto s =
      std::make_unique<State>(std::move(opts), std::move(store), std::move(placement), log, env);
  s->view = std::move(*view);
  s->auth = s->store->auth_keys();
  s->auth_version =
      std::strtoull(s->store->meta(kMetaAuthVersion).value_or("1").c_str(), nullptr, 10);
  s->admin_out = parse_id_set(s->store->meta(kMetaAdminOut).value_or(""));
  s->flaps.restore_holds(s->store->meta(kMetaFlapHolds).value_or(""));
  // OSDs the map has up get one grace to reconnect to this monitor; so do
  // the MDS daemons.
  uint64_t t = s->now();
  s->mds.adopt(s->view->map(), t);
  for (const auto &[id, o] : s->view->map().osds)
    if (o.up) {
      s->last_beacon_ms[id] = t;
      s->conn_lost_ms[id] = t;
    }
  return std::unique_ptr<Monitor>(new Monitor(std::move(s)));
}

Monitor::Monitor(std::unique_ptr<State> s) : s_(std::move(s)) {}

Monitor::~Monitor() { stop(); }

Result<std::string> Monitor::start() {
  State *s = s_.get();
  auto self_secret = [&] {
    std::lock_guard lk(s->mu);
    auto it = s->auth.find("mon");
    return it == s->auth.end() ? std::string() : it->second;
  }();
  s->messenger = std::make_unique<msg::Messenger>(
      "mon", self_secret,
      [s](const std::string &entity) -> std::optional<std::string> {
        std::lock_guard lk(s->mu);
        auto it = s->auth.find(entity);
        if (it == s->auth.end()) return std::nullopt;
        return it->second;
      },
      s->log);
  msg::Handlers h;
  h.on_message = [s](const msg::ConnectionRef &c, msg::Message &&m) {
    s->on_message(c, std::move(m));
  };
  h.on_accept = [s](const msg::ConnectionRef &c) { s->on_accept(c); };
  h.on_close = [s](const msg::ConnectionRef &c, const std::string &why) { s->on_close(c, why); };
  s->messenger->set_handlers(std::move(h));
  auto addr = s->messenger->listen(s->opts.host, s->opts.port);
  if (!addr.ok()) return addr.status().Context("monitor");
  s->messenger->start();
  s->started = true;
  {
    // The first tick measures from here: a stall before it counts too.
    std::lock_guard lk(s->mu);
    s->last_tick_ms = s->now();
  }
  s->timer = std::thread([s] { s->timer_loop(); });
  s->log.info(kLog, "listening on " + *addr + ", map epoch " + std::to_string(current()->epoch()) +
                        ", fsid " + current()->map().fsid);
  return addr;
}

void Monitor::stop() {
  State *s = s_.get();
  {
    std::lock_guard lk(s->mu);
    if (s->stopping) return;
    s->stopping = true;
  }
  s->timer_cv.notify_all();
  if (s->timer.joinable()) s->timer.join();
  if (s->messenger) s->messenger->stop();
}

std::shared_ptr<const MapView> Monitor::current() const {
  std::lock_guard lk(s_->mu);
  return s_->view;
}

}  // namespace strata::mon

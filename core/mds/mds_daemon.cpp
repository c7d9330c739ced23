#include "mds/mds_daemon.h"

#include <capnp/message.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "common/json.h"
#include "msg/message_types.h"
#include "msg/schema/wire.capnp.h"
#include "msg/wire_codec.h"

namespace strata::mds {

namespace {

Result<uint64_t> get_u64(const Config &c, const std::string &entity, const std::string &key,
                         uint64_t def) {
  auto v = c.get(entity, key);
  if (!v || v->empty()) return def;
  auto n = parse_size(*v);
  if (!n.ok() || *n < 0) return Status::Error(EINVAL, key + ": not a size: " + *v);
  return static_cast<uint64_t>(*n);
}

// Replies to one client connection.
class ConnLink : public ClientLink {
 public:
  explicit ConnLink(msg::ConnectionRef c) : c_(std::move(c)) {}
  bool send(msg::Message m) override { return c_->send(std::move(m)); }
  std::string peer() const override { return c_->peer_entity() + "@" + c_->peer_address(); }

 private:
  msg::ConnectionRef c_;
};

}  // namespace

Result<MdsDaemonConfig> load_mds_config(const Config &c, const std::string &name) {
  MdsDaemonConfig cfg;
  cfg.name = name;
  std::string e = "mds." + name;
  cfg.fsid = c.get(e, "fsid").value_or("");
  cfg.mon_addr = c.get(e, "mon_addr").value_or("127.0.0.1:6789");
  cfg.keyring = c.get(e, "keyring").value_or("");
  cfg.want_fs = c.get(e, "mds_fs").value_or("");
  std::string addr = c.get(e, "mds_addr").value_or("127.0.0.1:0");
  size_t colon = addr.rfind(':');
  cfg.host = colon == std::string::npos ? addr : addr.substr(0, colon);
  if (colon != std::string::npos) {
    char *end = nullptr;
    long p = std::strtol(addr.c_str() + colon + 1, &end, 10);
    if (*end || p < 0 || p > 65535) return Status::Error(EINVAL, "mds_addr: bad port in " + addr);
    cfg.port = static_cast<uint16_t>(p);
  }
  struct {
    const char *key;
    uint64_t *out;
  } nums[] = {{"mds_beacon_interval_ms", &cfg.beacon_interval_ms},
              {"mds_cache_memory_limit", &cfg.cache_limit},
              {"mds_lease_ms", &cfg.lease_ms},
              {"mds_delegate_inos", &cfg.delegate_inos},
              {"fs_max_file_size", &cfg.max_file_size},
              {"mds_inline_data_max", &cfg.inline_max},
              {"mds_journal_segment_bytes", &cfg.store.journal_segment_bytes},
              {"mds_dir_split_entries", &cfg.store.dir_split_entries},
              {"mds_journal_delay_ms", &cfg.store.journal_delay_ms},
              {"mds_apply_max_delay_ms", &cfg.store.apply_max_delay_ms},
              {"mds_purge_busy_rate", &cfg.store.purge_busy_rate}};
  for (auto &n : nums) {
    auto v = get_u64(c, e, n.key, *n.out);
    if (!v.ok()) return v.status().Context(e);
    *n.out = *v;
  }
  if (cfg.beacon_interval_ms == 0) cfg.beacon_interval_ms = 500;
  if (cfg.inline_max > kInlineDataHardMax)
    return Status::Error(EINVAL, "mds_inline_data_max: at most " +
                                     std::to_string(kInlineDataHardMax) + " bytes, not " +
                                     std::to_string(cfg.inline_max))
        .Context(e);
  return cfg;
}

MdsDaemon::MdsDaemon(MdsDaemonConfig cfg, Logger &log)
    : cfg_(std::move(cfg)), log_(log), who_("mds." + cfg_.name) {}

MdsDaemon::~MdsDaemon() { stop(); }

std::optional<std::string> MdsDaemon::secret_of(const std::string &entity) {
  {
    std::lock_guard lk(mu_);
    auto it = auth_keys_.find(entity);
    if (it != auth_keys_.end()) return it->second;
  }
  return keyring_.secret(entity);
}

Status MdsDaemon::start() {
  if (cfg_.keyring.empty()) return Status::Error(EINVAL, who_ + ": no keyring in the config");
  auto kr = msg::Keyring::load_file(cfg_.keyring);
  if (!kr.ok()) return kr.status();
  keyring_ = std::move(*kr);
  auto secret = keyring_.secret(who_);
  if (!secret) return Status::Error(ENOKEY, "keyring " + cfg_.keyring + " has no key for " + who_);

  // Clients: their keys come from the monitor (AuthUpdate), as for OSDs.
  messenger_ = std::make_unique<msg::Messenger>(
      who_, *secret, [this](const std::string &e) { return secret_of(e); }, log_);
  msg::Handlers h;
  h.on_message = [this](const msg::ConnectionRef &c, msg::Message &&m) {
    MdsServer *srv = nullptr;
    {
      std::lock_guard lk(mu_);
      srv = server_.get();
    }
    if (!srv) return;  // not active: the client retries elsewhere
    // One link object per connection, kept for the connection's life.
    LinkRef link;
    {
      std::lock_guard lk(mu_);
      auto &slot = links_[c.get()];
      link = slot.lock();
      if (!link) {
        link = std::make_shared<ConnLink>(c);
        slot = link;
        strong_links_[c.get()] = link;
      }
    }
    srv->handle(link, std::move(m));
  };
  h.on_close = [this](const msg::ConnectionRef &c, const std::string &) {
    LinkRef link;
    MdsServer *srv = nullptr;
    {
      std::lock_guard lk(mu_);
      auto it = strong_links_.find(c.get());
      if (it != strong_links_.end()) {
        link = it->second;
        strong_links_.erase(it);
      }
      links_.erase(c.get());
      srv = server_.get();
    }
    if (link && srv) srv->link_closed(link);
  };
  messenger_->set_handlers(std::move(h));
  auto bound = messenger_->listen(cfg_.host, cfg_.port);
  if (!bound.ok()) return bound.status().Context(who_ + ": listening on " + cfg_.host);
  bound_addr_ = *bound;
  messenger_->start();

  mon::MonClientOptions mo;
  mo.mon_addr = cfg_.mon_addr;
  mo.entity = who_;
  mo.secret = *secret;
  mo.want_auth = true;
  mon_ = std::make_unique<mon::MonClient>(mo, log_);
  mon_->on_map([this](std::shared_ptr<const cluster::ClusterMap> m) { on_map(std::move(m)); });
  mon_->on_auth([this](uint64_t, const std::map<std::string, std::string> &keys) {
    std::vector<std::string> changed;
    {
      std::lock_guard lk(mu_);
      for (const auto &[e, s] : auth_keys_) {
        auto now = keys.find(e);
        if (now == keys.end() || now->second != s) changed.push_back(e);
      }
      auth_keys_ = keys;
    }
    for (const std::string &e : changed) messenger_->close_entity(e, "key removed or changed");
  });
  mon_->on_connect([this] { send_beacon(); });
  if (Status s = mon_->start(); !s.ok()) return s.Context(who_ + ": reaching the monitor");

  // The cluster connection for the metadata pool's objects.
  client::ClusterArgs ca;
  ca.conf_path = cfg_.conf_path;
  ca.use_default_conf = !cfg_.conf_path.empty();
  ca.entity = who_;
  ca.overrides = cfg_.overrides;
  auto cc = client::ClusterClient::create(ca);
  if (!cc.ok()) return cc.status().Context(who_ + ": cluster client");
  cluster_ = *cc;
  if (Status s = cluster_->connect(std::chrono::milliseconds(30000)); !s.ok())
    return s.Context(who_ + ": connecting to the cluster");
  log_.info("mds", who_ + " up at " + bound_addr_ + ", standby" +
                       (cfg_.want_fs.empty() ? "" : " for fs " + cfg_.want_fs));
  return Status::OK();
}

void MdsDaemon::send_beacon() {
  if (!mon_) return;
  capnp::MallocMessageBuilder b;
  auto w = b.initRoot<wire::MdsBeacon>();
  w.setName(cfg_.name);
  w.setAddr(bound_addr_);
  w.setFsid(cfg_.fsid);
  w.setWantFs(cfg_.want_fs);
  MdsServer *srv = nullptr;
  {
    std::lock_guard lk(mu_);
    w.setState(static_cast<uint8_t>(state_));
    w.setFsId(fs_id_);
    w.setIncarnation(incarnation_);
    srv = server_.get();
  }
  if (srv) {
    MdsServerStats st = srv->stats();
    w.setSessions(st.sessions);
    w.setLeases(st.leases);
    w.setCacheBytes(st.cache_bytes);
    w.setCacheLimitBytes(st.cache_limit_bytes);
    w.setInodes(st.inodes);
    w.setJournalBytes(st.journal_bytes);
    w.setRequests(st.requests);
    w.setJournalWrites(st.journal_writes);
    w.setApplyWrites(st.apply_writes);
    w.setPurgedObjects(st.purged_objects);
  } else {
    w.setCacheLimitBytes(cfg_.cache_limit);
  }
  mon_->send(msg::make_message(msg::kMsgMdsBeacon, b));
}

void MdsDaemon::on_map(std::shared_ptr<const cluster::ClusterMap> m) {
  // Any up OSD at its full ratio stops the filesystem's growth: the MDS
  // cannot tell which of its objects' PGs a request will touch, and a
  // small cluster's pools span every OSD anyway.
  std::string why;
  for (const auto &[id, o] : m->osds)
    if (o.up && o.fullness >= cluster::Fullness::kFull) {
      why = "osd." + std::to_string(id) + " is full";
      break;
    }
  {
    std::lock_guard fl(full_mu_);
    if (why != full_why_)
      log_.warn("mds", who_ + (why.empty() ? ": the cluster takes data again"
                                           : ": " + why + ": refusing changes that take space"));
    full_why_ = std::move(why);
  }
  std::lock_guard lk(mu_);
  map_ = std::move(m);
  cv_.notify_all();
}

Status MdsDaemon::take_over(const cluster::FsInfo &fs, uint64_t incarnation) {
  log_.info("mds", who_ + ": taking over fs " + fs.name + " at incarnation " +
                       std::to_string(incarnation));
  auto store = make_object_meta_store(cluster_, fs, cfg_.store);
  if (!store) return Status::Error(ENOSYS, who_ + ": this build has no object metadata store");
  MdsServerOptions o;
  o.fs_name = fs.name;
  o.metadata_pool = fs.metadata_pool;
  o.data_pool = fs.data_pool;
  o.lease_ms = cfg_.lease_ms;
  o.cache_limit_bytes = cfg_.cache_limit;
  o.max_file_size = cfg_.max_file_size;
  o.inline_max = cfg_.inline_max;
  o.delegate_inos = cfg_.delegate_inos;
  data_pool_ = fs.data_pool;
  refresh_usage();
  o.statfs = [this] { return cached_usage(); };
  o.full = [this] {
    std::lock_guard fl(full_mu_);
    return full_why_;
  };
  o.on_fenced = [this](const Status &st) {
    log_.error("mds", who_ + ": fenced (" + st.message() + "): exiting");
    fenced_ = true;
    cv_.notify_all();
  };
  auto server = std::make_unique<MdsServer>(*store, o, log_);
  if (Status s = server->start(incarnation); !s.ok()) return s;
  std::lock_guard lk(mu_);
  store_ = std::move(store);
  server_ = std::move(server);
  state_ = cluster::MdsState::kActive;
  fs_id_ = fs.id;
  incarnation_ = incarnation;
  return Status::OK();
}

void MdsDaemon::refresh_usage() {
  if (!cluster_) return;
  auto r = cluster_->mon_command("status", {}, std::chrono::milliseconds(2000));
  if (!r.ok() || r->rc < 0) {
    log_.warn("mds", who_ + ": cluster usage for statfs: " +
                         (r.ok() ? r->message : r.status().ToString()));
    return;
  }
  auto j = json::parse(r->json);
  if (!j.ok()) return;
  uint64_t total = uint64_t(std::max<int64_t>(0, (*j)["total_bytes"].as_int()));
  uint64_t used = uint64_t(std::max<int64_t>(0, (*j)["used_bytes"].as_int()));
  // Replicas: every byte the filesystem writes costs `size` bytes of raw space.
  uint32_t copies = 1;
  if (auto p = cluster_->pool_by_id(data_pool_); p.ok() && p->size > 0) copies = p->size;
  usage_total_ = total / copies;
  usage_avail_ = (total > used ? total - used : 0) / copies;
}

StatfsFigures MdsDaemon::cached_usage() const {
  StatfsFigures f;
  f.total_bytes = usage_total_.load();
  f.free_bytes = f.avail_bytes = std::min(usage_avail_.load(), f.total_bytes);
  return f;
}

int MdsDaemon::run(const std::atomic<bool> &stop_requested) {
  auto next_beacon = std::chrono::steady_clock::now();
  auto next_usage = next_beacon;
  while (!stop_requested && !fenced_) {
    std::shared_ptr<const cluster::ClusterMap> m;
    bool active;
    {
      std::unique_lock lk(mu_);
      cv_.wait_until(lk, next_beacon, [&] { return fenced_.load() || stop_requested.load(); });
      m = map_;
      active = server_ != nullptr;
    }
    if (fenced_) return kFencedExit;
    if (m) {
      auto it = m->mds.find(cfg_.name);
      if (it != m->mds.end()) {
        const cluster::MdsInfo &me = it->second;
        if (!active && me.state == cluster::MdsState::kReplay && me.incarnation > 0) {
          const cluster::FsInfo *fs = nullptr;
          for (const auto &f : m->filesystems)
            if (f.second.id == me.fs_id) fs = &f.second;
          if (fs) {
            {
              std::lock_guard lk(mu_);
              state_ = cluster::MdsState::kReplay;
              fs_id_ = me.fs_id;
              incarnation_ = me.incarnation;
            }
            send_beacon();
            if (Status s = take_over(*fs, me.incarnation); !s.ok()) {
              log_.error("mds", s.ToString());
              return std::abs(s.code()) == ECANCELED ? kFencedExit : 1;
            }
            send_beacon();
          }
        } else if (active && me.incarnation > incarnation_) {
          log_.error("mds", who_ + ": the map moved on to incarnation " +
                                std::to_string(me.incarnation) + ": exiting");
          return kFencedExit;
        }
      }
    }
    if (active && std::chrono::steady_clock::now() >= next_usage) {
      refresh_usage();
      next_usage = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    }
    if (std::chrono::steady_clock::now() >= next_beacon) {
      send_beacon();
      next_beacon =
          std::chrono::steady_clock::now() + std::chrono::milliseconds(cfg_.beacon_interval_ms);
    }
  }
  return fenced_ ? kFencedExit : 0;
}

Status MdsDaemon::stop() {
  Status result = Status::OK();
  // No client message reaches the server once the messenger stopped.
  if (messenger_) messenger_->stop();
  std::unique_ptr<MdsServer> server;
  {
    std::lock_guard lk(mu_);
    server = std::move(server_);
  }
  if (server) result = server->stop();
  server.reset();
  if (store_) {
    store_->close();
    store_.reset();
  }
  if (mon_) mon_->stop();
  mon_.reset();
  if (cluster_) cluster_->shutdown();
  cluster_.reset();
  messenger_.reset();
  {
    std::lock_guard lk(mu_);
    strong_links_.clear();
    links_.clear();
  }
  return result;
}

}  // namespace strata::mds

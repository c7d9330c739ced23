#include "client/cluster_client.h"

#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "client/op_codec.h"
#include "host/plugin_loader.h"
#include "msg/keyring.h"

namespace strata::client {

namespace {

using Clock = std::chrono::steady_clock;

std::string random_hex16() {
  std::random_device rd;
  uint64_t v = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
  return b;
}

// Waits for one asynchronous result on the calling thread.
template <class T>
class SyncWaiter {
 public:
  void set(T v) {
    std::lock_guard<std::mutex> g(mu_);
    value_ = std::move(v);
    done_ = true;
    // Notify under the lock: once it is released the waiter may return and
    // destroy this object.
    cv_.notify_one();
  }
  T wait() {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait(lk, [&] { return done_; });
    return std::move(value_);
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  T value_{};
};

Status deadlock_error(const char *what) {
  return Status::Error(EDEADLK, std::string(what) +
                                    ": synchronous call from a completion callback (it would "
                                    "wait for the thread it runs on)");
}

}  // namespace

Result<std::shared_ptr<ClusterClient>> ClusterClient::create(const ClusterArgs &args) {
  std::shared_ptr<ClusterClient> c(new ClusterClient());
  std::string path = args.conf_path;
  if (path.empty() && args.use_default_conf) {
    if (const char *env = std::getenv("STRATA_CONF"); env && *env) {
      path = env;
    } else {
      std::error_code ec;
      if (std::filesystem::exists("strata.conf", ec)) path = "strata.conf";
    }
  }
  if (!path.empty()) {
    auto cfg = Config::load_file(path);
    if (!cfg.ok()) return cfg.status();
    c->config_ = std::move(*cfg);
  }
  for (const std::string &o : args.overrides) {
    Status st = c->config_.add_override(o);
    if (!st.ok()) return st;
  }
  auto entity = resolve_client_entity(c->config_, args.entity);
  if (!entity.ok()) return entity.status();
  c->entity_ = *entity;
  auto settings = load_client_settings(c->config_, c->entity_);
  if (!settings.ok()) return settings.status();
  c->settings_ = *settings;
  c->instance_ = c->entity_ + "." + random_hex16();
  c->log_ = std::make_unique<Logger>(c->settings_.log_level);
  return c;
}

ClusterClient::~ClusterClient() {
  shutdown();
  teardown();
  if (log_file_) std::fclose(log_file_);
}

Status ClusterClient::conf_set(const std::string &key, const std::string &value) {
  std::lock_guard<std::mutex> g(mu_);
  if (state_ != State::kCreated)
    return Status::Error(state_ == State::kShutDown ? ESHUTDOWN : EISCONN,
                         "conf_set " + key + ": only before connect");
  Config next = config_;
  Status st = next.add_override(key + "=" + value);
  if (!st.ok()) return st;
  auto s = load_client_settings(next, entity_);
  if (!s.ok()) return s.status();
  config_ = std::move(next);
  settings_ = *s;
  return Status::OK();
}

Result<std::string> ClusterClient::conf_get(const std::string &key) const {
  std::lock_guard<std::mutex> g(mu_);
  for (const strata_option_spec *spec : client_option_specs())
    if (key == spec->name) return config_value(config_, entity_, *spec);
  return Status::Error(ENOENT, "unknown client option '" + key + "'");
}

Status ClusterClient::usable() const {
  switch (state_.load()) {
    case State::kConnected: return Status::OK();
    case State::kShutDown: return Status::Error(ESHUTDOWN, "the cluster handle is shut down");
    default: return Status::Error(ENOTCONN, "not connected to the cluster");
  }
}

Status ClusterClient::connect(std::chrono::milliseconds timeout) {
  std::lock_guard<std::mutex> g(mu_);
  switch (state_.load()) {
    case State::kConnected: return Status::Error(EISCONN, "already connected");
    case State::kShutDown: return Status::Error(ESHUTDOWN, "the cluster handle is shut down");
    default: break;
  }
  if (timeout.count() <= 0) timeout = std::chrono::seconds(30);
  auto deadline = Clock::now() + timeout;
  auto secret = load_client_secret(settings_);
  if (!secret.ok()) return secret.status();

  // Logging first: every component below keeps a reference to it.
  if (!log_file_ && !settings_.log_file.empty()) {
    log_file_ = std::fopen(settings_.log_file.c_str(), "a");
    if (!log_file_)
      return Status::Error(errno, "cannot open log_file " + settings_.log_file);
  }
  log_ = std::make_unique<Logger>(settings_.log_level, log_file_ ? log_file_ : stderr);

  state_ = State::kConnecting;
  maps_ = std::make_unique<MapHolder>(host::split_plugin_path(settings_.plugin_path));
  msg::MessengerOptions mopts;
  mopts.io_threads = settings_.io_threads;
  messenger_ = std::make_unique<msg::Messenger>(entity_, *secret, msg::SecretLookup(), *log_, mopts);
  bg_ = std::make_unique<Background>(std::chrono::milliseconds(100), [this] {
    if (objecter_) objecter_->tick();
  });
  Objecter::Options oopts;
  oopts.instance = instance_;
  oopts.op_timeout = settings_.op_timeout;
  oopts.connect_timeout = settings_.connect_timeout;
  objecter_ = std::make_unique<Objecter>(*messenger_, *maps_, *bg_, *log_, oopts);

  sessions_ = std::make_unique<ServiceSessions>(*log_);
  msg::Handlers h;
  h.on_message = [this](const msg::ConnectionRef &c, msg::Message &&m) {
    if (sessions_->handle_message(c, m)) return;  // service range: a session's
    if (!objecter_->handle_message(c, m))
      log_->debug("client", "ignoring message type " + std::to_string(m.type) + " from " +
                                c->peer_entity());
  };
  h.on_close = [this](const msg::ConnectionRef &c, const std::string &reason) {
    objecter_->handle_close(c);
    sessions_->handle_close(c, reason);
  };
  messenger_->set_handlers(std::move(h));
  messenger_->start();
  bg_->start();

  mon::MonClientOptions mc;
  mc.mon_addr = settings_.mon_addr;
  mc.entity = entity_;
  mc.secret = *secret;
  mc.want_auth = false;
  mc.subscribe = true;
  mc.keepalive_interval = settings_.mon_keepalive_interval;
  mc.keepalive_timeout = settings_.mon_keepalive_timeout;
  mc.connect_timeout = std::min<std::chrono::milliseconds>(
      timeout, std::max(settings_.connect_timeout, std::chrono::milliseconds(1000)));
  mon_ = std::make_unique<mon::MonClient>(mc, *log_);
  mon_->on_map([this](std::shared_ptr<const cluster::ClusterMap> m) {
    // A burst of incrementals arrives as a burst of maps: only the newest
    // is worth instantiating placement for.
    if (mon_ && m->epoch < mon_->epoch()) return;
    Status st = maps_->install(*m);
    if (!st.ok()) {
      log_->error("client", st.ToString());
      std::lock_guard<std::mutex> g(map_error_mu_);
      map_error_ = st.ToString();
      return;
    }
    objecter_->handle_new_map();
    sessions_->handle_new_map(*m);
  });
  objecter_->set_map_wanted([this](uint64_t) {
    if (mon_) mon_->send(encode_mon_subscribe(maps_->epoch()));
  });

  Status st = mon_->start();
  if (st.ok() && !maps_->wait_for(1, deadline)) {
    std::lock_guard<std::mutex> g2(map_error_mu_);
    // A map came but cannot be used here (e.g. its placement plugin is not
    // on the plugin path): that is the answer, not a timeout.
    if (Status first = maps_->first_map_error(); !first.ok())
      st = first;
    else
      st = Status::Error(ETIMEDOUT,
                       "no usable cluster map from the monitor at " + settings_.mon_addr +
                           " within " + std::to_string(timeout.count()) + " ms" +
                           (map_error_.empty() ? "" : " (" + map_error_ + ")"));
  }
  if (!st.ok()) {
    teardown();
    state_ = State::kCreated;
    return st.Context("connecting " + entity_ + " to " + settings_.mon_addr);
  }
  state_ = State::kConnected;
  log_->info("client", instance_ + " connected, map epoch " + std::to_string(maps_->epoch()));
  return Status::OK();
}

void ClusterClient::teardown() {
  // Order: no new work (objecter), no more threads calling in (background,
  // monitor, messenger), then free.
  if (objecter_) objecter_->shutdown();
  if (bg_) bg_->stop();
  if (mon_) mon_->stop();
  if (messenger_) messenger_->stop();
  if (maps_) maps_->close();
  mon_.reset();
  objecter_.reset();
  bg_.reset();
  messenger_.reset();
  maps_.reset();
  sessions_.reset();
}

void ClusterClient::shutdown() {
  std::lock_guard<std::mutex> g(mu_);
  if (state_ == State::kShutDown) return;
  bool was_connected = state_ == State::kConnected;
  state_ = State::kShutDown;
  if (!was_connected) return;
  // Stop everything but keep the objects: ioctx handles may still point at
  // them, and their calls must see -ESHUTDOWN rather than freed memory.
  objecter_->shutdown();
  bg_->stop();
  mon_->stop();
  messenger_->stop();
  maps_->close();
}

std::shared_ptr<const cluster::MapView> ClusterClient::map() const {
  if (!maps_ || state_.load() != State::kConnected) return nullptr;
  return maps_->current();
}

uint64_t ClusterClient::epoch() const {
  auto m = map();
  return m ? m->epoch() : 0;
}

bool ClusterClient::wait_for_epoch(uint64_t epoch, std::chrono::milliseconds timeout) {
  if (!usable().ok()) return false;
  return maps_->wait_for(epoch, Clock::now() + timeout);
}

Result<OpOutcome> ClusterClient::execute(uint32_t pool, std::string oid, ObjectOperation op) {
  if (in_completion_callback()) return deadlock_error("object operation");
  if (Status st = usable(); !st.ok()) return st;
  SyncWaiter<OpOutcome> w;
  Status st = objecter_->submit(pool, std::move(oid), std::move(op),
                                [&w](const OpOutcome &o) { w.set(o); });
  if (!st.ok()) return st;
  return w.wait();
}

Result<PgListOutcome> ClusterClient::pg_list(uint32_t pool, uint32_t seed,
                                             const std::string &start_after, uint32_t limit) {
  if (in_completion_callback()) return deadlock_error("pg list");
  if (Status st = usable(); !st.ok()) return st;
  SyncWaiter<PgListOutcome> w;
  Status st = objecter_->pg_list(pool, seed, start_after, limit,
                                 [&w](PgListOutcome &&o) { w.set(std::move(o)); });
  if (!st.ok()) return st;
  return w.wait();
}

Result<PgCommandOutcome> ClusterClient::pg_command(uint32_t pool, uint32_t seed, bool deep,
                                                   bool repair) {
  if (in_completion_callback()) return deadlock_error("pg command");
  if (Status st = usable(); !st.ok()) return st;
  SyncWaiter<PgCommandOutcome> w;
  Status st = objecter_->pg_command(pool, seed, deep, repair,
                                    [&w](PgCommandOutcome &&o) { w.set(std::move(o)); });
  if (!st.ok()) return st;
  return w.wait();
}

Result<mon::MonCommandResult> ClusterClient::mon_command(const std::string &prefix,
                                                         const CommandArgs &args,
                                                         std::chrono::milliseconds timeout) {
  if (in_completion_callback()) return deadlock_error("monitor command");
  if (Status st = usable(); !st.ok()) return st;
  auto deadline = Clock::now() + timeout;
  auto r = mon_->command(prefix, args, timeout);
  if (!r.ok()) return r.status();
  if (r->rc == 0 && r->epoch > maps_->epoch() && !maps_->wait_for(r->epoch, deadline))
    log_->warn("client", "'" + prefix + "' made map epoch " + std::to_string(r->epoch) +
                             " but it has not arrived yet");
  return r;
}

Result<cluster::PoolInfo> ClusterClient::pool_by_name(const std::string &name) const {
  if (Status st = usable(); !st.ok()) return st;
  auto view = maps_->current();
  const cluster::PoolInfo *p = view ? view->map().pool_by_name(name) : nullptr;
  if (!p) return Status::Error(ENOENT, "no pool named '" + name + "'");
  return *p;
}

Result<cluster::PoolInfo> ClusterClient::pool_by_id(uint32_t id) const {
  if (Status st = usable(); !st.ok()) return st;
  auto view = maps_->current();
  const cluster::PoolInfo *p = view ? view->map().pool(id) : nullptr;
  if (!p) return Status::Error(ENOENT, "no pool with id " + std::to_string(id));
  return *p;
}

Status ClusterClient::refresh_map(std::chrono::milliseconds timeout) {
  if (in_completion_callback()) return deadlock_error("map refresh");
  if (Status st = usable(); !st.ok()) return st;
  // Any read-only command answers with the monitor's current epoch.
  auto deadline = Clock::now() + timeout;
  auto r = mon_->command("pool ls", {}, timeout);
  if (!r.ok()) return r.status();
  if (r->epoch > maps_->epoch() && !maps_->wait_for(r->epoch, deadline))
    return Status::Error(ETIMEDOUT, "map epoch " + std::to_string(r->epoch) + " did not arrive");
  return Status::OK();
}

Result<cluster::PoolInfo> ClusterClient::find_pool(const std::string &name) {
  auto p = pool_by_name(name);
  if (p.ok() || p.status().code() != -ENOENT) return p;
  if (!refresh_map().ok()) return p;
  return pool_by_name(name);
}

Result<cluster::PoolInfo> ClusterClient::find_pool(uint32_t id) {
  auto p = pool_by_id(id);
  if (p.ok() || p.status().code() != -ENOENT) return p;
  if (!refresh_map().ok()) return p;
  return pool_by_id(id);
}

Result<std::shared_ptr<ServiceSession>> ClusterClient::open_session(const std::string &service,
                                                                    const std::string &target,
                                                                    SessionCallback cb,
                                                                    std::shared_ptr<void> owner) {
  if (Status st = usable(); !st.ok()) return st;
  if (service != "mds")
    return Status::Error(EINVAL, "unknown service '" + service + "' (known: mds)");
  auto view = maps_->current();
  if (!view || !view->map().fs_by_name(target))
    return Status::Error(ENOENT, "no filesystem named '" + target + "' in map epoch " +
                                     std::to_string(view ? view->epoch() : 0));
  ServiceSession::Options o;
  o.service = service;
  o.target = target;
  o.connect_timeout = settings_.connect_timeout;
  o.max_payload = msg::MessengerOptions{}.max_payload;  // what connect() gives the messenger
  auto s = std::make_shared<ServiceSession>(std::move(o), std::move(owner), *messenger_,
                                            *sessions_, *log_, std::move(cb));
  // Registered before the map is read: a map arriving in between is not
  // missed (the session ignores epochs older than the newest it saw).
  sessions_->add(s);
  s->start(maps_->current()->map());
  return s;
}

std::vector<cluster::PoolInfo> ClusterClient::pools() const {
  std::vector<cluster::PoolInfo> out;
  if (!usable().ok()) return out;
  auto view = maps_->current();
  if (view)
    for (const auto &[id, p] : view->map().pools) out.push_back(p);
  return out;
}

}  // namespace strata::client

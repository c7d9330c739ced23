#include "fake_cluster.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <thread>

#include "host/plugin_loader.h"
#include "msg/keyring.h"

namespace clienttest {

using namespace strata;

std::string plugin_dir() { return STRATA_TEST_PLUGIN_DIR; }

bool wait_until(const std::function<bool()> &cond, int ms) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return cond();
}

FakeCluster::FakeCluster(int n_osds) {
  char tmpl[] = "/tmp/strata-client-fake-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  dir_ = tmpl;

  std::map<std::string, std::string> keys;
  keys["mon"] = msg::Keyring::generate_secret();
  keys["client.admin"] = msg::Keyring::generate_secret();
  keys["client.other"] = msg::Keyring::generate_secret();
  for (int i = 0; i < n_osds; ++i) keys["osd." + std::to_string(i)] = msg::Keyring::generate_secret();
  msg::Keyring ring;
  for (const auto &[e, k] : keys) ring.set(e, k);
  keyring_path_ = dir_ + "/keyring";
  REQUIRE(ring.write_file(keyring_path_).ok());
  keys_ = keys;

  auto store = mon::open_rocks_map_store(dir_ + "/mon", {.create = true});
  REQUIRE(store.ok());
  uint64_t now = uint64_t(std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count());
  REQUIRE(mon::Monitor::mkfs(**store, mon::Monitor::new_fsid(), keys, "crush", now).ok());
  auto plugin = host::load_plugin(plugin_dir() + "/libstrata_placement_crush.so",
                                  STRATA_KIND_PLACEMENT);
  REQUIRE(plugin.ok());
  mon::MonitorOptions opts;
  opts.host = "127.0.0.1";
  opts.port = 0;
  opts.heartbeat_grace_ms = 3600 * 1000;  // fake OSDs send no beacons
  opts.pool_defaults = {1, 1, 8};
  auto m = mon::Monitor::open(opts, std::move(*store), *plugin, log_, env_);
  REQUIRE(m.ok());
  mon_ = std::move(*m);
  auto addr = mon_->start();
  REQUIRE(addr.ok());
  mon_addr_ = *addr;

  for (int i = 0; i < n_osds; ++i) {
    osds_.push_back(std::make_unique<FakeOsd>(i, "host" + std::to_string(i), mon_addr_, keys, log_));
    Status st = osds_.back()->start();
    INFO(st.ToString());
    REQUIRE(st.ok());
  }
  REQUIRE(wait_until([&] {
    auto v = mon_->current();
    int up = 0;
    for (const auto &[id, o] : v->map().osds) up += o.up;
    return up == n_osds;
  }));
}

FakeCluster::~FakeCluster() {
  for (auto &o : osds_) o->stop();
  if (mon_) mon_->stop();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void FakeCluster::restart_osd(int i) {
  auto &slot = osds_.at(size_t(i));
  std::string old_addr = slot->addr();
  slot->stop();
  slot = std::make_unique<FakeOsd>(i, "host" + std::to_string(i), mon_addr_, keys_, log_);
  Status st = slot->start();
  INFO(st.ToString());
  REQUIRE(st.ok());
  REQUIRE(wait_until([&] {
    const cluster::OsdInfo *o = mon_->current()->map().osd(i);
    return o && o->up && o->addr == slot->addr() && o->addr != old_addr;
  }));
}

uint64_t FakeCluster::epoch() const { return mon_->current()->epoch(); }

std::vector<std::string> FakeCluster::overrides() const {
  return {"mon_addr=" + mon_addr_, "keyring=" + keyring_path_, "plugin_path=" + plugin_dir()};
}

strata_cluster_t FakeCluster::connect(std::vector<std::string> extra, const std::string &entity) {
  std::vector<std::string> all = overrides();
  all.insert(all.end(), extra.begin(), extra.end());
  std::vector<const char *> ptrs;
  for (const auto &s : all) ptrs.push_back(s.c_str());
  strata_cluster_args a{};
  a.struct_size = sizeof a;
  a.flags = STRATA_CLUSTER_NO_DEFAULT_CONF;
  a.entity = entity.c_str();
  a.overrides = ptrs.data();
  a.n_overrides = ptrs.size();
  strata_cluster_t c = nullptr;
  int rc = strata_cluster_create(&a, &c);
  INFO(strata_last_error());
  REQUIRE(rc == 0);
  rc = strata_cluster_connect(c, 10000);
  INFO(strata_last_error());
  REQUIRE(rc == 0);
  return c;
}

}  // namespace clienttest

// An in-process cluster for client tests: the real monitor (RocksDB map
// store in a temporary directory) and FakeOsds, with a keyring file a
// client can use. Deterministic fault injection without daemons.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/log.h"
#include "fake_osd.h"
#include "mon/monitor.h"
#include "strata/client.h"

namespace clienttest {

class FakeCluster {
 public:
  // n_osds FakeOsds on distinct hosts, all booted (up) when this returns.
  explicit FakeCluster(int n_osds);
  ~FakeCluster();

  const std::string &mon_addr() const { return mon_addr_; }
  const std::string &keyring_path() const { return keyring_path_; }
  FakeOsd &osd(int i) { return *osds_.at(size_t(i)); }
  // Stops osd i and starts a new process-alike with the same id on a new
  // port (it boots again: a new address and up_from in the map).
  void restart_osd(int i);
  size_t n_osds() const { return osds_.size(); }
  uint64_t epoch() const;

  // A connected client.admin (or `entity`, which must be in the keyring);
  // REQUIREs success. The caller shuts it down.
  strata_cluster_t connect(std::vector<std::string> overrides = {},
                           const std::string &entity = "client.admin");
  // The overrides connect() uses, for tests that build their own handle.
  std::vector<std::string> overrides() const;

 private:
  std::string dir_;
  std::string mon_addr_;
  std::string keyring_path_;
  strata::Logger log_{STRATA_LOG_ERROR};
  strata::Env env_;
  std::map<std::string, std::string> keys_;
  std::unique_ptr<strata::mon::Monitor> mon_;
  std::vector<std::unique_ptr<FakeOsd>> osds_;
};

// The plugin directory of this build (placement plugins).
std::string plugin_dir();

// Runs cond every few ms until it holds or ms pass; returns its last value.
bool wait_until(const std::function<bool()> &cond, int ms = 10000);

}  // namespace clienttest

// What main sets up before Catch2 runs and the accessors of kit.h read.
// Owned by main (one KitState on its stack); the suites never see this file.
#pragma once

#include <atomic>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "host/plugin_loader.h"
#include "strata/plugin.h"

namespace strata::conformance {

// Collects what plugins log through strata_host_services. Thread-safe.
class HostLog {
 public:
  void add(int level, const char *msg);
  std::vector<std::string> lines(size_t from) const;

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;  // GUARDED_BY(mu_)
};

struct KitState {
  std::string kind;  // "backend" or "journal"
  host::Plugin plugin;
  std::string scratch_dir;
  bool remove_scratch_at_exit = false;
  std::deque<std::string> option_strings;  // backing store of `options`
  std::vector<strata_kv> options;
  HostLog log;
  strata_host_services services{};
  std::atomic<uint64_t> next_dir_id{0};
};

// main calls install() once before running tests and keeps the state alive
// until they are done; the kit's accessors read it through state().
void install(KitState *state);
KitState &state();

}  // namespace strata::conformance

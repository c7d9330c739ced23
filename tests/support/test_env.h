// The environment a store test runs in: which backend x journal pair (from
// --pair on the command line, set by ctest), where to make stores (--root:
// a loop-mounted XFS/btrfs or a build directory), the plugin registry of the
// build, and scratch stores that clean up after themselves.
//
// Threading: pair(), root(), registry() are set up by main before any test
// and read-only afterwards.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

#include "common/log.h"
#include "common/status.h"
#include "host/plugin_loader.h"
#include "store/store.h"

namespace strata::testing {

// "kv-rocksdb+file", "xfs+tmpfs", "kv-leveldb+none", ...
struct Pair {
  std::string name;
  std::string backend;    // kv, xfs, btrfs, ...
  std::string kv_engine;  // rocksdb|leveldb for kv, else ""
  std::string journal;    // file, tmpfs or none

  bool has_journal() const { return journal != "none"; }
  static Result<Pair> parse(const std::string &name);
};

// Set by main (test_main.cpp).
void set_test_pair(const std::string &pair);
void set_test_root(const std::string &root);
// The pair under test; fails the test (REQUIRE) when --pair was not given.
const Pair &pair();
const std::string &test_root();

// The build's plugins (STRATA_TEST_PLUGIN_DIR), scanned once.
const host::PluginRegistry &registry();

// A logger that keeps test output short (errors only; tests that check a
// warning capture the log with CapturedLog).
Logger &test_logger();

// For child processes: errors only (the parent reports what matters).
Logger &child_logger();

// A logger whose output can be read back (for warnings the store logs).
class CapturedLog {
 public:
  CapturedLog();
  ~CapturedLog();
  CapturedLog(const CapturedLog &) = delete;
  CapturedLog &operator=(const CapturedLog &) = delete;
  Logger &logger() { return *logger_; }
  std::string text() const;

 private:
  std::FILE *file_ = nullptr;
  std::unique_ptr<Logger> logger_;
  mutable std::mutex mu_;
};

// Store settings for tests: frequent checkpoints, defaults otherwise.
store::StoreSettings test_settings();

// A fresh store directory under test_root(), made with mkfs for the pair.
// The destructor removes the directory and the journal (wherever the store
// identity file says it is by then, e.g. after a journal swap).
class ScratchStore {
 public:
  struct Options {
    uint64_t journal_size = 16ull << 20;
    std::string journal;  // "" = the pair's journal
  };
  // REQUIRE()s that mkfs succeeded.
  explicit ScratchStore(const std::string &label);
  ScratchStore(const std::string &label, const Options &opts);
  ~ScratchStore();
  ScratchStore(const ScratchStore &) = delete;
  ScratchStore &operator=(const ScratchStore &) = delete;

  const std::string &dir() const { return dir_; }
  // Opens the store; its log goes to `log`, or by default to this
  // ScratchStore's captured log (log_text()).
  Result<std::unique_ptr<store::Store>> open(const store::StoreSettings &s = test_settings(),
                                             Logger *log = nullptr) const;
  // open() that REQUIRE()s success.
  std::unique_ptr<store::Store> must_open(const store::StoreSettings &s = test_settings(),
                                          Logger *log = nullptr) const;
  // The identity file as it is now.
  store::StoreMeta meta() const;
  // Everything stores opened with the default logger logged so far.
  std::string log_text() const;

 private:
  std::string dir_;
  mutable CapturedLog log_;
};

// Makes a new store at `dir` for pair p; used by ScratchStore and crash tests.
Status make_store(const Pair &p, const std::string &dir, uint64_t journal_size,
                  const std::string &journal_override = "");
// Removes a store directory and its journal. Best effort; logs what it could
// not remove.
void destroy_store(const std::string &dir);

// A directory name under test_root() unique to this process and call.
std::string unique_dir(const std::string &label);

}  // namespace strata::testing

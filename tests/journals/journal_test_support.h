// Driving a journal plugin through its C vtable in tests: loading the .so,
// open arguments with the plugin's defaults, a captured host log, scratch
// directories, and a Journal wrapper whose calls throw on failure (the _rc
// variants return the errno for tests of failures).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "strata/journal.h"

namespace strata::journal_test {

// The plugin libstrata_journal_<name>.so from the build's plugin directory,
// loaded once per process and never unloaded.
const strata_journal_ops &plugin_ops(const std::string &name);
const strata_plugin_descriptor &plugin_descriptor(const std::string &name);

// What a plugin logged, as "LEVEL: message" lines. Thread-safe.
class HostLog {
 public:
  HostLog();
  const strata_host_services *services() const { return &services_; }
  std::vector<std::string> lines() const;
  bool contains(const std::string &needle) const;

 private:
  static void add(void *ctx, int level, const char *msg);
  mutable std::mutex mu_;
  std::vector<std::string> lines_;  // GUARDED_BY(mu_)
  strata_host_services services_{};
};

// A fresh directory under `parent`, removed with its content at the end.
class TempDir {
 public:
  explicit TempDir(const std::string &parent = "/tmp");
  ~TempDir();
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  const std::string &path() const { return path_; }

 private:
  std::string path_;
};

// strata_open_args for `path` with every option's default from the plugin's
// specs, `overrides` replacing them.
class OpenArgs {
 public:
  OpenArgs(const std::string &plugin, std::string path,
           std::vector<std::pair<std::string, std::string>> overrides = {},
           const HostLog *log = nullptr);
  OpenArgs(const OpenArgs &) = delete;
  OpenArgs &operator=(const OpenArgs &) = delete;
  const strata_open_args *get() const { return &args_; }
  const std::string &path() const { return path_; }

 private:
  std::string path_;
  std::deque<std::string> strings_;
  std::vector<strata_kv> kvs_;
  strata_open_args args_{};
};

class CallFailed : public std::runtime_error {
 public:
  CallFailed(const std::string &what, int rc) : std::runtime_error(what), rc_(rc) {}
  int rc() const { return rc_; }

 private:
  int rc_;
};

// Counts callbacks and remembers their order; wait_for blocks until `n`
// callbacks ran.
class Acks {
 public:
  static void callback(void *arg, int rc);
  // The arg to pass with seq: a pointer into this object.
  void *arg_for(uint64_t seq);
  void wait_for(size_t n);
  std::vector<std::pair<uint64_t, int>> seen() const;

 private:
  struct Slot {
    Acks *owner;
    uint64_t seq;
  };
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Slot> slots_;                       // stable addresses
  std::vector<std::pair<uint64_t, int>> seen_;   // GUARDED_BY(mu_)
};

struct Replayed {
  std::vector<std::pair<uint64_t, std::string>> records;
  strata_journal_replay_result result{};
};

// An open journal of one plugin; closes on destruction.
class Journal {
 public:
  Journal(const std::string &plugin, const OpenArgs &args);  // open
  ~Journal();
  Journal(const Journal &) = delete;
  Journal &operator=(const Journal &) = delete;

  static void create(const std::string &plugin, const OpenArgs &args, uint64_t capacity);
  static int create_rc(const std::string &plugin, const OpenArgs &args, uint64_t capacity,
                       std::string *msg = nullptr);
  static void destroy(const std::string &plugin, const OpenArgs &args);

  Replayed replay(uint64_t after_seq = 0);
  int replay_rc(uint64_t after_seq, std::string *msg);
  void append(uint64_t seq, const std::string &data, strata_journal_done_cb cb = nullptr,
              void *arg = nullptr);
  int append_rc(uint64_t seq, const std::string &data, std::string *msg = nullptr);
  void trim(uint64_t upto);
  void flush();
  strata_journal_stat stat();
  uint64_t caps();
  void close();

 private:
  const strata_journal_ops &ops_;
  strata_journal *j_ = nullptr;
};

// Deterministic payload for a seq: `len` bytes that differ for every seq.
std::string payload_for(uint64_t seq, size_t len);

// The whole content of the file at `path` ("" when it cannot be read).
std::string read_file(const std::string &path);

}  // namespace strata::journal_test

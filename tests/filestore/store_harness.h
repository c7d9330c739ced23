// Test harness for the filestore backends: loads a built plugin file through
// the host loader, makes a fresh store in a directory of its own on the
// loop-mounted file system of that backend, and wraps the C vtable in calls
// that fail the test on unexpected errors.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/plugin_loader.h"
#include "strata/objectstore.h"
#include "txn.h"

namespace strata::test {

// The loop-mounted directory (ctest fixture) a backend's stores live on.
std::string mount_point(const std::string &backend);

// Collects what the plugin logs through the host services. Thread-safe.
class LogSink {
 public:
  LogSink();
  const strata_host_services *services() const { return &services_; }
  std::vector<std::string> lines() const;
  bool contains(std::string_view text) const;
  void clear();

 private:
  static void on_log(void *ctx, int level, const char *msg);
  strata_host_services services_{};
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

// A loaded backend plugin for calling mkfs/open directly with any options.
class PluginHandle {
 public:
  explicit PluginHandle(const std::string &backend);
  const strata_objectstore_ops &ops() const { return *ops_; }
  // The plugin's result; *err gets its message.
  int mkfs(const std::string &dir, const std::vector<std::pair<std::string, std::string>> &options,
           std::string *err);
  // On success *out is the open store (close it with ops().close).
  int open(const std::string &dir, const std::vector<std::pair<std::string, std::string>> &options,
           strata_objectstore **out, std::string *err);

 private:
  int call(const std::string &dir, const std::vector<std::pair<std::string, std::string>> &options,
           strata_objectstore **out, std::string *err);
  host::Plugin plugin_;
  const strata_objectstore_ops *ops_ = nullptr;
};

// A directory of its own under `parent`, named after the running test;
// deleted (with any btrfs subvolumes in it) by the destructor.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string &parent);
  ~ScratchDir();
  const std::string &path() const { return path_; }

 private:
  std::string path_;
};

// One store of one backend in a fresh directory, opened after mkfs.
// The destructor closes it; its ScratchDir then goes away.
class TestStore {
 public:
  using Options = std::vector<std::pair<std::string, std::string>>;
  explicit TestStore(const std::string &backend, Options options = {});
  ~TestStore();
  TestStore(const TestStore &) = delete;

  const std::string &backend() const { return backend_; }
  const std::string &dir() const { return dir_; }
  // Where data files and the metadata database live (dir or dir/current).
  std::string live_dir() const;
  LogSink &log() { return log_; }
  const strata_objectstore_ops &ops() const { return *ops_; }
  strata_objectstore *handle() const { return os_; }

  // Raw lifecycle calls returning the plugin's result.
  int try_mkfs(std::string *err = nullptr);
  int try_open(std::string *err = nullptr);
  void open();
  void close();
  void reopen() {
    close();
    open();
  }

  void apply(const Txn &txn);
  int try_apply(const Txn &txn, std::string *err = nullptr);
  void checkpoint(uint64_t seq);
  uint64_t committed_seq();
  uint64_t capabilities();

  // nullopt on ENOENT; len 0 means "to the end".
  std::optional<std::string> read(std::string_view c, std::string_view o, uint64_t off = 0,
                                  uint64_t len = 0);
  int64_t read_raw(std::string_view c, std::string_view o, uint64_t off, uint64_t len, void *buf);
  // -errno or 0.
  int stat(std::string_view c, std::string_view o, strata_object_stat *st);
  uint64_t size(std::string_view c, std::string_view o);
  bool exists(std::string_view c, std::string_view o);
  std::optional<std::string> getxattr(std::string_view c, std::string_view o,
                                      std::string_view name);
  std::vector<std::pair<std::string, std::string>> xattrs(std::string_view c, std::string_view o);
  std::optional<std::string> omap_get(std::string_view c, std::string_view o, std::string_view key);
  std::vector<std::pair<std::string, std::string>> omap(std::string_view c, std::string_view o,
                                                        std::string_view start_after = {},
                                                        std::string_view end = {},
                                                        uint64_t limit = 0);
  std::string omap_header(std::string_view c, std::string_view o);
  std::vector<std::string> list(std::string_view c, std::string_view start_after = {},
                                uint64_t limit = 0);
  // -errno of list_objects on a collection (0 if it exists).
  int list_rc(std::string_view c);
  std::vector<std::string> collections();
  strata_store_usage usage();
  int64_t fsck();
  uint64_t stage(std::string_view data);
  // ABI 1.2 stage_release: the plugin's rc.
  int release_stage(uint64_t id);
  void release_unused();

  // Everything observable (collections, objects, sizes, data, xattrs, omap,
  // headers) as one canonical text, to compare two states.
  std::string dump();

 private:
  std::string backend_;
  ScratchDir scratch_;
  std::string dir_;
  Options options_;
  std::vector<strata_kv> kvs_;
  host::Plugin plugin_;
  const strata_objectstore_ops *ops_ = nullptr;
  LogSink log_;
  strata_open_args args_{};
  strata_objectstore *os_ = nullptr;
};

// Empty if the two dumps are equal, else where they first differ (the line
// of each around that point), for a readable failure message.
std::string first_difference(const std::string &actual, const std::string &expected);
#define CHECK_SAME_STATE(actual, expected)                                      \
  do {                                                                          \
    std::string diff_ = ::strata::test::first_difference((actual), (expected)); \
    INFO(diff_);                                                                \
    CHECK(diff_.empty());                                                       \
  } while (0)

// Fraction of the file's mapped bytes in extents it shares with another
// file (FIEMAP_EXTENT_SHARED), 0 for a file without extents.
double shared_fraction(const std::string &path);
// Regular files under `dir`, recursively.
std::vector<std::string> files_under(const std::string &dir);

// A byte pattern that differs per seed, for data that must not match by
// accident.
std::string pattern(size_t len, unsigned seed);

}  // namespace strata::test

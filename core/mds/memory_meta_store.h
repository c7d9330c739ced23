// A MetaStore kept in memory (tests of the server, no cluster needed).
// Changes are visible at once; durability callbacks run on the store's own
// thread, in order. hold_durability(true) keeps them back (a test sees the
// unsafe reply before the safe one); fence() makes every later submit fail
// with -ECANCELED, as a newer incarnation would.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "mds/meta_store.h"

namespace strata::mds {

class MemoryMetaStore : public MetaStore {
 public:
  MemoryMetaStore();
  ~MemoryMetaStore() override;

  Result<RecoveredState> open(uint64_t incarnation) override;
  void submit(MetaUpdate update, std::function<void(Status)> on_durable) override;
  Status flush() override;
  Result<std::optional<DentryRec>> lookup(Ino dir, std::string_view name) override;
  Result<DirPage> list(Ino dir, std::string_view after, size_t max) override;
  Result<std::optional<InodeRec>> get_inode(Ino ino) override;
  MetaStoreStats stats() const override;
  void close() override;

  void hold_durability(bool hold);
  void fence();
  std::vector<PurgeRec> purges() const;
  std::map<uint64_t, SessionRec> sessions() const;
  // How often the server read a dentry or a listing (what its cache did
  // not answer).
  uint64_t reads() const { return reads_.load(); }

 private:
  void run();

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<Ino, std::map<std::string, DentryRec>> dirs_;
  std::map<Ino, InodeRec> inodes_;
  std::map<uint64_t, SessionRec> sessions_;
  std::vector<PurgeRec> purges_;
  Ino ino_next_ = kFirstUserIno;
  uint64_t incarnation_ = 0;
  bool fenced_ = false;
  bool held_ = false;
  bool stopping_ = false;
  std::atomic<uint64_t> reads_{0};
  uint64_t submitted_ = 0, completed_ = 0;
  std::deque<std::pair<Status, std::function<void(Status)>>> pending_;
  MetaStoreStats stats_;
  std::thread thread_;
};

}  // namespace strata::mds

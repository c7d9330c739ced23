// `mem`: an object store that keeps everything in memory and saves an image
// of its whole content at each checkpoint.
//
// Durability model (declared through capabilities, so the host adapts):
// apply() changes memory only; checkpoint() replaces the image atomically.
// A crash therefore rolls the store back to the last checkpoint exactly
// (STRATA_OS_CAP_ROLLBACK_CHECKPOINT): the host replays its journal from
// committed_seq() and may apply before the journal write is durable.
//
// Threading: readers take a shared lock, apply() an exclusive one, so a
// reader never sees half a transaction. Staged writes have their own lock.
#pragma once

#include <map>
#include <memory>
#include <shared_mutex>
#include <string>

#include "stage_area.h"
#include "store_content.h"
#include "strata/cpp/objectstore.hpp"

namespace mem {

class MemStore : public strata::sdk::ObjectStore {
 public:
  static void mkfs(const strata::sdk::OpenArgs &args);
  static std::unique_ptr<MemStore> open(const strata::sdk::OpenArgs &args);

  uint64_t capabilities() const override;
  void apply(const strata_txn &txn) override;
  void checkpoint(uint64_t seq) override;
  uint64_t committed_seq() override;

  uint64_t read(std::string_view coll, std::string_view oid, uint64_t off, uint64_t len,
                void *buf) override;
  strata_object_stat stat(std::string_view coll, std::string_view oid) override;
  bool getxattr(std::string_view coll, std::string_view oid, std::string_view name,
                std::string &value) override;
  void getxattrs(std::string_view coll, std::string_view oid,
                 const strata::sdk::KvVisitor &v) override;
  std::string omap_get_header(std::string_view coll, std::string_view oid) override;
  bool omap_get(std::string_view coll, std::string_view oid, std::string_view key,
                std::string &value) override;
  void omap_iterate(std::string_view coll, std::string_view oid, std::string_view start_after,
                    std::string_view end, uint64_t limit, const strata::sdk::KvVisitor &v) override;
  void list_objects(std::string_view coll, std::string_view start_after, uint64_t limit,
                    const strata::sdk::NameVisitor &v) override;
  void list_collections(const strata::sdk::NameVisitor &v) override;
  strata_store_usage usage() override;
  int64_t fsck() override;

  uint64_t stage_write(const void *data, size_t len) override;
  void stage_release_unused() override;
  void stage_release(uint64_t id) override;

 private:
  MemStore(const strata::sdk::OpenArgs &args, StoreContent content, uint64_t seq);

  // Checks what apply() can check before changing anything, so that a
  // refused transaction leaves no trace.
  void validate(const strata_txn &txn) const;
  // Stage bytes loaded before the exclusive lock is taken, by stage id.
  using StagedBytes = std::map<uint64_t, std::string>;
  void apply_op(const strata_op &op, uint64_t seq, const StagedBytes &staged);
  // REQUIRES: mu_ held (shared or exclusive). Throw Error(ENOENT).
  const Collection &collection(std::string_view coll) const;
  const Object &object(std::string_view coll, std::string_view oid) const;

  const std::string dir_;
  const uint64_t capacity_;
  strata::sdk::Logger log_;
  mutable std::shared_mutex mu_;
  StoreContent content_;    // GUARDED_BY(mu_)
  uint64_t committed_seq_;  // GUARDED_BY(mu_)
  StageArea stages_;
};

}  // namespace mem

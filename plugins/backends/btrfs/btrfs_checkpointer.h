// The btrfs backend's Checkpointer: checkpoints are snapshots.
//
//   <root>/current     writable subvolume: data files and metadata database
//   <root>/snap.<seq>  snapshot of `current` at checkpoint <seq>
//
// checkpoint(seq) records seq in the metadata database, flushes it, syncs
// the file system and snapshots `current` as snap.<seq>, then deletes the
// previous snapshot. open() rolls back: it deletes `current` and re-creates
// it as a writable snapshot of the newest snap.*, so the store is exactly
// what it was at that checkpoint and the host replays the rest exactly once.
// That is what lets the host apply a transaction before its journal write is
// durable (STRATA_OS_CAP_ROLLBACK_CHECKPOINT).
//
// Not thread-safe: called on the apply thread (and at mkfs/open).
#pragma once

#include <cstdint>
#include <string>

#include "filestore/checkpointer.h"

namespace strata::btrfs {

class BtrfsCheckpointer final : public filestore::Checkpointer {
 public:
  const char *backend_name() const override { return "btrfs"; }
  void check_file_system(const std::string &root) const override;
  std::string create_live_area(const std::string &root) override;
  void finish_mkfs(const std::string &root) override;
  std::string open_live_area(const std::string &root) override;
  void checkpoint(uint64_t seq, filestore::CheckpointSteps &steps) override;
  uint64_t capabilities(bool reflink_works) const override;

 private:
  std::string root_;
  uint64_t last_snapshot_seq_ = 0;
};

}  // namespace strata::btrfs

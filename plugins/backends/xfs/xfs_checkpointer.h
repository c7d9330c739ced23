// The xfs backend's Checkpointer: the store lives directly in the store
// directory; a checkpoint is metadata flush + syncfs + a durable seq record.
// There is no rollback: after a crash the files may hold any mixture of
// applied state, and the host's replay of everything after the committed seq
// brings them to the right state (ops are idempotent, see filestore.h).
#pragma once

#include "filestore/checkpointer.h"

namespace strata::xfs {

class XfsCheckpointer final : public filestore::Checkpointer {
 public:
  // allow_any_fs skips the XFS check (tests and development).
  explicit XfsCheckpointer(bool allow_any_fs) : allow_any_fs_(allow_any_fs) {}

  const char *backend_name() const override { return "xfs"; }
  void check_file_system(const std::string &root) const override;
  std::string create_live_area(const std::string &root) override { return root; }
  void finish_mkfs(const std::string &) override {}
  std::string open_live_area(const std::string &root) override { return root; }
  void checkpoint(uint64_t seq, filestore::CheckpointSteps &steps) override;
  uint64_t capabilities(bool reflink_works) const override;

 private:
  bool allow_any_fs_;
};

}  // namespace strata::xfs

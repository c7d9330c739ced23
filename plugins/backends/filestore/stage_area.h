// Staged writes (ABI 1.1): large writes bypass the journal. The host hands
// the bytes to stage_write, which makes them durable in a file of their own
// here; the journaled transaction then only names the stage id
// (STRATA_OP_WRITE_STAGED) and apply binds that file to the object.
//
// A stage must stay until a checkpoint covering the transaction that consumed
// it has completed, because replay may bind it again. So consumed stages are
// only remembered at apply and deleted after the next checkpoint; stages no
// applied transaction consumed are deleted by release_unused().
//
// Thread-safety: write() runs on the host's submit thread concurrently with
// the apply thread's mark_consumed/checkpoint calls; all methods are safe to
// call concurrently.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "filestore/posix_file.h"

namespace strata::filestore {

class StageArea {
 public:
  // Opens the stage directory; new ids continue after every existing one.
  explicit StageArea(std::string dir);

  static void create_layout(const std::string &dir) { make_dir(dir); }

  const std::string &dir() const { return dir_; }
  std::string path(uint64_t id) const;

  // Writes `len` bytes to a new stage file and makes file and name durable
  // (fdatasync + directory fsync). Returns its id (> 0). With csum_block > 0
  // the block checksums of the bytes are computed first, from the caller's
  // memory, and kept for the transaction that binds the stage.
  uint64_t write(const void *data, size_t len, uint64_t csum_block = 0);
  // The checksums computed when stage `id` was written; empty if this
  // process did not write it (a replay after a restart).
  std::vector<uint32_t> csums(uint64_t id) const;

  // The apply thread bound stage `id` to an object.
  void mark_consumed(uint64_t id);
  // Stages consumed so far (the apply thread takes them at checkpoint start).
  std::vector<uint64_t> consumed() const;
  // After a checkpoint covering their transactions: deletes those stage files.
  void drop_consumed(const std::vector<uint64_t> &ids);
  // Deletes every stage file that no applied transaction consumed.
  void release_unused();
  // Deletes stage `id`, which the host abandoned before any transaction
  // named it. A consumed id is refused (EINVAL): replay may still need it.
  void release(uint64_t id);

 private:
  std::string dir_;
  UniqueFd dir_fd_;
  std::atomic<uint64_t> next_id_;
  mutable std::mutex mu_;
  std::set<uint64_t> consumed_;  // GUARDED_BY(mu_)
  std::map<uint64_t, std::vector<uint32_t>> csums_;  // GUARDED_BY(mu_)
};

}  // namespace strata::filestore

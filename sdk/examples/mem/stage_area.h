// Staged writes (ABI 1.1): bytes made durable before the transaction that
// uses them, one file per stage under <store>/stages/. A stage is kept until
// a checkpoint covers the transaction that consumed it, because after a
// crash the host replays that transaction and binds the stage again.
//
// Thread-safe: the host stages from its submit thread while apply and
// checkpoint run on another.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace mem {

class StageArea {
 public:
  // Creates the directory if needed; ids continue after any stage on disk.
  explicit StageArea(std::string dir);

  // Stores the bytes durably and returns the new stage's id (> 0).
  uint64_t put(std::string_view data);
  // The stage's bytes. Throws Error(ENOENT) for an unknown id and
  // Error(EINVAL) when its length differs from `length`.
  std::string get(uint64_t id, uint64_t length) const;
  // Records that the transaction `seq` bound the stage.
  void consumed(uint64_t id, uint64_t seq);
  // Deletes stages consumed by transactions <= seq (a checkpoint covers them).
  void release_checkpointed(uint64_t seq);
  // Deletes every stage no applied transaction has consumed.
  void release_unused();
  // Deletes one stage the host abandoned (ABI 1.2); a consumed one is refused.
  void release(uint64_t id);

 private:
  std::string path(uint64_t id) const;
  void remove(uint64_t id);  // REQUIRES: mu_ held

  const std::string dir_;
  mutable std::mutex mu_;
  uint64_t next_id_ = 1;                   // GUARDED_BY(mu_)
  std::map<uint64_t, uint64_t> consumed_;  // id -> seq; GUARDED_BY(mu_)
};

}  // namespace mem

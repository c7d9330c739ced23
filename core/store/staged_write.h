// A large write's bytes made durable in the backend's stage area ahead of the
// transaction that names them (Store::stage), so that staging — an O_DIRECT
// write and fdatasync of megabytes — runs on whatever thread received the
// data, in parallel, instead of on the thread that orders transactions.
//
// Lifetime: bind() turns the transaction's WRITE_FULL into WRITE_STAGED;
// once that transaction is queued, mark_queued() hands the stage to the
// store. Dropped before that (a failed guard, a resent op answered from the
// PG log, a message of a past interval), the stage is released at once
// (ABI 1.2 stage_release), or by the backend's sweep at the next open for a
// plugin without it.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>

#include "store/transaction.h"

namespace strata::store {

class BackendInstance;

// Shared by a store and its outstanding stages; the store detaches it on
// close, after which releases are left to the next open's sweep.
struct StageReleaser {
  std::mutex mu;
  const BackendInstance *backend = nullptr;  // GUARDED_BY(mu)
  void release(uint64_t id);
};

class StagedWrite {
 public:
  StagedWrite(std::shared_ptr<StageReleaser> releaser, uint64_t id, uint64_t length)
      : releaser_(std::move(releaser)), id_(id), length_(length) {}
  ~StagedWrite();
  StagedWrite(const StagedWrite &) = delete;
  StagedWrite &operator=(const StagedWrite &) = delete;

  uint64_t id() const { return id_; }
  uint64_t length() const { return length_; }

  // Turns the first WRITE_FULL of t carrying exactly length() bytes into a
  // WRITE_STAGED of this stage. False if t has none (the stage stays
  // unbound and is released when dropped).
  bool bind(Transaction &t);
  // The transaction naming this stage is in the store's queue.
  void mark_queued() { queued_ = true; }

 private:
  std::shared_ptr<StageReleaser> releaser_;
  const uint64_t id_, length_;
  bool bound_ = false, queued_ = false;
};

using StagedWriteRef = std::shared_ptr<StagedWrite>;

}  // namespace strata::store

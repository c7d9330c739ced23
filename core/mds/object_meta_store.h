// ObjectMetaStore: the MetaStore on a filesystem's metadata pool
// (docs/FILESYSTEM.md, "Objects of a filesystem", "The metadata journal").
//
// Three threads of its own:
// - the writer takes everything submitted, appends it to the current
//   journal segment with one compound write (cmpxattr incarnation == mine,
//   append) and calls the callbacks in order (group commit);
// - the applier merges durable entries, writes every touched directory
//   fragment / inode object with one compound op each (in parallel), splits
//   directories that grew past split_entries, then advances the journal head
//   and removes applied segments;
// - the purger deletes data objects of purged files once their entry is
//   applied (the pending ones are kept as purge.<ino> keys of mds.fsmeta).
// Until applied, submitted changes live in an overlay that reads consult
// first.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "client/cluster_client.h"
#include "mds/meta_store.h"
#include "mds/store_codec.h"

namespace strata::mds {

struct ObjectMetaStoreOptions {
  uint64_t journal_segment_bytes = 4u << 20;  // mds_journal_segment_bytes
  uint64_t dir_split_entries = 20000;         // mds_dir_split_entries
  // Group commit with a gather: a change nobody waits for (asynchronous
  // clients only hear "safe" later) waits up to journal_delay for others
  // to share its journal write (mds_journal_delay_ms). Every journal write
  // is an op on each of the metadata pool's replicas: an untar made one
  // per ~4 ms of work, 14 changes each. hurry() and flush() end the wait.
  std::chrono::milliseconds journal_delay{0};
  // Journaled changes reach the directory objects in rounds: one starts
  // once the journal has been quiet for apply_quiet, once the oldest
  // waiting change has waited apply_max_delay (mds_apply_max_delay_ms), or
  // once apply_round_bytes wait. A round writes each object it touches
  // once (the 64 back-pointer shards, every directory changed), so under a
  // steady stream of creates longer rounds mean far fewer object writes
  // (an untar: 18,109 apply writes at 20 ms rounds for 12,516 files).
  std::chrono::milliseconds apply_interval{20};  // how often the applier looks
  std::chrono::milliseconds apply_quiet{200};
  std::chrono::milliseconds apply_max_delay{2000};
  uint64_t max_batch_bytes = 1u << 20;  // journal bytes per append
  // Journal bytes that start a round (and the most one applies). Inline
  // file data is journaled too: an untar wrote ~4 MiB a second, so at
  // 4 MiB rounds came every second whatever apply_max_delay said.
  uint64_t apply_round_bytes = 16u << 20;
  // Data objects of deleted files removed per second while clients are
  // busy (mds_purge_busy_rate; 0: no limit): an rm -rf should not pay for
  // its own purge. When the journal is quiet the purger runs at full speed.
  uint64_t purge_busy_rate = 200;
  // Purges whose PurgeRec names no pool (-1) go here.
  int64_t default_data_pool = -1;
};

class ObjectMetaStore final : public MetaStore {
 public:
  ObjectMetaStore(std::shared_ptr<client::ClusterClient> cluster, uint32_t metadata_pool,
                  ObjectMetaStoreOptions opts = {});
  ~ObjectMetaStore() override;

  Result<RecoveredState> open(uint64_t incarnation) override;
  void submit(MetaUpdate update, std::function<void(Status)> on_durable) override;
  void hurry() override;
  Status flush() override;
  Result<std::optional<DentryRec>> lookup(Ino dir, std::string_view name) override;
  Result<DirPage> list(Ino dir, std::string_view after, size_t max) override;
  Result<std::optional<InodeRec>> get_inode(Ino ino) override;
  Result<std::optional<BackPointer>> back_pointer(Ino ino) override;
  MetaStoreStats stats() const override;
  void close() override;

  // Waits until every durable entry is applied and its purges have run
  // (tests; the server never needs it).
  Status wait_applied();

 private:
  struct Queued {
    uint64_t seq = 0;
    std::string framed;  // [u32 len][u32 crc32c][u64 seq][payload]
    std::shared_ptr<const MetaUpdate> update;
    std::function<void(Status)> cb;
    std::chrono::steady_clock::time_point at;  // submitted
  };
  // A durable entry waiting for the applier: where it ends in the journal.
  struct Durable {
    uint64_t seq = 0;
    uint64_t segment = 0;
    uint64_t end_offset = 0;
    uint64_t bytes = 0;
    std::shared_ptr<const MetaUpdate> update;
  };
  struct OverlayDentry {
    uint64_t seq;
    std::optional<DentryRec> dentry;
  };
  struct OverlayInode {
    uint64_t seq;
    std::optional<InodeRec> inode;
  };
  struct StoredPage {
    std::vector<DentryRec> entries;
    bool end = true;
    // Not at the end: every name up to it is in `entries`.
    std::optional<std::string> bound;
  };

  using Op = client::ObjectOperation;
  Result<client::OpOutcome> exec(const std::string &oid, Op op, uint32_t pool);
  Result<client::OpOutcome> exec(const std::string &oid, Op op) {
    return exec(oid, std::move(op), pool_);
  }
  // Runs every op at once; the first failure (with its object), -ENOENT
  // tolerated for the oids in `enoent_ok` positions.
  Status exec_parallel(std::vector<std::pair<std::string, Op>> ops, uint32_t pool,
                       bool enoent_ok = false);

  Status fence(uint64_t incarnation);
  Status init_fs_if_new();
  Result<JournalHead> read_head();
  Status write_head_locked();  // head_mu_ held
  Status replay(RecoveredState &rs);
  Status read_recovered(RecoveredState &rs);

  void writer_loop();
  Status append_batch(std::vector<Queued> &batch, std::vector<Durable> &out);
  void applier_loop();
  Status apply(const std::vector<Durable> &batch);
  Status apply_updates(const std::vector<std::shared_ptr<const MetaUpdate>> &updates);
  Status advance_head(const Durable &last);
  void purger_loop();
  // Removes the data objects of `batch`'s inodes, then their purge keys.
  Status purge(const std::vector<PurgeRec> &batch);
  // Before removing `objects` data objects: while clients are busy (the
  // journal took an append within apply_quiet), waits so that removals
  // keep to purge_busy_rate (doubled for every 10 s the batch has waited).
  void pace_purge(size_t objects);
  static constexpr size_t kPurgeBatch = 256;

  Result<uint8_t> frag_bits(Ino dir);
  Result<StoredPage> stored_list(Ino dir, const std::string &after, size_t max);
  Result<size_t> count_entries(Ino dir, uint8_t bits);
  Status maybe_split(Ino dir, int64_t delta);
  Status split(Ino dir, uint8_t bits, size_t count);

  std::shared_ptr<client::ClusterClient> cluster_;
  const uint32_t pool_;
  const ObjectMetaStoreOptions opts_;
  uint64_t incarnation_ = 0;
  std::string incarnation_str_;

  // The journal head/tail as this instance last wrote them.
  std::mutex head_mu_;
  JournalHead head_;
  uint64_t tail_bytes_ = 0;    // writer only: bytes in the tail segment
  bool tail_created_ = false;  // writer only: this instance made the tail

  mutable std::mutex mu_;
  std::condition_variable writer_cv_, applier_cv_, purger_cv_, done_cv_;
  bool opened_ = false, stopping_ = false, closed_ = false;
  Status failed_;  // fenced (-ECANCELED) or a journal write error: sticky
  uint64_t next_seq_ = 1;
  uint64_t durable_seq_ = 0;    // every entry up to it is durable (or failed)
  uint64_t submitted_seq_ = 0;  // the last seq handed out
  uint64_t hurry_seq_ = 0;      // entries up to it are journaled without a gather
  uint64_t queued_bytes_ = 0;   // framed bytes in queue_
  uint64_t applied_seq_ = 0;
  std::deque<Queued> queue_;
  std::deque<Durable> to_apply_;
  struct QueuedPurge {
    PurgeRec rec;
    std::chrono::steady_clock::time_point at;  // when it was queued (pace_purge)
  };
  std::deque<QueuedPurge> to_purge_;
  std::chrono::steady_clock::time_point purge_oldest_{};  // of the batch being run
  bool purging_ = false;
  std::map<std::pair<Ino, std::string>, OverlayDentry> overlay_dentries_;
  std::map<Ino, OverlayInode> overlay_inodes_;
  std::map<Ino, uint8_t> bits_cache_;
  MetaStoreStats stats_;
  uint64_t applied_bytes_ = 0, appended_bytes_ = 0;
  uint64_t appends_ = 0;  // journal appends so far (the applier's "quiet" test)
  std::chrono::steady_clock::time_point last_append_{}, last_purge_{};
  int apply_waiters_ = 0;  // in wait_applied(): the applier gathers no more

  // Readers of directory objects hold it shared; a split holds it alone.
  std::shared_mutex split_mu_;
  // Applier only: entries per directory, as far as it knows.
  std::map<Ino, int64_t> dir_counts_;

  std::thread writer_, applier_, purger_;
};

}  // namespace strata::mds

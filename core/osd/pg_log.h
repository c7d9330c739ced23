// The PG log: the ordered record of the writes a PG accepted, newest last,
// kept in memory and in the omap of the PG's pg-meta object (one key per
// entry, so that appending costs one omap_set in the write's own store
// transaction and trimming one omap_rm_range).
//
// It orders writes (versions grow by one per write), lets peering decide
// which copy of a PG is authoritative and what each replica lacks, and
// remembers who asked for each write (reqid index) so that a resent write
// is answered from the log instead of being applied twice.
//
// Threading: not thread-safe; owned by the PG's shard thread.
#pragma once

#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "osd/types.h"
#include "store/store.h"

namespace strata::osd {

class PgLog {
 public:
  explicit PgLog(std::string coll) : coll_(std::move(coll)) {}

  // Loads every entry from the pg-meta omap of the collection. `tail` comes
  // from the PG info (the version of the newest trimmed entry).
  Status load(store::Store &store, const EVersion &tail);

  const std::deque<LogEntry> &entries() const { return entries_; }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  // The newest entry's version; the tail when the log is empty.
  EVersion head() const { return entries_.empty() ? tail_ : entries_.back().version; }
  EVersion tail() const { return tail_; }

  // Appends `e` in memory and its omap write to `t`.
  // REQUIRES: e.version > head().
  void append(const LogEntry &e, store::Transaction &t);

  // The entry a write with this reqid produced, if still in the log.
  const LogEntry *find(const ReqId &r) const;
  // The entry with this exact version, if in the log.
  const LogEntry *find(const EVersion &v) const;

  // Drops the oldest entries so that at most `keep` remain, adding their
  // removal to `t`. Returns whether anything was trimmed (the tail moved).
  bool trim(size_t keep, store::Transaction &t);

  // Drops the entries newer than `to` (divergent ones) and returns them,
  // oldest first; their removal goes into `t`.
  std::vector<LogEntry> rewind(const EVersion &to, store::Transaction &t);

  // Replaces the whole log (a backfill target adopting the primary's log).
  void reset(std::vector<LogEntry> entries, const EVersion &tail, store::Transaction &t);

  // The entries newer than `v`, oldest first.
  std::vector<LogEntry> entries_after(const EVersion &v) const;

 private:
  void index(const LogEntry &e);
  void unindex(const LogEntry &e);

  std::string coll_;
  EVersion tail_;
  // std::deque keeps references stable when elements are added or removed
  // at either end, so the index may point into it.
  std::deque<LogEntry> entries_;
  std::unordered_map<ReqId, const LogEntry *, ReqIdHash> by_reqid_;
};

}  // namespace strata::osd

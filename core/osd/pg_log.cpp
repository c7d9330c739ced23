#include "osd/pg_log.h"

#include <algorithm>

#include "osd/encoding.h"

namespace strata::osd {

namespace {
// One past the last log key: "l/" sorts right after every "l.<hex>".
constexpr std::string_view kLogKeyEnd = "l/";
}  // namespace

Status PgLog::load(store::Store &store, const EVersion &tail) {
  entries_.clear();
  by_reqid_.clear();
  tail_ = tail;
  auto kvs = store.omap_list(coll_, kPgMetaObject, kLogKeyPrefix, kLogKeyEnd, 0);
  if (!kvs.ok()) {
    if (kvs.status().code() == -ENOENT) return Status::OK();  // new PG: no meta object yet
    return kvs.status().Context("loading the PG log of " + coll_);
  }
  for (const auto &[key, value] : *kvs) {
    auto e = decode_log_entry(value);
    if (!e.ok()) return e.status().Context("PG log of " + coll_ + " key " + key);
    if (e->version <= tail_) continue;  // a trim that raced a crash: already behind the tail
    if (!entries_.empty() && e->version.version <= entries_.back().version.version)
      return Status::Error(EUCLEAN, "PG log of " + coll_ + " out of order at " + e->version.str());
    entries_.push_back(std::move(*e));
    index(entries_.back());
  }
  return Status::OK();
}

void PgLog::append(const LogEntry &e, store::Transaction &t) {
  t.omap_set(coll_, kPgMetaObject, log_key(e.version.version), encode_log_entry(e));
  entries_.push_back(e);
  index(entries_.back());
}

const LogEntry *PgLog::find(const ReqId &r) const {
  auto it = by_reqid_.find(r);
  return it == by_reqid_.end() ? nullptr : it->second;
}

const LogEntry *PgLog::find(const EVersion &v) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), v.version,
                             [](const LogEntry &e, uint64_t ver) { return e.version.version < ver; });
  if (it == entries_.end() || it->version != v) return nullptr;
  return &*it;
}

bool PgLog::trim(size_t keep, store::Transaction &t) {
  if (entries_.size() <= keep) return false;
  while (entries_.size() > keep) {
    tail_ = entries_.front().version;
    unindex(entries_.front());
    entries_.pop_front();
  }
  t.omap_rm_range(coll_, kPgMetaObject, kLogKeyPrefix, log_key(tail_.version + 1));
  return true;
}

std::vector<LogEntry> PgLog::rewind(const EVersion &to, store::Transaction &t) {
  std::vector<LogEntry> dropped;
  while (!entries_.empty() && entries_.back().version > to) {
    t.omap_rm(coll_, kPgMetaObject, log_key(entries_.back().version.version));
    unindex(entries_.back());
    dropped.push_back(std::move(entries_.back()));
    entries_.pop_back();
  }
  std::reverse(dropped.begin(), dropped.end());
  return dropped;
}

void PgLog::reset(std::vector<LogEntry> entries, const EVersion &tail, store::Transaction &t) {
  t.omap_rm_range(coll_, kPgMetaObject, kLogKeyPrefix, kLogKeyEnd);
  entries_.clear();
  by_reqid_.clear();
  tail_ = tail;
  for (LogEntry &e : entries) append(e, t);
}

std::vector<LogEntry> PgLog::entries_after(const EVersion &v) const {
  std::vector<LogEntry> out;
  for (auto it = entries_.rbegin(); it != entries_.rend() && it->version > v; ++it)
    out.push_back(*it);
  std::reverse(out.begin(), out.end());
  return out;
}

void PgLog::index(const LogEntry &e) {
  if (!e.reqid.empty()) by_reqid_[e.reqid] = &e;
}

void PgLog::unindex(const LogEntry &e) {
  if (e.reqid.empty()) return;
  auto it = by_reqid_.find(e.reqid);
  if (it != by_reqid_.end() && it->second == &e) by_reqid_.erase(it);
}

}  // namespace strata::osd

// Transaction: pending writes that its own reads see, over a Database.
#include "kvdb/kvdb.h"

namespace strata::kvdb {

namespace {
bool in_range(std::string_view key, std::string_view begin, std::string_view end) {
  return key >= begin && (end.empty() || key < end);
}
}  // namespace

// Merges the transaction's pending map with a database iterator: pending
// values shadow database keys, pending deletes hide them, and database keys
// inside a pending range delete are skipped by seeking past the range.
class OverlayIterator final : public Iterator {
 public:
  OverlayIterator(const Transaction &txn, const IterOptions &options)
      : txn_(txn),
        db_it_(txn.db().iterate(options)),
        lower_(options.lower_bound),
        upper_(options.upper_bound),
        pending_it_(txn.pending_.end()) {}

  void seek_to_first() override { seek(lower_); }

  void seek(std::string_view target) override {
    std::string_view from = target < std::string_view(lower_) ? std::string_view(lower_) : target;
    db_it_->seek(from);
    db_done_ = false;
    pending_it_ = txn_.pending_.lower_bound(from);
    settle();
  }

  bool valid() const override { return current_ != Source::none; }

  void next() override {
    if (current_ == Source::pending) {
      if (db_valid() && db_it_->key() == std::string_view(pending_it_->first)) db_it_->next();
      ++pending_it_;
    } else {
      db_it_->next();
    }
    settle();
  }

  std::string_view key() const override {
    return current_ == Source::pending ? std::string_view(pending_it_->first) : db_it_->key();
  }
  std::string_view value() const override {
    return current_ == Source::pending ? std::string_view(*pending_it_->second) : db_it_->value();
  }

 private:
  enum class Source { none, db, pending };

  bool db_valid() const { return !db_done_ && db_it_->valid(); }
  bool pending_valid() const {
    return pending_it_ != txn_.pending_.end() &&
           (upper_.empty() || std::string_view(pending_it_->first) < std::string_view(upper_));
  }

  // Moves to the smallest visible key at or after the current positions.
  void settle() {
    for (;;) {
      bool dv = db_valid();
      if (dv) {
        if (const Transaction::Range *r = txn_.covering_range(db_it_->key())) {
          if (r->end.empty())
            db_done_ = true;
          else
            db_it_->seek(r->end);
          continue;
        }
      }
      bool pv = pending_valid();
      if (!pv && !dv) {
        current_ = Source::none;
        return;
      }
      if (pv && (!dv || std::string_view(pending_it_->first) <= db_it_->key())) {
        if (!pending_it_->second) {  // deleted in this transaction: hides the db key
          if (dv && std::string_view(pending_it_->first) == db_it_->key()) db_it_->next();
          ++pending_it_;
          continue;
        }
        current_ = Source::pending;
        return;
      }
      current_ = Source::db;
      return;
    }
  }

  const Transaction &txn_;
  std::unique_ptr<Iterator> db_it_;
  std::string lower_, upper_;
  decltype(Transaction::pending_)::const_iterator pending_it_;
  bool db_done_ = false;  // the db side ran into an unbounded range delete
  Source current_ = Source::none;
};

Transaction::Transaction(Database &db) : db_(&db) {}

const Transaction::Range *Transaction::covering_range(std::string_view key) const {
  const Range *best = nullptr;
  for (const Range &r : ranges_) {
    if (!in_range(key, r.begin, r.end)) continue;
    if (r.end.empty()) return &r;
    if (!best || best->end < r.end) best = &r;
  }
  return best;
}

bool Transaction::covered_by_range(std::string_view key) const {
  return covering_range(key) != nullptr;
}

bool Transaction::get(std::string_view key, std::string *value) const {
  if (auto it = pending_.find(key); it != pending_.end()) {
    if (!it->second) return false;
    *value = *it->second;
    return true;
  }
  if (covered_by_range(key)) return false;
  return db_->get(key, value);
}

bool Transaction::contains(std::string_view key) const {
  if (auto it = pending_.find(key); it != pending_.end()) return it->second.has_value();
  if (covered_by_range(key)) return false;
  std::string ignored;
  return db_->get(key, &ignored);
}

std::unique_ptr<Iterator> Transaction::iterate(const IterOptions &options) const {
  return std::make_unique<OverlayIterator>(*this, options);
}

void Transaction::put(std::string_view key, std::string_view value) {
  put_owned(std::string(key), std::string(value));
}

void Transaction::put_owned(std::string &&key, std::string &&value) {
  // try_emplace leaves `key` alone when the entry already exists.
  auto [it, inserted] = pending_.try_emplace(std::move(key));
  if (inserted)
    bytes_ += it->first.size();
  else if (it->second)
    bytes_ -= it->second->size();
  bytes_ += value.size();
  it->second = std::move(value);
}

void Transaction::del(std::string_view key) {
  auto [it, inserted] = pending_.try_emplace(std::string(key));
  if (inserted)
    bytes_ += it->first.size();
  else if (it->second)
    bytes_ -= it->second->size();
  it->second.reset();
}

void Transaction::delete_range(std::string_view begin, std::string_view end) {
  auto first = pending_.lower_bound(begin);
  auto last = end.empty() ? pending_.end() : pending_.lower_bound(end);
  for (auto it = first; it != last; ++it)
    bytes_ -= it->first.size() + (it->second ? it->second->size() : 0);
  pending_.erase(first, last);
  ranges_.push_back({std::string(begin), std::string(end)});
  bytes_ += begin.size() + end.size();
}

Batch Transaction::take_batch() {
  Batch batch;
  for (Range &r : ranges_) batch.delete_range(r.begin, r.end);
  while (!pending_.empty()) {
    auto node = pending_.extract(pending_.begin());
    if (node.mapped())
      batch.put(std::move(node.key()), std::move(*node.mapped()));
    else
      batch.del(node.key());
  }
  clear();
  return batch;
}

void Transaction::commit(const WriteOptions &options) {
  Batch batch = take_batch();
  if (!batch.empty()) db_->write(batch, options);
}

void Transaction::clear() {
  pending_.clear();
  ranges_.clear();
  bytes_ = 0;
}

}  // namespace strata::kvdb

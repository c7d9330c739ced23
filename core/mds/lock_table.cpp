#include "mds/lock_table.h"

namespace strata::mds {

namespace {
bool same_owner(const FileLock &a, const FileLock &b) {
  return a.session == b.session && a.owner == b.owner;
}
bool overlaps(const FileLock &a, const FileLock &b) { return a.start < b.end && b.start < a.end; }
}  // namespace

std::optional<FileLock> LockTable::conflict(Ino ino, const FileLock &want) const {
  auto it = locks_.find(ino);
  if (it == locks_.end() || want.type == LockTypeM::kUnlock) return std::nullopt;
  for (const FileLock &h : it->second) {
    if (h.kind != want.kind || same_owner(h, want)) continue;
    if (!overlaps(h, want)) continue;
    if (h.type == LockTypeM::kWrite || want.type == LockTypeM::kWrite) return h;
  }
  return std::nullopt;
}

bool LockTable::apply(Ino ino, const FileLock &l) {
  auto &v = locks_[ino];
  bool released = false;
  std::vector<FileLock> out;
  for (const FileLock &h : v) {
    if (h.kind != l.kind || !same_owner(h, l) || !overlaps(h, l)) {
      out.push_back(h);
      continue;
    }
    // The owner's range is replaced where the new one covers it.
    released = true;
    if (h.start < l.start) {
      FileLock left = h;
      left.end = l.start;
      out.push_back(left);
    }
    if (h.end > l.end) {
      FileLock right = h;
      right.start = l.end;
      out.push_back(right);
    }
  }
  if (l.type != LockTypeM::kUnlock) out.push_back(l);
  v = std::move(out);
  if (v.empty()) locks_.erase(ino);
  return released;
}

std::vector<Ino> LockTable::drop_session(uint64_t session) {
  std::vector<Ino> changed;
  for (auto it = locks_.begin(); it != locks_.end();) {
    auto &v = it->second;
    size_t before = v.size();
    std::erase_if(v, [&](const FileLock &h) { return h.session == session; });
    if (v.size() != before) changed.push_back(it->first);
    it = v.empty() ? locks_.erase(it) : std::next(it);
  }
  return changed;
}

size_t LockTable::count() const {
  size_t n = 0;
  for (const auto &[ino, v] : locks_) n += v.size();
  return n;
}

}  // namespace strata::mds

#include "osd/op_exec.h"

#include <algorithm>
#include <cstdio>

#include "msg/crc32c.h"
#include "osd/encoding.h"
#include "osd/object_snaps.h"

namespace strata::osd {

bool is_mutation(OpCode c) {
  switch (c) {
    case OpCode::kWrite: case OpCode::kWriteFull: case OpCode::kAppend: case OpCode::kTruncate:
    case OpCode::kZero: case OpCode::kRemove: case OpCode::kCreate: case OpCode::kSetXattr:
    case OpCode::kRmXattr: case OpCode::kOmapSet: case OpCode::kOmapRmKeys:
    case OpCode::kOmapRmRange: case OpCode::kOmapClear: case OpCode::kOmapSetHeader:
    case OpCode::kSnapContext: case OpCode::kSnapTrim: case OpCode::kSnapRollback:
      return true;
    default:
      return false;
  }
}

bool may_use_space(const std::vector<OsdOp> &ops) {
  return std::any_of(ops.begin(), ops.end(), [](const OsdOp &o) {
    switch (o.code) {
      case OpCode::kWrite: case OpCode::kWriteFull: case OpCode::kAppend: case OpCode::kCreate:
      case OpCode::kSetXattr: case OpCode::kOmapSet: case OpCode::kOmapSetHeader:
      case OpCode::kSnapContext: case OpCode::kSnapRollback:  // a clone may copy
        return true;
      default:
        return false;
    }
  });
}

bool any_mutation(const std::vector<OsdOp> &ops) {
  return std::any_of(ops.begin(), ops.end(), [](const OsdOp &o) { return is_mutation(o.code); });
}

bool ops_need_object_state(const std::vector<OsdOp> &ops) {
  for (const OsdOp &op : ops) {
    switch (op.code) {
      case OpCode::kWrite:
      case OpCode::kWriteFull:
      case OpCode::kTruncate:
      case OpCode::kSetXattr:
      case OpCode::kOmapSet:
      case OpCode::kOmapSetHeader:
        continue;
      case OpCode::kCreate:
        if (!(op.flags & kCreateExclusive)) continue;
        return true;
      default:
        return true;
    }
  }
  return false;
}

Result<ObjectState> load_object_state(store::Store &store, std::string_view coll,
                                      std::string_view oid) {
  ObjectState s;
  auto st = store.stat(coll, oid);
  if (!st.ok()) {
    if (st.status().code() == -ENOENT) return s;
    return st.status();
  }
  s.exists = true;
  s.size = st->size;
  auto attr = store.getxattr(coll, oid, kObjectInfoAttr);
  if (attr.ok()) {
    auto oi = decode_object_info(*attr);
    if (!oi.ok()) return oi.status();
    s.oi = *oi;
  } else if (attr.status().code() != -ENODATA && attr.status().code() != -ENOENT) {
    return attr.status();
  }
  return s;
}

namespace {

constexpr uint64_t kDefaultOmapListMax = 1000;
// Keys and values an omap list puts in one reply, whatever the count asked:
// they travel in the reply's payload, which a peer refuses past 4 MiB, and a
// page of 1,000 directory entries with 16 KiB of inline data each is 16 MB.
// At least one entry always goes, so a listing always moves on. The store
// is read in chunks, so that the entries past the budget are not read at all.
constexpr size_t kOmapListReplyBytes = 1u << 20;
constexpr uint64_t kOmapListChunk = 64;
constexpr size_t kMaxXattrName = 255 - kUserXattrPrefix.size();

std::string user_attr(const std::string &name) {
  std::string n(kUserXattrPrefix);
  n += name;
  return n;
}

bool compare(const std::string &have, const std::string &want, CmpMode mode) {
  int c = have.compare(want);
  switch (mode) {
    case CmpMode::kEq: return c == 0;
    case CmpMode::kNe: return c != 0;
    case CmpMode::kGt: return c > 0;
    case CmpMode::kGe: return c >= 0;
    case CmpMode::kLt: return c < 0;
    case CmpMode::kLe: return c <= 0;
  }
  return false;
}

int32_t rc_of(const Status &s) { return s.code() ? s.code() : -EIO; }

// The object's snap set as the list leaves it: loaded on first use,
// written back (or removed when no clone is left) after the list.
struct SnapState {
  bool loaded = false;
  bool had_object = false;  // the snap set's companion object exists
  bool dirty = false;
  SnapSet ss;

  int32_t load(store::Store &store, const std::string &coll, const std::string &oid) {
    if (loaded) return 0;
    auto r = load_snapset(store, coll, oid);
    if (!r.ok()) return rc_of(r.status());
    ss = std::move(*r);
    had_object = ss.seq != 0 || !ss.clones.empty();
    loaded = true;
    return 0;
  }
};

uint64_t be64(std::string_view b) {
  uint64_t v = 0;
  for (char c : b) v = v << 8 | static_cast<uint8_t>(c);
  return v;
}

std::string put_be64(uint64_t v) {
  std::string b(8, '\0');
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(v >> (56 - 8 * i));
  return b;
}

// One op; rc < 0 stops the list. `cur` is the object as the list has left
// it so far (exists/size), `orig` as it was before.
int32_t run_op(store::Store &store, const std::string &coll, const std::string &oid,
               const OsdOp &op, const ObjectState &orig, ObjectState &cur, SnapState &snaps,
               store::Transaction *t, OpResult &res) {
  auto need_name = [&]() { return !op.name.empty() && op.name.size() <= kMaxXattrName; };
  switch (op.code) {
    // --- guards ---
    case OpCode::kAssertExists:
      return orig.exists ? 0 : -ENOENT;
    case OpCode::kAssertVersion:
      return (orig.exists ? orig.oi.version.version : 0) == op.version ? 0 : -ERANGE;
    case OpCode::kCmpXattr: {
      if (!need_name()) return -EINVAL;
      if (!orig.exists) return -ENOENT;
      std::string have;
      auto v = store.getxattr(coll, oid, user_attr(op.name));
      if (v.ok()) have = std::move(*v);
      else if (v.status().code() != -ENODATA) return rc_of(v.status());
      // An absent xattr compares as the empty value.
      return compare(have, op.data, op.cmp) ? 0 : -ECANCELED;
    }
    // --- reads (of the object as it was before the list) ---
    case OpCode::kRead: {
      if (!orig.exists) return -ENOENT;
      uint64_t len = op.length ? op.length : UINT64_MAX;
      auto d = store.read(coll, oid, op.offset, len);
      if (!d.ok()) return rc_of(d.status());
      res.data = std::move(*d);
      return 0;
    }
    case OpCode::kStat:
      if (!orig.exists) return -ENOENT;
      res.size = orig.size;
      res.mtime_ns = orig.oi.mtime_ns;
      return 0;
    case OpCode::kGetXattr: {
      if (!need_name()) return -EINVAL;
      if (!orig.exists) return -ENOENT;
      auto v = store.getxattr(coll, oid, user_attr(op.name));
      if (!v.ok()) return rc_of(v.status());
      res.data = std::move(*v);
      return 0;
    }
    case OpCode::kGetXattrs: {
      if (!orig.exists) return -ENOENT;
      auto kv = store.getxattrs(coll, oid);
      if (!kv.ok()) return rc_of(kv.status());
      for (auto &[k, v] : *kv) {
        if (k.compare(0, kUserXattrPrefix.size(), kUserXattrPrefix) != 0) continue;
        res.keys.push_back(k.substr(kUserXattrPrefix.size()));
        res.values.push_back(std::move(v));
      }
      return 0;
    }
    case OpCode::kOmapGetHeader: {
      if (!orig.exists) return -ENOENT;
      auto h = store.omap_get_header(coll, oid);
      if (!h.ok()) return rc_of(h.status());
      res.data = std::move(*h);
      return 0;
    }
    case OpCode::kOmapGetByKeys: {
      if (!orig.exists) return -ENOENT;
      for (const std::string &k : op.keys) {
        auto v = store.omap_get(coll, oid, k);
        if (v.ok()) {
          res.keys.push_back(k);
          res.values.push_back(std::move(*v));
        } else if (v.status().code() != -ENODATA) {
          return rc_of(v.status());
        }
      }
      return 0;
    }
    case OpCode::kListSnaps: {
      if (int32_t rc = snaps.load(store, coll, oid)) return rc;
      res.size = snaps.ss.seq;
      for (const SnapClone &c : snaps.ss.clones) {
        res.keys.push_back(put_be64(c.id));
        res.values.push_back(put_be64(c.size) + std::string(1, c.exists ? '\1' : '\0'));
      }
      return 0;
    }
    case OpCode::kSetSnap:
      // Resolved by execute_ops before the list runs; anywhere else it is
      // a misuse.
      return -EINVAL;
    case OpCode::kOmapList: {
      if (!orig.exists) return -ENOENT;
      const uint64_t max = op.length ? op.length : kDefaultOmapListMax;
      std::string after = op.name;
      size_t bytes = 0;
      for (;;) {
        // One more than taken tells whether there is more.
        const uint64_t take = std::min<uint64_t>(max - res.keys.size(), kOmapListChunk);
        auto kv = store.omap_list(coll, oid, after, op.name2, take + 1);
        if (!kv.ok()) return rc_of(kv.status());
        const bool beyond = kv->size() > take;
        if (beyond) kv->resize(take);
        for (auto &[k, v] : *kv) {
          if (!res.keys.empty() && bytes + k.size() + v.size() > kOmapListReplyBytes) {
            res.more = true;
            return 0;
          }
          bytes += k.size() + v.size();
          res.keys.push_back(std::move(k));
          res.values.push_back(std::move(v));
        }
        if (!beyond) return 0;
        if (res.keys.size() == max) {
          res.more = true;
          return 0;
        }
        after = res.keys.back();
      }
    }
    default:
      break;
  }

  // --- mutations ---
  if (!t) return -EINVAL;
  switch (op.code) {
    case OpCode::kWrite:
      t->write(coll, oid, op.offset, op.data);
      cur.size = std::max(cur.size, op.offset + op.data.size());
      break;
    case OpCode::kWriteFull:
      t->write_full(coll, oid, op.data);
      cur.size = op.data.size();
      break;
    case OpCode::kAppend:
      // The primary knows the size (ops on one object are serialised), so
      // the replicas get an absolute write and apply the same bytes.
      t->write(coll, oid, cur.exists ? cur.size : 0, op.data);
      cur.size = (cur.exists ? cur.size : 0) + op.data.size();
      break;
    case OpCode::kTruncate:
      t->truncate(coll, oid, op.offset);
      cur.size = op.offset;
      break;
    case OpCode::kZero:
      if (cur.exists) t->zero(coll, oid, op.offset, op.length);
      else t->touch(coll, oid);
      break;
    case OpCode::kRemove:
      if (!cur.exists) return -ENOENT;
      t->remove(coll, oid);
      cur.exists = false;
      cur.size = 0;
      return 0;
    case OpCode::kCreate:
      if (cur.exists && (op.flags & kCreateExclusive)) return -EEXIST;
      t->touch(coll, oid);
      break;
    case OpCode::kSetXattr:
      if (!need_name()) return -EINVAL;
      t->setxattr(coll, oid, user_attr(op.name), op.data);
      break;
    case OpCode::kRmXattr: {
      if (!need_name()) return -EINVAL;
      if (!cur.exists) return -ENOENT;
      auto v = store.getxattr(coll, oid, user_attr(op.name));
      if (!v.ok() && orig.exists) return rc_of(v.status());  // -ENODATA when absent
      t->rmxattr(coll, oid, user_attr(op.name));
      return 0;  // does not create
    }
    case OpCode::kOmapSet:
      if (op.keys.size() != op.values.size()) return -EINVAL;
      for (size_t i = 0; i < op.keys.size(); ++i) t->omap_set(coll, oid, op.keys[i], op.values[i]);
      break;
    case OpCode::kOmapRmKeys:
      if (!cur.exists) return -ENOENT;
      for (const std::string &k : op.keys) t->omap_rm(coll, oid, k);
      return 0;
    case OpCode::kOmapRmRange:
      if (!cur.exists) return -ENOENT;
      t->omap_rm_range(coll, oid, op.name, op.name2);
      return 0;
    case OpCode::kOmapClear:
      if (!cur.exists) return -ENOENT;
      t->omap_clear(coll, oid);
      return 0;
    case OpCode::kOmapSetHeader:
      t->omap_set_header(coll, oid, op.data);
      break;
    case OpCode::kSnapContext: {
      if (int32_t rc = snaps.load(store, coll, oid)) return rc;
      if (op.version == 0 || snaps.ss.seq >= op.version) return 0;
      // Preserved as the list found it so far (a first step: as it was).
      SnapClone c{op.version, cur.exists ? cur.size : 0, cur.exists};
      if (cur.exists) t->clone(coll, oid, clone_object(oid, c.id));
      snaps.ss.clones.push_back(c);
      snaps.ss.seq = op.version;
      snaps.dirty = true;
      return 0;  // does not create the object
    }
    case OpCode::kSnapTrim: {
      if (int32_t rc = snaps.load(store, coll, oid)) return rc;
      std::vector<uint64_t> keep;
      keep.reserve(op.keys.size());
      for (const std::string &k : op.keys) {
        if (k.size() != 8) return -EINVAL;
        keep.push_back(be64(k));
      }
      auto drop = clones_unneeded(snaps.ss, keep);
      if (drop.empty()) return 0;
      for (const SnapClone &c : drop)
        if (c.exists) t->remove(coll, clone_object(oid, c.id));
      std::erase_if(snaps.ss.clones, [&](const SnapClone &c) {
        return std::any_of(drop.begin(), drop.end(), [&](const SnapClone &d) { return d.id == c.id; });
      });
      snaps.dirty = true;
      return 0;  // does not create the object
    }
    case OpCode::kSnapRollback: {
      if (op.version == 0) return -EINVAL;
      if (int32_t rc = snaps.load(store, coll, oid)) return rc;
      auto c = clone_serving(snaps.ss, op.version);
      if (!c) return 0;  // the object as it is serves that snapshot
      if (cur.exists) t->remove(coll, oid);
      if (!c->exists) {
        cur.exists = false;
        cur.size = 0;
        return 0;
      }
      t->clone(coll, clone_object(oid, c->id), oid);
      cur.size = c->size;
      break;
    }
    default:
      return -EOPNOTSUPP;
  }
  cur.exists = true;  // every op that gets here creates the object
  return 0;
}

// Where the data digest is kept, and when it is valid: in the object info
// (written with every mutation, so it reaches every replica in the same
// transaction as the data it describes), set only while the whole data is
// known without reading it back — a WRITE_FULL, a truncate to 0, then
// appends or writes that extend the end (CRC-32C extends) — and dropped by
// any other data change (a write inside, a zero, a truncate elsewhere).
// A plain partial write does not load the old object info, so it writes
// one without a digest: never a stale digest, at the price of objects
// written in place having none (as in Ceph, where only full-object writes
// and deep scrubs give an object a data digest).
// (A flag and a value rather than std::optional: gcc 12 misreads the
// optional's storage as maybe-uninitialized at -O2.)
struct DataDigest {
  bool known = false;
  uint32_t crc = 0;
  void set(uint32_t c) {
    known = true;
    crc = c;
  }
  void extend(const std::string &d) { crc = msg::crc32c_extend(crc, d.data(), d.size()); }
};

void track_data_digest(const OsdOp &op, const ObjectState &before, DataDigest &digest) {
  switch (op.code) {
    case OpCode::kWriteFull:
      digest.set(msg::crc32c(op.data.data(), op.data.size()));
      return;
    case OpCode::kAppend:
      if (digest.known) digest.extend(op.data);
      return;
    case OpCode::kWrite:
      if (digest.known && op.offset == before.size) digest.extend(op.data);
      else if (digest.known && op.offset == 0 && op.data.size() >= before.size)
        digest.set(msg::crc32c(op.data.data(), op.data.size()));
      else if (!op.data.empty())
        digest.known = false;
      return;
    case OpCode::kTruncate:
      if (op.offset == 0) digest.set(0);
      else if (op.offset != before.size) digest.known = false;
      return;
    case OpCode::kZero:
      if (before.exists && op.length > 0) digest.known = false;
      return;
    case OpCode::kRemove:
      digest.set(0);  // re-created by a later op: empty
      return;
    case OpCode::kSnapRollback:
      digest.known = false;  // the clone's bytes, not read here
      return;
    default:
      return;  // no data change
  }
}

}  // namespace

namespace {
ExecOutcome execute_at_snap(store::Store &store, const std::string &coll, const std::string &oid,
                            const std::vector<OsdOp> &ops, store::Transaction *t);
// execute_ops on a name already checked (a clone's is not a client's).
ExecOutcome execute_on(store::Store &store, const std::string &coll, const std::string &oid,
                       const std::vector<OsdOp> &ops, const ObjectInfo &new_oi,
                       store::Transaction *t);
}  // namespace

ExecOutcome execute_ops(store::Store &store, const std::string &coll, const std::string &oid,
                        const std::vector<OsdOp> &ops, const ObjectInfo &new_oi,
                        store::Transaction *t) {
  ExecOutcome out;
  if (!valid_object_name(oid)) {
    out.rc = -EINVAL;
    return out;
  }
  if (!ops.empty() && ops.front().code == OpCode::kSetSnap) return execute_at_snap(store, coll, oid, ops, t);
  return execute_on(store, coll, oid, ops, new_oi, t);
}

namespace {

// A read list led by setSnap: the rest runs on whichever object serves
// that snapshot -- the clone, the object itself, or (the object did not
// exist then) a clone object that was never made, which reads as missing.
ExecOutcome execute_at_snap(store::Store &store, const std::string &coll, const std::string &oid,
                            const std::vector<OsdOp> &ops, store::Transaction *t) {
  ExecOutcome out;
  out.results.emplace_back();
  if (t || ops.front().version == 0) {
    out.rc = out.results.back().rc = -EINVAL;
    return out;
  }
  auto ss = load_snapset(store, coll, oid);
  if (!ss.ok()) {
    out.rc = out.results.back().rc = rc_of(ss.status());
    return out;
  }
  auto c = clone_serving(*ss, ops.front().version);
  std::string target = c ? clone_object(oid, c->id) : oid;
  std::vector<OsdOp> rest(ops.begin() + 1, ops.end());
  ExecOutcome inner = execute_on(store, coll, target, rest, ObjectInfo{}, nullptr);
  inner.results.insert(inner.results.begin(), std::move(out.results.front()));
  return inner;
}

ExecOutcome execute_on(store::Store &store, const std::string &coll, const std::string &oid,
                       const std::vector<OsdOp> &ops, const ObjectInfo &new_oi,
                       store::Transaction *t) {
  ExecOutcome out;
  // Plain writes (the common case) need nothing from the object as it is:
  // skip the two metadata reads.
  ObjectState orig;
  DataDigest digest;  // of the data as the list leaves it, when known
  if (ops_need_object_state(ops)) {
    auto loaded = load_object_state(store, coll, oid);
    if (!loaded.ok()) {
      out.rc = rc_of(loaded.status());
      return out;
    }
    orig = *loaded;
    if (!orig.exists) digest.set(0);  // CRC-32C of no bytes
    else if (orig.oi.has_data_digest) digest.set(orig.oi.data_digest);
    out.before = orig;
  }
  ObjectState cur = orig;
  SnapState snaps;
  size_t first_op = t ? t->size() : 0;
  out.results.reserve(ops.size());
  for (const OsdOp &op : ops) {
    out.results.emplace_back();
    if (t) track_data_digest(op, cur, digest);
    int32_t rc = run_op(store, coll, oid, op, orig, cur, snaps, t, out.results.back());
    out.results.back().rc = rc;
    if (rc < 0) {
      out.rc = rc;
      break;
    }
  }
  bool mutated = t && t->size() > first_op;
  if (out.rc < 0) {
    if (mutated) {
      // Nothing of a failed list is applied: drop what it queued.
      t->mutable_ops().resize(first_op);
    }
    out.version = orig.oi.version.version;
    return out;
  }
  if (snaps.dirty) {
    std::string so = snapset_object(oid);
    if (snaps.ss.clones.empty()) {
      // Nothing left to serve: forget the snap set (a later snapshot
      // preserves the object again, which is right: it is unchanged since).
      if (snaps.had_object) t->remove(coll, so);
    } else {
      if (!snaps.had_object) t->touch(coll, so);
      t->setxattr(coll, so, kSnapSetAttr, encode_snapset(snaps.ss));
    }
    mutated = t->size() > first_op;
  }
  out.mutated = mutated;
  if (!mutated) {
    out.version = orig.oi.version.version;
    return out;
  }
  if (cur.exists) {
    ObjectInfo oi = new_oi;
    oi.has_data_digest = digest.known;
    oi.data_digest = digest.known ? digest.crc : 0;
    t->setxattr(coll, oid, kObjectInfoAttr, encode_object_info(oi));
    out.log_op = LogOp::kModify;
  } else {
    // An OSD that missed a delete just removes the object, but one whose
    // snapshot companions live on (or changed) must copy those: log it as
    // a change so that recovery pulls and pushes it with them.
    bool companions = true;
    if (snaps.loaded || snaps.load(store, coll, oid) == 0)
      companions = snaps.had_object || snaps.dirty;
    out.log_op = companions ? LogOp::kModify : LogOp::kDelete;
  }
  out.version = new_oi.version.version;
  return out;
}

}  // namespace

std::string data_digest_mismatch(const ObjectInfo &oi, std::string_view data) {
  if (!oi.has_data_digest) return "";
  uint32_t crc = msg::crc32c(data.data(), data.size());
  if (crc == oi.data_digest) return "";
  char buf[96];
  std::snprintf(buf, sizeof buf, "data digest mismatch (crc32c %08x of %zu bytes, object info says %08x)",
                crc, data.size(), oi.data_digest);
  return buf;
}

std::string check_data_digest(const std::vector<OsdOp> &ops, const ExecOutcome &out) {
  if (!out.before.exists || !out.before.oi.has_data_digest) return "";
  for (size_t i = 0; i < ops.size() && i < out.results.size(); ++i) {
    const OsdOp &op = ops[i];
    const OpResult &r = out.results[i];
    if (op.code != OpCode::kRead || r.rc != 0 || op.offset != 0 || !r.data) continue;
    if (r.data->size() != out.before.size) continue;  // a part: nothing to compare with
    if (std::string why = data_digest_mismatch(out.before.oi, *r.data); !why.empty()) return why;
  }
  return "";
}

}  // namespace strata::osd

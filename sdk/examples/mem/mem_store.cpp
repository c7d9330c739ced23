#include "mem_store.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

#include "image.h"

namespace mem {

using strata::sdk::Error;
using strata::sdk::make_error;
using strata::sdk::ops_of;
using strata::sdk::TxnOps;
using strata::sdk::view;

namespace {

constexpr size_t kMaxObjectName = 4096;
constexpr size_t kMaxXattrName = 255;
constexpr size_t kMaxXattrValue = 64 * 1024;

bool is_known_op(uint32_t type) {
  switch (type) {
    case STRATA_OP_MKCOLL:
    case STRATA_OP_RMCOLL:
    case STRATA_OP_TOUCH:
    case STRATA_OP_WRITE:
    case STRATA_OP_WRITE_FULL:
    case STRATA_OP_TRUNCATE:
    case STRATA_OP_ZERO:
    case STRATA_OP_REMOVE:
    case STRATA_OP_SETXATTR:
    case STRATA_OP_RMXATTR:
    case STRATA_OP_OMAP_SET:
    case STRATA_OP_OMAP_RM:
    case STRATA_OP_OMAP_CLEAR:
    case STRATA_OP_OMAP_SET_HEADER:
    case STRATA_OP_OMAP_RM_RANGE:
    case STRATA_OP_CLONE:
    case STRATA_OP_WRITE_STAGED:
      return true;
    default:
      return false;
  }
}

// Ops that do nothing, rather than create the object, when it is missing.
bool skips_missing_object(uint32_t type) {
  return type == STRATA_OP_REMOVE || type == STRATA_OP_RMXATTR || type == STRATA_OP_OMAP_RM ||
         type == STRATA_OP_OMAP_RM_RANGE || type == STRATA_OP_OMAP_CLEAR;
}

std::string printable(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  return out.size() > 80 ? out.substr(0, 77) + "..." : out;
}

}  // namespace

void MemStore::mkfs(const strata::sdk::OpenArgs &args) {
  std::string dir = args.path();
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    throw make_error(errno, "cannot create %s: %s", dir.c_str(), strerror(errno));
  struct stat st;
  if (::stat((dir + "/" + kImageName).c_str(), &st) == 0)
    throw make_error(EEXIST, "%s already holds a mem store", dir.c_str());
  save_image(dir, StoreContent{}, 0);
  StageArea stages(dir + "/stages");
}

std::unique_ptr<MemStore> MemStore::open(const strata::sdk::OpenArgs &args) {
  StoreContent content;
  uint64_t seq = 0;
  load_image(args.path(), &content, &seq);
  return std::unique_ptr<MemStore>(new MemStore(args, std::move(content), seq));
}

MemStore::MemStore(const strata::sdk::OpenArgs &args, StoreContent content, uint64_t seq)
    : dir_(args.path()),
      capacity_(static_cast<uint64_t>(args.option_int("capacity", 1ll << 30))),
      log_(args.host()),
      content_(std::move(content)),
      committed_seq_(seq),
      stages_(dir_ + "/stages") {}

uint64_t MemStore::capabilities() const {
  return STRATA_OS_CAP_ROLLBACK_CHECKPOINT | STRATA_OS_CAP_EXACT_REPLAY |
         STRATA_OS_CAP_STAGED_WRITES;
}

// ---------------------------------------------------------------------------
// Write side.

void MemStore::apply(const strata_txn &txn) {
  validate(txn);
  StagedBytes staged;
  // ops_of steps by the host's op size (ABI 1.3), never txn.ops[i].
  for (const strata_op &op : ops_of(txn))
    if (op.type == STRATA_OP_WRITE_STAGED) staged[op.offset] = stages_.get(op.offset, op.length);
  std::unique_lock<std::shared_mutex> lock(mu_);
  for (const strata_op &op : ops_of(txn)) apply_op(op, txn.seq, staged);
}

void MemStore::validate(const strata_txn &txn) const {
  // Collections created or removed earlier in this transaction count.
  std::set<std::string> created, removed;
  std::shared_lock<std::shared_mutex> lock(mu_);
  const TxnOps ops(txn);
  for (size_t i = 0; i < ops.size(); ++i) {
    const strata_op op = ops[i];
    if (!is_known_op(op.type))
      throw make_error(EOPNOTSUPP, "txn %llu op %zu: unknown op type %u",
                       (unsigned long long)txn.seq, i, op.type);
    std::string coll(view(op.collection));
    if (op.type == STRATA_OP_MKCOLL) {
      created.insert(coll);
      removed.erase(coll);
      continue;
    }
    if (op.type == STRATA_OP_RMCOLL) {
      removed.insert(coll);
      created.erase(coll);
      continue;
    }
    bool exists = created.count(coll) || (!removed.count(coll) && content_.collections.count(coll));
    if (!exists)
      throw make_error(ENOENT, "txn %llu op %zu: no collection '%s'", (unsigned long long)txn.seq,
                       i, printable(coll).c_str());
    if (op.object.len == 0 || op.object.len > kMaxObjectName)
      throw make_error(EINVAL, "txn %llu op %zu: object name of %zu bytes (1..%zu allowed)",
                       (unsigned long long)txn.seq, i, op.object.len, kMaxObjectName);
    if (op.type == STRATA_OP_SETXATTR &&
        (op.key.len == 0 || op.key.len > kMaxXattrName || op.value.len > kMaxXattrValue))
      throw make_error(EINVAL, "txn %llu op %zu: xattr of %zu+%zu bytes is out of bounds",
                       (unsigned long long)txn.seq, i, op.key.len, op.value.len);
    if (op.type == STRATA_OP_CLONE && (op.value.len == 0 || op.value.len > kMaxObjectName))
      throw make_error(EINVAL, "txn %llu op %zu: clone destination name of %zu bytes",
                       (unsigned long long)txn.seq, i, op.value.len);
  }
}

void MemStore::apply_op(const strata_op &op, uint64_t seq, const StagedBytes &staged) {
  std::string cname(view(op.collection));
  if (op.type == STRATA_OP_MKCOLL) {
    content_.collections.try_emplace(cname);
    return;
  }
  if (op.type == STRATA_OP_RMCOLL) {
    content_.collections.erase(cname);
    return;
  }
  Collection &coll = content_.collections.at(cname);  // validate() checked it exists
  std::string oid(view(op.object));
  auto it = coll.find(oid);
  if (it == coll.end()) {
    if (skips_missing_object(op.type)) return;
    if (op.type == STRATA_OP_CLONE)
      throw make_error(ENOENT, "txn %llu: clone source '%s' does not exist",
                       (unsigned long long)seq, printable(oid).c_str());
    it = coll.emplace(oid, Object{}).first;
  }
  Object &o = it->second;
  std::string key(view(op.key));
  switch (op.type) {
    case STRATA_OP_TOUCH:
      break;
    case STRATA_OP_WRITE:
      o.data.write(op.offset, view(op.value));
      break;
    case STRATA_OP_WRITE_FULL:
      o.data.clear();
      o.data.write(0, view(op.value));
      break;
    case STRATA_OP_TRUNCATE:
      o.data.truncate(op.offset);
      break;
    case STRATA_OP_ZERO:
      o.data.zero(op.offset, op.length);
      break;
    case STRATA_OP_REMOVE:
      coll.erase(it);
      break;
    case STRATA_OP_SETXATTR:
      o.xattrs[key] = std::string(view(op.value));
      break;
    case STRATA_OP_RMXATTR:
      o.xattrs.erase(key);
      break;
    case STRATA_OP_OMAP_SET:
      o.omap[key] = std::string(view(op.value));
      break;
    case STRATA_OP_OMAP_RM:
      o.omap.erase(key);
      break;
    case STRATA_OP_OMAP_CLEAR:
      o.omap.clear();
      break;
    case STRATA_OP_OMAP_SET_HEADER:
      o.omap_header = std::string(view(op.value));
      break;
    case STRATA_OP_OMAP_RM_RANGE: {
      std::string end(view(op.value));
      if (end > key) o.omap.erase(o.omap.lower_bound(key), o.omap.lower_bound(end));
      break;
    }
    case STRATA_OP_WRITE_STAGED:
      o.data.clear();
      o.data.write(0, staged.at(op.offset));
      stages_.consumed(op.offset, seq);
      break;
    case STRATA_OP_CLONE: {
      std::string dst(view(op.value));
      if (dst != oid) coll[dst] = o;  // a deep copy: nothing is shared afterwards
      break;
    }
    default:
      throw make_error(EOPNOTSUPP, "op type %u", op.type);  // validate() let it through
  }
}

void MemStore::checkpoint(uint64_t seq) {
  {
    // Readers may go on; apply() runs on this same host thread, so the
    // content cannot change while it is saved.
    std::shared_lock<std::shared_mutex> lock(mu_);
    save_image(dir_, content_, seq);
  }
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    committed_seq_ = seq;
  }
  stages_.release_checkpointed(seq);
}

uint64_t MemStore::committed_seq() {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return committed_seq_;
}

uint64_t MemStore::stage_write(const void *data, size_t len) {
  return stages_.put(std::string_view(static_cast<const char *>(data), len));
}

void MemStore::stage_release_unused() { stages_.release_unused(); }

void MemStore::stage_release(uint64_t id) { stages_.release(id); }

// ---------------------------------------------------------------------------
// Read side.

const Collection &MemStore::collection(std::string_view coll) const {
  auto it = content_.collections.find(std::string(coll));
  if (it == content_.collections.end())
    throw Error(ENOENT, "no collection '" + printable(coll) + "'");
  return it->second;
}

const Object &MemStore::object(std::string_view coll, std::string_view oid) const {
  const Collection &c = collection(coll);
  auto it = c.find(std::string(oid));
  if (it == c.end())
    throw Error(ENOENT,
                "no object '" + printable(oid) + "' in collection '" + printable(coll) + "'");
  return it->second;
}

uint64_t MemStore::read(std::string_view coll, std::string_view oid, uint64_t off, uint64_t len,
                        void *buf) {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return object(coll, oid).data.read(off, len, static_cast<char *>(buf));
}

strata_object_stat MemStore::stat(std::string_view coll, std::string_view oid) {
  std::shared_lock<std::shared_mutex> lock(mu_);
  const Object &o = object(coll, oid);
  strata_object_stat st{};
  st.struct_size = sizeof st;
  st.size = o.data.size();
  st.allocated_bytes = o.data.allocated();
  st.n_xattrs = o.xattrs.size();
  return st;
}

bool MemStore::getxattr(std::string_view coll, std::string_view oid, std::string_view name,
                        std::string &value) {
  std::shared_lock<std::shared_mutex> lock(mu_);
  const Object &o = object(coll, oid);
  auto it = o.xattrs.find(std::string(name));
  if (it == o.xattrs.end()) return false;
  value = it->second;
  return true;
}

void MemStore::getxattrs(std::string_view coll, std::string_view oid,
                         const strata::sdk::KvVisitor &v) {
  std::shared_lock<std::shared_mutex> lock(mu_);
  for (const auto &[k, val] : object(coll, oid).xattrs)
    if (!v(k, val)) return;
}

std::string MemStore::omap_get_header(std::string_view coll, std::string_view oid) {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return object(coll, oid).omap_header;
}

bool MemStore::omap_get(std::string_view coll, std::string_view oid, std::string_view key,
                        std::string &value) {
  std::shared_lock<std::shared_mutex> lock(mu_);
  const Object &o = object(coll, oid);
  auto it = o.omap.find(std::string(key));
  if (it == o.omap.end()) return false;
  value = it->second;
  return true;
}

void MemStore::omap_iterate(std::string_view coll, std::string_view oid,
                            std::string_view start_after, std::string_view end, uint64_t limit,
                            const strata::sdk::KvVisitor &v) {
  std::shared_lock<std::shared_mutex> lock(mu_);
  const Object &o = object(coll, oid);
  uint64_t visited = 0;
  for (auto it = o.omap.upper_bound(std::string(start_after)); it != o.omap.end(); ++it) {
    if (!end.empty() && std::string_view(it->first) >= end) return;
    if (limit != 0 && visited == limit) return;
    ++visited;
    if (!v(it->first, it->second)) return;
  }
}

void MemStore::list_objects(std::string_view coll, std::string_view start_after, uint64_t limit,
                            const strata::sdk::NameVisitor &v) {
  std::shared_lock<std::shared_mutex> lock(mu_);
  const Collection &c = collection(coll);
  uint64_t visited = 0;
  for (auto it = c.upper_bound(std::string(start_after)); it != c.end(); ++it) {
    if (limit != 0 && visited == limit) return;
    ++visited;
    if (!v(it->first)) return;
  }
}

void MemStore::list_collections(const strata::sdk::NameVisitor &v) {
  std::shared_lock<std::shared_mutex> lock(mu_);
  for (const auto &entry : content_.collections)
    if (!v(entry.first)) return;
}

strata_store_usage MemStore::usage() {
  std::shared_lock<std::shared_mutex> lock(mu_);
  strata_store_usage u{};
  u.struct_size = sizeof u;
  u.total_bytes = capacity_;
  for (const auto &entry : content_.collections) {
    for (const auto &[name, o] : entry.second) {
      u.used_bytes += name.size() + o.data.allocated() + o.omap_header.size();
      for (const auto &[k, v] : o.xattrs) u.used_bytes += k.size() + v.size();
      for (const auto &[k, v] : o.omap) u.used_bytes += k.size() + v.size();
      ++u.n_objects;
    }
  }
  return u;
}

int64_t MemStore::fsck() {
  int64_t problems = 0;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    for (const auto &[cname, coll] : content_.collections) {
      for (const auto &[oname, o] : coll) {
        std::string p = o.data.problems();
        if (p.empty()) continue;
        ++problems;
        log_.log(STRATA_LOG_ERROR, "fsck: %s/%s: %s", printable(cname).c_str(),
                 printable(oname).c_str(), p.c_str());
      }
    }
  }
  // The last checkpoint's image must load: it is what a crash returns to.
  try {
    StoreContent saved;
    uint64_t seq = 0;
    load_image(dir_, &saved, &seq);
  } catch (const Error &e) {
    ++problems;
    log_.log(STRATA_LOG_ERROR, "fsck: %s", e.what());
  }
  return problems;
}

}  // namespace mem

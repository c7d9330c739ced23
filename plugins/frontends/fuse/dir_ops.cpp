// Filesystem: directory listing (a snapshot per opendir, from the cache of
// a complete directory or else read from the MDS in pages) and xattrs.
#include <sys/xattr.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "filesystem.h"
#include "proto_convert.h"

namespace strata::fuse {

namespace {

// What one opendir lists: taken at the first readdir, served by offset.
struct DirSnapshot {
  bool filled = false;
  struct Item {
    std::string name;
    DirEntry entry;
  };
  std::vector<Item> items;  // "." and ".." first
};

DirSnapshot *snapshot(fuse_file_info *fi) { return reinterpret_cast<DirSnapshot *>(fi->fh); }

constexpr uint32_t kPageEntries = 1024;

// A lookup that misses in a directory this client holds dirWrite on reads
// the listing instead, at most this many pages (a huge directory is not
// listed to answer a few names).
constexpr uint32_t kPrefetchPages = 4;

}  // namespace

int Filesystem::read_listing(fuse_req_t req, uint64_t dir, uint32_t max_pages,
                             const std::function<void(const std::string &, const DirEntry &)> &each,
                             bool *complete) {
  std::string after;
  uint64_t seq = 0;  // the dir lease the first page came under
  // Names this client changes while the pages come keep what it made them.
  struct Listing {
    LeaseCache &cache;
    uint64_t dir;
    uint64_t since;
    ~Listing() { cache.end_listing(dir); }
  } listing{cache_, dir, cache_.begin_listing(dir)};
  for (uint32_t page = 0;; ++page) {
    if (max_pages != 0 && page == max_pages) {
      if (complete) *complete = false;
      return 0;
    }
    int err = 0;
    auto reply = request(
        req,
        [&](fsproto::Request::Builder r) {
          auto d = r.initReaddir();
          d.setIno(dir);
          d.setAfter(kj::arrayPtr(reinterpret_cast<const kj::byte *>(after.data()), after.size()));
          d.setMaxEntries(kPageEntries);
        },
        &err);
    if (err < 0) return err;
    auto r = reply->root<fsproto::Reply>();
    if (after.empty()) seq = cache_.dir_seq(dir);
    for (auto d : r.getEntries()) {
      auto n = d.getName();
      std::string name(reinterpret_cast<const char *>(n.begin()), n.size());
      DirEntry e{d.getInode().getIno(), FileType(uint8_t(d.getInode().getType()))};
      cache_.put_listed(dir, name, e, listing.since);
      if (each) each(name, e);
      after = name;
    }
    if (r.getEnd() || r.getEntries().size() == 0) break;
  }
  // Every entry is in the cache now, if one lease covered every page.
  cache_.mark_complete(dir, seq);
  if (complete) *complete = true;
  return 0;
}

bool Filesystem::prefetch_listing(fuse_req_t req, uint64_t dir) {
  if (!settings_.prefetch_listings) return false;
  auto lease = cache_.dir_lease(dir, now_ms());
  // Listed whole here before its lease ran out: a walk over it again
  // reads the listing at its first miss, even without a lease (the
  // listing brings one): one round trip for the directory, not a lookup
  // or two and then the listing.
  const bool again = cache_.listed_before(dir);
  // Otherwise exclusive (nobody else is reading or changing it), not yet
  // listed, and not for the first miss: a lone stat stays one small lookup.
  if (!lease && !again) return false;
  if (lease &&
      (lease->second || (!again && lease->first.kind != uint32_t(fsproto::LeaseKind::DIR_WRITE))))
    return false;
  if (!settings_.default_permissions) {
    // What the listing then answers skips the MDS's search check.
    auto p = cache_.inode(dir, now_ms());
    if (!p || denied(req, p->first, 1)) return false;
  }
  if (lease && !cache_.note_miss(dir, again ? 1 : kPrefetchMisses)) return false;
  counters_.listing_prefetch();
  bool complete = false;
  bool ok = read_listing(req, dir, kPrefetchPages, nullptr, &complete) == 0 && complete;
  // Once per grant: a directory too large to list in kPrefetchPages is
  // not read again at its next miss under the lease this listing got.
  if (!lease && !ok) cache_.note_miss(dir, 1);
  return ok;
}

void Filesystem::opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info *fi) {
  counters_.count(Op::kOpendir);
  InodeAttr a;
  double valid = 0;
  if (int err = attr_of(req, to_mds(ino), &a, &valid); err < 0) {
    fuse_reply_err(req, -err);
    return;
  }
  if (a.type != FileType::kDirectory) {
    fuse_reply_err(req, ENOTDIR);
    return;
  }
  if (denied(req, a, 4)) {  // a cached listing is served without the MDS's check
    fuse_reply_err(req, EACCES);
    return;
  }
  fi->fh = reinterpret_cast<uint64_t>(new DirSnapshot);
  if (fuse_reply_open(req, fi) != 0) delete snapshot(fi);
}

void Filesystem::releasedir(fuse_req_t req, fuse_file_info *fi) {
  counters_.count(Op::kReleasedir);
  delete snapshot(fi);
  fuse_reply_err(req, 0);
}

void Filesystem::readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info *fi,
                         bool plus) {
  counters_.count(Op::kReaddir);
  uint64_t dir = to_mds(ino);
  DirSnapshot *snap = snapshot(fi);
  if (!snap->filled || off == 0) {
    snap->items.clear();
    snap->items.push_back({".", DirEntry{dir, FileType::kDirectory}});
    snap->items.push_back({"..", DirEntry{0, FileType::kDirectory}});
    if (auto listed = cache_.list(dir, now_ms())) {
      counters_.cache_hit();
      for (auto &[name, e] : *listed) snap->items.push_back({name, e});
    } else {
      int err = read_listing(req, dir, 0, [&](const std::string &name, const DirEntry &e) {
        snap->items.push_back({name, e});
      });
      if (err < 0) {
        fuse_reply_err(req, -err);
        return;
      }
    }
    snap->filled = true;
  }
  std::vector<char> buf(size);
  size_t used = 0;
  for (size_t i = size_t(off); i < snap->items.size(); ++i) {
    const auto &item = snap->items[i];
    const bool dot = item.name == "." || item.name == "..";
    size_t n = 0;
    if (plus) {
      fuse_entry_param e;
      std::memset(&e, 0, sizeof e);
      std::optional<std::pair<InodeAttr, int64_t>> cached;
      if (!dot) cached = cache_.inode(item.entry.ino, now_ms());
      if (cached) {
        InodeAttr a = cached->first;
        overlay_local(&a);
        e = entry_of(a, double(cached->second) / 1000.0);
      } else {
        // No attributes at hand: a plain entry the kernel looks up itself.
        e.attr.st_ino = dot ? ino : item.entry.ino;
        e.attr.st_mode = type_bits(item.entry.type);
      }
      n = fuse_add_direntry_plus(req, buf.data() + used, size - used, item.name.c_str(), &e,
                                 off_t(i + 1));
      if (n > size - used) break;
      if (e.ino != 0) inodes_.looked_up(item.entry.ino);
    } else {
      struct stat st;
      std::memset(&st, 0, sizeof st);
      st.st_ino = dot ? ino : to_fuse(item.entry.ino);
      st.st_mode = type_bits(item.entry.type);
      n = fuse_add_direntry(req, buf.data() + used, size - used, item.name.c_str(), &st,
                            off_t(i + 1));
      if (n > size - used) break;
    }
    used += n;
  }
  fuse_reply_buf(req, buf.data(), used);
}

void Filesystem::setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
                          size_t size, int flags) {
  counters_.count(Op::kSetxattr);
  if (std::strlen(name) > XATTR_NAME_MAX) {
    fuse_reply_err(req, ERANGE);
    return;
  }
  int err = 0;
  request(
      req,
      [&](fsproto::Request::Builder r) {
        auto x = r.initSetxattr();
        x.setIno(to_mds(ino));
        x.setName(name);
        x.setValue(kj::arrayPtr(reinterpret_cast<const kj::byte *>(value), size));
        x.setFlags(uint32_t(flags));
      },
      &err);
  fuse_reply_err(req, -err);
}

void Filesystem::getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size) {
  counters_.count(Op::kGetxattr);
  InodeAttr a;
  double valid = 0;
  if (int err = attr_of(req, to_mds(ino), &a, &valid); err < 0) {
    fuse_reply_err(req, -err);
    return;
  }
  // user.* values are the file's contents as far as xattr(7) goes: reading
  // one needs read permission, which the kernel only checks under
  // default_permissions.
  if (std::strncmp(name, "user.", 5) == 0 && denied(req, a, 4)) {
    fuse_reply_err(req, EACCES);
    return;
  }
  for (const auto &[n, v] : a.xattrs) {
    if (n != name) continue;
    if (size == 0)
      fuse_reply_xattr(req, v.size());
    else if (size < v.size())
      fuse_reply_err(req, ERANGE);
    else
      fuse_reply_buf(req, v.data(), v.size());
    return;
  }
  fuse_reply_err(req, ENODATA);
}

void Filesystem::listxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  counters_.count(Op::kListxattr);
  InodeAttr a;
  double valid = 0;
  if (int err = attr_of(req, to_mds(ino), &a, &valid); err < 0) {
    fuse_reply_err(req, -err);
    return;
  }
  std::string names;
  for (const auto &[n, v] : a.xattrs) names.append(n).push_back('\0');
  if (size == 0)
    fuse_reply_xattr(req, names.size());
  else if (size < names.size())
    fuse_reply_err(req, ERANGE);
  else
    fuse_reply_buf(req, names.data(), names.size());
}

void Filesystem::removexattr(fuse_req_t req, fuse_ino_t ino, const char *name) {
  counters_.count(Op::kRemovexattr);
  int err = 0;
  request(
      req,
      [&](fsproto::Request::Builder r) {
        auto x = r.initRemovexattr();
        x.setIno(to_mds(ino));
        x.setName(name);
      },
      &err);
  fuse_reply_err(req, -err);
}

}  // namespace strata::fuse

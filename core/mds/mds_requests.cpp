// The requests of sdk/proto/fs.capnp, applied to the cache and turned into
// one MetaUpdate each (mds_server.cpp journals it and replies). Each
// handler validates first, then clears conflicting leases of other
// sessions (returning false to wait for their Release), then changes.
#include <fcntl.h>

#include <cerrno>
#include <cstdlib>
#include <ctime>

#include "mds/mds_server.h"
#include "mds/proto_convert.h"

namespace strata::mds {

namespace {

constexpr uint8_t kDirRead = 1, kDirWrite = 2, kFileRead = 3, kFileWrite = 4;
constexpr uint32_t kDirLeases = (1u << kDirRead) | (1u << kDirWrite);
constexpr uint32_t kFileLeases = (1u << kFileRead) | (1u << kFileWrite);
constexpr uint32_t kAllLeases = kDirLeases | kFileLeases;
constexpr uint32_t kDirWriteBit = 1u << kDirWrite;
constexpr uint32_t kFileWriteBit = 1u << kFileWrite;
constexpr size_t kNameMax = 255;
constexpr size_t kSymlinkMax = 4095;
constexpr size_t kXattrTotalMax = 64 * 1024;
// A readdir page's entries stop near this many bytes (the messenger takes 4 MiB).
constexpr size_t kReaddirReplyBytes = 1u << 20;
constexpr uint32_t kRenameNoreplace = 1, kRenameExchange = 2;
constexpr uint32_t kXattrCreate = 1, kXattrReplace = 2;

struct Cred {
  uint32_t uid = 0, gid = 0;
  std::vector<uint32_t> groups;
  bool in_group(uint32_t g) const {
    if (g == gid) return true;
    for (uint32_t x : groups)
      if (x == g) return true;
    return false;
  }
};

Cred cred_of(fsproto::Caller::Reader c) {
  Cred r;
  r.uid = c.getUid();
  r.gid = c.getGid();
  for (uint32_t g : c.getGroups()) r.groups.push_back(g);
  return r;
}

// rwx = 4/2/1, as access(2).
bool may(const InodeRec &i, const Cred &c, uint32_t want) {
  if (c.uid == 0) return !(want & 1) || i.type == FileType::kDirectory || (i.mode & 0111);
  uint32_t bits = c.uid == i.uid      ? (i.mode >> 6) & 7
                  : c.in_group(i.gid) ? (i.mode >> 3) & 7
                                      : i.mode & 7;
  return (bits & want) == want;
}

Time now_time() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return Time{ts.tv_sec, static_cast<uint32_t>(ts.tv_nsec)};
}

std::string name_of(capnp::Data::Reader d) {
  return std::string(reinterpret_cast<const char *>(d.begin()), d.size());
}

// 0 or the errno for a bad entry name.
int check_name(const std::string &n) {
  if (n.size() > kNameMax) return ENAMETOOLONG;
  if (n.empty() || n == "." || n == ".." || n.find('/') != std::string::npos ||
      n.find('\0') != std::string::npos)
    return EINVAL;
  return 0;
}

std::string hex16(Ino ino) {
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(ino));
  return b;
}

bool is_dir(const InodeRec &i) { return i.type == FileType::kDirectory; }

// A file's mode after Linux drops its set-id bits (chown, or a write or
// truncate by someone without CAP_FSETID): S_ISUID always, S_ISGID only
// with group execute (without it, S_ISGID marks mandatory locking).
uint32_t without_set_ids(uint32_t mode) {
  mode &= ~04000u;
  if (mode & 010u) mode &= ~02000u;
  return mode;
}

// A setattr's permission and range checks against the inode as it is
// (SETATTR, and a Create's `then` on the inode it made): 0, or the errno
// and why.
std::pair<int, std::string> check_setattr(const InodeRec &in, fsproto::SetAttr::Reader a,
                                          const Cred &cred, uint64_t max_file_size) {
  const uint32_t mask = a.getMask();
  const bool owner = cred.uid == 0 || cred.uid == in.uid;
  if ((mask & fsproto::SetAttr::MASK_MODE) && !owner)
    return {EPERM, "only the owner or root may chmod"};
  if ((mask & fsproto::SetAttr::MASK_UID) && cred.uid != 0 && a.getUid() != in.uid)
    return {EPERM, "only root may give a file away"};
  if ((mask & fsproto::SetAttr::MASK_GID) && cred.uid != 0 &&
      (cred.uid != in.uid || !cred.in_group(a.getGid())))
    return {EPERM, "chgrp: only the owner, to a group of its own"};
  if (mask & fsproto::SetAttr::MASK_SIZE) {
    if (is_dir(in)) return {EISDIR, "truncate of a directory"};
    if (in.type != FileType::kRegular) return {EINVAL, "truncate of a special file"};
    if (!may(in, cred, 2)) return {EACCES, "truncate: no write permission"};
    if (a.getSize() > max_file_size) return {EFBIG, "size beyond fs_max_file_size"};
  }
  if ((mask & fsproto::SetAttr::MASK_INLINE) && !may(in, cred, 2))
    return {EACCES, "inline data: no write permission"};
  // A writer's truncate or write sends its mtime as a value (the
  // kernel's writeback cache keeps times, and checked utimensat's
  // rules itself with default_permissions): allowed, as "now" would
  // be. Explicit times from utimensat come with the atime.
  const bool writer_mtime = !(mask & fsproto::SetAttr::MASK_ATIME) && may(in, cred, 2);
  if ((mask & (fsproto::SetAttr::MASK_ATIME | fsproto::SetAttr::MASK_MTIME)) && !owner &&
      !writer_mtime)
    return {EPERM, "only the owner or root may set times"};
  if ((mask & (fsproto::SetAttr::MASK_ATIME_NOW | fsproto::SetAttr::MASK_MTIME_NOW)) && !owner &&
      !may(in, cred, 2))
    return {EACCES, "touch: no write permission"};
  return {0, ""};
}

// A checked setattr's mode, owner and time changes on `in` (`now` for the
// "now" flags); its data attributes, ctime and version are the caller's.
void apply_setattr_fields(InodeRec &in, fsproto::SetAttr::Reader a, const Cred &cred, Time now) {
  const uint32_t mask = a.getMask();
  // Ownership first, then the mode: one request with both is a chown
  // followed by a chmod (as a client's merged setattrs mean it), so
  // the mode's set-id bits survive the chown's clearing of them
  // (chown(2): S_ISUID goes, S_ISGID if the group may execute).
  if ((mask & (fsproto::SetAttr::MASK_UID | fsproto::SetAttr::MASK_GID)) && !is_dir(in))
    in.mode = without_set_ids(in.mode);
  if (mask & fsproto::SetAttr::MASK_UID) in.uid = a.getUid();
  if (mask & fsproto::SetAttr::MASK_GID) in.gid = a.getGid();
  if (mask & fsproto::SetAttr::MASK_MODE) {
    in.mode = a.getMode() & 07777;
    if (cred.uid != 0 && !cred.in_group(in.gid)) in.mode &= ~02000u;
  }
  if ((mask & fsproto::SetAttr::MASK_KILL_SUIDGID) && !is_dir(in)) {
    const bool outsider = cred.uid != 0 && !cred.in_group(in.gid);
    in.mode = outsider ? in.mode & ~06000u : without_set_ids(in.mode);
  }
  if (mask & fsproto::SetAttr::MASK_SIZE) {
    if (a.getSize() != in.size) in.mtime = now;
    in.size = a.getSize();
  }
  if (mask & fsproto::SetAttr::MASK_ATIME) in.atime = time_from_proto(a.getAtime());
  if (mask & fsproto::SetAttr::MASK_MTIME) in.mtime = time_from_proto(a.getMtime());
  if (mask & fsproto::SetAttr::MASK_ATIME_NOW) in.atime = now;
  if (mask & fsproto::SetAttr::MASK_MTIME_NOW) in.mtime = now;
  if (mask & fsproto::SetAttr::MASK_BLOCKS) in.blocks = a.getBlocks();
}

}  // namespace

// ---------------------------------------------------------------------------
// Store access through the cache

Result<std::optional<DentryRec>> MdsServer::get_dentry(Ino dir, const std::string &name) {
  if (auto d = cache_.dentry(dir, name)) return std::optional<DentryRec>(std::move(*d));
  if (cache_.complete(dir)) return std::optional<DentryRec>();
  auto r = store_.lookup(dir, name);
  if (!r.ok()) return r.status();
  if (*r) cache_.put_dentry(dir, **r);
  return r;
}

Result<MdsServer::Loaded> MdsServer::resolve(Ino dir, const DentryRec &d) {
  Loaded l;
  l.loc = Loc{dir, d.name};
  l.dtype = d.type;
  if (d.remote || !d.inode) {
    table_.insert(d.ino);
    l.table = true;
    std::optional<InodeRec> in = cache_.inode(d.ino);
    if (!in) {
      auto r = store_.get_inode(d.ino);
      if (!r.ok()) return r.status();
      if (!*r)
        return Status::Error(EIO, "remote dentry " + d.name + " names inode " + hex16(d.ino) +
                                      ", missing from the inode table");
      in = **r;
      cache_.put_inode(*in);
    }
    l.inode = *in;
    return l;
  }
  l.inode = *d.inode;
  where_[d.ino] = l.loc;
  return l;
}

Result<MdsServer::Loaded> MdsServer::load(Ino ino) {
  if (!table_.count(ino)) {
    if (auto w = where_.find(ino); w != where_.end()) {
      Loc loc = w->second;
      auto d = get_dentry(loc.parent, loc.name);
      if (!d.ok()) return d.status();
      if (*d && (*d)->ino == ino) return resolve(loc.parent, **d);
      where_.erase(ino);
    }
  }
  std::optional<InodeRec> in = cache_.inode(ino);
  if (!in) {
    auto r = store_.get_inode(ino);
    if (!r.ok()) return r.status();
    if (!*r) {
      // A primary inode this MDS never saw (it took over after a failover):
      // its back-pointer names the dentry that holds it.
      auto bp = store_.back_pointer(ino);
      if (!bp.ok()) return bp.status();
      if (*bp) {
        auto d = get_dentry((*bp)->parent, (*bp)->name);
        if (!d.ok()) return d.status();
        if (*d && (*d)->ino == ino && !(*d)->remote) {
          where_[ino] = Loc{(*bp)->parent, (*bp)->name};
          return resolve((*bp)->parent, **d);
        }
      }
      return Status::Error(ESTALE, "inode " + hex16(ino) + " is not known to this MDS");
    }
    in = **r;
    cache_.put_inode(*in);
  }
  table_.insert(ino);
  Loaded l;
  l.inode = *in;
  l.table = true;
  l.dtype = in->type;
  return l;
}

void MdsServer::set_dentry(MetaUpdate &u, Ino dir, const DentryRec &d) {
  u.dentries.push_back(DentryChange{dir, d.name, d});
  cache_.put_dentry(dir, d);
  if (!d.remote) where_[d.ino] = Loc{dir, d.name};
}

void MdsServer::remove_dentry(MetaUpdate &u, Ino dir, const std::string &name) {
  u.dentries.push_back(DentryChange{dir, name, std::nullopt});
  cache_.erase_dentry(dir, name);
}

void MdsServer::put_inode(MetaUpdate &u, const Loaded &l) {
  if (l.table) {
    u.inodes.push_back(InodeChange{l.inode.ino, l.inode});
    cache_.put_inode(l.inode);
    return;
  }
  DentryRec d;
  d.name = l.loc.name;
  d.ino = l.inode.ino;
  d.type = l.inode.type;
  d.inode = l.inode;
  set_dentry(u, l.loc.parent, d);
}

bool MdsServer::dir_empty(Ino dir) {
  if (auto known = cache_.known_empty(dir)) return *known;
  auto page = store_.list(dir, "", 1);
  return page.ok() && page->entries.empty();
}

// One link of `victim` went away (unlink, rename over it): its nlink drops;
// at zero it goes, to the stray directory while a client has it open.
// The caller already removed the dentry.
void MdsServer::drop_link(MetaUpdate &u, Loaded &victim, Time now) {
  InodeRec &in = victim.inode;
  in.ctime = now;
  in.version++;
  if (is_dir(in)) {
    in.nlink = 0;
    where_.erase(in.ino);
    cache_.forget_dir(in.ino);
    u.removed_dirs.push_back(in.ino);
    u.dropped_back_pointers.push_back(in.ino);
    return;
  }
  in.nlink = in.nlink > 0 ? in.nlink - 1 : 0;
  if (in.nlink > 0) {
    if (victim.table) put_inode(u, victim);
    return;
  }
  if (victim.table) {
    u.inodes.push_back(InodeChange{in.ino, std::nullopt});
    cache_.erase_inode(in.ino);
    table_.erase(in.ino);
  }
  where_.erase(in.ino);
  if (in.type == FileType::kRegular && holds_file_lease(in.ino)) {
    DentryRec d;
    d.name = hex16(in.ino);
    d.ino = in.ino;
    d.type = in.type;
    d.inode = in;
    set_dentry(u, kStrayIno, d);
    strays_.insert(in.ino);
    return;
  }
  if (!victim.table) u.dropped_back_pointers.push_back(in.ino);
  if (in.type == FileType::kRegular) purge_file(u, in);
}

void MdsServer::purge_file(MetaUpdate &u, const InodeRec &in) {
  const bool unreported = unreported_writes_.erase(in.ino) > 0;
  // An inline file has no data objects, unless a client died writing them.
  if (in.data_inline && !unreported) return;
  // One object past the known end (object 0 of an inline file): where an
  // unreported write most likely went.
  uint64_t size = in.data_inline ? 0 : in.size;
  if (unreported) size += in.object_size ? in.object_size : 1;
  u.purges.push_back(PurgeRec{in.ino, size, in.data_pool, in.object_size});
}

std::pair<int, std::string> MdsServer::apply_data_attrs(InodeRec &in, fsproto::SetAttr::Reader a,
                                                        bool session_inline) const {
  const uint32_t mask = a.getMask();
  const std::string what = "inode " + std::to_string(in.ino);
  if (mask & fsproto::SetAttr::MASK_INLINE) {
    if (in.type != FileType::kRegular) return {EINVAL, what + ": inline data of a non-file"};
    if (!a.getDataInline()) {
      in.data_inline = false;
      in.inline_data.clear();
      return {0, ""};
    }
    if (!in.data_inline)
      return {EINVAL, what + ": its data is in objects; it cannot become inline again"};
    auto d = a.getInlineData();
    if (d.size() > kInlineDataHardMax)
      return {EFBIG, what + ": " + std::to_string(d.size()) + " bytes of inline data (at most " +
                         std::to_string(kInlineDataHardMax) + ")"};
    in.inline_data.assign(reinterpret_cast<const char *>(d.begin()), d.size());
  } else if ((mask & fsproto::SetAttr::MASK_SIZE) && in.data_inline && !session_inline) {
    // A client that knows nothing of inline data would put the file's
    // bytes in objects nobody reads: only an empty file may go over.
    if (!in.inline_data.empty())
      return {EOPNOTSUPP, what + ": its data is inline and this client does not support that"};
    in.data_inline = false;
  }
  // Bytes past the end are gone (a truncate down, then up, reads zeros).
  if (in.data_inline && in.inline_data.size() > in.size) in.inline_data.resize(in.size);
  return {0, ""};
}

void MdsServer::maybe_purge_stray(Ino ino) {
  if (!strays_.count(ino) || holds_file_lease(ino)) return;
  strays_.erase(ino);
  auto d = get_dentry(kStrayIno, hex16(ino));
  MetaUpdate u;
  remove_dentry(u, kStrayIno, hex16(ino));
  where_.erase(ino);
  u.dropped_back_pointers.push_back(ino);
  if (d.ok() && *d && (*d)->inode) purge_file(u, *(*d)->inode);
  store_.submit(std::move(u), [this](Status st) {
    if (std::abs(st.code()) == ECANCELED && !fenced_.exchange(true) && opts_.on_fenced)
      opts_.on_fenced(st);
  });
}

// ---------------------------------------------------------------------------
// The requests

bool MdsServer::execute(Session &s, fsproto::Request::Reader req, Outcome &o) {
  const Cred cred = cred_of(req.getCaller());
  // The client's time for a change it already showed (fs.capnp,
  // Request.time), else ours.
  const Time stamp = [&] {
    if (req.hasTime() && (req.getTime().getSec() != 0 || req.getTime().getNsec() != 0))
      return time_from_proto(req.getTime());
    return now_time();
  }();
  const uint64_t sid = s.id;
  auto lease_out = [&](Ino ino, const LeaseHeld &l) {
    o.leases.push_back(LeaseOut{ino, l.kind, l.seq, l.expires, l.complete});
  };
  // Set when a handler must wait for another session's Release.
  bool waiting = false;
  // Once per request: whether the cluster takes more data (MdsServerOptions::full).
  // A Batch's requests are taken anyway: the client answered them before
  // it could know (its next reply tells it), and refusing them now would
  // take back what the application was told (a file it wrote would
  // vanish). Their growth is one batch's worth, well inside the gap to
  // the failsafe ratio.
  const std::string full_why = opts_.full ? opts_.full() : std::string();
  o.cluster_full = !full_why.empty();
  const bool refuse_growth = o.cluster_full && !o.batched;
  auto refuse_full = [&](const std::string &what) {
    o.fail(ENOSPC, what + ": the cluster is full (" + full_why +
                       "): only deletes and changes that take no space go through");
  };
  // A checked setattr on `in` (SETATTR, and Create.then on the new inode).
  auto apply_setattr = [&](InodeRec &in, fsproto::SetAttr::Reader a) {
    apply_setattr_fields(in, a, cred, stamp);
    auto e = apply_data_attrs(in, a, s.inline_data);
    if (e.first != 0) return e;
    in.ctime = (a.getMask() & fsproto::SetAttr::MASK_CTIME) ? time_from_proto(a.getCtime()) : stamp;
    in.version++;
    return e;
  };
  // Another session's dirWrite on a directory means its entries, its own
  // attributes and the inodes inline in it may have changed in that
  // session's batches not yet sent: revoke it (the holder flushes first)
  // before this session sees any of them.
  // Likewise another session's fileWrite on a file: its size and times
  // are that session's until it reports them (it may write out a closed
  // file in the background), so revoke it before showing the inode.
  auto reveal_file = [&](const InodeRec &in) {
    return is_dir(in) || clear_conflicts(sid, in.ino, kFileWriteBit);
  };
  auto reveal = [&](const Loaded &l) {
    bool ok = reveal_file(l.inode);
    if (is_dir(l.inode)) ok &= clear_conflicts(sid, l.inode.ino, kDirWriteBit);
    if (!l.table && l.loc.parent) ok &= clear_conflicts(sid, l.loc.parent, kDirWriteBit);
    return ok;
  };
  // Granting fileWrite on an inode inline in a directory: other sessions
  // may cache its attributes under their lease on the directory, and they
  // change here without the MDS seeing it: revoke those first.
  auto before_file_write = [&](const Loaded &l) {
    return l.table || !l.loc.parent || clear_conflicts(sid, l.loc.parent, kDirLeases);
  };
  // A loaded inode, or false with the failure to report (or `waiting`).
  // Locks pass expose=false: they do not look at the inode's contents.
  auto need = [&](Ino ino, Loaded &out, bool expose = true) -> bool {
    auto l = load(ino);
    if (!l.ok()) {
      o.fail(std::abs(l.status().code()) ? std::abs(l.status().code()) : EIO, l.status().message());
      return false;
    }
    out = std::move(*l);
    if (expose && !reveal(out)) {
      waiting = true;
      return false;
    }
    return true;
  };
  auto need_dir = [&](Ino ino, Loaded &out, uint32_t want) -> bool {
    if (!need(ino, out)) return false;
    if (!is_dir(out.inode)) {
      o.fail(ENOTDIR, "inode " + hex16(ino) + " is not a directory");
      return false;
    }
    if (!may(out.inode, cred, want)) {
      o.fail(EACCES, "no permission on directory " + hex16(ino));
      return false;
    }
    return true;
  };
  // A directory's own inode lives in its parent: its parent's dirRead
  // holders cache it too.
  auto clear_inode = [&](const Loaded &l) {
    bool ok = clear_conflicts(sid, l.inode.ino, kAllLeases);
    if (!l.table && l.loc.parent) ok &= clear_conflicts(sid, l.loc.parent, kDirLeases);
    return ok;
  };
  auto touch_dir = [&](Loaded &dir, Time now) {
    dir.inode.mtime = now;
    dir.inode.ctime = now;
    dir.inode.version++;
  };

  switch (req.which()) {
    case fsproto::Request::LOOKUP: {
      auto q = req.getLookup();
      std::string name = name_of(q.getName());
      Loaded dir;
      if (!need_dir(q.getParent(), dir, 1)) return !waiting;
      if (name.size() > kNameMax) return o.fail(ENAMETOOLONG, "name longer than 255 bytes"), true;
      auto d = get_dentry(dir.inode.ino, name);
      if (!d.ok()) return o.fail(EIO, d.status().message()), true;
      std::optional<Loaded> child;
      if (*d) {
        auto c = resolve(dir.inode.ino, **d);
        if (!c.ok()) return o.fail(EIO, c.status().message()), true;
        // Wait before granting anything: a lease granted by an attempt that
        // then waits would make the writer's own flush revoke it, and the
        // retry grant it again (the two would chase each other until the
        // writer's lease ran out).
        if (!reveal_file(c->inode)) return false;
        child = std::move(*c);
      }
      lease_out(dir.inode.ino, grant(sid, dir.inode.ino, dir_lease_kind(s, dir.inode.ino)));
      o.parent = dir.inode;
      if (!child) return o.fail(ENOENT, "no entry " + name), true;
      o.inode = child->inode;
      return true;
    }
    case fsproto::Request::GETATTR:
    case fsproto::Request::LOOKUP_INO: {
      Ino ino = req.which() == fsproto::Request::GETATTR ? req.getGetattr().getIno()
                                                         : req.getLookupIno().getIno();
      Loaded l;
      if (!need(ino, l)) return !waiting;
      o.inode = l.inode;
      return true;
    }
    case fsproto::Request::SETATTR: {
      auto q = req.getSetattr();
      auto a = q.getAttr();
      Loaded l;
      if (!need(q.getIno(), l)) return !waiting;
      InodeRec &in = l.inode;
      if (auto e = check_setattr(in, a, cred, opts_.max_file_size); e.first != 0)
        return o.fail(e.first, e.second), true;
      if (refuse_growth && (a.getMask() & fsproto::SetAttr::MASK_INLINE) && a.getDataInline() &&
          a.getInlineData().size() > in.inline_data.size())
        return refuse_full("inline data of inode " + std::to_string(in.ino)), true;
      if (!clear_inode(l)) return false;
      if (auto e = apply_setattr(in, a); e.first != 0) return o.fail(e.first, e.second), true;
      put_inode(o.update, l);
      o.mutated = true;
      o.inode = in;
      return true;
    }
    case fsproto::Request::CREATE: {
      auto q = req.getCreate();
      std::string name = name_of(q.getName());
      Loaded dir;
      if (!need_dir(q.getParent(), dir, 3)) return !waiting;
      if (int e = check_name(name))
        return o.fail(e == EINVAL && (name == "." || name == "..") ? EEXIST : e, "bad name"), true;
      auto type = static_cast<FileType>(q.getType());
      if (type == FileType::kUnknown || static_cast<uint8_t>(type) > 7)
        return o.fail(EINVAL, "create: bad file type"), true;
      if (type == FileType::kSymlink &&
          (q.getSymlinkTarget().size() == 0 || q.getSymlinkTarget().size() > kSymlinkMax))
        return o.fail(q.getSymlinkTarget().size() ? ENAMETOOLONG : ENOENT, "bad symlink target"),
               true;
      // Folded setattrs (Create.then) only where the create surely makes
      // the inode, and only what cannot depend on the MDS's clock: mode,
      // owner, times, and a size report with its inline bytes.
      const bool has_then = q.hasThen() && q.getThen().getMask() != 0;
      if (has_then) {
        constexpr uint32_t kThenMasks =
            fsproto::SetAttr::MASK_MODE | fsproto::SetAttr::MASK_UID | fsproto::SetAttr::MASK_GID |
            fsproto::SetAttr::MASK_ATIME | fsproto::SetAttr::MASK_MTIME |
            fsproto::SetAttr::MASK_CTIME | fsproto::SetAttr::MASK_KILL_SUIDGID |
            fsproto::SetAttr::MASK_SIZE | fsproto::SetAttr::MASK_BLOCKS |
            fsproto::SetAttr::MASK_INLINE;
        if (!q.getExclusive())
          return o.fail(EINVAL, "create: `then` needs an exclusive create"), true;
        if (q.getThen().getMask() & ~kThenMasks)
          return o.fail(EINVAL, "create: `then` sets only mode, owner, times and size"), true;
      }
      const Ino chosen = q.getIno();
      if (chosen != 0) {
        if (!may_use_ino(s, chosen, req.getReplay()))
          return o.fail(EINVAL, "inode " + std::to_string(chosen) +
                                    " was not delegated to session " + std::to_string(sid)),
                 true;
        if (s.used.count(chosen))
          return o.fail(EEXIST, "inode " + std::to_string(chosen) +
                                    " was already used by session " + std::to_string(sid)),
                 true;
      }
      auto existing = get_dentry(dir.inode.ino, name);
      if (!existing.ok()) return o.fail(EIO, existing.status().message()), true;
      uint8_t want = static_cast<uint8_t>(q.getWantLease());
      if (*existing) {
        if (q.getExclusive() || type != FileType::kRegular)
          return o.fail(EEXIST, name + " exists"), true;
        auto child = resolve(dir.inode.ino, **existing);
        if (!child.ok()) return o.fail(EIO, child.status().message()), true;
        if (is_dir(child->inode)) return o.fail(EISDIR, name + " is a directory"), true;
        if (want == kFileRead || want == kFileWrite) {
          uint32_t mask = want == kFileWrite ? kFileLeases : (1u << kFileWrite);
          if (!clear_conflicts(sid, child->inode.ino, mask)) return false;
          if (want == kFileWrite && !before_file_write(*child)) return false;
          lease_out(child->inode.ino, grant(sid, child->inode.ino, want));
        }
        o.inode = child->inode;
        o.parent = dir.inode;
        return true;
      }
      if (refuse_growth) return refuse_full("create " + name), true;
      if (!clear_conflicts(sid, dir.inode.ino, kDirLeases)) return false;
      if (!dir.table && dir.loc.parent && !clear_conflicts(sid, dir.loc.parent, kDirLeases))
        return false;
      Time now = stamp;
      InodeRec in;
      in.ino = chosen ? chosen : ino_next_++;
      in.type = type;
      in.mode = q.getMode() & ~q.getUmask() & 07777;
      in.uid = cred.uid;
      in.gid = (dir.inode.mode & 02000) ? dir.inode.gid : cred.gid;
      if (is_dir(in) && (dir.inode.mode & 02000)) in.mode |= 02000;
      in.nlink = is_dir(in) ? 2 : 1;
      in.atime = in.mtime = in.ctime = in.btime = now;
      in.rdev = q.getRdev();
      if (type == FileType::kSymlink) {
        in.symlink_target = q.getSymlinkTarget();
        in.size = in.symlink_target.size();
      }
      auto layout = q.getLayout();
      in.object_size = layout.getObjectSize() ? layout.getObjectSize() : 4u << 20;
      in.data_pool = opts_.data_pool;
      // Empty, so trivially inline: its bytes reach the MDS with its size
      // report while small, and no data object is ever made for it.
      in.data_inline = type == FileType::kRegular && s.inline_data && q.getDataInline();
      in.version = 1;
      if (has_then) {
        auto t = q.getThen();
        if (auto e = check_setattr(in, t, cred, opts_.max_file_size); e.first != 0)
          return o.fail(e.first, "create " + name + ", then: " + e.second), true;
        if (auto e = apply_setattr(in, t); e.first != 0)
          return o.fail(e.first, "create " + name + ", then: " + e.second), true;
      }
      if (!chosen) o.update.ino_next = ino_next_;
      DentryRec d;
      d.name = name;
      d.ino = in.ino;
      d.type = type;
      d.inode = in;
      set_dentry(o.update, dir.inode.ino, d);
      if (is_dir(in)) cache_.mark_complete(in.ino);
      touch_dir(dir, now);
      if (is_dir(in)) dir.inode.nlink++;
      put_inode(o.update, dir);
      o.mutated = true;
      o.inode = in;
      o.parent = dir.inode;
      if (want == kFileRead || want == kFileWrite) lease_out(in.ino, grant(sid, in.ino, want));
      // An asynchronous client may fill its new directory at once: nobody
      // else knows it yet, and it is empty (complete).
      if (is_dir(in) && s.async) {
        LeaseHeld &l = grant(sid, in.ino, kDirWrite);
        l.listing = l.complete = true;
        lease_out(in.ino, l);
      }
      if (chosen) {
        for (const InoSpan &r : s.ranges)
          if (r.contains(chosen)) s.used.insert(chosen);
        if (refill_due(s, chosen)) o.delegated = take_range(s, o.update);
      }
      return true;
    }
    case fsproto::Request::LINK: {
      auto q = req.getLink();
      std::string name = name_of(q.getNewName());
      Loaded target, dir;
      if (!need(q.getIno(), target)) return !waiting;
      if (is_dir(target.inode))
        return o.fail(EPERM, "hard links to directories are not allowed"), true;
      if (refuse_growth) return refuse_full("link " + name), true;
      if (!need_dir(q.getNewParent(), dir, 3)) return !waiting;
      if (int e = check_name(name)) return o.fail(e, "bad name"), true;
      auto existing = get_dentry(dir.inode.ino, name);
      if (!existing.ok()) return o.fail(EIO, existing.status().message()), true;
      if (*existing) return o.fail(EEXIST, name + " exists"), true;
      bool ok = clear_conflicts(sid, dir.inode.ino, kDirLeases);
      ok &= clear_inode(target);
      if (!ok) return false;
      Time now = stamp;
      InodeRec &in = target.inode;
      in.nlink++;
      in.ctime = now;
      in.version++;
      if (!target.table) {
        // The inode moves to the inode table; both names become remote.
        DentryRec old;
        old.name = target.loc.name;
        old.ino = in.ino;
        old.type = in.type;
        old.remote = true;
        set_dentry(o.update, target.loc.parent, old);
        o.update.dropped_back_pointers.push_back(in.ino);
        where_.erase(in.ino);
        target.table = true;
        table_.insert(in.ino);
      }
      put_inode(o.update, target);
      DentryRec nd;
      nd.name = name;
      nd.ino = in.ino;
      nd.type = in.type;
      nd.remote = true;
      set_dentry(o.update, dir.inode.ino, nd);
      touch_dir(dir, now);
      if (target.loc.parent == dir.inode.ino && !dir.table) {
        // (A directory's inode is never in this directory: nothing to merge.)
      }
      put_inode(o.update, dir);
      o.mutated = true;
      o.inode = in;
      o.parent = dir.inode;
      return true;
    }
    case fsproto::Request::UNLINK: {
      auto q = req.getUnlink();
      std::string name = name_of(q.getName());
      Loaded dir;
      if (!need_dir(q.getParent(), dir, 3)) return !waiting;
      if (name.size() > kNameMax) return o.fail(ENAMETOOLONG, "name longer than 255 bytes"), true;
      if (name == ".") return o.fail(EINVAL, "rmdir ."), true;
      if (name == "..") return o.fail(ENOTEMPTY, "rmdir .."), true;
      auto d = get_dentry(dir.inode.ino, name);
      if (!d.ok()) return o.fail(EIO, d.status().message()), true;
      if (!*d) return o.fail(ENOENT, "no entry " + name), true;
      auto victim = resolve(dir.inode.ino, **d);
      if (!victim.ok()) return o.fail(EIO, victim.status().message()), true;
      bool vdir = is_dir(victim->inode);
      // Its emptiness may depend on batches of a dirWrite holder.
      if (vdir && !reveal(*victim)) return false;
      if (q.getDirectory() && !vdir) return o.fail(ENOTDIR, name + " is not a directory"), true;
      if (!q.getDirectory() && vdir) return o.fail(EISDIR, name + " is a directory"), true;
      if ((dir.inode.mode & 01000) && cred.uid != 0 && cred.uid != dir.inode.uid &&
          cred.uid != victim->inode.uid)
        return o.fail(EPERM, "sticky directory: not the owner"), true;
      if (vdir && !dir_empty(victim->inode.ino))
        return o.fail(ENOTEMPTY, name + " is not empty"), true;
      bool ok = clear_conflicts(sid, dir.inode.ino, kDirLeases);
      if (vdir) ok &= clear_conflicts(sid, victim->inode.ino, kDirLeases);
      if (!dir.table && dir.loc.parent) ok &= clear_conflicts(sid, dir.loc.parent, kDirLeases);
      if (!ok) return false;
      Time now = stamp;
      remove_dentry(o.update, dir.inode.ino, name);
      Loaded v = *victim;
      if (q.getClosed() && !vdir) drop_leases(sid, v.inode.ino, 0, true);
      drop_link(o.update, v, stamp);
      touch_dir(dir, now);
      if (vdir) dir.inode.nlink--;
      put_inode(o.update, dir);
      o.mutated = true;
      o.replaced = v.inode;
      o.parent = dir.inode;
      return true;
    }
    case fsproto::Request::RENAME: {
      auto q = req.getRename();
      std::string name = name_of(q.getName()), nname = name_of(q.getNewName());
      uint32_t flags = q.getFlags();
      if ((flags & kRenameNoreplace) && (flags & kRenameExchange))
        return o.fail(EINVAL, "RENAME_NOREPLACE with RENAME_EXCHANGE"), true;
      if (flags & ~(kRenameNoreplace | kRenameExchange))
        return o.fail(EINVAL, "unknown rename flags"), true;
      Loaded sdir, ddir;
      if (!need_dir(q.getParent(), sdir, 3)) return !waiting;
      if (!need_dir(q.getNewParent(), ddir, 3)) return !waiting;
      if (name.size() > kNameMax || nname.size() > kNameMax)
        return o.fail(ENAMETOOLONG, "name longer than 255 bytes"), true;
      if (check_name(name) || check_name(nname)) return o.fail(EINVAL, "bad name"), true;
      bool same_dir = sdir.inode.ino == ddir.inode.ino;
      auto sd = get_dentry(sdir.inode.ino, name);
      if (!sd.ok()) return o.fail(EIO, sd.status().message()), true;
      if (!*sd) return o.fail(ENOENT, "no entry " + name), true;
      auto src = resolve(sdir.inode.ino, **sd);
      if (!src.ok()) return o.fail(EIO, src.status().message()), true;
      auto dd = get_dentry(ddir.inode.ino, nname);
      if (!dd.ok()) return o.fail(EIO, dd.status().message()), true;
      std::optional<Loaded> dst;
      if (*dd) {
        auto r = resolve(ddir.inode.ino, **dd);
        if (!r.ok()) return o.fail(EIO, r.status().message()), true;
        dst = *r;
      }
      if (dst && !reveal(*dst)) return false;
      if ((flags & kRenameExchange) && !dst)
        return o.fail(ENOENT, "exchange: no entry " + nname), true;
      if ((flags & kRenameNoreplace) && dst) return o.fail(EEXIST, nname + " exists"), true;
      if (dst && dst->inode.ino == src->inode.ino) {
        o.inode = src->inode;  // same file (or hard links of it): nothing to do
        return true;
      }
      // A directory may not move into its own subtree.
      auto inside = [&](Ino dir, Ino ancestor) {
        for (Ino cur = dir; cur != kRootIno;) {
          if (cur == ancestor) return true;
          auto w = where_.find(cur);
          if (w == where_.end()) return false;
          cur = w->second.parent;
        }
        return ancestor == kRootIno;
      };
      if (is_dir(src->inode) && inside(ddir.inode.ino, src->inode.ino))
        return o.fail(EINVAL, "a directory cannot move into itself"), true;
      if ((flags & kRenameExchange) && is_dir(dst->inode) && inside(sdir.inode.ino, dst->inode.ino))
        return o.fail(EINVAL, "a directory cannot move into itself"), true;
      if (dst && !(flags & kRenameExchange)) {
        if (is_dir(src->inode) && !is_dir(dst->inode))
          return o.fail(ENOTDIR, nname + " is not a directory"), true;
        if (!is_dir(src->inode) && is_dir(dst->inode))
          return o.fail(EISDIR, nname + " is a directory"), true;
        if (is_dir(dst->inode) && !dir_empty(dst->inode.ino))
          return o.fail(ENOTEMPTY, nname + " is not empty"), true;
      }
      if ((sdir.inode.mode & 01000) && cred.uid != 0 && cred.uid != sdir.inode.uid &&
          cred.uid != src->inode.uid)
        return o.fail(EPERM, "sticky directory: not the owner"), true;
      bool ok = clear_conflicts(sid, sdir.inode.ino, kDirLeases);
      ok &= clear_conflicts(sid, ddir.inode.ino, kDirLeases);
      if (dst && is_dir(dst->inode)) ok &= clear_conflicts(sid, dst->inode.ino, kDirLeases);
      if (!ok) return false;
      Time now = stamp;
      Loaded s2 = *src;
      s2.inode.ctime = now;
      s2.inode.version++;
      DentryRec moved = **sd;
      moved.name = nname;
      if (!moved.remote) moved.inode = s2.inode;
      remove_dentry(o.update, sdir.inode.ino, name);
      if (dst && (flags & kRenameExchange)) {
        DentryRec back = **dd;
        back.name = name;
        if (!back.remote) {
          back.inode->ctime = now;
          back.inode->version++;
        }
        set_dentry(o.update, sdir.inode.ino, back);
        if (!same_dir) {
          int delta = (is_dir(src->inode) ? 1 : 0) - (is_dir(dst->inode) ? 1 : 0);
          sdir.inode.nlink -= delta;
          ddir.inode.nlink += delta;
        }
      } else if (dst) {
        Loaded v = *dst;
        drop_link(o.update, v, stamp);
        o.replaced = v.inode;
        if (is_dir(v.inode)) ddir.inode.nlink--;
      }
      set_dentry(o.update, ddir.inode.ino, moved);
      if (is_dir(src->inode) && !same_dir && !(flags & kRenameExchange)) {
        sdir.inode.nlink--;
        ddir.inode.nlink++;
      }
      if (s2.table) put_inode(o.update, s2);
      touch_dir(ddir, now);
      if (same_dir) {
        put_inode(o.update, ddir);
      } else {
        touch_dir(sdir, now);
        put_inode(o.update, sdir);
        // Re-read the destination's location: it may be inside the source.
        if (!ddir.table && ddir.loc.parent == sdir.inode.ino) {
          auto w = where_.find(ddir.inode.ino);
          if (w != where_.end()) ddir.loc = w->second;
        }
        put_inode(o.update, ddir);
      }
      o.mutated = true;
      o.inode = s2.inode;
      o.parent = ddir.inode;
      if (!same_dir) o.other_parent = sdir.inode;
      return true;
    }
    case fsproto::Request::READDIR: {
      auto q = req.getReaddir();
      Loaded dir;
      if (!need_dir(q.getIno(), dir, 4)) return !waiting;
      size_t max = q.getMaxEntries() ? std::min<size_t>(q.getMaxEntries(), 4096) : 256;
      std::string after = name_of(q.getAfter());
      auto page = store_.list(dir.inode.ino, after, max);
      if (!page.ok()) return o.fail(EIO, page.status().message()), true;
      bool revealed = true;
      // Inline data and xattrs make entries big: a page stops short of
      // the messenger's payload limit (the client asks on after the last).
      size_t bytes = 0;
      bool cut = false;
      for (const DentryRec &d : page->entries) {
        auto r = resolve(dir.inode.ino, d);
        if (!r.ok()) return o.fail(EIO, r.status().message()), true;
        size_t size = listing_entry_bytes(d.name, r->inode);
        if (!o.entries.empty() && bytes + size > kReaddirReplyBytes) {
          cut = true;
          break;
        }
        bytes += size;
        if (!d.remote) cache_.put_dentry(dir.inode.ino, d);
        revealed &= reveal_file(r->inode);
        o.entries.push_back(EntryOut{d.name, r->inode});
      }
      if (!revealed) return false;
      o.end = page->end && !cut;
      LeaseHeld &l = grant(sid, dir.inode.ino, dir_lease_kind(s, dir.inode.ino));
      if (after.empty()) l.listing = true;
      if (o.end && l.listing) l.complete = true;
      lease_out(dir.inode.ino, l);
      o.inode = dir.inode;
      return true;
    }
    case fsproto::Request::SETXATTR:
    case fsproto::Request::REMOVEXATTR: {
      bool set = req.which() == fsproto::Request::SETXATTR;
      Ino ino = set ? req.getSetxattr().getIno() : req.getRemovexattr().getIno();
      std::string name = set ? std::string(req.getSetxattr().getName())
                             : std::string(req.getRemovexattr().getName());
      Loaded l;
      if (!need(ino, l)) return !waiting;
      if (name.empty() || name.size() > kNameMax) return o.fail(ERANGE, "bad xattr name"), true;
      if (set && refuse_growth) return refuse_full("setxattr " + name), true;
      if (name.rfind("trusted.", 0) == 0 || name.rfind("security.", 0) == 0) {
        if (cred.uid != 0) return o.fail(EPERM, "trusted./security. xattrs need root"), true;
      } else if (name.rfind("user.", 0) == 0) {
        if (!may(l.inode, cred, 2)) return o.fail(EACCES, "no write permission"), true;
      } else {
        return o.fail(EOPNOTSUPP, "xattr namespace not supported: " + name), true;
      }
      auto &xs = l.inode.xattrs;
      bool exists = xs.count(name) > 0;
      if (set) {
        uint32_t flags = req.getSetxattr().getFlags();
        auto v = req.getSetxattr().getValue();
        std::string value(reinterpret_cast<const char *>(v.begin()), v.size());
        if ((flags & kXattrCreate) && exists)
          return o.fail(EEXIST, "xattr " + name + " exists"), true;
        if ((flags & kXattrReplace) && !exists) return o.fail(ENODATA, "no xattr " + name), true;
        size_t total = name.size() + value.size();
        for (const auto &[k, val] : xs)
          if (k != name) total += k.size() + val.size();
        if (total > kXattrTotalMax)
          return o.fail(ENOSPC, "xattrs of an inode are capped at 64 KiB"), true;
        if (!clear_inode(l)) return false;
        xs[name] = std::move(value);
      } else {
        if (!exists) return o.fail(ENODATA, "no xattr " + name), true;
        if (!clear_inode(l)) return false;
        xs.erase(name);
      }
      l.inode.ctime = stamp;
      l.inode.version++;
      put_inode(o.update, l);
      o.mutated = true;
      o.inode = l.inode;
      return true;
    }
    case fsproto::Request::OPEN: {
      auto q = req.getOpen();
      Loaded l;
      if (!need(q.getIno(), l)) return !waiting;
      uint32_t acc = q.getFlags() & O_ACCMODE;
      bool wr = acc == O_WRONLY || acc == O_RDWR || (q.getFlags() & O_TRUNC);
      if (is_dir(l.inode) && wr) return o.fail(EISDIR, "open of a directory for writing"), true;
      uint32_t want = (acc == O_RDONLY || acc == O_RDWR ? 4 : 0) | (wr ? 2 : 0);
      if (!may(l.inode, cred, want)) return o.fail(EACCES, "open: permission denied"), true;
      uint8_t kind = static_cast<uint8_t>(q.getWantLease());
      if (kind != kFileRead && kind != kFileWrite) kind = wr ? kFileWrite : kFileRead;
      if (is_dir(l.inode)) {
        o.inode = l.inode;
        return true;
      }
      if (l.inode.data_inline && !s.inline_data)
        return o.fail(EOPNOTSUPP, "inode " + std::to_string(l.inode.ino) +
                                      ": its data is inline and this client does not support that"),
               true;
      uint32_t mask = kind == kFileWrite ? kFileLeases : (1u << kFileWrite);
      if (!clear_conflicts(sid, l.inode.ino, mask)) return false;
      if (kind == kFileWrite && !before_file_write(l)) return false;
      // A reader after the writer: the writer's flushed size is in the inode now.
      auto fresh = load(l.inode.ino);
      if (fresh.ok()) l = *fresh;
      lease_out(l.inode.ino, grant(sid, l.inode.ino, kind));
      o.inode = l.inode;
      return true;
    }
    case fsproto::Request::STATFS: {
      o.statfs = opts_.statfs ? opts_.statfs() : StatfsFigures{};
      o.files = ino_next_ - kFirstUserIno + 1;
      return true;
    }
    case fsproto::Request::SETLOCK:
    case fsproto::Request::GETLOCK: {
      bool set = req.which() == fsproto::Request::SETLOCK;
      Ino ino = set ? req.getSetlock().getIno() : req.getGetlock().getIno();
      auto lr = set ? req.getSetlock().getLock() : req.getGetlock().getLock();
      Loaded l;
      if (!need(ino, l, false)) return !waiting;
      FileLock fl;
      fl.session = sid;
      fl.owner = lr.getOwner();
      fl.pid = lr.getPid();
      fl.kind = static_cast<LockKindM>(lr.getKind());
      fl.type = static_cast<LockTypeM>(lr.getType());
      if (fl.kind == LockKindM::kFlock) {
        fl.start = 0;
        fl.end = UINT64_MAX;
      } else {
        fl.start = lr.getStart();
        fl.end = lr.getLength() == 0 || lr.getLength() > UINT64_MAX - fl.start
                     ? UINT64_MAX
                     : fl.start + lr.getLength();
      }
      auto c = locks_.conflict(ino, fl);
      if (!set) {
        if (c)
          o.lock = *c;
        else
          o.lock_none = true;
        return true;
      }
      if (c) {
        if (!req.getSetlock().getWait()) return o.fail(EAGAIN, "lock held by another owner"), true;
        lock_waiters_.push_back(LockWaiter{sid, req.getTid(), ino, fl});
        o.deferred = true;
        return true;
      }
      if (locks_.apply(ino, fl)) wake_ = true;  // waiters may go, after this reply
      return true;
    }
    case fsproto::Request::FSYNC: {
      if (s.unsafe.empty()) return true;
      s.fsyncs.emplace_back(req.getTid(), req.getTid());
      o.deferred = true;
      store_.hurry();  // someone waits: no journal gather
      return true;
    }
    case fsproto::Request::RENEW_LEASES: {
      uint64_t exp = now_ms() + opts_.lease_ms;
      for (Ino ino : req.getRenewLeases().getInos()) {
        auto it = leases_.find(ino);
        if (it == leases_.end()) continue;
        lease_expiry_.emplace(exp, ino);
        for (LeaseHeld &l : it->second)
          if (l.session == sid && !l.revoking) {
            l.expires = exp;
            lease_out(ino, l);
          }
      }
      return true;
    }
  }
  o.fail(EOPNOTSUPP, "unknown request kind");
  return true;
}

}  // namespace strata::mds

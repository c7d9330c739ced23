// Filesystem: answering the MDS's Revoke. Runs on the MessageWorker's
// thread (never a FUSE worker: the kernel notifications below may wait
// for FUSE requests in flight on the same inode).
//
// Order matters: the kernel forgets first (no stale entry or page is
// served after the Release), buffered data and the local size go out,
// and only then the Release lets the MDS apply the other client's change.
#include <algorithm>
#include <cerrno>

#include "filesystem.h"
#include "proto_convert.h"

namespace strata::fuse {

void Filesystem::handle_revokes(const std::vector<fsproto::Revoke::Reader> &revokes) {
  capnp::MallocMessageBuilder msg;
  auto rel = msg.initRoot<fsproto::Release>();
  // Every lease of every Revoke that came meanwhile, answered by one
  // Release: the MDS retries what waited for them once, not per lease (a
  // readdir by another client revokes a lease per file it lists).
  std::vector<fsproto::Lease::Reader> leases;
  for (const auto &r : revokes)
    for (auto l : r.getLeases()) leases.push_back(l);
  auto out = rel.initLeases(uint32_t(leases.size()));
  struct Flushed {
    uint64_t ino = 0, size = 0;
    Time mtime, ctime;
    int64_t blocks = -1;
    DataReport data;
  };
  std::vector<Flushed> flushed;
  // The Release carries the inline bytes of files not yet reported: past
  // this many, the next ones go to their data objects instead (one
  // message holds at most 4 MiB).
  uint64_t inline_left = 1u << 20;
  for (uint32_t i = 0; i < leases.size(); ++i) {
    const auto &l = leases[i];
    uint64_t ino = l.getIno();
    out[i].setIno(ino);
    out[i].setKind(l.getKind());
    out[i].setSeq(l.getSeq());
    std::vector<std::string> names = cache_.names(ino);
    std::vector<uint64_t> covered = cache_.covered(ino);
    cache_.revoked(ino, l.getSeq(), now_ms());
    {
      std::lock_guard<std::mutex> g(se_mu_);
      if (se_) {
        fuse_ino_t fino = to_fuse(ino);
        for (const std::string &n : names)
          fuse_lowlevel_notify_inval_entry(se_, fino, n.data(), n.size());
        fuse_lowlevel_notify_inval_inode(se_, fino, 0, 0);
        // The kernel holds their attributes for as long as this lease
        // was to last: they go too (a negative offset keeps the pages,
        // which their own leases and opens look after).
        for (uint64_t c : covered) fuse_lowlevel_notify_inval_inode(se_, to_fuse(c), -1, 0);
      }
    }
    bool file = l.getKind() == fsproto::LeaseKind::FILE_READ ||
                l.getKind() == fsproto::LeaseKind::FILE_WRITE;
    if (!file) continue;
    if (l.getKind() == fsproto::LeaseKind::FILE_WRITE)
      inline_left -= std::min<uint64_t>(inline_left, settle_inline(ino, inline_left));
    FileLayout layout;
    bool open = false, dirty = false;
    uint64_t size = 0;
    Time mtime, ctime;
    DataReport data;
    {
      // After any background size report that already cleared `dirty`
      // has been submitted (report_mu_): settle_async below waits for it.
      std::lock_guard<std::mutex> r(report_mu_);
      std::lock_guard<std::mutex> g(open_mu_);
      auto it = open_.find(ino);
      if (it != open_.end()) {
        open = true;
        layout = it->second.layout;
        dirty = it->second.dirty;
        size = it->second.size;
        mtime = it->second.mtime;
        ctime = it->second.ctime;
        if (l.getKind() == fsproto::LeaseKind::FILE_WRITE) data = take_data_report(it->second);
        it->second.lease_kind = 0;
        it->second.only_link = false;  // others may link it from now on
        it->second.version = 0;        // the next open drops the page cache
      }
    }
    if (!open || !data_) continue;
    if (l.getKind() == fsproto::LeaseKind::FILE_WRITE) {
      await_create(ino);
      if (int err = data_->flush(layout); err < 0) {
        log_(STRATA_LOG_WARN, "revoke of inode " + std::to_string(ino) +
                                  ": buffered data could not be written out (" +
                                  std::to_string(err) + ")");
        // The objects may lack its former inline bytes: it stays inline.
        if (data.where == DataReport::kObjects) data = DataReport{};
      }
      if (dirty)
        flushed.push_back({ino, size, mtime, ctime, data_->allocated_blocks(layout, size), data});
    }
    data_->invalidate(ino);
  }
  auto attrs = rel.initFlushed(uint32_t(flushed.size()));
  for (uint32_t i = 0; i < flushed.size(); ++i) {
    const Flushed &f = flushed[i];
    attrs[i].setIno(f.ino);
    auto a = attrs[i].initAttr();
    uint32_t mask =
        fsproto::SetAttr::MASK_SIZE | fsproto::SetAttr::MASK_MTIME | fsproto::SetAttr::MASK_CTIME;
    a.setSize(f.size);
    fill_time(a.initMtime(), f.mtime);
    fill_time(a.initCtime(), f.ctime);
    if (f.blocks >= 0) {
      mask |= fsproto::SetAttr::MASK_BLOCKS;
      a.setBlocks(uint64_t(f.blocks));
    }
    a.setMask(mask);
    fill_data_report(a, f.data);
    std::lock_guard<std::mutex> g(open_mu_);
    auto it = open_.find(f.ino);
    if (it != open_.end() && it->second.size == f.size) it->second.dirty = false;
  }
  // What this client changed under the lease (asynchronously) must be
  // applied before the other client goes on: Releases are not queued
  // behind requests at the MDS, so wait until they are safe. A lease
  // lasts at most this long anyway.
  std::string why;
  if (settle_async(mds_lease_ms_, &why) < 0)
    log_(STRATA_LOG_WARN, "releasing a lease before this client's changes are safe: " + why);
  mds_.send(fsproto::MSG_RELEASE, msg);
}

}  // namespace strata::fuse

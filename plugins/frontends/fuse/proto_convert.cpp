#include "proto_convert.h"

namespace strata::fuse {

namespace {
Time to_time(fsproto::Timespec::Reader t) { return Time{t.getSec(), t.getNsec()}; }
}  // namespace

InodeAttr to_attr(fsproto::Inode::Reader in) {
  InodeAttr a;
  a.ino = in.getIno();
  a.type = FileType(uint8_t(in.getType()));
  a.mode = in.getMode() & 07777;
  a.uid = in.getUid();
  a.gid = in.getGid();
  a.nlink = in.getNlink();
  a.rdev = in.getRdev();
  a.size = in.getSize();
  a.blocks = in.getBlocks();
  a.version = in.getVersion();
  a.atime = to_time(in.getAtime());
  a.mtime = to_time(in.getMtime());
  a.ctime = to_time(in.getCtime());
  a.btime = to_time(in.getBtime());
  a.symlink_target = in.getSymlinkTarget();
  a.object_size = in.getLayout().getObjectSize();
  a.data_pool = in.getLayout().getDataPool();
  for (auto x : in.getXattrs()) {
    auto v = x.getValue();
    a.xattrs.emplace_back(std::string(x.getName()),
                          std::string(reinterpret_cast<const char *>(v.begin()), v.size()));
  }
  if (in.getDataInline()) {
    auto d = in.getInlineData();
    a.inline_data =
        std::make_shared<const std::string>(reinterpret_cast<const char *>(d.begin()), d.size());
  }
  return a;
}

LeaseGrant to_grant(fsproto::Lease::Reader l, uint64_t mds_now_ms, int64_t sent_ms,
                    uint32_t margin_ms) {
  LeaseGrant g;
  g.kind = uint32_t(l.getKind());
  g.seq = l.getSeq();
  int64_t left = int64_t(l.getExpiresMs()) - int64_t(mds_now_ms) - int64_t(margin_ms);
  g.expires_ms = sent_ms + (left > 0 ? left : 0);
  return g;
}

void fill_time(fsproto::Timespec::Builder b, const Time &t) {
  b.setSec(t.sec);
  b.setNsec(t.nsec);
}

FileLayout layout_of(const InodeAttr &a) {
  FileLayout f;
  f.ino = a.ino;
  f.pool = a.data_pool;
  f.object_size = a.object_size;
  f.inline_data = a.inline_data;
  return f;
}

void fill_data_report(fsproto::SetAttr::Builder a, const DataReport &data) {
  if (data.where == DataReport::kUnchanged) return;
  a.setMask(a.getMask() | fsproto::SetAttr::MASK_INLINE);
  a.setDataInline(data.where == DataReport::kInline);
  if (data.where == DataReport::kInline && data.bytes && !data.bytes->empty())
    a.setInlineData(
        kj::arrayPtr(reinterpret_cast<const kj::byte *>(data.bytes->data()), data.bytes->size()));
}

void fill_size_report(fsproto::Request::Builder r, uint64_t ino, uint64_t size, const Time &mtime,
                      const Time &ctime, int64_t blocks, const DataReport &data) {
  auto s = r.initSetattr();
  s.setIno(ino);
  auto a = s.initAttr();
  uint32_t mask =
      fsproto::SetAttr::MASK_SIZE | fsproto::SetAttr::MASK_MTIME | fsproto::SetAttr::MASK_CTIME;
  a.setSize(size);
  fill_time(a.initMtime(), mtime);
  fill_time(a.initCtime(), ctime);
  if (blocks >= 0) {
    mask |= fsproto::SetAttr::MASK_BLOCKS;
    a.setBlocks(uint64_t(blocks));
  }
  a.setMask(mask);
  fill_data_report(a, data);
}

}  // namespace strata::fuse

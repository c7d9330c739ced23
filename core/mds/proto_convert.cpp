#include "mds/proto_convert.h"

namespace strata::mds {

void time_to_proto(const Time &t, fsproto::Timespec::Builder out) {
  out.setSec(t.sec);
  out.setNsec(t.nsec);
}

Time time_from_proto(fsproto::Timespec::Reader t) { return Time{t.getSec(), t.getNsec()}; }

void inode_to_proto(const InodeRec &in, fsproto::Inode::Builder out) {
  out.setIno(in.ino);
  out.setType(static_cast<fsproto::FileType>(in.type));
  out.setMode(in.mode);
  out.setUid(in.uid);
  out.setGid(in.gid);
  out.setNlink(in.nlink);
  out.setSize(in.size);
  time_to_proto(in.atime, out.initAtime());
  time_to_proto(in.mtime, out.initMtime());
  time_to_proto(in.ctime, out.initCtime());
  time_to_proto(in.btime, out.initBtime());
  out.setRdev(in.rdev);
  out.setSymlinkTarget(in.symlink_target);
  auto layout = out.initLayout();
  layout.setObjectSize(in.object_size);
  layout.setDataPool(in.data_pool);
  out.setVersion(in.version);
  out.setBlocks(in.blocks);
  auto xs = out.initXattrs(static_cast<unsigned>(in.xattrs.size()));
  unsigned i = 0;
  for (const auto &[k, v] : in.xattrs) {
    xs[i].setName(k);
    xs[i].setValue(capnp::Data::Reader(reinterpret_cast<const capnp::byte *>(v.data()), v.size()));
    ++i;
  }
  out.setDataInline(in.data_inline);
  if (!in.inline_data.empty())
    out.setInlineData(capnp::Data::Reader(
        reinterpret_cast<const capnp::byte *>(in.inline_data.data()), in.inline_data.size()));
}

InodeRec inode_from_proto(fsproto::Inode::Reader in) {
  InodeRec r;
  r.ino = in.getIno();
  r.type = static_cast<FileType>(in.getType());
  r.mode = in.getMode();
  r.uid = in.getUid();
  r.gid = in.getGid();
  r.nlink = in.getNlink();
  r.size = in.getSize();
  r.atime = time_from_proto(in.getAtime());
  r.mtime = time_from_proto(in.getMtime());
  r.ctime = time_from_proto(in.getCtime());
  r.btime = time_from_proto(in.getBtime());
  r.rdev = in.getRdev();
  r.symlink_target = in.getSymlinkTarget();
  r.object_size = in.getLayout().getObjectSize();
  r.data_pool = in.getLayout().getDataPool();
  r.version = in.getVersion();
  r.blocks = in.getBlocks();
  for (auto x : in.getXattrs()) {
    auto v = x.getValue();
    r.xattrs[x.getName()] = std::string(reinterpret_cast<const char *>(v.begin()), v.size());
  }
  r.data_inline = in.getDataInline();
  auto d = in.getInlineData();
  r.inline_data.assign(reinterpret_cast<const char *>(d.begin()), d.size());
  return r;
}

}  // namespace strata::mds

#include "fuse_ops.h"

#include <cerrno>

namespace strata::fuse {

namespace {

Filesystem &fs(fuse_req_t req) { return *static_cast<Filesystem *>(fuse_req_userdata(req)); }

void op_init(void *userdata, fuse_conn_info *conn) {
  static_cast<Filesystem *>(userdata)->init(conn);
}
void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name) {
  fs(req).lookup(req, parent, name);
}
void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) {
  fs(req).forget(ino, nlookup);
  fuse_reply_none(req);
}
void op_forget_multi(fuse_req_t req, size_t count, fuse_forget_data *forgets) {
  for (size_t i = 0; i < count; ++i) fs(req).forget(forgets[i].ino, forgets[i].nlookup);
  fuse_reply_none(req);
}
void op_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info *) { fs(req).getattr(req, ino); }
void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, fuse_file_info *fi) {
  fs(req).setattr(req, ino, attr, to_set, fi);
}
void op_readlink(fuse_req_t req, fuse_ino_t ino) { fs(req).readlink(req, ino); }
void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev) {
  fs(req).make(req, parent, name, mode, rdev, nullptr);
}
void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode) {
  fs(req).make(req, parent, name, S_IFDIR | (mode & 07777), 0, nullptr);
}
void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name) {
  fs(req).unlink(req, parent, name, false);
}
void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name) {
  fs(req).unlink(req, parent, name, true);
}
void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name) {
  fs(req).make(req, parent, name, S_IFLNK | 0777, 0, link);
}
void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
               const char *newname, unsigned int flags) {
  fs(req).rename(req, parent, name, newparent, newname, flags);
}
void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname) {
  fs(req).link(req, ino, newparent, newname);
}
void op_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info *fi) { fs(req).open(req, ino, fi); }
void op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
               fuse_file_info *fi) {
  fs(req).create(req, parent, name, mode, fi);
}
void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info *) {
  fs(req).read(req, ino, size, off);
}
void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
              fuse_file_info *) {
  fs(req).write(req, ino, buf, size, off);
}
void op_flush(fuse_req_t req, fuse_ino_t ino, fuse_file_info *fi) { fs(req).flush(req, ino, fi); }
void op_release(fuse_req_t req, fuse_ino_t ino, fuse_file_info *fi) {
  fs(req).release(req, ino, fi);
}
void op_fsync(fuse_req_t req, fuse_ino_t ino, int, fuse_file_info *) {
  fs(req).fsync(req, ino, false);
}
void op_opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info *fi) {
  fs(req).opendir(req, ino, fi);
}
void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info *fi) {
  fs(req).readdir(req, ino, size, off, fi, false);
}
void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info *fi) {
  fs(req).readdir(req, ino, size, off, fi, true);
}
void op_releasedir(fuse_req_t req, fuse_ino_t, fuse_file_info *fi) { fs(req).releasedir(req, fi); }
void op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int, fuse_file_info *) {
  fs(req).fsync(req, ino, true);
}
void op_statfs(fuse_req_t req, fuse_ino_t ino) { fs(req).statfs(req, ino); }
void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size,
                 int flags) {
  fs(req).setxattr(req, ino, name, value, size, flags);
}
void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size) {
  fs(req).getxattr(req, ino, name, size);
}
void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  fs(req).listxattr(req, ino, size);
}
void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name) {
  fs(req).removexattr(req, ino, name);
}
void op_access(fuse_req_t req, fuse_ino_t ino, int mask) { fs(req).access(req, ino, mask); }
void op_getlk(fuse_req_t req, fuse_ino_t ino, fuse_file_info *fi, struct flock *lock) {
  fs(req).getlk(req, ino, fi, lock);
}
void op_setlk(fuse_req_t req, fuse_ino_t ino, fuse_file_info *fi, struct flock *lock, int sleep) {
  fs(req).setlk(req, ino, fi, lock, sleep != 0);
}
void op_flock(fuse_req_t req, fuse_ino_t ino, fuse_file_info *fi, int op) {
  fs(req).flock(req, ino, fi, op);
}
void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
                  fuse_file_info *) {
  fs(req).fallocate(req, ino, mode, off, len);
}

fuse_lowlevel_ops make_ops() {
  fuse_lowlevel_ops o{};
  o.init = op_init;
  o.lookup = op_lookup;
  o.forget = op_forget;
  o.forget_multi = op_forget_multi;
  o.getattr = op_getattr;
  o.setattr = op_setattr;
  o.readlink = op_readlink;
  o.mknod = op_mknod;
  o.mkdir = op_mkdir;
  o.unlink = op_unlink;
  o.rmdir = op_rmdir;
  o.symlink = op_symlink;
  o.rename = op_rename;
  o.link = op_link;
  o.open = op_open;
  o.create = op_create;
  o.read = op_read;
  o.write = op_write;
  o.flush = op_flush;
  o.release = op_release;
  o.fsync = op_fsync;
  o.opendir = op_opendir;
  o.readdir = op_readdir;
  o.readdirplus = op_readdirplus;
  o.releasedir = op_releasedir;
  o.fsyncdir = op_fsyncdir;
  o.statfs = op_statfs;
  o.setxattr = op_setxattr;
  o.getxattr = op_getxattr;
  o.listxattr = op_listxattr;
  o.removexattr = op_removexattr;
  o.access = op_access;
  o.getlk = op_getlk;
  o.setlk = op_setlk;
  o.flock = op_flock;
  o.fallocate = op_fallocate;
  return o;
}

}  // namespace

const fuse_lowlevel_ops &filesystem_ops() {
  static const fuse_lowlevel_ops kOps = make_ops();
  return kOps;
}

}  // namespace strata::fuse

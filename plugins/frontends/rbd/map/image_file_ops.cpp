// libfuse's operations table for ImageFile: C callbacks that find the
// ImageFile in the request's userdata, keep exceptions from crossing into
// libfuse, and refuse everything that would change the namespace.
#include <cerrno>

#include "image_file.h"

namespace strata::rbd {

namespace {

ImageFile &file(fuse_req_t req) { return *static_cast<ImageFile *>(fuse_req_userdata(req)); }

// Runs one operation; a throw (only allocation can) is answered EIO. The
// operations throw only before they reply, so the request is unanswered.
template <class F>
void guarded(fuse_req_t req, F f) {
  try {
    f(file(req));
  } catch (...) {
    fuse_reply_err(req, EIO);
  }
}

// Data operations on anything but the file (the kernel sends none).
bool not_the_file(fuse_req_t req, fuse_ino_t ino) {
  if (ino == ImageFile::kFileIno) return false;
  fuse_reply_err(req, EISDIR);
  return true;
}

void op_init(void *userdata, fuse_conn_info *conn) { static_cast<ImageFile *>(userdata)->init(conn); }
void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name) {
  guarded(req, [&](ImageFile &f) { f.lookup(req, parent, name); });
}
void op_forget(fuse_req_t req, fuse_ino_t, uint64_t) { fuse_reply_none(req); }
void op_forget_multi(fuse_req_t req, size_t, fuse_forget_data *) { fuse_reply_none(req); }
void op_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info *) {
  guarded(req, [&](ImageFile &f) { f.getattr(req, ino); });
}
void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, fuse_file_info *) {
  guarded(req, [&](ImageFile &f) { f.setattr(req, ino, *attr, to_set); });
}
void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info *) {
  guarded(req, [&](ImageFile &f) { f.readdir(req, ino, size, off); });
}
void op_statfs(fuse_req_t req, fuse_ino_t) {
  guarded(req, [&](ImageFile &f) { f.statfs(req); });
}
void op_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info *fi) {
  guarded(req, [&](ImageFile &f) { f.open(req, ino, fi); });
}
void op_release(fuse_req_t req, fuse_ino_t, fuse_file_info *fi) {
  guarded(req, [&](ImageFile &f) { f.release(req, fi); });
}
void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info *) {
  if (not_the_file(req, ino)) return;
  guarded(req, [&](ImageFile &f) { f.read(req, size, off); });
}
void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
              fuse_file_info *fi) {
  if (not_the_file(req, ino)) return;
  guarded(req, [&](ImageFile &f) { f.write(req, buf, size, off, fi); });
}
void op_flush(fuse_req_t req, fuse_ino_t ino, fuse_file_info *fi) {
  if (not_the_file(req, ino)) return;
  guarded(req, [&](ImageFile &f) { f.flush(req, fi); });
}
void op_fsync(fuse_req_t req, fuse_ino_t ino, int, fuse_file_info *fi) {
  if (not_the_file(req, ino)) return;
  guarded(req, [&](ImageFile &f) { f.fsync(req, fi); });
}
void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
                  fuse_file_info *) {
  if (not_the_file(req, ino)) return;
  guarded(req, [&](ImageFile &f) { f.fallocate(req, mode, off, len); });
}
void op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, fuse_file_info *) {
  if (not_the_file(req, ino)) return;
  guarded(req, [&](ImageFile &f) { f.lseek(req, off, whence); });
}

// The one file is the mount's whole namespace: nothing is created,
// removed, renamed or linked.
void refuse_mknod(fuse_req_t req, fuse_ino_t, const char *, mode_t, dev_t) {
  fuse_reply_err(req, EPERM);
}
void refuse_mkdir(fuse_req_t req, fuse_ino_t, const char *, mode_t) { fuse_reply_err(req, EPERM); }
void refuse_unlink(fuse_req_t req, fuse_ino_t, const char *) { fuse_reply_err(req, EPERM); }
void refuse_symlink(fuse_req_t req, const char *, fuse_ino_t, const char *) {
  fuse_reply_err(req, EPERM);
}
void refuse_rename(fuse_req_t req, fuse_ino_t, const char *, fuse_ino_t, const char *,
                   unsigned int) {
  fuse_reply_err(req, EPERM);
}
void refuse_link(fuse_req_t req, fuse_ino_t, fuse_ino_t, const char *) {
  fuse_reply_err(req, EPERM);
}
void refuse_create(fuse_req_t req, fuse_ino_t, const char *, mode_t, fuse_file_info *) {
  fuse_reply_err(req, EPERM);
}

fuse_lowlevel_ops make_ops() {
  fuse_lowlevel_ops o{};
  o.init = op_init;
  o.lookup = op_lookup;
  o.forget = op_forget;
  o.forget_multi = op_forget_multi;
  o.getattr = op_getattr;
  o.setattr = op_setattr;
  o.readdir = op_readdir;
  o.statfs = op_statfs;
  o.open = op_open;
  o.release = op_release;
  o.read = op_read;
  o.write = op_write;
  o.flush = op_flush;
  o.fsync = op_fsync;
  o.fallocate = op_fallocate;
  o.lseek = op_lseek;
  o.mknod = refuse_mknod;
  o.mkdir = refuse_mkdir;
  o.unlink = refuse_unlink;
  o.rmdir = refuse_unlink;
  o.symlink = refuse_symlink;
  o.rename = refuse_rename;
  o.link = refuse_link;
  o.create = refuse_create;
  return o;
}

}  // namespace

const fuse_lowlevel_ops &ImageFile::ops() {
  static const fuse_lowlevel_ops table = make_ops();  // constant once built
  return table;
}

}  // namespace strata::rbd

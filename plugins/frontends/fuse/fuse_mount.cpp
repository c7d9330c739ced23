#include "fuse_mount.h"

#include <linux/fuse.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <vector>

#include "common/fuse_loop.h"
#include "fuse_ops.h"

namespace strata::fuse {

// FUSE_HANDLE_KILLPRIV_V2 under libfuse 3.14, which cannot negotiate it:
// the raw messages are looked at on their way through /dev/fuse
// (fuse_session_custom_io). The INIT request says whether the kernel
// offers it; the INIT reply gets the flag; WRITEs flagged
// FUSE_WRITE_KILL_SUIDGID are noted for Filesystem::write. With the flag
// the kernel stops asking for security.capability before every write and
// for the attributes before every chown (fuse's SB_NOSEC), and leaves the
// set-id kill to us (Filesystem::setattr, write).
namespace {

// se's userdata: the Filesystem (fuse_session_new).
ssize_t raw_read(int fd, void *buf, size_t len, void *userdata) {
  ssize_t n = ::read(fd, buf, len);
  if (n < ssize_t(sizeof(fuse_in_header))) return n;
  auto *fs = static_cast<Filesystem *>(userdata);
  fuse_in_header h;
  std::memcpy(&h, buf, sizeof h);
  const char *body = static_cast<const char *>(buf) + sizeof h;
  const size_t body_len = size_t(n) - sizeof h;
  if (h.opcode == FUSE_INIT && body_len >= offsetof(fuse_init_in, flags) + sizeof(uint32_t)) {
    uint32_t flags = 0;
    std::memcpy(&flags, body + offsetof(fuse_init_in, flags), sizeof flags);
    fs->note_init_request(h.unique, (flags & FUSE_HANDLE_KILLPRIV_V2) != 0);
  } else if (h.opcode == FUSE_WRITE &&
             body_len >= offsetof(fuse_write_in, write_flags) + sizeof(uint32_t)) {
    uint32_t wflags = 0;
    std::memcpy(&wflags, body + offsetof(fuse_write_in, write_flags), sizeof wflags);
    if (wflags & FUSE_WRITE_KILL_SUIDGID) fs->note_kill_on_write(h.nodeid);
  }
  return n;
}

ssize_t raw_writev(int fd, struct iovec *iov, int count, void *userdata) {
  if (count >= 2 && iov[0].iov_len >= sizeof(fuse_out_header)) {
    fuse_out_header h;
    std::memcpy(&h, iov[0].iov_base, sizeof h);
    // libfuse answers INIT with the header, then fuse_init_out.
    if (h.error == 0 && iov[1].iov_len >= offsetof(fuse_init_out, flags) + sizeof(uint32_t) &&
        static_cast<Filesystem *>(userdata)->take_init_reply(h.unique)) {
      char *flags_at = static_cast<char *>(iov[1].iov_base) + offsetof(fuse_init_out, flags);
      uint32_t flags = 0;
      std::memcpy(&flags, flags_at, sizeof flags);
      flags |= FUSE_HANDLE_KILLPRIV_V2;
      std::memcpy(flags_at, &flags, sizeof flags);
    }
  }
  return ::writev(fd, iov, count);
}

}  // namespace

FuseMount::~FuseMount() { unmount(); }

int FuseMount::mount(Filesystem &fs, const MountSettings &s, std::string *why) {
  std::string opts =
      "fsname=strata:" + s.fs_name + ",subtype=strata,max_read=" + std::to_string(s.max_read);
  if (s.allow_other) opts += ",allow_other";
  if (s.default_permissions) opts += ",default_permissions";
  std::vector<std::string> words = {"strata-fuse", "-o", opts};
  std::vector<char *> argv;
  for (std::string &w : words) argv.push_back(w.data());
  fuse_args args = FUSE_ARGS_INIT(int(argv.size()), argv.data());
  se_ = fuse_session_new(&args, &filesystem_ops(), sizeof(fuse_lowlevel_ops), &fs);
  fuse_opt_free_args(&args);
  if (!se_) {
    *why = "fuse_session_new refused the options '" + opts + "' (see the log)";
    return -EINVAL;
  }
  if (fuse_session_mount(se_, s.mountpoint.c_str()) != 0) {
    fuse_session_destroy(se_);
    se_ = nullptr;
    *why = "cannot mount on " + s.mountpoint +
           " (does it exist, is /dev/fuse usable, is fusermount3 installed?" +
           (s.allow_other ? " allow_other needs user_allow_other in /etc/fuse.conf)" : ")");
    return -EIO;
  }
  mounted_ = true;
  // The same descriptor, read and written through the hooks above.
  fuse_custom_io io;
  std::memset(&io, 0, sizeof io);
  io.read = raw_read;
  io.writev = raw_writev;
  if (fuse_session_custom_io(se_, &io, fuse_session_fd(se_)) != 0) {
    *why = "fuse_session_custom_io refused the mount's descriptor";
    unmount();
    return -EIO;
  }
  return 0;
}

void FuseMount::serve(uint32_t max_threads, std::function<void(int)> on_end) {
  loop_ = std::thread([this, max_threads, on_end = std::move(on_end)] {
    int rc = frontends::run_fuse_loop_mt(se_, max_threads);
    bool ours;
    {
      std::lock_guard<std::mutex> l(mu_);
      ours = unmounting_;
    }
    if (!ours && on_end) on_end(rc);
  });
}

void FuseMount::unmount() {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (unmounting_) return;
    unmounting_ = true;
  }
  if (se_) {
    fuse_session_exit(se_);
    // The workers sit in read(/dev/fuse): unmounting makes it fail, so
    // the loop notices the exit flag.
    if (mounted_) fuse_session_unmount(se_);
    mounted_ = false;
  }
  if (loop_.joinable()) loop_.join();
  if (se_) fuse_session_destroy(se_);
  se_ = nullptr;
}

}  // namespace strata::fuse

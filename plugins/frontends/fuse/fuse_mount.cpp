#include "fuse_mount.h"

#include <cerrno>
#include <cstring>
#include <vector>

#include "common/fuse_loop.h"
#include "fuse_ops.h"

namespace strata::fuse {

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

#include "export_session.h"

#include <poll.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "common/fuse_loop.h"

extern "C" char **environ;

namespace strata::rbd {

namespace {

// `fusermount3 -u -z DIR`, waited for; 0 or -errno / -EIO. Not
// fuse_session_unmount: that closes /dev/fuse first, while device
// requests in flight may still reply on it (the descriptor's number
// could by then be another file's).
int run_fusermount(const std::string &mountpoint) {
  std::string prog = "fusermount3", u = "-u", z = "-z", dir = mountpoint;
  char *argv[] = {prog.data(), u.data(), z.data(), dir.data(), nullptr};
  pid_t pid;
  int rc = posix_spawnp(&pid, prog.c_str(), nullptr, nullptr, argv, environ);
  if (rc != 0) return -rc;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -errno;
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

}  // namespace

ExportSession::~ExportSession() {
  end([](const std::string &) {});
  destroy();
}

int ExportSession::mount(const fuse_lowlevel_ops &ops, void *userdata,
                         const std::string &mountpoint, const std::string &options,
                         std::string *why) {
  std::vector<std::string> words = {"strata-image-map", "-o", options};
  std::vector<char *> argv;
  for (std::string &w : words) argv.push_back(w.data());
  fuse_args args = FUSE_ARGS_INIT(int(argv.size()), argv.data());
  se_ = fuse_session_new(&args, &ops, sizeof(ops), userdata);
  fuse_opt_free_args(&args);
  if (!se_) {
    *why = "libfuse refused the options '" + options + "'";
    return -EINVAL;
  }
  if (fuse_session_mount(se_, mountpoint.c_str()) != 0) {
    fuse_session_destroy(se_);
    se_ = nullptr;
    *why = "cannot mount on " + mountpoint +
           " (is it an existing directory, is /dev/fuse usable, is fusermount3 installed?)";
    return -EIO;
  }
  mountpoint_ = mountpoint;
  mounted_ = true;
  return 0;
}

void ExportSession::serve(unsigned max_threads, std::function<void(int)> on_end) {
  loop_ = std::thread([this, max_threads, on_end = std::move(on_end)] {
    int rc = frontends::run_fuse_loop_mt(se_, max_threads);
    bool ours;
    {
      std::lock_guard<std::mutex> l(mu_);
      ours = ending_;
    }
    if (!ours && on_end) on_end(rc);
  });
}

bool ExportSession::connection_alive() const {
  // The kernel flags /dev/fuse with POLLERR once the connection is gone
  // (unmounted from outside): the mount point may then be someone
  // else's mount already, not ours to unmount. A loop that failed on its
  // own leaves the connection, and the mount, to be cleaned up here.
  pollfd p{fuse_session_fd(se_), POLLIN, 0};
  return !(::poll(&p, 1, 0) == 1 && (p.revents & POLLERR));
}

void ExportSession::unmount(const std::function<void(const std::string &)> &warn) {
  // The workers keep serving while this runs, so that whatever the
  // unmount asks of the file system is answered; the loop then ends on
  // its own when the kernel drops the connection.
  if (geteuid() == 0) {
    if (::umount2(mountpoint_.c_str(), 0) == 0 || errno == EINVAL || errno == ENOENT) return;
    if (errno == EBUSY) {
      // Someone still has the file open (an attached loop device): the
      // connection is aborted, or the loop would never end. Their I/O
      // fails from now on, which is what unmapping a busy image means.
      warn(mountpoint_ + " is busy (is a loop device still attached?): aborting its FUSE connection");
      ::umount2(mountpoint_.c_str(), MNT_FORCE);
      ::umount2(mountpoint_.c_str(), MNT_DETACH);
      return;
    }
    warn("umount " + mountpoint_ + ": " + std::strerror(errno) + ", trying fusermount3");
  }
  // Lazy: with the file still open the connection, and the loop, last
  // until its last close (only root can abort it).
  if (run_fusermount(mountpoint_) != 0) warn("fusermount3 -u -z " + mountpoint_ + " failed");
}

void ExportSession::end(const std::function<void(const std::string &)> &warn) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (ending_) return;
    ending_ = true;
  }
  if (se_ && mounted_ && connection_alive()) unmount(warn);
  mounted_ = false;
  if (se_) fuse_session_exit(se_);
  if (loop_.joinable()) loop_.join();
}

void ExportSession::destroy() {
  // With the connection gone this only closes /dev/fuse and frees what
  // fuse_session_mount kept (the unmount above may have been our own).
  if (se_) fuse_session_unmount(se_);
  if (se_) fuse_session_destroy(se_);
  se_ = nullptr;
}

}  // namespace strata::rbd

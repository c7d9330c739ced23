// The FUSE session of one map: mounted by mount(), served by
// fuse_session_loop_mt on a thread of its own. When the kernel ends the
// session (fusermount3 -u, umount) the loop returns and on_end runs on
// the loop's thread; when end() ends it, on_end does not run.
//
// Threading: mount/serve/end/destroy from one controlling thread, never
// from on_end (end() joins the thread on_end runs on).
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace strata::rbd {

class ExportSession {
 public:
  ExportSession() = default;
  ExportSession(const ExportSession &) = delete;
  ExportSession &operator=(const ExportSession &) = delete;
  ~ExportSession();  // end() and destroy()

  // Creates the session with `options` (a -o list) and mounts it on
  // mountpoint. 0, or -errno with *why.
  int mount(const fuse_lowlevel_ops &ops, void *userdata, const std::string &mountpoint,
            const std::string &options, std::string *why);
  // Starts the loop; on_end(result) when the kernel ends it.
  void serve(unsigned max_threads, std::function<void(int result)> on_end);
  // Unmounts unless the kernel already ended the connection, and joins the
  // loop. Replies sent after this are dropped, but the session stays
  // valid for them until destroy(). Idempotent. warn: one line per
  // problem worth a log line (a busy mount forced).
  void end(const std::function<void(const std::string &)> &warn);
  // Frees the session: no reply may be sent after this. Idempotent.
  void destroy();

 private:
  bool connection_alive() const;
  void unmount(const std::function<void(const std::string &)> &warn);

  fuse_session *se_ = nullptr;
  std::string mountpoint_;
  bool mounted_ = false;
  std::thread loop_;
  std::mutex mu_;
  bool ending_ = false;        // guarded by mu_: end() started
};

}  // namespace strata::rbd

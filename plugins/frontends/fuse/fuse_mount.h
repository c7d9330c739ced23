// One FUSE session on a mount point: mounted in mount(), served by
// fuse_session_loop_mt on a thread of its own, unmounted in unmount().
// When the kernel ends the session (`fusermount3 -u`, `umount`), the loop
// returns and on_end runs on the loop's thread.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "filesystem.h"

namespace strata::fuse {

class FuseMount {
 public:
  ~FuseMount();  // unmounts if mounted

  // 0 or -errno with *why.
  int mount(Filesystem &fs, const MountSettings &s, std::string *why);
  // Starts serving; on_end(result) when the loop ends without unmount().
  void serve(uint32_t max_threads, std::function<void(int result)> on_end);
  // Ends the loop, unmounts, joins. Idempotent.
  void unmount();
  fuse_session *session() const { return se_; }

 private:
  fuse_session *se_ = nullptr;
  bool mounted_ = false;
  std::thread loop_;
  std::mutex mu_;
  bool unmounting_ = false;
};

}  // namespace strata::fuse

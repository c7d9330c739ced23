// Background write-out of closed files. With the writeback cache, close(2)
// returns once the file's data is buffered here; these threads write it
// to the data objects and report the size (under the fileWrite lease,
// which nobody else can get before this client flushes: see revoke.cpp).
// fsync, unmount and a revoke still wait for the data.
//
// One queue, oldest first, served by a few threads: the jobs of one inode
// run in order and never two at once (a close's write-out, then the last
// release's); different inodes' jobs run in parallel, and a job that waits
// (for its create to be safe at the MDS) holds up only its own inode's.
// settle() moves one inode's jobs to the front and waits for them alone:
// an unlink of a file written a moment ago waits for that file, not for
// the whole backlog of an untar.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace strata::fuse {

class CloseWorkers {
 public:
  explicit CloseWorkers(size_t threads);
  ~CloseWorkers();  // runs what is queued, then joins

  void post(uint64_t ino, std::function<void()> job);
  // Waits until every job posted before the call has run.
  void drain();
  // Runs ino's queued jobs before any other and waits until none of its
  // jobs is queued or running.
  void settle(uint64_t ino);
  size_t pending() const;

 private:
  struct Job {
    uint64_t id = 0;
    uint64_t ino = 0;
    std::function<void()> fn;
  };
  void run();
  // The oldest queued job whose inode has none running; end() if none.
  // REQUIRES: mu_.
  std::deque<Job>::iterator next_runnable();

  mutable std::mutex mu_;
  std::condition_variable work_cv_;  // a job may have become runnable, or stopping
  std::condition_variable done_cv_;  // a job finished
  std::deque<Job> queue_;
  std::set<uint64_t> running_inos_;
  std::map<uint64_t, size_t> jobs_of_;  // ino -> queued + running jobs
  std::set<uint64_t> open_;             // ids of jobs posted, not yet run to the end
  uint64_t posted_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace strata::fuse

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
//
// Deferred jobs (post(..., defer=true)) wait `delay` first, as a local
// filesystem keeps dirty pages for a while (vm.dirty_expire_centisecs):
// an untar or a copy is not slowed by its own write-out, and a file
// deleted before its turn is never written at all (cancel()). They run
// earlier when `over_limit` says the buffers are too full (oldest first),
// and at once for drain() (unmount), settle() and destruction.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

namespace strata::fuse {

class CloseWorkers {
 public:
  struct Options {
    size_t threads = 8;
    std::chrono::milliseconds delay{0};  // how long a deferred job waits
    // True while deferred jobs should start before their time (checked
    // when a job is posted or finishes, and every 100 ms while any wait).
    // Called with the workers' lock held: it must not call back in.
    std::function<bool()> over_limit;
  };
  explicit CloseWorkers(size_t threads);
  explicit CloseWorkers(Options opts);
  ~CloseWorkers();  // runs what is queued (deferred jobs too), then joins

  void post(uint64_t ino, std::function<void()> job, bool defer = false);
  // Waits until every job posted before the call has run (deferred ones
  // start at once).
  void drain();
  // Runs ino's queued jobs (deferred ones too) before any other and waits
  // until none of its jobs is queued or running.
  void settle(uint64_t ino);
  // Drops ino's jobs unrun if every one of them is still deferred and
  // may_drop() (called with the lock held, while none of them can start)
  // agrees; returns whether they were dropped.
  bool cancel(uint64_t ino, const std::function<bool()> &may_drop);
  size_t pending() const;   // posted and not yet run to the end
  // Whether ino has a job queued, deferred or running.
  bool has_jobs(uint64_t ino) const;
  size_t deferred() const;  // of those, waiting for their time

 private:
  using Clock = std::chrono::steady_clock;
  struct Job {
    uint64_t id = 0;
    uint64_t ino = 0;
    std::function<void()> fn;
    Clock::time_point due;
  };
  void run();
  // The oldest queued job whose inode has none running; end() if none.
  // REQUIRES: mu_.
  std::deque<Job>::iterator next_runnable();
  // Deferred jobs whose time came (or all of them when stopping, or the
  // oldest while over the limit) join the queue. REQUIRES: mu_.
  // Returns how many joined the queue.
  size_t promote_due(Clock::time_point now);
  // Moves one deferred job to the back of the queue. REQUIRES: mu_.
  void promote(std::map<uint64_t, Job>::iterator it);
  // Every deferred job of ino joins the queue, in order. REQUIRES: mu_.
  void promote_ino(uint64_t ino);
  void finished(uint64_t id, uint64_t ino);  // REQUIRES: mu_

  Options opts_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_;  // a job may have become runnable, or stopping
  std::condition_variable done_cv_;  // a job finished
  std::deque<Job> queue_;
  // Deferred jobs by id: one delay for all, so also by due time.
  std::map<uint64_t, Job> deferred_;
  std::unordered_map<uint64_t, std::vector<uint64_t>> deferred_of_;  // ino -> ids, in order
  std::set<uint64_t> running_inos_;
  std::map<uint64_t, size_t> jobs_of_;  // ino -> queued, deferred and running jobs
  std::set<uint64_t> open_;             // ids of jobs posted, not yet run to the end
  uint64_t posted_ = 0;
  bool stopping_ = false;
  bool timer_taken_ = false;  // a worker waits for the oldest deferred job's time
  std::vector<std::thread> threads_;
};

}  // namespace strata::fuse

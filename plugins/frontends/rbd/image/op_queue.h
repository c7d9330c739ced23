// The object operations of an open image: at most max_inflight run at a
// time, the rest wait in a queue and start as earlier ones finish (from
// the completion callbacks, which may start calls but not wait). Jobs
// that must make synchronous calls (copy-up, reads through to a parent) run on
// a small pool of worker threads instead.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "strata/client_api.h"

namespace strata::rbd {

class OpQueue {
 public:
  using Finish = std::function<void(int64_t rc)>;
  // Starts one operation and calls finish exactly once when it is over
  // (possibly before returning, possibly on another thread).
  using Job = std::function<void(Finish)>;

  OpQueue(uint32_t max_inflight, unsigned workers);
  ~OpQueue();  // stop()

  // Queues or starts the job. Never blocks.
  void submit(Job job);
  // Blocks while more than 4 x max_inflight jobs wait (back-pressure for
  // the thread issuing requests), for at most 2 s.
  void wait_for_room();
  // Runs fn on a worker thread, where synchronous client calls are fine.
  void run_on_worker(std::function<void()> fn);
  // Waits until no job runs or waits, then stops the workers.
  void stop();

 private:
  void finished();
  void worker_loop();

  const uint32_t max_inflight_;
  std::mutex m_;
  std::condition_variable cv_;
  uint32_t inflight_ = 0;
  std::deque<Job> waiting_;
  std::deque<std::function<void()>> worker_jobs_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

// Starts one asynchronous client call: launch(c) starts it on completion
// c; done(rc) runs on the callback thread when it completes.
// Returns launch's error (then done never runs).
int start_aio(const strata_client_api *api, const std::function<int(strata_completion_t)> &launch,
              std::function<void(int64_t rc)> done);

}  // namespace strata::rbd

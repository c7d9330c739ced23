// Threads that stage large writes (Store::stage: an O_DIRECT write and
// fdatasync of the data) as messages arrive, before their ops reach a PG.
// Staging on the PG's shard thread would stop every other PG on that shard
// for the duration of a disk write; here several stage in parallel and the
// shard only binds the finished stage to the transaction.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace strata::osd {

class StagePool {
 public:
  explicit StagePool(int threads);
  ~StagePool() { stop(); }
  StagePool(const StagePool &) = delete;
  StagePool &operator=(const StagePool &) = delete;

  // Runs fn on a pool thread. After stop(), fn is dropped (destroyed, which
  // releases whatever it held).
  void post(std::function<void()> fn);
  // Finishes the tasks already queued, then joins the threads.
  void stop();

 private:
  void loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;  // GUARDED_BY(mu_)
  bool stopping_ = false;                    // GUARDED_BY(mu_)
  std::vector<std::thread> threads_;
};

}  // namespace strata::osd

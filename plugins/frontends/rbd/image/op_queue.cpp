#include "op_queue.h"

#include <chrono>

#include "strata/frontend_client.h"

namespace strata::rbd {

OpQueue::OpQueue(uint32_t max_inflight, unsigned workers)
    : max_inflight_(max_inflight ? max_inflight : 1) {
  for (unsigned i = 0; i < workers; ++i) workers_.emplace_back([this] { worker_loop(); });
}

OpQueue::~OpQueue() { stop(); }

void OpQueue::submit(Job job) {
  {
    std::lock_guard lk(m_);
    if (inflight_ >= max_inflight_) {
      waiting_.push_back(std::move(job));
      return;
    }
    ++inflight_;
  }
  job([this](int64_t) { finished(); });
}

void OpQueue::finished() {
  Job next;
  {
    std::lock_guard lk(m_);
    --inflight_;
    if (!waiting_.empty()) {
      next = std::move(waiting_.front());
      waiting_.pop_front();
      ++inflight_;
    }
    cv_.notify_all();
  }
  if (next) next([this](int64_t) { finished(); });
}

void OpQueue::wait_for_room() {
  // Bounded: a caller that turns out to be a completion thread must not
  // wait for completions forever; the queue then just grows a little.
  std::unique_lock lk(m_);
  cv_.wait_for(lk, std::chrono::seconds(2),
               [&] { return waiting_.size() < 4 * size_t{max_inflight_}; });
}

void OpQueue::run_on_worker(std::function<void()> fn) {
  std::lock_guard lk(m_);
  worker_jobs_.push_back(std::move(fn));
  cv_.notify_all();
}

void OpQueue::worker_loop() {
  std::unique_lock lk(m_);
  for (;;) {
    cv_.wait(lk, [&] { return stopping_ || !worker_jobs_.empty(); });
    if (worker_jobs_.empty()) return;  // stopping and nothing left
    auto fn = std::move(worker_jobs_.front());
    worker_jobs_.pop_front();
    lk.unlock();
    fn();
    lk.lock();
  }
}

void OpQueue::stop() {
  {
    std::unique_lock lk(m_);
    cv_.wait(lk, [&] { return inflight_ == 0 && waiting_.empty() && worker_jobs_.empty(); });
    stopping_ = true;
    cv_.notify_all();
  }
  for (auto &t : workers_)
    if (t.joinable()) t.join();
  workers_.clear();
}

namespace {

struct AioContext {
  const strata_client_api *strata_api;
  std::function<void(int64_t)> done;
};

void on_aio_complete(strata_completion_t c, void *arg) {
  auto *ctx = static_cast<AioContext *>(arg);
  const strata_client_api *strata_api = ctx->strata_api;
  const int64_t rc = strata_completion_get_return_value(c);
  strata_completion_release(c);
  ctx->done(rc);
  delete ctx;
}

}  // namespace

int start_aio(const strata_client_api *strata_api,
              const std::function<int(strata_completion_t)> &launch,
              std::function<void(int64_t rc)> done) {
  auto *ctx = new AioContext{strata_api, std::move(done)};
  strata_completion_t c = nullptr;
  int rc = strata_completion_create(&on_aio_complete, ctx, &c);
  if (rc == 0) rc = launch(c);
  if (rc < 0) {
    if (c) strata_completion_release(c);
    delete ctx;
  }
  return rc;
}

}  // namespace strata::rbd

#include "message_worker.h"

namespace strata::fuse {

MessageWorker::MessageWorker() : thread_([this] { run(); }) {}

MessageWorker::~MessageWorker() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void MessageWorker::post(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> l(mu_);
    jobs_.push_back(std::move(job));
  }
  cv_.notify_all();
}

size_t MessageWorker::queued() const {
  std::lock_guard<std::mutex> l(mu_);
  return jobs_.size();
}

void MessageWorker::run() {
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    cv_.wait(l, [&] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;
    auto job = std::move(jobs_.front());
    jobs_.pop_front();
    l.unlock();
    job();
    l.lock();
  }
}

}  // namespace strata::fuse

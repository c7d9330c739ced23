#include "client/background.h"

namespace strata::client {

Background::Background(std::chrono::milliseconds tick_interval, std::function<void()> on_tick)
    : tick_interval_(tick_interval), on_tick_(std::move(on_tick)) {}

Background::~Background() { stop(); }

void Background::start() {
  std::lock_guard<std::mutex> g(mu_);
  if (started_ || stopping_) return;
  started_ = true;
  worker_ = std::thread([this] { run(); });
}

void Background::post(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (stopping_) return;
    tasks_.push_back(std::move(fn));
  }
  cv_.notify_one();
}

void Background::reap_locked() {
  for (auto it = spawned_.begin(); it != spawned_.end();) {
    if (it->done->load()) {
      it->thread.join();
      it = spawned_.erase(it);
    } else {
      ++it;
    }
  }
}

void Background::spawn(std::function<void()> fn) {
  std::lock_guard<std::mutex> g(mu_);
  if (stopping_) return;
  reap_locked();
  auto done = std::make_shared<std::atomic<bool>>(false);
  spawned_.push_back({std::thread([fn = std::move(fn), done] {
                        fn();
                        done->store(true);
                      }),
                      done});
}

void Background::run() {
  auto next_tick = std::chrono::steady_clock::now() + tick_interval_;
  std::unique_lock<std::mutex> lk(mu_);
  while (!stopping_) {
    if (!tasks_.empty()) {
      auto fn = std::move(tasks_.front());
      tasks_.pop_front();
      lk.unlock();
      fn();
      lk.lock();
      continue;
    }
    if (std::chrono::steady_clock::now() >= next_tick) {
      next_tick = std::chrono::steady_clock::now() + tick_interval_;
      reap_locked();
      lk.unlock();
      if (on_tick_) on_tick_();
      lk.lock();
      continue;
    }
    cv_.wait_until(lk, next_tick, [&] { return stopping_ || !tasks_.empty(); });
  }
}

void Background::stop() {
  std::list<Spawned> spawned;
  {
    std::lock_guard<std::mutex> g(mu_);
    stopping_ = true;
    tasks_.clear();
    spawned.swap(spawned_);
  }
  cv_.notify_all();
  if (worker_.joinable() && worker_.get_id() != std::this_thread::get_id()) worker_.join();
  for (Spawned &s : spawned)
    if (s.thread.joinable()) s.thread.join();
}

}  // namespace strata::client

#include "client/background.h"

namespace strata::client {

Background::Background(std::chrono::milliseconds tick_interval, std::function<void()> on_tick)
    : worker_({.name = "client-bg",
               .tick_interval = tick_interval,
               .on_tick = [this, on_tick = std::move(on_tick)] {
                 {
                   std::lock_guard<std::mutex> g(mu_);
                   reap_locked();
                 }
                 if (on_tick) on_tick();
               }}) {}

Background::~Background() { stop(); }

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

void Background::stop() {
  std::list<Spawned> spawned;
  {
    std::lock_guard<std::mutex> g(mu_);
    stopping_ = true;
    spawned.swap(spawned_);
  }
  worker_.stop();
  for (Spawned &s : spawned)
    if (s.thread.joinable()) s.thread.join();
}

}  // namespace strata::client

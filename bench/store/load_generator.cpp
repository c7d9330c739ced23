#include "bench/store/load_generator.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

namespace strata::store_bench {

namespace {

using Clock = std::chrono::steady_clock;

// More submitters than this only add wake-ups: the store serialises
// sequence assignment and journal appends anyway.
constexpr int kMaxSubmitters = 4;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Shared with the callbacks through a shared_ptr, so that a late callback
// never touches a finished run's stack.
struct LoopState {
  std::mutex mu;
  std::condition_variable cv;
  int in_flight = 0;          // reserved or queued, not completed; GUARDED_BY(mu)
  uint64_t issued = 0;        // GUARDED_BY(mu)
  uint64_t issued_bytes = 0;  // GUARDED_BY(mu)
  bool stop = false;          // GUARDED_BY(mu)
  Status first_error;         // GUARDED_BY(mu)
  LoadResult result;          // GUARDED_BY(mu)
  Clock::time_point start, last_completion;
};

void complete(const std::shared_ptr<LoopState> &state, Clock::time_point t0, uint64_t bytes,
              const Status &s) {
  Clock::time_point now = Clock::now();
  std::lock_guard lk(state->mu);
  --state->in_flight;
  if (!s.ok()) {
    if (state->first_error.ok()) state->first_error = s;
  } else {
    LoadResult &r = state->result;
    r.ops++;
    r.bytes += bytes;
    r.latency_us.push_back(std::chrono::duration<double, std::micro>(now - t0).count());
    size_t tick = static_cast<size_t>(seconds_between(state->start, now) / kTickSeconds);
    if (r.bytes_per_tick.size() <= tick) r.bytes_per_tick.resize(tick + 1, 0);
    r.bytes_per_tick[tick] += bytes;
    state->last_completion = std::max(state->last_completion, now);
  }
  state->cv.notify_all();  // under the lock: the waiter may free the state after
}

void submitter(store::Store &store, const LoadSpec &spec, int depth,
               const std::shared_ptr<LoopState> &state) {
  for (;;) {
    uint64_t index;
    {
      std::unique_lock lk(state->mu);
      state->cv.wait(lk, [&] {
        return state->in_flight < depth || state->stop || !state->first_error.ok();
      });
      double elapsed = seconds_between(state->start, Clock::now());
      if (elapsed >= spec.max_seconds ||
          (elapsed >= spec.min_seconds && state->issued_bytes >= spec.target_bytes &&
           state->issued > 0))
        state->stop = true;
      if (state->stop || !state->first_error.ok()) {
        state->cv.notify_all();
        return;
      }
      index = state->issued++;
      ++state->in_flight;
    }
    uint64_t bytes = 0;
    store::Transaction t = spec.make(index, bytes);
    {
      std::lock_guard lk(state->mu);
      state->issued_bytes += bytes;
    }
    Clock::time_point t0 = Clock::now();
    Status st = store.queue(std::move(t), [state, t0, bytes](const Status &s) {
      complete(state, t0, bytes, s);
    });
    if (!st.ok()) complete(state, t0, 0, st.Context("queue"));
  }
}

}  // namespace

Result<LoadResult> run_closed_loop(store::Store &store, const LoadSpec &spec) {
  auto state = std::make_shared<LoopState>();
  state->result.latency_us.reserve(1 << 16);
  const int depth = std::max(1, spec.depth);
  state->start = state->last_completion = Clock::now();

  std::vector<std::thread> threads;
  for (int i = 0; i < std::min(depth, kMaxSubmitters); ++i)
    threads.emplace_back([&] { submitter(store, spec, depth, state); });
  for (std::thread &t : threads) t.join();

  std::unique_lock lk(state->mu);
  state->cv.wait(lk, [&] { return state->in_flight == 0; });
  if (!state->first_error.ok())
    return state->first_error.Context("after " + std::to_string(state->result.ops) +
                                      " completed transactions");
  LoadResult r = std::move(state->result);
  r.seconds = seconds_between(state->start, state->last_completion);
  return r;
}

}  // namespace strata::store_bench

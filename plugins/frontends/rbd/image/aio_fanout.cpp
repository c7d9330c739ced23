#include "aio_fanout.h"

#include <deque>

#include "strata/frontend_client.h"

namespace strata::rbd {

std::vector<int64_t> run_fanout(const strata_client_api *strata_api, size_t n, size_t window,
                                const std::function<int(size_t, strata_completion_t)> &start) {
  std::vector<int64_t> results(n, 0);
  std::deque<std::pair<size_t, strata_completion_t>> inflight;
  auto finish_oldest = [&] {
    auto [i, c] = inflight.front();
    inflight.pop_front();
    results[i] = strata_completion_wait(c);
    strata_completion_release(c);
  };
  for (size_t i = 0; i < n; ++i) {
    if (inflight.size() >= (window ? window : 1)) finish_oldest();
    strata_completion_t c = nullptr;
    int rc = strata_completion_create(nullptr, nullptr, &c);
    if (rc == 0) rc = start(i, c);
    if (rc < 0) {
      if (c) strata_completion_release(c);
      results[i] = rc;
      continue;
    }
    inflight.emplace_back(i, c);
  }
  while (!inflight.empty()) finish_oldest();
  return results;
}

}  // namespace strata::rbd

// Many asynchronous calls from a thread that may block (the administrative
// calls, extents): at most `window` in flight, waiting for the oldest
// before starting the next. No callbacks involved.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "strata/client_api.h"

namespace strata::rbd {

// start(i, c) starts call i on completion c (0) or fails (-errno, which
// becomes its result). Returns every call's result, in order.
std::vector<int64_t> run_fanout(const strata_client_api *api, size_t n, size_t window,
                                const std::function<int(size_t, strata_completion_t)> &start);

}  // namespace strata::rbd

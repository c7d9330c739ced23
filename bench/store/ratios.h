// The ratios issue 2 states goals for, computed from a pair's figures.
#pragma once

#include <vector>

#include "bench/store/report.h"

namespace strata::store_bench {

// Every ratio the pair's figures allow; one with a missing side says why.
std::vector<Ratio> compute_ratios(const PairReport &p);

}  // namespace strata::store_bench

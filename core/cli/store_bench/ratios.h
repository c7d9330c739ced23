// The ratios issue 2 states goals for, computed from a pair's figures.
#pragma once

#include <vector>

#include "cli/store_bench/report.h"

namespace strata::cli::bench {

// Every ratio the pair's figures allow; one with a missing side says why.
std::vector<Ratio> compute_ratios(const PairReport &p);

}  // namespace strata::cli::bench

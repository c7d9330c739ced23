// A deterministic mixed workload for the durability and replay tests.
#pragma once

#include <cstdint>
#include <vector>

#include "kit.h"

namespace strata::conformance {

// Transactions touching data, xattrs, omap, headers and collections of the
// collections "w.a" and "w.b" (created by the first transaction), shaped so
// that re-applying any suffix of them is well defined: object ops go only to
// collections that are never removed, or that are created in the same
// transaction. No CLONE: callers add one where they need it.
std::vector<TxnBuilder> mixed_workload(int n, uint64_t seed);

}  // namespace strata::conformance

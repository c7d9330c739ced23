// Deterministic pseudo-random transaction streams for replay tests.
#pragma once

#include <cstdint>
#include <vector>

#include "store_harness.h"

namespace strata::test {

// `n` transactions with seqs first_seq.. over a handful of objects in two
// collections, using every op type except CLONE (whose replay rules differ).
// The first transaction creates the collections. Collection "d" is removed
// and made again along the way; like the host, the stream only puts object
// ops into collections that exist at that point. Staged writes are staged
// in `store`, so the stream only fits that store. The same seed gives the
// same ops (stage ids aside).
std::vector<Txn> random_stream(TestStore &store, uint64_t first_seq, size_t n, unsigned seed);

}  // namespace strata::test

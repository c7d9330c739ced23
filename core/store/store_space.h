// How much room the filesystem under a store has, and whether a write of
// some size may still go there without eating into the reserve the store
// keeps for itself (its metadata, journal replay and checkpoints need room
// even on a disk the data has filled, or the OSD could neither go on nor
// restart).
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace strata::store {

struct StoreSpace {
  uint64_t total_bytes = 0;
  uint64_t used_bytes = 0;  // everything but what an unprivileged writer may still use
};

// statvfs of the filesystem holding `dir`.
Result<StoreSpace> filesystem_space(const std::string &dir);

// Whether `len` more bytes keep `space` out of the last reserve_pct percent
// of the filesystem. An unknown total (0) allows everything.
bool fits_outside_reserve(const StoreSpace &space, uint64_t len, int64_t reserve_pct);

// used / total, 0 when the total is unknown.
double used_ratio(const StoreSpace &space);

}  // namespace strata::store

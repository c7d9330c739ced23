// Reading a whole Store into a StoreState and comparing it with a model.
//
// read_store() uses only the Store's public reads (list_collections,
// list_objects, read, getxattrs, omap_list, omap_get_header) and checks on
// the way that stat() agrees with the data read. first_difference() names
// the first thing that differs ("pg.1/obj.3: data differs at byte 4096 of
// 12288 (expected 0x1f, found 0x00)"), or returns "" when equal.
//
// Threading: read_store() may run while other threads use the store, but then
// it is not a snapshot.
#pragma once

#include <string>

#include "common/status.h"
#include "store/store.h"
#include "store_model.h"

namespace strata::testing {

Result<StoreState> read_store(store::Store &s);

// "" when equal; otherwise one line describing the first difference.
std::string first_difference(const StoreState &expected, const StoreState &actual);

// Reads s and compares it with expected: "" when equal, else the first
// difference (or the read error).
std::string diff_store(store::Store &s, const StoreState &expected);

// Printable form of a byte string for messages: at most `max` bytes, escaped.
std::string printable(const std::string &bytes, size_t max = 40);

}  // namespace strata::testing

// Names the calling thread so that `top -H`, `perf` and gdb show what each of
// a daemon's threads does ("osd-shard-0", "store-apply", "msg-io-1", ...).
#pragma once

#include <string>

namespace strata {

// Linux keeps at most 15 characters; longer names are cut, never refused.
void name_this_thread(const std::string &name);

}  // namespace strata

// One process at a time per journal: two writers would interleave records
// and destroy the log.
#pragma once

#include <string>

namespace strata::journal {

// Takes an exclusive flock on the open file `fd` (released when the last
// reference to the open file goes, also when the process dies). Waits up
// to two seconds for a holder to go away: a process that was just killed
// may keep the file referenced a little longer while the kernel finishes or
// cancels its in-flight asynchronous I/O. Throws sdk::Error -EBUSY, naming
// `path`, when the lock stays taken.
void lock_medium(int fd, const std::string &path);

}  // namespace strata::journal

// What the commands that serve a frontend in the background share
// (`strata mount`, `strata image map`, `strata nbd serve --fork`): going to
// the background once serving, a state file naming the serving process per
// mount point or socket, and waiting for that process to end.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>

#include "cli/frontend_support.h"

namespace strata::cli {

// The state file of the instance of `kind` ("mount", "map", "nbd") serving
// `key` (an absolute path).
std::string frontend_state_file(const std::string &kind, const std::string &key);
// Writes our pid into it (making its directory).
void write_frontend_state(const std::string &file);
// The live process the state file names, 0 if none.
pid_t read_frontend_state(const std::string &file);

// Forks before any thread exists: the child calls serve(signals, ready_fd)
// and must write one byte 'K' to ready_fd once serving (then call
// detach_from_terminal); the parent exits 0 on that byte, or with the
// child's exit status when it ended first (its errors reach the terminal).
int serve_in_background(const std::string &cmd,
                        const std::function<int(const StopSignals &, int ready_fd)> &serve);
// After 'K': stdin, and stdout/stderr unless they go to a regular file,
// become /dev/null; the working directory becomes /.
void detach_from_terminal();
// Tells the parent that the child serves, then detaches (ready_fd < 0: the
// foreground, nothing to do).
void report_ready(int ready_fd);

// Waits up to timeout_ms for process pid to exit. True once it is gone.
bool wait_process_exit(pid_t pid, uint32_t timeout_ms);
// fusermount3 -u MOUNTPOINT; 0 or its exit status (127: not installed).
int run_fusermount(const std::string &mountpoint);
// An absolute path without symlinks; for a broken mount (ENOTCONN) the
// path as given, made absolute.
std::string absolute_path(const std::string &p);

}  // namespace strata::cli

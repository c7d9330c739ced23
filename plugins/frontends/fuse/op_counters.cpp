#include "op_counters.h"

namespace strata::fuse {

const char *op_name(Op op) {
  static const char *const kNames[] = {
      "lookup",     "forget",   "getattr", "setattr",  "readlink", "mknod",     "mkdir",
      "unlink",     "rmdir",    "symlink", "rename",   "link",     "open",      "create",
      "read",       "write",    "flush",   "release",  "fsync",    "opendir",   "readdir",
      "releasedir", "fsyncdir", "statfs",  "setxattr", "getxattr", "listxattr", "removexattr",
      "access",     "getlk",    "setlk",   "flock",    "fallocate"};
  static_assert(sizeof kNames / sizeof kNames[0] == size_t(Op::kCount));
  return kNames[size_t(op)];
}

}  // namespace strata::fuse

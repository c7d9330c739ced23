// libfuse's low-level operation table bound to a Filesystem (the
// session's userdata).
#pragma once

#include "filesystem.h"

namespace strata::fuse {

const fuse_lowlevel_ops &filesystem_ops();

}  // namespace strata::fuse

// What the two FUSE frontends (fuse: the filesystem; rbd's map: one image
// as a file) share of serving a libfuse session: the multithreaded loop,
// with half the workers kept idle for bursts.
#pragma once

#ifndef FUSE_USE_VERSION
#define FUSE_USE_VERSION 312
#endif
#include <fuse3/fuse_lowlevel.h>

namespace strata::frontends {

// Runs the session until it ends (unmounted, or fuse_session_exit);
// fuse_session_loop_mt's result.
inline int run_fuse_loop_mt(fuse_session *se, unsigned max_threads) {
  fuse_loop_config *cfg = fuse_loop_cfg_create();
  fuse_loop_cfg_set_max_threads(cfg, max_threads);
  fuse_loop_cfg_set_idle_threads(cfg, max_threads / 2 > 0 ? max_threads / 2 : 1);
  int rc = fuse_session_loop_mt(se, cfg);
  fuse_loop_cfg_destroy(cfg);
  return rc;
}

}  // namespace strata::frontends

// The fuse frontend's descriptor (`strata mount` runs it): MountClient
// behind the SDK's frontend adapter.
#include "mount_client.h"
#include "strata/cpp/frontend.hpp"

namespace {

size_t option_count() {
  size_t n = 0;
  strata::fuse::mount_option_specs(&n);
  return n;
}

}  // namespace

STRATA_FRONTEND_PLUGIN(strata::fuse::MountClient, "fuse", "0.1.0",
                       "a Strata filesystem mounted through FUSE (strata mount)",
                       strata::fuse::mount_option_specs(nullptr), option_count())

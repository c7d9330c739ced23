// The rbd frontend's descriptor (`strata nbd serve` and `strata image map`
// run it): ImageExport behind the SDK's frontend adapter.
#include "image_export.h"
#include "strata/cpp/frontend.hpp"

namespace {

size_t option_count() {
  size_t n = 0;
  strata::rbd::export_option_specs(&n);
  return n;
}

}  // namespace

STRATA_FRONTEND_PLUGIN(strata::rbd::ImageExport, "rbd", "0.1.0",
                       "block images over NBD or as one file over FUSE (strata nbd serve, "
                       "strata image map)",
                       strata::rbd::export_option_specs(nullptr), option_count())

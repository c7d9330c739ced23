// The plugin's descriptor: name, version, options, and the one exported
// entry symbol (made by STRATA_OBJECTSTORE_PLUGIN).
#include "mem_store.h"

namespace {
const strata_option_spec kOptions[] = {
    {"capacity", STRATA_OPT_INT, "1G", nullptr,
     "bytes the store reports as its total size in usage()"},
};
}  // namespace

STRATA_OBJECTSTORE_PLUGIN(mem::MemStore, "mem", "0.1.0",
                          "in-memory object store saving an image at each checkpoint (example)",
                          kOptions)

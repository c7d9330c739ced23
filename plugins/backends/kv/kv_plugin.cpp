// The plugin's one exported symbol: libstrata_backend_kv.so.
#include "kv/kv_store.h"
#include "kv/options.h"

STRATA_OBJECTSTORE_PLUGIN(strata::kv::KvStore, "kv", "0.1.0",
                          "objects in RocksDB or LevelDB; one transaction = one write batch",
                          strata::kv::kOptionSpecs)

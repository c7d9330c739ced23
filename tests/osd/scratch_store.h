// A real Store (kv backend, no journal) in a scratch directory, for unit
// tests that exercise the OSD's persistence.
#pragma once

#include <memory>

#include "osd_test_support.h"
#include "store/store.h"

namespace strata::osdtest {

// A kv store in its own temporary directory; reopen() closes and opens it
// again (what an OSD restart sees).
class ScratchStore {
 public:
  ScratchStore();
  ~ScratchStore();
  store::Store &operator*() { return *store_; }
  store::Store *operator->() { return store_.get(); }
  void reopen();
  // Submits t and REQUIREs success.
  void submit(store::Transaction t);

 private:
  TempDir dir_;
  std::unique_ptr<store::Store> store_;
};

}  // namespace strata::osdtest

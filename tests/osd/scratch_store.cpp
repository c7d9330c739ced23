#include "scratch_store.h"

#include <catch2/catch.hpp>

namespace strata::osdtest {

ScratchStore::ScratchStore() : dir_("osd-store") {
  store::MkfsParams p;
  p.dir = dir_.sub("store");
  p.backend = "kv";
  p.journal = "none";
  Status st = store::Store::mkfs(registry(), p, quiet_logger());
  REQUIRE(st.ToString() == Status::OK().ToString());
  reopen();
}

ScratchStore::~ScratchStore() {
  if (store_) (void)store_->close();
}

void ScratchStore::reopen() {
  if (store_) {
    REQUIRE(store_->close().ok());
    store_.reset();
  }
  auto s = store::Store::open(registry(), dir_.sub("store"), store::StoreSettings{}, quiet_logger());
  REQUIRE(s.status().ToString() == Status::OK().ToString());
  store_ = std::move(*s);
}

void ScratchStore::submit(store::Transaction t) {
  Status st = store_->submit(std::move(t));
  REQUIRE(st.ToString() == Status::OK().ToString());
}

}  // namespace strata::osdtest

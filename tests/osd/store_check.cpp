#include "store_check.h"

#include <catch2/catch.hpp>

#include "osd/object_digest.h"
#include "osd/types.h"
#include "osd_test_support.h"
#include "store/store.h"

namespace strata::osdtest {

namespace {

std::unique_ptr<store::Store> open_store(const OsdCluster &cl, int id) {
  REQUIRE(cl.osd_pid(id) == 0);
  auto s = store::Store::open(registry(), cl.store_dir(id), store::StoreSettings{}, quiet_logger());
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  return std::move(*s);
}

}  // namespace

void require_replicas_identical(const OsdCluster &cl, const std::vector<int> &osds,
                                const std::map<std::string, std::string> &expect) {
  std::vector<std::unique_ptr<store::Store>> stores;
  for (int id : osds) stores.push_back(open_store(cl, id));
  auto colls = stores[0]->list_collections();
  REQUIRE(colls.ok());
  size_t pgs = 0;
  for (const std::string &c : *colls) {
    if (!osd::parse_coll_name(c)) continue;
    ++pgs;
    auto names0 = stores[0]->list_objects(c);
    REQUIRE(names0.ok());
    for (size_t i = 1; i < stores.size(); ++i) {
      INFO("PG collection " << c << ": osd." << osds[0] << " vs osd." << osds[i]);
      auto names = stores[i]->list_objects(c);
      REQUIRE(names.ok());
      REQUIRE(*names == *names0);
    }
    for (const std::string &o : *names0) {
      if (o == osd::kPgMetaObject) continue;
      auto d0 = osd::object_digest(*stores[0], c, o);
      REQUIRE(d0.ok());
      for (size_t i = 1; i < stores.size(); ++i) {
        INFO("object " << o << " in " << c << ": osd." << osds[0] << " vs osd." << osds[i]);
        auto d = osd::object_digest(*stores[i], c, o);
        REQUIRE(d.ok());
        CHECK(*d == *d0);
      }
    }
  }
  CHECK(pgs > 0);
  for (size_t i = 0; i < stores.size(); ++i) {
    size_t found = 0;
    for (const auto &[oid, data] : expect)
      for (const std::string &c : *colls)
        if (auto d = stores[i]->read(c, oid); d.ok()) {
          INFO("object " << oid << " on osd." << osds[i]);
          CHECK(*d == data);
          ++found;
        }
    INFO("osd." << osds[i] << " holds " << found << " of " << expect.size() << " acknowledged objects");
    CHECK(found == expect.size());
  }
  for (auto &s : stores) REQUIRE(s->close().ok());
}

void corrupt_object(const OsdCluster &cl, int osd_id, const std::string &coll, const std::string &oid) {
  auto st = open_store(cl, osd_id);
  auto orig = st->read(coll, oid);
  INFO("reading " << oid << " from osd." << osd_id);
  REQUIRE(orig.ok());
  std::string bad = *orig;
  REQUIRE(bad.size() > 100);
  bad[100] ^= 0x5a;
  store::Transaction t;
  t.write(coll, oid, 0, bad);
  REQUIRE(st->submit(std::move(t)).ok());
  REQUIRE(st->close().ok());
}

}  // namespace strata::osdtest

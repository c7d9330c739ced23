// A process writing through ObjectMetaStore is killed with SIGKILL; every
// update it had acknowledged (on_durable OK) is there after a reopen.
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "child_process.h"
#include "client/cluster_client.h"
#include "mds/object_meta_store.h"
#include "process_cluster.h"

using namespace strata;
using namespace strata::mds;
using strata::testing::ChildProcess;
using strata::testing::ProcessCluster;

namespace {

std::string crash_name(uint64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "c%06llu", static_cast<unsigned long long>(i));
  return buf;
}

// args: conf, metadata pool id. Submits creates for ever, in windows of
// 16, and reports each index once it is durable.
int mds_writer_main(const std::vector<std::string> &args) {
  if (args.size() != 2) return 2;
  client::ClusterArgs ca;
  ca.conf_path = args[0];
  auto c = client::ClusterClient::create(ca);
  if (!c.ok() || !(*c)->connect(std::chrono::seconds(30)).ok()) return 3;
  ObjectMetaStoreOptions o;
  o.journal_segment_bytes = 16 << 10;               // rolls segments often
  o.apply_interval = std::chrono::milliseconds(2);  // applies often: crashes land mid-apply
  o.apply_quiet = std::chrono::milliseconds(2);
  o.apply_max_delay = std::chrono::milliseconds(10);
  ObjectMetaStore s(*c, static_cast<uint32_t>(std::stoul(args[1])), o);
  if (!s.open(1).ok()) return 4;
  for (uint64_t i = 0;; ++i) {
    MetaUpdate u;
    DentryRec d;
    d.name = crash_name(i);
    d.ino = 0x10000 + i;
    d.type = FileType::kRegular;
    InodeRec in;
    in.ino = d.ino;
    in.type = FileType::kRegular;
    d.inode = in;
    u.dentries.push_back(DentryChange{kRootIno, d.name, d});
    u.ino_next = d.ino + 1;
    s.submit(std::move(u), [i](Status st) {
      if (st.ok())
        strata::testing::report(i);
      else
        std::_Exit(5);
    });
    if (i % 16 == 15 && !s.flush().ok()) return 5;
  }
}
STRATA_CHILD_MODE("mds_writer", mds_writer_main);

}  // namespace

TEST_CASE("mds store: every acknowledged update survives a SIGKILL of the writer",
          "[mds][store][crash]") {
  ProcessCluster pc(3);
  REQUIRE_CLUSTER(pc);
  client::ClusterArgs ca;
  ca.conf_path = pc.conf();
  auto cr = client::ClusterClient::create(ca);
  REQUIRE(cr.ok());
  auto c = *cr;
  REQUIRE(c->connect(std::chrono::seconds(30)).ok());
  std::string out;
  REQUIRE(pc.cli("pool create mds_crash --size 2 --min-size 1 --pg-num 4", &out) == 0);
  auto pool = c->find_pool("mds_crash");
  REQUIRE(pool.ok());
  auto child = ChildProcess::spawn("mds_writer", {pc.conf(), std::to_string(pool->id)});
  REQUIRE(child.ok());
  std::vector<uint64_t> acked;
  while (acked.size() < 400) {
    auto r = child->read_reports(acked, 30000);
    REQUIRE(r == ChildProcess::Read::kData);
  }
  child->kill9();
  child->read_remaining(acked);
  INFO(acked.size() << " updates acknowledged before the kill");
  ObjectMetaStore s(c, pool->id);
  auto rs = s.open(2);
  REQUIRE(rs.ok());
  uint64_t high = 0;
  for (uint64_t i : acked) {
    auto d = s.lookup(kRootIno, crash_name(i));
    REQUIRE(d.ok());
    INFO(crash_name(i));
    REQUIRE(d->has_value());
    high = std::max(high, i);
  }
  CHECK(rs->ino_next >= 0x10000 + high + 1);
  s.close();
  c->shutdown();
}

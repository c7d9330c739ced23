// ABI 1.3 of the object store and the journal: ops read by the
// transaction's op stride, the control call, and the visitor convention of
// plugin.h. A plugin built for an older minor is not held to them (the host
// adapts to it).
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "kit.h"

namespace {
using namespace strata::conformance;

bool built_for_1_3() { return descriptor().abi_minor >= 3; }

bool has_control() {
  return ops_size() >= offsetof(strata_objectstore_ops, control) + sizeof(void *) &&
         backend_ops().control != nullptr;
}

bool journal_has_control() {
  return ops_size() >= offsetof(strata_journal_ops, control) + sizeof(void *) &&
         journal_ops().control != nullptr;
}

// Ops numbers no plugin may serve: public numbers not assigned yet, and
// numbers outside both ranges of plugin.h.
const int kUnknownOps[] = {0, -1, STRATA_CTL_PUBLIC_MAX, STRATA_CTL_VENDOR_MAX + 1, 0x7fffffff};

// The ops of `txn` laid out `extra` bytes further apart than this header's
// strata_op, the gap filled with bytes a plugin must never read as an op.
struct WideOps {
  WideOps(const TxnBuilder &txn, size_t extra) : stride(sizeof(strata_op) + extra) {
    const std::vector<strata_op> &ops = txn.ops();
    // Whole strata_op units keep every op aligned as the plugin expects.
    static_assert(alignof(strata_op) == 8);
    REQUIRE(stride % alignof(strata_op) == 0);
    bytes.assign((stride * ops.size() + sizeof(strata_op) - 1) / sizeof(strata_op), strata_op{});
    auto *base = reinterpret_cast<unsigned char *>(bytes.data());
    std::memset(base, 0xA5, bytes.size() * sizeof(strata_op));
    for (size_t i = 0; i < ops.size(); ++i) std::memcpy(base + i * stride, &ops[i], sizeof ops[i]);
    n = ops.size();
  }
  strata_txn txn(uint64_t seq) const {
    strata_txn t{};
    t.seq = seq;
    t.ops = bytes.data();
    t.n_ops = n;
    t.op_size = static_cast<uint32_t>(stride);
    return t;
  }
  size_t stride;
  size_t n = 0;
  std::vector<strata_op> bytes;
};

TEST_CASE("ops are read op_size bytes apart: a host whose strata_op is larger is understood",
          "[backend][abi13]") {
  if (!built_for_1_3()) {
    SUCCEED("built for ABI 1." << descriptor().abi_minor << ": the host sends it the 1.2 layout");
    return;
  }
  FreshStore store;
  TxnBuilder t;
  t.mkcoll("c")
      .write("c", "obj", 3, "stride")
      .setxattr("c", "obj", "name", "value")
      .omap_set("c", "obj", "key", "omap value")
      .touch("c", "second");
  WideOps wide(t, 40);
  strata_txn txn = wide.txn(1);
  strata_err err{};
  int rc = store.ops().apply(store.handle(), &txn, &err);
  INFO("op_size " << txn.op_size << ": " << err.msg);
  REQUIRE(rc == 0);
  CHECK(store.read_all("c", "obj") == std::string("\0\0\0stride", 9));
  CHECK(store.getxattr("c", "obj", "name") == std::optional<std::string>("value"));
  CHECK(store.omap_get("c", "obj", "key") == std::optional<std::string>("omap value"));
  CHECK(store.list_objects("c") == NameList{"obj", "second"});
}

TEST_CASE("control answers -EOPNOTSUPP to an op it does not know and leaves the argument alone",
          "[backend][abi13]") {
  if (!built_for_1_3() || !has_control()) {
    SUCCEED("no control slot: the host answers -EOPNOTSUPP for the plugin");
    return;
  }
  FreshStore store;
  for (int op : kUnknownOps) {
    uint64_t arg = 0x5eed5eed5eed5eedull;
    strata_err err{};
    int rc = store.ops().control(store.handle(), op, &arg, &err);
    INFO("control op " << op << ": " << errno_name(rc) << " " << err.msg);
    CHECK(rc == -EOPNOTSUPP);
    CHECK(arg == 0x5eed5eed5eed5eedull);
  }
}

TEST_CASE("a store with data checksums reports its checksum failures: none on a fresh store",
          "[backend][abi13]") {
  if (!built_for_1_3() || !has_control()) {
    SUCCEED("no control slot: the host answers -EOPNOTSUPP for the plugin");
    return;
  }
  FreshStore store;
  store.apply(TxnBuilder().mkcoll("c").write("c", "obj", 0, pattern_bytes(8192, 1)));
  CHECK(store.read_all("c", "obj").size() == 8192);
  uint64_t n = 0x5eed;
  strata_err err{};
  int rc = store.ops().control(store.handle(), STRATA_OS_CTL_CHECKSUM_FAILURES, &n, &err);
  INFO(errno_name(rc) << " " << err.msg);
  if (store.has_cap(STRATA_OS_CAP_DATA_CHECKSUMS)) {
    CHECK(rc == 0);
    CHECK(n == 0);
  } else {
    CHECK(rc == -EOPNOTSUPP);
    CHECK(n == 0x5eed);
  }
}

// Counts its calls and stops the iteration with `stop_with` on call `stop_at`.
struct Stopper {
  int stop_at;
  int stop_with;
  int calls = 0;
  static int name(void *ctx, strata_slice) { return static_cast<Stopper *>(ctx)->next(); }
  static int kv(void *ctx, strata_slice, strata_slice) {
    return static_cast<Stopper *>(ctx)->next();
  }
  int next() { return ++calls == stop_at ? stop_with : 0; }
};

TEST_CASE("a visitor that stops with a value ends the iteration and the call returns that value",
          "[backend][abi13]") {
  if (!built_for_1_3()) {
    SUCCEED("built for ABI 1." << descriptor().abi_minor << ": a stop returned 0 then");
    return;
  }
  FreshStore store;
  TxnBuilder t;
  t.mkcoll("a").mkcoll("b").mkcoll("c");
  for (const char *o : {"x", "y", "z"}) {
    t.touch("a", o).setxattr("a", o, "n1", "v").setxattr("a", o, "n2", "v");
    t.omap_set("a", o, "k1", "v").omap_set("a", o, "k2", "v").omap_set("a", o, "k3", "v");
  }
  store.apply(t);
  const strata_objectstore_ops &ops = store.ops();
  strata_err err{};
  {
    Stopper s{2, 7};
    CHECK(ops.list_collections(store.handle(), &Stopper::name, &s, &err) == 7);
    CHECK(s.calls == 2);
  }
  {
    Stopper s{1, 9};
    CHECK(ops.list_objects(store.handle(), {"a", 1}, {}, 0, &Stopper::name, &s, &err) == 9);
    CHECK(s.calls == 1);
  }
  {
    Stopper s{2, -ECANCELED};
    CHECK(ops.getxattrs(store.handle(), {"a", 1}, {"y", 1}, &Stopper::kv, &s, &err) ==
          -ECANCELED);
    CHECK(s.calls == 2);
  }
  {
    Stopper s{3, 1};
    CHECK(ops.omap_iterate(store.handle(), {"a", 1}, {"z", 1}, {}, {}, 0, &Stopper::kv, &s,
                           &err) == 1);
    CHECK(s.calls == 3);
  }
  {
    Stopper s{100, 5};  // never stops: the call succeeds with 0
    CHECK(ops.list_objects(store.handle(), {"a", 1}, {}, 0, &Stopper::name, &s, &err) == 0);
    CHECK(s.calls == 3);
  }
}

TEST_CASE("journal control answers -EOPNOTSUPP to an op it does not know", "[journal][abi13]") {
  if (!built_for_1_3() || !journal_has_control()) {
    SUCCEED("no control slot: the host answers -EOPNOTSUPP for the plugin");
    return;
  }
  FreshJournal j;
  for (int op : kUnknownOps) {
    uint64_t arg = 0x5eed;
    strata_err err{};
    int rc = j.ops().control(j.handle(), op, &arg, &err);
    INFO("control op " << op << ": " << errno_name(rc) << " " << err.msg);
    CHECK(rc == -EOPNOTSUPP);
    CHECK(arg == 0x5eed);
  }
}

void ack(void *, int) {}

int stop_at_seq_3(void *ctx, uint64_t seq, const void *, size_t) {
  ++*static_cast<int *>(ctx);
  return seq == 3 ? 42 : 0;
}

TEST_CASE("journal replay stopped by a positive value returns that value", "[journal][abi13]") {
  if (!built_for_1_3()) {
    SUCCEED("built for ABI 1." << descriptor().abi_minor << ": only negative values stopped");
    return;
  }
  FreshJournal j;
  strata_err err{};
  strata_journal_replay_result res{};
  res.struct_size = sizeof res;
  int none = 0;  // a fresh journal has no record to visit
  REQUIRE(j.ops().replay(j.handle(), 0, &stop_at_seq_3, &none, &res, &err) == 0);
  REQUIRE(none == 0);
  const std::string record = "a record";
  for (uint64_t seq = 1; seq <= 5; ++seq)
    REQUIRE(j.ops().append(j.handle(), seq, record.data(), record.size(), &ack, nullptr, &err) ==
            0);
  REQUIRE(j.ops().flush(j.handle(), &err) == 0);
  j.reopen();
  int visited = 0;
  res = strata_journal_replay_result{};
  res.struct_size = sizeof res;
  int rc = j.ops().replay(j.handle(), 0, &stop_at_seq_3, &visited, &res, &err);
  INFO(errno_name(rc) << " " << err.msg);
  CHECK(rc == 42);
  CHECK(visited == 3);
}

}  // namespace

// What the host relies on before it applies anything: a truthful descriptor,
// a complete vtable, and a fresh store that is empty.
#include <catch2/catch.hpp>
#include <cstddef>
#include <set>

#include "kit.h"

namespace {
using namespace strata::conformance;

TEST_CASE("the descriptor names a backend plugin, its version and the ABI it was built for",
          "[backend][abi]") {
  const strata_plugin_descriptor &d = descriptor();
  CHECK(d.kind == STRATA_KIND_OBJECTSTORE);
  CHECK(d.abi_major == STRATA_ABI_MAJOR);
  CHECK(d.abi_minor <= STRATA_ABI_MINOR);
  REQUIRE(d.name != nullptr);
  CHECK(std::string(d.name).size() > 0);
  REQUIRE(d.version != nullptr);
  CHECK(std::string(d.version).size() > 0);
  REQUIRE(d.description != nullptr);
  CHECK(std::string(d.description).find('\n') == std::string::npos);
}

TEST_CASE("every option the plugin declares has a unique name, a known type and a valid default",
          "[backend][abi]") {
  const strata_plugin_descriptor &d = descriptor();
  if (d.n_options > 0) REQUIRE(d.options != nullptr);
  std::set<std::string> names;
  for (size_t i = 0; i < d.n_options; ++i) {
    const strata_option_spec &o = d.options[i];
    REQUIRE(o.name != nullptr);
    INFO("option " << o.name);
    CHECK(names.insert(o.name).second);
    CHECK(o.type >= STRATA_OPT_STRING);
    CHECK(o.type <= STRATA_OPT_ENUM);
    if (o.type == STRATA_OPT_ENUM) CHECK(o.enum_values != nullptr);
    if (o.default_value) CHECK(option_value_parses(o, o.default_value));
    CHECK(o.help != nullptr);
  }
}

TEST_CASE("every ABI 1.0 function of the backend vtable is present", "[backend][abi]") {
  const strata_objectstore_ops &ops = backend_ops();
  CHECK(ops_size() >= offsetof(strata_objectstore_ops, stage_write));
  CHECK(ops.mkfs != nullptr);
  CHECK(ops.open != nullptr);
  CHECK(ops.close != nullptr);
  CHECK(ops.capabilities != nullptr);
  CHECK(ops.apply != nullptr);
  CHECK(ops.checkpoint != nullptr);
  CHECK(ops.committed_seq != nullptr);
  CHECK(ops.read != nullptr);
  CHECK(ops.stat != nullptr);
  CHECK(ops.getxattr != nullptr);
  CHECK(ops.getxattrs != nullptr);
  CHECK(ops.omap_get_header != nullptr);
  CHECK(ops.omap_get != nullptr);
  CHECK(ops.omap_iterate != nullptr);
  CHECK(ops.list_objects != nullptr);
  CHECK(ops.list_collections != nullptr);
  CHECK(ops.usage != nullptr);
  CHECK(ops.fsck != nullptr);
}

TEST_CASE("a store that claims staged writes has both stage functions in its vtable",
          "[backend][abi]") {
  FreshStore store;
  if (!store.has_cap(STRATA_OS_CAP_STAGED_WRITES)) {
    SUCCEED("the plugin does not claim STRATA_OS_CAP_STAGED_WRITES");
    return;
  }
  REQUIRE(ops_size() >= offsetof(strata_objectstore_ops, stage_release_unused) + sizeof(void *));
  CHECK(backend_ops().stage_write != nullptr);
  CHECK(backend_ops().stage_release_unused != nullptr);
}

TEST_CASE("a freshly made store is empty and has committed nothing", "[backend][abi]") {
  FreshStore store;
  CHECK(store.list_collections().empty());
  CHECK(store.committed_seq() == 0);
}

TEST_CASE("capabilities do not change when the store is reopened", "[backend][abi]") {
  FreshStore store;
  uint64_t before = store.caps();
  store.reopen();
  CHECK(store.caps() == before);
}

TEST_CASE("closing a null store handle is harmless", "[backend][abi]") {
  backend_ops().close(nullptr);
  SUCCEED();
}

TEST_CASE("open of a directory that holds no store fails with a message", "[backend][abi]") {
  ScratchDir empty("not-a-store");
  InstanceArgs args(empty.path());
  strata_err err{};
  strata_objectstore *os = reinterpret_cast<strata_objectstore *>(&err);  // must be reset
  int rc = backend_ops().open(args.get(), &os, &err);
  CHECK(rc < 0);
  CHECK(os == nullptr);
  CHECK(std::string(err.msg).size() > 0);
  if (rc == 0) backend_ops().close(os);
}

}  // namespace

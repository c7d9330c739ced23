// ABI 1.3 at the host's side of the boundary, against plugins built for 1.2
// (tests/abi/frozen_1_2) and for 1.3: the op stride, the control call, the
// visitor convention, host visitors that throw, host-only op types,
// placement capabilities with a handle, plugins without options.
#include <catch2/catch.hpp>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "common/log.h"
#include "host/host_callback.h"
#include "host/plugin_loader.h"
#include "placement/map_builder.h"
#include "placement/placer.h"
#include "store/plugin_instances.h"
#include "store/transaction.h"
#include "strata/placement.h"

namespace {

using strata::host::load_plugin;
using strata::host::Plugin;
using strata::store::BackendInstance;

const std::string kDir = ABI_PLUGIN_DIR;
std::string file(const char *name) { return kDir + "/libstrata_" + name + ".so"; }

Plugin load(const char *name, uint32_t kind) {
  strata::Result<Plugin> r = load_plugin(file(name), static_cast<int>(kind));
  INFO(r.status().message());
  REQUIRE(r.ok());
  return r.value();
}

// An open instance of the backend plugin `name`, through the host's wrapper.
std::unique_ptr<BackendInstance> open_backend(const char *name, strata::Logger &log) {
  Plugin p = load(name, STRATA_KIND_OBJECTSTORE);
  REQUIRE(BackendInstance::mkfs(p, "/nonexistent-abi-store", {}, log).ok());
  auto b = BackendInstance::open(p, "/nonexistent-abi-store", {}, log);
  INFO(b.status().message());
  REQUIRE(b.ok());
  return std::move(b.value());
}

int collect(void *ctx, strata_slice name) {
  static_cast<std::vector<std::string> *>(ctx)->emplace_back(name.data, name.len);
  return 0;
}

struct StopAt {
  std::string name;
  int value;
  int calls = 0;
  static int visit(void *ctx, strata_slice n) {
    auto *s = static_cast<StopAt *>(ctx);
    ++s->calls;
    return std::string(n.data, n.len) == s->name ? s->value : 0;
  }
};

TEST_CASE("a 1.2 backend has no control slot: the host answers -EOPNOTSUPP for it", "[abi]") {
  strata::Logger log;
  CHECK(load("backend_legacy12", STRATA_KIND_OBJECTSTORE).ops_size() <
        offsetof(strata_objectstore_ops, control) + sizeof(void *));
  auto b = open_backend("backend_legacy12", log);
  uint64_t n = 77;
  strata_err err{};
  CHECK(b->control(STRATA_OS_CTL_CHECKSUM_FAILURES, &n, &err) == -EOPNOTSUPP);
  CHECK(n == 77);
  CHECK(b->checksum_failures() == std::nullopt);
}

TEST_CASE("a 1.2 backend applies the host's ops, which keep the 1.2 layout", "[abi]") {
  strata::Logger log;
  auto b = open_backend("backend_legacy12", log);
  strata::store::Transaction t;
  t.mkcoll("c").write("c", "one", 0, "first").write("c", "two", 1, "second");
  strata_err err{};
  REQUIRE(b->apply(1, t.ops(), 0, &err) == 0);
  char buf[16];
  CHECK(b->ops()->read(b->handle(), {"c", 1}, {"two", 3}, 0, sizeof buf, buf, &err) == 7);
  CHECK(std::string(buf, 7) == std::string("\0second", 7));
  CHECK(b->ops()->read(b->handle(), {"c", 1}, {"one", 3}, 0, sizeof buf, buf, &err) == 5);
}

TEST_CASE("a visitor's stop value comes back from a 1.2 backend that returned 0 for it",
          "[abi]") {
  strata::Logger log;
  auto b = open_backend("backend_legacy12", log);
  strata_err err{};
  std::vector<std::string> all;
  CHECK(b->list_collections(&collect, &all, &err) == 0);
  CHECK(all == std::vector<std::string>{"a", "b", "c"});
  StopAt stop{"b", 5};
  CHECK(b->list_collections(&StopAt::visit, &stop, &err) == 5);
  CHECK(stop.calls == 2);
}

TEST_CASE("an exception a host visitor throws reaches the host's caller, not the plugin",
          "[abi]") {
  strata::Logger log;
  // A C plugin (no unwind tables) and a C++ one (whose guard would have
  // turned the exception into -EIO): both must see a plain stop.
  for (const char *name : {"backend_legacy12", "backend_cpp_probe"}) {
    INFO(name);
    auto b = open_backend(name, log);
    strata_err err{};
    auto throwing = [](void *ctx, strata_slice) -> int {
      if (++*static_cast<int *>(ctx) == 2) throw std::runtime_error("the consumer failed");
      return 0;
    };
    int calls = 0;
    CHECK_THROWS_WITH(b->list_collections(throwing, &calls, &err), "the consumer failed");
    CHECK(calls == 2);
    // The plugin is unharmed and visits everything again.
    std::vector<std::string> all;
    CHECK(b->list_collections(&collect, &all, &err) == 0);
    CHECK(all.size() == 3);
  }
}

TEST_CASE("the host's trampolines and completions cannot throw into a plugin", "[abi]") {
  using Names = strata::host::Visit<strata_slice>;
  using Records = strata::host::Visit<uint64_t, const void *, size_t>;
  static_assert(noexcept(Names::call(nullptr, strata_slice{})));
  static_assert(noexcept(Records::call_abort_on_stop(nullptr, 0, nullptr, 0)));
  static_assert(std::is_nothrow_invocable_v<strata::store::JournalInstance::DoneFn, void *, int>);
  // A completion that may throw does not convert to the type append() takes.
  static_assert(
      !std::is_convertible_v<void (*)(void *, int), strata::store::JournalInstance::DoneFn>);
  SUCCEED();
}

TEST_CASE("a 1.3 backend gets the op stride and every op; a stop value passes through",
          "[abi]") {
  strata::Logger log;
  auto b = open_backend("backend_cpp_probe", log);
  strata::store::Transaction t;
  t.mkcoll("c").touch("c", "o").setxattr("c", "o", "n", "v").omap_set("c", "o", "k", "v");
  strata_err err{};
  REQUIRE(b->apply(9, t.ops(), 0, &err) == 0);
  uint64_t seen[9] = {};
  REQUIRE(b->control(STRATA_CTL_VENDOR_MIN + 1, seen, &err) == 0);
  CHECK(seen[0] == 4);
  CHECK(std::vector<uint64_t>(seen + 1, seen + 5) ==
        std::vector<uint64_t>{STRATA_OP_MKCOLL, STRATA_OP_TOUCH, STRATA_OP_SETXATTR,
                              STRATA_OP_OMAP_SET});
  StopAt stop{"y", 3};
  CHECK(b->list_collections(&StopAt::visit, &stop, &err) == 3);
  CHECK(stop.calls == 2);
  // Public ops it does not serve, through the SDK's default.
  uint64_t n = 5;
  CHECK(b->control(STRATA_OS_CTL_CHECKSUM_FAILURES, &n, &err) == -EOPNOTSUPP);
  CHECK(n == 5);
}

TEST_CASE("the host refuses to pass a host-only op type to a backend", "[abi]") {
  strata::Logger log;
  auto b = open_backend("backend_cpp_probe", log);
  strata::store::Transaction t;
  t.mkcoll("c").append("c", "o", "not resolved into a write");
  CHECK(t.ops()[1].type >= STRATA_OP_HOST_MIN);
  strata_err err{};
  CHECK(b->apply(3, t.ops(), 0, &err) == -EINVAL);
  CHECK(std::string(err.msg) == "txn 3 op 1: op type " + std::to_string(STRATA_OP_HOST_MIN) +
                                    " is host-internal and never passed to a backend");
  uint64_t seen[9] = {};
  REQUIRE(b->control(STRATA_CTL_VENDOR_MIN + 1, seen, &err) == 0);
  CHECK(seen[0] == 0);  // apply() never ran
}

TEST_CASE("a plugin without options gives none and loads; options without an array are refused",
          "[abi]") {
  Plugin p = load("backend_cpp_probe", STRATA_KIND_OBJECTSTORE);
  CHECK(p.descriptor().options == nullptr);
  CHECK(p.descriptor().n_options == 0);
  CHECK(strata::store::plugin_options_with_defaults(p, {}).empty());
  std::string path = file("backend_options_without_array");
  strata::Result<Plugin> r = load_plugin(path);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() ==
        "plugin " + path +
            ": descriptor declares 2 options but gives no options array (a plugin without "
            "options gives NULL and 0)");
}

strata::placement::PlacementMap small_map() {
  strata::placement::BuildSpec spec;
  spec.levels = {{"host", 2}, {"device", 2}};
  auto m = strata::placement::build_map(spec);
  INFO(m.status().message());
  REQUIRE(m.ok());
  return m.value();
}

TEST_CASE("a 1.2 placement plugin's capabilities are read through its old, handle-less slot",
          "[abi]") {
  Plugin p = load("placement_legacy12", STRATA_KIND_PLACEMENT);
  CHECK(p.abi_minor() == 2);
  auto placer = strata::placement::Placer::create(p, small_map());
  INFO(placer.status().message());
  REQUIRE(placer.ok());
  CHECK(placer->capabilities() ==
        (STRATA_PLACEMENT_CAP_REWEIGHT | STRATA_PLACEMENT_CAP_MULTI_TAKE));
}

}  // namespace

// The host's checks at load time, against plugin files built to be wrong
// (tests/abi/plugins), and an old-ABI plugin that must keep working.
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstring>
#include <string>

#include "host/plugin_loader.h"
#include "strata/journal.h"
#include "strata/objectstore.h"

namespace {

using strata::host::load_plugin;
using strata::host::Plugin;

const std::string kDir = ABI_PLUGIN_DIR;
std::string file(const char *name) { return kDir + "/libstrata_" + name + ".so"; }

const std::string kHostAbi =
    std::to_string(STRATA_ABI_MAJOR) + "." + std::to_string(STRATA_ABI_MINOR);

// The refusal message for `path`, failing the test if it loaded.
std::string refusal(const std::string &path, int expected_kind = -1) {
  strata::Result<Plugin> r = load_plugin(path, expected_kind);
  REQUIRE_FALSE(r.ok());
  const std::string &msg = r.status().message();
  CHECK(msg.find('\n') == std::string::npos);
  return msg;
}

TEST_CASE("a plugin built for another ABI major is refused naming both versions", "[abi]") {
  std::string path = file("backend_wrong_major");
  CHECK(refusal(path) == "plugin " + path + ": ABI major mismatch: host speaks " + kHostAbi +
                             ", plugin was built for " + std::to_string(STRATA_ABI_MAJOR + 1) +
                             ".0");
}

TEST_CASE("a file without the entry symbol is refused naming the symbol it lacks", "[abi]") {
  std::string path = file("backend_no_entry");
  CHECK(refusal(path) ==
        "plugin " + path +
            ": has no entry symbol " STRATA_PLUGIN_ENTRY_SYMBOL " (not a Strata ABI " +
            std::to_string(STRATA_ABI_MAJOR) + ".x plugin, or built for another major version)");
}

TEST_CASE("a journal plugin where a backend is expected is refused naming both kinds", "[abi]") {
  std::string path = file("journal_abi_kind");
  CHECK(refusal(path, STRATA_KIND_OBJECTSTORE) ==
        "plugin " + path +
            ": kind mismatch: expected a backend plugin, found a journal plugin named "
            "'abi_kind'");
}

TEST_CASE("the same journal plugin loads where a journal is expected", "[abi]") {
  strata::Result<Plugin> r = load_plugin(file("journal_abi_kind"), STRATA_KIND_JOURNAL);
  REQUIRE(r.ok());
  CHECK(r->name() == "abi_kind");
}

// What dlopen said, after "cannot be loaded: ".
std::string load_failure(const std::string &path) {
  std::string prefix = "plugin " + path + ": cannot be loaded: ";
  std::string msg = refusal(path);
  REQUIRE(msg.compare(0, prefix.size(), prefix) == 0);
  return msg.substr(prefix.size());
}

TEST_CASE("a file that is not a shared object is refused with the loader's reason", "[abi]") {
  std::string why = load_failure(file("backend_not_elf"));
  INFO(why);
  CHECK((why.find("invalid ELF header") != std::string::npos ||
         why.find("file too short") != std::string::npos));
  CHECK(why.find("Bad file descriptor") == std::string::npos);
}

TEST_CASE("a missing file is refused saying there is no such file", "[abi]") {
  std::string why = load_failure(file("backend_that_was_never_built"));
  INFO(why);
  CHECK(why.find("No such file or directory") != std::string::npos);
  CHECK(why.find("Bad file descriptor") == std::string::npos);
}

TEST_CASE("a plugin whose dependency cannot be found is refused naming the dependency", "[abi]") {
  std::string why = load_failure(file("backend_missing_dependency"));
  INFO(why);
  CHECK(why.find("libstrata_abi_missing_dependency.so") != std::string::npos);
  CHECK(why.find("No such file or directory") != std::string::npos);
}

TEST_CASE("a backend with the right vtable size but NULL functions is refused naming the first",
          "[abi]") {
  std::string path = file("backend_all_null");
  CHECK(refusal(path) == "plugin " + path +
                             ": backend vtable has no mkfs function (a required slot is NULL)");
}

TEST_CASE("a backend with one NULL function among stubs is refused naming that slot", "[abi]") {
  std::string path = file("backend_null_read");
  CHECK(refusal(path) == "plugin " + path +
                             ": backend vtable has no read function (a required slot is NULL)");
}

TEST_CASE("a journal with a NULL flush is refused naming the slot", "[abi]") {
  std::string path = file("journal_null_flush");
  CHECK(refusal(path) == "plugin " + path +
                             ": journal vtable has no flush function (a required slot is NULL)");
}

TEST_CASE("a backend without the optional staged-write functions loads", "[abi]") {
  strata::Result<Plugin> r = load_plugin(file("backend_crashes_in_usage"), STRATA_KIND_OBJECTSTORE);
  REQUIRE(r.ok());
  CHECK(r->ops<strata_objectstore_ops>()->mkfs != nullptr);
}

TEST_CASE("a plugin built for a newer ABI minor is refused, asking to upgrade the host", "[abi]") {
  std::string path = file("backend_newer_minor");
  CHECK(refusal(path) == "plugin " + path + ": ABI too new: host speaks " + kHostAbi +
                             ", plugin was built for " + std::to_string(STRATA_ABI_MAJOR) + "." +
                             std::to_string(STRATA_ABI_MINOR + 1) + " (upgrade the host)");
}

TEST_CASE("a backend whose vtable is smaller than ABI 1.0 is refused naming both sizes", "[abi]") {
  std::string path = file("backend_tiny_vtable");
  CHECK(refusal(path) == "plugin " + path + ": backend vtable too small: 8 bytes, ABI 1.0 needs " +
                             std::to_string(offsetof(strata_objectstore_ops, stage_write)));
}

TEST_CASE("a plugin built against the frozen ABI 1.0 headers loads", "[abi]") {
  strata::Result<Plugin> r = load_plugin(file("backend_legacy10"), STRATA_KIND_OBJECTSTORE);
  REQUIRE(r.ok());
  CHECK(r->name() == "legacy10");
  CHECK(r->descriptor().abi_major == 1);
  CHECK(r->abi_minor() == 0);
}

TEST_CASE("the host sees no staged writes in a 1.0 plugin because its vtable ends before them",
          "[abi]") {
  strata::Result<Plugin> r = load_plugin(file("backend_legacy10"), STRATA_KIND_OBJECTSTORE);
  REQUIRE(r.ok());
  // The 1.0 layout ends right after fsck: exactly where 1.1 appended.
  CHECK(r->ops_size() == offsetof(strata_objectstore_ops, stage_write));
  CHECK(r->ops_size() < offsetof(strata_objectstore_ops, stage_write) + sizeof(void *));
}

TEST_CASE("a 1.0 plugin applies a transaction and reads it back through the vtable", "[abi]") {
  strata::Result<Plugin> r = load_plugin(file("backend_legacy10"), STRATA_KIND_OBJECTSTORE);
  REQUIRE(r.ok());
  const strata_objectstore_ops &ops = *r->ops<strata_objectstore_ops>();
  strata_open_args args{};
  args.struct_size = sizeof args;
  args.path = "/nonexistent-legacy-store";
  strata_err err{};
  REQUIRE(ops.mkfs(&args, &err) == 0);
  strata_objectstore *os = nullptr;
  REQUIRE(ops.open(&args, &os, &err) == 0);
  REQUIRE(os != nullptr);

  strata_op write_op{};
  write_op.type = STRATA_OP_WRITE;
  write_op.collection = {"c", 1};
  write_op.object = {"obj", 3};
  write_op.value = {"hello, 1.0", 10};
  write_op.offset = 2;
  write_op.length = 10;
  strata_txn txn{};
  txn.seq = 1;
  txn.ops = &write_op;
  txn.n_ops = 1;
  CHECK(ops.apply(os, &txn, &err) == 0);

  char buf[32];
  std::memset(buf, '#', sizeof buf);
  CHECK(ops.read(os, {"c", 1}, {"obj", 3}, 0, sizeof buf, buf, &err) == 12);
  CHECK(std::string(buf, 12) == std::string("\0\0hello, 1.0", 12));
  strata_object_stat st{};
  st.struct_size = sizeof st;
  CHECK(ops.stat(os, {"c", 1}, {"obj", 3}, &st, &err) == 0);
  CHECK(st.size == 12);
  CHECK(ops.capabilities(os) == 0);
  ops.close(os);
}

TEST_CASE("a registry scan keeps the good plugins and lists each refused file with its reason",
          "[abi]") {
  strata::host::PluginRegistry registry({kDir});
  registry.scan();
  std::vector<std::string> loaded;
  for (const Plugin &p : registry.plugins()) loaded.push_back(p.name());
  std::sort(loaded.begin(), loaded.end());
  CHECK(loaded == std::vector<std::string>{"abi_kind", "cpp_probe", "crashes_in_usage", "legacy10",
                                           "legacy12", "legacy12"});
  std::vector<std::string> refused;
  for (const auto &r : registry.refused()) {
    CHECK(r.reason.find(r.path) != std::string::npos);
    refused.push_back(r.path.substr(kDir.size() + 1));
  }
  std::sort(refused.begin(), refused.end());
  CHECK(refused == std::vector<std::string>{
                       "libstrata_backend_all_null.so", "libstrata_backend_leaky.so",
                       "libstrata_backend_missing_dependency.so",
                       "libstrata_backend_newer_minor.so", "libstrata_backend_no_entry.so",
                       "libstrata_backend_not_elf.so", "libstrata_backend_null_read.so",
                       "libstrata_backend_options_without_array.so",
                       "libstrata_backend_tiny_vtable.so", "libstrata_backend_wrong_major.so",
                       "libstrata_journal_null_flush.so"});
}

}  // namespace

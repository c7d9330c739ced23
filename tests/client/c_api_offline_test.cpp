// The C API without a cluster: handle lifecycles, argument checks, config
// calls, completion semantics, and the errors of calls made too early.
#include <catch2/catch.hpp>
#include <atomic>
#include <cstring>
#include <string>
#include <thread>

#include "client/c_api_internal.h"
#include "strata/client.h"

namespace {

strata_cluster_t make_cluster(std::vector<const char *> overrides = {},
                              const char *entity = nullptr) {
  strata_cluster_args a{};
  a.struct_size = sizeof a;
  a.flags = STRATA_CLUSTER_NO_DEFAULT_CONF;
  a.entity = entity;
  a.overrides = overrides.data();
  a.n_overrides = overrides.size();
  strata_cluster_t c = nullptr;
  int rc = strata_cluster_create(&a, &c);
  INFO(strata_last_error());
  REQUIRE(rc == 0);
  REQUIRE(c != nullptr);
  return c;
}

}  // namespace

TEST_CASE("the library reports the header's version") {
  int major = -1, minor = -1;
  strata_client_version(&major, &minor);
  CHECK(major == STRATA_CLIENT_VERSION_MAJOR);
  CHECK(minor == STRATA_CLIENT_VERSION_MINOR);
  strata_client_version(nullptr, nullptr);
}

TEST_CASE("creating a cluster handle reads and checks the configuration") {
  strata_cluster_args a{};
  a.struct_size = sizeof a;
  a.conf_path = "/nonexistent/strata.conf";
  strata_cluster_t c = reinterpret_cast<strata_cluster_t>(1);
  CHECK(strata_cluster_create(&a, &c) == -ENOENT);
  CHECK(c == nullptr);
  CHECK_THAT(strata_last_error(), Catch::Contains("/nonexistent/strata.conf"));

  a.conf_path = nullptr;
  a.flags = STRATA_CLUSTER_NO_DEFAULT_CONF;
  a.entity = "osd.3";
  CHECK(strata_cluster_create(&a, &c) == -EINVAL);

  a.entity = nullptr;
  const char *bad[] = {"no_such_option=1"};
  a.overrides = bad;
  a.n_overrides = 1;
  CHECK(strata_cluster_create(&a, &c) == -EINVAL);
  CHECK_THAT(strata_last_error(), Catch::Contains("no_such_option"));

  a.struct_size = 4;  // older than 1.0: refused
  a.n_overrides = 0;
  CHECK(strata_cluster_create(&a, &c) == -EINVAL);
  CHECK(strata_cluster_create(nullptr, nullptr) == -EINVAL);
}

TEST_CASE("config keys can be read and set until connect") {
  strata_cluster_t c = make_cluster({"mon_addr=127.0.0.1:1"}, "client.cfg");
  char buf[64];
  CHECK(strata_cluster_conf_get(c, "mon_addr", buf, sizeof buf) == 11);
  CHECK(std::string(buf) == "127.0.0.1:1");
  CHECK(strata_cluster_conf_get(c, "client_op_timeout_ms", buf, sizeof buf) == 1);
  CHECK(std::string(buf) == "0");  // the default
  CHECK(strata_cluster_conf_get(c, "bogus", buf, sizeof buf) == -ENOENT);
  // Too small a buffer: truncated, NUL-terminated, full length returned.
  char small[4];
  CHECK(strata_cluster_conf_get(c, "mon_addr", small, sizeof small) == 11);
  CHECK(std::string(small) == "127");

  CHECK(strata_cluster_conf_set(c, "client_op_timeout_ms", "250") == 0);
  CHECK(strata_cluster_conf_get(c, "client_op_timeout_ms", buf, sizeof buf) == 3);
  CHECK(strata_cluster_conf_set(c, "client_op_timeout_ms", "later") == -EINVAL);
  CHECK(strata_cluster_conf_set(c, "bogus", "1") == -EINVAL);

  char id[128];
  int64_t n = strata_cluster_instance_id(c, id, sizeof id);
  REQUIRE(n == static_cast<int64_t>(std::strlen("client.cfg.") + 16));
  CHECK(std::string(id).rfind("client.cfg.", 0) == 0);
  strata_cluster_shutdown(c);
}

TEST_CASE("calls that need a connection fail with ENOTCONN before connect") {
  strata_cluster_t c = make_cluster({"mon_addr=127.0.0.1:1"});
  strata_ioctx_t io = nullptr;
  CHECK(strata_ioctx_create(c, "rbd", &io) == -ENOTCONN);
  CHECK(io == nullptr);
  CHECK(strata_pool_list(c, nullptr, 0) == -ENOTCONN);
  CHECK(strata_pool_lookup(c, "rbd") == -ENOTCONN);
  CHECK(strata_cluster_map_epoch(c) == 0);
  CHECK(strata_cluster_fsid(c, nullptr, 0) == -ENOTCONN);
  char *msg = reinterpret_cast<char *>(1);
  CHECK(strata_mon_command(c, "status", nullptr, 0, &msg, nullptr, nullptr, nullptr) ==
        -ENOTCONN);
  CHECK(msg == nullptr);
  CHECK(strata_pool_create(c, "p", nullptr) == -ENOTCONN);
  strata_cluster_shutdown(c);
}

TEST_CASE("connecting without a key, or to nobody, fails and the handle stays usable") {
  strata_cluster_t c = make_cluster({"mon_addr=127.0.0.1:1"});
  CHECK(strata_cluster_connect(c, 2000) == -ENOENT);  // no keyring configured
  CHECK_THAT(strata_last_error(), Catch::Contains("keyring"));

  // A key, but nothing listens on port 1.
  CHECK(strata_cluster_conf_set(c, "key", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=") == 0);
  int rc = strata_cluster_connect(c, 2000);
  CHECK(rc < 0);
  CHECK(rc != -ENOENT);
  CHECK(strata_cluster_conf_set(c, "mon_addr", "127.0.0.1:2") == 0);  // still before connect
  strata_cluster_shutdown(c);
  strata_cluster_shutdown(nullptr);
}

TEST_CASE("write and read op builders count steps and keep argument errors") {
  strata_write_op_t w = strata_write_op_new();
  REQUIRE(w);
  strata_write_op_assert_exists(w);
  strata_write_op_write(w, "abc", 3, 0);
  strata_write_op_setxattr(w, nullptr, "v", 1);  // bad: remembered
  strata_write_op_cmpxattr(w, "a", 99, "v", 1);
  CHECK(strata_write_op_size(w) == 2);
  CHECK(w->op.error().code() == -EINVAL);
  strata_write_op_release(w);
  strata_write_op_release(nullptr);

  strata_read_op_t r = strata_read_op_new();
  REQUIRE(r);
  char buf[8];
  size_t n = 99;
  int prval = 1;
  strata_read_op_read(r, 0, sizeof buf, buf, &n, &prval);
  strata_obj_stat st{};
  strata_read_op_stat(r, &st, nullptr);  // struct_size 0: refused
  CHECK(strata_read_op_size(r) == 1);
  CHECK(r->op.error().code() == -EINVAL);
  CHECK(n == 0);  // reset when the step is added
  strata_read_op_release(r);
}

TEST_CASE("a completion runs its callback once, then wakes waiters, and release may come first") {
  struct Seen {
    std::atomic<int> calls{0};
    int complete_inside = -1;
    int64_t rv_inside = 0;
  } seen;
  strata_completion_t c = nullptr;
  REQUIRE(strata_completion_create(
              [](strata_completion_t comp, void *arg) {
                auto *s = static_cast<Seen *>(arg);
                s->complete_inside = strata_completion_is_complete(comp);
                s->rv_inside = strata_completion_get_return_value(comp);
                s->calls++;
              },
              &seen, &c) == 0);
  CHECK(strata_completion_wait(c) == -EINVAL);  // never started
  CHECK(strata_completion_is_complete(c) == 0);

  using namespace strata::client::capi;
  REQUIRE(claim(c, "test"));
  CHECK_FALSE(claim(c, "test"));  // one call per completion
  c->refs++;  // the call's reference, as submit takes it
  std::thread t([c] { complete(c, 4096, 17); });
  CHECK(strata_completion_wait(c) == 4096);
  t.join();
  CHECK(seen.calls == 1);
  CHECK(seen.complete_inside == 1);
  CHECK(seen.rv_inside == 4096);
  CHECK(strata_completion_get_version(c) == 17);
  strata_completion_release(c);

  // Released before it completes: the call's reference keeps it alive.
  strata_completion_t c2 = nullptr;
  REQUIRE(strata_completion_create(nullptr, nullptr, &c2) == 0);
  REQUIRE(claim(c2, "test"));
  c2->refs++;
  strata_completion_release(c2);
  complete(c2, 0, 0);  // frees it (ASan would see a leak or a double free)
}

TEST_CASE("a callback may release its own completion") {
  strata_completion_t c = nullptr;
  REQUIRE(strata_completion_create(
              [](strata_completion_t comp, void *) { strata_completion_release(comp); }, nullptr,
              &c) == 0);
  REQUIRE(strata::client::capi::claim(c, "test"));
  c->refs++;
  strata::client::capi::complete(c, 0, 0);
}

TEST_CASE("the last error is per thread") {
  strata_cluster_args a{};
  a.struct_size = sizeof a;
  a.conf_path = "/nonexistent/a.conf";
  strata_cluster_t c = nullptr;
  CHECK(strata_cluster_create(&a, &c) < 0);
  std::string other;
  std::thread t([&] {
    strata_cluster_args b{};
    b.struct_size = sizeof b;
    b.conf_path = "/nonexistent/b.conf";
    strata_cluster_t c2 = nullptr;
    strata_cluster_create(&b, &c2);
    other = strata_last_error();
  });
  t.join();
  CHECK_THAT(strata_last_error(), Catch::Contains("a.conf"));
  CHECK_THAT(other, Catch::Contains("b.conf"));
}

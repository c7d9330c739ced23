// The host side of the frontend kind without a cluster: loading and
// refusing frontend plugins, resolving their options, and running the test
// plugin (tests/frontend/plugins/test_frontend.c) through FrontendInstance.
#include "host/frontend_host.h"

#include <poll.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <string>

#include "client/client_api_table.h"
#include "common/log.h"
#include "host/plugin_loader.h"

namespace {

using strata::host::FrontendInstance;
using strata::host::load_plugin;
using strata::host::Plugin;
using strata::host::PluginOptions;

const std::string kDir = TEST_FRONTEND_DIR;
std::string file(const char *name) { return kDir + "/libstrata_" + name + ".so"; }

Plugin test_plugin() {
  auto p = load_plugin(file("frontend_test"), STRATA_KIND_FRONTEND);
  INFO(p.status().ToString());
  REQUIRE(p.ok());
  return *p;
}

std::string refusal(const std::string &path, int kind) {
  auto r = load_plugin(path, kind);
  REQUIRE_FALSE(r.ok());
  return r.status().message();
}

// A Logger writing into a temporary file, read back by the test.
struct CapturedLog {
  std::FILE *f = std::tmpfile();
  strata::Logger log{STRATA_LOG_DEBUG, f};
  ~CapturedLog() { std::fclose(f); }
  std::string text() {
    std::fflush(f);
    std::rewind(f);
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    return out;
  }
};

std::unique_ptr<FrontendInstance> start(const PluginOptions &given, strata::Logger &log) {
  Plugin p = test_plugin();
  auto options = strata::host::resolve_plugin_options(p, given);
  INFO(options.status().ToString());
  REQUIRE(options.ok());
  auto fe = FrontendInstance::start(p, nullptr, strata::client::client_api_table(), *options, log);
  INFO(fe.status().ToString());
  REQUIRE(fe.ok());
  return std::move(*fe);
}

bool readable(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, timeout_ms) == 1;
}

}  // namespace

TEST_CASE("a frontend plugin loads as a frontend and its vtable is the 1.3 one", "[frontend]") {
  Plugin p = test_plugin();
  CHECK(p.kind() == STRATA_KIND_FRONTEND);
  CHECK(p.name() == "test");
  CHECK(p.ops_size() == sizeof(strata_frontend_ops));
}

TEST_CASE("a frontend plugin asked for as a backend is refused naming both kinds", "[frontend]") {
  std::string path = file("frontend_test");
  CHECK(refusal(path, STRATA_KIND_OBJECTSTORE) ==
        "plugin " + path +
            ": kind mismatch: expected a backend plugin, found a frontend plugin named 'test'");
}

TEST_CASE("a backend plugin asked for as a frontend is refused naming both kinds", "[frontend]") {
  std::string path = TEST_BACKEND_PLUGIN;
  CHECK(refusal(path, STRATA_KIND_FRONTEND) ==
        "plugin " + path +
            ": kind mismatch: expected a frontend plugin, found a backend plugin named 'kv'");
}

TEST_CASE("a plugin path lookup of a frontend name finding only a backend says so", "[frontend]") {
  strata::host::PluginRegistry registry({std::string(TEST_PLUGIN_DIR)});
  registry.scan();
  auto r = registry.find(STRATA_KIND_FRONTEND, "kv");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(),
             Catch::Contains("'kv' is a backend plugin (" + std::string(TEST_BACKEND_PLUGIN) +
                             "), not a frontend plugin"));
}

TEST_CASE("a frontend plugin without a stop function is refused naming the slot", "[frontend]") {
  std::string path = file("frontend_null_stop");
  CHECK(refusal(path, STRATA_KIND_FRONTEND) ==
        "plugin " + path + ": frontend vtable has no stop function (a required slot is NULL)");
}

TEST_CASE("a frontend plugin claiming an ABI older than 1.3 is refused", "[frontend]") {
  std::string path = file("frontend_minor2");
  CHECK(refusal(path, -1) == "plugin " + path +
                                 ": the frontend kind needs ABI 1.3 or newer, plugin was built "
                                 "for 1.2");
}

TEST_CASE("a frontend's options come with defaults, in the plugin's order", "[frontend]") {
  auto r = strata::host::resolve_plugin_options(test_plugin(),
                                                {{"metrics_bytes", "4K"}, {"stop_fails", "yes"}});
  REQUIRE(r.ok());
  PluginOptions expected = {{"fail_start", "false"},
                            {"request_stop", "none"},
                            {"metrics_bytes", "4K"},
                            {"stop_fails", "yes"},
                            {"checks_client", "false"}};
  CHECK(*r == expected);
}

TEST_CASE("an unknown frontend option is refused listing the options the plugin takes",
          "[frontend]") {
  auto r = strata::host::resolve_plugin_options(test_plugin(), {{"colour", "blue"}});
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() ==
        "unknown option 'colour' for frontend plugin 'test' (it takes: fail_start, "
        "request_stop, metrics_bytes, stop_fails, checks_client)");
}

TEST_CASE("a frontend option value that does not parse is refused naming plugin and key",
          "[frontend]") {
  auto r = strata::host::resolve_plugin_options(test_plugin(), {{"request_stop", "later"}});
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::StartsWith("frontend plugin 'test': "));
  CHECK_THAT(r.status().message(), Catch::Contains("request_stop"));
}

TEST_CASE("the client routine table the host hands out has every routine set", "[frontend]") {
  const strata_client_api *t = strata::client::client_api_table();
  REQUIRE(t->struct_size == sizeof(strata_client_api));
  CHECK(t->write == &strata_write);
  CHECK(t->buffer_free == &strata_buffer_free);
  CHECK(t->write_op_set_request_id == &strata_write_op_set_request_id);
  // And the plugin, calling through the table with the strata_* names,
  // sees the same (checks_client makes start fail otherwise).
  CapturedLog cl;
  auto fe = start({{"checks_client", "true"}}, cl.log);
  CHECK(fe->stop().ok());
}

TEST_CASE("a frontend's failed start returns its errno and message", "[frontend]") {
  Plugin p = test_plugin();
  auto options = strata::host::resolve_plugin_options(p, {{"fail_start", "true"}});
  REQUIRE(options.ok());
  strata::Logger log(STRATA_LOG_ERROR);
  auto fe = FrontendInstance::start(p, nullptr, strata::client::client_api_table(), *options, log);
  REQUIRE_FALSE(fe.ok());
  CHECK(fe.status().code() == -EADDRINUSE);
  CHECK(fe.status().message() ==
        "starting frontend test: cannot listen on 127.0.0.1:1: address in use");
}

TEST_CASE("a frontend's status, metrics and log lines reach the host", "[frontend]") {
  CapturedLog cl;
  // Larger than the host's first buffer: it must ask again with a bigger one.
  auto fe = start({{"metrics_bytes", "10000"}}, cl.log);
  CHECK(*fe->status(STRATA_FRONTEND_STATUS_LINE) == "idle");
  CHECK(*fe->status(STRATA_FRONTEND_STATUS_JSON) == "{\"idle\":true}");
  auto unknown = fe->status(99);
  CHECK(unknown.status().code() == -EOPNOTSUPP);
  auto m = fe->metrics();
  REQUIRE(m.ok());
  CHECK(m->size() == 10000);
  CHECK(m->find('\0') == std::string::npos);
  CHECK_THAT(cl.text(), Catch::Contains("frontend test: test frontend started"));
  CHECK(fe->stop().ok());
  CHECK_FALSE(fe->status(STRATA_FRONTEND_STATUS_LINE).ok());
}

TEST_CASE("a frontend's stop request from its own thread wakes the host", "[frontend]") {
  CapturedLog cl;
  auto fe = start({{"request_stop", "fail"}}, cl.log);
  // Blocks until the plugin's thread asked (no timing: a generous bound).
  REQUIRE(readable(fe->stop_request_fd(), 60000));
  auto req = fe->stop_request();
  REQUIRE(req);
  CHECK(req->result == -EPIPE);
  CHECK(req->reason == "the test plugin lost its pipe");
  CHECK(fe->stop().ok());
}

TEST_CASE("without a stop request the host's wake-up descriptor stays quiet", "[frontend]") {
  CapturedLog cl;
  auto fe = start({}, cl.log);
  CHECK_FALSE(readable(fe->stop_request_fd(), 0));
  CHECK_FALSE(fe->stop_request());
  CHECK(fe->stop().ok());
}

TEST_CASE("a frontend's failed stop is reported with its message, once", "[frontend]") {
  CapturedLog cl;
  auto fe = start({{"stop_fails", "true"}}, cl.log);
  strata::Status st = fe->stop();
  CHECK(st.code() == -EIO);
  CHECK(st.message() == "stopping frontend test: could not flush 3 buffered writes");
  CHECK(fe->stop().ok());  // the instance is gone; nothing is called twice
}

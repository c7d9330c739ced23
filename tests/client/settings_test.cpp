// What a client reads from the configuration, and the listing cursor's text.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>

#include "client/client_settings.h"
#include "client/object_lister.h"
#include "msg/keyring.h"

using namespace strata;
using namespace strata::client;

namespace {

Config parse(const std::string &text) {
  auto c = Config::parse(text, "test.conf");
  REQUIRE(c.ok());
  return *c;
}

}  // namespace

TEST_CASE("the client entity comes from the caller, else client_name, else client.admin") {
  CHECK(*resolve_client_entity(parse(""), "") == "client.admin");
  CHECK(*resolve_client_entity(parse("[client]\nclient_name = client.web\n"), "") == "client.web");
  CHECK(*resolve_client_entity(parse("[client]\nclient_name = client.web\n"), "client.x") ==
        "client.x");
  CHECK(resolve_client_entity(parse(""), "osd.1").status().code() == -EINVAL);
  CHECK(resolve_client_entity(parse(""), "client.").status().code() == -EINVAL);
  CHECK(resolve_client_entity(parse(""), "client.a b").status().code() == -EINVAL);
}

TEST_CASE("settings come from the most specific section") {
  Config cfg = parse(
      "[global]\nmon_addr = 10.0.0.1:6789\nkeyring = /etc/k\nbackend = kv\n"
      "[client]\nclient_op_timeout_ms = 5000\n"
      "[client.web]\nmon_addr = 10.0.0.2:6789\nlog_level = debug\n"
      "[osd]\nwhatever = 1\n");
  auto s = load_client_settings(cfg, "client.web");
  REQUIRE(s.ok());
  CHECK(s->mon_addr == "10.0.0.2:6789");
  CHECK(s->keyring_path == "/etc/k");
  CHECK(s->op_timeout == std::chrono::milliseconds(5000));
  CHECK(s->log_level == STRATA_LOG_DEBUG);

  auto admin = load_client_settings(cfg, "client.admin");
  REQUIRE(admin.ok());
  CHECK(admin->mon_addr == "10.0.0.1:6789");
  CHECK(admin->log_level == STRATA_LOG_WARN);  // a library is quiet unless asked
}

TEST_CASE("an unknown key in a client section is an error but in [global] it is someone else's") {
  auto bad = load_client_settings(parse("[client]\nmon_adr = x:1\n"), "client.admin");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("test.conf:2"));
  CHECK_THAT(bad.status().message(), Catch::Contains("mon_adr"));
  CHECK(load_client_settings(parse("[global]\nmon_data = /x\n"), "client.admin").ok());
  auto bad_value = load_client_settings(parse("[global]\nclient_op_timeout_ms = soon\n"),
                                        "client.admin");
  CHECK(bad_value.status().code() == -EINVAL);
}

TEST_CASE("overrides apply over every section and are checked like them") {
  Config cfg = parse("[client]\nmon_addr = a:1\n");
  REQUIRE(cfg.add_override("mon_addr=b:2").ok());
  CHECK(load_client_settings(cfg, "client.admin")->mon_addr == "b:2");
  REQUIRE(cfg.add_override("nonsense=1").ok());
  CHECK_FALSE(load_client_settings(cfg, "client.admin").ok());
}

TEST_CASE("the secret comes from the key option, else the keyring file") {
  ClientSettings s;
  s.entity = "client.t";
  CHECK(load_client_secret(s).status().code() == -ENOENT);  // neither

  std::string secret = msg::Keyring::generate_secret();
  msg::Keyring ring;
  ring.set("client.t", secret);
  char path[] = "/tmp/strata-client-keyring-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  REQUIRE(ring.write_file(path).ok());
  s.keyring_path = path;
  auto got = load_client_secret(s);
  REQUIRE(got.ok());
  CHECK(*got == secret);

  s.entity = "client.other";
  CHECK(load_client_secret(s).status().code() == -ENOENT);

  // The key option wins: the keyring's text form carries its base64.
  std::string text = ring.to_text();
  std::string b64 = text.substr(text.find("key = ") + 6);
  b64 = b64.substr(0, b64.find('\n'));
  s.entity = "client.t";
  s.keyring_path = "/nonexistent";
  s.key_base64 = b64;
  got = load_client_secret(s);
  REQUIRE(got.ok());
  CHECK(*got == secret);
  std::remove(path);
}

TEST_CASE("a listing cursor survives its text form, binary names included") {
  for (const ListCursor &c :
       {ListCursor{0, ""}, ListCursor{0x1f, "obj.1"}, ListCursor{7, std::string("a\0\xff", 3)}}) {
    auto back = parse_list_cursor(format_list_cursor(c));
    REQUIRE(back.ok());
    CHECK(*back == c);
  }
  CHECK(*parse_list_cursor("") == ListCursor{});
  for (const char *bad : {"zz:00", "1:0", "1:zz", ":00", "100000000:"})
    CHECK(parse_list_cursor(bad).status().code() == -EINVAL);
}

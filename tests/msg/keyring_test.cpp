// Keyring: parsing (errors name file:line), the text form, the file on disk.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "msg/base64.h"
#include "msg/keyring.h"

using namespace strata::msg;

TEST_CASE("base64 round trips and rejects non-canonical text") {
  for (std::size_t n = 0; n < 40; ++n) {
    std::string raw(n, '\0');
    for (std::size_t i = 0; i < n; ++i) raw[i] = static_cast<char>(i * 37 + n);
    auto enc = base64_encode(raw);
    CHECK(enc.size() % 4 == 0);
    auto dec = base64_decode(enc);
    REQUIRE(dec);
    CHECK(*dec == raw);
  }
  CHECK(base64_encode("foobar") == "Zm9vYmFy");
  CHECK(*base64_decode("Zm9vYg==") == "foob");
  CHECK(!base64_decode("Zm9vYg="));     // length
  CHECK(!base64_decode("Zm9v Yg=="));   // space inside
  CHECK(!base64_decode("Zm9=Ymc="));    // padding in the middle
  CHECK(!base64_decode("Zm9vY===")); 
  CHECK(!base64_decode("Zm9vYg!="));
}

TEST_CASE("keyring text round trip") {
  Keyring kr;
  kr.set("mon", Keyring::generate_secret());
  kr.set("osd.0", Keyring::generate_secret());
  kr.set("client.admin", Keyring::generate_secret());
  auto back = Keyring::parse(kr.to_text(), "mem");
  REQUIRE(back.ok());
  CHECK(back->entries() == kr.entries());
  CHECK(back->secret("osd.0") == kr.secret("osd.0"));
  CHECK(!back->secret("osd.1"));
}

TEST_CASE("keyring parse accepts comments and spacing") {
  std::string key = base64_encode(std::string(32, 'k'));
  auto kr = Keyring::parse("# the keys\n\n[client.admin]\n  key =   " + key + "  \n; more\n[mon]\nkey=" + key + "\n",
                           "k.keyring");
  REQUIRE(kr.ok());
  CHECK(kr->entries().size() == 2);
  CHECK(*kr->secret("mon") == std::string(32, 'k'));
}

TEST_CASE("keyring errors name the file and line") {
  std::string key = base64_encode(std::string(32, 'k'));
  auto err = [](const std::string &text) {
    auto r = Keyring::parse(text, "ring");
    REQUIRE(!r.ok());
    CHECK(r.status().code() == -EINVAL);
    return r.status().message();
  };
  CHECK_THAT(err("key = " + key + "\n"), Catch::StartsWith("ring:1:") && Catch::Contains("outside"));
  CHECK_THAT(err("[mon]\nkey = ###\n"), Catch::StartsWith("ring:2:") && Catch::Contains("base64"));
  CHECK_THAT(err("[mon]\nkey = " + base64_encode("short") + "\n"),
             Catch::StartsWith("ring:2:") && Catch::Contains("at least 16"));
  CHECK_THAT(err("[mon]\nsecret = " + key + "\n"), Catch::StartsWith("ring:2:") && Catch::Contains("unknown setting"));
  CHECK_THAT(err("[mon]\n[osd.1]\nkey = " + key + "\n"), Catch::StartsWith("ring:1:") && Catch::Contains("no key"));
  CHECK_THAT(err("[mon]\nkey = " + key + "\n[mon]\nkey = " + key + "\n"),
             Catch::StartsWith("ring:3:") && Catch::Contains("twice"));
  CHECK_THAT(err("[mon]\nkey = " + key + "\nkey = " + key + "\n"), Catch::StartsWith("ring:3:"));
  CHECK_THAT(err("[mon\n"), Catch::StartsWith("ring:1:"));
  CHECK_THAT(err("[bad name]\nkey = " + key + "\n"), Catch::Contains("bad entity name"));
  CHECK_THAT(err("[mon]\njunk\n"), Catch::StartsWith("ring:2:"));
  CHECK_THAT(err("[osd.2]\n"), Catch::StartsWith("ring:1:") && Catch::Contains("no key"));
}

TEST_CASE("keyring file is written 0600 and loads back") {
  char tmpl[] = "/tmp/strata-keyring-XXXXXX";
  REQUIRE(mkdtemp(tmpl));
  std::string path = std::string(tmpl) + "/keyring";
  Keyring kr;
  kr.set("osd.3", Keyring::generate_secret());
  REQUIRE(kr.write_file(path).ok());
  struct stat st{};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  auto back = Keyring::load_file(path);
  REQUIRE(back.ok());
  CHECK(back->entries() == kr.entries());
  auto missing = Keyring::load_file(std::string(tmpl) + "/nope");
  CHECK(!missing.ok());
  CHECK_THAT(missing.status().message(), Catch::Contains("/nope"));
  ::unlink(path.c_str());
  ::rmdir(tmpl);
}

TEST_CASE("generated secrets are 32 random bytes") {
  auto a = Keyring::generate_secret();
  auto b = Keyring::generate_secret();
  CHECK(a.size() == 32);
  CHECK(a != b);
}

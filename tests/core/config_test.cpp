#include <catch2/catch.hpp>

#include <cstdlib>

#include "common/config.h"
#include "common/config_lookup.h"

using strata::Config;

TEST_CASE("a more specific section overrides a general one, and --set overrides both") {
  auto cfg = Config::parse(
      "[global]\nlog_level = warn\nbackend = kv\n[osd]\nbackend = xfs\n[osd.3]\nbackend = btrfs\n",
      "t.conf");
  REQUIRE(cfg.ok());
  CHECK(*cfg->get("osd.1", "backend") == "xfs");
  CHECK(*cfg->get("osd.3", "backend") == "btrfs");
  CHECK(*cfg->get("mon", "backend") == "kv");
  CHECK(*cfg->get("osd.3", "log_level") == "warn");
  REQUIRE(cfg->add_override("backend=kv").ok());
  CHECK(*cfg->get("osd.3", "backend") == "kv");
  CHECK_FALSE(cfg->get("osd", "nothing").has_value());
}

TEST_CASE("syntax errors name the file and line") {
  auto r = Config::parse("[global]\nbackend xfs\n", "bad.conf");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("bad.conf:2") != std::string::npos);
  auto s = Config::parse("[nonsense]\na = b\n", "bad.conf");
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().message().find("unknown section [nonsense]") != std::string::npos);
  auto t = Config::parse("a = b\n", "bad.conf");
  REQUIRE_FALSE(t.ok());
  CHECK(t.status().message().find("outside any section") != std::string::npos);
}

TEST_CASE("unknown keys and bad values are reported, not ignored") {
  auto cfg = Config::parse("[osd]\njournal_size = lots\nbakend = xfs\nlog_level = loud\n", "o.conf");
  REQUIRE(cfg.ok());
  std::vector<const strata_option_spec *> specs;
  for (const auto &s : strata::core_store_options()) specs.push_back(&s);
  strata::Status st = strata::validate_config(*cfg, "osd.0", specs);
  REQUIRE_FALSE(st.ok());
  const std::string &m = st.message();
  CHECK(m.find("o.conf:2: option journal_size") != std::string::npos);
  CHECK(m.find("o.conf:3: unknown option 'bakend'") != std::string::npos);
  CHECK(m.find("o.conf:4: option log_level: 'loud' is not one of debug|info|warn|error") !=
        std::string::npos);
}

TEST_CASE("sizes take K, M, G and T suffixes in powers of 1024") {
  CHECK(*strata::parse_size("4K") == 4096);
  CHECK(*strata::parse_size("256M") == 256ll << 20);
  CHECK(*strata::parse_size("1G") == 1ll << 30);
  CHECK(*strata::parse_size("2TiB") == 2ll << 40);
  CHECK(*strata::parse_size("17") == 17);
  CHECK_FALSE(strata::parse_size("12Q").ok());
  CHECK_FALSE(strata::parse_size("").ok());
  CHECK(*strata::parse_bool("on"));
  CHECK_FALSE(strata::parse_bool("maybe").ok());
}

TEST_CASE("an unknown key suggests the closest known key, and only a close one") {
  std::vector<std::string> known = {"journal_size", "journal_path", "log_level", "backend"};
  CHECK(strata::closest_key("journal_sise", known) == "journal_size");
  CHECK(strata::closest_key("loglevel", known) == "log_level");
  CHECK(strata::closest_key("bakend", known) == "backend");
  CHECK(strata::closest_key("completely_different", known).empty());
  CHECK(strata::closest_key("x", known).empty());

  auto cfg = Config::parse("[global]\n\n[osd]\njournal_sise = 1G\n", "t.conf");
  REQUIRE(cfg.ok());
  std::vector<const strata_option_spec *> specs;
  for (const auto &s : strata::core_store_options()) specs.push_back(&s);
  strata::Status st = strata::validate_entries(cfg->entries(), specs, "nobody declares it");
  REQUIRE_FALSE(st.ok());
  CHECK(st.message() ==
        "t.conf:4: unknown option 'journal_sise' (nobody declares it; did you mean "
        "'journal_size'?)");
}

TEST_CASE("the config file is the one named, else $STRATA_CONF, else none, saying where it looked") {
  CHECK(strata::locate_config("/etc/x.conf").path == "/etc/x.conf");
  ::setenv("STRATA_CONF", "/from/env.conf", 1);
  CHECK(strata::locate_config("").path == "/from/env.conf");
  CHECK(strata::locate_config("/named.conf").path == "/named.conf");
  ::unsetenv("STRATA_CONF");
  // The test runs in the build directory, which holds no strata.conf.
  strata::ConfigLocation none = strata::locate_config("");
  CHECK(none.path.empty());
  CHECK(none.looked_at.find("$STRATA_CONF is not set") != std::string::npos);
  CHECK(none.looked_at.find("strata.conf") != std::string::npos);
}

#include <catch2/catch.hpp>

#include "common/config.h"

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

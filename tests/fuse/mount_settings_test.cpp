// The plugin's options: required ones, sizes with suffixes, the limits.
#include "mount_settings.h"

#include <catch2/catch.hpp>
#include <stdexcept>

using strata::fuse::parse_mount_settings;

TEST_CASE("mount options: defaults, suffixes and limits") {
  size_t n = 0;
  const strata_option_spec *specs = strata::fuse::mount_option_specs(&n);
  REQUIRE(n > 5);
  std::vector<std::pair<std::string, std::string>> kv;
  for (size_t i = 0; i < n; ++i) kv.emplace_back(specs[i].name, specs[i].default_value);
  // The defaults alone lack the filesystem and the mount point.
  CHECK_THROWS_AS(parse_mount_settings(kv), std::invalid_argument);
  kv.emplace_back("fs", "home");
  kv.emplace_back("mountpoint", "/mnt/home");
  auto s = parse_mount_settings(kv);
  CHECK(s.fs_name == "home");
  CHECK(s.mountpoint == "/mnt/home");
  CHECK_FALSE(s.default_permissions);
  CHECK(s.writeback_cache);
  CHECK_FALSE(s.allow_other);
  CHECK(s.max_write == 1u << 20);
  CHECK(s.max_read == 1u << 20);
  kv.emplace_back("max_write", "4M");
  kv.emplace_back("allow_other", "true");
  s = parse_mount_settings(kv);
  CHECK(s.max_write == 4u << 20);
  CHECK(s.allow_other);
  kv.emplace_back("max_read", "64K");
  CHECK_THROWS_AS(parse_mount_settings(kv), std::invalid_argument);
}

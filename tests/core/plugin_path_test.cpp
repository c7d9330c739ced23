// The colon-separated plugin path lists (plugin_path, $STRATA_PLUGIN_PATH).
#include <catch2/catch.hpp>

#include "host/plugin_loader.h"

using strata::host::split_plugin_path;

TEST_CASE("a colon-separated plugin path splits into its directories, empty entries skipped",
          "[host]") {
  using V = std::vector<std::string>;
  CHECK(split_plugin_path("") == V{});
  CHECK(split_plugin_path("/a") == V{"/a"});
  CHECK(split_plugin_path("/a:/b/c") == V{"/a", "/b/c"});
  CHECK(split_plugin_path(":/a::/b:") == V{"/a", "/b"});
}

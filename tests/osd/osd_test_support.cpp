#include "osd_test_support.h"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include <catch2/catch.hpp>

namespace strata::osdtest {

TempDir::TempDir(const std::string &tag) {
  std::string pattern = "/tmp/strata-" + tag + "-XXXXXX";
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp " + pattern + " failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

const host::PluginRegistry &registry() {
  static host::PluginRegistry *reg = [] {
    auto *r = new host::PluginRegistry({STRATA_TEST_PLUGIN_DIR});
    r->scan();
    return r;
  }();
  return *reg;
}

Logger &quiet_logger() {
  static Logger log(STRATA_LOG_ERROR);
  return log;
}

}  // namespace strata::osdtest

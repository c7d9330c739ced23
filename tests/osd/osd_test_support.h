// Helpers for the OSD's tests: scratch directories, the build's plugins, a
// quiet logger. (No Store here: see scratch_store.h.)
#pragma once

#include <memory>
#include <string>

#include "common/log.h"
#include "host/plugin_loader.h"

namespace strata::osdtest {

class TempDir {
 public:
  explicit TempDir(const std::string &tag = "osd");
  ~TempDir();
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  const std::string &path() const { return path_; }
  std::string sub(const std::string &name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// The build's plugin registry (STRATA_TEST_PLUGIN_DIR), scanned once.
const host::PluginRegistry &registry();
Logger &quiet_logger();

}  // namespace strata::osdtest

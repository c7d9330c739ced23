// A fresh directory under /tmp, removed with everything in it at scope exit.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace strata::test {

class TempDir {
 public:
  explicit TempDir(const std::string &tag = "kv") {
    std::string pattern = "/tmp/strata-" + tag + "-XXXXXX";
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp " + pattern + " failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const std::string &path() const { return path_; }
  std::string sub(const std::string &name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace strata::test

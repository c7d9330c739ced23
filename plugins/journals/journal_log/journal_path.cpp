#include "journal_log/journal_path.h"

#include <sys/stat.h>

#include <cerrno>

#include "strata/cpp/plugin_support.hpp"

namespace strata::journal {

std::string resolve_journal_path(const std::string &path) {
  if (path.empty()) throw sdk::Error(EINVAL, "journal path is empty");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return path + "/journal";
  return path;
}

}  // namespace strata::journal

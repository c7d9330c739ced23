#include "journal_log/medium_lock.h"

#include <sys/file.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "strata/cpp/plugin_support.hpp"

namespace strata::journal {

void lock_medium(int fd, const std::string &path) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK)
      throw sdk::make_error(errno, "cannot lock journal %s: %s", path.c_str(), strerror(errno));
    if (std::chrono::steady_clock::now() >= give_up)
      throw sdk::make_error(EBUSY, "journal %s is open elsewhere (another process or instance)",
                            path.c_str());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace strata::journal

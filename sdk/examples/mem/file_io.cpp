#include "file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "strata/cpp/plugin_support.hpp"

namespace mem {

using strata::sdk::make_error;

namespace {
// Closes the descriptor when the scope ends, also when an Error is thrown.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};
}  // namespace

void write_file_durably(const std::string &path, std::string_view bytes) {
  Fd f{::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
  if (f.fd < 0) throw make_error(errno, "cannot create %s: %s", path.c_str(), strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(f.fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw make_error(errno, "cannot write %s: %s", path.c_str(), strerror(errno));
    done += static_cast<size_t>(n);
  }
  if (::fsync(f.fd) != 0)
    throw make_error(errno, "cannot fsync %s: %s", path.c_str(), strerror(errno));
}

void sync_directory(const std::string &dir) {
  Fd f{::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (f.fd < 0) throw make_error(errno, "cannot open %s: %s", dir.c_str(), strerror(errno));
  if (::fsync(f.fd) != 0)
    throw make_error(errno, "cannot fsync %s: %s", dir.c_str(), strerror(errno));
}

std::string read_file(const std::string &path) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) throw make_error(errno, "cannot open %s: %s", path.c_str(), strerror(errno));
  std::string out;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(f.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw make_error(errno, "cannot read %s: %s", path.c_str(), strerror(errno));
    if (n == 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace mem

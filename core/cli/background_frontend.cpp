#include "cli/background_frontend.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "cli/cmd_client_common.h"

namespace strata::cli {

namespace {

// Where the state files of this user's frontends of one kind live.
std::string state_dir(const std::string &kind) {
  if (::geteuid() == 0) return "/run/strata/" + kind;
  if (const char *x = std::getenv("XDG_RUNTIME_DIR"); x && *x)
    return std::string(x) + "/strata/" + kind;
  return "/tmp/strata-" + kind + "-" + std::to_string(::getuid());
}

void make_dirs(const std::string &path) {
  for (size_t i = 1; i <= path.size(); ++i)
    if (i == path.size() || path[i] == '/') ::mkdir(path.substr(0, i).c_str(), 0700);
}

}  // namespace

std::string frontend_state_file(const std::string &kind, const std::string &key) {
  std::string name;
  for (char c : key) {
    if (c == '/')
      name += "%2F";
    else if (c == '%')
      name += "%25";
    else
      name += c;
  }
  return state_dir(kind) + "/" + name + ".pid";
}

void write_frontend_state(const std::string &file) {
  make_dirs(file.substr(0, file.rfind('/')));
  if (std::FILE *f = std::fopen(file.c_str(), "w")) {
    std::fprintf(f, "%d\n", int(::getpid()));
    std::fclose(f);
  }
}

pid_t read_frontend_state(const std::string &file) {
  std::ifstream in(file);
  long p = 0;
  if (in && in >> p && p > 0 && (::kill(pid_t(p), 0) == 0 || errno == EPERM)) return pid_t(p);
  return 0;
}

int serve_in_background(const std::string &cmd,
                        const std::function<int(const StopSignals &, int)> &serve) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return fail(cmd, Status::Error(errno, "pipe failed"));
  std::fflush(nullptr);
  pid_t child = ::fork();
  if (child < 0) return fail(cmd, Status::Error(errno, "fork failed"));
  if (child > 0) {
    ::close(fds[1]);
    char c = 0;
    ssize_t n;
    do n = ::read(fds[0], &c, 1);
    while (n < 0 && errno == EINTR);
    ::close(fds[0]);
    if (n == 1 && c == 'K') return 0;
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }
  ::close(fds[0]);
  ::setsid();
  StopSignals signals;
  if (signals.fd() < 0) return fail(cmd, Status::Error(errno, "signalfd failed"));
  return serve(signals, fds[1]);
}

void detach_from_terminal() {
  // Relative paths (--conf) were read already; keep no directory busy.
  if (::chdir("/") != 0) {
  }
  // Output that goes to a regular file (a log the caller chose) stays
  // there; a terminal or a pipe is let go (a pipe held open would keep
  // `$(strata mount ...)` waiting).
  int null = ::open("/dev/null", O_RDWR);
  if (null < 0) return;
  ::dup2(null, 0);
  for (int fd : {1, 2}) {
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) ::dup2(null, fd);
  }
  if (null > 2) ::close(null);
}

void report_ready(int ready_fd) {
  if (ready_fd < 0) return;
  char ok = 'K';
  (void)!::write(ready_fd, &ok, 1);
  ::close(ready_fd);
  detach_from_terminal();
}

bool wait_process_exit(pid_t pid, uint32_t timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  int pidfd = int(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd >= 0) {
    pollfd p{pidfd, POLLIN, 0};
    int n;
    do n = ::poll(&p, 1, int(timeout_ms));
    while (n < 0 && errno == EINTR);
    ::close(pidfd);
    return n > 0;
  }
  while (::kill(pid, 0) == 0 || errno == EPERM) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

int run_fusermount(const std::string &mountpoint) {
  std::fflush(nullptr);
  pid_t child = ::fork();
  if (child < 0) return 127;
  if (child == 0) {
    ::execlp("fusermount3", "fusermount3", "-u", mountpoint.c_str(), static_cast<char *>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

std::string absolute_path(const std::string &p) {
  char buf[PATH_MAX];
  if (::realpath(p.c_str(), buf)) return buf;
  if (!p.empty() && p[0] == '/') return p;
  if (!::getcwd(buf, sizeof buf)) return p;
  return std::string(buf) + "/" + p;
}

}  // namespace strata::cli

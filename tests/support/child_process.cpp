#include "child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <map>

namespace strata::testing {

namespace {

constexpr int kReportFd = 3;

std::map<std::string, ChildMain> &modes() {
  static std::map<std::string, ChildMain> m;
  return m;
}

}  // namespace

ChildRegistrar::ChildRegistrar(const char *mode, ChildMain fn) { modes()[mode] = fn; }

bool run_child_mode(int argc, char **argv, int *code) {
  if (argc < 3 || std::strcmp(argv[1], "--child") != 0) return false;
  auto it = modes().find(argv[2]);
  if (it == modes().end()) {
    std::fprintf(stderr, "unknown child mode '%s'\n", argv[2]);
    *code = 2;
    return true;
  }
  std::vector<std::string> args(argv + 3, argv + argc);
  *code = it->second(args);
  return true;
}

void report(uint64_t value) {
  const char *p = reinterpret_cast<const char *>(&value);
  size_t left = sizeof value;
  while (left > 0) {
    ssize_t n = ::write(kReportFd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ::_exit(70);  // the parent is gone: nobody to report to
    p += n;
    left -= n;
  }
}

Result<ChildProcess> ChildProcess::spawn(const std::string &mode,
                                         const std::vector<std::string> &args) {
  // Everything exec needs is built before fork: the parent may have threads.
  std::vector<std::string> all = {"/proc/self/exe", "--child", mode};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char *> argv;
  for (std::string &a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  char exe[4096];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return Status::Error(errno, "readlink /proc/self/exe");
  exe[n] = '\0';

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Status::Error(errno, "pipe2");
  pid_t pid = ::fork();
  if (pid < 0) {
    int e = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return Status::Error(e, "fork");
  }
  if (pid == 0) {
    if (fds[1] == kReportFd) {
      ::fcntl(kReportFd, F_SETFD, 0);
    } else if (::dup2(fds[1], kReportFd) < 0) {
      ::_exit(126);
    }
    ::execv(exe, argv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  ChildProcess c;
  c.pid_ = pid;
  c.fd_ = fds[0];
  return c;
}

ChildProcess::ChildProcess(ChildProcess &&o) noexcept
    : pid_(o.pid_),
      fd_(o.fd_),
      reaped_(o.reaped_),
      status_(o.status_),
      partial_(std::move(o.partial_)) {
  o.pid_ = -1;
  o.fd_ = -1;
  o.reaped_ = true;
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    wait();
  }
  if (fd_ >= 0) ::close(fd_);
}

ChildProcess::Read ChildProcess::read_reports(std::vector<uint64_t> &out, int timeout_ms) {
  if (fd_ < 0) return Read::kEof;
  pollfd p{fd_, POLLIN, 0};
  int rc = ::poll(&p, 1, timeout_ms);
  if (rc == 0) return Read::kTimeout;
  if (rc < 0) return errno == EINTR ? Read::kTimeout : Read::kEof;
  char buf[4096];
  ssize_t n = ::read(fd_, buf, sizeof buf);
  if (n < 0) return errno == EINTR || errno == EAGAIN ? Read::kTimeout : Read::kEof;
  if (n == 0) return Read::kEof;
  partial_.append(buf, n);
  size_t whole = partial_.size() / 8 * 8;
  for (size_t i = 0; i < whole; i += 8) {
    uint64_t v;
    std::memcpy(&v, partial_.data() + i, 8);
    out.push_back(v);
  }
  partial_.erase(0, whole);
  return Read::kData;
}

void ChildProcess::read_remaining(std::vector<uint64_t> &out) {
  while (read_reports(out, 5000) == Read::kData) {
  }
}

void ChildProcess::kill9() {
  if (pid_ > 0 && !reaped_) ::kill(pid_, SIGKILL);
}

int ChildProcess::wait() {
  if (reaped_ || pid_ <= 0) return status_;
  int st = 0;
  while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  status_ = st;
  return st;
}

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return "exited with " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "wait status " + std::to_string(status);
}

}  // namespace strata::testing

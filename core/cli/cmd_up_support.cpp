#include "cli/cmd_up_support.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/subprocess.h"

namespace strata::cli::up {

namespace fs = std::filesystem;

std::string self_exe() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "strata" : p.string();
}

Result<pid_t> spawn_daemon(const std::vector<std::string> &argv, const std::string &log_path,
                           const std::string &pid_path) {
  // The grandchild tells us its pid, then execs; a second pipe, closed on
  // exec, reports an exec failure (its errno) instead.
  int pid_pipe[2], exec_pipe[2];
  if (pipe2(pid_pipe, O_CLOEXEC) != 0) return Status::Error(errno, "pipe");
  if (pipe2(exec_pipe, O_CLOEXEC) != 0) {
    close(pid_pipe[0]);
    close(pid_pipe[1]);
    return Status::Error(errno, "pipe");
  }
  std::vector<char *> cargv;
  for (const std::string &a : argv) cargv.push_back(const_cast<char *>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t first = fork();
  if (first < 0) return Status::Error(errno, "fork for " + argv[0]);
  if (first == 0) {
    setsid();
    pid_t second = fork();
    if (second != 0) _exit(second < 0 ? 1 : 0);
    // The daemon: no controlling terminal, its own session.
    pid_t self = getpid();
    (void)!write(pid_pipe[1], &self, sizeof self);
    int devnull = open("/dev/null", O_RDONLY);
    int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (devnull >= 0) dup2(devnull, 0);
    if (log >= 0) {
      dup2(log, 1);
      dup2(log, 2);
    }
    if (chdir("/") != 0) _exit(127);
    umask(022);
    execv(cargv[0], cargv.data());
    int err = errno;
    (void)!write(exec_pipe[1], &err, sizeof err);
    _exit(127);
  }
  close(pid_pipe[1]);
  close(exec_pipe[1]);
  int status = 0;
  waitpid(first, &status, 0);
  pid_t daemon = 0;
  ssize_t n = read(pid_pipe[0], &daemon, sizeof daemon);
  close(pid_pipe[0]);
  int err = 0;
  ssize_t e = read(exec_pipe[0], &err, sizeof err);  // EOF when exec succeeded
  close(exec_pipe[0]);
  if (n != sizeof daemon || daemon <= 0) return Status::Error(ECHILD, "could not start " + argv[0]);
  if (e == sizeof err) return Status::Error(err, "cannot execute " + argv[0]);
  std::ofstream(pid_path) << daemon << "\n";
  return daemon;
}

pid_t live_daemon(const std::string &pid_path, const std::string &marker) {
  std::ifstream in(pid_path);
  pid_t pid = 0;
  if (!(in >> pid) || pid <= 0) return 0;
  if (kill(pid, 0) != 0 && errno == ESRCH) return 0;
  std::ifstream cmd("/proc/" + std::to_string(pid) + "/cmdline");
  std::stringstream ss;
  ss << cmd.rdbuf();
  std::string line = ss.str();
  std::replace(line.begin(), line.end(), '\0', ' ');
  if (line.find(marker) == std::string::npos) return 0;
  // A zombie (our own child not reaped yet) counts as gone.
  std::ifstream st("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(st, stat);
  size_t paren = stat.rfind(')');
  if (paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z') return 0;
  return pid;
}

bool stop_daemon(const std::string &pid_path, const std::string &marker,
                 std::chrono::milliseconds grace, std::string *what) {
  pid_t pid = live_daemon(pid_path, marker);
  if (!pid) {
    std::error_code ec;
    fs::remove(pid_path, ec);
    return false;
  }
  kill(pid, SIGTERM);
  auto end = std::chrono::steady_clock::now() + grace;
  while (live_daemon(pid_path, marker) && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (live_daemon(pid_path, marker)) {
    kill(pid, SIGKILL);
    if (what) *what = "killed (SIGKILL after " + std::to_string(grace.count()) + " ms)";
    while (live_daemon(pid_path, marker))
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } else if (what) {
    *what = "stopped";
  }
  std::error_code ec;
  fs::remove(pid_path, ec);
  return true;
}

Status run(const std::vector<std::string> &argv) {
  auto r = run_process(argv);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    std::string cmd;
    for (const std::string &a : argv) cmd += (cmd.empty() ? "" : " ") + a;
    std::string err = r->err.empty() ? r->out : r->err;
    while (!err.empty() && err.back() == '\n') err.pop_back();
    return Status::Error(EIO, "`" + cmd + "` exited with " + std::to_string(r->exit_code) +
                                  (err.empty() ? "" : ": " + err));
  }
  return Status::OK();
}

bool is_mountpoint(const std::string &path) {
  std::error_code ec;
  std::string want = fs::weakly_canonical(path, ec).string();
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    // Field 5 is the mount point (octal escapes for spaces; our paths have none).
    std::istringstream ls(line);
    std::string f[5];
    for (auto &x : f) ls >> x;
    if (f[4] == want) return true;
  }
  return false;
}

Status mount_image(const std::string &fsname, const std::string &image, const std::string &mnt,
                   uint64_t bytes) {
  if (Status s = unmount_image(image, mnt); !s.ok()) return s;
  std::error_code ec;
  fs::remove(image, ec);
  fs::create_directories(mnt, ec);
  {
    int fd = open(image.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return Status::Error(errno, "creating image " + image);
    int rc = ftruncate(fd, off_t(bytes));
    int err = errno;
    close(fd);
    if (rc != 0) return Status::Error(err, "sizing image " + image);
  }
  Status s = fsname == "xfs"     ? run({"mkfs.xfs", "-q", "-f", "-m", "reflink=1", image})
             : fsname == "btrfs" ? run({"mkfs.btrfs", "-q", "-f", image})
                                 : Status::Error(EINVAL, "unknown file system " + fsname);
  if (!s.ok()) return s;
  return remount_image(image, mnt);
}

Status remount_image(const std::string &image, const std::string &mnt) {
  if (is_mountpoint(mnt)) return Status::OK();
  std::error_code ec;
  fs::create_directories(mnt, ec);
  // Direct I/O on the backing file, as a real disk would behave: with the
  // default buffered loop every byte is copied once more through the host's
  // page cache by a kernel worker, which with three OSDs on two cores ate
  // most of the CPU of a large-write run (and a flush on the loop device
  // would not reach the disk below). Old kernels without it fall back.
  auto dev = run_process({"losetup", "--find", "--show", "--direct-io=on", image});
  if (!dev.ok() || dev->exit_code != 0) dev = run_process({"losetup", "--find", "--show", image});
  if (!dev.ok()) return dev.status();
  std::string name = dev->out;
  while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
  if (dev->exit_code != 0 || name.empty())
    return Status::Error(EIO, "losetup " + image + " failed: " + dev->err);
  Status s = run({"mount", name, mnt});
  if (!s.ok()) run({"losetup", "-d", name});
  return s;
}

Status unmount_image(const std::string &image, const std::string &mnt) {
  if (is_mountpoint(mnt)) {
    Status s = run({"umount", mnt});
    if (!s.ok()) {
      // Busy: detach lazily so that `down` always finishes.
      Status lazy = run({"umount", "-l", mnt});
      if (!lazy.ok()) return s;
    }
  }
  std::error_code ec;
  if (fs::exists(image, ec)) {
    auto r = run_process({"losetup", "-j", image, "-O", "NAME", "-n"});
    if (r.ok()) {
      std::istringstream in(r->out);
      std::string dev;
      while (in >> dev) run({"losetup", "-d", dev});
    }
  }
  return Status::OK();
}

uint16_t free_port(uint16_t preferred) {
  auto try_bind = [](uint16_t port) -> int {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    if (bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) {
      close(fd);
      return -1;
    }
    socklen_t len = sizeof a;
    getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
    close(fd);
    return ntohs(a.sin_port);
  };
  if (preferred && try_bind(preferred) > 0) return preferred;
  int p = try_bind(0);
  return p > 0 ? uint16_t(p) : preferred;
}

}  // namespace strata::cli::up

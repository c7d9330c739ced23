#include "process_cluster.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace clienttest {

std::string strata_binary() { return std::string(STRATA_TEST_BIN_DIR) + "/strata"; }

namespace {

// Runs a shell command line, capturing stdout+stderr.
int run_shell(const std::string &cmd, std::string *out) {
  std::FILE *p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
  int status = ::pclose(p);
  if (out) *out = text;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A port nothing listens on now. `strata up` prefers 6789, which races
// with any other cluster starting at the same time (other tests, a
// developer's own): each test cluster gets a port of its own instead.
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}

std::string quote(const std::string &s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') q += "'\\''";
    else q += c;
  }
  return q + "'";
}

}  // namespace

ProcessCluster::ProcessCluster(int osds, std::vector<std::string> sets) {
  if (::access(strata_binary().c_str(), X_OK) != 0) {
    why_not_ = strata_binary() + " is not built";
    not_built_ = true;
    return;
  }
  char tmpl[] = "/tmp/strata-client-up-XXXXXX";
  if (!::mkdtemp(tmpl)) {
    why_not_ = "mkdtemp failed";
    return;
  }
  dir_ = tmpl;
  std::string cmd = quote(strata_binary()) + " up --dir " + quote(dir_) + " --osds " +
                    std::to_string(osds) + " --backend kv --journal tmpfs --pg-num 8 --timeout 120";
  if (int port = free_port()) cmd += " --set mon_addr=127.0.0.1:" + std::to_string(port);
  for (const std::string &s : sets) cmd += " --set " + quote(s);
  std::string out;
  int rc = run_shell(cmd, &out);
  if (rc != 0) {
    why_not_ = "strata up failed (" + std::to_string(rc) + "):\n" + out;
    return;
  }
  ok_ = true;
}

ProcessCluster::~ProcessCluster() {
  if (dir_.empty()) return;
  std::string out;
  run_shell(quote(strata_binary()) + " down --dir " + quote(dir_) + " --purge", &out);
  run_shell("rm -rf " + quote(dir_), nullptr);
}

strata_cluster_t ProcessCluster::connect(std::vector<std::string> overrides) {
  std::vector<const char *> ptrs;
  for (const std::string &s : overrides) ptrs.push_back(s.c_str());
  std::string c = conf();
  strata_cluster_args a{};
  a.struct_size = sizeof a;
  a.conf_path = c.c_str();
  a.overrides = ptrs.data();
  a.n_overrides = ptrs.size();
  strata_cluster_t h = nullptr;
  int rc = strata_cluster_create(&a, &h);
  INFO(strata_last_error());
  REQUIRE(rc == 0);
  rc = strata_cluster_connect(h, 20000);
  INFO(strata_last_error());
  REQUIRE(rc == 0);
  return h;
}

int ProcessCluster::cli(const std::string &args, std::string *out) const {
  return run_shell(quote(strata_binary()) + " " + args + " --conf " + quote(conf()), out);
}

pid_t ProcessCluster::osd_pid(int id) const {
  std::ifstream f(dir_ + "/osd." + std::to_string(id) + ".pid");
  pid_t pid = 0;
  f >> pid;
  return pid;
}

void ProcessCluster::kill_osd(int id) {
  pid_t pid = osd_pid(id);
  REQUIRE(pid > 0);
  REQUIRE(::kill(pid, SIGKILL) == 0);
}

void ProcessCluster::start_osd(int id) {
  std::string log = dir_ + "/osd." + std::to_string(id) + ".log";
  std::string pidfile = dir_ + "/osd." + std::to_string(id) + ".pid";
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::setsid();
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    std::string bin = strata_binary(), idtext = std::to_string(id), c = conf();
    ::execl(bin.c_str(), bin.c_str(), "osd", "--id", idtext.c_str(), "--conf", c.c_str(),
            static_cast<char *>(nullptr));
    ::_exit(127);
  }
  std::ofstream(pidfile) << pid << "\n";
}

}  // namespace clienttest

#include "process_cluster.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <thread>

#include "strata/client.h"

namespace strata::testing {

std::string strata_binary() { return std::string(STRATA_TEST_BIN_DIR) + "/strata"; }
std::string plugin_dir() { return STRATA_TEST_PLUGIN_DIR; }

namespace {

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

std::string quote(const std::string &s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') q += "'\\''";
    else q += c;
  }
  return q + "'";
}

bool alive(pid_t pid) {
  if (pid <= 0 || ::kill(pid, 0) != 0) return false;
  // A zombie is not running any more.
  std::ifstream st("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(st, line);
  size_t paren = line.rfind(')');
  return paren == std::string::npos || paren + 2 >= line.size() || line[paren + 2] != 'Z';
}

}  // namespace

ProcessCluster::ProcessCluster(int osds, std::vector<std::string> sets, const std::string &backend)
    : osds_(osds) {
  if (::access(strata_binary().c_str(), X_OK) != 0) {
    why_not_ = strata_binary() + " is not built";
    not_built_ = true;
    return;
  }
  char tmpl[] = "/tmp/strata-test-cluster-XXXXXX";
  if (!::mkdtemp(tmpl)) {
    why_not_ = "mkdtemp failed";
    return;
  }
  dir_ = tmpl;
  // Short heartbeats so failures are noticed in a second; OSDs are never
  // marked out on their own (the tests decide what comes back) nor held.
  std::string cmd = quote(strata_binary()) + " up --dir " + quote(dir_) + " --osds " +
                    std::to_string(osds) +
                    " --backend " + backend + (backend == "kv" ? "" : " --size-gb 2") +
                    " --journal tmpfs --pg-num 16 --mds 0 --timeout 120"
                    " --set heartbeat_interval_ms=100 --set heartbeat_grace_ms=1000"
                    " --set mon_osd_down_out_interval_ms=3600000"
                    // Tests kill and restart OSDs on purpose, and a loaded CI
                    // machine misses 1 s heartbeats: neither is flapping to
                    // hold an OSD down for (tests/mon and tests/cluster test
                    // the hold itself).
                    " --set mon_osd_flap_max_markdowns=0";
  for (const std::string &s : sets) cmd += " --set " + quote(s);
  if (const char *lvl = std::getenv("STRATA_TEST_LOG_LEVEL"); lvl && *lvl)
    cmd += " --set log_level=" + std::string(lvl);
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
  if (const char *keep = std::getenv("STRATA_TEST_KEEP_CLUSTER"); keep && *keep == '1') {
    std::fprintf(stderr, "keeping the cluster in %s (STRATA_TEST_KEEP_CLUSTER=1)\n", dir_.c_str());
    return;
  }
  run_shell(quote(strata_binary()) + " down --dir " + quote(dir_) + " --purge", nullptr);
  run_shell("rm -rf " + quote(dir_), nullptr);
}

int ProcessCluster::cli(const std::string &args, std::string *out) const {
  return run_shell(quote(strata_binary()) + " " + args + " --conf " + quote(conf()), out);
}

pid_t ProcessCluster::osd_pid(int id) const {
  std::ifstream f(dir_ + "/osd." + std::to_string(id) + ".pid");
  pid_t pid = 0;
  f >> pid;
  return alive(pid) ? pid : 0;
}

void ProcessCluster::kill_osd(int id) {
  pid_t pid = osd_pid(id);
  REQUIRE(pid > 0);
  REQUIRE(::kill(pid, SIGKILL) == 0);
  for (int i = 0; i < 500 && alive(pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

void ProcessCluster::stop_osd(int id) {
  pid_t pid = osd_pid(id);
  REQUIRE(pid > 0);
  REQUIRE(::kill(pid, SIGTERM) == 0);
  for (int i = 0; i < 3000 && alive(pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE_FALSE(alive(pid));
}

void ProcessCluster::start_osd(int id) {
  std::string log = dir_ + "/osd." + std::to_string(id) + ".log";
  std::string pidfile = dir_ + "/osd." + std::to_string(id) + ".pid";
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // Double fork: the daemon is nobody's child here, so it never lingers
    // as a zombie of the test and `strata down` can stop it.
    ::setsid();
    pid_t daemon = ::fork();
    if (daemon == 0) {
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
      }
      int null = ::open("/dev/null", O_RDONLY);
      if (null >= 0) ::dup2(null, 0);
      std::string bin = strata_binary(), idtext = std::to_string(id), c = conf();
      ::execl(bin.c_str(), bin.c_str(), "osd", "--id", idtext.c_str(), "--conf", c.c_str(),
              static_cast<char *>(nullptr));
      ::_exit(127);
    }
    ssize_t w = ::write(fds[1], &daemon, sizeof daemon);
    ::_exit(w == sizeof daemon ? 0 : 1);
  }
  ::close(fds[1]);
  pid_t daemon = 0;
  ssize_t r = ::read(fds[0], &daemon, sizeof daemon);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(r == sizeof daemon);
  REQUIRE(daemon > 0);
  std::ofstream(pidfile) << daemon << "\n";
}

void ProcessCluster::wait_clean(std::chrono::seconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  static const std::regex total_re(R"re("pgs":\{"total":(\d+),"by_state":\{([^}]*)\})re");
  std::string last;
  while (std::chrono::steady_clock::now() < deadline) {
    std::string out;
    if (cli("status --format json", &out) == 0) {
      last = out;
      std::smatch m;
      if (std::regex_search(out, m, total_re)) {
        std::string want = "\"active+clean\":" + m[1].str();
        if (m[2].str() == want) return;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  INFO("last status: " << last);
  FAIL("the PGs did not all become active+clean within " << timeout.count() << " s");
}

strata_cluster *ProcessCluster::connect(const std::vector<std::string> &overrides) {
  std::string c = conf();
  std::vector<std::string> all = {"plugin_path=" + plugin_dir()};
  all.insert(all.end(), overrides.begin(), overrides.end());
  std::vector<const char *> ov;
  for (const std::string &o : all) ov.push_back(o.c_str());
  strata_cluster_args a{};
  a.struct_size = sizeof a;
  a.conf_path = c.c_str();
  a.overrides = ov.data();
  a.n_overrides = ov.size();
  strata_cluster_t h = nullptr;
  int rc = strata_cluster_create(&a, &h);
  INFO(strata_last_error());
  REQUIRE(rc == 0);
  rc = strata_cluster_connect(h, 20000);
  INFO(strata_last_error());
  REQUIRE(rc == 0);
  return h;
}

std::string ProcessCluster::store_dir(int id) const {
  return dir_ + "/osd." + std::to_string(id) + "/store";
}

}  // namespace strata::testing

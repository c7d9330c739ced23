#include "mon_test_support.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "cluster/placement_gen.h"
#include "placement/placer.h"

namespace mon_test {

namespace fs = std::filesystem;
using namespace strata;

TempDir::TempDir(const std::string &label) {
  static int counter = 0;
  path_ = (fs::temp_directory_path() / ("strata-mon-test-" + label + "-" +
                                        std::to_string(getpid()) + "-" + std::to_string(counter++)))
              .string();
  fs::remove_all(path_);
  fs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

host::Plugin crush() {
  static host::Plugin p = [] {
    auto r =
        host::load_plugin(std::string(STRATA_TEST_PLUGIN_DIR) + "/libstrata_placement_crush.so",
                          STRATA_KIND_PLACEMENT);
    INFO(r.status().message());
    REQUIRE(r.ok());
    return r.value();
  }();
  return p;
}

Logger &quiet_log() {
  // MON_TEST_VERBOSE=1 in the environment shows the monitor's whole log
  // (why it marked something down) when a test needs explaining.
  static Logger log(std::getenv("MON_TEST_VERBOSE") ? STRATA_LOG_INFO : STRATA_LOG_ERROR);
  return log;
}

cluster::ClusterMap sample_map(int n, int hosts, uint32_t size) {
  cluster::ClusterMap m;
  m.epoch = 5;
  m.fsid = "fsid-test";
  for (int i = 0; i < n; ++i) {
    cluster::OsdInfo o;
    o.id = i;
    o.addr = "127.0.0.1:" + std::to_string(6800 + i);
    o.up = true;
    o.host = "host" + std::to_string(i % hosts);
    o.up_from = 2;
    m.osds[i] = o;
  }
  auto pm = cluster::generate_placement(m.osds, {});
  INFO(pm.status().message());
  REQUIRE(pm.ok());
  m.placement = pm.value();
  cluster::PoolInfo p;
  p.id = 1;
  p.name = "data";
  p.size = size;
  p.min_size = std::min<uint32_t>(2, size);
  p.pg_num = 16;
  p.rule = cluster::default_rule(m, size);
  m.pools[1] = p;
  return m;
}

bool eventually(const std::function<bool()> &pred, std::chrono::milliseconds timeout) {
  auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return pred();
}

StrataProcess::StrataProcess(std::vector<std::string> args, const std::string &log_path) {
  args.insert(args.begin(), STRATA_TEST_BINARY);
  pid_ = fork();
  REQUIRE(pid_ >= 0);
  if (pid_ == 0) {
    std::FILE *f = std::fopen(log_path.c_str(), "a");
    if (f) {
      dup2(fileno(f), 1);
      dup2(fileno(f), 2);
    }
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
}

StrataProcess::~StrataProcess() {
  if (!reaped_) kill9();
}

bool StrataProcess::running() {
  if (reaped_) return false;
  if (waitpid(pid_, &status_, WNOHANG) == pid_) reaped_ = true;
  return !reaped_;
}

int StrataProcess::wait() {
  if (!reaped_) {
    waitpid(pid_, &status_, 0);
    reaped_ = true;
  }
  return WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + WTERMSIG(status_);
}

void StrataProcess::terminate() {
  if (reaped_) return;
  kill(pid_, SIGTERM);
  wait();
}

void StrataProcess::kill9() {
  if (reaped_) return;
  kill(pid_, SIGKILL);
  wait();
}

int run_strata(const std::vector<std::string> &args, std::string *out) {
  TempDir d("run");
  StrataProcess p(args, d / "out");
  int rc = p.wait();
  if (out) {
    std::ifstream in(d / "out");
    std::stringstream ss;
    ss << in.rdbuf();
    *out = ss.str();
  }
  return rc;
}

namespace {

// A port nobody listens on right now (bind to 0, read it, close).
uint16_t free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

}  // namespace

MonFixture::MonFixture(int osds, std::map<std::string, std::string> mon_settings) : dir_("mon") {
  keyring_.set("mon", msg::Keyring::generate_secret());
  keyring_.set("client.admin", msg::Keyring::generate_secret());
  keyring_.set("client.reader", msg::Keyring::generate_secret());
  // Fake MDS daemons (mds_map_test.cpp).
  for (const char *m : {"mds.x", "mds.y"}) keyring_.set(m, msg::Keyring::generate_secret());
  for (int i = 0; i < osds; ++i)
    keyring_.set("osd." + std::to_string(i), msg::Keyring::generate_secret());
  REQUIRE(keyring_.write_file(dir_ / "keyring").ok());
  addr_ = "127.0.0.1:" + std::to_string(free_port());
  conf_ = dir_ / "strata.conf";
  std::map<std::string, std::string> mon = {{"mon_data", dir_ / "mon-data"},
                                            {"mon_osd_down_out_interval_ms", "600000"}};
  for (auto &[k, v] : mon_settings) mon[k] = v;
  std::ofstream c(conf_);
  c << "[global]\nfsid = 0b5e3a52-1111-4222-8333-444455556666\nmon_addr = " << addr_
    << "\nkeyring = " << (dir_ / "keyring") << "\nheartbeat_grace_ms = 400\n"
    << "plugin_path = " << STRATA_TEST_PLUGIN_DIR << "\n[mon]\n";
  for (auto &[k, v] : mon) c << k << " = " << v << "\n";
  c.close();
  std::string out;
  int rc = run_strata({"mon", "--conf", conf_, "--mkfs"}, &out);
  INFO(out);
  REQUIRE(rc == 0);
  start();
}

void MonFixture::start() {
  proc_ = std::make_unique<StrataProcess>(std::vector<std::string>{"mon", "--conf", conf_},
                                          dir_ / "mon.log");
  // Ready once the log says so (after what earlier runs logged).
  size_t from = log_text().size();
  bool up =
      eventually([&] { return log_text().find("mon: listening on", from) != std::string::npos; });
  INFO(log_text());
  REQUIRE(up);
}

void MonFixture::restart() {
  proc_->terminate();
  start();
}

MonFixture::~MonFixture() {
  if (proc_) proc_->terminate();
}

std::string MonFixture::log_text() const {
  std::ifstream in(dir_ / "mon.log");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace mon_test

// `strata frontend run` as a user runs it: the lines example (built out of
// tree against the installed SDK by the fixture in CMakeLists.txt) against
// a real `strata up` cluster, the test plugin's own stop requests, and the
// command's usage errors.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "process_cluster.h"
#include "strata/client.h"

using strata::testing::ProcessCluster;

namespace {

const std::string kExample = TEST_EXAMPLE_PLUGIN;
const std::string kTestPlugin = std::string(TEST_FRONTEND_DIR) + "/libstrata_frontend_test.so";

std::string slurp(const std::string &path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// `strata ARGS` in the background, stdout and stderr into one file.
class Running {
 public:
  Running(const std::vector<std::string> &args, std::string out) : out_(std::move(out)) {
    // Everything allocated before fork: the test process has client threads,
    // and the child may only make async-signal-safe calls until exec.
    std::vector<std::string> all = {strata::testing::strata_binary()};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char *> argv;
    for (std::string &a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      int fd = ::open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
  }
  ~Running() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }
  std::string output() const { return slurp(out_); }
  bool exited() {
    if (reaped_) return true;
    int st = 0;
    if (::waitpid(pid_, &st, WNOHANG) != pid_) return false;
    reaped_ = true;
    status_ = st;
    return true;
  }
  // Waits for the exit; the exit code, or 128 + signal.
  int wait() {
    if (!reaped_) {
      REQUIRE(::waitpid(pid_, &status_, 0) == pid_);
      reaped_ = true;
    }
    return WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + WTERMSIG(status_);
  }

 private:
  std::string out_;
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
};

// Polls `ready` every 50 ms for up to a minute (a bound for a loaded
// machine, not a timed assertion), giving up early if `proc` exits.
template <class Ready>
bool wait_until(Running &proc, Ready ready) {
  for (int i = 0; i < 1200; ++i) {
    if (ready()) return true;
    if (proc.exited()) return ready();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

int connect_to(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(uint16_t(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0);
  return fd;
}

// Sends one request line and reads one reply line.
std::string request(int fd, const std::string &line) {
  std::string out = line + "\n";
  REQUIRE(::send(fd, out.data(), out.size(), MSG_NOSIGNAL) == ssize_t(out.size()));
  std::string reply;
  char c;
  while (::recv(fd, &c, 1, 0) == 1 && c != '\n') reply += c;
  return reply;
}

// `strata ARGS` to completion: exit code and output.
int run(const std::string &args, std::string *out) {
  std::FILE *p = ::popen((strata::testing::strata_binary() + " " + args + " 2>&1").c_str(), "r");
  REQUIRE(p);
  char buf[4096];
  size_t n;
  out->clear();
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  int st = ::pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

ProcessCluster &cluster() {
  static ProcessCluster c(1);
  return c;
}

}  // namespace

TEST_CASE("the lines example, built against the installed SDK, serves objects of a real cluster",
          "[frontend]") {
  ProcessCluster &c = cluster();
  REQUIRE_CLUSTER(c);
  strata_cluster_t admin = c.connect();
  strata_pool_args pa{};
  pa.struct_size = sizeof pa;
  pa.size = 1;
  pa.min_size = 1;
  pa.pg_num = 8;
  REQUIRE(strata_pool_create(admin, "lines", &pa) == 0);
  strata_ioctx_t io = nullptr;
  REQUIRE(strata_ioctx_create(admin, "lines", &io) == 0);
  const std::string from_client = "written by the client";
  REQUIRE(strata_write_full(io, "from-client", from_client.data(), from_client.size()) == 0);

  std::string port_file = c.dir() + "/lines.port";
  Running fe({"frontend", "run", "--plugin", kExample, "--conf", c.conf(), "--set",
              "plugin_path=" + strata::testing::plugin_dir(), "--set", "pool=lines", "--set",
              "listen=127.0.0.1:0", "--set", "port_file=" + port_file},
             c.dir() + "/frontend.out");
  bool listening = wait_until(fe, [&] { return !slurp(port_file).empty(); });
  INFO(fe.output());
  REQUIRE(listening);
  int fd = connect_to(std::stoi(slurp(port_file)));

  // A PUT through the frontend is an object in the pool.
  CHECK_THAT(request(fd, "PUT greeting hello world"), Catch::StartsWith("OK "));
  char buf[64] = {};
  CHECK(strata_read(io, "greeting", buf, sizeof buf, 0) == 11);
  CHECK(std::string(buf) == "hello world");
  // An object written by another client is what GET answers.
  CHECK(request(fd, "GET from-client") == "VALUE 21 " + from_client);
  CHECK_THAT(request(fd, "GET missing"), Catch::StartsWith("ERR ENOENT GET missing"));
  CHECK(request(fd, "DEL greeting") == "OK");
  strata_obj_stat st{};
  st.struct_size = sizeof st;
  CHECK(strata_stat(io, "greeting", &st) == -ENOENT);
  CHECK(request(fd, "QUIT") == "BYE");
  ::close(fd);

  // SIGUSR1: the host prints the plugin's status and metrics.
  REQUIRE(::kill(fe.pid(), SIGUSR1) == 0);
  bool reported = wait_until(
      fe, [&] { return fe.output().find("strata_lines_errors_total 1\n") != std::string::npos; });
  std::string out = fe.output();
  INFO(out);
  CHECK(reported);
  CHECK_THAT(out, Catch::Contains("status: serving 127.0.0.1:"));
  CHECK_THAT(out, Catch::Contains("strata_lines_requests_total{command=\"put\"} 1\n"));
  CHECK_THAT(out, Catch::Contains("strata_lines_requests_total{command=\"get\"} 1\n"));
  CHECK_THAT(out, Catch::Contains("strata_lines_requests_total{command=\"del\"} 1\n"));

  // SIGTERM: a clean stop, exit 0, the port file removed by the plugin's stop.
  REQUIRE(::kill(fe.pid(), SIGTERM) == 0);
  CHECK(fe.wait() == 0);
  out = fe.output();
  INFO(out);
  CHECK_THAT(out, Catch::Contains("frontend lines: stopping on SIGTERM"));
  CHECK_THAT(out, Catch::Contains("frontend lines: stopped"));
  CHECK(::access(port_file.c_str(), F_OK) != 0);

  strata_ioctx_destroy(io);
  strata_cluster_shutdown(admin);
}

TEST_CASE("strata frontend run ends with the plugin's own stop request and its result",
          "[frontend]") {
  ProcessCluster &c = cluster();
  REQUIRE_CLUSTER(c);
  std::vector<std::string> base = {
      "frontend", "run",    "--plugin", kTestPlugin,
      "--conf",   c.conf(), "--set",    "plugin_path=" + strata::testing::plugin_dir()};
  {
    auto args = base;
    args.insert(args.end(), {"--set", "request_stop=ok"});
    Running fe(args, c.dir() + "/frontend-ok.out");
    CHECK(fe.wait() == 0);
    INFO(fe.output());
    CHECK_THAT(fe.output(),
               Catch::Contains("stopping at the plugin's request (the test plugin is done)"));
  }
  {
    auto args = base;
    args.insert(args.end(), {"--set", "request_stop=fail"});
    Running fe(args, c.dir() + "/frontend-fail.out");
    CHECK(fe.wait() == 1);
    INFO(fe.output());
    CHECK_THAT(fe.output(), Catch::Contains("frontend test failed: the test plugin lost its pipe"));
  }
  {
    auto args = base;
    args.insert(args.end(), {"--set", "fail_start=true"});
    Running fe(args, c.dir() + "/frontend-start.out");
    CHECK(fe.wait() == 1);
    INFO(fe.output());
    CHECK_THAT(fe.output(), Catch::Contains("starting frontend test: cannot listen on"));
  }
}

TEST_CASE("strata frontend run --help exits 0 and lists a plugin's options", "[frontend]") {
  std::string out;
  CHECK(run("frontend run --help", &out) == 0);
  CHECK_THAT(out, Catch::Contains("usage: strata frontend run --plugin"));
  CHECK(run("frontend --help", &out) == 0);
  CHECK(run("frontend run --help --plugin " + kTestPlugin, &out) == 0);
  CHECK_THAT(out, Catch::Contains("options of frontend plugin 'test'"));
  CHECK_THAT(out, Catch::Contains("request_stop"));
}

TEST_CASE("strata frontend run refuses bad usage before connecting", "[frontend]") {
  std::string out;
  CHECK(run("frontend run", &out) == 2);
  CHECK_THAT(out, Catch::Contains("--plugin is required"));
  CHECK(run("frontend walk --plugin x", &out) == 2);
  // Not a plugin option and not a client key: exit 2, naming what the
  // plugin takes.
  CHECK(run("frontend run --plugin " + kTestPlugin + " --set colour=blue", &out) == 2);
  CHECK_THAT(out, Catch::Contains("unknown option 'colour' for frontend plugin 'test'"));
  CHECK(run("frontend run --plugin " + kTestPlugin + " --set request_stop=later", &out) == 2);
  // A backend plugin is not a frontend.
  CHECK(run("frontend run --plugin " + std::string(TEST_BACKEND_PLUGIN), &out) == 1);
  CHECK_THAT(out, Catch::Contains("expected a frontend plugin, found a backend plugin"));
}

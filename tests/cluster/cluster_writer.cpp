// The client side of the cluster fault tests, through the public C API
// (sdk/include/strata/client.h) only.
//
//   cluster_writer write  --conf F --pool P --log FILE [--prefix X] [--seconds S] [--size N]
//                         [--max N]
//       Writes objects, ... one at a time with content derived from
//       the name; after each acknowledgement appends the name to FILE. Runs
//       until --seconds pass, N objects are written (--max), or
//       SIGTERM/SIGINT; prints the count and the
//       longest wait for one acknowledgement (the write pause a failure
//       caused).
//   cluster_writer verify --conf F --pool P --log FILE
//       Reads back every object named in FILE and checks its content.
//   cluster_writer append --conf F --pool P --object O --count N
//       Appends N one-line records to O (appends are not idempotent: an op
//       applied twice shows as a longer object), then checks the length.
//   cluster_writer probe --conf F --pool P --object O --name client.X --keyring K --go FILE
//       Connects as client.X, writes "before" to O and prints "ready"; then
//       waits for FILE to exist and, on the same session, writes "after"
//       to O and prints "rc N" (the write's return). For the test that a
//       revoked key cuts off a client that is already connected.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "strata/client.h"

namespace {

volatile sig_atomic_t g_stop = 0;  // set by the signal handler only
void on_signal(int) { g_stop = 1; }

struct Args {
  std::string mode, conf, pool, log, prefix = "obj", object, name, keyring, go;
  double seconds = 10;
  size_t size = 4096;
  long count = 100;
  long max_writes = 0;  // write mode: stop after this many (0: no limit)
};

std::string content_for(const std::string &name, size_t size) {
  // Deterministic, name-dependent bytes: a torn or misplaced write shows.
  std::string out(size, '\0');
  uint64_t x = 1469598103934665603ull;
  for (char c : name) x = (x ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  for (size_t i = 0; i < size; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    out[i] = static_cast<char>(x);
  }
  return out;
}

int die(const char *what, int rc) {
  std::fprintf(stderr, "cluster_writer: %s: %s (%d)\n", what, strata_last_error(), rc);
  return 1;
}

bool parse(int argc, char **argv, Args &a) {
  if (argc < 2) return false;
  a.mode = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--conf") a.conf = v;
    else if (k == "--pool") a.pool = v;
    else if (k == "--log") a.log = v;
    else if (k == "--prefix") a.prefix = v;
    else if (k == "--object") a.object = v;
    else if (k == "--seconds") a.seconds = std::atof(v.c_str());
    else if (k == "--size") a.size = std::strtoul(v.c_str(), nullptr, 10);
    else if (k == "--count") a.count = std::atol(v.c_str());
    else if (k == "--max") a.max_writes = std::atol(v.c_str());
    else if (k == "--name") a.name = v;
    else if (k == "--keyring") a.keyring = v;
    else if (k == "--go") a.go = v;
    else return false;
  }
  return !a.conf.empty() && !a.pool.empty();
}

int run_write(strata_ioctx_t io, const Args &a) {
  std::FILE *log = std::fopen(a.log.c_str(), "a");
  if (!log) return std::perror(a.log.c_str()), 1;
  using clock = std::chrono::steady_clock;
  const auto end = clock::now() + std::chrono::duration<double>(a.seconds);
  double max_wait_ms = 0;
  long n = 0;
  while (!g_stop && clock::now() < end && (a.max_writes <= 0 || n < a.max_writes)) {
    std::string name = a.prefix + "-" + std::to_string(n);
    std::string data = content_for(name, a.size);
    auto t0 = clock::now();
    int rc = strata_write_full(io, name.c_str(), data.data(), data.size());
    if (rc < 0) return die(("write_full " + name).c_str(), rc);
    double ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    if (ms > max_wait_ms) max_wait_ms = ms;
    std::fprintf(log, "%s\n", name.c_str());
    std::fflush(log);
    ++n;
  }
  std::fclose(log);
  std::printf("acked %ld max_wait_ms %.1f\n", n, max_wait_ms);
  return 0;
}

int run_verify(strata_ioctx_t io, const Args &a) {
  std::ifstream in(a.log);
  if (!in) return std::perror(a.log.c_str()), 1;
  std::string name;
  long ok = 0, bad = 0;
  std::vector<char> buf(a.size + 1);
  while (std::getline(in, name)) {
    std::string want = content_for(name, a.size);
    int64_t got = strata_read(io, name.c_str(), buf.data(), buf.size(), 0);
    if (got != static_cast<int64_t>(want.size()) ||
        std::memcmp(buf.data(), want.data(), want.size()) != 0) {
      std::fprintf(stderr, "cluster_writer: %s: read %lld bytes, content %s\n", name.c_str(),
                   static_cast<long long>(got), got < 0 ? strata_last_error() : "differs");
      ++bad;
    } else {
      ++ok;
    }
  }
  std::printf("verified %ld bad %ld\n", ok, bad);
  return bad == 0 && ok > 0 ? 0 : 1;
}

int run_append(strata_ioctx_t io, const Args &a) {
  const std::string rec = "record\n";
  for (long i = 0; i < a.count && !g_stop; ++i) {
    int rc = strata_append(io, a.object.c_str(), rec.data(), rec.size());
    if (rc < 0) return die(("append " + a.object).c_str(), rc);
  }
  strata_obj_stat st{};
  st.struct_size = sizeof st;
  int rc = strata_stat(io, a.object.c_str(), &st);
  if (rc < 0) return die(("stat " + a.object).c_str(), rc);
  uint64_t want = rec.size() * static_cast<uint64_t>(a.count);
  std::printf("appended %ld size %llu expected %llu\n", a.count,
              static_cast<unsigned long long>(st.size), static_cast<unsigned long long>(want));
  return st.size == want ? 0 : 1;
}

int run_probe(strata_ioctx_t io, const Args &a) {
  int rc = strata_write_full(io, a.object.c_str(), "before", 6);
  if (rc < 0) return die(("write_full " + a.object).c_str(), rc);
  std::printf("ready\n");
  std::fflush(stdout);
  while (!g_stop && ::access(a.go.c_str(), F_OK) != 0) ::usleep(20 * 1000);
  rc = strata_write_full(io, a.object.c_str(), "after", 5);
  std::printf("rc %d %s\n", rc, rc < 0 ? strata_last_error() : "");
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  Args a;
  if (!parse(argc, argv, a)) {
    std::fprintf(stderr,
                 "usage: cluster_writer write|verify|append|probe --conf F --pool P [--log FILE] "
                 "[--prefix X] [--seconds S] [--size N] [--object O --count N] "
                 "[--name client.X --keyring K --go FILE]\n");
    return 2;
  }
  signal(SIGTERM, on_signal);
  signal(SIGINT, on_signal);
  strata_cluster_args args{};
  args.struct_size = sizeof args;
  args.conf_path = a.conf.c_str();
  if (!a.name.empty()) args.entity = a.name.c_str();
  std::string keyring = "keyring=" + a.keyring;
  const char *overrides[] = {keyring.c_str()};
  if (!a.keyring.empty()) {
    args.overrides = overrides;
    args.n_overrides = 1;
  }
  strata_cluster_t c = nullptr;
  int rc = strata_cluster_create(&args, &c);
  if (rc < 0) return die("cluster_create", rc);
  if ((rc = strata_cluster_connect(c, 30000)) < 0) return die("connect", rc);
  strata_ioctx_t io = nullptr;
  if ((rc = strata_ioctx_create(c, a.pool.c_str(), &io)) < 0) return die("ioctx", rc);
  int ret = a.mode == "write"    ? run_write(io, a)
            : a.mode == "verify" ? run_verify(io, a)
            : a.mode == "append" ? run_append(io, a)
            : a.mode == "probe"  ? run_probe(io, a)
                                 : 2;
  strata_ioctx_destroy(io);
  strata_cluster_shutdown(c);
  return ret;
}

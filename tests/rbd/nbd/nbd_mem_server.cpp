// Serves one in-memory device over NBD until SIGTERM or SIGINT, for tests
// with real NBD clients. Prints "listening on ADDRESS" once bound.
//
//   nbd_mem_server --size BYTES (--unix PATH | --tcp HOST:PORT)
//                  [--read-only] [--async-threads N] [--max-payload BYTES]
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "mem_device.h"
#include "nbd_server.h"
#include "strata/cpp/plugin_support.hpp"

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: nbd_mem_server --size BYTES (--unix PATH | --tcp HOST:PORT) [--read-only] "
               "[--async-threads N] [--max-payload BYTES]\n");
  return 2;
}

}  // namespace

int main(int argc, char **argv) {
  uint64_t size = 0;
  bool read_only = false;
  int async_threads = 2;
  strata::rbd::NbdServerOptions opts;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool has_value = i + 1 < argc;
    if (a == "--size" && has_value) {
      size = std::strtoull(argv[++i], nullptr, 0);
    } else if (a == "--unix" && has_value) {
      opts.unix_path = argv[++i];
    } else if (a == "--tcp" && has_value) {
      opts.tcp_listen = argv[++i];
    } else if (a == "--async-threads" && has_value) {
      async_threads = std::atoi(argv[++i]);
    } else if (a == "--max-payload" && has_value) {
      opts.max_payload = uint32_t(std::strtoul(argv[++i], nullptr, 0));
    } else if (a == "--read-only") {
      read_only = true;
    } else {
      return usage();
    }
  }
  if (size == 0) return usage();
  opts.log = [](int level, const std::string &line) {
    if (level >= STRATA_LOG_WARN) std::fprintf(stderr, "%s\n", line.c_str());
  };

  // Block the signals before any thread starts so that only sigwait sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto device = std::make_shared<rbdtest::MemDevice>(size, read_only, async_threads);
  std::unique_ptr<strata::rbd::NbdServer> server;
  try {
    server = strata::rbd::NbdServer::start({{"", "an in-memory test device", device}}, opts);
  } catch (const strata::sdk::Error &e) {
    std::fprintf(stderr, "nbd_mem_server: %s\n", e.what());
    return 1;
  }
  std::printf("listening on %s\n", server->bound_address().c_str());
  std::fflush(stdout);
  int sig = 0;
  sigwait(&stop_signals, &sig);
  server->stop();
  auto st = server->stats();
  std::fprintf(stderr, "nbd_mem_server: stopped: %llu connections, %llu requests, %llu errors\n",
               static_cast<unsigned long long>(st.connections_total),
               static_cast<unsigned long long>(st.requests), static_cast<unsigned long long>(st.errors));
  return 0;
}

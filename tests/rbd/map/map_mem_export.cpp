// Exports an in-memory device (tests/rbd/support/mem_device.h) as one
// file over FUSE until SIGTERM/SIGINT, or until the mount is unmounted
// from outside; for the map tests' shell scripts.
//
//   map_mem_export MOUNTPOINT SIZE [--name FILE] [--async-threads N] [--read-only]
//
// SIZE takes a K, M or G suffix. Prints "ready" once mounted, and its
// stats when it ends; exits 0 after a clean stop.
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "file_export.h"
#include "mem_device.h"
#include "strata/cpp/plugin_support.hpp"

namespace {

uint64_t parse_size(const std::string &s) {
  char *end = nullptr;
  uint64_t n = std::strtoull(s.c_str(), &end, 10);
  switch (*end) {
    case 'G': n <<= 10; [[fallthrough]];
    case 'M': n <<= 10; [[fallthrough]];
    case 'K': n <<= 10; break;
    default: break;
  }
  return n;
}

int usage() {
  std::fprintf(stderr,
               "usage: map_mem_export MOUNTPOINT SIZE [--name FILE] [--async-threads N] "
               "[--read-only]\n");
  return 2;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 3) return usage();
  std::string mountpoint = argv[1], name = "disk";
  uint64_t size = parse_size(argv[2]);
  int async_threads = 0;
  bool read_only = false;
  for (int i = 3; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--name" && i + 1 < argc) {
      name = argv[++i];
    } else if (a == "--async-threads" && i + 1 < argc) {
      async_threads = std::atoi(argv[++i]);
    } else if (a == "--read-only") {
      read_only = true;
    } else {
      return usage();
    }
  }
  if (size == 0) return usage();

  // Blocked before any thread starts, so every thread inherits the mask
  // and the signals arrive only through the signalfd.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  int sfd = signalfd(-1, &stop_signals, SFD_CLOEXEC);
  int unmounted_fd = eventfd(0, EFD_CLOEXEC);
  if (sfd < 0 || unmounted_fd < 0) {
    std::perror("signalfd/eventfd");
    return 1;
  }

  auto device = std::make_shared<rbdtest::MemDevice>(size, read_only, async_threads);
  strata::rbd::FileExportOptions opts;
  opts.mountpoint = mountpoint;
  opts.file_name = name;
  opts.log = [](int level, const std::string &line) {
    std::fprintf(stderr, "map_mem_export [%d]: %s\n", level, line.c_str());
  };
  int unmount_result = 0;
  opts.on_unmounted = [&](int result, const std::string &reason) {
    std::fprintf(stderr, "map_mem_export: %s (%d)\n", reason.c_str(), result);
    unmount_result = result;
    uint64_t one = 1;
    if (write(unmounted_fd, &one, sizeof one) < 0) std::perror("eventfd write");
  };

  std::unique_ptr<strata::rbd::FileExport> exp;
  try {
    exp = strata::rbd::FileExport::start(device, opts);
  } catch (const strata::sdk::Error &e) {
    std::fprintf(stderr, "map_mem_export: %s\n", e.what());
    return 1;
  }
  std::printf("ready\n");
  std::fflush(stdout);

  pollfd fds[2] = {{sfd, POLLIN, 0}, {unmounted_fd, POLLIN, 0}};
  while (poll(fds, 2, -1) < 0) {
  }
  if (fds[0].revents & POLLIN) {
    signalfd_siginfo si{};
    if (read(sfd, &si, sizeof si) > 0) {
      std::fprintf(stderr, "map_mem_export: signal %u, stopping\n", si.ssi_signo);
    }
  }
  exp->stop();
  strata::rbd::FileExportStats s = exp->stats();
  std::printf(
      "stopped: reads %llu writes %llu flushes %llu discards %llu errors %llu "
      "bytes_read %llu bytes_written %llu device_flushes %llu chunks %zu\n",
      (unsigned long long)s.reads, (unsigned long long)s.writes, (unsigned long long)s.flushes,
      (unsigned long long)s.discards, (unsigned long long)s.errors,
      (unsigned long long)s.bytes_read, (unsigned long long)s.bytes_written,
      (unsigned long long)device->flushes(), device->allocated_chunks());
  exp.reset();
  return unmount_result == 0 ? 0 : 1;
}

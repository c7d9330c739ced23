// What the commands that run a frontend plugin share (`strata frontend
// run`, `strata mount`): the stop signals, finding the plugin, splitting
// --set between the plugin and the client, waiting for the end.
#pragma once

#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <csignal>
#include <string>
#include <vector>

#include "cli/cmd_client_common.h"
#include "common/log.h"
#include "common/status.h"
#include "host/frontend_host.h"
#include "host/plugin_loader.h"

namespace strata::cli {

// The signals that stop the frontend, and SIGUSR1 (report). Blocked in
// every thread and read from a signalfd by the controlling thread only.
class StopSignals {
 public:
  StopSignals() {
    sigemptyset(&set_);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGUSR1}) sigaddset(&set_, s);
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
    std::signal(SIGPIPE, SIG_IGN);
    fd_ = signalfd(-1, &set_, SFD_CLOEXEC);
  }
  ~StopSignals() {
    if (fd_ >= 0) ::close(fd_);
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  StopSignals(const StopSignals &) = delete;
  StopSignals &operator=(const StopSignals &) = delete;

  int fd() const { return fd_; }
  // The next pending signal, 0 if none.
  int take() const {
    signalfd_siginfo info{};
    ssize_t n = ::read(fd_, &info, sizeof info);
    return n == sizeof info ? int(info.ssi_signo) : 0;
  }

 private:
  sigset_t set_{}, old_{};
  int fd_ = -1;
};

struct SplitSets {
  host::PluginOptions plugin;       // declared by the plugin
  std::vector<std::string> client;  // everything else, "key=value"
};

// --set key=value goes to the plugin when it declares the key, else to the
// client's config when the client knows it; anything else is a usage error.
Result<SplitSets> split_sets(const host::Plugin &p, const std::vector<std::string> &sets);

// A frontend plugin by name (on the configured plugin path) or file.
Result<host::Plugin> find_frontend(const CommonOptions &o, const std::string &plugin);

// The options of a frontend plugin, for --help.
void print_plugin_options(const host::Plugin &p);

// Waits for a stop signal or the plugin's stop request, answering SIGUSR1
// meanwhile. Returns the signal, or 0 for the plugin's request.
int wait_for_stop(const StopSignals &signals, const host::FrontendInstance &fe, OutputFormat format,
                  Logger &log);

}  // namespace strata::cli

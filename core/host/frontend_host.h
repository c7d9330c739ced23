// The host side of one frontend plugin instance (strata/frontend.h): its
// validated options, the host table handed to it (log, request_stop, the
// client routines), start and stop, and reading its status and metrics.
// Used by `strata frontend run` and by every command that runs a frontend.
//
// Threading: start, stop and the destructor from one controlling thread;
// status() and metrics() from any thread while the instance runs (the
// plugin allows them concurrently); stop_requested()/stop_request() from
// any thread.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/log.h"
#include "common/status.h"
#include "host/plugin_loader.h"
#include "strata/frontend.h"

namespace strata::host {

using PluginOptions = std::vector<std::pair<std::string, std::string>>;

// Every option the plugin declares, in the descriptor's order, with the
// value from `given` or else the declared default. A key the plugin does not
// declare, or a value that does not parse as its spec says, is EINVAL naming
// the plugin, the key and (for an unknown key) the options it takes.
Result<PluginOptions> resolve_plugin_options(const Plugin &p, const PluginOptions &given);

// True when plugin `p` declares an option named `key`.
bool plugin_declares_option(const Plugin &p, const std::string &key);

// What the plugin's host callbacks reach (frontend_host.cpp).
struct FrontendHostState;

// What a plugin asked for through request_stop.
struct StopRequest {
  int result = 0;      // 0: a normal end; a negative errno: a failure
  std::string reason;  // the plugin's one line ("" if it gave none)
};

class FrontendInstance {
 public:
  // Starts frontend plugin `p` (the caller checked its kind) on `cluster`,
  // connected, which must outlive the instance; `client` is the routine
  // table handed to the plugin. `options` come from resolve_plugin_options.
  // The plugin's log lines go to `log` under "frontend <name>". On failure
  // the plugin's message names what failed.
  static Result<std::unique_ptr<FrontendInstance>> start(const Plugin &p, strata_cluster_t cluster,
                                                         const strata_client_api *client,
                                                         const PluginOptions &options, Logger &log);
  // Stops the instance if stop() was not called (a failure is logged).
  ~FrontendInstance();
  FrontendInstance(const FrontendInstance &) = delete;
  FrontendInstance &operator=(const FrontendInstance &) = delete;

  // Calls the plugin's stop: returns once its threads are gone. Once; later
  // calls return OK without calling the plugin.
  Status stop();
  bool stopped() const { return stopped_; }

  // The plugin's status (STRATA_FRONTEND_STATUS_LINE or _JSON) and its
  // Prometheus metrics text. EINVAL once stopped.
  Result<std::string> status(uint32_t format) const;
  Result<std::string> metrics() const;

  // A file descriptor that becomes readable (and stays so) once the plugin
  // called request_stop, for poll() beside signals.
  int stop_request_fd() const;
  std::optional<StopRequest> stop_request() const;

  const std::string &name() const { return name_; }

 private:
  FrontendInstance() = default;
  Plugin plugin_;
  std::string name_;
  const strata_frontend_ops *ops_ = nullptr;
  // Reached through host_.ctx; allocated before start, so callbacks made
  // during start find it too.
  std::unique_ptr<FrontendHostState> state_;
  strata_frontend_host host_{};
  strata_frontend *fe_ = nullptr;
  bool stopped_ = true;
};

}  // namespace strata::host

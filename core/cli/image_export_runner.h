// Runs the rbd frontend plugin (an image over NBD or as one file over
// FUSE) for `strata nbd serve` and `strata image map`: in the foreground
// or, once serving, in the background, with a state file for the commands
// that stop it.
#pragma once

#include <string>

#include "cli/cmd_client_common.h"
#include "host/frontend_host.h"

namespace strata::cli {

struct ImageExportRun {
  std::string cmd;                  // "nbd serve", "image map": for messages
  CommonOptions common;             // --conf, --set (plugin options and client keys)...
  host::PluginOptions options;      // the plugin options the command set itself
  std::string state_kind, state_key;  // frontend_state_file(kind, key)
  bool background = false;
  bool print_ready_line = false;    // print the status line once serving (stdout)
  std::string ready_text;           // if set, printed instead of the status line
};

// The exit code: 0 once serving in the background, or after a clean stop
// in the foreground; 1 on failure; 2 on usage errors.
int run_image_export(const ImageExportRun &r);

// The rbd plugin's options, for --help.
void print_rbd_plugin_options(const CommonOptions &common);

}  // namespace strata::cli

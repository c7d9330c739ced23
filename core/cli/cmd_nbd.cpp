// `strata nbd serve POOL/NAME[@SNAP]` and `strata nbd stop`: an image
// exported over the NBD protocol by the rbd frontend plugin
// (docs/BLOCK.md), for qemu, nbdcopy, nbdfuse, fio's nbd engine or the
// kernel's nbd client.
#include <signal.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cli/background_frontend.h"
#include "cli/cmd_client_common.h"
#include "cli/commands.h"
#include "cli/image_export_runner.h"
#include "image_spec.h"

namespace strata::cli {

namespace {

const char *kServe = "nbd serve";
const char *kStop = "nbd stop";

const char *kUsage =
    "usage: strata nbd serve POOL/NAME[@SNAP] [--socket PATH | --listen HOST:PORT]\n"
    "                        [--read-only] [--export-name NAME] [--fork]\n"
    "                        [--set key=value]... [common options]\n"
    "       strata nbd stop (--socket PATH | --listen HOST:PORT) [--timeout SECONDS]\n"
    "  serve exports the image over NBD (fixed newstyle, structured replies, multi-conn,\n"
    "  base:allocation) until SIGINT/SIGTERM. A snapshot is exported read-only. A\n"
    "  read-write export holds the image's exclusive lock. Client URIs:\n"
    "  nbd+unix:///NAME?socket=PATH or nbd://HOST:PORT/NAME (NAME: --export-name,\n"
    "  default POOL/NAME; a client asking for the default export \"\" gets it too).\n"
    "  --socket PATH       listen on a Unix socket\n"
    "  --listen HOST:PORT  listen on TCP (default 127.0.0.1:10809 when neither is given)\n"
    "  --read-only         refuse writes; take no lock\n"
    "  --export-name NAME  the name clients ask for\n"
    "  --fork              go to the background once listening (prints the address);\n"
    "                      `strata nbd stop` with the same --socket/--listen ends it\n"
    "  --set key=value     an option of the rbd plugin (see below) or a client config key\n"
    "  stop sends SIGTERM to the server of that address and waits until it flushed and\n"
    "  exited (--timeout, default 60 s).\n"
    "  exit status: 0 served and stopped cleanly; 1 could not open or serve; 2 usage\n";

int usage(const std::string &cmd, const std::string &msg) {
  return usage_error(cmd, msg, kUsage);
}

// The state key of a server: its socket's absolute path, or "tcp:HOST:PORT".
std::string state_key(const std::string &socket, const std::string &listen) {
  return socket.empty() ? "tcp:" + listen : absolute_path(socket);
}

int serve(std::vector<std::string> args) {
  ArgList list(std::move(args));
  auto common = take_common_options(list);
  if (!common.ok()) return usage(kServe, common.status().message());
  auto socket = list.take("--socket");
  auto listen = list.take("--listen");
  auto export_name = list.take("--export-name");
  for (auto *r : {&socket, &listen, &export_name})
    if (!r->ok()) return usage(kServe, r->status().message());
  bool read_only = list.take_flag("--read-only");
  bool fork = list.take_flag("--fork");
  auto rest = list.positional();
  if (!rest.ok()) return usage(kServe, rest.status().message());
  if (common->help) {
    std::fputs(kUsage, stdout);
    std::fputs(common_options_help(), stdout);
    print_rbd_plugin_options(*common);
    return 0;
  }
  if (rest->size() != 1) return usage(kServe, "expected one POOL/NAME[@SNAP]");
  std::string why;
  auto spec = rbd::parse_image_spec(rest->front(), true, &why);
  if (!spec) return usage(kServe, why);
  if (*socket && *listen) return usage(kServe, "--socket and --listen exclude each other");

  ImageExportRun r;
  r.cmd = kServe;
  r.common = *common;
  r.options.emplace_back("image", spec->text());
  r.options.emplace_back("export", "nbd");
  std::string sock = *socket ? absolute_path(**socket) : "";
  std::string addr = *listen ? **listen : (*socket ? "" : "127.0.0.1:10809");
  if (!sock.empty()) r.options.emplace_back("socket", sock);
  if (!addr.empty()) r.options.emplace_back("listen", addr);
  if (read_only) r.options.emplace_back("read_only", "true");
  if (*export_name) r.options.emplace_back("export_name", **export_name);
  r.state_kind = "nbd";
  r.state_key = state_key(sock, addr);
  r.background = fork;
  r.print_ready_line = true;
  return run_image_export(r);
}

int stop(std::vector<std::string> args) {
  ArgList list(std::move(args));
  auto common = take_common_options(list);
  if (!common.ok()) return usage(kStop, common.status().message());
  auto socket = list.take("--socket");
  auto listen = list.take("--listen");
  for (auto *r : {&socket, &listen})
    if (!r->ok()) return usage(kStop, r->status().message());
  auto rest = list.positional();
  if (!rest.ok()) return usage(kStop, rest.status().message());
  if (common->help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (!rest->empty()) return usage(kStop, "unexpected argument '" + rest->front() + "'");
  if (bool(*socket) == bool(*listen)) return usage(kStop, "give --socket or --listen");
  uint32_t timeout_ms =
      common->timeout_ms == CommonOptions{}.timeout_ms ? 60000 : common->timeout_ms;
  std::string key = state_key(*socket ? **socket : "", *listen ? **listen : "");
  pid_t pid = read_frontend_state(frontend_state_file("nbd", key));
  if (pid == 0)
    return fail(kStop, Status::Error(ENOENT, "no `strata nbd serve --fork` serves " + key));
  if (::kill(pid, SIGTERM) != 0)
    return fail(kStop, Status::Error(errno, "cannot signal process " + std::to_string(pid)));
  if (!wait_process_exit(pid, timeout_ms))
    return fail(kStop, Status::Error(ETIMEDOUT, "the server of " + key + " (process " +
                                                    std::to_string(pid) +
                                                    ") did not exit in time"));
  return 0;
}

}  // namespace

int cmd_nbd(std::vector<std::string> args) {
  if (args.empty()) return usage("nbd", "missing command (serve, stop)");
  if (args[0] == "--help" || args[0] == "-h") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::string sub = args[0];
  args.erase(args.begin());
  if (sub == "serve") return serve(std::move(args));
  if (sub == "stop") return stop(std::move(args));
  return usage("nbd", "unknown command '" + sub + "'");
}

}  // namespace strata::cli

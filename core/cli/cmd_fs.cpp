// `strata fs new|ls|rm|status`: filesystems (docs/FILESYSTEM.md, "The fs
// map"), as monitor commands through the client library. The text is the
// monitor's; --format json prints its JSON.
#include <cstdio>

#include "cli/cmd_client_common.h"
#include "cli/commands.h"

namespace strata::cli {

namespace {

const char *kFsUsage =
    "usage: strata fs <command> [options]\n"
    "  new NAME [--metadata-pool P] [--data-pool P] [--pg-num N]\n"
    "                         make a filesystem; its pools NAME.meta and NAME.data are\n"
    "                         created unless given (the metadata pool gets fewer PGs)\n"
    "  ls                     filesystems with their pools and active MDS\n"
    "  rm NAME [--force]      remove a filesystem (refused while an MDS serves it unless\n"
    "                         --force); its pools and their objects are left\n"
    "  status [NAME]          filesystems, MDS daemons (address, state, incarnation) and\n"
    "                         the active MDS's figures from its last beacon\n";

using KV = std::vector<std::pair<std::string, std::string>>;

// Options and flags out of `args`; false with *rc set when the command
// should end (help or a usage error).
bool parse(const std::string &cmd, std::vector<std::string> args, size_t min_pos, size_t max_pos,
           const std::vector<std::string> &value_flags, const std::vector<std::string> &bool_flags,
           CommonOptions *opts, std::vector<std::string> *pos, KV *flags, int *rc) {
  ArgList list(std::move(args));
  auto o = take_common_options(list);
  if (!o.ok()) {
    *rc = usage_error(cmd, o.status().message(), kFsUsage);
    return false;
  }
  if (o->help) {
    std::fputs(kFsUsage, stdout);
    std::fputs(common_options_help(), stdout);
    *rc = 0;
    return false;
  }
  for (const std::string &f : value_flags) {
    auto v = list.take(f);
    if (!v.ok()) {
      *rc = usage_error(cmd, v.status().message(), kFsUsage);
      return false;
    }
    if (*v) flags->emplace_back(f, **v);
  }
  for (const std::string &f : bool_flags)
    if (list.take_flag(f)) flags->emplace_back(f, "1");
  auto p = list.positional();
  if (!p.ok()) {
    *rc = usage_error(cmd, p.status().message(), kFsUsage);
    return false;
  }
  if (p->size() < min_pos || p->size() > max_pos) {
    *rc = usage_error(cmd, "wrong number of arguments", kFsUsage);
    return false;
  }
  *opts = *o;
  *pos = *p;
  return true;
}

// "--metadata-pool" -> "metadata_pool".
std::string arg_key(const std::string &flag) {
  std::string key = flag.substr(2);
  for (char &c : key)
    if (c == '-') c = '_';
  return key;
}

}  // namespace

int cmd_fs(std::vector<std::string> args) {
  if (args.empty()) return usage_error("fs", "missing command", kFsUsage);
  if (args[0] == "--help" || args[0] == "-h") {
    std::fputs(kFsUsage, stdout);
    return 0;
  }
  std::string sub = args[0];
  args.erase(args.begin());
  const std::string cmd = "fs " + sub;
  size_t min_pos = 0, max_pos = 0;
  std::vector<std::string> value_flags, bool_flags;
  if (sub == "new") {
    min_pos = max_pos = 1;
    value_flags = {"--metadata-pool", "--data-pool", "--pg-num"};
  } else if (sub == "rm") {
    min_pos = max_pos = 1;
    bool_flags = {"--force"};
  } else if (sub == "status") {
    max_pos = 1;
  } else if (sub != "ls") {
    return usage_error("fs", "unknown command '" + sub + "'", kFsUsage);
  }
  CommonOptions opts;
  std::vector<std::string> pos;
  KV flags;
  int rc = 0;
  if (!parse(cmd, std::move(args), min_pos, max_pos, value_flags, bool_flags, &opts, &pos, &flags,
             &rc))
    return rc;
  KV a;
  if (!pos.empty()) a.emplace_back("name", pos[0]);
  for (const auto &[f, v] : flags) a.emplace_back(arg_key(f), v);
  auto s = Session::open(opts);
  if (!s.ok()) return fail(cmd, s.status());
  return (*s)->mon_command(cmd, a, opts.format);
}

}  // namespace strata::cli

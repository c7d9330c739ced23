// The layer every `strata` command goes through (command_registry.h).
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "cli/command_registry.h"
#include "cli/config_check.h"
#include "cli/output_format.h"
#include "common/config.h"
#include "common/config_lookup.h"
#include "strata/plugin.h"

namespace strata::cli {

namespace {

std::vector<std::string> words_of(const std::string &path) {
  std::vector<std::string> out;
  std::istringstream in(path);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

bool starts_with(const std::vector<std::string> &args, const std::vector<std::string> &words) {
  if (words.size() > args.size()) return false;
  for (size_t i = 0; i < words.size(); ++i)
    if (args[i] != words[i]) return false;
  return true;
}

bool wants_help(const std::vector<std::string> &args) {
  for (const std::string &a : args)
    if (a == "--help" || a == "-h") return true;
  return false;
}

// Every value of an option, in both "--flag V" and "--flag=V" forms.
std::vector<std::string> option_values(const std::vector<std::string> &args,
                                       const std::vector<std::string> &spellings) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i)
    for (const std::string &f : spellings) {
      if (args[i] == f && i + 1 < args.size()) out.push_back(args[i + 1]);
      else if (f.size() > 2 && args[i].rfind(f + "=", 0) == 0) out.push_back(args[i].substr(f.size() + 1));
    }
  return out;
}

// The commands one level below `prefix` ("" for the top level), with the
// names of their own subcommands.
std::string listing(const std::string &prefix) {
  std::vector<std::string> pre = words_of(prefix);
  std::string out;
  for (const Command &c : command_registry()) {
    std::vector<std::string> w = words_of(c.path);
    if (w.size() != pre.size() + 1 || !starts_with(w, pre)) continue;
    std::string subs;
    for (const Command &d : command_registry()) {
      std::vector<std::string> dw = words_of(d.path);
      if (dw.size() == w.size() + 1 && starts_with(dw, w)) subs += (subs.empty() ? "" : "|") + dw.back();
    }
    std::string name = w.back() + (subs.empty() ? "" : " " + subs);
    char line[512];
    std::snprintf(line, sizeof line, "  %-40s %s\n", name.c_str(), c.summary);
    out += line;
  }
  return out;
}

std::string top_usage() {
  return "usage: strata <command> [<subcommand>] [options]\n" + listing("") +
         "Every command takes --help, --config FILE (or --conf FILE), and, where it reports,\n"
         "--format text|json|json-pretty. `strata --version` prints the version and plugin ABI.\n"
         "Run `strata <command> --help` for its options.\n";
}

std::string group_usage(const std::string &prefix) {
  return "usage: strata " + prefix + " <command> [options]\n" + listing(prefix) +
         "Run `strata " + prefix + " <command> --help` for its options.\n";
}

int print_version() {
  std::printf("strata %s (plugin ABI %d.%d)\n", STRATA_VERSION, STRATA_ABI_MAJOR,
              STRATA_ABI_MINOR);
  return 0;
}

// The checks that do not depend on the command's own options: --format's
// spelling, and the config file it is going to read.
int shared_checks(const Command &c, const std::vector<std::string> &rest) {
  const std::string name = std::string("strata ") + c.path;
  for (const std::string &f : option_values(rest, {"--format"})) {
    if (!(c.traits & kReports)) {
      std::fprintf(stderr, "%s: this command offers no --format (it prints no report)\n",
                   name.c_str());
      return 2;
    }
    if (auto parsed = parse_output_format(f); !parsed.ok()) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), parsed.status().message().c_str());
      return 2;
    }
  }
  if (c.traits & kMakesOwnConfig) return 0;
  std::vector<std::string> named = option_values(rest, {"--config", "--conf", "-c"});
  ConfigLocation loc = locate_config(named.empty() ? "" : named.back());
  std::vector<std::string> sets;
  if (!(c.traits & kOwnSetKeys)) sets = option_values(rest, {"--set"});
  if (loc.path.empty() && sets.empty()) return 0;
  std::vector<std::string> plugin_path = option_values(rest, {"--plugin-path"});
  Status st = check_config(loc.path, sets, plugin_path.empty() ? "" : plugin_path.back());
  if (!st.ok()) {
    // Each problem names its file and line (or --set) already.
    std::fprintf(stderr, "%s: %s\n", name.c_str(), st.message().c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int run_cli(const std::vector<std::string> &args) {
  if (args.empty()) {
    std::fputs(top_usage().c_str(), stderr);
    return 2;
  }
  const std::string &first = args[0];
  if (first == "--version" || first == "-V" || first == "version") return print_version();
  if (first == "--help" || first == "-h") {
    std::fputs(top_usage().c_str(), stdout);
    return 0;
  }
  if (first == "help") {
    // `strata help pool ls` is `strata pool ls --help`.
    if (args.size() == 1) {
      std::fputs(top_usage().c_str(), stdout);
      return 0;
    }
    std::vector<std::string> again(args.begin() + 1, args.end());
    again.push_back("--help");
    return run_cli(again);
  }

  // The longest command path the arguments start with.
  const Command *cmd = nullptr;
  size_t matched = 0;
  for (const Command &c : command_registry()) {
    std::vector<std::string> w = words_of(c.path);
    if (c.run && w.size() > matched && starts_with(args, w)) {
      cmd = &c;
      matched = w.size();
    }
  }
  // The longest group the arguments start with (for `strata store`, `strata
  // bench objects nope`, ...).
  std::string group;
  size_t group_words = 0;
  for (const Command &c : command_registry()) {
    std::vector<std::string> w = words_of(c.path);
    if (!c.run && w.size() > group_words && starts_with(args, w)) {
      group = c.path;
      group_words = w.size();
    }
  }
  if (!cmd || group_words > matched) {
    if (group.empty()) {
      std::fprintf(stderr, "strata: unknown command '%s'\n%s", first.c_str(), top_usage().c_str());
      return 2;
    }
    if (wants_help(args)) {
      std::fputs(group_usage(group).c_str(), stdout);
      return 0;
    }
    std::string msg = args.size() > group_words && args[group_words][0] != '-'
                          ? "unknown command '" + args[group_words] + "'"
                          : "which command?";
    std::fprintf(stderr, "strata %s: %s\n%s", group.c_str(), msg.c_str(),
                 group_usage(group).c_str());
    return 2;
  }

  std::vector<std::string> rest(args.begin() + long(matched), args.end());
  std::vector<std::string> handler_args(args.begin() + 1, args.end());
  if (wants_help(rest)) {
    // The handler prints its own options, with the rest of the line (help
    // may depend on it: `frontend run --plugin X --help` lists X's
    // options); if the rest does not parse, help alone. The subcommands of
    // a command that is also a group (`strata osd`) follow.
    std::printf("strata %s: %s\n", cmd->path, cmd->summary);
    std::fflush(stdout);
    int rc = cmd->run(handler_args);
    if (rc != 0) {
      std::vector<std::string> help_args(args.begin() + 1, args.begin() + long(matched));
      help_args.push_back("--help");
      rc = cmd->run(help_args);
    }
    std::string subs = listing(cmd->path);
    if (!subs.empty()) std::printf("subcommands:\n%s", subs.c_str());
    return rc;
  }
  if (int rc = shared_checks(*cmd, rest); rc != 0) return rc;
  return cmd->run(handler_args);
}

}  // namespace strata::cli

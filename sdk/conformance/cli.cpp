// Parsing the kit's command line and narrowing Catch2's test selection.
#include "cli.h"

#include <cstring>

namespace strata::conformance {

const char kUsage[] =
    "usage: strata-conformance --kind backend|journal --plugin PATH [--dir SCRATCH]\n"
    "                          [--option key=value ...] [catch2 arguments]\n"
    "\n"
    "Runs the behavioural suite of a plugin kind against one plugin file, loaded\n"
    "and checked exactly as the Strata host loads it.\n"
    "  --kind     which suite: backend (object stores) or journal (journal media)\n"
    "  --plugin   the plugin's shared object (libstrata_<kind>_<name>.so)\n"
    "  --dir      where instances are created, one fresh subdirectory per test\n"
    "             (default: a temporary directory removed at exit); point it at\n"
    "             the file system the plugin needs (e.g. an XFS mount)\n"
    "  --option   a plugin option, as in the plugin's config section; repeatable\n"
    "Catch2 arguments select and report tests, e.g. a test name, -s, -r junit,\n"
    "--list-test-names-only (lists without loading a plugin).\n";

std::optional<CommandLine> parse_command_line(int argc, char **argv, std::string *error) {
  CommandLine cl;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string *target = nullptr;
    bool is_option = false;
    for (const char *name : {"--kind", "--plugin", "--dir", "--option"}) {
      size_t n = std::strlen(name);
      if (arg.compare(0, n, name) != 0 || (arg.size() > n && arg[n] != '=')) continue;
      std::string value;
      if (arg.size() > n) {
        value = arg.substr(n + 1);
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        *error = std::string(name) + " needs a value";
        return std::nullopt;
      }
      if (std::strcmp(name, "--option") == 0) {
        size_t eq = value.find('=');
        if (eq == std::string::npos || eq == 0) {
          *error = "--option expects key=value, got '" + value + "'";
          return std::nullopt;
        }
        cl.options.emplace_back(value.substr(0, eq), value.substr(eq + 1));
        is_option = true;
      } else {
        target = std::strcmp(name, "--kind") == 0     ? &cl.kind
                 : std::strcmp(name, "--plugin") == 0 ? &cl.plugin
                                                      : &cl.dir;
        *target = value;
      }
      break;
    }
    if (!target && !is_option) cl.catch_args.push_back(arg);
  }
  if (!cl.kind.empty() && cl.kind != "backend" && cl.kind != "journal") {
    *error = "--kind must be backend or journal, got '" + cl.kind + "'";
    return std::nullopt;
  }
  return cl;
}

std::string restrict_to_tag(const std::string &spec, const std::string &tag) {
  // Catch2 splits alternatives at unescaped commas; a backslash escapes the
  // next character (test names with ',' or '[' arrive escaped that way).
  std::string out;
  bool escaped = false;
  for (char c : spec) {
    if (escaped) {
      escaped = false;
    } else if (c == '\\') {
      escaped = true;
    } else if (c == ',') {
      out += tag;
    }
    out += c;
  }
  return out + tag;
}

}  // namespace strata::conformance

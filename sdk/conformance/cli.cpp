// Parsing the kit's command line and narrowing Catch2's test selection.
#include "cli.h"

#include <cstring>

namespace strata::conformance {

const char kUsage[] =
    "usage: strata-conformance --kind backend|journal|placement --plugin PATH\n"
    "                          [--dir SCRATCH] [--option key=value ...]\n"
    "                          [--format text|json] [catch2 arguments]\n"
    "       strata-conformance --help | --version\n"
    "\n"
    "Runs the behavioural suite of a plugin kind against one plugin file, loaded\n"
    "and checked exactly as the Strata host loads it.\n"
    "  --kind     which suite: backend (object stores), journal (journal media)\n"
    "             or placement (placement algorithms)\n"
    "  --plugin   the plugin's shared object (libstrata_<kind>_<name>.so)\n"
    "  --dir      where instances are created, one fresh subdirectory per test\n"
    "             (default: a temporary directory removed at exit); point it at\n"
    "             the file system the plugin needs (e.g. an XFS mount)\n"
    "  --option   a plugin option, as in the plugin's config section; repeatable\n"
    "  --format   the summary: text (default), or json: one JSON object on\n"
    "             stdout (Catch2's report of each case goes to stderr)\n"
    "  --version  the kit's version and the plugin ABI it was built for\n"
    "Catch2 arguments select and report tests, e.g. a test name, -s, -r junit,\n"
    "--list-test-names-only (lists without loading a plugin).\n"
    "\n"
    "Exit status:\n"
    "  0  every selected test case passed (also --help, --version, listings)\n"
    "  1  the plugin loaded, and at least one test case failed or crashed\n"
    "  2  usage error: a malformed command line, or a selection matching no test\n"
    "  3  the plugin was refused: it would not load (not found, not a plugin,\n"
    "     another ABI major, a newer minor, a missing entry symbol or function,\n"
    "     the wrong kind) or its --option values were refused\n"
    "\n"
    "More in share/doc/strata-conformance/README.md under the SDK's prefix.\n";

std::string version_line() {
  return std::string("strata-conformance ") + STRATA_KIT_VERSION + " (plugin ABI " +
         std::to_string(STRATA_ABI_MAJOR) + "." + std::to_string(STRATA_ABI_MINOR) + ")";
}

std::optional<CommandLine> parse_command_line(int argc, char **argv, std::string *error) {
  CommandLine cl;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string *target = nullptr;
    bool is_option = false;
    if (arg == "--version") {
      cl.version = true;
      continue;
    }
    if (arg == "--help" || arg == "-h" || arg == "-?") cl.help = true;  // Catch2 lists its own too
    for (const char *name : {"--kind", "--plugin", "--dir", "--option", "--format"}) {
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
                 : std::strcmp(name, "--format") == 0 ? &cl.format
                                                      : &cl.dir;
        *target = value;
      }
      break;
    }
    if (!target && !is_option) cl.catch_args.push_back(arg);
  }
  if (!cl.kind.empty() && cl.kind != "backend" && cl.kind != "journal" && cl.kind != "placement") {
    *error = "--kind must be backend, journal or placement, got '" + cl.kind + "'";
    return std::nullopt;
  }
  if (cl.format != "text" && cl.format != "json") {
    *error = "--format must be text or json, got '" + cl.format + "'";
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

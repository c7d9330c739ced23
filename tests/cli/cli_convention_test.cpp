// The command-line convention, for every command the registry lists (so a
// new command is covered without being named here).
#include <catch2/catch.hpp>

#include <set>

#include "cli_run.h"

using cli_test::registry;
using cli_test::run_strata;

namespace {

bool contains(const std::string &haystack, const std::string &needle) {
  return haystack.find(needle) != std::string::npos;
}

// "bench objects write" -> {"bench", "bench objects"}.
std::set<std::string> groups_of(const std::vector<cli_test::CommandInfo> &cmds) {
  std::set<std::string> out;
  for (const auto &c : cmds)
    for (size_t sp = c.path.find(' '); sp != std::string::npos; sp = c.path.find(' ', sp + 1))
      out.insert(c.path.substr(0, sp));
  return out;
}

}  // namespace

TEST_CASE("the registry lists the commands the convention is checked on") {
  auto cmds = registry();
  std::set<std::string> paths;
  for (const auto &c : cmds) paths.insert(c.path);
  for (const char *p : {"plugins list", "store fsck", "store dump", "store bench", "placement test",
                        "placement diff", "status", "osd tree", "pool ls", "bench objects write",
                        "mon", "osd", "up"})
    CHECK(paths.count(p) == 1);
}

TEST_CASE("help exits 0 and prints the command's usage to stdout, for every command") {
  std::set<std::string> short_form_checked;  // -h once per top-level command keeps this fast
  for (const auto &c : registry()) {
    INFO("strata " << c.path << " --help");
    auto o = run_strata(c.path + " --help");
    CHECK(o.rc == 0);
    CHECK(contains(o.out, "strata " + c.path));
    CHECK(o.out.size() > c.path.size() + 40);  // more than the header line
    if (short_form_checked.insert(c.path.substr(0, c.path.find(' '))).second) {
      auto h = run_strata(c.path + " -h");
      CHECK(h.rc == 0);
      CHECK(h.out == o.out);
    }
  }
}

TEST_CASE("help on a command group lists its commands and exits 0, a bare group exits 2") {
  auto cmds = registry();
  for (const std::string &g : groups_of(cmds)) {
    INFO("strata " << g << " --help");
    auto o = run_strata(g + " --help");
    CHECK(o.rc == 0);
    for (const auto &c : cmds)
      if (c.path.rfind(g + " ", 0) == 0) {
        std::string next = c.path.substr(g.size() + 1);
        next = next.substr(0, next.find(' '));
        CHECK(contains(o.out, next));
      }
    auto bare = run_strata(g);
    if (g != "osd") {  // `strata osd` is also the daemon, which wants --id
      CHECK(bare.rc == 2);
      CHECK(contains(bare.err, "strata " + g));
    }
    auto nope = run_strata(g + " no-such-command");
    CHECK(nope.rc == 2);
    CHECK(contains(nope.err, "no-such-command"));
  }
  auto top = run_strata("--help");
  CHECK(top.rc == 0);
  for (const auto &c : cmds) CHECK(contains(top.out, c.path.substr(0, c.path.find(' '))));
  CHECK(run_strata("help pool ls").out == run_strata("pool ls --help").out);
}

TEST_CASE("an unknown option fails naming the option and the command") {
  for (const auto &c : registry()) {
    INFO("strata " << c.path << " --no-such-option");
    auto o = run_strata(c.path + " --no-such-option");
    CHECK(o.rc == 2);
    CHECK(contains(o.err, "--no-such-option"));
    CHECK(contains(o.err, "strata " + c.path));
  }
}

TEST_CASE("the output format has one spelling: reporting commands reject other names, the rest reject it") {
  for (const auto &c : registry()) {
    INFO("strata " << c.path << " --format ...");
    if (c.reports) {
      auto o = run_strata(c.path + " --format yaml");
      CHECK(o.rc == 2);
      CHECK(contains(o.err, "'yaml'"));
      CHECK(contains(o.err, "text, json or json-pretty"));
    } else {
      auto o = run_strata(c.path + " --format json");
      CHECK(o.rc == 2);
      CHECK(contains(o.err, "--format"));
    }
  }
}

TEST_CASE("strata --version prints the version and the plugin ABI") {
  CHECK(run_strata("plugins list --format=plain").rc == 2);  // "plain" is not a spelling
  auto o = run_strata("--version");
  CHECK(o.rc == 0);
  CHECK(contains(o.out, "strata "));
  CHECK(contains(o.out, "plugin ABI 1."));
  CHECK(run_strata("version").out == o.out);
}

TEST_CASE("a cluster command with no config found says so, where it looked and how to point at one") {
  for (const auto &c : registry()) {
    if (!c.needs_cluster || c.path != "status") continue;
    auto o = run_strata(c.path + " --timeout 2");
    CHECK(o.rc == 1);
    CHECK(contains(o.err, "no config file found"));
    CHECK(contains(o.err, "STRATA_CONF"));
    CHECK(contains(o.err, "--conf FILE"));
    CHECK_FALSE(contains(o.err, "no keyring configured"));
  }
}

TEST_CASE("every command checks its config: an unknown key names file, line, key and a suggestion") {
  std::string conf = cli_test::write_file("typo.conf", "[global]\n\n[osd]\njournal_sise = 1G\n");
  bool use_config = false;  // the two spellings take turns
  for (const auto &c : registry()) {
    if (!c.checks_config) continue;
    const char *flag = (use_config = !use_config) ? "--config" : "--conf";
    INFO("strata " << c.path << " " << flag);
    auto o = run_strata(c.path + " " + flag + " " + conf);
    CHECK(o.rc == 1);
    CHECK(contains(o.err, conf + ":4"));
    CHECK(contains(o.err, "journal_sise"));
    CHECK(contains(o.err, "did you mean 'journal_size'"));
  }
  auto env = run_strata("plugins list", "STRATA_CONF=" + conf);
  CHECK(env.rc == 1);
  CHECK(contains(env.err, conf + ":4"));
  auto set = run_strata("plugins list --set lg_level=info");
  CHECK(set.rc == 1);
  CHECK(contains(set.err, "--set: unknown option 'lg_level'"));
}

TEST_CASE("a bad log level in the config names the file and line") {
  std::string conf = cli_test::write_file("loud.conf", "[global]\nlog_level = loud\n");
  for (const char *cmd : {"plugins list", "status", "store fsck --dir /nonexistent", "mon"}) {
    INFO(cmd);
    auto o = run_strata(std::string(cmd) + " --conf " + conf);
    CHECK(o.rc == 1);
    CHECK(contains(o.err, conf + ":2"));
    CHECK(contains(o.err, "'loud'"));
  }
}

// strata-conformance: loads one plugin with the host's loader and runs the
// Catch2 suite of its kind against it. See kUsage (cli.cpp).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "cli.h"
#include "isolated_run.h"
#include "kit_state.h"

namespace sc = strata::conformance;

namespace {

// The kit's own refusals exit with 2, distinct from Catch2's failure count.
constexpr int kUsageError = 2;

void log_to_kit(void *ctx, int level, const char *msg) {
  static_cast<sc::HostLog *>(ctx)->add(level, msg);
}

bool is_listing(const Catch::ConfigData &d) {
  return d.listTests || d.listTestNamesOnly || d.listTags || d.listReporters || d.showHelp;
}

// The --dir given, or a new temporary directory the kit removes at exit.
bool prepare_scratch(const std::string &given, sc::KitState &state, std::string *error) {
  std::error_code ec;
  if (!given.empty()) {
    std::filesystem::create_directories(given, ec);
    if (ec) {
      *error = "cannot use --dir " + given + ": " + ec.message();
      return false;
    }
    state.scratch_dir = std::filesystem::absolute(given).string();
    return true;
  }
  const char *tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/strata-conformance-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) {
    *error = "cannot create a scratch directory from " + templ;
    return false;
  }
  state.scratch_dir = buf.data();
  state.remove_scratch_at_exit = true;
  return true;
}

}  // namespace

int main(int argc, char **argv) {
  std::string error;
  std::optional<sc::CommandLine> cl = sc::parse_command_line(argc, argv, &error);
  if (!cl) {
    std::fprintf(stderr, "strata-conformance: %s\n%s", error.c_str(), sc::kUsage);
    return kUsageError;
  }

  Catch::Session session;
  std::vector<const char *> catch_argv = {argv[0]};
  for (const std::string &a : cl->catch_args) catch_argv.push_back(a.c_str());
  bool wants_help = false;
  for (const std::string &a : cl->catch_args)
    wants_help = wants_help || a == "-h" || a == "-?" || a == "--help";
  if (wants_help) std::fputs(sc::kUsage, stdout);
  if (int rc = session.applyCommandLine(static_cast<int>(catch_argv.size()), catch_argv.data()))
    return rc;

  // Only the chosen kind's tests run, also when tests are named explicitly.
  Catch::ConfigData &data = session.configData();
  if (!cl->kind.empty()) {
    std::string tag = "[" + cl->kind + "]";
    if (data.testsOrTags.empty())
      data.testsOrTags.push_back(tag);
    else
      for (std::string &spec : data.testsOrTags) spec = sc::restrict_to_tag(spec, tag);
  }
  // Listing needs no plugin, so ctest's test discovery works at build time.
  if (is_listing(data) && cl->plugin.empty()) return session.run();
  // A test name that matches nothing (renamed, or of the other kind) must
  // not pass silently.
  data.warnings = static_cast<Catch::WarnAbout::What>(data.warnings | Catch::WarnAbout::NoTests);

  if (cl->kind.empty() || cl->plugin.empty()) {
    std::fprintf(stderr, "strata-conformance: --kind and --plugin are required\n%s", sc::kUsage);
    return kUsageError;
  }

  sc::KitState state;
  state.kind = cl->kind;
  strata::Result<strata::host::Plugin> loaded =
      strata::host::load_plugin(cl->plugin, strata::host::kind_from_name(cl->kind));
  if (!loaded.ok()) {
    std::fprintf(stderr, "strata-conformance: %s\n", loaded.status().message().c_str());
    return kUsageError;
  }
  state.plugin = loaded.value();
  if (!sc::resolve_options(state.plugin.descriptor(), cl->options, state, &error) ||
      !prepare_scratch(cl->dir, state, &error)) {
    std::fprintf(stderr, "strata-conformance: %s\n", error.c_str());
    return kUsageError;
  }
  state.services.struct_size = sizeof state.services;
  state.services.ctx = &state.log;
  state.services.log = log_to_kit;
  sc::install(&state);

  // Listing runs no plugin code; everything else runs case by case in
  // children, so that a plugin that crashes fails one case, not the kit.
  int failed = 0;
  std::vector<std::string> names;
  if (!is_listing(data)) {
    Catch::Config &config = session.config();
    for (const Catch::TestCase &tc :
         Catch::filterTests(Catch::getAllTestCasesSorted(config), config.testSpec(), config))
      names.push_back(tc.name);
  }
  if (names.empty()) {
    failed = session.run();  // listing, or nothing matched (Catch2 says so)
  } else {
    Catch::ConfigData base = session.configData();
    failed = sc::run_each_case_in_child(
        names,
        [&](const std::string &name) {
          Catch::ConfigData one = base;
          one.testsOrTags = {sc::exact_test_spec(name)};
          session.useConfigData(one);
          return session.run();
        },
        base.abortAfter);
  }

  sc::install(nullptr);
  if (state.remove_scratch_at_exit) {
    std::error_code ec;
    std::filesystem::remove_all(state.scratch_dir, ec);
  }
  return failed;
}

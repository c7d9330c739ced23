// strata-conformance: loads one plugin with the host's loader and runs the
// Catch2 suite of its kind against it. See kUsage (cli.cpp) for the
// command line and exit_codes.h for what the exit status means.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "cli.h"
#include "common/json.h"
#include "exit_codes.h"
#include "isolated_run.h"
#include "kit_state.h"

namespace sc = strata::conformance;

namespace {

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

// The one document --format json prints on stdout for a run that got as far
// as loading the plugin.
strata::json::Value report_head(const sc::CommandLine &cl, const char *result, int exit_code) {
  return strata::json::Object{{"kit", sc::version_line()},
                              {"kind", cl.kind},
                              {"plugin", cl.plugin},
                              {"result", result},
                              {"exit_code", exit_code}};
}

int refuse_plugin(const sc::CommandLine &cl, const std::string &message) {
  std::fprintf(stderr, "strata-conformance: %s\n", message.c_str());
  if (cl.format == "json") {
    strata::json::Value doc = report_head(cl, "refused", sc::kExitPluginRefused);
    doc.set("message", message);
    std::printf("%s\n", doc.dump().c_str());
  }
  return sc::kExitPluginRefused;
}

}  // namespace

int main(int argc, char **argv) {
  std::string error;
  std::optional<sc::CommandLine> cl = sc::parse_command_line(argc, argv, &error);
  if (!cl) {
    std::fprintf(stderr, "strata-conformance: %s\n%s", error.c_str(), sc::kUsage);
    return sc::kExitUsageError;
  }
  if (cl->version) {
    std::printf("%s\n", sc::version_line().c_str());
    return sc::kExitPassed;
  }
  if (cl->help) {
    // The kit's usage, then Catch2's own options (it prints them below).
    std::fputs(sc::kUsage, stdout);
    std::fputs("\nCatch2 options:\n", stdout);
  }

  Catch::Session session;
  std::vector<const char *> catch_argv = {argv[0]};
  for (const std::string &a : cl->catch_args) catch_argv.push_back(a.c_str());
  if (session.applyCommandLine(static_cast<int>(catch_argv.size()), catch_argv.data()) != 0)
    return sc::kExitUsageError;  // Catch2 said what it did not understand
  if (cl->help) return session.run() == 0 ? sc::kExitPassed : sc::kExitUsageError;

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
  if (is_listing(data) && cl->plugin.empty())
    return session.run() == 0 ? sc::kExitPassed : sc::kExitUsageError;
  // A test name that matches nothing (renamed, or of the other kind) must
  // not pass silently.
  data.warnings = static_cast<Catch::WarnAbout::What>(data.warnings | Catch::WarnAbout::NoTests);

  if (cl->kind.empty() || cl->plugin.empty()) {
    std::fprintf(stderr, "strata-conformance: --kind and --plugin are required\n%s", sc::kUsage);
    return sc::kExitUsageError;
  }

  sc::KitState state;
  state.kind = cl->kind;
  strata::Result<strata::host::Plugin> loaded =
      strata::host::load_plugin(cl->plugin, strata::host::kind_from_name(cl->kind));
  if (!loaded.ok()) return refuse_plugin(*cl, loaded.status().message());
  state.plugin = loaded.value();
  if (!sc::resolve_options(state.plugin.descriptor(), cl->options, state, &error))
    return refuse_plugin(*cl, error);
  if (!prepare_scratch(cl->dir, state, &error)) {
    std::fprintf(stderr, "strata-conformance: %s\n", error.c_str());
    return sc::kExitUsageError;
  }
  state.services.struct_size = sizeof state.services;
  state.services.ctx = &state.log;
  state.services.log = log_to_kit;
  sc::install(&state);

  // Listing runs no plugin code; everything else runs case by case in
  // children, so that a plugin that crashes fails one case, not the kit.
  std::vector<std::string> names;
  if (!is_listing(data)) {
    Catch::Config &config = session.config();
    for (const Catch::TestCase &tc :
         Catch::filterTests(Catch::getAllTestCasesSorted(config), config.testSpec(), config))
      names.push_back(tc.name);
  }
  int rc = sc::kExitPassed;
  if (is_listing(data)) {
    rc = session.run() == 0 ? sc::kExitPassed : sc::kExitUsageError;
  } else if (names.empty()) {
    session.run();  // Catch2 says that nothing matched
    rc = sc::kExitUsageError;
  } else {
    const bool json = cl->format == "json";
    Catch::ConfigData base = session.configData();
    std::vector<sc::CaseResult> results = sc::run_each_case_in_child(
        names,
        [&](const std::string &name) {
          Catch::ConfigData one = base;
          one.testsOrTags = {sc::exact_test_spec(name)};
          session.useConfigData(one);
          return session.run();
        },
        base.abortAfter, json ? stderr : stdout, json);
    bool passed = sc::count_outcome(results, sc::Outcome::kPassed) == names.size();
    rc = passed ? sc::kExitPassed : sc::kExitCasesFailed;
    if (json) {
      strata::json::Value doc = report_head(*cl, passed ? "passed" : "failed", rc);
      strata::json::Value summary = sc::json_summary(results, names.size());
      for (const auto &[key, value] : summary.as_object()) doc.set(key, value);
      std::printf("%s\n", doc.dump().c_str());
    } else {
      sc::print_text_summary(stdout, results, names.size());
    }
  }

  sc::install(nullptr);
  if (state.remove_scratch_at_exit) {
    std::error_code ec;
    std::filesystem::remove_all(state.scratch_dir, ec);
  }
  return rc;
}

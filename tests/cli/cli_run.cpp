#include "cli_run.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace cli_test {

namespace {

std::string slurp(const std::string &path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct Scratch {
  std::string dir;
  Scratch() {
    char tmpl[] = "/tmp/strata-cli-test-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    dir = tmpl;
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

}  // namespace

const std::string &scratch_dir() {
  static Scratch s;
  return s.dir;
}

Outcome run_strata(const std::string &args, const std::string &env) {
  const std::string &d = scratch_dir();
  std::string cmd = "cd '" + d + "' && env -u STRATA_CONF " + env + " " STRATA_BIN " " + args +
                    " >'" + d + "/.out' 2>'" + d + "/.err' </dev/null";
  int status = std::system(cmd.c_str());
  Outcome o;
  o.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.out = slurp(d + "/.out");
  o.err = slurp(d + "/.err");
  return o;
}

std::string write_file(const std::string &name, const std::string &text) {
  std::string path = scratch_dir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::vector<CommandInfo> registry() {
  Outcome o = run_strata("commands --format json");
  if (o.rc != 0) throw std::runtime_error("strata commands failed: " + o.err);
  auto v = strata::json::parse(o.out);
  if (!v.ok()) throw std::runtime_error("strata commands printed no JSON: " + o.out);
  std::vector<CommandInfo> out;
  for (const auto &row : v->as_array()) {
    CommandInfo c;
    c.path = row["command"].as_string();
    c.reports = !row["formats"].as_array().empty();
    c.needs_cluster = row["needs_cluster"].as_bool();
    c.checks_config = row["checks_config"].as_bool();
    out.push_back(c);
  }
  return out;
}

}  // namespace cli_test

// main() of the store and crash test binaries: Catch2 with two extra options,
//   --pair BACKEND[-ENGINE]+JOURNAL   the backend x journal pair under test
//   --root DIR                        where to make stores
// (ctest passes both; see tests/support/StrataStoreTests.cmake), and the child
// modes of child_process.h ("--child MODE ARGS...").
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "child_process.h"
#include "test_env.h"

int main(int argc, char **argv) {
  int code = 0;
  if (strata::testing::run_child_mode(argc, argv, &code)) return code;

  Catch::Session session;
  std::string pair, root;
  using namespace Catch::clara;
  auto cli = session.cli() |
             Opt(pair, "backend+journal")["--pair"]("backend x journal pair under test") |
             Opt(root, "dir")["--root"]("directory to make test stores in");
  session.cli(cli);
  int rc = session.applyCommandLine(argc, argv);
  if (rc != 0) return rc;
  strata::testing::set_test_pair(pair);
  strata::testing::set_test_root(root);
  return session.run();
}

// The store tests' main: a crash test's child (a writer through the store,
// killed with SIGKILL) runs the same binary in a child mode.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "child_process.h"

int main(int argc, char **argv) {
  int code = 0;
  if (strata::testing::run_child_mode(argc, argv, &code)) return code;
  return Catch::Session().run(argc, argv);
}

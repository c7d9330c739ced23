// strata-placement-dev ARGS... == strata placement ARGS...
#include <vector>

#include "cli/cmd_placement.h"

int main(int argc, char **argv) {
  std::vector<char *> args(argv, argv + argc);
  static char name[] = "placement";
  args[0] = name;
  return cmd_placement(argc, args.data());
}

// `strata`: one binary, one subcommand per job (command_table.cpp lists
// them; cli_main.cpp is what they share).
#include <string>
#include <vector>

#include "cli/command_registry.h"

int main(int argc, char **argv) {
  return strata::cli::run_cli(std::vector<std::string>(argv + 1, argv + argc));
}

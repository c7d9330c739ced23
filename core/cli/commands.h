// Entry points of the `strata` subcommands. Each takes the arguments after
// its own name and returns the process exit code.
#pragma once

#include <string>
#include <vector>

namespace strata::cli {

int cmd_plugins(std::vector<std::string> args);
int cmd_store(std::vector<std::string> args);
int cmd_store_bench(std::vector<std::string> args);  // `strata store bench`

}  // namespace strata::cli

// Turning the config (file + --set) into what the store needs: validated
// mkfs parameters and runtime settings. Shared by `strata store ...`
// subcommands and, later, `strata osd`.
#pragma once

#include <string>

#include "cli/cli_context.h"
#include "store/store.h"

namespace strata::cli {

// backend/journal/journal_path/journal_size and plugin options from the
// config for ctx.entity; validates every key against the core options and
// the chosen plugins' declared options.
Result<store::MkfsParams> mkfs_params_from_config(const CliContext &ctx, const std::string &dir);

// checkpoint/throttle/staging settings; validates against core options and
// the options of the plugins the store at `dir` was made with.
Result<store::StoreSettings> settings_from_config(const CliContext &ctx, const std::string &dir);

// The store directory: --dir, else `store_dir` from the config.
Result<std::string> store_dir(const CliContext &ctx, const std::string &flag);

}  // namespace strata::cli

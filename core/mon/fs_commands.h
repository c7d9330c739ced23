// The monitor's filesystem commands (docs/FILESYSTEM.md, "The fs map"), in
// the form of mon_commands.h:
//   fs new     name [metadata_pool] [data_pool] [pg_num]
//                   makes pools name.meta / name.data when not given
//   fs rm      name [force]      refuses while an MDS is replay/active for
//                                it unless force=1; leaves the pools
//   fs ls
//   fs status  [name]            filesystems, MDS daemons, the active MDS's
//                                figures from its last beacon
#pragma once

#include "mon/mon_commands.h"

namespace strata::mon {

// Whether `prefix` is one of the commands above.
bool is_fs_command(const std::string &prefix);

CommandReply run_fs_command(const CommandRequest &req, const CommandState &st,
                            CommandEffect *effect);

}  // namespace strata::mon

// Entry points of the `strata` subcommands. Each takes the arguments after
// its own name and returns the process exit code.
#pragma once

#include <string>
#include <vector>

namespace strata::cli {

int cmd_plugins(std::vector<std::string> args);
int cmd_store(std::vector<std::string> args);
int cmd_store_bench(std::vector<std::string> args);  // `strata store bench`

// Daemons and the local cluster (cmd_mon.cpp, cmd_osd.cpp, cmd_up.cpp).
int cmd_mon(std::vector<std::string> args);   // `strata mon --conf F [--mkfs]`
int cmd_osd(std::vector<std::string> args);   // `strata osd --id N --conf F [--mkfs]`
int cmd_up(std::vector<std::string> args);    // `strata up --dir D ...`
int cmd_down(std::vector<std::string> args);  // `strata down --dir D`
int cmd_mds(std::vector<std::string> args);   // `strata mds --id NAME --conf F` (cmd_mds.cpp)

// Talking to a running cluster through the client library (cmd_client.cpp).
int cmd_status(std::vector<std::string> args);     // `strata status`
int cmd_osd_admin(std::vector<std::string> args);  // `strata osd tree|ls|out|in|down|reweight`
int cmd_pool(std::vector<std::string> args);       // `strata pool ls|create|rm|set|get`
int cmd_object(std::vector<std::string> args);     // `strata object put|get|ls|rm|stat`
int cmd_fs_check(std::vector<std::string> args);   // `strata fs check` (core/mds/fs_check.h)
int cmd_bench(std::vector<std::string> args);      // `strata bench objects write|seq|rand`
int cmd_pg(std::vector<std::string> args);         // `strata pg ls|scrub|repair`
int cmd_auth(std::vector<std::string> args);       // `strata auth ls|add|rm`
int cmd_fs(std::vector<std::string> args);         // `strata fs new|ls|rm|status` (cmd_fs.cpp)

// Running a frontend plugin on a cluster connection (cmd_frontend.cpp).
int cmd_frontend(std::vector<std::string> args);  // `strata frontend run --plugin NAME`

// The filesystem through the fuse frontend (cmd_mount.cpp).
int cmd_mount(std::vector<std::string> args);   // `strata mount MOUNTPOINT --fs NAME`
int cmd_umount(std::vector<std::string> args);  // `strata umount MOUNTPOINT`

// Block images through the rbd frontend (cmd_image.cpp, cmd_image_map.cpp,
// cmd_nbd.cpp).
int cmd_image(std::vector<std::string> args);        // `strata image create|ls|info|...`
int cmd_image_map(std::vector<std::string> args);    // `strata image map POOL/NAME --at DIR`
int cmd_image_unmap(std::vector<std::string> args);  // `strata image unmap DIR`
int cmd_nbd(std::vector<std::string> args);          // `strata nbd serve|stop`

}  // namespace strata::cli

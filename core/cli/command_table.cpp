// The table of `strata` commands (see command_registry.h).
#include <cstdio>

#include "cli/cmd_placement.h"
#include "cli/command_registry.h"
#include "cli/commands.h"
#include "cli/output_format.h"
#include "common/json.h"

namespace strata::cli {

namespace {

// `strata placement` parses argc/argv with argv[0] its own name.
int placement(std::vector<std::string> args) {
  std::vector<std::string> words = {"placement"};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char *> argv;
  for (std::string &w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  return cmd_placement(int(words.size()), argv.data());
}

const char *kCommandsUsage =
    "usage: strata commands [--format text|json|json-pretty]\n"
    "  Every command and subcommand with its summary and whether it offers --format.\n";

int commands(std::vector<std::string> args) {
  OutputFormat f = OutputFormat::kText;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--help" || args[i] == "-h") {
      std::fputs(kCommandsUsage, stdout);
      return 0;
    }
    std::string value;
    if (args[i] == "--format" && i + 1 < args.size()) value = args[++i];
    else if (args[i].rfind("--format=", 0) == 0) value = args[i].substr(9);
    else {
      std::fprintf(stderr, "strata commands: unknown option '%s'\n%s", args[i].c_str(),
                   kCommandsUsage);
      return 2;
    }
    auto parsed = parse_output_format(value);
    if (!parsed.ok()) {
      std::fprintf(stderr, "strata commands: %s\n", parsed.status().message().c_str());
      return 2;
    }
    f = *parsed;
  }
  json::Value list{json::Array{}};
  for (const Command &c : command_registry()) {
    if (!c.run) continue;
    if (f == OutputFormat::kText) {
      std::printf("%-28s %s%s\n", c.path, c.summary, c.traits & kReports ? " [--format]" : "");
      continue;
    }
    json::Value formats{json::Array{}};
    if (c.traits & kReports)
      for (const char *name : {"text", "json", "json-pretty"}) formats.push(name);
    json::Value row{json::Object{}};
    row.set("command", c.path);
    row.set("summary", c.summary);
    row.set("formats", formats);
    row.set("needs_cluster", bool(c.traits & kNeedsCluster));
    row.set("checks_config", !(c.traits & kMakesOwnConfig));
    list.push(row);
  }
  if (f != OutputFormat::kText) print_json(list.dump(), f);
  return 0;
}

}  // namespace

const std::vector<Command> &command_registry() {
  static const std::vector<Command> table = {
      {"commands", "every command, with whether it offers --format", commands, kReports},
      {"plugins", "the plugins on the plugin path", nullptr, kNoTraits},
      {"plugins list", "every plugin on the plugin path (kind, name, version, ABI), and refusals",
       cmd_plugins, kReports},
      {"store", "one object store, offline", nullptr, kNoTraits},
      {"store mkfs", "make an object store (backend + journal) in a directory", cmd_store,
       kNoTraits},
      {"store fsck", "replay the journal and check the backend's structures", cmd_store, kReports},
      {"store dump", "list the collections and objects a store holds", cmd_store, kReports},
      {"store journal-swap", "move a store's journal to other media", cmd_store, kNoTraits},
      {"store bench", "object-store figures next to fio baselines", cmd_store, kReports},
      {"placement", "make, convert and check placement maps", nullptr, kNoTraits},
      {"placement build", "a map of hosts x devices, or any hierarchy", placement, kNoTraits},
      {"placement compile", "text map -> binary", placement, kNoTraits},
      {"placement decompile", "binary map -> text", placement, kNoTraits},
      {"placement test", "per-device utilization, failure-domain check, mappings/s", placement,
       kReports},
      {"placement diff", "data moved between two maps, next to the optimal amount", placement,
       kReports},
      {"placement balance", "add an exception table that evens out a pool's PGs", placement,
       kReports},
      {"mon", "run the monitor daemon", cmd_mon, kNoTraits},
      {"osd", "run an OSD daemon; or OSD administration (below)", cmd_osd, kNoTraits},
      {"mds", "run a metadata server daemon (filesystems)", cmd_mds, kNoTraits},
      {"up", "make or start a local cluster in one command", cmd_up, kMakesOwnConfig},
      {"down", "stop a local cluster (and release its mounts)", cmd_down, kMakesOwnConfig},
      {"status", "cluster health, OSDs, PGs, usage", cmd_status, kReports | kNeedsCluster},
      {"osd tree", "the placement hierarchy with each OSD's weight, state, address",
       cmd_osd_admin, kReports | kNeedsCluster},
      {"osd ls", "OSD ids", cmd_osd_admin, kReports | kNeedsCluster},
      {"osd out", "take an OSD out of placement (its PGs move)", cmd_osd_admin,
       kReports | kNeedsCluster},
      {"osd in", "put an OSD back into placement", cmd_osd_admin, kReports | kNeedsCluster},
      {"osd down", "mark an OSD down until it boots again", cmd_osd_admin,
       kReports | kNeedsCluster},
      {"osd reweight", "set an OSD's placement weight", cmd_osd_admin, kReports | kNeedsCluster},
      {"osd unhold", "let an OSD held down for flapping boot again", cmd_osd_admin,
       kReports | kNeedsCluster},
      {"pool", "pools", nullptr, kNoTraits},
      {"pool ls", "pools", cmd_pool, kReports | kNeedsCluster},
      {"pool create", "create a pool", cmd_pool, kReports | kNeedsCluster},
      {"pool rm", "delete a pool and every object in it", cmd_pool, kReports | kNeedsCluster},
      {"pool set", "change a pool's size, min_size or rule", cmd_pool, kReports | kNeedsCluster},
      {"pool get", "a pool's settings", cmd_pool, kReports | kNeedsCluster},
      {"object", "objects", nullptr, kNoTraits},
      {"object put", "write a file (or stdin) as an object", cmd_object,
       kReports | kNeedsCluster},
      {"object get", "read an object into a file (or stdout)", cmd_object, kNeedsCluster},
      {"object stat", "an object's size, mtime, version, PG and acting OSDs", cmd_object,
       kReports | kNeedsCluster},
      {"object ls", "every object of a pool", cmd_object, kReports | kNeedsCluster},
      {"object rm", "remove objects", cmd_object, kNeedsCluster},
      {"bench", "benchmarks against a running cluster", nullptr, kNoTraits},
      {"bench objects", "an object benchmark (like rados bench)", nullptr, kNoTraits},
      {"bench objects write", "write objects for a time", cmd_bench, kReports | kNeedsCluster},
      {"bench objects seq", "read back the objects of a write run, in order", cmd_bench,
       kReports | kNeedsCluster},
      {"bench objects rand", "read them back in random order", cmd_bench,
       kReports | kNeedsCluster},
      {"bench objects cleanup", "remove what a write run left", cmd_bench,
       kReports | kNeedsCluster},
      {"pg", "placement groups", nullptr, kNoTraits},
      {"pg ls", "PGs with state, acting OSDs, objects", cmd_pg, kReports | kNeedsCluster},
      {"pg scrub", "check the replicas of a PG", cmd_pg, kReports | kNeedsCluster},
      {"pg repair", "deep scrub and repair replicas that differ", cmd_pg,
       kReports | kNeedsCluster},
      {"auth", "keys", nullptr, kNoTraits},
      {"auth ls", "entities with a key", cmd_auth, kReports | kNeedsCluster},
      {"auth add", "create a key (printed as a keyring section)", cmd_auth,
       kReports | kNeedsCluster},
      {"auth rm", "delete a key", cmd_auth, kReports | kNeedsCluster},
      {"fs", "filesystems", nullptr, kNoTraits},
      {"fs new", "make a filesystem (and its pools)", cmd_fs, kReports | kNeedsCluster},
      {"fs ls", "filesystems", cmd_fs, kReports | kNeedsCluster},
      {"fs rm", "remove a filesystem (its pools are left)", cmd_fs, kReports | kNeedsCluster},
      {"fs status", "filesystems and MDS daemons", cmd_fs, kReports | kNeedsCluster},
      {"fs check", "check (and --repair) a filesystem's metadata and data objects",
       cmd_fs_check, kReports | kNeedsCluster},
      {"frontend", "frontend plugins", nullptr, kNoTraits},
      {"frontend run", "run a frontend plugin (--plugin NAME) until SIGINT/SIGTERM", cmd_frontend,
       kReports | kNeedsCluster | kOwnSetKeys},
      {"mount", "mount a filesystem through FUSE (--fs NAME), in the background", cmd_mount,
       kReports | kNeedsCluster | kOwnSetKeys},
      {"umount", "unmount a `strata mount` and wait for its process to finish", cmd_umount,
       kNoTraits},
      {"image", "block images", nullptr, kNoTraits},
      {"image create", "make a thin image (--size)", cmd_image, kReports | kNeedsCluster},
      {"image ls", "images of a pool", cmd_image, kReports | kNeedsCluster},
      {"image info", "an image's size, objects, snapshots, parent, lock", cmd_image,
       kReports | kNeedsCluster},
      {"image resize", "grow or (--allow-shrink) shrink an image", cmd_image,
       kReports | kNeedsCluster},
      {"image rm", "remove an image", cmd_image, kReports | kNeedsCluster},
      {"image rename", "rename an image", cmd_image, kReports | kNeedsCluster},
      {"image du", "bytes an image or snapshot holds", cmd_image, kReports | kNeedsCluster},
      {"image export", "an image's bytes to a file or stdout", cmd_image,
       kReports | kNeedsCluster},
      {"image import", "a new image from a file or stdin", cmd_image, kReports | kNeedsCluster},
      {"image snap", "snapshots: create, ls, rm, rollback", cmd_image, kReports | kNeedsCluster},
      {"image clone", "a copy-on-write child of a snapshot", cmd_image, kReports | kNeedsCluster},
      {"image flatten", "copy a clone's parent data in and drop the link", cmd_image,
       kReports | kNeedsCluster},
      {"image map", "an image as /dev/nbdN (kernel NBD) or one file over FUSE, in the background",
       cmd_image, kReports | kNeedsCluster | kOwnSetKeys},
      {"image unmap", "end an `image map`", cmd_image, kNoTraits},
      {"nbd", "NBD export of images", nullptr, kNoTraits},
      {"nbd serve", "export an image over NBD until SIGINT/SIGTERM", cmd_nbd,
       kReports | kNeedsCluster | kOwnSetKeys},
      {"nbd stop", "stop a `nbd serve --fork`", cmd_nbd, kNoTraits},
  };
  return table;
}

}  // namespace strata::cli

// filestore_crash_child PLUGIN STORE_DIR SCRIPT
//
// Opens the store, runs the script's steps (txn_script.h) and then dies with
// _exit(0) without closing anything: open descriptors, page cache and
// files survive as after an OSD process crash, while everything the
// metadata database held only in memory is lost. Exit 2 on any error.
#include <unistd.h>

#include <cstdio>
#include <exception>

#include "host/plugin_loader.h"
#include "strata/objectstore.h"
#include "txn_script.h"

int main(int argc, char **argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s PLUGIN STORE_DIR SCRIPT\n", argv[0]);
    return 2;
  }
  try {
    auto plugin = strata::host::load_plugin(argv[1], STRATA_KIND_OBJECTSTORE);
    if (!plugin.ok()) {
      std::fprintf(stderr, "load %s: %s\n", argv[1], plugin.status().message().c_str());
      return 2;
    }
    const auto *ops = plugin->ops<strata_objectstore_ops>();
    strata_open_args args{};
    args.struct_size = sizeof args;
    args.path = argv[2];
    strata_objectstore *os = nullptr;
    strata_err err{};
    if (ops->open(&args, &os, &err) != 0) {
      std::fprintf(stderr, "open %s: %s\n", argv[2], err.msg);
      return 2;
    }
    for (const strata::test::ScriptStep &step : strata::test::read_script(argv[3])) {
      int rc = 0;
      if (step.txn) {
        strata_txn t = step.txn->view();
        rc = ops->apply(os, &t, &err);
      } else {
        rc = ops->checkpoint(os, step.checkpoint, &err);
      }
      if (rc != 0) {
        std::fprintf(stderr, "step failed: %s\n", err.msg);
        _exit(2);
      }
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "crash child: %s\n", e.what());
    _exit(2);
  }
  _exit(0);  // the crash: no close, no flush
}

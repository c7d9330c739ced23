// Runs a kv store in a child process and dies without closing it, so that
// tests can check what survives a crash:
//   kv_crash_helper <store dir> <engine> <mode> <checkpoint seq> <last seq>
// applies transactions 1..last (seq i writes object "o<i>" and sets object
// "counter" to i), checkpoints after `checkpoint seq` (0 = never), then
// _exit(0). mode: "journaled" (no sync flag), "sync" (every txn
// STRATA_TXN_SYNC), "mixed" (journaled up to the checkpoint seq, sync after).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "host/plugin_loader.h"
#include "strata/objectstore.h"
#include "txn_builder.h"

int main(int argc, char **argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s dir engine mode checkpoint last\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1], engine = argv[2], mode = argv[3];
  const uint64_t checkpoint_at = std::strtoull(argv[4], nullptr, 10);
  const uint64_t last = std::strtoull(argv[5], nullptr, 10);

  auto plugin = strata::host::load_plugin(STRATA_KV_PLUGIN_PATH, STRATA_KIND_OBJECTSTORE);
  if (!plugin.ok()) {
    std::fprintf(stderr, "%s\n", plugin.status().message().c_str());
    return 1;
  }
  const auto *ops = plugin->ops<strata_objectstore_ops>();
  strata_kv options[] = {{"kv_engine", engine.c_str()}, {"kv_chunk_size", "64K"}};
  strata_open_args args{};
  args.struct_size = sizeof args;
  args.path = dir.c_str();
  args.options = options;
  args.n_options = 2;
  strata_objectstore *os = nullptr;
  strata_err err{};
  if (ops->open(&args, &os, &err) != 0) {
    std::fprintf(stderr, "open: %s\n", err.msg);
    return 1;
  }
  for (uint64_t seq = 1; seq <= last; ++seq) {
    strata::conformance::TxnBuilder b;
    std::string n = std::to_string(seq);
    b.write("c", "o" + n, 0, "data" + n).write_full("c", "counter", n);
    bool sync = mode == "sync" || (mode == "mixed" && seq > checkpoint_at);
    strata_txn t = b.txn(seq, sync ? STRATA_TXN_SYNC : 0);
    if (ops->apply(os, &t, &err) != 0) {
      std::fprintf(stderr, "apply %llu: %s\n", static_cast<unsigned long long>(seq), err.msg);
      return 1;
    }
    if (seq == checkpoint_at && ops->checkpoint(os, seq, &err) != 0) {
      std::fprintf(stderr, "checkpoint: %s\n", err.msg);
      return 1;
    }
  }
  std::fflush(nullptr);
  _exit(0);  // no close: whatever is not durable is lost
}

// `strata store mkfs|fsck|dump|journal-swap|bench`: operate one object store
// directly (no cluster), e.g. to prepare an OSD's disk or inspect it offline.
#include <boost/program_options.hpp>
#include <xxhash.h>

#include <cstdio>
#include <iostream>

#include "cli/cli_context.h"
#include "cli/commands.h"
#include "cli/store_options.h"

namespace po = boost::program_options;

namespace strata::cli {

namespace {

const char *kUsage =
    "usage: strata store <command> [options]\n"
    "  mkfs          --dir DIR [--backend xfs|btrfs|kv] [--journal file|tmpfs|none]\n"
    "                [--journal-path P] [--journal-size 1G] [--force] [--set key=value ...]\n"
    "  fsck          --dir DIR      replay the journal, check the backend's structures\n"
    "                [--repair --discard-after SEQ]  open a store whose journal is corrupt,\n"
    "                dropping (and keeping a copy of) every transaction after SEQ\n"
    "  dump          --dir DIR [--collection C] [--limit N]   list what the store holds\n"
    "  journal-swap  --dir DIR --journal NAME [--journal-path P] [--journal-size S]\n"
    "  bench         --dir DIR [...]  see `strata store bench --help`\n"
    "common: --config FILE, --set key=value, --plugin-path DIRS, --log-level L\n";

// Parses args with desc; returns false (after printing) on error or --help.
bool parse(const std::vector<std::string> &args, po::options_description &desc,
           po::variables_map &vm, int &rc) {
  desc.add_options()("help,h", "this help");
  try {
    po::store(po::command_line_parser(args).options(desc).run(), vm);
    po::notify(vm);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "strata store: %s\n%s", e.what(), kUsage);
    rc = 2;
    return false;
  }
  if (vm.count("help")) {
    std::cout << desc;
    rc = 0;
    return false;
  }
  return true;
}

std::string printable(std::string_view s, size_t max = 64) {
  std::string out;
  for (unsigned char c : s.substr(0, max)) {
    if (c >= 0x20 && c < 0x7f && c != '\\') out += static_cast<char>(c);
    else {
      char b[5];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      out += b;
    }
  }
  if (s.size() > max) out += "...";
  return out;
}

// Opens (and so replays) the store at dir with the config's settings.
Result<std::unique_ptr<store::Store>> open_store(CliContext &ctx, const std::string &dir) {
  auto s = settings_from_config(ctx, dir);
  if (!s.ok()) return s.status();
  return store::Store::open(*ctx.plugins, dir, *s, ctx.log);
}

int mkfs(CliContext &ctx, const std::vector<std::string> &args) {
  po::options_description desc("strata store mkfs");
  std::string dir, backend, journal, jpath, jsize;
  bool force = false;
  desc.add_options()("dir", po::value(&dir), "store directory")(
      "backend", po::value(&backend), "object-store plugin (xfs, btrfs, kv, ...)")(
      "journal", po::value(&journal), "journal plugin (file, tmpfs) or none")(
      "journal-path", po::value(&jpath), "journal file or device")(
      "journal-size", po::value(&jsize), "journal capacity, e.g. 1G")(
      "force", po::bool_switch(&force),
      "make the store even if DIR is not empty, erasing what it holds");
  po::variables_map vm;
  int rc = 0;
  if (!parse(args, desc, vm, rc)) return rc;
  if (!backend.empty()) ctx.config.set("", "backend", backend);
  if (!journal.empty()) ctx.config.set("", "journal", journal);
  if (!jpath.empty()) ctx.config.set("", "journal_path", jpath);
  if (!jsize.empty()) ctx.config.set("", "journal_size", jsize);
  auto d = store_dir(ctx, dir);
  if (!d.ok()) return report(d.status());
  auto p = mkfs_params_from_config(ctx, *d);
  if (!p.ok()) return report(p.status());
  p->force = force;
  Status st = store::Store::mkfs(*ctx.plugins, *p, ctx.log);
  if (!st.ok()) return report(st);
  return 0;
}

int fsck(CliContext &ctx, const std::vector<std::string> &args) {
  po::options_description desc("strata store fsck");
  std::string dir;
  bool repair = false;
  uint64_t discard_after = 0;
  desc.add_options()("dir", po::value(&dir), "store directory")(
      "repair", po::bool_switch(&repair),
      "repair what fsck cannot get past (with --discard-after)")(
      "discard-after", po::value(&discard_after),
      "with --repair: drop every journaled transaction after this seq (a copy of the journal "
      "is kept in the store directory)");
  po::variables_map vm;
  int rc = 0;
  if (!parse(args, desc, vm, rc)) return rc;
  if (repair != (vm.count("discard-after") > 0)) {
    std::fprintf(stderr, "strata store fsck: --repair and --discard-after SEQ go together\n");
    return 2;
  }
  auto d = store_dir(ctx, dir);
  if (!d.ok()) return report(d.status());
  Result<std::unique_ptr<store::Store>> store = Status::Error(EINVAL, "not opened");
  if (repair) {
    auto s = settings_from_config(ctx, *d);
    if (!s.ok()) return report(s.status());
    store = store::Store::open_discarding_after(*ctx.plugins, *d, *s, discard_after, ctx.log);
  } else {
    store = open_store(ctx, *d);
  }
  if (!store.ok()) return report(store.status());
  const store::ReplayReport &r = (*store)->replay_report();
  if (r.repair.requested) {
    const store::RepairReport &x = r.repair;
    if (x.lost)
      std::printf("repair: dropped %llu transaction(s) after seq %llu: seqs %llu..%llu\n",
                  static_cast<unsigned long long>(x.lost),
                  static_cast<unsigned long long>(x.discard_after),
                  static_cast<unsigned long long>(x.first_lost),
                  static_cast<unsigned long long>(x.last_lost));
    else
      std::printf("repair: no transaction after seq %llu was lost\n",
                  static_cast<unsigned long long>(x.discard_after));
    if (!x.saved_copy.empty())
      std::printf("repair: the journal as it was (with what was dropped) is kept in %s; the "
                  "store has a new, empty journal\n",
                  x.saved_copy.c_str());
  }
  std::printf("store %s (%s + %s): checkpoint seq %llu, replayed %llu transactions, last seq %llu",
              d->c_str(), (*store)->meta().backend.c_str(), (*store)->meta().journal.c_str(),
              static_cast<unsigned long long>(r.committed_seq),
              static_cast<unsigned long long>(r.records),
              static_cast<unsigned long long>(r.last_seq));
  if (r.torn_bytes)
    std::printf(", discarded a torn tail of %llu bytes (%s)",
                static_cast<unsigned long long>(r.torn_bytes), r.detail.c_str());
  std::printf("\n");
  if (!r.torn_bytes && !r.detail.empty()) std::printf("note: %s\n", r.detail.c_str());
  for (const std::string &w : (*store)->health_warnings()) std::printf("warning: %s\n", w.c_str());
  auto n = (*store)->fsck();
  if (!n.ok()) return report(n.status());
  Status st = (*store)->close();
  if (!st.ok()) return report(st);
  std::printf("fsck: %lld problem(s)\n", static_cast<long long>(*n));
  return *n == 0 ? 0 : 1;
}

int dump(CliContext &ctx, const std::vector<std::string> &args) {
  po::options_description desc("strata store dump");
  std::string dir, only;
  uint64_t limit = 1000;
  bool digest = false;
  desc.add_options()("dir", po::value(&dir), "store directory")(
      "digest", po::bool_switch(&digest), "print an XXH64 digest of each object's data")(
      "collection", po::value(&only), "only this collection")(
      "limit", po::value(&limit)->default_value(1000), "objects per collection (0 = all)");
  po::variables_map vm;
  int rc = 0;
  if (!parse(args, desc, vm, rc)) return rc;
  auto d = store_dir(ctx, dir);
  if (!d.ok()) return report(d.status());
  auto opened = open_store(ctx, *d);
  if (!opened.ok()) return report(opened.status());
  store::Store &st = **opened;
  const store::StoreMeta &m = st.meta();
  std::printf("store %s\n  fsid %s\n  backend %s\n  journal %s %s (%llu bytes)\n", d->c_str(),
              m.fsid.c_str(), m.backend.c_str(), m.journal.c_str(), m.journal_path.c_str(),
              static_cast<unsigned long long>(m.journal_size));
  auto colls = st.list_collections();
  if (!colls.ok()) return report(colls.status());
  for (const std::string &c : *colls) {
    if (!only.empty() && c != only) continue;
    std::printf("collection %s\n", printable(c).c_str());
    auto objs = st.list_objects(c, {}, limit);
    if (!objs.ok()) return report(objs.status());
    for (const std::string &o : *objs) {
      auto stt = st.stat(c, o);
      auto xs = st.getxattrs(c, o);
      auto om = st.omap_list(c, o);
      std::printf("  %s size %llu xattrs %zu omap %zu", printable(o).c_str(),
                  stt.ok() ? static_cast<unsigned long long>(stt->size) : 0ull,
                  xs.ok() ? xs->size() : 0, om.ok() ? om->size() : 0);
      if (digest) {
        // Replicas of one object compare equal by this line (tests/cluster).
        auto data = st.read(c, o);
        if (!data.ok()) return report(data.status());
        std::printf(" digest %016llx",
                    static_cast<unsigned long long>(XXH64(data->data(), data->size(), 0)));
      }
      std::printf("\n");
      if (xs.ok())
        for (const auto &[k, v] : *xs)
          std::printf("    xattr %s = %s\n", printable(k).c_str(), printable(v).c_str());
    }
  }
  Status cst = st.close();
  return cst.ok() ? 0 : report(cst);
}

int journal_swap(CliContext &ctx, const std::vector<std::string> &args) {
  po::options_description desc("strata store journal-swap");
  std::string dir, journal, jpath, jsize = "1G";
  desc.add_options()("dir", po::value(&dir), "store directory")(
      "journal", po::value(&journal)->required(), "new journal plugin (file, tmpfs) or none")(
      "journal-path", po::value(&jpath), "new journal file or device")(
      "journal-size", po::value(&jsize), "new journal capacity");
  po::variables_map vm;
  int rc = 0;
  if (!parse(args, desc, vm, rc)) return rc;
  auto d = store_dir(ctx, dir);
  if (!d.ok()) return report(d.status());
  auto size = parse_size(jsize);
  if (!size.ok()) return report(size.status().Context("--journal-size"));
  store::OptionList jopts;
  if (journal != "none") {
    auto jp = ctx.plugins->find(STRATA_KIND_JOURNAL, journal);
    if (!jp.ok()) return report(jp.status());
    const strata_plugin_descriptor &dsc = jp->descriptor();
    for (size_t i = 0; i < dsc.n_options; ++i)
      if (dsc.options[i].name)
        if (auto v = ctx.config.get(ctx.entity, dsc.options[i].name))
          jopts.emplace_back(dsc.options[i].name, *v);
  }
  Status st = store::Store::journal_swap(*ctx.plugins, *d, journal, jpath,
                                         static_cast<uint64_t>(*size), jopts, ctx.log);
  return st.ok() ? 0 : report(st);
}

}  // namespace

int cmd_store(std::vector<std::string> args) {
  if (args.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  std::string sub = args[0];
  args.erase(args.begin());
  if (sub == "bench") return cmd_store_bench(args);
  auto ctx = make_context(args);
  if (!ctx) return 1;
  if (sub == "mkfs") return mkfs(*ctx, args);
  if (sub == "fsck") return fsck(*ctx, args);
  if (sub == "dump") return dump(*ctx, args);
  if (sub == "journal-swap") return journal_swap(*ctx, args);
  std::fprintf(stderr, "strata store: unknown command '%s'\n%s", sub.c_str(), kUsage);
  return 2;
}

}  // namespace strata::cli

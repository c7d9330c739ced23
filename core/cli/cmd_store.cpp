// `strata store mkfs|fsck|dump|journal-swap|bench`: operate one object store
// directly (no cluster), e.g. to prepare an OSD's disk or inspect it offline.
#include <boost/program_options.hpp>
#include <xxhash.h>

#include <cstdio>
#include <iostream>

#include "cli/cli_context.h"
#include "cli/commands.h"
#include "cli/output_format.h"
#include "common/json.h"
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
    "fsck and dump take --format text|json|json-pretty.\n"
    "common: --config FILE (or --conf), --set key=value, --plugin-path DIRS, --log-level L\n";

// Parses args with desc; returns false (after printing) on error or --help.
// Errors name the subcommand (`strata store fsck: unrecognised option ...`).
bool parse(const char *sub, const std::vector<std::string> &args, po::options_description &desc,
           po::variables_map &vm, int &rc) {
  desc.add_options()("help,h", "this help");
  try {
    po::store(po::command_line_parser(args).options(desc).run(), vm);
    // Before notify: --help must work without the required options.
    if (vm.count("help")) {
      std::cout << desc;
      std::cout << "common: --config FILE (or --conf), --set key=value, --plugin-path DIRS, "
                   "--log-level L\n";
      rc = 0;
      return false;
    }
    po::notify(vm);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "strata store %s: %s\n%s", sub, e.what(), kUsage);
    rc = 2;
    return false;
  }
  return true;
}

// --format for the reporting subcommands; false (after printing) when bad.
bool output_format(const char *sub, const std::string &name, OutputFormat &out, int &rc) {
  auto f = parse_output_format(name);
  if (f.ok()) {
    out = *f;
    return true;
  }
  std::fprintf(stderr, "strata store %s: %s\n", sub, f.status().message().c_str());
  rc = 2;
  return false;
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

void print_fsck_text(const std::string &dir, store::Store &store,
                     const std::vector<std::string> &warnings, long long problems) {
  const store::ReplayReport &r = store.replay_report();
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
              dir.c_str(), store.meta().backend.c_str(), store.meta().journal.c_str(),
              static_cast<unsigned long long>(r.committed_seq),
              static_cast<unsigned long long>(r.records),
              static_cast<unsigned long long>(r.last_seq));
  if (r.torn_bytes)
    std::printf(", discarded a torn tail of %llu bytes (%s)",
                static_cast<unsigned long long>(r.torn_bytes), r.detail.c_str());
  std::printf("\n");
  if (!r.torn_bytes && !r.detail.empty()) std::printf("note: %s\n", r.detail.c_str());
  for (const std::string &w : warnings) std::printf("warning: %s\n", w.c_str());
  std::printf("fsck: %lld problem(s)\n", problems);
}

// Everything the text shows, as one JSON object.
json::Value fsck_json(const std::string &dir, store::Store &store,
                      const std::vector<std::string> &warnings, long long problems) {
  const store::ReplayReport &r = store.replay_report();
  json::Value out{json::Object{}};
  out.set("store", dir);
  out.set("backend", store.meta().backend);
  out.set("journal", store.meta().journal);
  out.set("checkpoint_seq", static_cast<unsigned long long>(r.committed_seq));
  out.set("replayed", static_cast<unsigned long long>(r.records));
  out.set("last_seq", static_cast<unsigned long long>(r.last_seq));
  out.set("torn_bytes", static_cast<unsigned long long>(r.torn_bytes));
  out.set("detail", r.detail);
  json::Value w{json::Array{}};
  for (const std::string &x : warnings) w.push(x);
  out.set("warnings", w);
  if (r.repair.requested) {
    const store::RepairReport &x = r.repair;
    json::Value rep{json::Object{}};
    rep.set("discard_after", static_cast<unsigned long long>(x.discard_after));
    rep.set("lost", static_cast<unsigned long long>(x.lost));
    rep.set("first_lost", static_cast<unsigned long long>(x.first_lost));
    rep.set("last_lost", static_cast<unsigned long long>(x.last_lost));
    rep.set("saved_copy", x.saved_copy);
    out.set("repair", rep);
  }
  out.set("problems", problems);
  return out;
}

void print_dump_text(const json::Value &d) {
  const json::Value &j = d["journal"];
  std::printf("store %s\n  fsid %s\n  backend %s\n  journal %s %s (%llu bytes)\n",
              d["store"].as_string().c_str(), d["fsid"].as_string().c_str(),
              d["backend"].as_string().c_str(), j["plugin"].as_string().c_str(),
              j["path"].as_string().c_str(), static_cast<unsigned long long>(j["size"].as_int()));
  for (const json::Value &c : d["collections"].as_array()) {
    std::printf("collection %s\n", c["name"].as_string().c_str());
    for (const json::Value &o : c["objects"].as_array()) {
      std::printf("  %s size %llu xattrs %zu omap %llu", o["name"].as_string().c_str(),
                  static_cast<unsigned long long>(o["size"].as_int()),
                  o["xattrs"].as_array().size(),
                  static_cast<unsigned long long>(o["omap"].as_int()));
      if (!o["digest"].is_null()) std::printf(" digest %s", o["digest"].as_string().c_str());
      std::printf("\n");
      for (const json::Value &x : o["xattrs"].as_array())
        std::printf("    xattr %s = %s\n", x["name"].as_string().c_str(),
                    x["value"].as_string().c_str());
    }
  }
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
  if (!parse("mkfs", args, desc, vm, rc)) return rc;
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
  std::string dir, format = "text";
  bool repair = false;
  uint64_t discard_after = 0;
  desc.add_options()("dir", po::value(&dir), "store directory")(
      "repair", po::bool_switch(&repair),
      "repair what fsck cannot get past (with --discard-after)")(
      "discard-after", po::value(&discard_after),
      "with --repair: drop every journaled transaction after this seq (a copy of the journal "
      "is kept in the store directory)")(
      "format", po::value(&format), "text, json or json-pretty");
  po::variables_map vm;
  int rc = 0;
  OutputFormat f = OutputFormat::kText;
  if (!parse("fsck", args, desc, vm, rc) || !output_format("fsck", format, f, rc)) return rc;
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
  auto n = (*store)->fsck();
  if (!n.ok()) return report(n.status());
  std::vector<std::string> warnings = (*store)->health_warnings();
  if (f == OutputFormat::kText) print_fsck_text(*d, **store, warnings, *n);
  else print_json(fsck_json(*d, **store, warnings, *n).dump(), f);
  Status st = (*store)->close();
  if (!st.ok()) return report(st);
  return *n == 0 ? 0 : 1;
}

int dump(CliContext &ctx, const std::vector<std::string> &args) {
  po::options_description desc("strata store dump");
  std::string dir, only, format = "text";
  uint64_t limit = 1000;
  bool digest = false;
  desc.add_options()("dir", po::value(&dir), "store directory")(
      "digest", po::bool_switch(&digest), "print an XXH64 digest of each object's data")(
      "collection", po::value(&only), "only this collection")(
      "limit", po::value(&limit)->default_value(1000), "objects per collection (0 = all)")(
      "format", po::value(&format), "text, json or json-pretty");
  po::variables_map vm;
  int rc = 0;
  OutputFormat f = OutputFormat::kText;
  if (!parse("dump", args, desc, vm, rc) || !output_format("dump", format, f, rc)) return rc;
  auto d = store_dir(ctx, dir);
  if (!d.ok()) return report(d.status());
  auto opened = open_store(ctx, *d);
  if (!opened.ok()) return report(opened.status());
  store::Store &st = **opened;
  const store::StoreMeta &m = st.meta();
  // One model for both formats; names are escaped (printable) in both.
  json::Value out{json::Object{}};
  out.set("store", *d);
  out.set("fsid", m.fsid);
  out.set("backend", m.backend);
  json::Value journal{json::Object{}};
  journal.set("plugin", m.journal);
  journal.set("path", m.journal_path);
  journal.set("size", static_cast<unsigned long long>(m.journal_size));
  out.set("journal", journal);
  json::Value collections{json::Array{}};
  auto colls = st.list_collections();
  if (!colls.ok()) return report(colls.status());
  for (const std::string &c : *colls) {
    if (!only.empty() && c != only) continue;
    auto objs = st.list_objects(c, {}, limit);
    if (!objs.ok()) return report(objs.status());
    json::Value objects{json::Array{}};
    for (const std::string &o : *objs) {
      auto stt = st.stat(c, o);
      auto xs = st.getxattrs(c, o);
      auto om = st.omap_list(c, o);
      json::Value obj{json::Object{}};
      obj.set("name", printable(o));
      obj.set("size", stt.ok() ? static_cast<unsigned long long>(stt->size) : 0ull);
      json::Value xattrs{json::Array{}};
      if (xs.ok())
        for (const auto &[k, v] : *xs) {
          json::Value x{json::Object{}};
          x.set("name", printable(k));
          x.set("value", printable(v));
          xattrs.push(x);
        }
      obj.set("xattrs", xattrs);
      obj.set("omap", static_cast<unsigned long long>(om.ok() ? om->size() : 0));
      if (digest) {
        // Replicas of one object compare equal by this digest (tests/cluster).
        auto data = st.read(c, o);
        if (!data.ok()) return report(data.status());
        char hex[17];
        std::snprintf(hex, sizeof hex, "%016llx",
                      static_cast<unsigned long long>(XXH64(data->data(), data->size(), 0)));
        obj.set("digest", hex);
      }
      objects.push(obj);
    }
    json::Value coll{json::Object{}};
    coll.set("name", printable(c));
    coll.set("objects", objects);
    collections.push(coll);
  }
  out.set("collections", collections);
  if (f == OutputFormat::kText) print_dump_text(out);
  else print_json(out.dump(), f);
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
  if (!parse("journal-swap", args, desc, vm, rc)) return rc;
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
  // --help needs no config and no plugins: the subcommand prints and returns.
  bool help = false;
  for (const std::string &a : args) help |= a == "--help" || a == "-h";
  auto ctx = help ? std::make_unique<CliContext>() : make_context(args);
  if (!ctx) return 1;
  if (sub == "mkfs") return mkfs(*ctx, args);
  if (sub == "fsck") return fsck(*ctx, args);
  if (sub == "dump") return dump(*ctx, args);
  if (sub == "journal-swap") return journal_swap(*ctx, args);
  std::fprintf(stderr, "strata store: unknown command '%s'\n%s", sub.c_str(), kUsage);
  return 2;
}

}  // namespace strata::cli

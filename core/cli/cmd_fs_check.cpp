// `strata fs check NAME [--repair]`: checks a filesystem's objects
// (core/mds/fs_check.h). The filesystem is named as in the fs map, or its
// pools are given directly (--metadata-pool P --data-pool Q).
#include <cstdio>

#include "cli/cmd_client_common.h"
#include "cli/commands.h"
#include "client/cluster_client.h"
#include "mds/fs_check.h"

namespace strata::cli {
namespace {

const char *kFsCheckUsage =
    "usage: strata fs check NAME [--repair] [--format text|json|json-pretty]\n"
    "       strata fs check --metadata-pool P --data-pool Q [--repair]\n"
    "  Walks the filesystem from its root: dentries decode, inode numbers match,\n"
    "  remote dentries' inodes exist, link counts are right, no directory is\n"
    "  reached twice, no orphan directory/inode/data objects. Needs the metadata\n"
    "  journal applied (refuses while it holds entries: an MDS is active).\n"
    "  --repair rewrites wrong link counts and removes orphan objects.\n"
    "  Exit status 1 when problems were found and not repaired.\n";

}  // namespace

int cmd_fs_check(std::vector<std::string> args) {
  if (!args.empty() && args[0] == "check") args.erase(args.begin());
  const std::string cmd = "fs check";
  ArgList list(std::move(args));
  auto o = take_common_options(list);
  if (!o.ok()) return usage_error(cmd, o.status().message(), kFsCheckUsage);
  if (o->help) {
    std::fputs(kFsCheckUsage, stdout);
    std::fputs(common_options_help(), stdout);
    return 0;
  }
  bool repair = list.take_flag("--repair");
  auto meta_name = list.take("--metadata-pool");
  auto data_name = list.take("--data-pool");
  if (!meta_name.ok()) return usage_error(cmd, meta_name.status().message(), kFsCheckUsage);
  if (!data_name.ok()) return usage_error(cmd, data_name.status().message(), kFsCheckUsage);
  auto pos = list.positional();
  if (!pos.ok()) return usage_error(cmd, pos.status().message(), kFsCheckUsage);
  if (pos->size() > 1) return usage_error(cmd, "one filesystem name at most", kFsCheckUsage);
  if (pos->empty() && (!*meta_name || !*data_name))
    return usage_error(cmd, "name a filesystem, or give --metadata-pool and --data-pool",
                       kFsCheckUsage);

  client::ClusterArgs ca;
  ca.conf_path = o->conf;
  ca.entity = o->name;
  ca.overrides = o->sets;
  if (!o->keyring.empty()) ca.overrides.push_back("keyring=" + o->keyring);
  if (!o->mon_addr.empty()) ca.overrides.push_back("mon_addr=" + o->mon_addr);
  ca.overrides.push_back("client_op_timeout_ms=" + std::to_string(o->op_timeout_ms));
  auto c = client::ClusterClient::create(ca);
  if (!c.ok()) {
    std::fprintf(stderr, "strata %s: %s\n", cmd.c_str(), c.status().ToString().c_str());
    return 2;
  }
  std::shared_ptr<client::ClusterClient> cluster = *c;
  if (Status st = cluster->connect(std::chrono::milliseconds(o->timeout_ms)); !st.ok()) {
    std::fprintf(stderr, "strata %s: %s\n", cmd.c_str(), st.ToString().c_str());
    return 2;
  }
  uint32_t meta = 0, data = 0;
  std::string label;
  if (!pos->empty()) {
    label = pos->front();
    auto map = cluster->map();
    const cluster::FsInfo *fs = map ? map->map().fs_by_name(label) : nullptr;
    if (!fs) {
      std::fprintf(stderr, "strata %s: no filesystem '%s' in the fs map\n", cmd.c_str(),
                   label.c_str());
      cluster->shutdown();
      return 2;
    }
    meta = fs->metadata_pool;
    data = fs->data_pool;
  }
  if (*meta_name) {
    auto p = cluster->find_pool(**meta_name);
    if (!p.ok()) {
      std::fprintf(stderr, "strata %s: %s\n", cmd.c_str(), p.status().ToString().c_str());
      cluster->shutdown();
      return 2;
    }
    meta = p->id;
    if (label.empty()) label = **meta_name;
  }
  if (*data_name) {
    auto p = cluster->find_pool(**data_name);
    if (!p.ok()) {
      std::fprintf(stderr, "strata %s: %s\n", cmd.c_str(), p.status().ToString().c_str());
      cluster->shutdown();
      return 2;
    }
    data = p->id;
  }
  auto rep = mds::fs_check(*cluster, meta, data, repair);
  cluster->shutdown();
  if (!rep.ok()) {
    std::fprintf(stderr, "strata %s: %s: %s\n", cmd.c_str(), label.c_str(),
                 rep.status().ToString().c_str());
    return 2;
  }
  if (o->format == OutputFormat::kText) {
    for (const auto &p : rep->problems)
      std::printf("%s %s: %s%s\n", p.kind.c_str(), p.object.c_str(), p.detail.c_str(),
                  p.repaired ? " (repaired)" : "");
    std::printf(
        "%s: %llu directories, %llu files, %llu data objects; %zu problems, %zu not "
        "repaired\n",
        label.c_str(), static_cast<unsigned long long>(rep->directories),
        static_cast<unsigned long long>(rep->files),
        static_cast<unsigned long long>(rep->data_objects), rep->problems.size(),
        rep->unrepaired());
  } else {
    std::string j = "{\"fs\":" + json_quote(label) +
                    ",\"directories\":" + std::to_string(rep->directories) +
                    ",\"files\":" + std::to_string(rep->files) +
                    ",\"data_objects\":" + std::to_string(rep->data_objects) + ",\"problems\":[";
    for (size_t i = 0; i < rep->problems.size(); ++i) {
      const auto &p = rep->problems[i];
      if (i) j += ",";
      j += "{\"kind\":" + json_quote(p.kind) + ",\"object\":" + json_quote(p.object) +
           ",\"detail\":" + json_quote(p.detail) +
           ",\"repaired\":" + (p.repaired ? "true" : "false") + "}";
    }
    j += "],\"unrepaired\":" + std::to_string(rep->unrepaired()) + "}";
    print_json(j, o->format);
  }
  return rep->unrepaired() ? 1 : 0;
}

}  // namespace strata::cli

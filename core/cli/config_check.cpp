#include "cli/config_check.h"

#include "cluster/options.h"
#include "common/config.h"
#include "common/config_lookup.h"
#include "host/plugin_loader.h"
#include "host/plugin_path.h"

namespace strata::cli {

Status check_config(const std::string &path, const std::vector<std::string> &sets,
                    const std::string &plugin_path) {
  Result<Config> cfg = path.empty() ? Result<Config>(Config()) : Config::load_file(path);
  if (!cfg.ok()) return cfg.status();
  for (const std::string &s : sets)
    if (Status st = cfg->add_override(s); !st.ok()) return st;

  std::vector<const strata_option_spec *> specs;
  for (const auto *list : {&cluster::global_options(), &cluster::mon_options(),
                           &cluster::osd_options(), &cluster::client_options(), &cluster::mds_options(),
                           &core_store_options()})
    for (const strata_option_spec &s : *list) specs.push_back(&s);

  // Plugin options are known when some plugin on the path declares them;
  // the path includes every plugin_path the file names, in any section.
  std::string extra = plugin_path;
  for (const Config::Entry &e : cfg->entries())
    if (e.key == "plugin_path" && !e.value.empty()) extra += (extra.empty() ? "" : ":") + e.value;
  host::PluginRegistry plugins(host::plugin_search_path(extra));
  plugins.scan();
  for (const host::Plugin &p : plugins.plugins()) {
    const strata_plugin_descriptor &d = p.descriptor();
    for (size_t i = 0; i < d.n_options; ++i)
      if (d.options[i].name) specs.push_back(&d.options[i]);
  }
  return validate_entries(cfg->entries(), specs,
                          "no core option, and no plugin on the plugin path declares it");
}

}  // namespace strata::cli

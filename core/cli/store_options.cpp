#include "cli/store_options.h"

namespace strata::cli {

namespace {

std::vector<const strata_option_spec *> specs_for(const CliContext &ctx, const std::string &backend,
                                                  const std::string &journal, Status &st) {
  std::vector<const strata_option_spec *> specs;
  for (const strata_option_spec &s : core_store_options()) specs.push_back(&s);
  auto add_plugin = [&](uint32_t kind, const std::string &name) {
    auto p = ctx.plugins->find(kind, name);
    if (!p.ok()) {
      st = p.status();
      return;
    }
    const strata_plugin_descriptor &d = p->descriptor();
    for (size_t i = 0; i < d.n_options; ++i)
      if (d.options[i].name) specs.push_back(&d.options[i]);
  };
  add_plugin(STRATA_KIND_OBJECTSTORE, backend);
  if (st.ok() && journal != "none") add_plugin(STRATA_KIND_JOURNAL, journal);
  return specs;
}

long long int_option(const CliContext &ctx, const char *name) {
  for (const strata_option_spec &s : core_store_options())
    if (std::string(s.name) == name) return *parse_size(config_value(ctx.config, ctx.entity, s));
  return 0;
}

}  // namespace

Result<std::string> store_dir(const CliContext &ctx, const std::string &flag) {
  if (!flag.empty()) return flag;
  if (auto v = ctx.config.get(ctx.entity, "store_dir"); v && !v->empty()) return *v;
  return Status::Error(EINVAL, "no store directory: pass --dir DIR or set store_dir in the config");
}

Result<store::MkfsParams> mkfs_params_from_config(const CliContext &ctx, const std::string &dir) {
  store::MkfsParams p;
  p.dir = dir;
  p.backend = ctx.config.get(ctx.entity, "backend").value_or("xfs");
  p.journal = ctx.config.get(ctx.entity, "journal").value_or("file");
  Status st;
  auto specs = specs_for(ctx, p.backend, p.journal, st);
  if (!st.ok()) return st;
  st = validate_config(ctx.config, ctx.entity, specs);
  if (!st.ok()) return st;
  p.journal_path = ctx.config.get(ctx.entity, "journal_path").value_or("");
  p.journal_size = static_cast<uint64_t>(int_option(ctx, "journal_size"));
  auto collect = [&](uint32_t kind, const std::string &name, store::OptionList &out) {
    auto pl = ctx.plugins->find(kind, name);
    if (!pl.ok()) return;
    const strata_plugin_descriptor &d = pl->descriptor();
    for (size_t i = 0; i < d.n_options; ++i)
      if (d.options[i].name)
        if (auto v = ctx.config.get(ctx.entity, d.options[i].name)) out.emplace_back(d.options[i].name, *v);
  };
  collect(STRATA_KIND_OBJECTSTORE, p.backend, p.backend_options);
  if (p.journal != "none") collect(STRATA_KIND_JOURNAL, p.journal, p.journal_options);
  return p;
}

Result<store::StoreSettings> settings_from_config(const CliContext &ctx, const std::string &dir) {
  auto meta = store::StoreMeta::load(dir);
  if (!meta.ok()) return meta.status();
  Status st;
  auto specs = specs_for(ctx, meta->backend, meta->journal, st);
  if (!st.ok()) return st;
  st = validate_config(ctx.config, ctx.entity, specs);
  if (!st.ok()) return st;
  store::StoreSettings s;
  s.checkpoint_interval_ms = int_option(ctx, "checkpoint_interval_ms");
  s.checkpoint_fill_pct = int_option(ctx, "checkpoint_fill_pct");
  s.throttle_fill_pct = int_option(ctx, "throttle_fill_pct");
  s.stage_threshold = static_cast<uint64_t>(int_option(ctx, "stage_threshold"));
  s.reserve_pct = int_option(ctx, "reserve_pct");
  if (s.reserve_pct < 0 || s.reserve_pct > 50)
    return Status::Error(EINVAL, "reserve_pct = " + std::to_string(s.reserve_pct) +
                                     " is out of range [0, 50]");
  return s;
}

}  // namespace strata::cli

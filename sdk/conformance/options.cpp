// Plugin options as the host hands them over: validated against the
// plugin's own specs, defaults filled.
#include "cli.h"
#include "common/config.h"
#include "kit.h"

namespace strata::conformance {

// The host's own parser, so that the kit accepts and refuses exactly what a
// config file would.
bool option_value_parses(const strata_option_spec &spec, std::string_view value) {
  return validate_value(spec, std::string(value)).ok();
}

bool resolve_options(const strata_plugin_descriptor &d,
                     const std::vector<std::pair<std::string, std::string>> &given, KitState &state,
                     std::string *error) {
  const strata_option_spec *specs = d.options;
  size_t n = specs ? d.n_options : 0;
  auto find = [&](const std::string &key) -> const strata_option_spec * {
    for (size_t i = 0; i < n; ++i)
      if (specs[i].name && key == specs[i].name) return &specs[i];
    return nullptr;
  };
  for (const auto &[key, value] : given) {
    const strata_option_spec *spec = find(key);
    if (!spec) {
      std::string known;
      for (size_t i = 0; i < n; ++i)
        known += (known.empty() ? "" : ", ") + std::string(specs[i].name);
      *error = "plugin " + std::string(d.name) + " has no option '" + key +
               "' (it takes: " + (known.empty() ? "none" : known) + ")";
      return false;
    }
    if (Status st = validate_value(*spec, value); !st.ok()) {
      *error = "plugin " + std::string(d.name) + ": " + st.message();
      return false;
    }
  }
  auto keep = [&](const std::string &s) { return state.option_strings.emplace_back(s).c_str(); };
  for (size_t i = 0; i < n; ++i) {
    const strata_option_spec &spec = specs[i];
    const std::string *value = nullptr;
    for (const auto &[key, v] : given)
      if (key == spec.name) value = &v;  // the last one given wins, as in a config file
    if (value)
      state.options.push_back({keep(spec.name), keep(*value)});
    else if (spec.default_value)
      state.options.push_back({keep(spec.name), keep(spec.default_value)});
  }
  return true;
}

}  // namespace strata::conformance

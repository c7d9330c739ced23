#include "common/config.h"
#include "common/config_lookup.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace strata {

namespace {

std::string trim(const std::string &s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

bool valid_key(const std::string &k) {
  if (k.empty()) return false;
  return std::all_of(k.begin(), k.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

// [global], [osd], [osd.N], [mon], [mon.X], [mds], [client], [gateway]
bool valid_section(const std::string &s) {
  static const std::set<std::string> kinds = {"global", "store", "osd", "mon",
                                              "mds", "client", "gateway"};
  std::string base = s.substr(0, s.find('.'));
  if (!kinds.count(base)) return false;
  return s == base || (s.size() > base.size() + 1 && base != "global");
}

}  // namespace

Result<Config> Config::parse(const std::string &text, const std::string &source_name) {
  Config cfg;
  std::istringstream in(text);
  std::string line, section;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    std::string where = source_name + ":" + std::to_string(lineno);
    std::string t = trim(line);
    if (t.empty() || t[0] == '#' || t[0] == ';') continue;
    if (t.front() == '[') {
      if (t.back() != ']') return Status::Error(EINVAL, where + ": unterminated section header");
      section = trim(t.substr(1, t.size() - 2));
      if (!valid_section(section))
        return Status::Error(EINVAL, where + ": unknown section [" + section +
                                         "] (expected global, osd, osd.N, mon, mds, client, "
                                         "gateway, store)");
      continue;
    }
    size_t eq = t.find('=');
    if (eq == std::string::npos)
      return Status::Error(EINVAL, where + ": expected 'key = value', got '" + t + "'");
    if (section.empty())
      return Status::Error(EINVAL, where + ": key outside any section (start with [global])");
    std::string key = trim(t.substr(0, eq));
    std::string value = trim(t.substr(eq + 1));
    // Spaces and dashes in keys are spelled both ways by people; store one.
    std::replace(key.begin(), key.end(), ' ', '_');
    std::replace(key.begin(), key.end(), '-', '_');
    if (!valid_key(key)) return Status::Error(EINVAL, where + ": bad key '" + key + "'");
    cfg.entries_.push_back({section, key, value, where});
  }
  return cfg;
}

Result<Config> Config::load_file(const std::string &path) {
  std::ifstream f(path);
  if (!f) return Status::Error(ENOENT, "cannot read config file " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  return parse(ss.str(), path);
}

Status Config::add_override(const std::string &assignment) {
  size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    return Status::Error(EINVAL, "--set expects key=value, got '" + assignment + "'");
  std::string key = trim(assignment.substr(0, eq));
  std::replace(key.begin(), key.end(), '-', '_');
  if (!valid_key(key)) return Status::Error(EINVAL, "--set: bad key '" + key + "'");
  entries_.push_back({"", key, trim(assignment.substr(eq + 1)), "--set"});
  return Status::OK();
}

void Config::set(const std::string &section, const std::string &key, const std::string &value) {
  entries_.push_back({section, key, value, "(program)"});
}

std::vector<Config::Entry> Config::effective(const std::string &entity) const {
  // Most specific first: overrides, [entity], [kind], [global].
  std::vector<std::string> order = {"", entity};
  std::string kind = entity.substr(0, entity.find('.'));
  if (kind != entity) order.push_back(kind);
  if (kind == "osd") order.push_back("store");
  if (entity != "global") order.push_back("global");
  std::vector<Entry> out;
  std::set<std::string> seen;
  for (const std::string &sec : order) {
    // Later lines in the file win over earlier ones in the same section.
    for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
      if (it->section != sec || seen.count(it->key)) continue;
      seen.insert(it->key);
      out.push_back(*it);
    }
  }
  return out;
}

std::optional<std::string> Config::get(const std::string &entity, const std::string &key) const {
  for (const Entry &e : effective(entity))
    if (e.key == key) return e.value;
  return std::nullopt;
}

Result<long long> parse_size(const std::string &value) {
  std::string v = trim(value);
  if (v.empty()) return Status::Error(EINVAL, "empty number");
  char *end = nullptr;
  errno = 0;
  long long n = std::strtoll(v.c_str(), &end, 10);
  if (end == v.c_str() || errno) return Status::Error(EINVAL, "'" + v + "' is not a number");
  std::string suffix = trim(end);
  int shift = 0;
  if (!suffix.empty()) {
    char c = static_cast<char>(std::tolower(static_cast<unsigned char>(suffix[0])));
    std::string rest = suffix.substr(1);
    if (rest != "" && rest != "b" && rest != "B" && rest != "iB" && rest != "ib")
      return Status::Error(EINVAL, "'" + v + "': bad size suffix");
    switch (c) {
      case 'k': shift = 10; break;
      case 'm': shift = 20; break;
      case 'g': shift = 30; break;
      case 't': shift = 40; break;
      default: return Status::Error(EINVAL, "'" + v + "': bad size suffix (K, M, G or T)");
    }
  }
  return n << shift;
}

Result<bool> parse_bool(const std::string &value) {
  std::string v = value;
  std::transform(v.begin(), v.end(), v.begin(), ::tolower);
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  return Status::Error(EINVAL, "'" + value + "' is not a boolean (true/false)");
}

Status validate_value(const strata_option_spec &spec, const std::string &value) {
  std::string key = spec.name;
  switch (spec.type) {
    case STRATA_OPT_INT: {
      auto r = parse_size(value);
      if (!r.ok()) return r.status().Context("option " + key);
      if (*r < 0) return Status::Error(EINVAL, "option " + key + ": negative value " + value);
      return Status::OK();
    }
    case STRATA_OPT_BOOL: {
      auto r = parse_bool(value);
      return r.ok() ? Status::OK() : r.status().Context("option " + key);
    }
    case STRATA_OPT_ENUM: {
      std::string choices = spec.enum_values ? spec.enum_values : "";
      std::stringstream ss(choices);
      std::string c;
      while (std::getline(ss, c, '|'))
        if (c == value) return Status::OK();
      return Status::Error(EINVAL, "option " + key + ": '" + value + "' is not one of " + choices);
    }
    default:
      return Status::OK();
  }
}

Status validate_entries(const std::vector<Config::Entry> &entries,
                        const std::vector<const strata_option_spec *> &specs,
                        const std::string &unknown_hint) {
  std::vector<std::string> known;
  for (const strata_option_spec *s : specs)
    if (s->name) known.push_back(s->name);
  std::string problems;
  for (const Config::Entry &e : entries) {
    const strata_option_spec *spec = nullptr;
    for (const strata_option_spec *s : specs)
      if (s->name && e.key == s->name) spec = s;
    if (!spec) {
      std::string near = closest_key(e.key, known);
      problems += (problems.empty() ? "" : "\n") + e.origin + ": unknown option '" + e.key +
                  "' (" + unknown_hint +
                  (near.empty() ? ")" : "; did you mean '" + near + "'?)");
      continue;
    }
    Status st = validate_value(*spec, e.value);
    if (!st.ok()) problems += (problems.empty() ? "" : "\n") + e.origin + ": " + st.message();
  }
  return problems.empty() ? Status::OK() : Status::Error(EINVAL, problems);
}

Status validate_config(const Config &cfg, const std::string &entity,
                       const std::vector<const strata_option_spec *> &specs) {
  return validate_entries(cfg.effective(entity), specs,
                          "not a core option and not declared by the selected plugins");
}

ConfigLocation locate_config(const std::string &explicit_path) {
  if (!explicit_path.empty()) return {explicit_path, "--config " + explicit_path};
  ConfigLocation loc;
  const char *env = std::getenv("STRATA_CONF");
  if (env && *env) return {env, "$STRATA_CONF (" + std::string(env) + ")"};
  std::error_code ec;
  if (std::filesystem::exists("strata.conf", ec)) return {"strata.conf", "./strata.conf"};
  loc.looked_at = "no --config/--conf FILE was given, $STRATA_CONF is not set, and there is no "
                  "strata.conf in the current directory (" +
                  std::filesystem::current_path(ec).string() + ")";
  return loc;
}

std::string closest_key(const std::string &key, const std::vector<std::string> &known) {
  // Levenshtein distance, one row at a time.
  auto distance = [](const std::string &a, const std::string &b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      size_t diag = row[0];
      row[0] = i;
      for (size_t j = 1; j <= b.size(); ++j) {
        size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diag = up;
      }
    }
    return row[b.size()];
  };
  std::string best;
  size_t best_d = std::max<size_t>(2, key.size() / 3) + 1;  // farther is not a typo
  for (const std::string &k : known) {
    size_t d = distance(key, k);
    if (d < best_d) {
      best_d = d;
      best = k;
    }
  }
  return best;
}

std::string config_value(const Config &cfg, const std::string &entity,
                         const strata_option_spec &spec) {
  if (auto v = cfg.get(entity, spec.name)) return *v;
  return spec.default_value ? spec.default_value : "";
}

const std::vector<strata_option_spec> &core_store_options() {
  static const std::vector<strata_option_spec> specs = {
      {"plugin_path", STRATA_OPT_STRING, "", nullptr,
       "colon-separated directories searched for plugins before the built-in ones (next to "
       "the binary, then the installed plugin directory)"},
      {"log_level", STRATA_OPT_ENUM, "info", "debug|info|warn|error", "minimum log level"},
      {"store_dir", STRATA_OPT_STRING, "", nullptr, "directory of the object store"},
      {"backend", STRATA_OPT_STRING, "xfs", nullptr, "object-store plugin name"},
      {"journal", STRATA_OPT_STRING, "file", nullptr, "journal plugin name, or none"},
      {"journal_path", STRATA_OPT_STRING, "", nullptr,
       "journal file or device, relative to the store directory unless absolute (default: "
       "journal; tmpfs: /dev/shm/strata-journal-<fsid>)"},
      {"journal_size", STRATA_OPT_INT, "1G", nullptr, "journal capacity at mkfs / swap"},
      {"checkpoint_interval_ms", STRATA_OPT_INT, "2000", nullptr,
       "longest time between backend checkpoints"},
      {"checkpoint_fill_pct", STRATA_OPT_INT, "40", nullptr,
       "checkpoint (and trim) as soon as the journal is this full"},
      {"throttle_fill_pct", STRATA_OPT_INT, "50", nullptr,
       "journal fill at which writers start being slowed to the backend's apply rate"},
      {"stage_threshold", STRATA_OPT_INT, "128K", nullptr,
       "full-object writes at least this large bypass the journal (0 = never)"},
      {"reserve_pct", STRATA_OPT_INT, "2", nullptr,
       "share of the store's filesystem (percent) kept free for the store's own metadata, "
       "journal replay and checkpoints: a staged write that would eat into it is refused "
       "with ENOSPC"},
  };
  return specs;
}

}  // namespace strata

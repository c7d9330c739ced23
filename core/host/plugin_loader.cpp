#include "host/plugin_loader.h"

#include <algorithm>
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <cstdlib>
#include <filesystem>

#include "strata/journal.h"
#include "strata/objectstore.h"
#include "strata/placement.h"

namespace strata::host {

namespace {

// The smallest vtable a plugin of each kind may have: the ABI 1.0 layout.
// A smaller struct_size means a corrupt or foreign descriptor.
size_t min_ops_size(uint32_t kind) {
  switch (kind) {
    case STRATA_KIND_OBJECTSTORE:
      return offsetof(strata_objectstore_ops, stage_write);
    case STRATA_KIND_JOURNAL:
      return sizeof(strata_journal_ops);
    case STRATA_KIND_PLACEMENT:  // first defined in ABI 1.1: up to map()
      return offsetof(strata_placement_ops, map) + sizeof(void *);
    default:
      return sizeof(uint32_t);
  }
}

// The descriptor of ABI 1.0 ends after `n_options`.
constexpr size_t kMinDescriptorSize = offsetof(strata_plugin_descriptor, reserved);

}  // namespace

const char *kind_name(uint32_t kind) {
  switch (kind) {
    case STRATA_KIND_OBJECTSTORE:
      return "backend";
    case STRATA_KIND_JOURNAL:
      return "journal";
    case STRATA_KIND_PLACEMENT:
      return "placement";
    case STRATA_KIND_FRONTEND:
      return "frontend";
    default:
      return "unknown";
  }
}

int kind_from_name(const std::string &name) {
  for (uint32_t k : {STRATA_KIND_OBJECTSTORE, STRATA_KIND_JOURNAL, STRATA_KIND_PLACEMENT,
                     STRATA_KIND_FRONTEND})
    if (name == kind_name(k)) return static_cast<int>(k);
  if (name == "objectstore") return STRATA_KIND_OBJECTSTORE;
  return -1;
}

Result<Plugin> load_plugin(const std::string &path, int expected_kind) {
  auto refuse = [&](const std::string &why) {
    return Status::Error(EINVAL, "plugin " + path + ": " + why);
  };

  auto lib = std::make_shared<boost::dll::shared_library>();
  boost::system::error_code ec;
  // RTLD_LOCAL: plugins must not resolve each other's symbols.
  lib->load(path, ec, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  if (ec) return refuse("cannot be loaded: " + ec.message());
  if (!lib->has(STRATA_PLUGIN_ENTRY_SYMBOL))
    return refuse(std::string("has no entry symbol ") + STRATA_PLUGIN_ENTRY_SYMBOL +
                  " (not a Strata ABI " + std::to_string(STRATA_ABI_MAJOR) +
                  ".x plugin, or built for another major version)");
  auto entry = lib->get<const strata_plugin_descriptor *()>(STRATA_PLUGIN_ENTRY_SYMBOL);
  const strata_plugin_descriptor *d = entry();
  if (!d) return refuse("entry symbol returned no descriptor");
  if (d->struct_size < kMinDescriptorSize)
    return refuse("descriptor too small (" + std::to_string(d->struct_size) + " bytes, expected >= " +
                  std::to_string(kMinDescriptorSize) + ")");
  std::string host_abi =
      std::to_string(STRATA_ABI_MAJOR) + "." + std::to_string(STRATA_ABI_MINOR);
  std::string found_abi = std::to_string(d->abi_major) + "." + std::to_string(d->abi_minor);
  if (d->abi_major != STRATA_ABI_MAJOR)
    return refuse("ABI major mismatch: host speaks " + host_abi + ", plugin was built for " +
                  found_abi);
  if (d->abi_minor > STRATA_ABI_MINOR)
    return refuse("ABI too new: host speaks " + host_abi + ", plugin was built for " + found_abi +
                  " (upgrade the host)");
  if (expected_kind >= 0 && d->kind != static_cast<uint32_t>(expected_kind))
    return refuse(std::string("kind mismatch: expected a ") + kind_name(expected_kind) +
                  " plugin, found a " + kind_name(d->kind) + " plugin named '" +
                  (d->name ? d->name : "?") + "'");
  if (!d->name || !*d->name) return refuse("descriptor has no name");
  if (!d->ops) return refuse("descriptor has no vtable");
  uint32_t ops_size = *static_cast<const uint32_t *>(d->ops);
  if (ops_size < min_ops_size(d->kind))
    return refuse(std::string(kind_name(d->kind)) + " vtable too small: " +
                  std::to_string(ops_size) + " bytes, ABI 1.0 needs " +
                  std::to_string(min_ops_size(d->kind)));

  Plugin p;
  p.path_ = path;
  p.desc_ = d;
  p.library_ = std::move(lib);
  return p;
}

PluginRegistry::PluginRegistry(std::vector<std::string> search_path)
    : search_path_(std::move(search_path)) {}

void PluginRegistry::scan() {
  namespace fs = std::filesystem;
  plugins_.clear();
  refused_.clear();
  for (const std::string &dir : search_path_) {
    std::error_code ec;
    std::vector<std::string> files;
    for (const auto &e : fs::directory_iterator(dir, ec)) {
      std::string fname = e.path().filename().string();
      if (fname.rfind("libstrata_", 0) == 0 && e.path().extension() == ".so")
        files.push_back(e.path().string());
    }
    std::sort(files.begin(), files.end());
    for (const std::string &f : files) {
      Result<Plugin> r = load_plugin(f);
      if (!r.ok()) {
        refused_.push_back({f, r.status().message()});
        continue;
      }
      // Earlier directories on the path win, as with PATH.
      bool shadowed = std::any_of(plugins_.begin(), plugins_.end(), [&](const Plugin &p) {
        return p.kind() == r->kind() && p.name() == r->name();
      });
      if (shadowed)
        refused_.push_back({f, std::string("shadowed by an earlier ") + kind_name(r->kind()) +
                                   " plugin named '" + r->name() + "'"});
      else
        plugins_.push_back(std::move(r.value()));
    }
  }
}

Result<Plugin> PluginRegistry::find(uint32_t kind, const std::string &name) const {
  std::string known;
  for (const Plugin &p : plugins_) {
    if (p.kind() != kind) continue;
    if (p.name() == name) return p;
    known += (known.empty() ? "" : ", ") + p.name();
  }
  std::string path;
  for (const auto &d : search_path_) path += (path.empty() ? "" : ":") + d;
  std::string msg = std::string("no ") + kind_name(kind) + " plugin named '" + name +
                    "' on the plugin path " + path + " (found: " +
                    (known.empty() ? "none" : known) + ")";
  for (const Refused &r : refused_) msg += "; refused " + r.reason;
  return Status::Error(ENOENT, msg);
}

std::vector<std::string> default_plugin_path() {
  std::vector<std::string> out;
  if (const char *env = std::getenv("STRATA_PLUGIN_PATH"); env && *env) {
    std::string s = env;
    size_t start = 0;
    while (start <= s.size()) {
      size_t colon = s.find(':', start);
      if (colon == std::string::npos) colon = s.size();
      if (colon > start) out.push_back(s.substr(start, colon - start));
      start = colon + 1;
    }
    return out;
  }
  boost::system::error_code ec;
  auto exe_dir = boost::dll::program_location(ec).parent_path();
  if (!ec) {
    out.push_back((exe_dir.parent_path() / "plugins").string());
    out.push_back((exe_dir.parent_path() / "lib" / "strata" / "plugins").string());
  }
  return out;
}

}  // namespace strata::host

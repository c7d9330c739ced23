// Loading plugin shared objects and checking their descriptors.
//
// A plugin is refused, with one line naming the file and the expected and
// found values, when: the file cannot be loaded, the entry symbol is missing,
// the ABI major differs, the ABI minor is newer than the host's, the kind is
// not the one asked for, the kind is newer than the ABI minor it claims (a
// frontend needs 1.3), its vtable is smaller than the first layout of its
// kind, it declares options without an options array (NULL with 0 is fine),
// or a function slot the host calls unconditionally is NULL (named in the
// message). A registry lookup that finds the name only under another kind
// says so ("'kv' is a backend plugin, not a frontend plugin").
// A file that dlopen refuses is reported with dlerror()'s text.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "strata/plugin.h"

namespace strata::host {

const char *kind_name(uint32_t kind);          // "backend", "journal", ...
int kind_from_name(const std::string &name);   // -1 if unknown

// A loaded plugin. Copies share the library handle: the library stays mapped
// while any copy (or any object created through it that holds a copy) lives.
class Plugin {
 public:
  const std::string &path() const { return path_; }
  const strata_plugin_descriptor &descriptor() const { return *desc_; }
  uint32_t kind() const { return desc_->kind; }
  std::string name() const { return desc_->name; }
  std::string version() const { return desc_->version ? desc_->version : "?"; }
  uint16_t abi_minor() const { return desc_->abi_minor; }
  // The kind-specific vtable; the caller checks kind() first.
  template <class Ops>
  const Ops *ops() const { return static_cast<const Ops *>(desc_->ops); }
  // The vtable's struct_size: fields past it are absent (older minor).
  uint32_t ops_size() const { return *static_cast<const uint32_t *>(desc_->ops); }

 private:
  friend Result<Plugin> load_plugin(const std::string &path, int expected_kind);
  std::string path_;
  std::shared_ptr<void> library_;  // the dlopen handle; dlclose'd with the last copy
  const strata_plugin_descriptor *desc_ = nullptr;
};

// Loads one file. expected_kind < 0 accepts any kind.
Result<Plugin> load_plugin(const std::string &path, int expected_kind = -1);

// Plugins found on a search path (directories, scanned for
// libstrata_*.so). Refused files are kept with their reason for listing.
class PluginRegistry {
 public:
  struct Refused {
    std::string path;
    std::string reason;
  };

  explicit PluginRegistry(std::vector<std::string> search_path);
  // Scans the search path; returns the plugins that loaded.
  void scan();
  const std::vector<Plugin> &plugins() const { return plugins_; }
  const std::vector<Refused> &refused() const { return refused_; }
  // The plugin of that kind and name, or an error listing what exists.
  Result<Plugin> find(uint32_t kind, const std::string &name) const;
  const std::vector<std::string> &search_path() const { return search_path_; }

 private:
  std::vector<std::string> search_path_;
  std::vector<Plugin> plugins_;
  std::vector<Refused> refused_;
};

// The default search path: the directories of $STRATA_PLUGIN_PATH
// (colon-separated) first, then, with D the directory of the file holding
// this code (the executable, or libstrata_client.so for a program linked
// against it): D/../plugins, D/../lib/strata/plugins, D/strata/plugins;
// then the same first two relative to the running executable; then the
// installed plugin directory (<prefix>/<libdir>/strata/plugins). See
// host/plugin_path.h for the directories a user adds in front.
std::vector<std::string> default_plugin_path();

// The directories of a colon-separated list ("a:b::c" -> a, b, c; empty
// entries are skipped), as plugin_path and $STRATA_PLUGIN_PATH give them.
std::vector<std::string> split_plugin_path(const std::string &colon_list);

}  // namespace strata::host

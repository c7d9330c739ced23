#include "host/plugin_loader.h"

#include <dlfcn.h>

#include <algorithm>
#include <boost/dll/runtime_symbol_info.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "host/plugin_path.h"
#include "strata/frontend.h"
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
    case STRATA_KIND_FRONTEND:  // first defined in ABI 1.3: up to metrics()
      return offsetof(strata_frontend_ops, metrics) + sizeof(void *);
    default:
      return sizeof(uint32_t);
  }
}

// One function pointer of a vtable the host calls without checking it.
struct RequiredSlot {
  const char *name;
  size_t offset;
};

#define STRATA_SLOT(ops, field) RequiredSlot{#field, offsetof(ops, field)}

// The slots every plugin of a kind must fill. What the headers call
// optional stays out: the staged-write functions of a backend (used only
// with STRATA_OS_CAP_STAGED_WRITES, checked then) and stage_release (ABI
// 1.2; the host checks it before each call).
std::vector<RequiredSlot> required_slots(uint32_t kind) {
  using os = strata_objectstore_ops;
  using jr = strata_journal_ops;
  using pl = strata_placement_ops;
  using fe = strata_frontend_ops;
  switch (kind) {
    case STRATA_KIND_OBJECTSTORE:
      return {STRATA_SLOT(os, mkfs),          STRATA_SLOT(os, open),
              STRATA_SLOT(os, close),         STRATA_SLOT(os, capabilities),
              STRATA_SLOT(os, apply),         STRATA_SLOT(os, checkpoint),
              STRATA_SLOT(os, committed_seq), STRATA_SLOT(os, read),
              STRATA_SLOT(os, stat),          STRATA_SLOT(os, getxattr),
              STRATA_SLOT(os, getxattrs),     STRATA_SLOT(os, omap_get_header),
              STRATA_SLOT(os, omap_get),      STRATA_SLOT(os, omap_iterate),
              STRATA_SLOT(os, list_objects),  STRATA_SLOT(os, list_collections),
              STRATA_SLOT(os, usage),         STRATA_SLOT(os, fsck)};
    case STRATA_KIND_JOURNAL:
      return {STRATA_SLOT(jr, create), STRATA_SLOT(jr, open),   STRATA_SLOT(jr, close),
              STRATA_SLOT(jr, capabilities), STRATA_SLOT(jr, replay), STRATA_SLOT(jr, append),
              STRATA_SLOT(jr, trim),   STRATA_SLOT(jr, flush),  STRATA_SLOT(jr, stat),
              STRATA_SLOT(jr, destroy)};
    case STRATA_KIND_PLACEMENT:
      return {STRATA_SLOT(pl, capabilities), STRATA_SLOT(pl, create), STRATA_SLOT(pl, destroy),
              STRATA_SLOT(pl, map)};
    case STRATA_KIND_FRONTEND:
      return {STRATA_SLOT(fe, start), STRATA_SLOT(fe, stop), STRATA_SLOT(fe, status),
              STRATA_SLOT(fe, metrics)};
    default:
      return {};
  }
}

#undef STRATA_SLOT

// The first required slot that is NULL, or nullptr when all are filled.
// Every required slot lies within the minimum vtable size checked before.
const char *first_null_slot(uint32_t kind, const void *ops) {
  for (const RequiredSlot &s : required_slots(kind)) {
    void *fn = nullptr;
    std::memcpy(&fn, static_cast<const char *>(ops) + s.offset, sizeof fn);
    if (!fn) return s.name;
  }
  return nullptr;
}

// dlopen's own explanation (no such file, not ELF, a missing dependency).
std::string last_dl_error() {
  const char *e = dlerror();
  return e ? e : "unknown dlopen error";
}

// The ABI minor that introduced a kind: a descriptor claiming the kind with
// an older minor is corrupt (its vtable cannot be the one the host reads).
uint16_t kind_since_minor(uint32_t kind) {
  return kind == STRATA_KIND_FRONTEND ? 3 : 0;
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

  // dlopen directly rather than through Boost.DLL, which resets dlerror()
  // and reports every failure as "Bad file descriptor".
  // RTLD_LOCAL: plugins must not resolve each other's symbols.
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) return refuse("cannot be loaded: " + last_dl_error());
  std::shared_ptr<void> lib(handle, [](void *h) { dlclose(h); });
  dlerror();
  void *sym = dlsym(handle, STRATA_PLUGIN_ENTRY_SYMBOL);
  if (!sym)
    return refuse(std::string("has no entry symbol ") + STRATA_PLUGIN_ENTRY_SYMBOL +
                  " (not a Strata ABI " + std::to_string(STRATA_ABI_MAJOR) +
                  ".x plugin, or built for another major version)");
  using EntryFn = const strata_plugin_descriptor *(*)();
  auto entry = reinterpret_cast<EntryFn>(sym);
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
  if (d->abi_minor < kind_since_minor(d->kind))
    return refuse(std::string("the ") + kind_name(d->kind) + " kind needs ABI " +
                  std::to_string(STRATA_ABI_MAJOR) + "." +
                  std::to_string(kind_since_minor(d->kind)) + " or newer, plugin was built for " +
                  found_abi);
  if (!d->name || !*d->name) return refuse("descriptor has no name");
  if (!d->ops) return refuse("descriptor has no vtable");
  if (!d->options && d->n_options != 0)
    return refuse("descriptor declares " + std::to_string(d->n_options) +
                  " options but gives no options array (a plugin without options gives NULL "
                  "and 0)");
  uint32_t ops_size = *static_cast<const uint32_t *>(d->ops);
  if (ops_size < min_ops_size(d->kind))
    return refuse(std::string(kind_name(d->kind)) + " vtable too small: " +
                  std::to_string(ops_size) + " bytes, ABI 1.0 needs " +
                  std::to_string(min_ops_size(d->kind)));
  if (const char *slot = first_null_slot(d->kind, d->ops))
    return refuse(std::string(kind_name(d->kind)) + " vtable has no " + slot +
                  " function (a required slot is NULL)");

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
  std::string known, other_kinds;
  for (const Plugin &p : plugins_) {
    if (p.kind() != kind) {
      // A plugin of another kind by that name: say so, it is the likely mix-up.
      if (p.name() == name)
        other_kinds += std::string("; '") + name + "' is a " + kind_name(p.kind()) +
                       " plugin (" + p.path() + "), not a " + kind_name(kind) + " plugin";
      continue;
    }
    if (p.name() == name) return p;
    known += (known.empty() ? "" : ", ") + p.name();
  }
  std::string path;
  for (const auto &d : search_path_) path += (path.empty() ? "" : ":") + d;
  std::string msg = std::string("no ") + kind_name(kind) + " plugin named '" + name +
                    "' on the plugin path " + path + " (found: " +
                    (known.empty() ? "none" : known) + ")" + other_kinds;
  for (const Refused &r : refused_) msg += "; refused " + r.reason;
  return Status::Error(ENOENT, msg);
}

namespace {

// The file this code was loaded from: the executable when the host is
// linked in statically (strata, the daemons), libstrata_client.so when it is
// inside the shared client library, whatever program loaded that.
std::filesystem::path this_code_file() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void *>(&default_plugin_path), &info) == 0 ||
      !info.dli_fname || !*info.dli_fname)
    return {};
  std::error_code ec;
  std::filesystem::path p = std::filesystem::canonical(info.dli_fname, ec);
  return ec ? std::filesystem::path(info.dli_fname) : p;
}

}  // namespace

std::vector<std::string> split_plugin_path(const std::string &colon_list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= colon_list.size()) {
    size_t colon = colon_list.find(':', start);
    if (colon == std::string::npos) colon = colon_list.size();
    if (colon > start) out.push_back(colon_list.substr(start, colon - start));
    start = colon + 1;
  }
  return out;
}

std::vector<std::string> default_plugin_path() {
  std::vector<std::string> out;
  auto add = [&](const std::filesystem::path &p) {
    std::string s = p.lexically_normal().string();
    if (!s.empty() && std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  };
  if (const char *env = std::getenv("STRATA_PLUGIN_PATH"); env && *env)
    for (const std::string &d : split_plugin_path(env)) add(d);
  // Relative to the binary that holds this code, not to the program that
  // runs it: a program linked against libstrata_client.so finds the
  // plugins beside the library wherever the program itself lives.
  std::filesystem::path code = this_code_file();
  if (!code.empty()) {
    std::filesystem::path dir = code.parent_path();
    add(dir.parent_path() / "plugins");                 // build tree: bin/ or lib/ -> plugins/
    add(dir.parent_path() / "lib" / "strata" / "plugins");  // installed program: bin/ -> lib/
    add(dir / "strata" / "plugins");                    // installed library: lib/ -> lib/strata/
  }
  boost::system::error_code ec;
  auto exe = boost::dll::program_location(ec);
  if (!ec) {
    std::filesystem::path exe_dir = std::filesystem::path(exe.string()).parent_path();
    add(exe_dir.parent_path() / "plugins");
    add(exe_dir.parent_path() / "lib" / "strata" / "plugins");
  }
#ifdef STRATA_INSTALLED_PLUGIN_DIR
  add(STRATA_INSTALLED_PLUGIN_DIR);
#endif
  return out;
}

std::vector<std::string> plugin_search_path(const std::string &extra) {
  std::vector<std::string> out = split_plugin_path(extra);
  for (std::string &d : default_plugin_path())
    if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(std::move(d));
  return out;
}

}  // namespace strata::host

// RAII owners of one open backend or journal instance: the plugin (which
// keeps its library mapped), the C handle, the host services given to it,
// and the open arguments' storage. Calls into the vtable go through these so
// that "is this 1.1 function present" is answered in one place.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/log.h"
#include "common/status.h"
#include "host/plugin_loader.h"
#include "store/store_meta.h"
#include "strata/journal.h"
#include "strata/objectstore.h"

namespace strata::store {

// Who a journal belongs to: its store's fsid and directory (ABI 1.3
// strata_open_args owner_id/owner_path).
struct JournalOwner {
  std::string fsid;
  std::string dir;
};

// Owns the strings a strata_open_args points into.
class OpenArgsHolder {
 public:
  OpenArgsHolder(std::string path, const OptionList &options, const strata_host_services *host);
  const strata_open_args *get() const { return &args_; }
  // Fills owner_id/owner_path for a plugin of ABI minor >= 3 (older ones
  // were promised NULL in those slots).
  void set_owner(const host::Plugin &p, const JournalOwner &owner);

 private:
  std::string path_;
  std::string owner_id_, owner_path_;
  std::vector<std::pair<std::string, std::string>> options_;
  std::vector<strata_kv> kvs_;
  strata_open_args args_{};
};

class BackendInstance {
 public:
  static Status mkfs(const host::Plugin &p, const std::string &path, const OptionList &options,
                     Logger &log);
  static Result<std::unique_ptr<BackendInstance>> open(const host::Plugin &p,
                                                       const std::string &path,
                                                       const OptionList &options, Logger &log);
  ~BackendInstance();

  const strata_objectstore_ops *ops() const { return ops_; }
  strata_objectstore *handle() const { return h_; }
  uint64_t caps() const { return caps_; }
  bool has_staged_writes() const;
  bool has_stage_release() const;  // ABI 1.2
  const std::string &name() const { return name_; }

 private:
  BackendInstance() = default;
  host::Plugin plugin_;
  std::string name_;
  std::unique_ptr<PluginLogBridge> log_;
  std::unique_ptr<OpenArgsHolder> args_;
  const strata_objectstore_ops *ops_ = nullptr;
  strata_objectstore *h_ = nullptr;
  uint64_t caps_ = 0;
};

class JournalInstance {
 public:
  static Status create(const host::Plugin &p, const std::string &path, uint64_t capacity,
                       const OptionList &options, const JournalOwner &owner, Logger &log);
  static Status destroy(const host::Plugin &p, const std::string &path,
                        const OptionList &options, Logger &log);
  static Result<std::unique_ptr<JournalInstance>> open(const host::Plugin &p,
                                                       const std::string &path,
                                                       const OptionList &options,
                                                       const JournalOwner &owner, Logger &log);
  ~JournalInstance();
  // The plugin records its store and refuses another (ABI 1.3).
  bool checks_owner() const { return caps_ & STRATA_JOURNAL_CAP_OWNER_CHECK; }

  const strata_journal_ops *ops() const { return ops_; }
  strata_journal *handle() const { return h_; }
  uint64_t caps() const { return caps_; }
  const std::string &name() const { return name_; }
  const std::string &path() const { return path_; }
  strata_journal_stat stat() const;

 private:
  JournalInstance() = default;
  host::Plugin plugin_;
  std::string name_, path_;
  std::unique_ptr<PluginLogBridge> log_;
  std::unique_ptr<OpenArgsHolder> args_;
  const strata_journal_ops *ops_ = nullptr;
  strata_journal *h_ = nullptr;
  uint64_t caps_ = 0;
};

// The plugin's declared options with defaults filled in and overridden by
// `given` (already validated by the caller).
OptionList plugin_options_with_defaults(const host::Plugin &p, const OptionList &given);

}  // namespace strata::store

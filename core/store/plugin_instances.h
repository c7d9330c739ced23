// RAII owners of one open backend or journal instance: the plugin (which
// keeps its library mapped), the C handle, the host services given to it,
// and the open arguments' storage. Calls into the vtable go through these so
// that "is this 1.1 function present" is answered in one place, and so that
// the ABI 1.3 rules hold whatever the plugin's minor: transactions carry
// their op stride and never a host-only op, control answers -EOPNOTSUPP for
// a plugin without the slot, visitors follow plugin.h's convention, and no
// exception a host visitor throws crosses into the plugin (it is rethrown
// here once the plugin has returned; see host/host_callback.h).
#pragma once

#include <memory>
#include <optional>
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

  // Applies `ops` as transaction `seq`. Refuses, without calling the
  // plugin, a transaction holding a host-only op type (STRATA_OP_HOST_MIN
  // and up): -EINVAL naming the op.
  int apply(uint64_t seq, const std::vector<strata_op> &ops, uint32_t flags,
            strata_err *err) const;
  // The ABI 1.3 control call; -EOPNOTSUPP when the plugin has none.
  int control(int op, void *arg, strata_err *err) const;
  // STRATA_OS_CTL_CHECKSUM_FAILURES; nullopt when the backend does not say.
  std::optional<uint64_t> checksum_failures() const;

  // The visiting read calls. `fn` may throw: the exception is rethrown
  // here after the plugin returned.
  using NameFn = int (*)(void *ctx, strata_slice name);
  using KvFn = int (*)(void *ctx, strata_slice key, strata_slice value);
  int getxattrs(strata_slice coll, strata_slice oid, KvFn fn, void *ctx, strata_err *err) const;
  int omap_iterate(strata_slice coll, strata_slice oid, strata_slice start_after,
                   strata_slice end, uint64_t limit, KvFn fn, void *ctx, strata_err *err) const;
  int list_objects(strata_slice coll, strata_slice start_after, uint64_t limit, NameFn fn,
                   void *ctx, strata_err *err) const;
  int list_collections(NameFn fn, void *ctx, strata_err *err) const;

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

  // replay() with a host visitor that may throw (rethrown here) or stop
  // with any non-zero value (returned, also by a journal older than 1.3).
  using RecordFn = int (*)(void *ctx, uint64_t seq, const void *data, size_t len);
  int replay(uint64_t after_seq, RecordFn fn, void *ctx, strata_journal_replay_result *result,
             strata_err *err) const;
  // on_durable runs on a journal thread: its type says it cannot throw.
  using DoneFn = void (*)(void *arg, int rc) noexcept;
  int append(uint64_t seq, const void *data, size_t len, DoneFn on_durable, void *arg,
             strata_err *err) const;
  // The ABI 1.3 control call; -EOPNOTSUPP when the plugin has none.
  int control(int op, void *arg, strata_err *err) const;

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

#include "store/plugin_instances.h"

#include <cstddef>
#include <cstdio>

#include "host/host_callback.h"

namespace strata::store {

OpenArgsHolder::OpenArgsHolder(std::string path, const OptionList &options,
                               const strata_host_services *host)
    : path_(std::move(path)), options_(options.begin(), options.end()) {
  for (const auto &[k, v] : options_) kvs_.push_back({k.c_str(), v.c_str()});
  args_.struct_size = sizeof args_;
  args_.path = path_.c_str();
  args_.options = kvs_.data();
  args_.n_options = kvs_.size();
  args_.host = host;
}

void OpenArgsHolder::set_owner(const host::Plugin &p, const JournalOwner &owner) {
  if (p.abi_minor() < 3 || owner.fsid.empty()) return;
  owner_id_ = owner.fsid;
  owner_path_ = owner.dir;
  args_.owner_id = owner_id_.c_str();
  args_.owner_path = owner_path_.c_str();
}

OptionList plugin_options_with_defaults(const host::Plugin &p, const OptionList &given) {
  OptionList out;
  const strata_plugin_descriptor &d = p.descriptor();
  for (size_t i = 0; i < d.n_options; ++i) {
    const strata_option_spec &s = d.options[i];
    if (!s.name) continue;
    std::string value = s.default_value ? s.default_value : "";
    for (const auto &[k, v] : given)
      if (k == s.name) value = v;
    out.emplace_back(s.name, value);
  }
  return out;
}

namespace {
Status plugin_error(int rc, const strata_err &e, const std::string &what) {
  return Status::Error(rc, what + ": " + (e.msg[0] ? std::string(e.msg) : std::string("failed")));
}

// Whether the vtable of `p` (of struct_size bytes) has a non-NULL `slot`.
template <class Ops, class Slot>
bool has_slot(const host::Plugin &p, const Ops *ops, Slot Ops::*slot) {
  const size_t end = static_cast<size_t>(reinterpret_cast<const char *>(&(ops->*slot)) -
                                         reinterpret_cast<const char *>(ops)) +
                     sizeof(Slot);
  return p.ops_size() >= end && ops->*slot != nullptr;
}

void set_err(strata_err *err, const std::string &msg) {
  if (err) std::snprintf(err->msg, sizeof err->msg, "%s", msg.c_str());
}

// A plugin of minor < 3 steps through the ops by its own sizeof(strata_op),
// the 1.2 layout: the day strata_op grows, the host must repack for it.
static_assert(sizeof(strata_op) == STRATA_OP_SIZE_1_2,
              "strata_op grew: pass plugins of minor < 3 ops of the 1.2 layout");
}  // namespace

Status BackendInstance::mkfs(const host::Plugin &p, const std::string &path,
                             const OptionList &options, Logger &log) {
  PluginLogBridge bridge(log, "backend " + p.name());
  OpenArgsHolder args(path, options, bridge.services());
  strata_err err{};
  int rc = p.ops<strata_objectstore_ops>()->mkfs(args.get(), &err);
  if (rc < 0) return plugin_error(rc, err, "mkfs of " + p.name() + " backend at " + path);
  return Status::OK();
}

Result<std::unique_ptr<BackendInstance>> BackendInstance::open(const host::Plugin &p,
                                                               const std::string &path,
                                                               const OptionList &options,
                                                               Logger &log) {
  std::unique_ptr<BackendInstance> b(new BackendInstance);
  b->plugin_ = p;
  b->name_ = p.name();
  b->log_ = std::make_unique<PluginLogBridge>(log, "backend " + p.name());
  b->args_ = std::make_unique<OpenArgsHolder>(path, options, b->log_->services());
  b->ops_ = p.ops<strata_objectstore_ops>();
  strata_err err{};
  int rc = b->ops_->open(b->args_->get(), &b->h_, &err);
  if (rc < 0) return plugin_error(rc, err, "opening " + p.name() + " backend at " + path);
  b->caps_ = b->ops_->capabilities(b->h_);
  return b;
}

bool BackendInstance::has_staged_writes() const {
  return (caps_ & STRATA_OS_CAP_STAGED_WRITES) &&
         has_slot(plugin_, ops_, &strata_objectstore_ops::stage_write) &&
         has_slot(plugin_, ops_, &strata_objectstore_ops::stage_release_unused);
}

bool BackendInstance::has_stage_release() const {
  return has_staged_writes() && has_slot(plugin_, ops_, &strata_objectstore_ops::stage_release);
}

int BackendInstance::apply(uint64_t seq, const std::vector<strata_op> &ops, uint32_t flags,
                           strata_err *err) const {
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i].type >= STRATA_OP_HOST_MIN) {
      set_err(err, "txn " + std::to_string(seq) + " op " + std::to_string(i) + ": op type " +
                       std::to_string(ops[i].type) +
                       " is host-internal and never passed to a backend");
      return -EINVAL;
    }
  strata_txn txn{};
  txn.seq = seq;
  txn.ops = ops.data();
  txn.n_ops = ops.size();
  txn.flags = flags;
  txn.op_size = sizeof(strata_op);
  return ops_->apply(h_, &txn, err);
}

int BackendInstance::control(int op, void *arg, strata_err *err) const {
  if (!has_slot(plugin_, ops_, &strata_objectstore_ops::control)) return -EOPNOTSUPP;
  return ops_->control(h_, op, arg, err);
}

std::optional<uint64_t> BackendInstance::checksum_failures() const {
  uint64_t n = 0;
  strata_err err{};
  if (control(STRATA_OS_CTL_CHECKSUM_FAILURES, &n, &err) != 0) return std::nullopt;
  return n;
}

int BackendInstance::getxattrs(strata_slice coll, strata_slice oid, KvFn fn, void *ctx,
                               strata_err *err) const {
  host::Visit<strata_slice, strata_slice> v(fn, ctx);
  return v.finish(ops_->getxattrs(h_, coll, oid, &v.call, v.cookie(), err));
}

int BackendInstance::omap_iterate(strata_slice coll, strata_slice oid, strata_slice start_after,
                                  strata_slice end, uint64_t limit, KvFn fn, void *ctx,
                                  strata_err *err) const {
  host::Visit<strata_slice, strata_slice> v(fn, ctx);
  return v.finish(
      ops_->omap_iterate(h_, coll, oid, start_after, end, limit, &v.call, v.cookie(), err));
}

int BackendInstance::list_objects(strata_slice coll, strata_slice start_after, uint64_t limit,
                                  NameFn fn, void *ctx, strata_err *err) const {
  host::Visit<strata_slice> v(fn, ctx);
  return v.finish(ops_->list_objects(h_, coll, start_after, limit, &v.call, v.cookie(), err));
}

int BackendInstance::list_collections(NameFn fn, void *ctx, strata_err *err) const {
  host::Visit<strata_slice> v(fn, ctx);
  return v.finish(ops_->list_collections(h_, &v.call, v.cookie(), err));
}

BackendInstance::~BackendInstance() {
  if (h_) ops_->close(h_);
}

Status JournalInstance::create(const host::Plugin &p, const std::string &path, uint64_t capacity,
                               const OptionList &options, const JournalOwner &owner,
                               Logger &log) {
  PluginLogBridge bridge(log, "journal " + p.name());
  OpenArgsHolder args(path, options, bridge.services());
  args.set_owner(p, owner);
  strata_err err{};
  int rc = p.ops<strata_journal_ops>()->create(args.get(), capacity, &err);
  if (rc < 0) return plugin_error(rc, err, "creating " + p.name() + " journal at " + path);
  return Status::OK();
}

Status JournalInstance::destroy(const host::Plugin &p, const std::string &path,
                                const OptionList &options, Logger &log) {
  PluginLogBridge bridge(log, "journal " + p.name());
  OpenArgsHolder args(path, options, bridge.services());
  strata_err err{};
  int rc = p.ops<strata_journal_ops>()->destroy(args.get(), &err);
  if (rc < 0) return plugin_error(rc, err, "removing " + p.name() + " journal at " + path);
  return Status::OK();
}

Result<std::unique_ptr<JournalInstance>> JournalInstance::open(const host::Plugin &p,
                                                               const std::string &path,
                                                               const OptionList &options,
                                                               const JournalOwner &owner,
                                                               Logger &log) {
  std::unique_ptr<JournalInstance> j(new JournalInstance);
  j->plugin_ = p;
  j->name_ = p.name();
  j->path_ = path;
  j->log_ = std::make_unique<PluginLogBridge>(log, "journal " + p.name());
  j->args_ = std::make_unique<OpenArgsHolder>(path, options, j->log_->services());
  j->args_->set_owner(p, owner);
  j->ops_ = p.ops<strata_journal_ops>();
  strata_err err{};
  int rc = j->ops_->open(j->args_->get(), &j->h_, &err);
  if (rc < 0) return plugin_error(rc, err, "opening " + p.name() + " journal at " + path);
  j->caps_ = j->ops_->capabilities(j->h_);
  return j;
}

strata_journal_stat JournalInstance::stat() const {
  strata_journal_stat s{};
  s.struct_size = sizeof s;
  ops_->stat(h_, &s);
  return s;
}

int JournalInstance::replay(uint64_t after_seq, RecordFn fn, void *ctx,
                            strata_journal_replay_result *result, strata_err *err) const {
  host::Visit<uint64_t, const void *, size_t> v(fn, ctx);
  return v.finish(ops_->replay(h_, after_seq, &v.call_abort_on_stop, v.cookie(), result, err));
}

int JournalInstance::append(uint64_t seq, const void *data, size_t len, DoneFn on_durable,
                            void *arg, strata_err *err) const {
  return ops_->append(h_, seq, data, len, on_durable, arg, err);
}

int JournalInstance::control(int op, void *arg, strata_err *err) const {
  if (!has_slot(plugin_, ops_, &strata_journal_ops::control)) return -EOPNOTSUPP;
  return ops_->control(h_, op, arg, err);
}

JournalInstance::~JournalInstance() {
  if (h_) ops_->close(h_);
}

}  // namespace strata::store

#include "store/plugin_instances.h"

#include <cstddef>

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
         plugin_.ops_size() >= offsetof(strata_objectstore_ops, stage_release_unused) +
                                   sizeof(ops_->stage_release_unused) &&
         ops_->stage_write && ops_->stage_release_unused;
}

bool BackendInstance::has_stage_release() const {
  return has_staged_writes() &&
         plugin_.ops_size() >= offsetof(strata_objectstore_ops, stage_release) +
                                   sizeof(ops_->stage_release) &&
         ops_->stage_release;
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

JournalInstance::~JournalInstance() {
  if (h_) ops_->close(h_);
}

}  // namespace strata::store

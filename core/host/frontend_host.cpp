#include "host/frontend_host.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/config.h"

namespace strata::host {

struct FrontendHostState {
  Logger *log = nullptr;
  std::string component;  // "frontend <name>"
  int event_fd = -1;
  std::atomic<bool> stop_requested{false};
  std::atomic<int> stop_result{0};
  std::mutex mu;
  std::string stop_reason;  // GUARDED_BY(mu); from the first request

  ~FrontendHostState() {
    if (event_fd >= 0) ::close(event_fd);
  }
};

namespace {

// The callbacks run on plugin threads: nothing may escape into the plugin.
// A message lost to a failed allocation is better than std::terminate.
void host_log(void *ctx, int level, const char *msg) noexcept {
  try {
    if (!ctx || !msg) return;
    auto *s = static_cast<FrontendHostState *>(ctx);
    if (level < STRATA_LOG_DEBUG) level = STRATA_LOG_DEBUG;
    if (level > STRATA_LOG_ERROR) level = STRATA_LOG_ERROR;
    s->log->log(level, s->component, msg);
  } catch (...) {
  }
}

void host_request_stop(void *ctx, int result, const char *reason) noexcept {
  if (!ctx) return;
  auto *s = static_cast<FrontendHostState *>(ctx);
  bool first = false;
  {
    std::lock_guard lk(s->mu);
    if (!s->stop_requested.load()) {
      first = true;
      s->stop_result.store(result);
      try {
        s->stop_reason = reason ? reason : "";
      } catch (...) {
        // Without its reason the request still stops the frontend.
      }
      s->stop_requested.store(true);
    }
  }
  if (!first) return;
  uint64_t one = 1;
  // An eventfd write only fails on counter overflow, which one write per
  // instance cannot reach.
  [[maybe_unused]] ssize_t n = ::write(s->event_fd, &one, sizeof one);
}

std::string plugin_message(const strata_err &err) {
  size_t n = strnlen(err.msg, sizeof err.msg);
  return n ? std::string(err.msg, n) : std::string("no message");
}

// Upper bound on one status or metrics answer: a plugin claiming more is
// broken, not verbose.
constexpr size_t kMaxText = 64u << 20;

// Calls `fill(buf, len)` (snprintf-like) with a growing buffer until the
// whole text fits. The text may grow between calls, hence the loop.
template <class Fill>
Result<std::string> read_text(const std::string &what, Fill fill) {
  std::string buf(4096, '\0');
  for (int attempt = 0; attempt < 8; ++attempt) {
    int64_t n = fill(buf.data(), buf.size());
    if (n < 0) return Status::Error(int(n), what + " failed: " + std::strerror(int(-n)));
    if (size_t(n) > kMaxText)
      return Status::Error(EMSGSIZE, what + " claims " + std::to_string(n) + " bytes (limit " +
                                         std::to_string(kMaxText) + ")");
    if (size_t(n) < buf.size()) {
      buf.resize(size_t(n));
      return buf;
    }
    buf.assign(size_t(n) + 1 + size_t(n) / 4, '\0');
  }
  return Status::Error(EAGAIN, what + " kept growing faster than its buffer");
}

}  // namespace

bool plugin_declares_option(const Plugin &p, const std::string &key) {
  const strata_plugin_descriptor &d = p.descriptor();
  for (size_t i = 0; i < d.n_options; ++i)
    if (d.options && d.options[i].name && key == d.options[i].name) return true;
  return false;
}

Result<PluginOptions> resolve_plugin_options(const Plugin &p, const PluginOptions &given) {
  const strata_plugin_descriptor &d = p.descriptor();
  std::string what = std::string(kind_name(p.kind())) + " plugin '" + p.name() + "'";
  for (const auto &[key, value] : given) {
    if (plugin_declares_option(p, key)) continue;
    std::string takes;
    for (size_t i = 0; i < d.n_options; ++i)
      if (d.options[i].name) takes += (takes.empty() ? "" : ", ") + std::string(d.options[i].name);
    return Status::Error(EINVAL, "unknown option '" + key + "' for " + what +
                                     " (it takes: " + (takes.empty() ? "no options" : takes) + ")");
  }
  PluginOptions out;
  for (size_t i = 0; i < d.n_options; ++i) {
    const strata_option_spec &spec = d.options[i];
    if (!spec.name) continue;
    std::string value = spec.default_value ? spec.default_value : "";
    bool set = false;
    for (const auto &[key, v] : given)
      if (key == spec.name) {
        value = v;  // the last one given wins, as with --set
        set = true;
      }
    if (set)
      if (Status st = validate_value(spec, value); !st.ok()) return st.Context(what);
    out.emplace_back(spec.name, value);
  }
  return out;
}

Result<std::unique_ptr<FrontendInstance>> FrontendInstance::start(const Plugin &p,
                                                                  strata_cluster_t cluster,
                                                                  const strata_client_api *client,
                                                                  const PluginOptions &options,
                                                                  Logger &log) {
  std::unique_ptr<FrontendInstance> fi(new FrontendInstance());
  fi->plugin_ = p;
  fi->name_ = p.name();
  fi->ops_ = p.ops<strata_frontend_ops>();
  fi->state_ = std::make_unique<FrontendHostState>();
  fi->state_->log = &log;
  fi->state_->component = "frontend " + p.name();
  fi->state_->event_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fi->state_->event_fd < 0)
    return Status::Error(errno, "frontend " + p.name() + ": eventfd: " + std::strerror(errno));

  fi->host_.struct_size = sizeof fi->host_;
  fi->host_.ctx = fi->state_.get();
  fi->host_.log = host_log;
  fi->host_.request_stop = host_request_stop;
  fi->host_.client = client;

  std::vector<strata_kv> kvs;
  for (const auto &[k, v] : options) kvs.push_back({k.c_str(), v.c_str()});
  strata_frontend_args args{};
  args.struct_size = sizeof args;
  args.options = kvs.data();
  args.n_options = kvs.size();
  args.instance_name = fi->name_.c_str();

  strata_err err{};
  strata_frontend *fe = nullptr;
  int rc = fi->ops_->start(&fi->host_, cluster, &args, &fe, &err);
  if (rc < 0)
    return Status::Error(rc, "starting frontend " + p.name() + ": " + plugin_message(err));
  if (!fe)
    return Status::Error(
        EPROTO, "starting frontend " + p.name() + ": start() succeeded but returned no instance");
  fi->fe_ = fe;
  fi->stopped_ = false;
  return fi;
}

FrontendInstance::~FrontendInstance() {
  if (stopped_) return;
  Status st = stop();
  if (!st.ok() && state_) state_->log->error(state_->component, st.ToString());
}

Status FrontendInstance::stop() {
  if (stopped_) return Status::OK();
  stopped_ = true;
  strata_err err{};
  int rc = ops_->stop(fe_, &err);
  fe_ = nullptr;
  if (rc < 0) return Status::Error(rc, "stopping frontend " + name_ + ": " + plugin_message(err));
  return Status::OK();
}

Result<std::string> FrontendInstance::status(uint32_t format) const {
  if (stopped_) return Status::Error(EINVAL, "frontend " + name_ + " is not running");
  return read_text("status of frontend " + name_,
                   [&](char *buf, size_t len) { return ops_->status(fe_, format, buf, len); });
}

Result<std::string> FrontendInstance::metrics() const {
  if (stopped_) return Status::Error(EINVAL, "frontend " + name_ + " is not running");
  return read_text("metrics of frontend " + name_,
                   [&](char *buf, size_t len) { return ops_->metrics(fe_, buf, len); });
}

int FrontendInstance::stop_request_fd() const { return state_->event_fd; }

std::optional<StopRequest> FrontendInstance::stop_request() const {
  if (!state_->stop_requested.load()) return std::nullopt;
  std::lock_guard lk(state_->mu);
  return StopRequest{state_->stop_result.load(), state_->stop_reason};
}

}  // namespace strata::host

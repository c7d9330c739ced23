#include "client/map_holder.h"

#include <algorithm>
#include <filesystem>

namespace strata::client {

MapHolder::MapHolder(std::vector<std::string> plugin_path) : plugin_path_(std::move(plugin_path)) {
  // A configured plugin_path adds directories in front of the built-in ones.
  for (std::string &d : host::default_plugin_path())
    if (std::find(plugin_path_.begin(), plugin_path_.end(), d) == plugin_path_.end())
      plugin_path_.push_back(std::move(d));
}

std::shared_ptr<const cluster::MapView> MapHolder::current() const {
  std::lock_guard<std::mutex> g(mu_);
  return view_;
}

uint64_t MapHolder::epoch() const {
  std::lock_guard<std::mutex> g(mu_);
  return view_ ? view_->epoch() : 0;
}

Result<host::Plugin> MapHolder::placement_plugin(const std::string &name) {
  std::lock_guard<std::mutex> g(plugins_mu_);
  auto it = plugins_.find(name);
  if (it != plugins_.end()) return it->second;
  // Load only the one file we need: a client has no business mapping every
  // backend plugin on the path into its process.
  std::string file = "libstrata_placement_" + name + ".so";
  std::string searched;
  for (const std::string &dir : plugin_path_) {
    std::filesystem::path p = std::filesystem::path(dir) / file;
    std::error_code ec;
    if (!std::filesystem::exists(p, ec)) {
      searched += (searched.empty() ? "" : ":") + dir;
      continue;
    }
    auto plugin = host::load_plugin(p.string(), STRATA_KIND_PLACEMENT);
    if (!plugin.ok()) return plugin.status();
    plugins_.emplace(name, *plugin);
    return *plugin;
  }
  return Status::Error(ENOENT, "placement plugin '" + name + "' (" + file + ") not found in " +
                                   (searched.empty() ? std::string("an empty plugin path")
                                                     : searched) +
                                   " (set plugin_path)");
}

Status MapHolder::install(cluster::ClusterMap m) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (view_ && m.epoch <= view_->epoch()) return Status::OK();
  }
  uint64_t epoch = m.epoch;
  auto failed = [&](const Status &s) {
    Status st = s.Context("map epoch " + std::to_string(epoch));
    {
      std::lock_guard<std::mutex> g(mu_);
      if (!view_ && first_error_.ok()) first_error_ = st;
    }
    cv_.notify_all();
    return st;
  };
  auto plugin = placement_plugin(m.placement_plugin);
  if (!plugin.ok()) return failed(plugin.status());
  auto view = cluster::MapView::create(std::move(m), *plugin);
  if (!view.ok()) return failed(view.status());
  {
    std::lock_guard<std::mutex> g(mu_);
    if (view_ && epoch <= view_->epoch()) return Status::OK();
    view_ = *view;
    first_error_ = Status::OK();
  }
  cv_.notify_all();
  return Status::OK();
}

bool MapHolder::wait_for(uint64_t epoch, std::chrono::steady_clock::time_point deadline) {
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait_until(lk, deadline, [&] {
    return closed_ || (view_ && view_->epoch() >= epoch) || (!view_ && !first_error_.ok());
  });
  return view_ && view_->epoch() >= epoch;
}

Status MapHolder::first_map_error() const {
  std::lock_guard<std::mutex> g(mu_);
  return view_ ? Status::OK() : first_error_;
}

void MapHolder::close() {
  {
    std::lock_guard<std::mutex> g(mu_);
    closed_ = true;
  }
  cv_.notify_all();
}

}  // namespace strata::client

// Private directories under the scratch dir and the open arguments that
// point plugins at them.
#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "kit.h"
#include "kit_state.h"

namespace strata::conformance {

ScratchDir::ScratchDir(std::string_view label) {
  // The pid keeps parallel ctest processes sharing one --dir apart.
  uint64_t id = state().next_dir_id.fetch_add(1);
  path_ = scratch_dir() + "/" + std::string(label) + "-" + std::to_string(::getpid()) + "-" +
          std::to_string(id);
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);  // a leftover of a crashed run with a reused pid
  if (!std::filesystem::create_directories(path_, ec) || ec)
    throw std::runtime_error("cannot create scratch directory " + path_ + ": " + ec.message());
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);  // best effort: a destructor must not throw
}

InstanceArgs::InstanceArgs(std::string path,
                           std::vector<std::pair<std::string, std::string>> overrides)
    : path_(std::move(path)) {
  auto keep = [&](const std::string &s) { return strings_.emplace_back(s).c_str(); };
  for (const strata_kv &kv : plugin_options()) {
    const char *value = kv.value;
    for (const auto &[k, v] : overrides)
      if (k == kv.key) value = keep(v);
    options_.push_back({kv.key, value});
  }
  for (const auto &[k, v] : overrides) {
    bool known = false;
    for (const strata_kv &kv : options_) known = known || k == kv.key;
    if (!known) options_.push_back({keep(k), keep(v)});
  }
  args_.struct_size = sizeof args_;
  args_.path = path_.c_str();
  args_.options = options_.data();
  args_.n_options = options_.size();
  args_.host = host_services();
}

}  // namespace strata::conformance

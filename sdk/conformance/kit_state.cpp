// The accessors of kit.h over the KitState that main owns.
#include "kit_state.h"

#include <cerrno>
#include <cstdio>
#include <stdexcept>

#include "kit.h"
#include "strata/journal.h"
#include "strata/objectstore.h"
#include "strata/placement.h"

namespace strata::conformance {

namespace {
// Set once by main before Catch2 starts; read-only afterwards.
KitState *g_state = nullptr;

const char *level_name(int level) {
  switch (level) {
    case STRATA_LOG_DEBUG:
      return "DEBUG";
    case STRATA_LOG_INFO:
      return "INFO";
    case STRATA_LOG_WARN:
      return "WARN";
    case STRATA_LOG_ERROR:
      return "ERROR";
    default:
      return "LOG";
  }
}
}  // namespace

void HostLog::add(int level, const char *msg) {
  std::string line = std::string(level_name(level)) + ": " + (msg ? msg : "");
  if (level >= STRATA_LOG_WARN) std::fprintf(stderr, "plugin %s\n", line.c_str());
  std::lock_guard<std::mutex> lock(mu_);
  lines_.push_back(std::move(line));
}

std::vector<std::string> HostLog::lines(size_t from) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (from >= lines_.size()) return {};
  return {lines_.begin() + static_cast<std::ptrdiff_t>(from), lines_.end()};
}

void install(KitState *s) { g_state = s; }

KitState &state() {
  if (!g_state) throw std::logic_error("conformance kit used before main installed its state");
  return *g_state;
}

const strata_plugin_descriptor &descriptor() { return state().plugin.descriptor(); }
const std::string &plugin_path() { return state().plugin.path(); }
uint32_t ops_size() { return state().plugin.ops_size(); }

// A test of the other kind named explicitly on the command line lands here:
// fail it with a clear message instead of misreading the vtable.
const strata_objectstore_ops &backend_ops() {
  if (state().plugin.kind() != STRATA_KIND_OBJECTSTORE)
    throw std::runtime_error("this test is for backend plugins; " + plugin_path() + " is a " +
                             host::kind_name(state().plugin.kind()) + " plugin");
  return *state().plugin.ops<strata_objectstore_ops>();
}

const strata_journal_ops &journal_ops() {
  if (state().plugin.kind() != STRATA_KIND_JOURNAL)
    throw std::runtime_error("this test is for journal plugins; " + plugin_path() + " is a " +
                             host::kind_name(state().plugin.kind()) + " plugin");
  return *state().plugin.ops<strata_journal_ops>();
}

const strata_placement_ops &placement_ops() {
  if (state().plugin.kind() != STRATA_KIND_PLACEMENT)
    throw std::runtime_error("this test is for placement plugins; " + plugin_path() + " is a " +
                             host::kind_name(state().plugin.kind()) + " plugin");
  return *state().plugin.ops<strata_placement_ops>();
}

const std::string &scratch_dir() { return state().scratch_dir; }
const std::vector<strata_kv> &plugin_options() { return state().options; }

std::optional<std::string> option(std::string_view key) {
  for (const strata_kv &kv : state().options)
    if (key == kv.key) return std::string(kv.value);
  return std::nullopt;
}

const strata_host_services *host_services() { return &state().services; }
std::vector<std::string> log_lines(size_t from) { return state().log.lines(from); }

}  // namespace strata::conformance

#include "journal_test_support.h"

#include <dlfcn.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

namespace strata::journal_test {

namespace {

struct Loaded {
  const strata_plugin_descriptor *desc;
};

const Loaded &load(const std::string &name) {
  // Loaded plugins stay mapped for the life of the test process.
  static std::mutex mu;
  static std::map<std::string, Loaded> loaded;
  std::lock_guard lk(mu);
  auto it = loaded.find(name);
  if (it != loaded.end()) return it->second;
  std::string path = std::string(STRATA_TEST_PLUGIN_DIR) + "/libstrata_journal_" + name + ".so";
  void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) throw std::runtime_error("cannot load " + path + ": " + dlerror());
  auto entry = reinterpret_cast<strata_plugin_entry_fn>(dlsym(h, "strata_plugin_entry_v1"));
  if (!entry) throw std::runtime_error(path + " has no strata_plugin_entry_v1");
  const strata_plugin_descriptor *d = entry();
  if (d->kind != STRATA_KIND_JOURNAL) throw std::runtime_error(path + " is not a journal");
  return loaded.emplace(name, Loaded{d}).first->second;
}

std::string message(const char *call, int rc, const strata_err &err) {
  return std::string(call) + " failed with " + std::to_string(rc) + " (" + strerror(-rc) +
         "): " + err.msg;
}

}  // namespace

const strata_journal_ops &plugin_ops(const std::string &name) {
  return *static_cast<const strata_journal_ops *>(load(name).desc->ops);
}
const strata_plugin_descriptor &plugin_descriptor(const std::string &name) {
  return *load(name).desc;
}

HostLog::HostLog() {
  services_.struct_size = sizeof services_;
  services_.ctx = this;
  services_.log = &HostLog::add;
}

void HostLog::add(void *ctx, int level, const char *msg) {
  static const char *names[] = {"DEBUG", "INFO", "WARN", "ERROR"};
  auto *self = static_cast<HostLog *>(ctx);
  std::lock_guard lk(self->mu_);
  self->lines_.push_back(std::string(level >= 0 && level <= 3 ? names[level] : "?") + ": " + msg);
}

std::vector<std::string> HostLog::lines() const {
  std::lock_guard lk(mu_);
  return lines_;
}

bool HostLog::contains(const std::string &needle) const {
  for (const std::string &l : lines())
    if (l.find(needle) != std::string::npos) return true;
  return false;
}

TempDir::TempDir(const std::string &parent) {
  std::string templ = parent + "/strata-journal-test-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) throw std::runtime_error("mkdtemp " + templ + ": " + strerror(errno));
  path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

OpenArgs::OpenArgs(const std::string &plugin, std::string path,
                   std::vector<std::pair<std::string, std::string>> overrides,
                   const HostLog *log)
    : path_(std::move(path)) {
  const strata_plugin_descriptor &d = plugin_descriptor(plugin);
  auto keep = [&](const std::string &s) { return strings_.emplace_back(s).c_str(); };
  for (size_t i = 0; i < d.n_options; ++i) {
    std::string value = d.options[i].default_value ? d.options[i].default_value : "";
    for (const auto &[k, v] : overrides)
      if (k == d.options[i].name) value = v;
    kvs_.push_back({d.options[i].name, keep(value)});
  }
  args_.struct_size = sizeof args_;
  args_.path = path_.c_str();
  args_.options = kvs_.data();
  args_.n_options = kvs_.size();
  args_.host = log ? log->services() : nullptr;
}

void Acks::callback(void *arg, int rc) {
  auto *slot = static_cast<Slot *>(arg);
  Acks *self = slot->owner;
  {
    std::lock_guard lk(self->mu_);
    self->seen_.emplace_back(slot->seq, rc);
  }
  self->cv_.notify_all();
}

void *Acks::arg_for(uint64_t seq) {
  std::lock_guard lk(mu_);
  return &slots_.emplace_back(Slot{this, seq});
}

void Acks::wait_for(size_t n) {
  std::unique_lock lk(mu_);
  cv_.wait(lk, [&] { return seen_.size() >= n; });
}

std::vector<std::pair<uint64_t, int>> Acks::seen() const {
  std::lock_guard lk(mu_);
  return seen_;
}

Journal::Journal(const std::string &plugin, const OpenArgs &args) : ops_(plugin_ops(plugin)) {
  strata_err err{};
  int rc = ops_.open(args.get(), &j_, &err);
  if (rc != 0) throw CallFailed(message("open", rc, err), rc);
}

Journal::~Journal() { close(); }

void Journal::close() {
  if (j_) ops_.close(j_);
  j_ = nullptr;
}

void Journal::create(const std::string &plugin, const OpenArgs &args, uint64_t capacity) {
  std::string msg;
  int rc = create_rc(plugin, args, capacity, &msg);
  if (rc != 0) throw CallFailed(msg, rc);
}

int Journal::create_rc(const std::string &plugin, const OpenArgs &args, uint64_t capacity,
                       std::string *msg) {
  strata_err err{};
  int rc = plugin_ops(plugin).create(args.get(), capacity, &err);
  if (msg) *msg = message("create", rc, err);
  return rc;
}

void Journal::destroy(const std::string &plugin, const OpenArgs &args) {
  strata_err err{};
  int rc = plugin_ops(plugin).destroy(args.get(), &err);
  if (rc != 0) throw CallFailed(message("destroy", rc, err), rc);
}

Replayed Journal::replay(uint64_t after_seq) {
  Replayed out;
  out.result.struct_size = sizeof out.result;
  strata_err err{};
  auto visit = [](void *ctx, uint64_t seq, const void *data, size_t len) {
    static_cast<Replayed *>(ctx)->records.emplace_back(
        seq, std::string(static_cast<const char *>(data), len));
    return 0;
  };
  int rc = ops_.replay(j_, after_seq, visit, &out, &out.result, &err);
  if (rc != 0) throw CallFailed(message("replay", rc, err), rc);
  return out;
}

int Journal::replay_rc(uint64_t after_seq, std::string *msg) {
  strata_journal_replay_result res{};
  res.struct_size = sizeof res;
  strata_err err{};
  auto visit = [](void *, uint64_t, const void *, size_t) { return 0; };
  int rc = ops_.replay(j_, after_seq, visit, nullptr, &res, &err);
  if (msg) *msg = err.msg;
  return rc;
}

void Journal::append(uint64_t seq, const std::string &data, strata_journal_done_cb cb,
                     void *arg) {
  strata_err err{};
  int rc = ops_.append(j_, seq, data.data(), data.size(), cb, arg, &err);
  if (rc != 0) throw CallFailed(message("append", rc, err), rc);
}

int Journal::append_rc(uint64_t seq, const std::string &data, std::string *msg) {
  strata_err err{};
  int rc = ops_.append(j_, seq, data.data(), data.size(), nullptr, nullptr, &err);
  if (msg) *msg = err.msg;
  return rc;
}

void Journal::trim(uint64_t upto) {
  strata_err err{};
  int rc = ops_.trim(j_, upto, &err);
  if (rc != 0) throw CallFailed(message("trim", rc, err), rc);
}

void Journal::flush() {
  strata_err err{};
  int rc = ops_.flush(j_, &err);
  if (rc != 0) throw CallFailed(message("flush", rc, err), rc);
}

strata_journal_stat Journal::stat() {
  strata_journal_stat st{};
  st.struct_size = sizeof st;
  int rc = ops_.stat(j_, &st);
  if (rc != 0) throw CallFailed("stat failed", rc);
  return st;
}

uint64_t Journal::caps() { return ops_.capabilities(j_); }

std::string payload_for(uint64_t seq, size_t len) {
  std::string s(len, '\0');
  uint64_t x = seq * 0x9e3779b97f4a7c15ull + 1;
  for (size_t i = 0; i < len; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    s[i] = static_cast<char>(x);
  }
  return s;
}

std::string read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace strata::journal_test

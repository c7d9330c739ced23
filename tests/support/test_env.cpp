#include "test_env.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

namespace strata::testing {

namespace fs = std::filesystem;

namespace {

std::string g_pair_name;
std::string g_root;

}  // namespace

Result<Pair> Pair::parse(const std::string &name) {
  auto plus = name.find('+');
  if (plus == std::string::npos || plus == 0 || plus + 1 == name.size())
    return Status::Error(EINVAL, "pair '" + name + "' is not BACKEND[-ENGINE]+JOURNAL");
  Pair p;
  p.name = name;
  p.journal = name.substr(plus + 1);
  std::string b = name.substr(0, plus);
  auto dash = b.find('-');
  if (dash != std::string::npos) {
    p.kv_engine = b.substr(dash + 1);
    b = b.substr(0, dash);
  }
  p.backend = b;
  if (p.backend == "kv" && p.kv_engine.empty()) p.kv_engine = "rocksdb";
  return p;
}

void set_test_pair(const std::string &pair) { g_pair_name = pair; }
void set_test_root(const std::string &root) { g_root = root; }

const Pair &pair() {
  static Pair p;
  static bool parsed = false;
  if (!parsed) {
    INFO("run this test with --pair BACKEND[-ENGINE]+JOURNAL --root DIR (ctest does)");
    REQUIRE(!g_pair_name.empty());
    auto r = Pair::parse(g_pair_name);
    INFO(r.status().ToString());
    REQUIRE(r.ok());
    p = *r;
    parsed = true;
  }
  return p;
}

const std::string &test_root() {
  static std::string root = [] {
    std::string r =
        g_root.empty() ? fs::temp_directory_path().string() + "/strata-store-tests" : g_root;
    std::error_code ec;
    fs::create_directories(r, ec);
    return r;
  }();
  return root;
}

const host::PluginRegistry &registry() {
  static host::PluginRegistry reg = [] {
    host::PluginRegistry r({STRATA_TEST_PLUGIN_DIR});
    r.scan();
    return r;
  }();
  return reg;
}

Logger &test_logger() {
  static Logger log(STRATA_LOG_ERROR, stderr);
  return log;
}

Logger &child_logger() {
  static Logger log(STRATA_LOG_ERROR, stderr);
  return log;
}

CapturedLog::CapturedLog() {
  file_ = std::tmpfile();
  logger_ = std::make_unique<Logger>(STRATA_LOG_DEBUG, file_ ? file_ : stderr);
}

CapturedLog::~CapturedLog() {
  if (file_) std::fclose(file_);
}

std::string CapturedLog::text() const {
  std::lock_guard lk(mu_);
  if (!file_) return "";
  // fflush and pread leave the FILE's position alone: the logger may be
  // writing from another thread.
  std::fflush(file_);
  int fd = ::fileno(file_);
  struct stat st;
  if (::fstat(fd, &st) != 0 || st.st_size <= 0) return "";
  std::string out(static_cast<size_t>(st.st_size), '\0');
  ssize_t n = ::pread(fd, out.data(), out.size(), 0);
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return out;
}

store::StoreSettings test_settings() {
  store::StoreSettings s;
  s.checkpoint_interval_ms = 200;
  return s;
}

std::string unique_dir(const std::string &label) {
  static std::atomic<int> counter{0};
  std::string p = g_pair_name.empty() ? "nopair" : g_pair_name;
  for (char &c : p)
    if (c == '+') c = '_';
  return test_root() + "/" + p + "-" + label + "-" + std::to_string(::getpid()) + "-" +
         std::to_string(counter++);
}

Status make_store(const Pair &p, const std::string &dir, uint64_t journal_size,
                  const std::string &journal_override) {
  store::MkfsParams mp;
  mp.dir = dir;
  mp.backend = p.backend;
  mp.journal = journal_override.empty() ? p.journal : journal_override;
  mp.journal_size = journal_size;
  if (p.backend == "kv") mp.backend_options.emplace_back("kv_engine", p.kv_engine);
  return store::Store::mkfs(registry(), mp, test_logger());
}

namespace {

// btrfs subvolumes (a directory whose inode is 256) below dir, deepest first.
// Read-only snapshots cannot be emptied file by file; they are deleted whole.
std::vector<std::string> btrfs_subvolumes_below(const std::string &dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it =
           fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_directory(ec) || it->is_symlink(ec)) continue;
    struct stat st;
    if (::lstat(it->path().c_str(), &st) == 0 && st.st_ino == 256) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end(),
            [](const std::string &a, const std::string &b) { return a.size() > b.size(); });
  return out;
}

}  // namespace

void destroy_store(const std::string &dir) {
  std::error_code ec;
  auto meta = store::StoreMeta::load(dir);
  if (meta.ok() && !meta->journal_path.empty()) {
    const std::string jp = meta->journal_location(dir);
    bool inside = jp.compare(0, dir.size() + 1, dir + "/") == 0;
    if (!inside) fs::remove(jp, ec);
  }
  fs::remove_all(dir, ec);
  if (ec) {
    for (const std::string &sub : btrfs_subvolumes_below(dir)) {
      std::string cmd = "btrfs subvolume delete '" + sub + "' >/dev/null 2>&1";
      if (std::system(cmd.c_str()) != 0)
        std::fprintf(stderr, "test cleanup: %s failed\n", cmd.c_str());
    }
    ec.clear();
    fs::remove_all(dir, ec);
  }
  if (ec)
    std::fprintf(stderr, "test cleanup: cannot remove %s: %s\n", dir.c_str(), ec.message().c_str());
}

ScratchStore::ScratchStore(const std::string &label) : ScratchStore(label, Options{}) {}

ScratchStore::ScratchStore(const std::string &label, const Options &opts) {
  dir_ = unique_dir(label);
  Status st = make_store(pair(), dir_, opts.journal_size, opts.journal);
  INFO("mkfs of " << pair().name << " in " << dir_ << ": " << st.ToString());
  REQUIRE(st.ok());
}

ScratchStore::~ScratchStore() { destroy_store(dir_); }

Result<std::unique_ptr<store::Store>> ScratchStore::open(const store::StoreSettings &s,
                                                         Logger *log) const {
  return store::Store::open(registry(), dir_, s, log ? *log : log_.logger());
}

std::unique_ptr<store::Store> ScratchStore::must_open(const store::StoreSettings &s,
                                                      Logger *log) const {
  auto r = open(s, log);
  INFO("opening " << dir_ << ": " << r.status().ToString());
  REQUIRE(r.ok());
  return std::move(*r);
}

std::string ScratchStore::log_text() const { return log_.text(); }

store::StoreMeta ScratchStore::meta() const {
  auto m = store::StoreMeta::load(dir_);
  INFO(m.status().ToString());
  REQUIRE(m.ok());
  return *m;
}

}  // namespace strata::testing

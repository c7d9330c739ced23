#include "store_harness.h"

#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace strata::test {
namespace {

std::string plugin_path(const std::string &backend) {
  if (backend == "xfs") return STRATA_TEST_PLUGIN_XFS;
  if (backend == "btrfs") return STRATA_TEST_PLUGIN_BTRFS;
  FAIL("unknown backend " << backend);
  return {};
}

// A directory name unique across tests, processes and repeated runs.
std::string unique_dir(const std::string &mount) {
  static std::atomic<int> counter{0};
  std::string name = Catch::getResultCapture().getCurrentTestName();
  for (char &ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '-';
  if (name.size() > 60) name.resize(60);
  return mount + "/" + name + "." + std::to_string(::getpid()) + "." +
         std::to_string(counter.fetch_add(1));
}

std::string slice_str(strata_slice s) { return std::string(s.data ? s.data : "", s.len); }

int collect_kv(void *ctx, strata_slice k, strata_slice v) {
  static_cast<std::vector<std::pair<std::string, std::string>> *>(ctx)->emplace_back(slice_str(k),
                                                                                     slice_str(v));
  return 0;
}

int collect_name(void *ctx, strata_slice n) {
  static_cast<std::vector<std::string> *>(ctx)->push_back(slice_str(n));
  return 0;
}

std::string hex(std::string_view s) {
  static const char *digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

}  // namespace

std::string mount_point(const std::string &backend) {
  if (backend == "xfs") return STRATA_TEST_MNT_XFS;
  if (backend == "btrfs") return STRATA_TEST_MNT_BTRFS;
  FAIL("unknown backend " << backend);
  return {};
}

LogSink::LogSink() {
  services_.struct_size = sizeof services_;
  services_.ctx = this;
  services_.log = &LogSink::on_log;
}

void LogSink::on_log(void *ctx, int, const char *msg) {
  auto *self = static_cast<LogSink *>(ctx);
  std::lock_guard lock(self->mu_);
  self->lines_.emplace_back(msg);
}

std::vector<std::string> LogSink::lines() const {
  std::lock_guard lock(mu_);
  return lines_;
}

bool LogSink::contains(std::string_view text) const {
  std::lock_guard lock(mu_);
  for (const std::string &l : lines_)
    if (l.find(text) != std::string::npos) return true;
  return false;
}

void LogSink::clear() {
  std::lock_guard lock(mu_);
  lines_.clear();
}

PluginHandle::PluginHandle(const std::string &backend) {
  auto loaded = host::load_plugin(plugin_path(backend), STRATA_KIND_OBJECTSTORE);
  INFO(loaded.status().message());
  REQUIRE(loaded.ok());
  plugin_ = loaded.value();
  ops_ = plugin_.ops<strata_objectstore_ops>();
}

int PluginHandle::call(const std::string &dir,
                       const std::vector<std::pair<std::string, std::string>> &options,
                       strata_objectstore **out, std::string *err) {
  std::vector<strata_kv> kvs;
  for (const auto &[k, v] : options) kvs.push_back({k.c_str(), v.c_str()});
  strata_open_args args{};
  args.struct_size = sizeof args;
  args.path = dir.c_str();
  args.options = kvs.data();
  args.n_options = kvs.size();
  strata_err e{};
  int rc = out ? ops_->open(&args, out, &e) : ops_->mkfs(&args, &e);
  if (err) *err = e.msg;
  return rc;
}

int PluginHandle::mkfs(const std::string &dir,
                       const std::vector<std::pair<std::string, std::string>> &options,
                       std::string *err) {
  return call(dir, options, nullptr, err);
}

int PluginHandle::open(const std::string &dir,
                       const std::vector<std::pair<std::string, std::string>> &options,
                       strata_objectstore **out, std::string *err) {
  return call(dir, options, out, err);
}

ScratchDir::ScratchDir(const std::string &parent) : path_(unique_dir(parent)) {
  std::filesystem::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  // Snapshots are read-only subvolumes: delete subvolumes as such first.
  std::string cmd = "cd '" + path_ +
                    "' 2>/dev/null && for s in snap.* current; do [ -d \"$s\" ] && "
                    "btrfs subvolume delete -c \"$s\" >/dev/null 2>&1; done; rm -rf '" +
                    path_ + "'";
  [[maybe_unused]] int rc = std::system(cmd.c_str());
}

TestStore::TestStore(const std::string &backend, Options options)
    : backend_(backend),
      scratch_(mount_point(backend)),
      dir_(scratch_.path()),
      options_(std::move(options)) {
  auto loaded = host::load_plugin(plugin_path(backend), STRATA_KIND_OBJECTSTORE);
  INFO(loaded.status().message());
  REQUIRE(loaded.ok());
  plugin_ = loaded.value();
  ops_ = plugin_.ops<strata_objectstore_ops>();
  for (const auto &[k, v] : options_) kvs_.push_back({k.c_str(), v.c_str()});
  args_.struct_size = sizeof args_;
  args_.path = dir_.c_str();
  args_.options = kvs_.data();
  args_.n_options = kvs_.size();
  args_.host = log_.services();
  std::string err;
  int rc = try_mkfs(&err);
  INFO("mkfs " << dir_ << ": " << err);
  REQUIRE(rc == 0);
  open();
}

TestStore::~TestStore() { close(); }

std::string TestStore::live_dir() const { return backend_ == "btrfs" ? dir_ + "/current" : dir_; }

int TestStore::try_mkfs(std::string *err) {
  strata_err e{};
  int rc = ops_->mkfs(&args_, &e);
  if (err) *err = e.msg;
  return rc;
}

int TestStore::try_open(std::string *err) {
  strata_err e{};
  int rc = ops_->open(&args_, &os_, &e);
  if (err) *err = e.msg;
  return rc;
}

void TestStore::open() {
  REQUIRE(os_ == nullptr);
  std::string err;
  int rc = try_open(&err);
  INFO("open " << dir_ << ": " << err);
  REQUIRE(rc == 0);
}

void TestStore::close() {
  if (os_) ops_->close(os_);
  os_ = nullptr;
}

int TestStore::try_apply(const Txn &txn, std::string *err) {
  strata_err e{};
  strata_txn t = txn.view();
  int rc = ops_->apply(os_, &t, &e);
  if (err) *err = e.msg;
  return rc;
}

void TestStore::apply(const Txn &txn) {
  std::string err;
  int rc = try_apply(txn, &err);
  INFO("apply seq " << txn.seq() << ": " << err);
  REQUIRE(rc == 0);
}

void TestStore::checkpoint(uint64_t seq) {
  strata_err e{};
  int rc = ops_->checkpoint(os_, seq, &e);
  INFO("checkpoint " << seq << ": " << e.msg);
  REQUIRE(rc == 0);
}

uint64_t TestStore::committed_seq() {
  strata_err e{};
  uint64_t seq = 0;
  REQUIRE(ops_->committed_seq(os_, &seq, &e) == 0);
  return seq;
}

uint64_t TestStore::capabilities() { return ops_->capabilities(os_); }

int64_t TestStore::read_raw(std::string_view c, std::string_view o, uint64_t off, uint64_t len,
                            void *buf) {
  strata_err e{};
  return ops_->read(os_, {c.data(), c.size()}, {o.data(), o.size()}, off, len, buf, &e);
}

std::optional<std::string> TestStore::read(std::string_view c, std::string_view o, uint64_t off,
                                           uint64_t len) {
  if (len == 0) {
    strata_object_stat st{};
    int rc = stat(c, o, &st);
    if (rc == -ENOENT) return std::nullopt;
    REQUIRE(rc == 0);
    len = st.size > off ? st.size - off : 0;
  }
  std::string buf(len, '\0');
  strata_err e{};
  int64_t n = ops_->read(os_, {c.data(), c.size()}, {o.data(), o.size()}, off, len, buf.data(), &e);
  if (n == -ENOENT) return std::nullopt;
  INFO("read: " << e.msg);
  REQUIRE(n >= 0);
  buf.resize(static_cast<size_t>(n));
  return buf;
}

int TestStore::stat(std::string_view c, std::string_view o, strata_object_stat *st) {
  strata_err e{};
  st->struct_size = sizeof *st;
  return ops_->stat(os_, {c.data(), c.size()}, {o.data(), o.size()}, st, &e);
}

uint64_t TestStore::size(std::string_view c, std::string_view o) {
  strata_object_stat st{};
  REQUIRE(stat(c, o, &st) == 0);
  return st.size;
}

bool TestStore::exists(std::string_view c, std::string_view o) {
  strata_object_stat st{};
  int rc = stat(c, o, &st);
  REQUIRE((rc == 0 || rc == -ENOENT));
  return rc == 0;
}

std::optional<std::string> TestStore::getxattr(std::string_view c, std::string_view o,
                                               std::string_view name) {
  strata_err e{};
  int64_t n = ops_->getxattr(os_, {c.data(), c.size()}, {o.data(), o.size()},
                             {name.data(), name.size()}, nullptr, 0, &e);
  if (n == -ENODATA) return std::nullopt;
  INFO("getxattr: " << e.msg);
  REQUIRE(n >= 0);
  std::string v(static_cast<size_t>(n), '\0');
  REQUIRE(ops_->getxattr(os_, {c.data(), c.size()}, {o.data(), o.size()},
                         {name.data(), name.size()}, v.data(), v.size(), &e) == n);
  return v;
}

std::vector<std::pair<std::string, std::string>> TestStore::xattrs(std::string_view c,
                                                                   std::string_view o) {
  std::vector<std::pair<std::string, std::string>> out;
  strata_err e{};
  REQUIRE(ops_->getxattrs(os_, {c.data(), c.size()}, {o.data(), o.size()}, collect_kv, &out, &e) ==
          0);
  return out;
}

std::optional<std::string> TestStore::omap_get(std::string_view c, std::string_view o,
                                               std::string_view key) {
  strata_err e{};
  int64_t n = ops_->omap_get(os_, {c.data(), c.size()}, {o.data(), o.size()},
                             {key.data(), key.size()}, nullptr, 0, &e);
  if (n == -ENODATA) return std::nullopt;
  INFO("omap_get: " << e.msg);
  REQUIRE(n >= 0);
  std::string v(static_cast<size_t>(n), '\0');
  REQUIRE(ops_->omap_get(os_, {c.data(), c.size()}, {o.data(), o.size()}, {key.data(), key.size()},
                         v.data(), v.size(), &e) == n);
  return v;
}

std::vector<std::pair<std::string, std::string>> TestStore::omap(std::string_view c,
                                                                 std::string_view o,
                                                                 std::string_view start_after,
                                                                 std::string_view end,
                                                                 uint64_t limit) {
  std::vector<std::pair<std::string, std::string>> out;
  strata_err e{};
  REQUIRE(ops_->omap_iterate(os_, {c.data(), c.size()}, {o.data(), o.size()},
                             {start_after.data(), start_after.size()}, {end.data(), end.size()},
                             limit, collect_kv, &out, &e) == 0);
  return out;
}

std::string TestStore::omap_header(std::string_view c, std::string_view o) {
  strata_err e{};
  int64_t n =
      ops_->omap_get_header(os_, {c.data(), c.size()}, {o.data(), o.size()}, nullptr, 0, &e);
  REQUIRE(n >= 0);
  std::string v(static_cast<size_t>(n), '\0');
  REQUIRE(ops_->omap_get_header(os_, {c.data(), c.size()}, {o.data(), o.size()}, v.data(), v.size(),
                                &e) == n);
  return v;
}

std::vector<std::string> TestStore::list(std::string_view c, std::string_view start_after,
                                         uint64_t limit) {
  std::vector<std::string> out;
  strata_err e{};
  int rc = ops_->list_objects(os_, {c.data(), c.size()}, {start_after.data(), start_after.size()},
                              limit, collect_name, &out, &e);
  INFO("list_objects: " << e.msg);
  REQUIRE(rc == 0);
  return out;
}

int TestStore::list_rc(std::string_view c) {
  std::vector<std::string> out;
  strata_err e{};
  return ops_->list_objects(os_, {c.data(), c.size()}, {nullptr, 0}, 0, collect_name, &out, &e);
}

std::vector<std::string> TestStore::collections() {
  std::vector<std::string> out;
  strata_err e{};
  REQUIRE(ops_->list_collections(os_, collect_name, &out, &e) == 0);
  return out;
}

strata_store_usage TestStore::usage() {
  strata_store_usage u{};
  u.struct_size = sizeof u;
  strata_err e{};
  REQUIRE(ops_->usage(os_, &u, &e) == 0);
  return u;
}

int64_t TestStore::fsck() {
  strata_err e{};
  int64_t n = ops_->fsck(os_, &e);
  INFO("fsck: " << e.msg);
  REQUIRE(n >= 0);
  return n;
}

uint64_t TestStore::stage(std::string_view data) {
  strata_err e{};
  uint64_t id = 0;
  int rc = ops_->stage_write(os_, data.data(), data.size(), &id, &e);
  INFO("stage_write: " << e.msg);
  REQUIRE(rc == 0);
  REQUIRE(id > 0);
  return id;
}

int TestStore::release_stage(uint64_t id) {
  strata_err e{};
  return ops_->stage_release(os_, id, &e);
}

void TestStore::release_unused() {
  strata_err e{};
  REQUIRE(ops_->stage_release_unused(os_, &e) == 0);
}

std::string TestStore::dump() {
  std::ostringstream out;
  for (const std::string &c : collections()) {
    out << "collection " << hex(c) << "\n";
    for (const std::string &o : list(c)) {
      std::optional<std::string> data = read(c, o);
      REQUIRE(data.has_value());
      out << " object " << hex(o) << " size " << data->size() << " data " << hex(*data) << "\n";
      for (const auto &[k, v] : xattrs(c, o)) out << "  xattr " << hex(k) << "=" << hex(v) << "\n";
      for (const auto &[k, v] : omap(c, o)) out << "  omap " << hex(k) << "=" << hex(v) << "\n";
      out << "  header " << hex(omap_header(c, o)) << "\n";
    }
  }
  return out.str();
}

std::string first_difference(const std::string &actual, const std::string &expected) {
  if (actual == expected) return {};
  size_t p = 0;
  while (p < actual.size() && p < expected.size() && actual[p] == expected[p]) ++p;
  auto line_at = [p](const std::string &s) {
    size_t begin = s.rfind('\n', p == 0 ? 0 : p - 1);
    begin = begin == std::string::npos ? 0 : begin + 1;
    size_t end = s.find('\n', begin);
    std::string line = s.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    size_t col = p - begin;
    std::string head = line.substr(0, std::min<size_t>(line.size(), 60));
    std::string around = line.substr(col > 40 ? col - 40 : 0, 120);
    return head + " ... [column " + std::to_string(col) + "] ... " + around;
  };
  return "first difference at byte " + std::to_string(p) + "\n  actual:   " + line_at(actual) +
         "\n  expected: " + line_at(expected);
}

// Fraction of the file's mapped bytes in extents shared with another file.
double shared_fraction(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  constexpr size_t kMax = 64;
  std::vector<char> buf(sizeof(struct fiemap) + kMax * sizeof(struct fiemap_extent), 0);
  auto *fm = reinterpret_cast<struct fiemap *>(buf.data());
  fm->fm_length = FIEMAP_MAX_OFFSET;
  fm->fm_flags = FIEMAP_FLAG_SYNC;
  fm->fm_extent_count = kMax;
  int rc = ::ioctl(fd, FS_IOC_FIEMAP, fm);
  ::close(fd);
  REQUIRE(rc == 0);
  // Only bytes below the file size count: XFS keeps speculative
  // preallocation past the end of a file it just wrote.
  uint64_t size = std::filesystem::file_size(path);
  uint64_t total = 0, shared = 0;
  for (uint32_t i = 0; i < fm->fm_mapped_extents; ++i) {
    const struct fiemap_extent &e = fm->fm_extents[i];
    if (e.fe_logical >= size) continue;
    uint64_t len = std::min<uint64_t>(e.fe_length, size - e.fe_logical);
    total += len;
    if (e.fe_flags & FIEMAP_EXTENT_SHARED) shared += len;
  }
  return total ? static_cast<double>(shared) / static_cast<double>(total) : 0.0;
}

std::vector<std::string> files_under(const std::string &dir) {
  std::vector<std::string> files;
  for (const auto &e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path().string());
  return files;
}

std::string pattern(size_t len, unsigned seed) {
  std::string s(len, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < len; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    s[i] = static_cast<char>('a' + x % 26);
  }
  return s;
}

}  // namespace strata::test

// The store's lifecycle: mkfs, open (the identity file, the lock, the
// plugins; replay is in store_replay.cpp), close, journal swap, and what the
// store reports about itself (health warnings, stats).
//
// Threading: mkfs and journal_swap run on the caller's thread on a store
// nobody has open. open runs on the caller's thread with no store thread
// yet; it starts the apply thread as its last step. close joins the apply
// thread and then owns the backend alone. health_warnings() and stats() may
// be called from any thread.
#include "store/store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>

#include "common/thread_name.h"
#include "store/mkfs_staging.h"
#include "store/store_internal.h"

namespace strata::store {

using namespace internal;

namespace {

// A journal plugin may declare journal_size itself (its default when the
// host passes no capacity); keep it equal to the capacity the store uses so
// the identity file never shows two different sizes.
void sync_journal_size_option(StoreMeta &m) {
  for (auto &[k, v] : m.journal_options)
    if (k == "journal_size") v = std::to_string(m.journal_size);
}

// An absolute journal path inside the store directory is the store's own
// journal: recorded relative (the directory does not exist under its name
// until mkfs ends, and a copy of the store must use its own copy).
std::string path_inside_store(const std::string &dir, const std::string &journal_path) {
  namespace fs = std::filesystem;
  if (journal_path.empty() || journal_path[0] != '/') return journal_path;
  const fs::path rel = fs::path(journal_path)
                           .lexically_normal()
                           .lexically_relative(fs::absolute(dir).lexically_normal());
  if (rel.empty() || *rel.begin() == ".." || rel == ".") return journal_path;
  return rel.string();
}

}  // namespace

std::string default_journal_path(const std::string &journal, const std::string &fsid) {
  if (journal == "tmpfs") return "/dev/shm/strata-journal-" + fsid;
  return "journal";
}
Status Store::mkfs(const host::PluginRegistry &reg, const MkfsParams &p, Logger &log) {
  auto bp = reg.find(STRATA_KIND_OBJECTSTORE, p.backend);
  if (!bp.ok()) return bp.status();
  std::optional<host::Plugin> jp;
  if (p.journal != "none") {
    auto j = reg.find(STRATA_KIND_JOURNAL, p.journal);
    if (!j.ok()) return j.status();
    jp = *j;
  }
  auto staging = MkfsStaging::begin(p.dir, p.force);
  if (!staging.ok()) return staging.status();
  const std::string build = (*staging)->build_dir();

  StoreMeta m;
  m.fsid = new_fsid();
  m.backend = p.backend;
  m.journal = p.journal;
  m.backend_options = plugin_options_with_defaults(*bp, p.backend_options);
  std::error_code ec;
  std::filesystem::create_directories(m.backend_dir(build), ec);
  if (ec) return Status::Error(ec.value(), "cannot create " + m.backend_dir(build));

  if (!jp) {
    // Only a backend that makes each transaction durable by itself may run
    // without a journal; otherwise acknowledged writes could be lost.
    Status st = BackendInstance::mkfs(*bp, m.backend_dir(build), m.backend_options, log);
    if (!st.ok()) return st;
    auto b = BackendInstance::open(*bp, m.backend_dir(build), m.backend_options, log);
    if (!b.ok()) return b.status();
    if (!((*b)->caps() & STRATA_OS_CAP_SELF_DURABLE))
      return Status::Error(EINVAL, "backend '" + p.backend +
                                       "' needs a journal (it does not make transactions durable "
                                       "by itself); choose journal = file or tmpfs");
  } else {
    m.journal_options = plugin_options_with_defaults(*jp, p.journal_options);
    m.journal_path = p.journal_path.empty() ? default_journal_path(p.journal, m.fsid)
                                            : path_inside_store(p.dir, p.journal_path);
    m.journal_size = p.journal_size;
    sync_journal_size_option(m);
    Status st = BackendInstance::mkfs(*bp, m.backend_dir(build), m.backend_options, log);
    if (!st.ok()) return st;
    // A journal outside the store directory (absolute path) is made where it
    // will stay; a failed mkfs removes it again.
    const std::string where = m.journal_location(build);
    const bool outside = m.journal_path[0] == '/';
    st = JournalInstance::create(*jp, where, m.journal_size, m.journal_options,
                                 owner_of(p.dir, m.fsid), log);
    if (st.ok()) st = m.save(build);
    if (st.ok()) st = (*staging)->commit();
    if (!st.ok()) {
      if (outside) JournalInstance::destroy(*jp, where, m.journal_options, log);
      return st;
    }
  }
  if (!jp) {
    Status st = m.save(build);
    if (st.ok()) st = (*staging)->commit();
    if (!st.ok()) return st;
  }
  log.info("store", "made store " + m.fsid + " in " + p.dir + ": backend " + m.backend +
                        ", journal " + m.journal +
                        (m.journal_path.empty() ? "" : " at " + m.journal_path));
  return Status::OK();
}

Result<std::unique_ptr<Store>> Store::open(const host::PluginRegistry &reg, const std::string &dir,
                                           const StoreSettings &s, Logger &log) {
  std::unique_ptr<Store> store(new Store(log));
  Status st = store->open_impl(reg, dir, s);
  if (!st.ok()) {
    store->closed_ = true;  // nothing to flush; plugins close in destructors
    return st.Context("opening store " + dir);
  }
  return store;
}

Result<std::unique_ptr<Store>> Store::open_discarding_after(const host::PluginRegistry &reg,
                                                            const std::string &dir,
                                                            const StoreSettings &s,
                                                            uint64_t discard_after, Logger &log) {
  std::unique_ptr<Store> store(new Store(log));
  store->discard_after_ = discard_after;
  Status st = store->open_impl(reg, dir, s);
  if (!st.ok()) {
    store->closed_ = true;
    return st.Context("repairing store " + dir);
  }
  return store;
}

Status Store::open_impl(const host::PluginRegistry &reg, const std::string &dir,
                        const StoreSettings &s) {
  dir_ = dir;
  settings_ = s;
  auto m = StoreMeta::load(dir);
  if (!m.ok()) return m.status();
  meta_ = *m;

  // One process per store: a second opener would corrupt the journal.
  std::string lock_path = dir + "/lock";
  lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) return Status::Error(errno, "cannot open " + lock_path);
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0)
    return Status::Error(EBUSY, "store " + dir + " is in use by another process");

  auto bp = reg.find(STRATA_KIND_OBJECTSTORE, meta_.backend);
  if (!bp.ok()) return bp.status();
  auto b = BackendInstance::open(*bp, meta_.backend_dir(dir), meta_.backend_options, log_);
  if (!b.ok()) return b.status();
  backend_ = std::move(*b);
  uint64_t caps = backend_->caps();
  parallel_apply_ = caps & STRATA_OS_CAP_ROLLBACK_CHECKPOINT;
  exact_replay_ = caps & (STRATA_OS_CAP_EXACT_REPLAY | STRATA_OS_CAP_ROLLBACK_CHECKPOINT);

  if (meta_.journal != "none") {
    auto jp = reg.find(STRATA_KIND_JOURNAL, meta_.journal);
    if (!jp.ok()) return jp.status();
    journal_plugin_ = *jp;
    auto j = JournalInstance::open(*jp, meta_.journal_location(dir), meta_.journal_options,
                                   owner_of(dir, meta_.fsid), log_);
    if (!j.ok()) return j.status();
    journal_ = std::move(*j);
    if (!journal_->checks_owner())
      log_.info("store", "journal plugin " + meta_.journal +
                             " does not record which store it belongs to; relying on the "
                             "sequence check alone to refuse another store's journal");
    for (const std::string &w : health_warnings()) log_.warn("store", w);
  } else if (!(caps & STRATA_OS_CAP_SELF_DURABLE)) {
    return Status::Error(EINVAL, "backend " + meta_.backend + " cannot run without a journal");
  }
  if (discard_after_ && !journal_)
    return Status::Error(EINVAL, "store " + dir + " has no journal: nothing to discard");

  Status st = replay();
  if (!st.ok()) return st;

  auto colls = list_collections();
  if (!colls.ok()) return colls.status();
  collections_.insert(colls->begin(), colls->end());
  last_checkpoint_ = Clock::now();
  {
    std::lock_guard lk(releaser_->mu);
    releaser_->backend = backend_.get();
  }
  apply_thread_ = std::thread([this] {
    name_this_thread("store-apply");
    apply_loop();
  });
  return Status::OK();
}

Store::~Store() {
  if (!closed_) {
    Status st = close();
    if (!st.ok()) log_.error("store", "close: " + st.ToString());
  }
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

Status Store::close() {
  if (closed_) return Status::OK();
  drain();
  {
    std::lock_guard lk(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (apply_thread_.joinable()) apply_thread_.join();
  {
    // An inline apply that began before stopping_ was set (a queue() racing
    // with close()) finishes before the final checkpoint touches the backend.
    std::unique_lock lk(mu_);
    done_cv_.wait(lk, [&] { return !backend_busy_ || !failed_.ok(); });
  }
  closed_ = true;
  Status st = failed_status();
  uint64_t applied, committed;
  {
    std::lock_guard lk(mu_);
    applied = applied_seq_;
    committed = committed_seq_;
  }
  if (st.ok() && applied > committed) st = checkpoint_locked_out(applied);
  {
    std::lock_guard lk(releaser_->mu);
    releaser_->backend = nullptr;
  }
  journal_.reset();
  backend_.reset();
  if (lock_fd_ >= 0) {
    ::close(lock_fd_);  // releases the flock: the store may be opened again
    lock_fd_ = -1;
  }
  return st;
}

std::vector<std::string> Store::health_warnings() const {
  std::vector<std::string> w;
  if (journal_ && (journal_->caps() & STRATA_JOURNAL_CAP_VOLATILE))
    w.push_back("journal '" + meta_.journal + "' at " + meta_.journal_location(dir_) +
                " is volatile: a power loss or reboot loses acknowledged writes not yet "
                "checkpointed (at most checkpoint_interval_ms = " +
                std::to_string(settings_.checkpoint_interval_ms) + " ms of writes)");
  if (Status st = failed_status(); !st.ok()) w.push_back("store failed: " + st.ToString());
  return w;
}

StoreStats Store::stats() {
  StoreStats s;
  {
    std::lock_guard lk(mu_);
    s.applied_seq = applied_seq_;
    s.committed_seq = committed_seq_;
    s.inline_applies = inline_applies_;
  }
  s.submitted_seq = submitted_seq_;
  s.checkpoints = checkpoints_;
  s.throttle_sleeps = throttle_sleeps_;
  s.throttle_seconds = throttle_ns_ / 1e9;
  s.drain_bytes_per_sec = drain_rate_;
  s.staged_writes = staged_writes_;
  s.checksum_failures = backend_->checksum_failures();
  if (journal_) {
    s.has_journal = true;
    s.journal = journal_->stat();
  }
  return s;
}

Status Store::journal_swap(const host::PluginRegistry &reg, const std::string &dir,
                           const std::string &journal, const std::string &journal_path,
                           uint64_t journal_size, const OptionList &journal_options, Logger &log) {
  StoreMeta old_meta;
  {
    // Opening replays whatever the old journal holds; closing checkpoints the
    // backend and trims the journal, so it holds nothing the store needs.
    StoreSettings s;
    auto store = Store::open(reg, dir, s, log);
    if (!store.ok()) return store.status();
    old_meta = (*store)->meta();
    Status st = (*store)->close();
    if (!st.ok()) return st.Context("closing store for journal swap");
  }
  StoreMeta m = old_meta;
  m.journal = journal;
  m.journal_options.clear();
  m.journal_path.clear();
  if (journal != "none") {
    auto jp = reg.find(STRATA_KIND_JOURNAL, journal);
    if (!jp.ok()) return jp.status();
    m.journal_options = plugin_options_with_defaults(*jp, journal_options);
    m.journal_path = journal_path.empty() ? default_journal_path(journal, m.fsid) : journal_path;
    m.journal_size = journal_size;
    sync_journal_size_option(m);
    if (m.journal_location(dir) == old_meta.journal_location(dir) && journal != old_meta.journal)
      return Status::Error(EINVAL, "journal-swap: new journal path " + m.journal_path +
                                       " is the old journal's; choose another path");
    Status st = JournalInstance::create(*jp, m.journal_location(dir), m.journal_size,
                                        m.journal_options, owner_of(dir, m.fsid), log);
    if (!st.ok()) return st;
  } else {
    auto bp = reg.find(STRATA_KIND_OBJECTSTORE, m.backend);
    if (!bp.ok()) return bp.status();
    auto b = BackendInstance::open(*bp, m.backend_dir(dir), m.backend_options, log);
    if (!b.ok()) return b.status();
    if (!((*b)->caps() & STRATA_OS_CAP_SELF_DURABLE))
      return Status::Error(EINVAL, "backend " + m.backend + " cannot run without a journal");
  }
  // The switch point: once the identity file names the new journal, the old
  // one is garbage. A crash before this line leaves the old (empty) journal
  // in use; after it, the new one.
  Status st = m.save(dir);
  if (!st.ok()) return st;
  if (old_meta.journal != "none" && old_meta.journal_location(dir) != m.journal_location(dir)) {
    auto op = reg.find(STRATA_KIND_JOURNAL, old_meta.journal);
    if (op.ok()) {
      Status d = JournalInstance::destroy(*op, old_meta.journal_location(dir),
                                          old_meta.journal_options, log);
      if (!d.ok()) log.warn("store", "old journal left behind: " + d.ToString());
    }
  }
  log.info("store", "journal of " + dir + " moved from " + old_meta.journal + " (" +
                        old_meta.journal_path + ") to " + m.journal + " (" + m.journal_path + ")");
  return Status::OK();
}

}  // namespace strata::store

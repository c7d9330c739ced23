#include "store/store.h"
#include "store/mkfs_staging.h"
#include "common/thread_name.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>

namespace strata::store {

namespace {

using Clock = std::chrono::steady_clock;

std::string_view sv(strata_slice s) { return {s.data ? s.data : "", s.len}; }
strata_slice sl(std::string_view s) { return {s.data(), s.size()}; }

std::string object_key(std::string_view coll, std::string_view oid) {
  std::string k = std::to_string(coll.size());
  k += ':';
  k.append(coll);
  k.append(oid);
  return k;
}

std::string describe(const strata_op &op) {
  std::string s = op_name(op.type);
  if (op.collection.len) s += " " + std::string(sv(op.collection));
  if (op.object.len) s += "/" + std::string(sv(op.object).substr(0, 80));
  return s;
}

// A journal plugin may declare journal_size itself (its default when the
// host passes no capacity); keep it equal to the capacity the store uses so
// the identity file never shows two different sizes.
// Largest journal record applied on the journal's thread (see
// can_apply_inline_locked).
constexpr uint64_t kInlineApplyMaxBytes = 64 * 1024;

void sync_journal_size_option(StoreMeta &m) {
  for (auto &[k, v] : m.journal_options)
    if (k == "journal_size") v = std::to_string(m.journal_size);
}

}  // namespace

struct Store::InFlight {
  uint64_t seq = 0;
  Transaction txn;
  Callback cb;
  std::vector<std::string> objs;   // object keys touched
  std::vector<std::string> colls;  // collections created/removed
  uint64_t bytes = 0;              // encoded size
  bool has_clone = false;
  // May be applied on the journal's thread (see can_apply_inline_locked).
  bool inline_ok = false;
  bool ack_durable = false;  // Ack::kDurable, and no collection ops
  // GUARDED_BY(Store::mu_)
  bool early_acked = false;  // its callback ran at durable; objs are in acked_unapplied_
  bool durable = false;
  bool applied = false;
  bool completed = false;
  Store *store = nullptr;
};

std::string default_journal_path(const std::string &journal, const std::string &fsid) {
  if (journal == "tmpfs") return "/dev/shm/strata-journal-" + fsid;
  return "journal";
}

namespace {
// An absolute journal path inside the store directory is the store's own
// journal: recorded relative (the directory does not exist under its name
// until mkfs ends, and a copy of the store must use its own copy).
std::string path_inside_store(const std::string &dir, const std::string &journal_path) {
  namespace fs = std::filesystem;
  if (journal_path.empty() || journal_path[0] != '/') return journal_path;
  const fs::path rel = fs::path(journal_path).lexically_normal().lexically_relative(
      fs::absolute(dir).lexically_normal());
  if (rel.empty() || *rel.begin() == ".." || rel == ".") return journal_path;
  return rel.string();
}

JournalOwner owner_of(const std::string &dir, const std::string &fsid) {
  return {fsid, std::filesystem::absolute(dir).lexically_normal().string()};
}
}  // namespace

// --- mkfs / open / close -------------------------------------------------

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

Result<std::unique_ptr<Store>> Store::open(const host::PluginRegistry &reg,
                                           const std::string &dir, const StoreSettings &s,
                                           Logger &log) {
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

Status Store::replay() {
  strata_err err{};
  uint64_t committed = 0;
  int rc = backend_->ops()->committed_seq(backend_->handle(), &committed, &err);
  if (rc < 0) return Status::Error(rc, std::string("reading the backend's checkpoint: ") + err.msg);
  replay_.committed_seq = committed;
  uint64_t last = committed;
  if (discard_after_ && *discard_after_ < committed)
    return Status::Error(EINVAL, "--discard-after " + std::to_string(*discard_after_) +
                                     ": the backend has applied and checkpointed up to seq " +
                                     std::to_string(committed) +
                                     " already; discard after that seq or later");

  if (journal_) {
    struct Ctx {
      Store *self;
      Status st;
      uint64_t records = 0;
      uint64_t committed = 0;
      uint64_t first = 0;  // first seq visited
      uint64_t applied = 0;         // last seq applied
      uint64_t dropped_newest = 0;  // newest seq visited past discard_after_
    } ctx{this, Status::OK(), 0, committed, 0, committed, 0};
    auto cb = [](void *c, uint64_t seq, const void *data, size_t len) -> int {
      auto *x = static_cast<Ctx *>(c);
      if (x->first == 0) {
        // Checked before anything is applied: a gap is refused untouched.
        x->first = seq;
        if (Status gap = x->self->check_no_gap(x->committed, seq); !gap.ok()) {
          x->st = gap;
          return gap.code();
        }
      }
      if (x->self->discard_after_ && seq > *x->self->discard_after_) {
        x->dropped_newest = seq;  // not applied: the repair drops it
        return 0;
      }
      auto t = Transaction::decode({static_cast<const char *>(data), len});
      if (!t.ok()) {
        x->st = t.status().Context("journal record seq " + std::to_string(seq));
        return -EBADMSG;
      }
      InFlight f;
      f.seq = seq;
      f.txn = std::move(*t);
      for (const strata_op &op : f.txn.ops()) f.has_clone |= op.type == STRATA_OP_CLONE;
      Status st = x->self->apply_one(f);
      if (st.ok() && f.has_clone && !x->self->exact_replay_) st = x->self->checkpoint_locked_out(seq);
      if (!st.ok()) {
        x->st = st.Context("replaying seq " + std::to_string(seq));
        return st.code();
      }
      ++x->records;
      x->applied = seq;
      return 0;
    };
    strata_journal_replay_result res{};
    res.struct_size = sizeof res;
    rc = journal_->replay(committed, cb, &ctx, &res, &err);
    if (!ctx.st.ok()) return ctx.st;
    if (discard_after_ && (rc == 0 || rc == -EUCLEAN)) {
      if (ctx.applied < *discard_after_) {
        const std::string why = rc < 0 ? " (" + std::string(err.msg) + ")" : "";
        return Status::Error(EUCLEAN, "--discard-after " + std::to_string(*discard_after_) +
                                          ": journal " + journal_->path() +
                                          " can be read only up to seq " +
                                          std::to_string(ctx.applied) + why +
                                          "; discard after seq " + std::to_string(ctx.applied) +
                                          " at most");
      }
      replay_.records = ctx.records;
      replay_.repair.requested = true;
      replay_.repair.discard_after = *discard_after_;
      uint64_t newest = std::max(ctx.dropped_newest, journal_->stat().last_seq);
      if (rc < 0 || newest > *discard_after_) {
        Status st = checkpoint_locked_out(*discard_after_);
        if (st.ok()) st = replace_damaged_journal(std::max(newest, *discard_after_));
        if (!st.ok()) return st;
      }
      rc = 0;
      res.last_seq = *discard_after_;
    }
    if (rc < 0)
      return Status::Error(rc, "journal " + journal_->path() +
                                   " cannot be replayed: " + std::string(err.msg) +
                                   " — refusing to start rather than drop acknowledged writes");
    if (ctx.first == 0)
      if (Status gap = check_no_gap(committed, 0); !gap.ok()) return gap;
    replay_.records = ctx.records;
    replay_.torn_bytes = res.torn_bytes;
    replay_.detail = res.detail;
    last = std::max(committed, res.last_seq);
    if (res.torn_bytes)
      log_.warn("store", "journal tail: discarded " + std::to_string(res.torn_bytes) +
                             " bytes of an unacknowledged, incomplete write (" + res.detail + ")");
  }
  replay_.last_seq = last;
  {
    std::lock_guard lk(mu_);
    applied_seq_ = last;
    committed_seq_ = committed;
  }
  next_seq_ = last + 1;
  submitted_seq_ = last;
  if (last > committed) {
    Status st = checkpoint_locked_out(last);
    if (!st.ok()) return st;
  }
  if (backend_->has_staged_writes()) {
    rc = backend_->ops()->stage_release_unused(backend_->handle(), &err);
    if (rc < 0) return Status::Error(rc, std::string("releasing unused staged writes: ") + err.msg);
  }
  if (replay_.records)
    log_.info("store", "replayed " + std::to_string(replay_.records) +
                           " journaled transactions after checkpoint " +
                           std::to_string(committed) + ", now at seq " + std::to_string(last));
  return Status::OK();
}

Status Store::replace_damaged_journal(uint64_t newest) {
  RepairReport &r = replay_.repair;
  if (newest > r.discard_after) {
    r.first_lost = r.discard_after + 1;
    r.last_lost = newest;
    r.lost = newest - r.discard_after;
  }
  const std::string where = journal_->path();
  journal_.reset();  // closed: nothing writes it while it is copied
  // The copy holds every dropped record as the journal medium held it (also
  // those behind the damage, which no replay can reach).
  r.saved_copy = dir_ + "/journal-dropped-after-" + std::to_string(r.discard_after) + "." +
                 std::to_string(::time(nullptr)) + ".bin";
  std::error_code ec;
  {
    std::ifstream in(where, std::ios::binary);
    std::ofstream out(r.saved_copy, std::ios::binary | std::ios::trunc);
    out << in.rdbuf();
    out.flush();
    if (!in || !out)
      return Status::Error(EIO, "cannot keep a copy of journal " + where + " in " + r.saved_copy +
                                    "; nothing was dropped");
  }
  if (int fd = ::open(r.saved_copy.c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
  Status st = JournalInstance::create(*journal_plugin_, where, meta_.journal_size,
                                      meta_.journal_options, owner_of(dir_, meta_.fsid), log_);
  if (!st.ok()) return st.Context("starting a new journal after the repair");
  auto j = JournalInstance::open(*journal_plugin_, where, meta_.journal_options,
                                 owner_of(dir_, meta_.fsid), log_);
  if (!j.ok()) return j.status();
  journal_ = std::move(*j);
  strata_err err{};
  strata_journal_replay_result res{};
  res.struct_size = sizeof res;
  int rc = journal_->replay(
      r.discard_after, [](void *, uint64_t, const void *, size_t) { return 0; }, nullptr, &res,
      &err);
  if (rc < 0) return Status::Error(rc, "replaying the new journal " + where + ": " + err.msg);
  log_.warn("store", "repair of " + dir_ + ": dropped " + std::to_string(r.lost) +
                         " transaction(s) after seq " + std::to_string(r.discard_after) +
                         (r.lost ? " (seqs " + std::to_string(r.first_lost) + ".." +
                                       std::to_string(r.last_lost) + ")"
                                 : std::string()) +
                         "; the journal as it was is kept in " + r.saved_copy);
  return Status::OK();
}

Status Store::check_no_gap(uint64_t committed, uint64_t first_replayed) const {
  // first_replayed: the first record replay visited (seq > committed), or 0
  // when it visited none; then the journal's stat says what it held.
  uint64_t oldest = first_replayed, newest = first_replayed;
  if (first_replayed == 0) {
    strata_journal_stat js = journal_->stat();
    if (js.first_seq > committed + 1) oldest = newest = js.first_seq;
    else if (js.first_seq == 0 && js.last_seq > committed) oldest = newest = js.last_seq + 1;
    else return Status::OK();
    if (js.first_seq == 0) newest = js.last_seq;
  }
  if (oldest <= committed + 1) return Status::OK();
  const std::string lost = "seqs " + std::to_string(committed + 1) + ".." +
                           std::to_string(oldest - 1);
  return Status::Error(
      EUCLEAN,
      "journal " + journal_->path() + " of store " + meta_.fsid + " (" + dir_ + ") " +
          (first_replayed ? "starts at seq " + std::to_string(oldest)
                          : "is empty but has held records up to seq " + std::to_string(newest)) +
          ", while the backend has applied only up to seq " + std::to_string(committed) + ": " +
          lost + " (" + std::to_string(oldest - 1 - committed) +
          " acknowledged transactions) were trimmed without being applied here — was the "
          "journal used by another store, e.g. a copy of this one? Refusing to open; nothing "
          "was replayed or trimmed");
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

// --- submission ----------------------------------------------------------

Status Store::stage_large_writes(Transaction &t) {
  if (settings_.stage_threshold == 0 || !backend_->has_staged_writes()) return Status::OK();
  for (strata_op &op : t.mutable_ops()) {
    if (op.type != STRATA_OP_WRITE_FULL || op.value.len < settings_.stage_threshold) continue;
    if (Status claim = claim_stage_space(op.value.len, describe(op)); !claim.ok()) {
      // The transaction was admitted (a replica's copy of a write its
      // primary accepted, a recovery push): rather than fail it, the
      // journal carries the bytes and the apply writes them into the
      // reserve. Without a journal there is nowhere else to put them.
      if (journal_) continue;
      return claim;
    }
    uint64_t id = 0;
    strata_err err{};
    int rc = backend_->ops()->stage_write(backend_->handle(), op.value.data, op.value.len, &id, &err);
    unclaim_stage_space(op.value.len);
    if (rc == -ENOSPC && journal_) continue;  // as above: the journal carries it
    if (rc < 0)
      return Status::Error(rc, "staging " + std::to_string(op.value.len) + " bytes for " +
                                   describe(op) + ": " + err.msg);
    op.type = STRATA_OP_WRITE_STAGED;
    op.offset = id;
    op.length = op.value.len;
    op.value = {};
    staged_writes_++;
  }
  return Status::OK();
}

bool Store::would_stage(uint64_t len) const {
  return settings_.stage_threshold != 0 && len >= settings_.stage_threshold && backend_ &&
         backend_->has_staged_writes();
}

Result<StagedWriteRef> Store::stage(std::string_view data) {
  if (!backend_ || !backend_->has_staged_writes())
    return Status::Error(EOPNOTSUPP, "store " + dir_ + ": the backend has no staged writes");
  if (Status claim = claim_stage_space(data.size(), "a stage of " + std::to_string(data.size()) +
                                                      " bytes");
      !claim.ok())
    return claim;
  uint64_t id = 0;
  strata_err err{};
  int rc = backend_->ops()->stage_write(backend_->handle(), data.data(), data.size(), &id, &err);
  unclaim_stage_space(data.size());
  if (rc < 0)
    return Status::Error(rc, "store " + dir_ + ": staging " + std::to_string(data.size()) +
                                 " bytes: " + err.msg);
  staged_writes_++;
  return std::make_shared<StagedWrite>(releaser_, id, data.size());
}

uint64_t Store::tracked_size(std::string_view coll, std::string_view oid) {
  auto it = sizes_.find(object_key(coll, oid));
  if (it != sizes_.end()) return it->second.value_or(0);
  if (auto rm = removed_colls_.find(coll); rm != removed_colls_.end()) {
    uint64_t applied;
    {
      std::lock_guard lk(mu_);
      applied = applied_seq_;
    }
    // The backend still holds the collection's old objects until the
    // removal is applied; to later transactions they no longer exist.
    if (applied < rm->second) return 0;
    removed_colls_.erase(rm);
  }
  strata_object_stat st{};
  st.struct_size = sizeof st;
  strata_err err{};
  if (backend_->ops()->stat(backend_->handle(), sl(coll), sl(oid), &st, &err) < 0) return 0;
  return st.size;
}

// Validates t against the collections as of the previous transaction and
// rewrites appends into absolute writes. REQUIRES: submit_mu_ held.
Status Store::prepare(Transaction &t, std::vector<std::string> &objs,
                      std::vector<std::string> &colls) {
  // Pass 1: validate without changing anything, so a rejected transaction
  // leaves no trace.
  std::map<std::string, bool, std::less<>> coll_delta;
  auto coll_exists = [&](std::string_view c) {
    auto it = coll_delta.find(c);
    if (it != coll_delta.end()) return it->second;
    return collections_.count(std::string(c)) > 0;
  };
  for (const strata_op &op : t.ops()) {
    std::string_view c = sv(op.collection);
    if (c.empty() || c.size() > 4096)
      return Status::Error(EINVAL, describe(op) + ": collection name must be 1..4096 bytes");
    if (op.type == STRATA_OP_MKCOLL) {
      coll_delta[std::string(c)] = true;
      continue;
    }
    if (!coll_exists(c))
      return Status::Error(ENOENT, describe(op) + ": collection '" + std::string(c) +
                                       "' does not exist");
    if (op.type == STRATA_OP_RMCOLL) {
      coll_delta[std::string(c)] = false;
      continue;
    }
    if (op.object.len == 0 || op.object.len > 4096)
      return Status::Error(EINVAL, describe(op) + ": object name must be 1..4096 bytes");
    if ((op.type == STRATA_OP_SETXATTR || op.type == STRATA_OP_RMXATTR) &&
        (op.key.len == 0 || op.key.len > 255 || op.value.len > 65536))
      return Status::Error(EINVAL, describe(op) + ": xattr name must be 1..255 bytes, value <= 64 KiB");
    if (op.type == STRATA_OP_CLONE && (op.value.len == 0 || op.value.len > 4096 ||
                                       sv(op.value) == sv(op.object)))
      return Status::Error(EINVAL, describe(op) + ": clone needs a different destination name");
    if (op.type == STRATA_OP_WRITE_STAGED && op.offset == 0)
      return Status::Error(EINVAL, describe(op) + ": no stage id");
    if (op.type > STRATA_OP_WRITE_STAGED && op.type != kOpAppend)
      return Status::Error(EINVAL, describe(op) + ": unknown op type " + std::to_string(op.type));
  }

  // Pass 2: commit the effects to the submit-side view.
  if (sizes_.size() > 4096) {
    std::lock_guard lk(mu_);
    for (auto it = sizes_.begin(); it != sizes_.end();)
      it = pending_objects_.count(it->first) ? std::next(it) : sizes_.erase(it);
  }
  for (strata_op &op : t.mutable_ops()) {
    std::string_view c = sv(op.collection), o = sv(op.object);
    if (op.type == STRATA_OP_MKCOLL || op.type == STRATA_OP_RMCOLL) {
      colls.emplace_back(c);
      if (op.type == STRATA_OP_MKCOLL) {
        collections_.insert(std::string(c));
      } else {
        collections_.erase(std::string(c));
        removed_colls_[std::string(c)] = next_seq_;  // the seq this txn will get
        // Objects of the removed collection are gone as far as later
        // transactions are concerned.
        std::string prefix = object_key(c, "");
        for (auto it = sizes_.lower_bound(prefix);
             it != sizes_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it)
          it->second.reset();
      }
      continue;
    }
    std::string key = object_key(c, o);
    objs.push_back(key);
    // The current size costs a backend lookup when the object is not
    // tracked yet; only ops whose effect depends on it ask. Ops that leave
    // the size alone record nothing.
    auto cur_size = [&] { return tracked_size(c, o); };
    std::optional<uint64_t> next;
    switch (op.type) {
      case kOpAppend: {
        uint64_t cur = cur_size();
        op.type = STRATA_OP_WRITE;
        op.offset = cur;
        op.length = op.value.len;
        next = cur + op.value.len;
        break;
      }
      case STRATA_OP_WRITE:
        next = std::max(cur_size(), op.offset + op.value.len);
        break;
      case STRATA_OP_WRITE_FULL:
        next = op.value.len;
        break;
      case STRATA_OP_WRITE_STAGED:
        next = op.length;
        break;
      case STRATA_OP_TRUNCATE:
        next = op.offset;
        break;
      case STRATA_OP_REMOVE:
        next.reset();
        break;
      case STRATA_OP_CLONE: {
        std::string dst = object_key(c, sv(op.value));
        objs.push_back(dst);
        sizes_[dst] = cur_size();
        continue;  // the source keeps its size
      }
      default:
        continue;  // size unchanged
    }
    sizes_[key] = next;
  }
  return Status::OK();
}

void Store::throttle(uint64_t bytes) {
  if (!journal_) return;
  strata_journal_stat js = journal_->stat();
  if (js.capacity_bytes == 0) return;
  double fill = 100.0 * js.used_bytes / js.capacity_bytes;
  if (fill < settings_.throttle_fill_pct) return;
  if (fill >= settings_.checkpoint_fill_pct) {
    std::lock_guard lk(mu_);
    checkpoint_requested_ = true;
  }
  cv_.notify_all();
  // At throttle_fill_pct writers are not slowed; half-way to full they are
  // admitted at exactly the drain rate; beyond, slower than it, so the fill
  // settles instead of hitting the wall.
  double span = std::max(1.0, 100.0 - settings_.throttle_fill_pct);
  double factor = 2.0 * (fill - settings_.throttle_fill_pct) / span;
  double secs = factor * static_cast<double>(bytes + 4096) / std::max(1.0, drain_rate_.load());
  secs = std::min(secs, 0.5);
  if (secs < 1e-6) return;
  throttle_sleeps_++;
  throttle_ns_ += static_cast<uint64_t>(secs * 1e9);
  std::this_thread::sleep_for(std::chrono::duration<double>(secs));
}

Status Store::queue(Transaction t, Callback cb, Ack when) {
  if (t.empty()) return Status::Error(EINVAL, "empty transaction");
  if (Status st = failed_status(); !st.ok()) return st;
  Status st = stage_large_writes(t);
  if (!st.ok()) return st;
  throttle(t.data_bytes());

  if (journal_) {
    // Refuse what can never fit before anything is changed: a record larger
    // than the journal would otherwise fail only at append, with a seq
    // already given out.
    uint64_t capacity = journal_->stat().capacity_bytes;
    uint64_t need = t.encoded_size() + 4096;  // record framing
    if (capacity && need > capacity)
      return Status::Error(EFBIG, "transaction of " + std::to_string(need) +
                                      " bytes does not fit in journal " + journal_->path() +
                                      " of " + std::to_string(capacity) + " bytes");
  }

  auto f = std::make_shared<InFlight>();
  f->store = this;
  f->cb = std::move(cb);
  std::unique_lock sub(submit_mu_);
  {
    std::lock_guard lk(mu_);
    if (stopping_ || closed_) return Status::Error(ESHUTDOWN, "store " + dir_ + " is closing");
    if (!failed_.ok()) return failed_;
  }
  st = prepare(t, f->objs, f->colls);
  if (!st.ok()) return st;
  bool staged = false;
  for (const strata_op &op : t.ops()) {
    f->has_clone |= op.type == STRATA_OP_CLONE;
    staged |= op.type == STRATA_OP_WRITE_STAGED;
  }
  f->seq = next_seq_++;
  submitted_seq_ = f->seq;
  std::string record = journal_ ? t.encode() : std::string();
  f->bytes = record.size() + t.data_bytes() * (journal_ ? 0 : 1);
  // Only small transactions are applied on the journal's thread: while it
  // applies, the next journal write waits, and a staged write's bind (file
  // creation, reflink) or a collection op costs far more than the thread
  // handoff it would save.
  f->inline_ok = !staged && f->colls.empty() && record.size() <= kInlineApplyMaxBytes &&
                 !(f->has_clone && !exact_replay_);
  // Without a journal, durable means applied (the backend syncs each one).
  f->ack_durable = when == Ack::kDurable && journal_ && f->colls.empty();
  f->txn = std::move(t);
  if (journal_) {
    // The journal holds a reference until its callback, which may come
    // before this function returns.
    auto *ref = new std::shared_ptr<InFlight>(f);
    strata_err err{};
    int rc = journal_->append(f->seq, record.data(), record.size(), &Store::on_journal_durable,
                              ref, &err);
    if (rc < 0) {
      delete ref;
      // The seq is spent and the submit-side view already includes this
      // transaction: the journal medium failed, so the store stops.
      Status e = Status::Error(rc, "journal append of seq " + std::to_string(f->seq) + " to " +
                                       meta_.journal_location(dir_) + ": " + err.msg);
      fail(e);
      return e;
    }
  }
  // Only now does the transaction exist for the apply thread and for fail():
  // a failed append above leaves nothing half-registered.
  Status failed;
  {
    std::lock_guard lk(mu_);
    ++in_flight_;
    live_[f->seq] = f;
    failed = failed_;
    if (failed.ok()) {
      for (const std::string &k : f->objs) pending_objects_[k]++;
      queue_.push_back(f);
    } else {
      f->completed = true;  // the journal failed it before it was registered
    }
  }
  if (!failed.ok()) {
    complete(f, failed);
    return Status::OK();
  }
  // Wakes the apply thread even when f is not durable yet: skipping this
  // wake-up measured 7-10% slower at depth 1 and 32 on the 2-vCPU test VM
  // (a sleeping thread there costs more to wake when real work arrives).
  cv_.notify_all();
  return Status::OK();
}

// noexcept: a journal thread calls it (plugin.h, "Host callbacks"); what
// could throw here is an allocation, and a transaction that can neither
// complete nor fail leaves no better way out than terminate.
void Store::on_journal_durable(void *arg, int rc) noexcept {
  std::unique_ptr<std::shared_ptr<InFlight>> ref(static_cast<std::shared_ptr<InFlight> *>(arg));
  std::shared_ptr<InFlight> f = *ref;
  Store *self = f->store;
  if (rc < 0) {
    self->fail(Status::Error(rc, "journal write of seq " + std::to_string(f->seq) + " failed"));
    return;
  }
  bool complete_now = false, apply_here = false;
  Callback early;
  {
    std::lock_guard lk(self->mu_);
    f->durable = true;
    complete_now = f->applied && !f->completed;
    if (complete_now) {
      f->completed = true;
    } else {
      if (f->ack_durable && !f->completed && self->failed_.ok()) {
        // Registered before the callback runs: whoever hears of the
        // acknowledgement and then reads waits for the apply.
        f->early_acked = true;
        for (const std::string &k : f->objs) self->acked_unapplied_[k]++;
        early = std::move(f->cb);
        f->cb = nullptr;
      }
      if (self->can_apply_inline_locked(*f)) {
        self->queue_.pop_front();
        self->backend_busy_ = true;
        apply_here = true;
      }
    }
  }
  if (early) early(Status::OK());
  if (apply_here)
    self->apply_inline(f);
  else if (complete_now)
    self->complete(f, Status::OK());
  else
    self->cv_.notify_all();
}

// The depth-1 fast path: f is a small transaction (inline_ok), durable,
// next in seq order and alone in the queue, and nobody is applying or
// checkpointing. (Transactions with a CLONE on a backend without exact
// replay are never inline_ok: the apply thread checkpoints right after them,
// before applying anything else.)
bool Store::can_apply_inline_locked(const InFlight &f) const {
  return f.inline_ok && journal_ && !parallel_apply_ && failed_.ok() && !stopping_ &&
         !backend_busy_ && !checkpoint_requested_ && queue_.size() == 1 &&
         queue_.front().get() == &f;
}

bool Store::apply_thread_has_work_locked() const {
  if (backend_busy_) return false;
  if (!queue_.empty() && (queue_.front()->durable || parallel_apply_ || !journal_)) return true;
  return checkpoint_requested_ && applied_seq_ > committed_seq_;
}

void Store::apply_inline(const std::shared_ptr<InFlight> &f) {
  Status st = apply_striped(*f);
  if (!st.ok()) {
    fail(st);  // completes f too: it is still in live_
    release_backend();
    return;
  }
  bool complete_now = mark_applied(*f);
  bytes_since_checkpoint_ += f->bytes;
  bool ckpt = checkpoint_due(*f);
  {
    std::lock_guard lk(mu_);
    ++inline_applies_;
    // Never checkpoint here: a syncfs would hold up the journal's writer.
    // The apply thread does it (release_backend() wakes it).
    if (ckpt) checkpoint_requested_ = true;
  }
  done_cv_.notify_all();
  if (complete_now)
    complete(f, Status::OK(), /*release_backend=*/true);
  else
    release_backend();
}

void Store::release_backend() {
  bool wake;
  {
    std::lock_guard lk(mu_);
    backend_busy_ = false;
    wake = apply_thread_has_work_locked();
  }
  done_cv_.notify_all();  // close() may wait for the backend
  if (wake) cv_.notify_all();
}

// REQUIRES: the caller set f->completed under mu_ (so each runs once).
void Store::complete(const std::shared_ptr<InFlight> &f, const Status &st, bool release_backend) {
  if (f->cb) f->cb(st);
  bool wake = false;
  {
    std::lock_guard lk(mu_);
    live_.erase(f->seq);
    --in_flight_;
    if (release_backend) {
      backend_busy_ = false;
      wake = apply_thread_has_work_locked();
    }
  }
  done_cv_.notify_all();
  if (wake) cv_.notify_all();
}

Status Store::submit(Transaction t) {
  std::promise<Status> p;
  auto fut = p.get_future();
  Status st = queue(std::move(t), [&p](const Status &s) { p.set_value(s); });
  if (!st.ok()) return st;
  return fut.get();
}

void Store::drain() {
  std::unique_lock lk(mu_);
  done_cv_.wait(lk, [&] { return in_flight_ == 0; });
}

// --- apply thread --------------------------------------------------------

Status Store::apply_one(InFlight &f) {
  strata_err err{};
  int rc = backend_->apply(f.seq, f.txn.ops(), journal_ ? 0 : STRATA_TXN_SYNC, &err);
  if (rc < 0)
    return Status::Error(rc, "backend " + meta_.backend + " failed to apply seq " +
                                 std::to_string(f.seq) + ": " + err.msg);
  return Status::OK();
}

// Called with no apply running (apply thread, open, close).
Status Store::checkpoint_locked_out(uint64_t seq) {
  strata_err err{};
  if (journal_ && parallel_apply_) {
    // The checkpoint may contain transactions applied before their journal
    // write finished; the journal must never be trimmed past what it holds.
    int rc = journal_->ops()->flush(journal_->handle(), &err);
    if (rc < 0) return Status::Error(rc, std::string("journal flush: ") + err.msg);
  }
  auto start = Clock::now();
  int rc = backend_->ops()->checkpoint(backend_->handle(), seq, &err);
  if (rc < 0)
    return Status::Error(rc, "backend " + meta_.backend + " checkpoint at seq " +
                                 std::to_string(seq) + ": " + err.msg);
  if (journal_) {
    rc = journal_->ops()->trim(journal_->handle(), seq, &err);
    if (rc < 0) return Status::Error(rc, std::string("journal trim: ") + err.msg);
  }
  auto now = Clock::now();
  busy_since_checkpoint_ += now - start;
  double busy = std::chrono::duration<double>(busy_since_checkpoint_).count();
  if (bytes_since_checkpoint_ > 0 && busy > 0) {
    // Drain rate: what the backend absorbed per second of its own work,
    // applying plus syncing, i.e. how fast the journal can be emptied.
    double rate = bytes_since_checkpoint_ / std::max(busy, 1e-4);
    drain_rate_ = 0.5 * drain_rate_.load() + 0.5 * rate;
  }
  bytes_since_checkpoint_ = 0;
  busy_since_checkpoint_ = {};
  last_checkpoint_ = now;
  checkpoints_++;
  std::lock_guard lk(mu_);
  committed_seq_ = std::max(committed_seq_, seq);
  checkpoint_requested_ = false;
  return Status::OK();
}

Status Store::apply_striped(InFlight &f) {
  auto apply_start = Clock::now();
  std::vector<size_t> stripes = stripes_of(f);
  for (size_t i : stripes) stripes_[i].lock();
  Status st = apply_one(f);
  for (size_t i : stripes) stripes_[i].unlock();
  busy_since_checkpoint_ += Clock::now() - apply_start;
  return st;
}

bool Store::mark_applied(InFlight &f) {
  std::lock_guard lk(mu_);
  f.applied = true;
  if (!journal_) f.durable = true;
  applied_seq_ = f.seq;
  for (const std::string &k : f.objs)
    if (--pending_objects_[k] == 0) pending_objects_.erase(k);
  if (f.early_acked) {
    for (const std::string &k : f.objs) {
      auto it = acked_unapplied_.find(k);
      if (it != acked_unapplied_.end() && --it->second == 0) acked_unapplied_.erase(it);
    }
  }
  bool complete_now = f.durable && !f.completed;
  if (complete_now) f.completed = true;
  return complete_now;
}

bool Store::checkpoint_due(const InFlight &f) {
  if (f.has_clone && !exact_replay_) return true;
  if (Clock::now() - last_checkpoint_ >= std::chrono::milliseconds(settings_.checkpoint_interval_ms))
    return true;
  if (journal_) {
    strata_journal_stat js = journal_->stat();
    if (js.capacity_bytes &&
        100.0 * js.used_bytes / js.capacity_bytes >= settings_.checkpoint_fill_pct)
      return true;
  }
  std::lock_guard lk(mu_);
  return checkpoint_requested_;
}

void Store::apply_loop() {
  for (;;) {
    std::shared_ptr<InFlight> f;
    bool do_checkpoint = false;
    uint64_t ckpt_seq = 0;
    {
      std::unique_lock lk(mu_);
      auto ready = [&] {
        return !backend_busy_ && !queue_.empty() &&
               (queue_.front()->durable || parallel_apply_ || !journal_);
      };
      auto idle_ckpt = [&] {
        return !backend_busy_ && applied_seq_ > committed_seq_ && checkpoint_requested_;
      };
      bool woke = cv_.wait_for(lk, std::chrono::milliseconds(settings_.checkpoint_interval_ms),
                               [&] { return ready() || stopping_ || idle_ckpt() || !failed_.ok(); });
      if (!failed_.ok()) return;
      if (ready()) {
        f = queue_.front();
        queue_.pop_front();
        backend_busy_ = true;
      } else if (stopping_) {
        return;
      } else if (!backend_busy_ && applied_seq_ > committed_seq_ &&
                 (!woke || checkpoint_requested_)) {
        do_checkpoint = true;
        ckpt_seq = applied_seq_;
        backend_busy_ = true;
      }
    }
    if (do_checkpoint) {
      Status st = checkpoint_locked_out(ckpt_seq);
      release_backend();
      if (!st.ok()) fail(st);
      continue;
    }
    if (!f) continue;

    Status st = apply_striped(*f);
    if (!st.ok()) {
      fail(st);  // completes f too: it is still in live_
      release_backend();
      return;
    }
    bool complete_now = mark_applied(*f);
    done_cv_.notify_all();
    // The callback runs before the backend is given up, so that an inline
    // apply of the next transaction cannot complete ahead of this one.
    if (complete_now) complete(f, Status::OK());

    bytes_since_checkpoint_ += f->bytes;
    if (checkpoint_due(*f)) {
      Status cst = checkpoint_locked_out(f->seq);
      if (!cst.ok()) {
        release_backend();
        fail(cst);
        continue;
      }
    }
    release_backend();
  }
}

Status Store::checkpoint_now() {
  drain();
  uint64_t target;
  {
    std::lock_guard lk(mu_);
    target = applied_seq_;
    if (committed_seq_ >= target) return Status::OK();
    checkpoint_requested_ = true;
  }
  cv_.notify_all();
  std::unique_lock lk(mu_);
  while (committed_seq_ < target && failed_.ok()) {
    lk.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    cv_.notify_all();
    lk.lock();
  }
  return failed_;
}

void Store::fail(const Status &st) {
  std::deque<std::shared_ptr<InFlight>> orphans;
  {
    std::lock_guard lk(mu_);
    if (!failed_.ok()) return;
    failed_ = st;
    // Everything not yet completed, wherever it is (queued, being applied,
    // or waiting for a journal callback that will never come).
    for (auto &[seq, f] : live_)
      if (!f->completed) {
        f->completed = true;
        orphans.push_back(f);
      }
    queue_.clear();
  }
  log_.error("store", "store " + dir_ + " stopped accepting writes: " + st.ToString());
  cv_.notify_all();
  done_cv_.notify_all();  // readers waiting for an apply that will not come
  for (auto &f : orphans) complete(f, st);
}

Status Store::failed_status() const {
  std::lock_guard lk(mu_);
  return failed_;
}

// --- reads ---------------------------------------------------------------

std::shared_lock<std::shared_mutex> Store::read_lock(std::string_view coll,
                                                    std::string_view oid) {
  std::string key = object_key(coll, oid);
  {
    std::unique_lock lk(mu_);
    // After a failure the applies never come; reads then see what is there.
    if (!acked_unapplied_.empty())
      done_cv_.wait(lk, [&] { return !failed_.ok() || !acked_unapplied_.count(key); });
  }
  return std::shared_lock(stripes_[std::hash<std::string>{}(key) % kStripes]);
}

void Store::wait_collection_applied(std::string_view coll) {
  std::string prefix = object_key(coll, "");
  std::unique_lock lk(mu_);
  done_cv_.wait(lk, [&] {
    if (!failed_.ok()) return true;
    auto it = acked_unapplied_.lower_bound(prefix);
    return it == acked_unapplied_.end() || it->first.compare(0, prefix.size(), prefix) != 0;
  });
}

std::vector<size_t> Store::stripes_of(const InFlight &f) const {
  std::vector<size_t> out;
  if (!f.colls.empty()) {
    // Collection ops touch every object of the collection.
    for (size_t i = 0; i < kStripes; ++i) out.push_back(i);
    return out;
  }
  for (const std::string &k : f.objs) out.push_back(std::hash<std::string>{}(k) % kStripes);
  // A fixed order, so that two lockers can never wait for each other.
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {

// Calls a getxattr-style function (returns full length; copies when it fits)
// until the buffer is large enough.
template <class F>
Result<std::string> fetch_value(F &&call, const std::string &what) {
  std::string buf(256, '\0');
  for (int attempt = 0; attempt < 4; ++attempt) {
    strata_err err{};
    int64_t n = call(buf.data(), buf.size(), &err);
    if (n < 0) return Status::Error(static_cast<int>(n), what + ": " + err.msg);
    if (static_cast<uint64_t>(n) <= buf.size()) {
      buf.resize(n);
      return buf;
    }
    buf.assign(n, '\0');
  }
  return Status::Error(EIO, what + ": value keeps changing size");
}

}  // namespace

Result<std::string> Store::read(std::string_view coll, std::string_view oid, uint64_t off,
                                uint64_t len) {
  auto lock = read_lock(coll, oid);
  std::string what = "read " + std::string(coll) + "/" + std::string(oid);
  if (len == UINT64_MAX) {
    auto st = stat_unlocked(coll, oid);
    if (!st.ok()) return st.status();
    len = st->size > off ? st->size - off : 0;
  }
  std::string buf(len, '\0');
  strata_err err{};
  int64_t n = backend_->ops()->read(backend_->handle(), sl(coll), sl(oid), off, len, buf.data(), &err);
  if (n < 0) return Status::Error(static_cast<int>(n), what + ": " + err.msg);
  buf.resize(n);
  return buf;
}

Result<strata_object_stat> Store::stat(std::string_view coll, std::string_view oid) {
  auto lock = read_lock(coll, oid);
  return stat_unlocked(coll, oid);
}

Result<strata_object_stat> Store::stat_unlocked(std::string_view coll, std::string_view oid) {
  strata_object_stat st{};
  st.struct_size = sizeof st;
  strata_err err{};
  int rc = backend_->ops()->stat(backend_->handle(), sl(coll), sl(oid), &st, &err);
  if (rc < 0)
    return Status::Error(rc, "stat " + std::string(coll) + "/" + std::string(oid) + ": " + err.msg);
  return st;
}

Result<std::string> Store::getxattr(std::string_view coll, std::string_view oid,
                                    std::string_view name) {
  auto lock = read_lock(coll, oid);
  return fetch_value(
      [&](void *b, size_t cap, strata_err *e) {
        return backend_->ops()->getxattr(backend_->handle(), sl(coll), sl(oid), sl(name), b, cap, e);
      },
      "getxattr " + std::string(coll) + "/" + std::string(oid) + " " + std::string(name));
}

Result<Store::KvList> Store::getxattrs(std::string_view coll, std::string_view oid) {
  auto lock = read_lock(coll, oid);
  KvList out;
  strata_err err{};
  auto cb = [](void *ctx, strata_slice k, strata_slice v) {
    static_cast<KvList *>(ctx)->emplace_back(std::string(sv(k)), std::string(sv(v)));
    return 0;
  };
  int rc = backend_->getxattrs(sl(coll), sl(oid), cb, &out, &err);
  if (rc < 0) return Status::Error(rc, "getxattrs " + std::string(oid) + ": " + err.msg);
  return out;
}

Result<std::string> Store::omap_get_header(std::string_view coll, std::string_view oid) {
  auto lock = read_lock(coll, oid);
  return fetch_value(
      [&](void *b, size_t cap, strata_err *e) {
        return backend_->ops()->omap_get_header(backend_->handle(), sl(coll), sl(oid), b, cap, e);
      },
      "omap header " + std::string(coll) + "/" + std::string(oid));
}

Result<std::string> Store::omap_get(std::string_view coll, std::string_view oid,
                                    std::string_view key) {
  auto lock = read_lock(coll, oid);
  return fetch_value(
      [&](void *b, size_t cap, strata_err *e) {
        return backend_->ops()->omap_get(backend_->handle(), sl(coll), sl(oid), sl(key), b, cap, e);
      },
      "omap get " + std::string(coll) + "/" + std::string(oid));
}

Result<Store::KvList> Store::omap_list(std::string_view coll, std::string_view oid,
                                       std::string_view start_after, std::string_view end,
                                       uint64_t limit) {
  auto lock = read_lock(coll, oid);
  KvList out;
  strata_err err{};
  auto cb = [](void *ctx, strata_slice k, strata_slice v) {
    static_cast<KvList *>(ctx)->emplace_back(std::string(sv(k)), std::string(sv(v)));
    return 0;
  };
  int rc = backend_->omap_iterate(sl(coll), sl(oid), sl(start_after), sl(end), limit, cb, &out,
                                  &err);
  if (rc < 0) return Status::Error(rc, "omap list " + std::string(oid) + ": " + err.msg);
  return out;
}

Result<std::vector<std::string>> Store::list_objects(std::string_view coll,
                                                     std::string_view start_after,
                                                     uint64_t limit) {
  wait_collection_applied(coll);
  std::vector<std::string> out;
  strata_err err{};
  auto cb = [](void *ctx, strata_slice n) {
    static_cast<std::vector<std::string> *>(ctx)->emplace_back(sv(n));
    return 0;
  };
  int rc = backend_->list_objects(sl(coll), sl(start_after), limit, cb, &out, &err);
  if (rc < 0) return Status::Error(rc, "list " + std::string(coll) + ": " + err.msg);
  return out;
}

Result<std::vector<std::string>> Store::list_collections() {
  std::vector<std::string> out;
  strata_err err{};
  auto cb = [](void *ctx, strata_slice n) {
    static_cast<std::vector<std::string> *>(ctx)->emplace_back(sv(n));
    return 0;
  };
  int rc = backend_->list_collections(cb, &out, &err);
  if (rc < 0) return Status::Error(rc, std::string("list collections: ") + err.msg);
  return out;
}

Result<strata_store_usage> Store::usage() {
  strata_store_usage u{};
  u.struct_size = sizeof u;
  strata_err err{};
  int rc = backend_->ops()->usage(backend_->handle(), &u, &err);
  if (rc < 0) return Status::Error(rc, std::string("usage: ") + err.msg);
  return u;
}

Result<StoreSpace> Store::space() const {
  auto s = filesystem_space(dir_);
  if (!s.ok()) return s.status().Context("store " + dir_);
  s->used_bytes += staging_bytes_.load();
  return s;
}

Status Store::claim_stage_space(uint64_t len, const std::string &what) {
  staging_bytes_ += len;
  auto s = space();
  // An unreadable statvfs is no reason to refuse: the write itself will say.
  if (!s.ok() || fits_outside_reserve({s->total_bytes, s->used_bytes - len}, len,
                                      settings_.reserve_pct))
    return Status::OK();
  staging_bytes_ -= len;
  return Status::Error(ENOSPC, "store " + dir_ + ": " + what + " would eat into the " +
                                   std::to_string(settings_.reserve_pct) +
                                   "% reserve (" + std::to_string(s->used_bytes - len) + " of " +
                                   std::to_string(s->total_bytes) + " bytes used)");
}

Result<int64_t> Store::fsck() {
  drain();
  strata_err err{};
  int64_t n = backend_->ops()->fsck(backend_->handle(), &err);
  if (n < 0) return Status::Error(static_cast<int>(n), std::string("fsck: ") + err.msg);
  return n;
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

// --- journal swap --------------------------------------------------------

Status Store::journal_swap(const host::PluginRegistry &reg, const std::string &dir,
                           const std::string &journal, const std::string &journal_path,
                           uint64_t journal_size, const OptionList &journal_options,
                           Logger &log) {
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

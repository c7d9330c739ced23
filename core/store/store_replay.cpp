// Replay at open: re-applies the journal's records past the backend's last
// checkpoint, refuses a journal that lost records the backend never applied
// (a gap), and, for `strata store fsck --repair --discard-after SEQ`, drops
// what follows SEQ and starts a new journal, keeping a copy of the old one.
//
// Threading: runs inside open, on the opener's thread, before the apply
// thread exists: nothing else touches the store, so it applies and
// checkpoints without taking the backend (checkpoint_locked_out).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <fstream>

#include "store/store.h"
#include "store/store_internal.h"

namespace strata::store {

using namespace internal;

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
      uint64_t first = 0;           // first seq visited
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
      if (st.ok() && f.has_clone && !x->self->exact_replay_)
        st = x->self->checkpoint_locked_out(seq);
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
        return Status::Error(EUCLEAN,
                             "--discard-after " + std::to_string(*discard_after_) + ": journal " +
                                 journal_->path() + " can be read only up to seq " +
                                 std::to_string(ctx.applied) + why + "; discard after seq " +
                                 std::to_string(ctx.applied) + " at most");
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
                           " journaled transactions after checkpoint " + std::to_string(committed) +
                           ", now at seq " + std::to_string(last));
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
    if (js.first_seq > committed + 1)
      oldest = newest = js.first_seq;
    else if (js.first_seq == 0 && js.last_seq > committed)
      oldest = newest = js.last_seq + 1;
    else
      return Status::OK();
    if (js.first_seq == 0) newest = js.last_seq;
  }
  if (oldest <= committed + 1) return Status::OK();
  const std::string lost =
      "seqs " + std::to_string(committed + 1) + ".." + std::to_string(oldest - 1);
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

}  // namespace strata::store

// An open image's I/O (open_image.h): requests become per-object client
// calls run in parallel: reads (with read-ahead), writes, discards,
// flushes. (The lock thread: image_lock_thread.cpp; extents:
// image_extents.cpp.)
#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <map>

#include "open_image.h"
#include "store_ops.h"
#include "strata/cpp/plugin_support.hpp"
#include "strata/frontend_client.h"

namespace strata::rbd {

namespace {
constexpr unsigned kWorkers = 4;  // threads for copy-up and reads through to a parent
// Largest read-ahead read: large enough to save operations, small enough
// that the reader waits for little more than the block it needs.
constexpr uint64_t kMaxPrefetchRead = 512u << 10;

// What one object's part of a write or discard does to the object: a
// whole object is written in full or removed (emptied instead where it
// would read through to a clone's parent again), a part written or zeroed.
ObjectMutation mutation_for(bool is_write, bool whole, bool removable, uint64_t off,
                            uint64_t len, const char *data) {
  using K = ObjectMutation::Kind;
  if (is_write) return {whole ? K::kWriteFull : K::kWrite, data, off, len};
  if (whole) return removable ? ObjectMutation{K::kRemove} : ObjectMutation{K::kTruncate};
  return {K::kZero, nullptr, off, len};
}

}  // namespace

struct OpenImage::Request {
  Done done;
  std::string what;  // for last_error(): "write 4096 bytes at 0"
  std::mutex m;
  uint32_t remaining = 0;
  int error = 0;
  uint64_t write_seq = 0;  // 0: not a write
  uint64_t ticket = 0;     // the change's in write_back_
  std::vector<char> data;  // an early-answered write's own copy of its data
};

std::unique_ptr<Image> Image::open(const strata_client_api *strata_api,
                                   strata_cluster_t cluster, const std::string &pool,
                                   const std::string &name, const OpenOptions &opts) {
  strata_ioctx_t io = nullptr;
  const int rc = strata_ioctx_create(cluster, pool.c_str(), &io);
  if (rc < 0) throw sdk::Error(rc, "opening image " + pool + "/" + name + ": no pool " + pool);
  // The pools of a clone's parents, when not this one: the image owns them.
  std::map<std::string, strata_ioctx_t> other_pools;
  const PoolResolver pools = [&](const std::string &p, strata_ioctx_t *out) {
    auto it = other_pools.find(p);
    if (it == other_pools.end()) {
      strata_ioctx_t pio = nullptr;
      if (const int prc = strata_ioctx_create(cluster, p.c_str(), &pio); prc < 0) return prc;
      it = other_pools.emplace(p, pio).first;
    }
    *out = it->second;
    return 0;
  };
  try {
    const ImageRef ref{strata_api, io, pool, name};
    const std::string id = lookup_image_id(ref);
    const Header h = read_header(ref, id);
    const SnapInfo *snap = nullptr;
    if (!opts.snap.empty()) {
      snap = h.find_snap(opts.snap);
      if (!snap) fail(-ENOENT, ref, "no snapshot " + opts.snap + " of");
    }
    // A clone's head reads through its parent link's overlap, a clone's
    // snapshot through the overlap it had then.
    const uint64_t overlap = !h.parent ? 0 : snap ? snap->parent_overlap : h.parent->overlap;
    std::shared_ptr<const ParentChain> parents;
    if (overlap > 0) parents = load_parent_chain(ref, *h.parent, pools);
    std::unique_ptr<ExclusiveLock> lock;
    if (!opts.read_only && !snap) {
      lock = std::make_unique<ExclusiveLock>(ref, id, make_lock_owner(strata_api, cluster),
                                             opts.lock_description, opts.lock_lease_ms);
      lock->acquire();
    }
    std::vector<strata_ioctx_t> parent_ios;
    for (const auto &[p, pio] : other_pools) parent_ios.push_back(pio);
    return std::make_unique<OpenImage>(strata_api, io, ref, h, snap, opts, std::move(lock),
                                       std::move(parents), overlap, std::move(parent_ios));
  } catch (...) {
    for (const auto &[p, pio] : other_pools) strata_ioctx_destroy(pio);
    strata_ioctx_destroy(io);
    throw;
  }
}

OpenImage::OpenImage(const strata_client_api *api, strata_ioctx_t io, const ImageRef &ref,
                     const Header &h, const SnapInfo *snap, const OpenOptions &opts,
                     std::unique_ptr<ExclusiveLock> lock,
                     std::shared_ptr<const ParentChain> parents, uint64_t parent_overlap,
                     std::vector<strata_ioctx_t> parent_ios)
    : strata_api(api),
      io_(io),
      ref_(ref),
      describe_(ref.pool + "/" + ref.name + (snap ? "@" + snap->name : "")),
      size_(snap ? snap->size : h.size),
      object_size_(h.object_size),
      read_only_(opts.read_only || snap != nullptr),
      snap_id_(snap ? snap->id : 0),
      opts_(opts),
      queue_(opts.max_inflight_ops, kWorkers),
      write_back_(opts.read_only || snap ? 0 : opts.writeback_max_bytes),
      // (A clone's holes read through to its parent, a snapshot's reads
      // need set_snap: no read-ahead there yet.)
      readahead_(snap || parents ? 0 : opts.readahead_max_bytes, h.object_size,
                 snap ? snap->size : h.size),
      lock_(std::move(lock)),
      snap_seq_(h.snap_context()),
      parents_(std::move(parents)),
      parent_overlap_(parent_overlap),
      parent_ios_(std::move(parent_ios)) {
  info_.pool = ref.pool;
  info_.name = ref.name;
  info_.id = h.id;
  info_.size = size_;
  info_.object_size = h.object_size;
  info_.created_ns = h.created_ns;
  for (const auto &[id, s] : h.snaps) info_.snaps.push_back(s);
  info_.parent = h.parent;
  if (lock_) {
    lease_valid_until_ns_ = lock_->valid_until().time_since_epoch().count();
    lock_thread_ = std::thread([this] { lock_loop(); });
  }
}

OpenImage::~OpenImage() { (void)close(); }

ImageInfo OpenImage::info() {
  std::lock_guard lk(m_);
  ImageInfo i = info_;
  if (lock_ && !lock_lost_) i.lock_owner = lock_->owner();
  return i;
}

ImageStats OpenImage::stats() const {
  ImageStats st;
  {
    std::lock_guard lk(m_);
    st = stats_;
  }
  st.writeback_bytes = write_back_.answered_bytes();
  return st;
}

std::string OpenImage::last_error() const {
  std::lock_guard lk(m_);
  return last_error_;
}

void OpenImage::note_error(int rc, const std::string &what) {
  std::lock_guard lk(m_);
  ++stats_.errors;
  last_error_ = what + " of " + describe_ + ": " + std::strerror(-rc);
}

// ---- requests ----

void OpenImage::piece_done(const std::shared_ptr<Request> &req, int64_t rc, uint32_t pieces) {
  bool last;
  {
    std::lock_guard lk(req->m);
    if (rc < 0 && req->error == 0) req->error = static_cast<int>(rc);
    req->remaining -= pieces;
    last = req->remaining == 0;
  }
  if (last) finish_request(*req);
}

void OpenImage::finish_request(Request &req) {
  if (req.error) note_error(req.error, req.what);
  std::vector<PendingFlush> ready;
  int flush_rc = 0;
  if (req.write_seq) {
    std::lock_guard lk(m_);
    writes_inflight_.erase(req.write_seq);
    --active_writes_;
    if (req.error && !flush_error_) flush_error_ = req.error;
    if (req.error && !close_error_) close_error_ = req.error;
    const uint64_t oldest = writes_inflight_.empty() ? UINT64_MAX : *writes_inflight_.begin();
    for (auto it = flushes_.begin(); it != flushes_.end();) {
      if (it->covers < oldest) {
        ready.push_back(std::move(*it));
        it = flushes_.erase(it);
      } else {
        ++it;
      }
    }
    if (!ready.empty()) {
      flush_rc = flush_error_;
      flush_error_ = 0;
    }
    cv_.notify_all();
  }
  req.done(req.error);
  for (auto &f : ready) f.done(flush_rc);
  std::lock_guard lk(m_);
  --requests_inflight_;
  cv_.notify_all();
}

void OpenImage::read(uint64_t off, uint64_t len, char *out, Done done) {
  if (len == 0 || off + len > size_ || off + len < off) {
    done(-EINVAL);
    return;
  }
  auto req = std::make_shared<Request>();
  req->done = std::move(done);
  req->what = "read " + std::to_string(len) + " bytes at " + std::to_string(off);
  const bool use_ra = snap_id_ == 0 && readahead_.enabled();
  // With read-ahead, pieces are read-ahead blocks (a block divides an
  // object), so each can be answered by one block.
  const uint64_t unit = use_ra ? readahead_.block_size() : object_size_;
  std::vector<ReadPiece> pieces;
  for (uint64_t pos = off; pos < off + len;) {
    const uint64_t n = std::min(off + len, (pos / unit + 1) * unit) - pos;
    pieces.push_back({pos / object_size_, pos % object_size_, n, out + (pos - off), 1});
    pos += n;
  }
  {
    std::lock_guard lk(m_);
    ++requests_inflight_;
    ++stats_.reads;
    stats_.bytes_read += len;
  }
  // One count more than pieces, given back once this call is done with
  // `this`: the request (and so a close() waiting for it) cannot finish
  // while we are still issuing it.
  req->remaining = static_cast<uint32_t>(pieces.size()) + 1;
  queue_.wait_for_room();
  // After the changes in flight it overlaps: one may have been answered.
  write_back_.when_clear(off, len, [this, off, len, use_ra, req, pieces = std::move(pieces)] {
    issue_read_pieces(off, len, use_ra, req, pieces);
  });
}

void OpenImage::issue_read_pieces(uint64_t off, uint64_t len, bool use_ra,
                                  const std::shared_ptr<Request> &req,
                                  const std::vector<ReadPiece> &pieces) {
  using Piece = ReadPiece;
  std::vector<Piece> misses;
  for (const Piece &p : pieces) {
    if (use_ra) {
      auto waiter = [this, req, p](const Readahead::Block *b) {
        if (!b) {
          issue_read(p.objno, p.off, p.len, p.dst, req, 1);
          return;
        }
        std::memcpy(p.dst, b->data.data() + (p.off - b->off), p.len);
        {
          std::lock_guard lk(m_);
          ++stats_.readahead_hits;
        }
        piece_done(req, 0);
      };
      const auto s = readahead_.serve(p.objno, p.off, p.len, p.dst, waiter);
      if (s == Readahead::Serve::kWaiting) continue;
      if (s == Readahead::Serve::kHit) {
        {
          std::lock_guard lk(m_);
          ++stats_.readahead_hits;
        }
        piece_done(req, 0);
        continue;
      }
    }
    // Adjacent misses in one object become one object read.
    if (!misses.empty() && misses.back().objno == p.objno &&
        misses.back().off + misses.back().len == p.off) {
      misses.back().len += p.len;
      ++misses.back().count;
    } else {
      misses.push_back(p);
    }
  }
  for (const Piece &p : misses) issue_read(p.objno, p.off, p.len, p.dst, req, p.count);
  if (use_ra) {
    const auto [ra_off, ra_len] = readahead_.on_read(off, len);
    if (ra_len) prefetch(ra_off, ra_len);
  }
  piece_done(req, 0);
}

void OpenImage::issue_read(uint64_t objno, uint64_t off, uint64_t len, char *dst,
                           std::shared_ptr<Request> req, uint32_t pieces) {
  {
    std::lock_guard lk(m_);
    ++stats_.object_reads;
  }
  if (snap_id_) {
    // A snapshot's object: one read op at that snapshot (the OSD reads the
    // clone serving it, or the object when it has not changed since).
    queue_.submit([this, objno, off, len, dst, req, pieces](OpQueue::Finish fin) {
      struct SnapRead {
        strata_read_op_t op = nullptr;
        size_t got = 0;
        int prval = 0;
      };
      // The op and its outputs live until the completion has run.
      auto r = std::make_shared<SnapRead>();
      r->op = strata_read_op_new();
      if (!r->op) {
        object_read_done(objno, off, len, dst, -ENOMEM, req, pieces, fin);
        return;
      }
      strata_read_op_set_snap(r->op, snap_id_);
      strata_read_op_read(r->op, off, len, dst, &r->got, &r->prval);
      const std::string oid = format::data_oid(info_.id, objno);
      auto on_done = [this, r, objno, off, len, dst, req, pieces, fin](int64_t rc) {
        strata_read_op_release(r->op);
        object_read_done(objno, off, len, dst, rc < 0 ? rc : static_cast<int64_t>(r->got), req,
                         pieces, fin);
      };
      const int rc = start_aio(
          strata_api,
          [&](strata_completion_t c) {
            return strata_aio_read_op_operate(r->op, io_, oid.c_str(), c);
          },
          on_done);
      if (rc < 0) on_done(rc);
    });
    return;
  }
  queue_.submit([this, objno, off, len, dst, req, pieces](OpQueue::Finish fin) {
    const std::string oid = format::data_oid(info_.id, objno);
    auto on_done = [this, objno, off, len, dst, req, pieces, fin](int64_t rc) {
      object_read_done(objno, off, len, dst, rc, req, pieces, fin);
    };
    const int rc = start_aio(
        strata_api,
        [&](strata_completion_t c) { return strata_aio_read(io_, oid.c_str(), c, dst, len, off); },
        on_done);
    if (rc < 0) on_done(rc);
  });
}

void OpenImage::object_read_done(uint64_t objno, uint64_t off, uint64_t len, char *dst,
                                 int64_t rc, const std::shared_ptr<Request> &req, uint32_t pieces,
                                 const OpQueue::Finish &fin) {
  if (rc == -ENOENT) {
    if (auto parent = parent_object(objno)) {
      // A clone's object missing (at the snapshot read): its parents'
      // data, on a worker (synchronous calls, one per level).
      queue_.run_on_worker([this, parent, off, len, dst, req, pieces, fin] {
        const int prc = read_parent_object(*parent, off, len, dst);
        piece_done(req, prc, pieces);
        fin(prc);
      });
      return;
    }
    rc = 0;  // a missing object reads as zeros
  }
  if (rc >= 0 && static_cast<uint64_t>(rc) < len) std::memset(dst + rc, 0, len - rc);
  piece_done(req, rc < 0 ? rc : 0, pieces);
  fin(rc);
}

void OpenImage::prefetch(uint64_t off, uint64_t len) {
  // Adjacent blocks of one object are fetched by one read (fewer, larger
  // operations), then handed out block by block.
  const auto blocks = readahead_.begin_prefetch(off, len);
  for (size_t i = 0; i < blocks.size();) {
    size_t j = i + 1;
    uint64_t span = blocks[i]->len;
    while (j < blocks.size() && blocks[j]->objno == blocks[i]->objno &&
           blocks[j]->off == blocks[i]->off + span && span < kMaxPrefetchRead) {
      span += blocks[j]->len;
      ++j;
    }
    std::vector<Readahead::BlockPtr> group(blocks.begin() + static_cast<ptrdiff_t>(i),
                                           blocks.begin() + static_cast<ptrdiff_t>(j));
    i = j;
    {
      std::lock_guard lk(m_);
      stats_.readahead_bytes += span;
      ++stats_.object_reads;
    }
    queue_.submit([this, group = std::move(group), span](OpQueue::Finish fin) {
      const uint64_t first = group.front()->off;
      auto buf = std::make_shared<std::vector<char>>(span);
      const std::string oid = format::data_oid(info_.id, group.front()->objno);
      auto on_done = [this, group, buf, first, fin](int64_t rc) {
        for (const auto &b : group) {
          int64_t part = rc;  // this block's share of the bytes read
          if (rc >= 0) {
            const uint64_t skip = b->off - first;
            part = static_cast<uint64_t>(rc) > skip
                       ? std::min<int64_t>(rc - static_cast<int64_t>(skip), b->len)
                       : 0;
            if (part > 0) std::memcpy(b->data.data(), buf->data() + skip, part);
          }
          readahead_.fetched(b, part);
        }
        fin(rc);
      };
      const int rc = start_aio(
          strata_api,
          [&](strata_completion_t c) {
            return strata_aio_read(io_, oid.c_str(), c, buf->data(), span, first);
          },
          on_done);
      if (rc < 0) on_done(rc);
    });
  }
}

void OpenImage::cache(uint64_t off, uint64_t len, Done done) {
  if (len == 0 || off + len > size_) {
    done(-EINVAL);
    return;
  }
  if (snap_id_ == 0 && readahead_.enabled()) prefetch(off, len);
  done(0);
}

void OpenImage::write(uint64_t off, uint64_t len, const char *data, bool fua, Done done) {
  // A change completes once durable on every replica, so fua only says
  // not to answer it early (write_back.h).
  start_write(WriteKind::kWrite, off, len, data, !fua, std::move(done));
}

void OpenImage::discard(uint64_t off, uint64_t len, bool, Done done) {
  start_write(WriteKind::kDiscard, off, len, nullptr, false, std::move(done));
}

void OpenImage::write_zeroes(uint64_t off, uint64_t len, bool, bool, Done done) {
  // The image is thin: a discarded range reads as zeros, so zeroing is
  // discarding whether or not unmapping is allowed.
  start_write(WriteKind::kZeroes, off, len, nullptr, false, std::move(done));
}

void OpenImage::start_write(WriteKind kind, uint64_t off, uint64_t len, const char *data,
                            bool may_answer_early, Done done) {
  if (read_only_) {
    done(-EROFS);
    return;
  }
  if (len == 0 || off + len > size_ || off + len < off) {
    done(-EINVAL);
    return;
  }
  if (lock_lost_) {
    note_error(-EBUSY, "write refused: another client took over the exclusive lock");
    done(-EBUSY);
    return;
  }
  if (std::chrono::steady_clock::now().time_since_epoch().count() > lease_valid_until_ns_) {
    // Not renewed in time: someone may hold the lock by now.
    note_error(-EBUSY, "write refused: the exclusive lock's lease ran out before its renewal");
    done(-EBUSY);
    return;
  }
  auto req = std::make_shared<Request>();
  const bool early = may_answer_early && write_back_.enabled();
  if (early) {
    // The writer's buffer is free once answered: the request keeps a copy.
    req->data.assign(data, data + len);
    data = req->data.data();
  }
  req->what = std::string(kind == WriteKind::kWrite     ? "write "
                          : kind == WriteKind::kDiscard ? "discard "
                                                        : "write zeroes ") +
              std::to_string(len) + " bytes at " + std::to_string(off);
  {
    std::lock_guard lk(m_);
    ++requests_inflight_;
    req->write_seq = ++next_write_seq_;
    writes_inflight_.insert(req->write_seq);
    if (kind == WriteKind::kWrite) {
      ++stats_.writes;
      stats_.bytes_written += len;
    } else if (kind == WriteKind::kDiscard) {
      ++stats_.discards;
    } else {
      ++stats_.zeroes;
    }
  }
  // Admitted before anything can answer it, in arrival order; its answer
  // may come at once (early), so the request is counted in flight first.
  req->ticket = write_back_.admit(off, len, early, std::move(done));
  req->done = [this, ticket = req->ticket](int rc) { write_back_.finish(ticket, rc); };
  auto issue = [this, kind, off, len, data, req] {
    write_back_.when_ordered(req->ticket,
                             [this, kind, off, len, data, req] { issue_write(kind, off, len, data, req); });
  };
  {
    std::lock_guard lk(m_);
    if (writes_paused_) {
      // A snapshot is being taken: this write comes after it.
      paused_writes_.push_back(std::move(issue));
      return;
    }
    ++active_writes_;
  }
  queue_.wait_for_room();
  issue();
}

void OpenImage::issue_write(WriteKind kind, uint64_t off, uint64_t len, const char *data,
                            std::shared_ptr<Request> req) {
  uint32_t n = 0;
  for (uint64_t pos = off; pos < off + len; pos = (pos / object_size_ + 1) * object_size_) ++n;
  req->remaining = n + 1;  // + 1 until the loop is done (see read())
  for (uint64_t pos = off; pos < off + len;) {
    const uint64_t end = std::min(off + len, (pos / object_size_ + 1) * object_size_);
    const uint64_t objno = pos / object_size_;
    readahead_.begin_write(objno);
    write_piece(kind, objno, pos % object_size_, end - pos,
                data ? data + (pos - off) : nullptr, req);
    pos = end;
  }
  piece_done(req, 0);
}

void OpenImage::write_piece(WriteKind kind, uint64_t objno, uint64_t off, uint64_t len,
                            const char *data, std::shared_ptr<Request> req) {
  // The snapshot context this change carries: none without snapshots, or
  // once a change with the current one succeeded on the object (then the
  // OSDs may pipeline it behind earlier writes).
  uint64_t seq;
  std::optional<ParentObject> parent;
  {
    std::lock_guard lk(m_);
    seq = snap_seq_ > 0 && !preserved_.count(objno) ? snap_seq_ : 0;
    if (kind == WriteKind::kWrite)
      ++stats_.object_writes;
    else
      ++stats_.object_removes;
    if (!owned_.count(objno)) parent = parent_object(objno);
  }
  // The whole object (the last one may end at the image's end).
  const bool whole = off == 0 && (len == object_size_ || objno * object_size_ + len >= size_);
  // In a clone's overlap an object must stay (emptied), or it reads
  // through to the parent again.
  const bool removable = !parent_object(objno);
  const ObjectMutation m =
      mutation_for(kind == WriteKind::kWrite, whole, removable, off, len, data);
  // applied: the OSD ran the change, so the object is preserved for seq.
  auto finish = [this, objno, seq, kind, req](int64_t rc, bool applied) {
    if (applied && seq) {
      std::lock_guard lk(m_);
      if (snap_seq_ == seq && preserved_.insert(objno).second) ++stats_.cow_copies;
    }
    // Discarding or zeroing what is not there is done already.
    if (kind != WriteKind::kWrite && rc == -ENOENT) rc = 0;
    readahead_.end_write(objno);
    piece_done(req, rc < 0 ? rc : 0);
  };
  if (parent) {
    // A clone's object that may still read through: copy up first.
    queue_.submit([this, objno, seq, m, parent, finish](OpQueue::Finish fin) {
      queue_.run_on_worker([this, objno, seq, m, parent, finish, fin] {
        bool copied = false;
        const int rc =
            copy_up_and_mutate({strata_api, io_, info_.id, objno}, seq, *parent, m, &copied);
        {
          std::lock_guard lk(m_);
          if (rc == 0) owned_.insert(objno);
          if (copied) ++stats_.copy_ups;
        }
        finish(rc, rc == 0);
        fin(rc);
      });
    });
    return;
  }
  queue_.submit([this, objno, seq, m, finish](OpQueue::Finish fin) {
    const std::string oid = format::data_oid(info_.id, objno);
    auto on_done = [finish, fin](int64_t rc) {
      finish(rc, rc >= 0);
      fin(rc);
    };
    using K = ObjectMutation::Kind;
    int rc;
    if (seq == 0 && m.kind == K::kWriteFull) {
      // A whole object as one full write: the OSDs write a large one
      // straight to its place (staged on arrival) instead of through
      // their journals, which halves what the disks take for
      // sequential writers.
      rc = start_aio(
          strata_api,
          [&](strata_completion_t c) {
            return strata_aio_write_full(io_, oid.c_str(), c, m.data, m.len);
          },
          on_done);
    } else if (seq == 0 && m.kind == K::kWrite) {
      rc = start_aio(
          strata_api,
          [&](strata_completion_t c) {
            return strata_aio_write(io_, oid.c_str(), c, m.data, m.len, m.off);
          },
          on_done);
    } else if (seq == 0 && m.kind == K::kRemove) {
      rc = start_aio(
          strata_api, [&](strata_completion_t c) { return strata_aio_remove(io_, oid.c_str(), c); },
          on_done);
    } else {
      // One write op: the snapshot context first (the OSD keeps the object
      // as it was for the snapshots, once; a removed object's clones stay),
      // and a zero or truncate only of an object that exists.
      strata_write_op_t op = strata_write_op_new();
      if (!op) {
        on_done(-ENOMEM);
        return;
      }
      if (seq) strata_write_op_snap_context(op, seq);
      if (m.kind == K::kZero || m.kind == K::kTruncate) strata_write_op_assert_exists(op);
      add_object_mutation(strata_api, op, m);
      rc = start_aio(
          strata_api,
          [&](strata_completion_t c) {
            return strata_aio_write_op_operate(op, io_, oid.c_str(), c);
          },
          on_done);
      strata_write_op_release(op);  // operate copied what it needs
    }
    if (rc < 0) on_done(rc);
  });
}

void OpenImage::flush(Done done) {
  int rc = 0;
  {
    std::lock_guard lk(m_);
    ++stats_.flushes;
    const uint64_t covers = next_write_seq_;
    if (!writes_inflight_.empty() && *writes_inflight_.begin() <= covers) {
      flushes_.push_back({covers, std::move(done)});
      return;
    }
    rc = flush_error_;
    flush_error_ = 0;
  }
  done(rc);
}

std::optional<ParentObject> OpenImage::parent_object(uint64_t objno) const {
  if (!parents_) return std::nullopt;
  const uint64_t start = objno * object_size_;
  const uint64_t overlap = std::min(parent_overlap_, size_);
  if (start >= overlap) return std::nullopt;
  return ParentObject{strata_api, parents_, object_size_, objno,
                      std::min<uint64_t>(object_size_, overlap - start)};
}

}  // namespace strata::rbd

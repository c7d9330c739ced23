#include "mds/object_meta_store.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <set>

#include "checksum/crc32c.h"
#include "mds/store_names.h"
#include "msg/messenger.h"

namespace strata::mds {
namespace {

constexpr size_t kEntryHeader = 16;  // u32 length, u32 crc32c, u64 seq
constexpr uint32_t kListChunk = 1000;
// A page read from the directory objects stops near this many bytes, as a
// readdir reply does (mds_requests.cpp): else a directory of 16 KiB inline
// files had 1,024 entries read from the OSDs for the ~60 a reply takes, on
// every page.
constexpr size_t kListPageBytes = 1u << 20;
// Most bytes of keys and values one directory op carries (the op's
// metadata limit is kMaxOpMeta).
constexpr size_t kMaxOpKv = 1u << 20;

void put_le(std::string &s, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t get_le(const char *p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | static_cast<uint8_t>(p[i]);
  return v;
}

uint32_t entry_crc(uint64_t seq, std::string_view payload) {
  char seqb[8];
  for (int i = 0; i < 8; ++i) seqb[i] = static_cast<char>((seq >> (8 * i)) & 0xff);
  uint32_t c = checksum::crc32c(seqb, sizeof seqb);
  return checksum::crc32c_extend(c, payload.data(), payload.size());
}

std::string frame_entry(uint64_t seq, const std::string &payload) {
  std::string s;
  s.reserve(kEntryHeader + payload.size());
  put_le(s, payload.size(), 4);
  put_le(s, entry_crc(seq, payload), 4);
  put_le(s, seq, 8);
  s += payload;
  return s;
}

Status op_error(int rc, const std::string &what, const std::string &msg = {}) {
  return Status::Error(rc, what + (msg.empty() ? "" : ": " + msg));
}

// Keys and values for one object, split into ops of bounded size.
struct ObjectWrites {
  std::vector<std::string> set_keys, set_values, rm_keys;
  std::optional<std::string> header;
  bool remove = false;
};

std::vector<client::ObjectOperation> ops_for(ObjectWrites &w) {
  std::vector<client::ObjectOperation> ops;
  if (w.remove) {
    client::ObjectOperation op;
    op.remove();
    ops.push_back(std::move(op));
    return ops;
  }
  size_t i = 0, j = 0;
  bool first = true;
  while (first || i < w.set_keys.size() || j < w.rm_keys.size()) {
    client::ObjectOperation op;
    if (first && w.header) op.omap_set_header(*w.header);
    size_t bytes = 0;
    std::vector<std::string> ks, vs, rs;
    while (i < w.set_keys.size() && (ks.empty() || bytes < kMaxOpKv)) {
      bytes += w.set_keys[i].size() + w.set_values[i].size();
      ks.push_back(std::move(w.set_keys[i]));
      vs.push_back(std::move(w.set_values[i]));
      ++i;
    }
    while (j < w.rm_keys.size() && bytes < kMaxOpKv) {
      bytes += w.rm_keys[j].size();
      rs.push_back(std::move(w.rm_keys[j]));
      ++j;
    }
    if (!ks.empty()) op.omap_set(std::move(ks), std::move(vs));
    if (!rs.empty()) op.omap_rm_keys(std::move(rs));
    if (op.empty()) op.create(false);
    ops.push_back(std::move(op));
    first = false;
  }
  return ops;
}

}  // namespace

ObjectMetaStore::ObjectMetaStore(std::shared_ptr<client::ClusterClient> cluster,
                                 uint32_t metadata_pool, ObjectMetaStoreOptions opts)
    : cluster_(std::move(cluster)), pool_(metadata_pool), opts_(opts) {}

ObjectMetaStore::~ObjectMetaStore() { close(); }

// Every write of the store passes the cluster's full flags (up to the
// OSDs' failsafe ratio): the journal must take the unlinks that give a full
// filesystem its space back, and the apply and the purges must follow. The
// clients' data writes get ENOSPC at the full ratio; metadata (inline file
// data included) can grow past it up to the failsafe ratio.
Result<client::OpOutcome> ObjectMetaStore::exec(const std::string &oid, Op op, uint32_t pool) {
  op.set_full_try();
  auto r = cluster_->execute(pool, oid, std::move(op));
  if (!r.ok()) return r.status().Context(oid);
  return r;
}

Status ObjectMetaStore::exec_parallel(std::vector<std::pair<std::string, Op>> ops, uint32_t pool,
                                      bool enoent_ok) {
  if (ops.empty()) return Status::OK();
  struct Wait {
    std::mutex mu;
    std::condition_variable cv;
    size_t left;
    Status first;
  };
  auto w = std::make_shared<Wait>();
  w->left = ops.size();
  auto finish = [w](Status st) {
    std::lock_guard<std::mutex> l(w->mu);
    if (!st.ok() && w->first.ok()) w->first = std::move(st);
    if (--w->left == 0) w->cv.notify_all();
  };
  auto *objecter = cluster_->objecter();
  if (!objecter) return Status::Error(ENOTCONN, "metadata store: the cluster is not connected");
  for (auto &[oid, op] : ops) {
    std::string name = oid;
    op.set_full_try();  // as exec()
    Status st = objecter->submit(pool, oid, std::move(op),
                                 [finish, name, enoent_ok](const client::OpOutcome &o) {
                                   if (o.rc == 0 || (enoent_ok && o.rc == -ENOENT))
                                     finish(Status::OK());
                                   else
                                     finish(op_error(o.rc, "writing " + name, o.message));
                                 });
    if (!st.ok()) finish(st.Context("writing " + name));
  }
  std::unique_lock<std::mutex> l(w->mu);
  w->cv.wait(l, [&] { return w->left == 0; });
  return w->first;
}

// ---- open: fencing, a new filesystem, replay ----

Status ObjectMetaStore::fence(uint64_t incarnation) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    Op op;
    op.cmpxattr(kIncarnationXattr, client::CmpMode::kLt, incarnation_str_);
    op.setxattr(kIncarnationXattr, incarnation_str_);
    auto r = exec(kJournalOid, std::move(op));
    if (!r.ok()) return r.status().Context("fencing");
    if (r->rc == 0) return Status::OK();
    if (r->rc == -ECANCELED)
      return Status::Error(ECANCELED, std::string(kJournalOid) + ": incarnation " +
                                          std::to_string(incarnation) +
                                          " is not newer than the journal's");
    if (r->rc != -ENOENT) return op_error(r->rc, std::string("fencing ") + kJournalOid, r->message);
    // A new filesystem: make the journal (exclusive: racing actives).
    Op mk;
    mk.create(true);
    mk.setxattr(kIncarnationXattr, incarnation_str_);
    mk.omap_set_header(encode_journal_head(JournalHead{}));
    auto c = exec(kJournalOid, std::move(mk));
    if (!c.ok()) return c.status().Context("creating the journal");
    if (c->rc == 0) return Status::OK();
    if (c->rc != -EEXIST) return op_error(c->rc, std::string("creating ") + kJournalOid);
  }
  return Status::Error(EAGAIN, std::string("fencing ") + kJournalOid + ": raced too often");
}

Status ObjectMetaStore::init_fs_if_new() {
  Op probe;
  probe.stat(nullptr);
  auto r = exec(kFsMetaOid, std::move(probe));
  if (!r.ok()) return r.status();
  if (r->rc == 0) return Status::OK();
  if (r->rc != -ENOENT) return op_error(r->rc, std::string("reading ") + kFsMetaOid);
  InodeRec root;
  root.ino = kRootIno;
  root.type = FileType::kDirectory;
  root.mode = 0755;
  root.nlink = 2;
  root.uid = root.gid = 0;
  auto now = std::chrono::system_clock::now().time_since_epoch();
  Time t{std::chrono::duration_cast<std::chrono::seconds>(now).count(), 0};
  root.atime = root.mtime = root.ctime = root.btime = t;
  std::vector<std::pair<std::string, Op>> ops;
  Op ri;
  ri.omap_set_header(encode_inode(root));
  ops.emplace_back(inode_oid(kRootIno), std::move(ri));
  for (Ino d : {kRootIno, kStrayIno}) {
    Op dop;
    dop.omap_set_header(encode_dir_header(0));
    ops.emplace_back(dir_oid(d, 0), std::move(dop));
  }
  if (Status st = exec_parallel(std::move(ops), pool_); !st.ok())
    return st.Context("making the root directory");
  // mds.fsmeta last: its existence says the filesystem is made.
  Op fm;
  fm.omap_set_header(encode_fsmeta(FsMeta{}));
  auto f = exec(kFsMetaOid, std::move(fm));
  if (!f.ok()) return f.status();
  if (f->rc != 0) return op_error(f->rc, std::string("writing ") + kFsMetaOid);
  return Status::OK();
}

Result<JournalHead> ObjectMetaStore::read_head() {
  std::string header;
  Op op;
  op.omap_get_header([&](const client::StepResult &s) {
    if (s.rc == 0) header.assign(s.data);
  });
  auto r = exec(kJournalOid, std::move(op));
  if (!r.ok()) return r.status();
  if (r->rc != 0) return op_error(r->rc, std::string("reading ") + kJournalOid);
  return decode_journal_head(header, std::string(kJournalOid) + " header");
}

Status ObjectMetaStore::write_head_locked() {
  Op op;
  op.cmpxattr(kIncarnationXattr, client::CmpMode::kEq, incarnation_str_);
  op.omap_set_header(encode_journal_head(head_));
  auto r = exec(kJournalOid, std::move(op));
  if (!r.ok()) return r.status();
  if (r->rc == -ECANCELED)
    return Status::Error(ECANCELED, "fenced: a newer incarnation owns the journal");
  if (r->rc != 0) return op_error(r->rc, std::string("writing ") + kJournalOid, r->message);
  return Status::OK();
}

Status ObjectMetaStore::replay(RecoveredState &rs) {
  std::vector<Durable> entries;
  uint64_t last_seq = head_.applied_seq;
  for (uint64_t seg = head_.head_segment; seg <= head_.tail_segment; ++seg) {
    std::string oid = segment_oid(seg);
    std::string data;
    Op op;
    op.read(0, 0, [&](const client::StepResult &s) {
      if (s.rc == 0) data.assign(s.data);
    });
    auto r = exec(oid, std::move(op));
    if (!r.ok()) return r.status().Context("replaying the journal");
    if (r->rc == -ENOENT && seg == head_.tail_segment) break;  // rolled, never written
    if (r->rc != 0) return op_error(r->rc, "replaying the journal: reading " + oid, r->message);
    bool last = seg == head_.tail_segment;
    uint64_t off = seg == head_.head_segment ? head_.head_offset : 0;
    while (off < data.size()) {
      auto where = [&] { return oid + " at offset " + std::to_string(off); };
      size_t left = data.size() - off;
      bool torn = false;
      std::string why;
      uint64_t len = 0, seq = 0;
      if (left < kEntryHeader) {
        torn = true;
        why = "a partial entry header";
      } else {
        len = get_le(data.data() + off, 4);
        uint32_t crc = static_cast<uint32_t>(get_le(data.data() + off + 4, 4));
        seq = get_le(data.data() + off + 8, 8);
        if (len > left - kEntryHeader) {
          torn = true;
          why = "an entry of " + std::to_string(len) + " bytes with " +
                std::to_string(left - kEntryHeader) + " left";
        } else if (entry_crc(seq, std::string_view(data).substr(off + kEntryHeader, len)) != crc) {
          torn = off + kEntryHeader + len == data.size();
          why = "crc mismatch";
        }
      }
      if (torn && last) break;  // a torn tail: the journal ends before it
      if (!why.empty())
        return Status::Error(EIO, "corrupt metadata journal: " + where() + ": " + why);
      if (seq <= last_seq)
        return Status::Error(EIO, "corrupt metadata journal: " + where() + ": sequence " +
                                      std::to_string(seq) + " after " + std::to_string(last_seq));
      auto u = decode_update(std::string_view(data).substr(off + kEntryHeader, len),
                             "journal entry in " + where());
      if (!u.ok()) return u.status();
      last_seq = seq;
      off += kEntryHeader + len;
      entries.push_back(Durable{seq, seg, off, kEntryHeader + len,
                                std::make_shared<const MetaUpdate>(std::move(*u))});
      rs.replayed_entries++;
      rs.replayed_bytes += kEntryHeader + len;
    }
  }
  // Apply in rounds of bounded size, then start a fresh segment: whatever
  // is torn in the old tail stays behind and is removed with it.
  size_t i = 0;
  while (i < entries.size()) {
    std::vector<Durable> round;
    uint64_t bytes = 0;
    while (i < entries.size() && (round.empty() || bytes < opts_.apply_round_bytes)) {
      bytes += entries[i].bytes;
      round.push_back(entries[i++]);
    }
    std::vector<std::shared_ptr<const MetaUpdate>> ups;
    for (auto &d : round) ups.push_back(d.update);
    if (Status st = apply_updates(ups); !st.ok()) return st.Context("replaying the journal");
  }
  uint64_t old_head = head_.head_segment, old_tail = head_.tail_segment;
  {
    std::lock_guard<std::mutex> l(head_mu_);
    head_.tail_segment = old_tail + 1;
    head_.head_segment = head_.tail_segment;
    head_.head_offset = 0;
    head_.applied_seq = last_seq;
    if (Status st = write_head_locked(); !st.ok()) return st;
  }
  std::vector<std::pair<std::string, Op>> rm;
  for (uint64_t s = old_head; s <= old_tail; ++s) {
    Op op;
    op.remove();
    rm.emplace_back(segment_oid(s), std::move(op));
  }
  if (Status st = exec_parallel(std::move(rm), pool_, true); !st.ok()) return st;
  next_seq_ = last_seq + 1;
  submitted_seq_ = durable_seq_ = applied_seq_ = last_seq;
  tail_bytes_ = 0;
  tail_created_ = false;
  return Status::OK();
}

Status ObjectMetaStore::read_recovered(RecoveredState &rs) {
  std::string header;
  Op h;
  h.omap_get_header([&](const client::StepResult &s) {
    if (s.rc == 0) header.assign(s.data);
  });
  auto r = exec(kFsMetaOid, std::move(h));
  if (!r.ok()) return r.status();
  if (r->rc != 0) return op_error(r->rc, std::string("reading ") + kFsMetaOid);
  auto m = decode_fsmeta(header, std::string(kFsMetaOid) + " header");
  if (!m.ok()) return m.status();
  rs.ino_next = std::max<Ino>(m->ino_next, kFirstUserIno);
  std::string after;
  while (true) {
    std::vector<std::pair<std::string, std::string>> kv;
    bool more = false;
    Op op;
    op.omap_list(after, "", kListChunk, [&](const client::StepResult &s) {
      if (s.rc != 0) return;
      for (size_t i = 0; i < s.keys.size() && i < s.values.size(); ++i)
        kv.emplace_back(std::string(s.keys[i]), std::string(s.values[i]));
      more = s.more;
    });
    auto l = exec(kFsMetaOid, std::move(op));
    if (!l.ok()) return l.status();
    if (l->rc != 0) return op_error(l->rc, std::string("listing ") + kFsMetaOid);
    for (auto &[k, v] : kv) {
      std::string what = std::string(kFsMetaOid) + " key " + k;
      if (k.rfind("session.", 0) == 0) {
        auto s = decode_session(v, what);
        if (!s.ok()) return s.status();
        rs.sessions.push_back(std::move(*s));
      } else if (k.rfind("purge.", 0) == 0) {
        auto p = decode_purge(v, what);
        if (!p.ok()) return p.status();
        rs.pending_purges.push_back(*p);
      }
    }
    if (!more || kv.empty()) break;
    after = kv.back().first;
  }
  return Status::OK();
}

Result<RecoveredState> ObjectMetaStore::open(uint64_t incarnation) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (opened_) return Status::Error(EALREADY, "metadata store already open");
  }
  if (incarnation == 0) return Status::Error(EINVAL, "incarnation 0 cannot own a journal");
  incarnation_ = incarnation;
  incarnation_str_ = hex16(incarnation);
  if (Status st = fence(incarnation); !st.ok()) return st;
  auto h = read_head();
  if (!h.ok()) return h.status();
  head_ = *h;
  {
    // Fence the last segment too: an old active's next append fails.
    Op op;
    op.setxattr(kIncarnationXattr, incarnation_str_);
    auto r = exec(segment_oid(head_.tail_segment), std::move(op));
    if (!r.ok()) return r.status().Context("fencing the last journal segment");
    if (r->rc != 0) return op_error(r->rc, "fencing " + segment_oid(head_.tail_segment));
  }
  if (Status st = init_fs_if_new(); !st.ok()) return st;
  RecoveredState rs;
  if (Status st = replay(rs); !st.ok()) return st;
  if (Status st = read_recovered(rs); !st.ok()) return st;
  {
    std::lock_guard<std::mutex> l(mu_);
    opened_ = true;
    for (const auto &p : rs.pending_purges)
      to_purge_.push_back(QueuedPurge{p, std::chrono::steady_clock::now()});
  }
  writer_ = std::thread([this] { writer_loop(); });
  applier_ = std::thread([this] { applier_loop(); });
  purger_ = std::thread([this] { purger_loop(); });
  return rs;
}

// ---- submit and the writer ----

void ObjectMetaStore::submit(MetaUpdate update, std::function<void(Status)> on_durable) {
  std::string payload = encode_update(update);
  auto shared = std::make_shared<const MetaUpdate>(std::move(update));
  std::lock_guard<std::mutex> l(mu_);
  uint64_t seq = next_seq_++;
  submitted_seq_ = seq;
  if (failed_.ok() && opened_ && !stopping_) {
    for (const auto &c : shared->dentries)
      overlay_dentries_[{c.dir, c.name}] = OverlayDentry{seq, c.dentry};
    for (const auto &c : shared->inodes) overlay_inodes_[c.ino] = OverlayInode{seq, c.inode};
  }
  const bool first = queue_.empty();
  queue_.push_back(Queued{seq, frame_entry(seq, payload), std::move(shared), std::move(on_durable),
                          std::chrono::steady_clock::now()});
  queued_bytes_ += queue_.back().framed.size();
  // The writer waits for the first entry, then (gathering) only for a full
  // batch: waking it for every entry would cost a context switch each.
  if (first || queued_bytes_ >= opts_.max_batch_bytes) writer_cv_.notify_one();
}

void ObjectMetaStore::hurry() {
  std::lock_guard<std::mutex> l(mu_);
  if (hurry_seq_ >= submitted_seq_) return;
  hurry_seq_ = submitted_seq_;
  writer_cv_.notify_one();
}

Status ObjectMetaStore::append_batch(std::vector<Queued> &batch, std::vector<Durable> &out) {
  std::string bytes;
  for (const auto &q : batch) bytes += q.framed;
  std::lock_guard<std::mutex> hl(head_mu_);
  if (tail_bytes_ > 0 && tail_bytes_ + bytes.size() > opts_.journal_segment_bytes) {
    head_.tail_segment++;
    if (Status st = write_head_locked(); !st.ok()) {
      head_.tail_segment--;
      return st;
    }
    tail_bytes_ = 0;
    tail_created_ = false;
  }
  std::string oid = segment_oid(head_.tail_segment);
  Op op;
  if (!tail_created_) {
    // A segment this instance starts: if a newer incarnation fenced it
    // first, the exclusive create fails.
    op.create(true);
    op.setxattr(kIncarnationXattr, incarnation_str_);
  } else {
    op.cmpxattr(kIncarnationXattr, client::CmpMode::kEq, incarnation_str_);
  }
  op.borrow_data(true);
  op.append(bytes);
  auto r = exec(oid, std::move(op));
  if (!r.ok()) return r.status().Context("appending to the journal");
  // -EEXIST: a newer incarnation fenced the segment before we made it;
  // -ENOENT: it replayed and removed our segment.
  if (r->rc == -ECANCELED || r->rc == -EEXIST || r->rc == -ENOENT)
    return Status::Error(ECANCELED, "fenced: a newer incarnation owns " + oid);
  if (r->rc != 0) return op_error(r->rc, "appending to " + oid, r->message);
  tail_created_ = true;
  uint64_t off = tail_bytes_;
  for (const auto &q : batch) {
    off += q.framed.size();
    out.push_back(Durable{q.seq, head_.tail_segment, off, q.framed.size(), q.update});
  }
  tail_bytes_ = off;
  return Status::OK();
}

void ObjectMetaStore::writer_loop() {
  std::unique_lock<std::mutex> l(mu_);
  while (true) {
    writer_cv_.wait(l, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) break;
    if (opts_.journal_delay.count() > 0)
      writer_cv_.wait_until(l, queue_.front().at + opts_.journal_delay, [&] {
        return stopping_ || hurry_seq_ >= queue_.front().seq ||
               queued_bytes_ >= opts_.max_batch_bytes;
      });
    std::vector<Queued> batch;
    uint64_t bytes = 0;
    while (!queue_.empty() &&
           (batch.empty() || bytes + queue_.front().framed.size() <= opts_.max_batch_bytes)) {
      bytes += queue_.front().framed.size();
      queued_bytes_ -= queue_.front().framed.size();
      batch.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    Status st = failed_;
    l.unlock();
    std::vector<Durable> durable;
    // Only fencing ends the journal. Anything else (a full pool, an OSD
    // timing out) is retried with a back-off until it goes through: the
    // server already applied these changes in memory and answered them
    // unsafe, so they must become durable, not be dropped.
    auto backoff = std::chrono::milliseconds(50);
    uint64_t failures = 0;
    while (st.ok()) {
      durable.clear();
      st = append_batch(batch, durable);
      if (st.ok() || st.code() == -ECANCELED) break;
      // Said at once and then every ~15 s: until it goes through, every
      // fsync and syncfs of these changes waits (a full cluster past the
      // OSDs' failsafe ratio, an OSD not answering).
      if (failures++ % 8 == 0)
        cluster_->log().warn("mds", "store: appending " + std::to_string(batch.size()) +
                                        " change(s) to the journal failed " +
                                        std::to_string(failures) +
                                        " time(s); retrying: " + st.ToString());
      std::unique_lock<std::mutex> sl(mu_);
      if (stopping_) break;
      writer_cv_.wait_for(sl, backoff, [&] { return stopping_; });
      if (stopping_) break;
      backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
      st = Status::OK();
    }
    l.lock();
    if (!st.ok()) {
      if (failed_.ok()) failed_ = st;
      // Nothing of the batch is in the journal: its overlay entries go.
      for (const auto &q : batch) {
        for (const auto &c : q.update->dentries) {
          auto it = overlay_dentries_.find({c.dir, c.name});
          if (it != overlay_dentries_.end() && it->second.seq == q.seq) overlay_dentries_.erase(it);
        }
        for (const auto &c : q.update->inodes) {
          auto it = overlay_inodes_.find(c.ino);
          if (it != overlay_inodes_.end() && it->second.seq == q.seq) overlay_inodes_.erase(it);
        }
      }
    } else {
      stats_.journal_writes++;
      stats_.journal_entries += batch.size();
      appended_bytes_ += bytes;
      appends_++;
      last_append_ = std::chrono::steady_clock::now();
      for (auto &d : durable) to_apply_.push_back(std::move(d));
      applier_cv_.notify_one();
    }
    l.unlock();
    {
      // The callbacks answer the clients whose requests this write made
      // safe: one message each, all of a client's in one gather write.
      msg::SendBatch together;
      for (auto &q : batch)
        if (q.cb) q.cb(st);
    }
    l.lock();
    durable_seq_ = batch.back().seq;
    done_cv_.notify_all();
  }
}

Status ObjectMetaStore::flush() {
  std::unique_lock<std::mutex> l(mu_);
  uint64_t want = submitted_seq_;
  if (hurry_seq_ < want) {
    hurry_seq_ = want;
    writer_cv_.notify_one();
  }
  done_cv_.wait(l, [&] { return durable_seq_ >= want || !writer_.joinable(); });
  return failed_;
}

// ---- the applier ----

void ObjectMetaStore::applier_loop() {
  std::unique_lock<std::mutex> l(mu_);
  while (true) {
    applier_cv_.wait(l, [&] { return stopping_ || !to_apply_.empty(); });
    if (stopping_) break;
    // Let a round gather (see ObjectMetaStoreOptions::apply_max_delay),
    // unless the store is stopping or someone waits for the round.
    const uint64_t round_bytes = opts_.apply_round_bytes;
    const auto oldest = std::chrono::steady_clock::now();
    auto quiet_since = oldest;
    while (!stopping_ && apply_waiters_ == 0) {
      const uint64_t appends = appends_;
      applier_cv_.wait_for(l, opts_.apply_interval,
                           [&] { return stopping_ || apply_waiters_ > 0; });
      auto now = std::chrono::steady_clock::now();
      if (appends_ != appends) quiet_since = now;
      if (now - quiet_since >= opts_.apply_quiet) break;
      if (now - oldest >= opts_.apply_max_delay) break;
      if (appended_bytes_ - applied_bytes_ >= round_bytes) break;
    }
    if (stopping_) break;
    std::vector<Durable> batch;
    uint64_t bytes = 0;
    while (!to_apply_.empty() && (batch.empty() || bytes < round_bytes)) {
      bytes += to_apply_.front().bytes;
      batch.push_back(std::move(to_apply_.front()));
      to_apply_.pop_front();
    }
    l.unlock();
    Status st = apply(batch);
    l.lock();
    if (!st.ok()) {
      // Retried next round (the journal keeps them); fenced: stop applying.
      for (auto it = batch.rbegin(); it != batch.rend(); ++it) to_apply_.push_front(*it);
      if (st.code() == -ECANCELED) {
        if (failed_.ok()) failed_ = st;
        break;
      }
      cluster_->log().warn("mds", "store: applying journal entries: " + st.ToString());
      applier_cv_.wait_for(l, std::chrono::milliseconds(200), [&] { return stopping_; });
      continue;
    }
    applied_bytes_ += bytes;
    applied_seq_ = batch.back().seq;
    stats_.journal_bytes_unapplied = appended_bytes_ - applied_bytes_;
    uint64_t upto = applied_seq_;
    for (auto it = overlay_dentries_.begin(); it != overlay_dentries_.end();)
      it = it->second.seq <= upto ? overlay_dentries_.erase(it) : std::next(it);
    for (auto it = overlay_inodes_.begin(); it != overlay_inodes_.end();)
      it = it->second.seq <= upto ? overlay_inodes_.erase(it) : std::next(it);
    for (const auto &d : batch)
      for (const auto &p : d.update->purges)
        to_purge_.push_back(QueuedPurge{p, std::chrono::steady_clock::now()});
    purger_cv_.notify_one();
    done_cv_.notify_all();
  }
}

Status ObjectMetaStore::apply(const std::vector<Durable> &batch) {
  {
    // Stop early when fenced (the head write below would fail anyway, but
    // after the objects were written).
    Op guard;
    guard.cmpxattr(kIncarnationXattr, client::CmpMode::kEq, incarnation_str_);
    auto r = exec(kJournalOid, std::move(guard));
    if (!r.ok()) return r.status();
    if (r->rc == -ECANCELED)
      return Status::Error(ECANCELED, "fenced: a newer incarnation owns the journal");
  }
  std::vector<std::shared_ptr<const MetaUpdate>> ups;
  for (const auto &d : batch) ups.push_back(d.update);
  if (Status st = apply_updates(ups); !st.ok()) return st;
  return advance_head(batch.back());
}

Status ObjectMetaStore::apply_updates(const std::vector<std::shared_ptr<const MetaUpdate>> &ups) {
  // Merge: the last change of each name / inode / session wins.
  std::map<Ino, std::map<std::string, std::optional<DentryRec>>> dirs;
  std::map<Ino, std::optional<InodeRec>> inodes;
  std::map<uint64_t, std::optional<SessionRec>> sessions;
  std::optional<Ino> ino_next;
  std::vector<PurgeRec> purges;
  std::set<Ino> removed_dirs;
  std::set<Ino> dropped_back_pointers;
  for (const auto &u : ups) {
    removed_dirs.insert(u->removed_dirs.begin(), u->removed_dirs.end());
    dropped_back_pointers.insert(u->dropped_back_pointers.begin(), u->dropped_back_pointers.end());
    for (const auto &c : u->dentries) dirs[c.dir][c.name] = c.dentry;
    for (const auto &c : u->inodes) inodes[c.ino] = c.inode;
    for (const auto &c : u->sessions) sessions[c.id] = c.session;
    if (u->ino_next) ino_next = std::max(ino_next.value_or(0), *u->ino_next);
    for (const auto &p : u->purges) purges.push_back(p);
  }
  std::shared_lock<std::shared_mutex> split_lock(split_mu_);
  std::map<std::string, ObjectWrites> writes;
  std::map<Ino, int64_t> deltas;
  for (auto &[dir, names] : dirs) {
    auto bits = frag_bits(dir);
    if (!bits.ok()) return bits.status();
    for (auto &[name, d] : names) {
      auto &w = writes[dir_oid(dir, frag_of(name, *bits))];
      if (d) {
        w.set_keys.push_back(name);
        w.set_values.push_back(encode_dentry(*d));
        deltas[dir]++;
        if (!d->remote && !dropped_back_pointers.count(d->ino)) {
          // Back-pointer: 8 bytes parent (LE), then the name.
          auto &b = writes[backptr_oid(d->ino)];
          std::string v;
          put_le(v, dir, 8);
          v += name;
          b.set_keys.push_back(hex16(d->ino));
          b.set_values.push_back(std::move(v));
        }
      } else {
        w.rm_keys.push_back(name);
        deltas[dir]--;
      }
    }
  }
  // (A primary dentry set in the same batch as its inode's drop was removed
  // again later in it: the merged dentries hold each name's last state.)
  // (A shard never written answers ENOENT, which the apply takes as done;
  // a removal only, not a create, so a full pool does not refuse it.)
  for (Ino ino : dropped_back_pointers) writes[backptr_oid(ino)].rm_keys.push_back(hex16(ino));
  // A removed directory was empty: its fragments go whole (an entry written
  // to it earlier in this batch was removed again before the rmdir).
  for (Ino dir : removed_dirs) {
    auto bits = frag_bits(dir);
    if (!bits.ok()) return bits.status();
    for (uint32_t f = 0; f < (uint32_t{1} << *bits); ++f) {
      ObjectWrites gone;
      gone.remove = true;
      writes[dir_oid(dir, f)] = std::move(gone);
    }
    deltas.erase(dir);
  }
  for (auto &[ino, in] : inodes) {
    auto &w = writes[inode_oid(ino)];
    if (in)
      w.header = encode_inode(*in);
    else
      w.remove = true;
  }
  if (ino_next || !sessions.empty() || !purges.empty()) {
    auto &w = writes[kFsMetaOid];
    if (ino_next) {
      // ino_next only grows; the header holds nothing else.
      w.header = encode_fsmeta(FsMeta{1, *ino_next});
    }
    for (auto &[id, s] : sessions) {
      if (s) {
        w.set_keys.push_back(session_key(id));
        w.set_values.push_back(encode_session(*s));
      } else {
        w.rm_keys.push_back(session_key(id));
      }
    }
    for (const auto &p : purges) {
      w.set_keys.push_back(purge_key(p.ino));
      w.set_values.push_back(encode_purge(p));
    }
  }
  // One compound op per object (more only past the op size limit), all at
  // once; the ops of one object go in rounds so they stay ordered.
  size_t round = 0;
  std::map<std::string, std::vector<Op>> per_object;
  for (auto &[oid, w] : writes) per_object[oid] = ops_for(w);
  while (true) {
    std::vector<std::pair<std::string, Op>> ops;
    for (auto &[oid, v] : per_object)
      if (round < v.size()) ops.emplace_back(oid, std::move(v[round]));
    if (ops.empty()) break;
    size_t n = ops.size();
    if (Status st = exec_parallel(std::move(ops), pool_, true); !st.ok()) return st;
    std::lock_guard<std::mutex> l(mu_);
    stats_.apply_writes += n;
    ++round;
  }
  split_lock.unlock();
  if (!removed_dirs.empty()) {
    std::lock_guard<std::mutex> l(mu_);
    for (Ino dir : removed_dirs) bits_cache_.erase(dir);
  }
  for (auto &[dir, delta] : deltas)
    if (Status st = maybe_split(dir, delta); !st.ok()) return st.Context("splitting a directory");
  return Status::OK();
}

Status ObjectMetaStore::advance_head(const Durable &last) {
  uint64_t old_head;
  {
    std::lock_guard<std::mutex> hl(head_mu_);
    old_head = head_.head_segment;
    head_.head_segment = last.segment;
    head_.head_offset = last.end_offset;
    head_.applied_seq = last.seq;
    if (Status st = write_head_locked(); !st.ok()) return st;
  }
  std::vector<std::pair<std::string, Op>> rm;
  for (uint64_t s = old_head; s < last.segment; ++s) {
    Op op;
    op.remove();
    rm.emplace_back(segment_oid(s), std::move(op));
  }
  return exec_parallel(std::move(rm), pool_, true);
}

// ---- purges ----

void ObjectMetaStore::purger_loop() {
  std::unique_lock<std::mutex> l(mu_);
  while (true) {
    purger_cv_.wait(l, [&] { return stopping_ || !to_purge_.empty(); });
    if (stopping_) break;
    // Many at once: an rm -rf queues one purge per file, and each purge
    // alone would cost a removal and an mds.fsmeta write in turn.
    std::vector<PurgeRec> batch;
    const auto queued_at = to_purge_.front().at;
    purge_oldest_ = queued_at;
    while (!to_purge_.empty() && batch.size() < kPurgeBatch) {
      batch.push_back(std::move(to_purge_.front().rec));
      to_purge_.pop_front();
    }
    purging_ = true;
    l.unlock();
    Status st = purge(batch);
    l.lock();
    purging_ = false;
    if (!st.ok()) {
      cluster_->log().warn("mds", "store: purging " + std::to_string(batch.size()) +
                                      " inodes from " + hex16(batch.front().ino) + ": " +
                                      st.ToString());
      for (auto &p : batch)  // kept in mds.fsmeta; retried
        to_purge_.push_back(QueuedPurge{std::move(p), queued_at});
      purger_cv_.wait_for(l, std::chrono::milliseconds(500), [&] { return stopping_; });
    }
    done_cv_.notify_all();
  }
}

void ObjectMetaStore::pace_purge(size_t objects) {
  using clock = std::chrono::steady_clock;
  std::unique_lock<std::mutex> l(mu_);
  if (opts_.purge_busy_rate > 0) {
    // Deletes that never stop must not grow the backlog for ever: the rate
    // doubles for every 10 s the oldest purge being run has waited.
    const auto waited =
        std::chrono::duration_cast<std::chrono::seconds>(clock::now() - purge_oldest_);
    const uint64_t rate = opts_.purge_busy_rate << std::min<int64_t>(10, waited.count() / 10);
    const auto due = last_purge_ + std::chrono::microseconds(objects * 1000000 / rate);
    while (!stopping_ && apply_waiters_ == 0 && clock::now() - last_append_ < opts_.apply_quiet &&
           clock::now() < due)
      purger_cv_.wait_until(l, std::min(due, clock::now() + opts_.apply_quiet));
  }
  last_purge_ = clock::now();
}

Status ObjectMetaStore::purge(const std::vector<PurgeRec> &batch) {
  constexpr size_t kInFlight = 64;
  std::map<int64_t, std::vector<std::pair<std::string, Op>>> by_pool;
  auto run = [&](uint32_t pool, std::vector<std::pair<std::string, Op>> &pending) -> Status {
    size_t count = pending.size();
    pace_purge(count);
    if (Status st = exec_parallel(std::move(pending), pool, true); !st.ok()) return st;
    pending.clear();
    std::lock_guard<std::mutex> l(mu_);
    stats_.purged_objects += count;
    return Status::OK();
  };
  std::vector<std::string> keys;
  for (const PurgeRec &p : batch) {
    keys.push_back(purge_key(p.ino));
    int64_t pool = p.data_pool >= 0 ? p.data_pool : opts_.default_data_pool;
    if (pool < 0) continue;
    uint64_t osz = p.object_size ? p.object_size : (4u << 20);
    uint64_t n = std::max<uint64_t>(1, (p.size + osz - 1) / osz);
    auto &pending = by_pool[pool];
    for (uint64_t i = 0; i < n; ++i) {
      Op op;
      op.remove();
      pending.emplace_back(data_oid(p.ino, i), std::move(op));
      if (pending.size() >= kInFlight)
        if (Status st = run(static_cast<uint32_t>(pool), pending); !st.ok()) return st;
    }
  }
  for (auto &[pool, pending] : by_pool)
    if (Status st = run(static_cast<uint32_t>(pool), pending); !st.ok()) return st;
  Op done;
  done.omap_rm_keys(std::move(keys));
  auto r = exec(kFsMetaOid, std::move(done));
  if (!r.ok()) return r.status();
  if (r->rc != 0) return op_error(r->rc, std::string("writing ") + kFsMetaOid, r->message);
  return Status::OK();
}

Status ObjectMetaStore::wait_applied() {
  std::unique_lock<std::mutex> l(mu_);
  uint64_t want = submitted_seq_;
  apply_waiters_++;
  applier_cv_.notify_all();
  purger_cv_.notify_all();  // no pacing while someone waits
  done_cv_.wait(l, [&] {
    return !failed_.ok() || stopping_ ||
           (durable_seq_ >= want && applied_seq_ >= want && to_purge_.empty() && !purging_);
  });
  apply_waiters_--;
  return failed_;
}

// ---- reads ----

Result<uint8_t> ObjectMetaStore::frag_bits(Ino dir) {
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = bits_cache_.find(dir);
    if (it != bits_cache_.end()) return it->second;
  }
  std::string header;
  Op op;
  op.omap_get_header([&](const client::StepResult &s) {
    if (s.rc == 0) header.assign(s.data);
  });
  std::string oid = dir_oid(dir, 0);
  auto r = exec(oid, std::move(op));
  if (!r.ok()) return r.status();
  uint8_t bits = 0;
  if (r->rc == 0 && !header.empty()) {
    auto b = decode_dir_header(header, oid + " header");
    if (!b.ok()) return b.status();
    bits = *b;
  } else if (r->rc != 0 && r->rc != -ENOENT) {
    return op_error(r->rc, "reading " + oid, r->message);
  }
  std::lock_guard<std::mutex> l(mu_);
  bits_cache_[dir] = bits;
  return bits;
}

Result<std::optional<DentryRec>> ObjectMetaStore::lookup(Ino dir, std::string_view name) {
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = overlay_dentries_.find({dir, std::string(name)});
    if (it != overlay_dentries_.end()) return it->second.dentry;
  }
  std::shared_lock<std::shared_mutex> split_lock(split_mu_);
  auto bits = frag_bits(dir);
  if (!bits.ok()) return bits.status();
  std::string oid = dir_oid(dir, frag_of(name, *bits));
  std::optional<std::string> value;
  Op op;
  op.omap_get_keys({std::string(name)}, [&](const client::StepResult &s) {
    if (s.rc == 0 && !s.values.empty()) value.emplace(s.values[0]);
  });
  auto r = exec(oid, std::move(op));
  if (!r.ok()) return r.status();
  if (r->rc == -ENOENT) return std::optional<DentryRec>();
  if (r->rc != 0) return op_error(r->rc, "reading " + oid, r->message);
  if (!value) return std::optional<DentryRec>();
  auto d = decode_dentry(*value, oid + " key " + std::string(name));
  if (!d.ok()) return d.status();
  return std::optional<DentryRec>(std::move(*d));
}

Result<std::optional<MetaStore::BackPointer>> ObjectMetaStore::back_pointer(Ino ino) {
  std::optional<std::string> value;
  Op op;
  op.omap_get_keys({hex16(ino)}, [&](const client::StepResult &s) {
    if (s.rc == 0 && !s.values.empty()) value.emplace(s.values[0]);
  });
  std::string oid = backptr_oid(ino);
  auto r = exec(oid, std::move(op));
  if (!r.ok()) return r.status();
  if (r->rc == -ENOENT || !value || value->size() < 8) return std::optional<BackPointer>();
  if (r->rc != 0) return op_error(r->rc, "reading " + oid, r->message);
  BackPointer bp;
  bp.parent = get_le(value->data(), 8);
  bp.name = value->substr(8);
  return std::optional<BackPointer>(std::move(bp));
}

Result<ObjectMetaStore::StoredPage> ObjectMetaStore::stored_list(Ino dir, const std::string &after,
                                                                 size_t max) {
  auto bits = frag_bits(dir);
  if (!bits.ok()) return bits.status();
  uint32_t nfrag = 1u << *bits;
  struct FragPage {
    int rc = 0;
    std::vector<std::pair<std::string, std::string>> kv;
    bool more = false;
  };
  std::vector<FragPage> pages(nfrag);
  uint32_t want = static_cast<uint32_t>(std::min<size_t>(max, kListChunk));
  std::vector<std::pair<std::string, Op>> ops;
  for (uint32_t f = 0; f < nfrag; ++f) {
    Op op;
    FragPage *pg = &pages[f];
    op.omap_list(after, "", want, [pg](const client::StepResult &s) {
      pg->rc = s.rc;
      if (s.rc != 0) return;
      for (size_t i = 0; i < s.keys.size() && i < s.values.size(); ++i)
        pg->kv.emplace_back(std::string(s.keys[i]), std::string(s.values[i]));
      pg->more = s.more;
    });
    ops.emplace_back(dir_oid(dir, f), std::move(op));
  }
  if (Status st = exec_parallel(std::move(ops), pool_, true); !st.ok()) return st;
  // Merge; a fragment that has more bounds what is known to be complete.
  std::optional<std::string> cutoff;
  std::vector<std::pair<std::string, std::pair<uint32_t, std::string>>> all;
  for (uint32_t f = 0; f < nfrag; ++f) {
    auto &pg = pages[f];
    if (pg.rc != 0 && pg.rc != -ENOENT) return op_error(pg.rc, "listing " + dir_oid(dir, f));
    if (pg.more && !pg.kv.empty() && (!cutoff || pg.kv.back().first < *cutoff))
      cutoff = pg.kv.back().first;
    for (auto &[k, v] : pg.kv) {
      // A name left behind by an interrupted split belongs elsewhere.
      if (frag_of(k, *bits) != f) continue;
      all.emplace_back(std::move(k), std::make_pair(f, std::move(v)));
    }
  }
  std::sort(all.begin(), all.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
  StoredPage out;
  out.end = !cutoff;
  for (auto &[k, fv] : all) {
    if (cutoff && k > *cutoff) break;
    if (out.entries.size() == max) {
      out.end = false;
      break;
    }
    auto d = decode_dentry(fv.second, dir_oid(dir, fv.first) + " key " + k);
    if (!d.ok()) return d.status();
    out.entries.push_back(std::move(*d));
  }
  if (!out.end && !(out.entries.size() == max))
    out.bound = cutoff;
  else if (!out.end)
    out.bound = out.entries.back().name;
  return out;
}

Result<DirPage> ObjectMetaStore::list(Ino dir, std::string_view after, size_t max) {
  DirPage page;
  if (max == 0) return page;
  // The overlay first: a change applied while the objects are read is in
  // the objects then.
  std::map<std::string, std::optional<DentryRec>> overlay;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (auto it = overlay_dentries_.upper_bound({dir, std::string(after)});
         it != overlay_dentries_.end() && it->first.first == dir; ++it)
      overlay[it->first.second] = it->second.dentry;
  }
  std::shared_lock<std::shared_mutex> split_lock(split_mu_);
  std::string cursor(after);
  size_t bytes = 0;
  while (true) {
    auto stored = stored_list(dir, cursor, max - page.entries.size());
    if (!stored.ok()) return stored.status();
    // The window (cursor, bound]: everything in it is known.
    std::map<std::string, std::optional<DentryRec>> window;
    for (auto &d : stored->entries) window[d.name] = std::move(d);
    std::optional<std::string> bound = stored->end ? std::nullopt : stored->bound;
    for (auto it = overlay.upper_bound(cursor);
         it != overlay.end() && (!bound || it->first <= *bound); ++it)
      window[it->first] = it->second;
    for (auto &[name, d] : window) {
      if (!d) continue;
      // More follow: the page is full, by count or by bytes.
      if (page.entries.size() == max || bytes >= kListPageBytes) return page;
      bytes += d->inode ? listing_entry_bytes(d->name, *d->inode) : 256 + d->name.size();
      page.entries.push_back(std::move(*d));
    }
    if (!bound) {
      page.end = true;
      return page;
    }
    cursor = *bound;
    if (page.entries.size() == max || bytes >= kListPageBytes) return page;
  }
}

Result<std::optional<InodeRec>> ObjectMetaStore::get_inode(Ino ino) {
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = overlay_inodes_.find(ino);
    if (it != overlay_inodes_.end()) return it->second.inode;
  }
  std::string header;
  Op op;
  op.omap_get_header([&](const client::StepResult &s) {
    if (s.rc == 0) header.assign(s.data);
  });
  std::string oid = inode_oid(ino);
  auto r = exec(oid, std::move(op));
  if (!r.ok()) return r.status();
  if (r->rc == -ENOENT) return std::optional<InodeRec>();
  if (r->rc != 0) return op_error(r->rc, "reading " + oid, r->message);
  if (header.empty()) return std::optional<InodeRec>();
  auto in = decode_inode(header, oid + " header");
  if (!in.ok()) return in.status();
  return std::optional<InodeRec>(std::move(*in));
}

// ---- directory fragments ----

Result<size_t> ObjectMetaStore::count_entries(Ino dir, uint8_t bits) {
  size_t n = 0;
  for (uint32_t f = 0; f < (1u << bits); ++f) {
    std::string after;
    while (true) {
      size_t got = 0;
      bool more = false;
      std::string last;
      int rc = 0;
      Op op;
      op.omap_list(after, "", kListChunk, [&](const client::StepResult &s) {
        rc = s.rc;
        if (s.rc != 0) return;
        for (auto k : s.keys)
          if (frag_of(k, bits) == f) ++got;
        if (!s.keys.empty()) last.assign(s.keys.back());
        more = s.more;
      });
      std::string oid = dir_oid(dir, f);
      auto r = exec(oid, std::move(op));
      if (!r.ok()) return r.status();
      if (r->rc == -ENOENT) break;
      if (r->rc != 0) return op_error(r->rc, "listing " + oid, r->message);
      n += got;
      if (!more || last.empty()) break;
      after = last;
    }
  }
  return n;
}

Status ObjectMetaStore::maybe_split(Ino dir, int64_t delta) {
  auto bits = frag_bits(dir);
  if (!bits.ok()) return bits.status();
  uint64_t limit = opts_.dir_split_entries << *bits;
  auto it = dir_counts_.find(dir);
  if (it == dir_counts_.end()) {
    if (delta <= 0) return Status::OK();
    // First sight of this directory: count it once, then keep track.
    auto n = count_entries(dir, *bits);
    if (!n.ok()) return n.status();
    it = dir_counts_.emplace(dir, static_cast<int64_t>(*n)).first;
  } else {
    it->second += delta;
  }
  if (it->second < 0) it->second = 0;
  if (static_cast<uint64_t>(it->second) <= limit) return Status::OK();
  auto n = count_entries(dir, *bits);  // the estimate counts replaced names too
  if (!n.ok()) return n.status();
  it->second = static_cast<int64_t>(*n);
  if (*n <= limit) return Status::OK();
  return split(dir, *bits, *n);
}

Status ObjectMetaStore::split(Ino dir, uint8_t bits, size_t count) {
  // Enough fragments that each holds about half the limit.
  uint8_t nbits = bits;
  while (nbits < 24 && count > ((opts_.dir_split_entries / 2 + 1) << nbits)) ++nbits;
  if (nbits == bits) return Status::OK();
  std::unique_lock<std::shared_mutex> split_lock(split_mu_);
  uint32_t old_n = 1u << bits;
  // Every entry of every old fragment, by its new fragment.
  std::map<uint32_t, ObjectWrites> moves;              // new fragments: sets
  std::map<uint32_t, std::vector<std::string>> stale;  // old fragments: names that left
  for (uint32_t f = 0; f < old_n; ++f) {
    std::string after;
    std::string oid = dir_oid(dir, f);
    while (true) {
      std::vector<std::pair<std::string, std::string>> kv;
      bool more = false;
      Op op;
      op.omap_list(after, "", kListChunk, [&](const client::StepResult &s) {
        if (s.rc != 0) return;
        for (size_t i = 0; i < s.keys.size() && i < s.values.size(); ++i)
          kv.emplace_back(std::string(s.keys[i]), std::string(s.values[i]));
        more = s.more;
      });
      auto r = exec(oid, std::move(op));
      if (!r.ok()) return r.status();
      if (r->rc == -ENOENT) break;
      if (r->rc != 0) return op_error(r->rc, "listing " + oid, r->message);
      for (auto &[k, v] : kv) {
        if (frag_of(k, bits) != f) continue;  // a leftover of an earlier split
        uint32_t nf = frag_of(k, nbits);
        if (nf == f) continue;
        stale[f].push_back(k);
        moves[nf].set_keys.push_back(k);
        moves[nf].set_values.push_back(std::move(v));
      }
      if (!more || kv.empty()) break;
      after = kv.back().first;
    }
  }
  // 1. the new fragments; 2. the table (readers switch here); 3. the moved
  // names out of the old fragments (list skips them meanwhile).
  std::vector<std::pair<std::string, Op>> ops;
  for (auto &[nf, w] : moves)
    for (auto &op : ops_for(w)) ops.emplace_back(dir_oid(dir, nf), std::move(op));
  if (Status st = exec_parallel(std::move(ops), pool_); !st.ok()) return st;
  {
    Op op;
    op.omap_set_header(encode_dir_header(nbits));
    auto r = exec(dir_oid(dir, 0), std::move(op));
    if (!r.ok()) return r.status();
    if (r->rc != 0) return op_error(r->rc, "writing " + dir_oid(dir, 0), r->message);
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    bits_cache_[dir] = nbits;
  }
  ops.clear();
  for (auto &[f, names] : stale) {
    ObjectWrites w;
    w.rm_keys = std::move(names);
    for (auto &op : ops_for(w)) ops.emplace_back(dir_oid(dir, f), std::move(op));
  }
  return exec_parallel(std::move(ops), pool_);
}

// ---- stats, close ----

MetaStoreStats ObjectMetaStore::stats() const {
  std::lock_guard<std::mutex> l(mu_);
  MetaStoreStats s = stats_;
  s.journal_bytes_unapplied = appended_bytes_ - applied_bytes_;
  return s;
}

void ObjectMetaStore::close() {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (closed_) return;
    closed_ = true;
  }
  if (writer_.joinable()) {
    {
      // The writer drains the queue before it stops.
      std::lock_guard<std::mutex> l(mu_);
      stopping_ = true;
    }
    writer_cv_.notify_all();
    writer_.join();
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
  }
  applier_cv_.notify_all();
  purger_cv_.notify_all();
  done_cv_.notify_all();
  if (applier_.joinable()) applier_.join();
  if (purger_.joinable()) purger_.join();
}

}  // namespace strata::mds

// The fuse client's filesystem: the low-level FUSE operations answered
// from the lease cache where the leases allow, else by one MDS request;
// file data through FileData. fuse_ops.cpp binds these methods to libfuse's
// fuse_lowlevel_ops; revoke_worker.cpp answers the MDS's Revokes.
//
// Inode numbers are the MDS's, except that the mounted root is FUSE's 1.
//
// Threading: every op runs on a FUSE worker thread, many at once; state
// is behind the locks of its owners (LeaseCache, InodeTable, open_mu_).
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <sys/statvfs.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "close_workers.h"
#include "file_data.h"
#include "inode_table.h"
#include "lease_cache.h"
#include "mds_client.h"
#include "mount_settings.h"
#include "op_counters.h"
#include "proto_convert.h"

namespace strata::fuse {

// FATTR_KILL_SUIDGID (FUSE 7.33) in setattr's to_set, sent with
// FUSE_HANDLE_KILLPRIV_V2 (fuse_mount.cpp): libfuse 3.14 passes the bit
// through under the name FUSE_SET_ATTR_KILL_SUID.
constexpr int kSetAttrKillSuidgid = FUSE_SET_ATTR_KILL_SUID;

// A file's state while the kernel has it open here.
struct OpenFile {
  uint32_t openers = 0;
  uint32_t lease_kind = 0;  // fsproto::LeaseKind
  uint64_t lease_seq = 0;
  uint64_t size = 0;  // authoritative while dirty (fileWrite)
  Time mtime, ctime;
  bool dirty = false;            // size/mtime changed here, not yet reported
  uint64_t version = 0;          // the inode's version at the last open (keep_cache)
  int64_t lease_expires_ms = 0;  // our clock; the lease lets opens skip the MDS until then
  uint64_t create_tid = 0;       // its asynchronous create, until known safe
  int64_t used_ms = 0;           // last open or close: a lease in use is renewed (maintain())
  // Its only link is the one the MDS last told of (or made at our create),
  // and nobody else could add one since: under fileWrite, which a link by
  // another client revokes. A link made here clears it.
  bool only_link = false;
  // Where its data is (layout.inline_data: inline, these bytes) as this
  // client last learnt or decided it, and what the next size report must
  // say of that (settle_inline).
  FileLayout layout;
  DataReport::Where data_report = DataReport::kUnchanged;
};

class Filesystem {
 public:
  using LogFn = std::function<void(int level, const std::string &)>;
  Filesystem(MdsClient &mds, FileData *data, const MountSettings &settings, LogFn log);
  ~Filesystem();

  // After the Welcome: the mounted root.
  void set_root(const InodeAttr &root);
  // After the Welcome: the filesystem's largest file size (writes past it
  // fail with EFBIG at once, as on a local filesystem). 0: no limit.
  void set_max_file_size(uint64_t bytes) { max_file_size_ = bytes; }
  // After the Welcome: files up to this size keep their data inline
  // (docs/FILESYSTEM.md, "Inline data"). 0: new files go to objects.
  void set_inline_max(uint64_t bytes) { inline_max_ = bytes; }
  // After the Welcome: the filesystem's data pool, where the MDS puts every
  // new file's data (so does an asynchronous create here; the root's own
  // inode names no pool).
  void set_data_pool(int64_t pool) { data_pool_ = pool; }
  // After the Welcome: how long the MDS's leases last (a revoke waits at
  // most this long for this client's asynchronous changes).
  void set_lease_ms(uint32_t ms) { mds_lease_ms_ = ms ? ms : 30000; }
  // Where kernel invalidations go; null while unmounted.
  void set_session(fuse_session *se);

  // The ops (fuse_ops.cpp calls them).
  void init(fuse_conn_info *conn);
  void lookup(fuse_req_t req, fuse_ino_t parent, const char *name);
  void forget(fuse_ino_t ino, uint64_t nlookup);
  void getattr(fuse_req_t req, fuse_ino_t ino);
  void setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, fuse_file_info *fi);
  void readlink(fuse_req_t req, fuse_ino_t ino);
  void make(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev,
            const char *symlink_target);
  void unlink(fuse_req_t req, fuse_ino_t parent, const char *name, bool directory);
  void rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
              const char *newname, unsigned int flags);
  void link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname);
  void open(fuse_req_t req, fuse_ino_t ino, fuse_file_info *fi);
  void create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, fuse_file_info *fi);
  void read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off);
  void write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off);
  // flush (each close(2)) drops the POSIX locks of fi->lock_owner (the
  // closing process) on the file; release of an open file description
  // that took flock locks (fi->flock_release) drops them.
  void flush(fuse_req_t req, fuse_ino_t ino, fuse_file_info *fi = nullptr);
  void release(fuse_req_t req, fuse_ino_t ino, fuse_file_info *fi = nullptr);
  void fsync(fuse_req_t req, fuse_ino_t ino, bool directory);
  void opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info *fi);
  void readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info *fi,
               bool plus);
  void releasedir(fuse_req_t req, fuse_file_info *fi);
  void statfs(fuse_req_t req, fuse_ino_t ino);
  void setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size,
                int flags);
  void getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size);
  void listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);
  void removexattr(fuse_req_t req, fuse_ino_t ino, const char *name);
  void access(fuse_req_t req, fuse_ino_t ino, int mask);
  void getlk(fuse_req_t req, fuse_ino_t ino, fuse_file_info *fi, struct flock *lock);
  void setlk(fuse_req_t req, fuse_ino_t ino, fuse_file_info *fi, struct flock *lock, bool sleep);
  void flock(fuse_req_t req, fuse_ino_t ino, fuse_file_info *fi, int op);
  void fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len);

  // The MDS's messages that are not replies (revoke_worker.cpp hands them
  // in from its own thread, never a FUSE worker).
  // Revokes the MDS sent (one or more messages), answered with one Release.
  void handle_revokes(const std::vector<fsproto::Revoke::Reader> &revokes);
  void handle_lock_granted(fsproto::LockGranted::Reader granted);

  // Unmount: every file's data and size out, then everything safe.
  int flush_everything(std::string *why);

  // Lease upkeep, about once a second (MountClient's thread): forgets
  // what ran out and renews the leases of directories in use before they
  // do (an asynchronous workload must not fall back to synchronous
  // requests when a lease lapses mid-way).
  void maintain();

  // The MDS's reply to a request submitted asynchronously (on the
  // transport's thread: it only updates the cache).
  void absorb_async(fsproto::Reply::Reader r);

  OpCounters &counters() { return counters_; }
  const LeaseCache &cache() const { return cache_; }
  size_t known_inodes() const { return inodes_.size(); }
  size_t open_files() const;

  // FUSE_HANDLE_KILLPRIV_V2 (fuse_mount.cpp negotiates it under libfuse,
  // which cannot): the kernel then leaves dropping set-id bits on write,
  // truncate and chown to us, and stops asking for security.capability
  // before every write. A WRITE flagged FUSE_WRITE_KILL_SUIDGID is noted
  // as it is read off the device, before its handler runs.
  void note_kill_on_write(uint64_t fuse_ino);
  // The kernel's INIT offered the flag (or not); whether this reply to
  // INIT should carry it (then it is on for the session: killpriv_v2()).
  void note_init_request(uint64_t unique, bool offered);
  bool take_init_reply(uint64_t unique);
  bool killpriv_v2() const { return killpriv_on_.load(); }
  // Write-outs of closed files waiting for their time (close_workers.h),
  // and files never written because their last link went first.
  size_t deferred_writebacks() const { return closers_ ? closers_->deferred() : 0; }
  uint64_t dropped_writebacks() const { return dropped_writebacks_.load(); }

  int64_t now_ms() const;

 private:
  uint64_t to_mds(fuse_ino_t ino) const { return ino == FUSE_ROOT_ID ? root_ino_ : ino; }
  fuse_ino_t to_fuse(uint64_t ino) const { return ino == root_ino_ ? FUSE_ROOT_ID : ino; }

  // One request to the MDS: fills the caller from req (may be null),
  // waits for the first reply, stores what it returned (inodes, leases,
  // entries) in the cache. Returns the reply, or null with *err.
  // timeout_ms as in MdsClient::call (0: wait for the answer, however long).
  std::shared_ptr<ReceivedMessage> request(
      fuse_req_t req, const std::function<void(fsproto::Request::Builder)> &fill, int *err,
      uint32_t timeout_ms = 0);
  void absorb(fsproto::Reply::Reader r, int64_t sent_ms);
  // Attributes of ino: cached under a lease, else a Getattr. Local size
  // and mtime of a file written here override the MDS's.
  int attr_of(fuse_req_t req, uint64_t ino, InodeAttr *out, double *valid_s);
  void reply_negative(fuse_req_t req, int64_t valid_ms);
  // Whether the kernel may keep the entries we send (timeout > 0). Not with
  // allow_other and without default_permissions: the kernel then walks a
  // cached entry without any permission check, so another user would pass
  // a directory it may not search; every lookup comes here instead, where
  // lookup() checks (from the cache, no MDS round trip).
  bool kernel_keeps_entries() const {
    return settings_.default_permissions || !settings_.allow_other;
  }
  // Reads dir's listing from the MDS into the cache, page by page (at
  // most max_pages; 0: all), calling `each` per entry; *complete says
  // whether it reached the end (and the cache marked it complete).
  int read_listing(fuse_req_t req, uint64_t dir, uint32_t max_pages,
                   const std::function<void(const std::string &, const DirEntry &)> &each,
                   bool *complete = nullptr);
  // A lookup missed: list the directory instead, when it is ours alone
  // (dirWrite) and this is its kPrefetchMisses-th miss under the lease, or
  // at its first miss when it was listed whole here before
  // (LeaseCache::listed_before).
  // True when the cache now answers for every name in it.
  bool prefetch_listing(fuse_req_t req, uint64_t dir);
  static constexpr uint32_t kPrefetchMisses = 2;
  void overlay_local(InodeAttr *a) const;
  fuse_entry_param entry_of(const InodeAttr &a, double valid_s);
  void reply_entry(fuse_req_t req, const InodeAttr &a);
  // Answers a create with the new file open (undone if the kernel is gone).
  void reply_create(fuse_req_t req, const InodeAttr &a, fuse_file_info *fi);
  double valid_seconds(uint64_t ino) const;
  // Reports a file's dirty size/mtime with a setattr. 0 or -errno.
  int report_size(fuse_req_t req, uint64_t ino);
  int lock_request(fuse_req_t req, uint64_t ino, uint32_t kind, uint32_t type, uint64_t start,
                   uint64_t length, uint64_t owner, uint32_t pid, bool wait);

  // Who asks (from the FUSE request) and the MDS's view of permission.
  struct Caller {
    uint32_t uid = 0, gid = 0, pid = 0, umask = 0;
    std::vector<uint32_t> groups;
    bool in_group(uint32_t g) const;
  };
  static Caller caller_of(fuse_req_t req);
  static void fill_caller(const Caller &c, fsproto::Request::Builder r);
  static bool may(const InodeAttr &a, const Caller &c, uint32_t rwx_bits);
  // Without default_permissions (the kernel then checks nothing but exec
  // of regular files), what the client answers alone must check as the MDS
  // would: true when the caller lacks rwx_bits on a.
  bool denied(fuse_req_t req, const InodeAttr &a, uint32_t rwx_bits);
  // A truncate (setattr with a size) of a file this client holds fileWrite
  // on, done here and reported later; false: the MDS's way.
  bool truncate_locally(fuse_req_t req, uint64_t ino, const struct stat *attr, int to_set,
                        InodeAttr *out);
  // A setattr of mtime and ctime alone (the writeback cache's flush of a
  // file's times) of a file this client holds fileWrite on and has open or
  // had open, by its owner: kept like a write's times and reported with its
  // size; false: the MDS's way.
  bool times_locally(fuse_req_t req, uint64_t ino, const struct stat *attr, int to_set,
                     InodeAttr *out);

  // Asynchronous metadata (async_meta.cpp): inside a directory this
  // client holds dirWrite on (complete, with time to spare), a change is
  // made in the cache, answered at once and submitted for the next Batch.
  // Each returns false, having changed nothing, when the change must go
  // to the MDS synchronously (no lease, a case the client does not
  // decide, an error the MDS should name).
  bool async_dir(uint64_t dir, InodeAttr *dir_attr);
  // *create_tid (if given): the tid of the submitted create.
  bool async_make(fuse_req_t req, uint64_t dir, const char *name, FileType type, mode_t mode,
                  dev_t rdev, const char *symlink_target, InodeAttr *out,
                  uint64_t *create_tid = nullptr);
  // A small file closed while its create still waits in the unsent batch:
  // its size report and bytes go into that create (Create.then) now, not
  // in a write-out of their own a second later (tar, rsync: one MDS
  // request per small file, no close worker woken). False: the usual way.
  bool report_with_create(uint64_t ino);
  // Before a file's data goes to its objects: its asynchronous create
  // must be safe, or a client that dies first leaves data objects with no
  // inode. Waits (at most a lease's time) if it is not yet.
  void await_create(uint64_t ino);
  bool async_unlink(fuse_req_t req, uint64_t dir, const char *name, bool directory);
  // Before an unlink of `ino`: true when this client holds no lease on it
  // any more that the unlink should keep (closed, written out, reported;
  // its OpenFile goes), so the MDS may remove its data at once.
  bool give_up_file_lease(uint64_t ino);
  bool async_rename(fuse_req_t req, uint64_t dir, const char *name, uint64_t new_dir,
                    const char *newname, unsigned int flags);
  bool async_setattr(fuse_req_t req, uint64_t ino, const struct stat *attr, int to_set,
                     InodeAttr *out);
  // ino's size and times under fileWrite, without waiting; false: go synchronous.
  bool async_report_size(uint64_t ino);
  // stamp: the time the change was shown with (the MDS stamps it too).
  // Returns the request's tid (0: the client is closing).
  // new_name_free: as MdsClient::submit's.
  uint64_t submit(const Caller &c, const Time &stamp,
                  const std::function<void(fsproto::Request::Builder)> &fill,
                  bool new_name_free = false);
  // The parent's attributes after a change in it made here.
  void touch_dir(InodeAttr dir, int nlink_delta, const Time &stamp);
  // Every change submitted so far is safe (0), or why not.
  int settle_async(uint32_t timeout_ms, std::string *why);

  // Before a flush of ino's data: decides whether it stays inline (its
  // bytes then go with the size report instead of to objects: at most
  // `budget` of them) and notes what the next size report says of it.
  // Returns how many inline bytes that report carries.
  size_t settle_inline(uint64_t ino, uint64_t budget = UINT64_MAX);
  // What the next size report says of where ino's data is (open_mu_ held);
  // the note is cleared: a failed report puts it back (restore_report).
  DataReport take_data_report(OpenFile &f);
  void restore_report(uint64_t ino, const DataReport &d);
  // A closed file's data and size, written out (close_workers.h): on a
  // CloseWorkers thread, or inline with sync_close. 0 or -errno.
  int write_back(uint64_t ino, const FileLayout &layout);
  // write_back of a file nobody has open, then its buffers go (unless it
  // was opened again meanwhile). Every write-out of a closed file ends
  // so: one started by a later setattr (the kernel's ctime after a
  // rename) would otherwise leave the file's state, and a copy of its
  // inline bytes, for ever.
  void write_back_closed(uint64_t ino, const FileLayout &layout);
  // Whether this client holds ino's fileWrite lease (nobody else can see
  // its data or size before a revoke makes us flush).
  bool holds_file_write(uint64_t ino) const;
  // Before dir/name goes away: a write-out of it still queued would
  // write data objects after the MDS purged them (orphans), so its data is
  // dropped unwritten (drop_unwritten) or, if that may not be, waited for.
  void settle_victim(uint64_t dir, const char *name);
  // ino's last link is about to go: if its write-out is still deferred
  // and dropping it loses nothing anyone can see, drops it (buffers, size
  // report) and returns true.
  bool drop_unwritten(uint64_t ino);
  // The set-id kill of a write (note_kill_on_write); true if one was due.
  bool take_kill_on_write(uint64_t fuse_ino);
  void kill_set_ids(fuse_req_t req, uint64_t ino);
  std::mutex kill_mu_;
  std::set<uint64_t> kill_on_write_;  // fuse inode numbers
  uint64_t init_unique_ = 0;          // GUARDED_BY(kill_mu_): the INIT whose reply is due
  bool init_offered_ = false;         // GUARDED_BY(kill_mu_)
  std::atomic<bool> killpriv_on_{false};
  std::unique_ptr<CloseWorkers> closers_;  // null: sync_close
  std::atomic<uint64_t> dropped_writebacks_{0};
  std::mutex data_error_mu_;
  int data_error_ = 0;  // the first background write-out failure, for fsync
  std::string data_error_what_;

  MdsClient &mds_;
  FileData *data_;  // null: no data path (every data op fails with EIO)
  const MountSettings settings_;
  LogFn log_;
  static constexpr uint64_t kWriteFailuresLogged = 20;
  std::atomic<uint64_t> write_failures_{0};
  // The layout (and size) of open file m for a data op; false after
  // replying EBADF (not open here) or EIO (no file data layer).
  bool open_file_data(fuse_req_t req, uint64_t m, FileLayout *layout, uint64_t *size);

  uint64_t root_ino_ = 1;
  uint64_t max_file_size_ = 0;
  uint64_t inline_max_ = 0;
  // The writeback cache was negotiated: the kernel owns a file's mtime and
  // ctime while it caches it (set in init, before any request).
  bool kernel_keeps_times_ = false;
  // The last statfs answer: what df and umount(8) get when the MDS does not
  // answer within kStatfsWaitMs (the cluster or the MDS is down), instead
  // of hanging as a hard NFS mount's would.
  std::mutex statfs_mu_;
  std::optional<struct statvfs> last_statfs_;
  std::atomic<bool> statfs_stale_logged_{false};
  static constexpr uint32_t kStatfsWaitMs = 5000;
  int64_t data_pool_ = -1;
  uint32_t mds_lease_ms_ = 30000;
  LeaseCache cache_;
  InodeTable inodes_;
  OpCounters counters_;

  std::mutex se_mu_;
  fuse_session *se_ = nullptr;

  // Held (before open_mu_) while a background size report clears `dirty`
  // and submits itself, and while a revoke reads `dirty`: the revoke then
  // either reports the size in its Release or finds the report submitted
  // and waits for it to be safe. (Without it a Release could overtake the
  // report: another client saw the old size after a close.)
  std::mutex report_mu_;
  mutable std::mutex open_mu_;
  std::unordered_map<uint64_t, OpenFile> open_;

  // Whether (ino, lock_owner) took POSIX locks here: only their closes
  // cost an unlock request.
  bool posix_locker(uint64_t ino, uint64_t owner, bool forget);

  std::mutex lock_mu_;
  std::set<std::pair<uint64_t, uint64_t>> posix_lockers_;  // (ino, lock_owner)
};

}  // namespace strata::fuse

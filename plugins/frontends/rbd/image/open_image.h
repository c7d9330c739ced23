// The Image an open() returns: requests split per object and issued as
// parallel client calls (op_queue.h), read-ahead (readahead.h), flush
// tracking, the exclusive lock and its renewal thread, which also answers
// snapshot requests (docs/BLOCK.md).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "clone_ops.h"
#include "exclusive_lock.h"
#include "image.h"
#include "image_header.h"
#include "object_ops.h"
#include "op_queue.h"
#include "readahead.h"
#include "write_back.h"

namespace strata::rbd {

class OpenImage final : public Image {
 public:
  // Takes ownership of io and of the lock (taken already, or null for a
  // read-only open). snap: the snapshot opened, or null for the head.
  // parents: what a clone (or a clone's snapshot) reads through to, its
  // first parent_overlap bytes; null when nothing reads through. Takes
  // ownership of parent_ios (other pools' ioctxs the chain uses).
  OpenImage(const strata_client_api *api, strata_ioctx_t io, const ImageRef &ref,
            const Header &h, const SnapInfo *snap, const OpenOptions &opts,
            std::unique_ptr<ExclusiveLock> lock, std::shared_ptr<const ParentChain> parents,
            uint64_t parent_overlap, std::vector<strata_ioctx_t> parent_ios);
  ~OpenImage() override;

  uint64_t size() const override { return size_; }
  uint32_t min_block() const override { return 1; }
  uint32_t preferred_block() const override { return std::min<uint32_t>(object_size_, 1u << 20); }
  bool read_only() const override { return read_only_; }
  std::string describe() const override { return describe_; }

  void read(uint64_t off, uint64_t len, char *out, Done done) override;
  void write(uint64_t off, uint64_t len, const char *data, bool fua, Done done) override;
  void discard(uint64_t off, uint64_t len, bool fua, Done done) override;
  void write_zeroes(uint64_t off, uint64_t len, bool may_unmap, bool fua, Done done) override;
  void flush(Done done) override;
  void cache(uint64_t off, uint64_t len, Done done) override;
  int extents(uint64_t off, uint64_t len, std::vector<Extent> *out) override;

  ImageInfo info() override;
  ImageStats stats() const override;
  std::string last_error() const override;
  int close() override;

 private:
  struct Request;
  // A read's part within one object (one read-ahead block at most when
  // read-ahead is on); count: how many parts an object read answers.
  struct ReadPiece {
    uint64_t objno, off, len;
    char *dst;
    uint32_t count;
  };
  void issue_read_pieces(uint64_t off, uint64_t len, bool use_ra,
                         const std::shared_ptr<Request> &req, const std::vector<ReadPiece> &pieces);
  enum class WriteKind { kWrite, kDiscard, kZeroes };  // kZeroes is done as kDiscard

  // may_answer_early: a plain write, which write_back_ may answer before
  // it completes.
  void start_write(WriteKind kind, uint64_t off, uint64_t len, const char *data,
                   bool may_answer_early, Done done);
  void issue_write(WriteKind kind, uint64_t off, uint64_t len, const char *data,
                   std::shared_ptr<Request> req);
  // One object's part of a write or discard.
  void write_piece(WriteKind kind, uint64_t objno, uint64_t off, uint64_t len, const char *data,
                   std::shared_ptr<Request> req);
  // Reads [off, off+len) of object objno (as of the snapshot opened) into
  // dst, zero-filling holes, and counts `pieces` pieces of req done.
  void issue_read(uint64_t objno, uint64_t off, uint64_t len, char *dst,
                  std::shared_ptr<Request> req, uint32_t pieces);
  void prefetch(uint64_t off, uint64_t len);
  void piece_done(const std::shared_ptr<Request> &req, int64_t rc, uint32_t pieces = 1);
  void finish_request(Request &req);
  void note_error(int rc, const std::string &what);
  // The end of an object read: a missing object reads through to a
  // clone's parent or as zeros; n bytes were read into dst.
  void object_read_done(uint64_t objno, uint64_t off, uint64_t len, char *dst, int64_t rc,
                        const std::shared_ptr<Request> &req, uint32_t pieces,
                        const OpQueue::Finish &fin);

  // For a clone: where object objno reads through to, if it does.
  std::optional<ParentObject> parent_object(uint64_t objno) const;

  void lock_loop();
  void answer_snapshot_request(const std::string &snap);
  // `snap rm` while we hold the image: the context drops the snapshot.
  void answer_snapshot_removal(const std::string &snap);
  void resume_writes();

  const strata_client_api *strata_api;  // the name frontend_client.h's macros use
  strata_ioctx_t io_;
  ImageRef ref_;
  ImageInfo info_;
  std::string describe_;
  uint64_t size_ = 0;
  uint32_t object_size_ = kDefaultObjectSize;
  bool read_only_ = false;
  uint64_t snap_id_ = 0;  // 0: the head
  OpenOptions opts_;

  OpQueue queue_;
  WriteBack write_back_;
  Readahead readahead_;
  std::unique_ptr<ExclusiveLock> lock_;
  std::thread lock_thread_;
  std::atomic<bool> lock_lost_{false};
  // Our lease's end (steady-clock ns): past it, writes are refused until a
  // renewal succeeds, since another client may take the lock over then.
  std::atomic<int64_t> lease_valid_until_ns_{0};

  mutable std::mutex m_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool closed_ = false;
  uint64_t requests_inflight_ = 0;
  // Flush: writes by start sequence; a flush waits for those started before it.
  uint64_t next_write_seq_ = 0;
  std::set<uint64_t> writes_inflight_;
  struct PendingFlush {
    uint64_t covers;  // writes with seq <= covers
    Done done;
  };
  std::vector<PendingFlush> flushes_;
  int flush_error_ = 0;  // first write error since the last flush reported
  int close_error_ = 0;
  // Snapshots: writes held back while one is taken. Changes carry
  // snap_context(snap_seq_) until one has succeeded on the object: it is
  // preserved for snap_seq_ then, and later changes pipeline again.
  bool writes_paused_ = false;
  uint64_t active_writes_ = 0;  // issued, not paused
  std::deque<std::function<void()>> paused_writes_;
  uint64_t snap_seq_ = 0;  // the context: the newest live snapshot (Header::snap_context)
  std::set<uint64_t> preserved_;  // objects preserved for snap_seq_
  // A clone's parents, and the objects known to be the child's own.
  std::shared_ptr<const ParentChain> parents_;
  uint64_t parent_overlap_ = 0;
  std::vector<strata_ioctx_t> parent_ios_;  // owned; closed with io_
  std::set<uint64_t> owned_;
  ImageStats stats_;
  std::string last_error_;
};

}  // namespace strata::rbd

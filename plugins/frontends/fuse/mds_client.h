// The fuse client's side of the MDS protocol (sdk/proto/fs.capnp): the
// session handshake (Hello/Welcome), requests matched to replies by tid,
// and the unsafe/safe bookkeeping that survives an MDS failover.
//
// - call() returns on the first reply to its request (unsafe or safe).
// - A request answered unsafe is kept until its safe reply: after the
//   transport reconnects (STRATA_SESSION_CONNECTED) the client sends Hello
//   with the same sessionId and, once welcomed, resends in tid order every
//   kept request after Welcome.committedTid with replay = true, and every
//   request that got no reply at all (the MDS answers duplicates from its
//   completed-request table).
// - Revoke and LockGranted go to handlers, called on the transport's
//   thread: they must hand the work to another thread (they may not wait
//   for the MDS, whose replies arrive on that same thread).
//
// Threading: on_connected/on_disconnected/on_message from the transport's
// thread, one at a time; call() and the rest from any thread.
#pragma once

#include <capnp/message.h>
#include <capnp/serialize.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "mds_transport.h"
#include "proto/fs.capnp.h"

namespace strata::fuse {

// A received message, copied out of the transport's buffer (aligned).
class ReceivedMessage {
 public:
  ReceivedMessage(const void *payload, size_t len);
  template <typename T>
  typename T::Reader root() {
    return reader_->getRoot<T>();
  }

 private:
  kj::Array<capnp::word> words_;
  std::unique_ptr<capnp::FlatArrayMessageReader> reader_;
};

struct MdsClientSettings {
  std::string client_name;  // instance id + mount point
  std::string fs_name;
  std::string mount_root = "/";
  // Asynchronous metadata (docs/FILESYSTEM.md): Hello says so, the
  // Welcome delegates inode numbers, submit() queues requests that go out
  // in Batches.
  bool async = false;
  uint32_t batch_delay_us = 10000;  // a batch leaves this long after its first request
  size_t batch_max = 64;            // or as soon as it holds this many
};

struct MdsHandlers {
  std::function<void(std::shared_ptr<ReceivedMessage> revoke)> on_revoke;
  std::function<void(std::shared_ptr<ReceivedMessage> granted)> on_lock_granted;
  // The reply to a submit()ted request (its caller is long gone): on the
  // transport's thread, without the client's lock; it may not wait.
  std::function<void(std::shared_ptr<ReceivedMessage> reply)> on_async_reply;
};

struct MdsClientStats {
  uint64_t requests = 0;     // calls made
  uint64_t round_trips = 0;  // first replies received
  uint64_t unsafe_now = 0;   // requests answered unsafe, not yet safe
  uint64_t waiting_now = 0;  // requests without any reply
  uint64_t replayed = 0;     // requests resent after a reconnect
  uint64_t reconnects = 0;   // Welcomes after the first
  uint64_t sessions_lost = 0;  // resumes the MDS refused (it no longer knew the session)
  uint64_t session_id = 0;
  bool connected = false;
  uint64_t async_requests = 0;  // submit()ted
  uint64_t async_unsafe = 0;    // submitted, not yet safe
  uint64_t async_failed = 0;    // submitted, refused by the MDS
  uint64_t batches = 0;         // Batch messages sent
  uint64_t async_merged = 0;    // setattrs merged into the one before them
  uint64_t delegated_left = 0;  // inode numbers this client may still use
  // By request kind (fsproto::Request::Which): waited for, and submitted.
  static constexpr size_t kKinds = 24;
  std::array<uint64_t, kKinds> sync_by_kind{}, async_by_kind{};
};

// The name of a request kind ("lookup", "create"...), for metrics.
const char *request_kind_name(size_t which);

class MdsClient {
 public:
  MdsClient(MdsTransport &transport, MdsClientSettings settings, MdsHandlers handlers);
  ~MdsClient();  // fails whatever still waits with -ESHUTDOWN

  // Transport events.
  void on_connected();
  void on_disconnected();
  void on_message(uint16_t type, const void *payload, size_t len);

  // Waits up to timeout_ms for the first Welcome. 0, the Welcome's error,
  // or -ETIMEDOUT; *message says why.
  int wait_welcome(uint32_t timeout_ms, std::string *message);
  // The first (or latest) Welcome; null before.
  std::shared_ptr<ReceivedMessage> welcome() const;

  // Sends a request (fill sets its body and caller; tid and replay are
  // the client's) and waits for the first reply: the reply, or null with
  // *err set (-ESHUTDOWN when the client is closing). With timeout_ms, a
  // request that changes nothing (a statfs) is given up after that long:
  // -ETIMEDOUT, and it is neither resent nor its late answer kept.
  std::shared_ptr<ReceivedMessage> call(const std::function<void(fsproto::Request::Builder)> &fill,
                                        int *err, uint32_t timeout_ms = 0);

  // Asynchronous metadata. take_ino: the next delegated inode number
  // (false: none left; the caller goes synchronous). submit: queues the
  // request (tid and caller as in call()) for the next Batch and returns
  // at once with its tid (0: closing); it is kept, and replayed after a
  // failover, until safe. Order holds: a call() sends the queued batch
  // before its own request.
  bool take_ino(uint64_t *ino);
  // new_name_free: a rename whose new name the caller knows to be free (it
  // may fold into the create of its file, still unsent).
  uint64_t submit(const std::function<void(fsproto::Request::Builder)> &fill,
                  bool new_name_free = false);
  void flush_batch();
  // The newest tid submitted (0: none).
  uint64_t last_submitted() const;
  // Waits until every request submitted up to tid is safe: 0, -ETIMEDOUT
  // or -ESHUTDOWN.
  int wait_safe(uint64_t tid, uint32_t timeout_ms);
  // The first refusal of a submitted request since the last call (0:
  // none), with its message: what fsync and unmount report.
  int take_async_error(std::string *message);
  // Whether `tid` is root's exclusive create, still in the unsent batch of
  // an MDS that takes Create.then: a size report of its inode submitted now
  // goes into it.
  bool create_unsent(uint64_t tid) const;
  // The MDS's last reply said the cluster is full (Reply.clusterFull): it
  // refuses changes that take space, so they are not decided here.
  bool cluster_full() const { return cluster_full_.load(std::memory_order_relaxed); }
  // An OSD refused a write with ENOSPC: full until an MDS reply says not.
  void note_cluster_full() { cluster_full_.store(true, std::memory_order_relaxed); }

  // A message outside request/reply (Release, Goodbye): sent if connected
  // (a lease that is not released in time expires anyway). 0 or -errno.
  int send(uint16_t type, capnp::MessageBuilder &msg);

  // Wakes every waiting call with -ESHUTDOWN; later calls fail at once.
  void shutdown();

  MdsClientStats stats() const;
  // Tids of the requests kept for replay (unsafe or unanswered), in order.
  std::vector<uint64_t> kept_tids() const;

 private:
  struct Pending {
    kj::Array<capnp::word> request;  // the encoded Request
    bool answered = false;           // the first reply came (the call returned)
    bool safe = false;
    bool async = false;  // submit()ted: nobody waits for the reply
    std::shared_ptr<ReceivedMessage> reply;
  };
  void send_hello_locked();
  void handle_welcome_locked(std::shared_ptr<ReceivedMessage> m);
  // True when the reply answered a submit()ted request.
  bool handle_reply_locked(std::shared_ptr<ReceivedMessage> m);
  int send_request_locked(uint64_t tid, Pending &p, bool replay);
  // For an MDS that does not take Create.then (an older one took over): a
  // pending create's folded setattr comes out of it again as a request of
  // its own, with a new tid, which the caller sends right after the
  // create. 0: p holds no Create.then.
  uint64_t split_create_then_locked(Pending &p);
  // Folds a setattr into an earlier request of its inode in the unsent
  // batch (a setattr, or its create); true with that request's tid.
  bool fold_setattr_locked(fsproto::Request::Reader req, uint64_t *tid);
  // Folds a rename into the create of its file in the unsent batch, with
  // at most setattrs of other inodes after it (the new name is known
  // free); true with that tid.
  bool fold_rename_locked(fsproto::Request::Reader req, uint64_t *tid);
  // Looks back over the unsent batch, newest first (a few at most), for the
  // request `look` folds into (kFolded: `merged` replaces it; true with
  // its tid), past those it may pass (kPast), until one it may not (kStop).
  enum class FoldStep { kPast, kFolded, kStop };
  bool fold_back_locked(
      uint64_t *tid,
      const std::function<FoldStep(fsproto::Request::Reader, capnp::MessageBuilder &)> &look);
  // p (tid's, in the unsent batch) becomes `merged`, which keeps that tid.
  void replace_request_locked(uint64_t tid, Pending &p, capnp::MessageBuilder &merged);
  // urgent: someone waits for what was sent to be safe (Batch.urgent); a
  // Batch goes out even with no requests in it.
  void flush_batch_locked(bool urgent = false);
  void async_done_locked(uint64_t tid);
  void flusher_loop();
  void add_range_locked(uint64_t first, uint64_t count);

  MdsTransport &transport_;
  const MdsClientSettings settings_;
  const MdsHandlers handlers_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool connected_ = false;  // transport connected
  bool welcomed_ = false;   // and the current connection was welcomed
  bool create_then_ = false;  // the MDS applies Create.then (Welcome.createThen)
  std::atomic<bool> cluster_full_{false};
  bool closing_ = false;
  int welcome_error_ = 0;
  std::string welcome_message_;
  uint64_t session_id_ = 0;
  uint64_t next_tid_ = 1;
  std::map<uint64_t, Pending> pending_;  // by tid: in order for replay
  std::shared_ptr<ReceivedMessage> welcome_;
  MdsClientStats stats_;

  // Asynchronous metadata.
  std::deque<std::pair<uint64_t, uint64_t>> ranges_;  // delegated (first, count), in use order
  std::vector<uint64_t> batch_;                       // tids queued, not yet sent
  std::chrono::steady_clock::time_point batch_since_;
  size_t batch_bytes_ = 0;           // of the requests in batch_ (inline data makes them big)
  std::set<uint64_t> async_unsafe_;  // submitted tids not yet safe
  uint64_t last_submitted_ = 0;
  int async_error_ = 0;
  std::string async_error_message_;
  std::condition_variable flush_cv_;
  std::thread flusher_;
};

}  // namespace strata::fuse

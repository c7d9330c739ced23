// What the parts of Store share and nothing outside core/store uses: the
// record of one queued transaction, and the small conversions between the
// plugin ABI's slices and C++ strings. The parts: store.cpp (lifecycle),
// store_replay.cpp, store_write.cpp (submission, journaling,
// acknowledgement), store_apply.cpp (apply thread, checkpoints),
// store_read.cpp.
//
// Threading: an InFlight is filled in by queue() before it is published (to
// the journal's callback and to queue_/live_); after that its flags change
// only under Store::mu_.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "store/store.h"

namespace strata::store {

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

namespace internal {

using Clock = std::chrono::steady_clock;

inline std::string_view sv(strata_slice s) { return {s.data ? s.data : "", s.len}; }
inline strata_slice sl(std::string_view s) { return {s.data(), s.size()}; }

// The key of an object in the store's in-memory maps (sizes_,
// pending_objects_, acked_unapplied_): the collection's length first, so
// that no two (collection, object) pairs share a key and a collection's
// objects share a prefix.
inline std::string object_key(std::string_view coll, std::string_view oid) {
  std::string k = std::to_string(coll.size());
  k += ':';
  k.append(coll);
  k.append(oid);
  return k;
}

// Who a journal belongs to, as its plugin records it.
inline JournalOwner owner_of(const std::string &dir, const std::string &fsid) {
  return {fsid, std::filesystem::absolute(dir).lexically_normal().string()};
}

}  // namespace internal

}  // namespace strata::store

// An open image's lock thread (renewal, snapshot requests) and close().
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "open_image.h"
#include "store_ops.h"
#include "strata/cpp/plugin_support.hpp"
#include "strata/frontend_client.h"

namespace strata::rbd {

namespace {
constexpr auto kLockTick = std::chrono::milliseconds(250);
}  // namespace

void OpenImage::lock_loop() {
  auto next_renew = std::chrono::steady_clock::now() + std::chrono::milliseconds(opts_.lock_renew_ms);
  for (;;) {
    {
      std::unique_lock lk(m_);
      if (cv_.wait_for(lk, kLockTick, [&] { return stopping_; })) return;
    }
    if (lock_lost_) continue;
    const auto now = std::chrono::steady_clock::now();
    if (now >= next_renew) {
      const int rc = lock_->renew();
      if (rc == -EBUSY) {
        // Someone took over after our lease ended: writes fail from now on.
        lock_lost_ = true;
        note_error(-EBUSY, "lost the exclusive lock (taken over by another client)");
        continue;
      }
      if (rc == 0) lease_valid_until_ns_ = lock_->valid_until().time_since_epoch().count();
      next_renew = rc == 0 ? now + std::chrono::milliseconds(opts_.lock_renew_ms) : now;
    }
    // Snapshot requests from `snap create` while we hold the image.
    try {
      for (const std::string &snap : list_snap_requests(ref_, info_.id))
        answer_snapshot_request(snap);
      for (const std::string &snap : list_snap_remove_requests(ref_, info_.id))
        answer_snapshot_removal(snap);
    } catch (const sdk::Error &e) {
      note_error(e.code(), std::string("polling the header: ") + e.what());
    }
  }
}

void OpenImage::answer_snapshot_request(const std::string &snap) {
  {
    // Stop starting writes and let those in flight finish: the snapshot
    // is a point between writes.
    std::unique_lock lk(m_);
    writes_paused_ = true;
    cv_.wait(lk, [&] { return active_writes_ == 0; });
  }
  try {
    const SnapInfo s = add_snapshot_record(ref_, info_.id, lock_->current_value(), snap);
    std::lock_guard lk(m_);
    snap_seq_ = s.id;
    preserved_.clear();
    info_.snaps.push_back(s);
  } catch (const sdk::Error &e) {
    note_error(e.code(), std::string("taking snapshot ") + snap + ": " + e.what());
  }
  const std::string key = format::kSnapRequestPrefix + snap;
  strata_bytes k{key.data(), key.size()};
  (void)strata_omap_rm_keys(io_, format::header_oid(info_.id).c_str(), &k, 1);
  resume_writes();
}

void OpenImage::answer_snapshot_removal(const std::string &snap) {
  {
    // No write with the old context may land after `snap rm` trims.
    std::unique_lock lk(m_);
    writes_paused_ = true;
    cv_.wait(lk, [&] { return active_writes_ == 0; });
    std::erase_if(info_.snaps, [&](const SnapInfo &s) { return s.name == snap; });
    uint64_t newest = 0;
    for (const SnapInfo &s : info_.snaps) newest = std::max(newest, s.id);
    // Objects preserved for the old context are preserved for an older
    // one too: the memo stays right as the context goes down.
    snap_seq_ = newest;
  }
  const std::string key = format::kSnapRemoveRequestPrefix + snap;
  strata_bytes k{key.data(), key.size()};
  (void)strata_omap_rm_keys(io_, format::header_oid(info_.id).c_str(), &k, 1);
  resume_writes();
}

void OpenImage::resume_writes() {
  std::deque<std::function<void()>> resume;
  {
    std::lock_guard lk(m_);
    writes_paused_ = false;
    resume.swap(paused_writes_);
    active_writes_ += resume.size();
  }
  for (auto &f : resume) f();
}

int OpenImage::close() {
  {
    std::unique_lock lk(m_);
    if (closed_) return close_error_;
    cv_.wait(lk, [&] { return requests_inflight_ == 0; });
    stopping_ = true;
    closed_ = true;
    cv_.notify_all();
  }
  if (lock_thread_.joinable()) lock_thread_.join();
  queue_.stop();
  if (lock_) lock_->release();
  strata_ioctx_destroy(io_);
  io_ = nullptr;
  for (strata_ioctx_t pio : parent_ios_) strata_ioctx_destroy(pio);
  parent_ios_.clear();
  std::lock_guard lk(m_);
  return close_error_;
}

}  // namespace strata::rbd

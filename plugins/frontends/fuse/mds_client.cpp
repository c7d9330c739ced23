#include "mds_client.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

namespace strata::fuse {

ReceivedMessage::ReceivedMessage(const void *payload, size_t len)
    : words_(kj::heapArray<capnp::word>((len + sizeof(capnp::word) - 1) / sizeof(capnp::word))) {
  if (len > 0) std::memcpy(words_.begin(), payload, len);
  reader_ = std::make_unique<capnp::FlatArrayMessageReader>(words_.asPtr());
}

MdsClient::MdsClient(MdsTransport &transport, MdsClientSettings settings, MdsHandlers handlers)
    : transport_(transport), settings_(std::move(settings)), handlers_(std::move(handlers)) {}

MdsClient::~MdsClient() { shutdown(); }

void MdsClient::on_connected() {
  std::lock_guard<std::mutex> l(mu_);
  connected_ = true;
  welcomed_ = false;
  stats_.connected = true;
  send_hello_locked();
}

void MdsClient::on_disconnected() {
  std::lock_guard<std::mutex> l(mu_);
  connected_ = false;
  welcomed_ = false;
  stats_.connected = false;
}

void MdsClient::send_hello_locked() {
  capnp::MallocMessageBuilder msg;
  auto h = msg.initRoot<fsproto::Hello>();
  h.setClientName(settings_.client_name);
  h.setSessionId(session_id_);
  h.setMountRoot(settings_.mount_root);
  h.setFsName(settings_.fs_name);
  h.setSupportsAsync(false);  // no Batch yet: every change is a Request
  auto words = capnp::messageToFlatArray(msg);
  auto bytes = words.asBytes();
  transport_.send(fsproto::MSG_HELLO, bytes.begin(), bytes.size());
}

void MdsClient::on_message(uint16_t type, const void *payload, size_t len) {
  std::shared_ptr<ReceivedMessage> m;
  try {
    m = std::make_shared<ReceivedMessage>(payload, len);
  } catch (const kj::Exception &) {
    return;  // a message we cannot decode answers nothing
  }
  switch (type) {
    case fsproto::MSG_WELCOME: {
      std::lock_guard<std::mutex> l(mu_);
      handle_welcome_locked(std::move(m));
      break;
    }
    case fsproto::MSG_REPLY: {
      std::lock_guard<std::mutex> l(mu_);
      handle_reply_locked(std::move(m));
      break;
    }
    case fsproto::MSG_REVOKE:
      if (handlers_.on_revoke) handlers_.on_revoke(std::move(m));
      break;
    case fsproto::MSG_LOCK_GRANTED:
      if (handlers_.on_lock_granted) handlers_.on_lock_granted(std::move(m));
      break;
    default:
      break;  // BatchReply: no batches are sent yet
  }
}

void MdsClient::handle_welcome_locked(std::shared_ptr<ReceivedMessage> m) {
  auto w = m->root<fsproto::Welcome>();
  if (w.getError() != 0) {
    welcome_error_ = w.getError();
    welcome_message_ = w.getMessage();
    cv_.notify_all();
    return;
  }
  bool first = !welcome_;
  bool resumed = !first && w.getSessionId() == session_id_;
  if (!first) ++stats_.reconnects;
  session_id_ = w.getSessionId();
  stats_.session_id = session_id_;
  welcome_ = m;
  welcomed_ = true;
  uint64_t committed = w.getCommittedTid();
  // In tid order: what the MDS has not committed is replayed; what it
  // never answered is sent (again).
  for (auto it = pending_.begin(); it != pending_.end();) {
    Pending &p = it->second;
    if (p.safe) {  // done; its caller has yet to pick up the reply
      ++it;
      continue;
    }
    if (p.answered && (!resumed || it->first <= committed)) {
      // Committed (safe), or the session it belonged to is gone: nothing
      // to replay into.
      if (!p.safe) --stats_.unsafe_now;
      p.safe = true;
      if (p.reply) {
        ++it;  // its caller erases it when it picks up the reply
      } else {
        it = pending_.erase(it);
      }
      continue;
    }
    if (send_request_locked(it->first, p, resumed) == 0 && resumed) ++stats_.replayed;
    ++it;
  }
  cv_.notify_all();
}

void MdsClient::handle_reply_locked(std::shared_ptr<ReceivedMessage> m) {
  auto r = m->root<fsproto::Reply>();
  auto it = pending_.find(r.getTid());
  if (it == pending_.end()) return;  // a duplicate (replayed) answer
  Pending &p = it->second;
  bool safe = r.getSafe() || !r.getUnsafe();
  if (!p.answered) {
    p.answered = true;
    p.reply = m;
    --stats_.waiting_now;
    ++stats_.round_trips;
    if (!safe) ++stats_.unsafe_now;
    cv_.notify_all();
  } else if (safe && !p.safe) {
    --stats_.unsafe_now;
  }
  if (safe) {
    p.safe = true;
    // A caller that has not picked up its reply yet erases it then.
    if (!p.reply) pending_.erase(it);
  }
}

int MdsClient::send_request_locked(uint64_t tid, Pending &p, bool replay) {
  if (!connected_ || !welcomed_) return -ENOTCONN;
  if (!replay) {
    auto bytes = p.request.asBytes();
    return transport_.send(fsproto::MSG_REQUEST, bytes.begin(), bytes.size());
  }
  capnp::FlatArrayMessageReader original(p.request.asPtr());
  capnp::MallocMessageBuilder copy;
  copy.setRoot(original.getRoot<fsproto::Request>());
  auto req = copy.getRoot<fsproto::Request>();
  req.setReplay(true);
  req.setTid(tid);
  auto words = capnp::messageToFlatArray(copy);
  auto bytes = words.asBytes();
  return transport_.send(fsproto::MSG_REQUEST, bytes.begin(), bytes.size());
}

int MdsClient::wait_welcome(uint32_t timeout_ms, std::string *message) {
  std::unique_lock<std::mutex> l(mu_);
  bool done = cv_.wait_for(l, std::chrono::milliseconds(timeout_ms),
                           [&] { return welcome_ || welcome_error_ != 0 || closing_; });
  if (welcome_error_ != 0) {
    if (message) *message = welcome_message_;
    return welcome_error_;
  }
  if (closing_) return -ESHUTDOWN;
  if (!done) {
    if (message)
      *message = connected_ ? "connected to the MDS, but no Welcome came"
                            : "no active MDS could be reached";
    return -ETIMEDOUT;
  }
  return 0;
}

std::shared_ptr<ReceivedMessage> MdsClient::welcome() const {
  std::lock_guard<std::mutex> l(mu_);
  return welcome_;
}

std::shared_ptr<ReceivedMessage> MdsClient::call(
    const std::function<void(fsproto::Request::Builder)> &fill, int *err) {
  capnp::MallocMessageBuilder msg;
  auto req = msg.initRoot<fsproto::Request>();
  fill(req);
  std::unique_lock<std::mutex> l(mu_);
  if (closing_) {
    *err = -ESHUTDOWN;
    return nullptr;
  }
  uint64_t tid = next_tid_++;
  req.setTid(tid);
  req.setReplay(false);
  Pending &p = pending_[tid];
  p.request = capnp::messageToFlatArray(msg);
  ++stats_.requests;
  ++stats_.waiting_now;
  // Not connected: sent from handle_welcome_locked once welcomed.
  send_request_locked(tid, p, false);
  cv_.wait(l, [&] {
    auto it = pending_.find(tid);
    return closing_ || it == pending_.end() || it->second.answered;
  });
  auto it = pending_.find(tid);
  if (it == pending_.end() || !it->second.answered) {
    if (it != pending_.end()) pending_.erase(it);
    *err = -ESHUTDOWN;
    return nullptr;
  }
  auto reply = it->second.reply;
  it->second.reply.reset();  // kept only for replay bookkeeping now
  if (it->second.safe) pending_.erase(it);
  *err = 0;
  return reply;
}

int MdsClient::send(uint16_t type, capnp::MessageBuilder &msg) {
  auto words = capnp::messageToFlatArray(msg);
  auto bytes = words.asBytes();
  std::lock_guard<std::mutex> l(mu_);
  if (!connected_ || !welcomed_) return -ENOTCONN;
  return transport_.send(type, bytes.begin(), bytes.size());
}

void MdsClient::shutdown() {
  std::lock_guard<std::mutex> l(mu_);
  closing_ = true;
  cv_.notify_all();
}

MdsClientStats MdsClient::stats() const {
  std::lock_guard<std::mutex> l(mu_);
  return stats_;
}

std::vector<uint64_t> MdsClient::kept_tids() const {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<uint64_t> out;
  for (const auto &[tid, p] : pending_) out.push_back(tid);
  return out;
}

}  // namespace strata::fuse

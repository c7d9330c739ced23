// The MDS client's bookkeeping, driven through a fake transport: a call
// returns on the first reply; requests answered unsafe are kept until
// safe and replayed in tid order after a reconnect to the same session;
// what the MDS committed (Welcome.committedTid) is not replayed.
#include "mds_client.h"

#include <capnp/message.h>
#include <capnp/serialize.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

using namespace strata::fuse;
namespace fsproto = strata::fsproto;

namespace {

struct Sent {
  uint16_t type;
  std::shared_ptr<ReceivedMessage> msg;
};

class FakeTransport : public MdsTransport {
 public:
  int send(uint16_t type, const void *payload, size_t len) override {
    std::lock_guard<std::mutex> l(mu_);
    sent_.push_back({type, std::make_shared<ReceivedMessage>(payload, len)});
    cv_.notify_all();
    return 0;
  }
  // Waits for the n-th message (0-based) and returns it.
  Sent wait(size_t n) {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return sent_.size() > n; });
    return sent_[n];
  }
  size_t count() {
    std::lock_guard<std::mutex> l(mu_);
    return sent_.size();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Sent> sent_;
};

std::vector<capnp::word> flat(capnp::MessageBuilder &m) {
  auto a = capnp::messageToFlatArray(m);
  return std::vector<capnp::word>(a.begin(), a.end());
}

void welcome(MdsClient &c, uint64_t session, uint64_t committed, uint64_t first = 0,
             uint64_t count = 0, bool create_then = false) {
  capnp::MallocMessageBuilder m;
  auto w = m.initRoot<fsproto::Welcome>();
  w.setCreateThen(create_then);
  w.setSessionId(session);
  w.setCommittedTid(committed);
  w.initDelegated().setFirst(first);
  w.getDelegated().setCount(count);
  w.initRoot().setIno(1);
  auto b = flat(m);
  c.on_message(fsproto::MSG_WELCOME, b.data(), b.size() * sizeof(capnp::word));
}

void reply(MdsClient &c, uint64_t tid, bool safe, int result = 0, bool full = false) {
  capnp::MallocMessageBuilder m;
  auto r = m.initRoot<fsproto::Reply>();
  r.setClusterFull(full);
  r.setTid(tid);
  r.setResult(result);
  r.setSafe(safe);
  r.setUnsafe(!safe);
  auto b = flat(m);
  c.on_message(fsproto::MSG_REPLY, b.data(), b.size() * sizeof(capnp::word));
}

// A getattr of ino, on a thread; its future is the reply's tid (or the error).
std::future<int64_t> call_async(MdsClient &c, uint64_t ino) {
  return std::async(std::launch::async, [&c, ino]() -> int64_t {
    int err = 0;
    auto r = c.call([&](fsproto::Request::Builder b) { b.initGetattr().setIno(ino); }, &err);
    if (!r) return err;
    return int64_t(r->root<fsproto::Reply>().getTid());
  });
}

// The link drops and comes back: the n-th message sent is the Hello that
// resumes `session`.
void reconnect(FakeTransport &t, MdsClient &c, size_t n, uint64_t session) {
  c.on_disconnected();
  c.on_connected();
  Sent hello = t.wait(n);
  REQUIRE(hello.type == fsproto::MSG_HELLO);
  CHECK(hello.msg->root<fsproto::Hello>().getSessionId() == session);
}

// Session 7: tid 1 answered unsafe (not yet durable), tid 2 sent and not
// answered (its future).
std::future<int64_t> unsafe_then_unanswered(FakeTransport &t, MdsClient &c) {
  c.on_connected();
  welcome(c, 7, 0);
  auto f1 = call_async(c, 1);
  t.wait(1);
  reply(c, 1, false);
  CHECK(f1.get() == 1);
  auto f2 = call_async(c, 2);
  t.wait(2);
  return f2;
}

fsproto::Request::Reader request(const Sent &s) {
  REQUIRE(s.type == fsproto::MSG_REQUEST);
  return s.msg->root<fsproto::Request>();
}

}  // namespace

TEST_CASE("hello on connect, requests wait for the welcome, a call returns on its first reply") {
  FakeTransport t;
  MdsClient c(t, MdsClientSettings{"client.1:/mnt", "home", "/"}, MdsHandlers{});
  c.on_connected();
  Sent hello = t.wait(0);
  REQUIRE(hello.type == fsproto::MSG_HELLO);
  CHECK(hello.msg->root<fsproto::Hello>().getSessionId() == 0);
  CHECK(std::string(hello.msg->root<fsproto::Hello>().getFsName()) == "home");

  auto f = call_async(c, 5);
  // Not sent before the Welcome.
  CHECK(f.wait_for(std::chrono::milliseconds(50)) == std::future_status::timeout);
  CHECK(t.count() == 1);
  welcome(c, 7, 0);
  auto req = request(t.wait(1));
  CHECK(req.getTid() == 1);
  CHECK_FALSE(req.getReplay());
  CHECK(req.getGetattr().getIno() == 5);

  reply(c, 1, /*safe=*/false);
  CHECK(f.get() == 1);
  CHECK(c.kept_tids() == std::vector<uint64_t>{1});
  CHECK(c.stats().unsafe_now == 1);
  reply(c, 1, /*safe=*/true);
  CHECK(c.kept_tids().empty());
  CHECK(c.stats().unsafe_now == 0);
  CHECK(c.stats().round_trips == 1);
}

TEST_CASE("after a reconnect, uncommitted unsafe requests are replayed in tid order") {
  FakeTransport t;
  MdsClient c(t, MdsClientSettings{"c", "home", "/"}, MdsHandlers{});
  c.on_connected();
  welcome(c, 7, 0);
  // tids 1, 2, 3: 1 and 3 answered unsafe, 2 safe.
  for (uint64_t tid = 1; tid <= 3; ++tid) {
    auto f = call_async(c, 100 + tid);
    t.wait(tid);  // Hello is message 0
    reply(c, tid, tid == 2);
    CHECK(f.get() == int64_t(tid));
  }
  CHECK(c.kept_tids() == std::vector<uint64_t>{1, 3});

  // A fourth request goes out and the connection breaks before any reply.
  auto pending = call_async(c, 104);
  t.wait(4);
  reconnect(t, c, 5, 7);

  // The new MDS committed tid 1 already: 3 and 4 are replayed, in order.
  welcome(c, 7, 1);
  auto r3 = request(t.wait(6));
  auto r4 = request(t.wait(7));
  CHECK(r3.getTid() == 3);
  CHECK(r3.getReplay());
  CHECK(r3.getGetattr().getIno() == 103);
  CHECK(r4.getTid() == 4);
  CHECK(r4.getReplay());
  CHECK(c.kept_tids() == std::vector<uint64_t>{3, 4});
  CHECK(c.stats().replayed == 2);

  reply(c, 4, true);
  CHECK(pending.get() == 4);
  reply(c, 3, true);
  CHECK(c.kept_tids().empty());
  // New requests continue the tid sequence.
  auto next = call_async(c, 1);
  CHECK(request(t.wait(8)).getTid() == 5);
  reply(c, 5, true);
  CHECK(next.get() == 5);
}

TEST_CASE("a new session (the old one is gone) replays nothing but resends unanswered requests") {
  FakeTransport t;
  MdsClient c(t, MdsClientSettings{"c", "home", "/"}, MdsHandlers{});
  auto f2 = unsafe_then_unanswered(t, c);
  reconnect(t, c, 3, 7);
  welcome(c, 9, 0);
  auto resent = request(t.wait(4));
  CHECK(resent.getTid() == 2);
  CHECK_FALSE(resent.getReplay());
  CHECK(c.kept_tids() == std::vector<uint64_t>{2});
  reply(c, 2, true);
  CHECK(f2.get() == 2);
  CHECK(c.stats().session_id == 9);
}

TEST_CASE(
    "a resume the MDS refuses (session unknown) opens a fresh session: what it had "
    "answered unsafe is reported lost, what it had not answered is resent") {
  FakeTransport t;
  MdsClient c(t, MdsClientSettings{"c", "home", "/"}, MdsHandlers{});
  auto f2 = unsafe_then_unanswered(t, c);
  reconnect(t, c, 3, 7);
  {
    capnp::MallocMessageBuilder m;
    auto w = m.initRoot<fsproto::Welcome>();
    w.setError(-ESTALE);
    w.setMessage("session 7 is unknown (expired or never made)");
    auto b = flat(m);
    c.on_message(fsproto::MSG_WELCOME, b.data(), b.size() * sizeof(capnp::word));
  }
  // Before, the mount waited for ever for a Welcome that never came.
  Sent fresh = t.wait(4);
  REQUIRE(fresh.type == fsproto::MSG_HELLO);
  CHECK(fresh.msg->root<fsproto::Hello>().getSessionId() == 0);
  CHECK(c.stats().sessions_lost == 1);
  welcome(c, 9, 0);
  auto resent = request(t.wait(5));
  CHECK(resent.getTid() == 2);
  CHECK_FALSE(resent.getReplay());
  reply(c, 2, true);
  CHECK(f2.get() == 2);
  CHECK(c.stats().session_id == 9);
  std::string why;
  CHECK(c.take_async_error(&why) == -EIO);
  CHECK(why.find("session 7") != std::string::npos);
  CHECK(why.find("1 change(s)") != std::string::npos);
  CHECK(c.take_async_error(&why) == 0);  // said once
}

TEST_CASE("shutdown fails waiting calls, and a refused welcome is reported") {
  FakeTransport t;
  MdsClient c(t, MdsClientSettings{"c", "nope", "/"}, MdsHandlers{});
  c.on_connected();
  capnp::MallocMessageBuilder m;
  auto w = m.initRoot<fsproto::Welcome>();
  w.setError(-2);
  w.setMessage("no filesystem 'nope'");
  auto b = flat(m);
  c.on_message(fsproto::MSG_WELCOME, b.data(), b.size() * sizeof(capnp::word));
  std::string why;
  CHECK(c.wait_welcome(1000, &why) == -2);
  CHECK(why == "no filesystem 'nope'");

  auto f = call_async(c, 1);
  CHECK(f.wait_for(std::chrono::milliseconds(20)) == std::future_status::timeout);
  c.shutdown();
  CHECK(f.get() == -ESHUTDOWN);
}

TEST_CASE("a call with a timeout gives up, and its late answer is dropped") {
  FakeTransport t;
  MdsClient c(t, MdsClientSettings{"c", "home", "/"}, MdsHandlers{});
  c.on_connected();
  welcome(c, 7, 0);
  int err = 0;
  auto r = c.call([](fsproto::Request::Builder q) { q.initStatfs().setIno(1); }, &err, 50);
  CHECK(r == nullptr);
  CHECK(err == -ETIMEDOUT);
  CHECK(c.stats().waiting_now == 0);
  CHECK(c.kept_tids().empty());  // neither resent after a reconnect nor waited for
  reply(c, 1, /*safe=*/true);    // the late answer: ignored
  CHECK(c.stats().round_trips == 0);
  // Answered in time, a call with a timeout is a call.
  auto f = std::async(std::launch::async, [&] {
    int e = 0;
    auto m = c.call([](fsproto::Request::Builder q) { q.initStatfs().setIno(1); }, &e, 10000);
    return m ? 0 : e;
  });
  auto req = request(t.wait(2));
  reply(c, req.getTid(), /*safe=*/true);
  CHECK(f.get() == 0);
  CHECK(c.stats().round_trips == 1);
}

TEST_CASE("revokes and lock grants go to the handlers") {
  FakeTransport t;
  int revokes = 0;
  uint64_t granted_tid = 0;
  MdsHandlers h;
  h.on_revoke = [&](std::shared_ptr<ReceivedMessage> m) {
    revokes += int(m->root<fsproto::Revoke>().getLeases().size());
  };
  h.on_lock_granted = [&](std::shared_ptr<ReceivedMessage> m) {
    granted_tid = m->root<fsproto::LockGranted>().getTid();
  };
  MdsClient c(t, MdsClientSettings{"c", "home", "/"}, h);
  capnp::MallocMessageBuilder rm;
  rm.initRoot<fsproto::Revoke>().initLeases(2);
  auto rb = flat(rm);
  c.on_message(fsproto::MSG_REVOKE, rb.data(), rb.size() * sizeof(capnp::word));
  capnp::MallocMessageBuilder gm;
  gm.initRoot<fsproto::LockGranted>().setTid(42);
  auto gb = flat(gm);
  c.on_message(fsproto::MSG_LOCK_GRANTED, gb.data(), gb.size() * sizeof(capnp::word));
  CHECK(revokes == 2);
  CHECK(granted_tid == 42);
}

namespace {

MdsClientSettings async_settings(size_t batch_max = 4, uint32_t delay_us = 2000) {
  MdsClientSettings s{"c", "home", "/"};
  s.async = true;
  s.batch_max = batch_max;
  s.batch_delay_us = delay_us;
  return s;
}

uint64_t submit_getattr(MdsClient &c, uint64_t ino) {
  return c.submit([&](fsproto::Request::Builder b) { b.initSetattr().setIno(ino); });
}

// An asynchronous create of parent/name as inode `ino`, by `uid` at time
// `sec` (0: no time).
struct NewFile {
  uint64_t ino = 0;
  const char *name = "f";
  uint64_t parent = 1;
  bool exclusive = true;
  uint32_t uid = 0;
  int64_t sec = 50;
  uint32_t mode = 0644;
  bool inline_data = false;
};

uint64_t submit_create(MdsClient &c, const NewFile &f) {
  return c.submit([&](fsproto::Request::Builder b) {
    b.initCaller().setUid(f.uid);
    if (f.sec) b.initTime().setSec(f.sec);
    auto q = b.initCreate();
    q.setParent(f.parent);
    q.setName(
        capnp::Data::Reader(reinterpret_cast<const capnp::byte *>(f.name), std::strlen(f.name)));
    q.setIno(f.ino);
    q.setMode(f.mode);
    q.setExclusive(f.exclusive);
    q.setDataInline(f.inline_data);
  });
}

// A client welcomed by an MDS with 100 inode numbers for it, batching up
// to 64 requests for 100 ms (the tests flush).
struct WelcomedClient {
  explicit WelcomedClient(bool create_then)
      : c(t, async_settings(/*batch_max=*/64, /*delay_us=*/100000), MdsHandlers{}) {
    c.on_connected();
    welcome(c, 7, 0, 1000, 100, create_then);
  }
  FakeTransport t;
  MdsClient c;
};

std::vector<uint64_t> batch_tids(const Sent &s) {
  REQUIRE(s.type == fsproto::MSG_BATCH);
  std::vector<uint64_t> out;
  for (auto r : s.msg->root<fsproto::Batch>().getRequests()) out.push_back(r.getTid());
  return out;
}

}  // namespace

TEST_CASE("async: Hello says so, the Welcome's range is handed out, replies add ranges") {
  FakeTransport t;
  MdsClient c(t, async_settings(), MdsHandlers{});
  c.on_connected();
  CHECK(t.wait(0).msg->root<fsproto::Hello>().getSupportsAsync());
  uint64_t ino = 0;
  CHECK_FALSE(c.take_ino(&ino));  // not welcomed
  welcome(c, 7, 0, 1000, 2);
  CHECK(c.take_ino(&ino));
  CHECK(ino == 1000);
  CHECK(c.take_ino(&ino));
  CHECK(ino == 1001);
  CHECK_FALSE(c.take_ino(&ino));  // used up: the caller goes synchronous

  // A refill rides on any reply.
  uint64_t tid = submit_getattr(c, 5);
  c.flush_batch();
  capnp::MallocMessageBuilder m;
  auto r = m.initRoot<fsproto::Reply>();
  r.setTid(tid);
  r.setSafe(true);
  r.initDelegated().setFirst(5000);
  r.getDelegated().setCount(10);
  auto b = flat(m);
  c.on_message(fsproto::MSG_REPLY, b.data(), b.size() * sizeof(capnp::word));
  CHECK(c.take_ino(&ino));
  CHECK(ino == 5000);
  CHECK(c.stats().delegated_left == 9);

  // A new Welcome (a failover) takes back what an older MDS gave.
  welcome(c, 7, tid, 9000, 1);
  CHECK(c.take_ino(&ino));
  CHECK(ino == 9000);
  CHECK_FALSE(c.take_ino(&ino));
}

TEST_CASE("async: submitted requests leave in Batches, full or after the delay, before any call") {
  FakeTransport t;
  MdsClient c(t, async_settings(/*batch_max=*/3, /*delay_us=*/200000), MdsHandlers{});
  c.on_connected();
  welcome(c, 7, 0, 1000, 100);
  // Full: three go at once.
  for (uint64_t i = 0; i < 3; ++i) submit_getattr(c, 10 + i);
  CHECK(batch_tids(t.wait(1)) == std::vector<uint64_t>{1, 2, 3});
  // A call sends what is queued first, then itself: the MDS keeps order.
  submit_getattr(c, 20);
  auto f = call_async(c, 30);
  CHECK(batch_tids(t.wait(2)) == std::vector<uint64_t>{4});
  CHECK(request(t.wait(3)).getTid() == 5);
  reply(c, 5, true);
  CHECK(f.get() == 5);
  // Alone, a request waits for the delay (0.2 s here), no longer.
  auto t0 = std::chrono::steady_clock::now();
  submit_getattr(c, 40);
  CHECK(batch_tids(t.wait(4)) == std::vector<uint64_t>{6});
  CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(150));
  CHECK(c.stats().batches == 3);
  CHECK(c.stats().round_trips == 1);  // only the call waited
}

TEST_CASE("async: wait_safe waits for safe replies; a refusal is reported once") {
  FakeTransport t;
  std::vector<uint64_t> seen;
  MdsHandlers h;
  h.on_async_reply = [&](std::shared_ptr<ReceivedMessage> m) {
    seen.push_back(m->root<fsproto::Reply>().getTid());
  };
  MdsClient c(t, async_settings(), h);
  c.on_connected();
  welcome(c, 7, 0, 1000, 100);
  uint64_t a = submit_getattr(c, 1), b = submit_getattr(c, 2);
  CHECK(c.last_submitted() == b);
  CHECK(c.wait_safe(b, 20) == -ETIMEDOUT);
  reply(c, a, true);
  CHECK(c.wait_safe(a, 20) == 0);
  CHECK(c.wait_safe(b, 20) == -ETIMEDOUT);
  auto waiter = std::async(std::launch::async, [&] { return c.wait_safe(b, 5000); });
  reply(c, b, true, -EEXIST);
  CHECK(waiter.get() == 0);
  CHECK(seen == std::vector<uint64_t>{a, b});
  std::string why;
  CHECK(c.take_async_error(&why) == -EEXIST);
  CHECK(c.take_async_error(&why) == 0);
  CHECK(c.stats().async_failed == 1);
  CHECK(c.stats().async_unsafe == 0);
  CHECK(c.kept_tids().empty());
}

TEST_CASE("async: after a failover, submitted requests not yet safe are replayed one by one") {
  FakeTransport t;
  MdsClient c(t, async_settings(/*batch_max=*/2), MdsHandlers{});
  c.on_connected();
  welcome(c, 7, 0, 1000, 100);
  submit_getattr(c, 1);
  submit_getattr(c, 2);  // batch {1, 2} sent
  CHECK(batch_tids(t.wait(1)) == std::vector<uint64_t>{1, 2});
  submit_getattr(c, 3);  // queued, not sent
  c.on_disconnected();
  c.on_connected();  // Hello again
  CHECK(t.wait(2).type == fsproto::MSG_HELLO);
  welcome(c, 7, /*committed=*/1);
  // None was answered: all go again as Requests, in order, as replays
  // (the MDS answers the committed 1 from its record).
  auto r1 = request(t.wait(3));
  auto r2 = request(t.wait(4));
  auto r3 = request(t.wait(5));
  CHECK(r1.getTid() == 1);
  CHECK(r2.getTid() == 2);
  CHECK(r2.getReplay());
  CHECK(r3.getTid() == 3);
  c.flush_batch();  // nothing queued twice
  CHECK(t.count() == 6);
  reply(c, 1, true);
  reply(c, 2, true);
  reply(c, 3, true);
  CHECK(c.wait_safe(3, 1000) == 0);
}

// Regression: with a batch queued when the connection dropped, the
// flusher spun holding the client's lock and the reconnect never got in.
TEST_CASE("async: a batch queued across a disconnect does not keep the reconnect out") {
  FakeTransport t;
  MdsClient c(t, async_settings(/*batch_max=*/64, /*delay_us=*/1000), MdsHandlers{});
  c.on_connected();
  welcome(c, 7, 0, 1000, 100);
  submit_getattr(c, 1);
  c.on_disconnected();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // past the delay
  auto reconnect = std::async(std::launch::async, [&] {
    c.on_connected();
    welcome(c, 7, 0);
  });
  REQUIRE(reconnect.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
  // Sent once: as a Request after the Welcome, or in the Batch before the drop.
  size_t sent = 0;
  for (size_t i = 0; i < t.count(); ++i) {
    Sent s = t.wait(i);
    if (s.type == fsproto::MSG_REQUEST) sent++;
    if (s.type == fsproto::MSG_BATCH) sent += s.msg->root<fsproto::Batch>().getRequests().size();
  }
  CHECK(sent >= 1);
}

// An asynchronous setattr of ino (owner 42 where the mask says so).
static uint64_t submit_setattr(MdsClient &c, uint64_t ino, uint32_t mask, uint32_t mode,
                               int64_t mtime = 0) {
  return c.submit([&](fsproto::Request::Builder b) {
    auto a = b.initSetattr();
    a.setIno(ino);
    auto x = a.initAttr();
    x.setMask(mask);
    x.setMode(mode);
    x.setUid(42);
    x.initMtime().setSec(mtime);
  });
}

TEST_CASE("async: adjacent setattrs of one inode go as one, unless a chown follows a chmod") {
  using SA = fsproto::SetAttr;
  FakeTransport t;
  MdsClient c(t, async_settings(/*batch_max=*/64, /*delay_us=*/100000), MdsHandlers{});
  c.on_connected();
  welcome(c, 7, 0, 1000, 100);
  auto setattr = [&](uint64_t ino, uint32_t mask, uint32_t mode, int64_t mtime) {
    return submit_setattr(c, ino, mask, mode, mtime);
  };
  uint64_t t1 = setattr(5, SA::MASK_MTIME, 0, 100);
  uint64_t t2 = setattr(5, SA::MASK_UID, 0, 0);       // chown: merged
  uint64_t t3 = setattr(5, SA::MASK_MODE, 04755, 0);  // chmod after it: merged
  uint64_t t4 = setattr(5, SA::MASK_UID, 0, 0);       // chown after a chmod: not
  uint64_t t5 = setattr(6, SA::MASK_MTIME, 0, 200);   // another inode: not
  CHECK(t1 == t2);
  CHECK(t2 == t3);
  CHECK(t4 != t3);
  CHECK(t5 != t4);
  c.flush_batch();
  auto reqs = t.wait(1).msg->root<fsproto::Batch>().getRequests();
  REQUIRE(reqs.size() == 3);
  auto a = reqs[0].getSetattr().getAttr();
  CHECK(a.getMask() == (SA::MASK_MTIME | SA::MASK_UID | SA::MASK_MODE));
  CHECK(a.getMode() == 04755);
  CHECK(a.getUid() == 42);
  CHECK(a.getMtime().getSec() == 100);
  CHECK(reqs[1].getSetattr().getAttr().getMask() == SA::MASK_UID);
  CHECK(reqs[2].getSetattr().getIno() == 6);
  CHECK(c.stats().async_merged == 2);
}

TEST_CASE("async: a chmod after a chown that kills set-id bits goes along, without the kill") {
  using SA = fsproto::SetAttr;
  FakeTransport t;
  MdsClient c(t, async_settings(/*batch_max=*/64, /*delay_us=*/100000), MdsHandlers{});
  c.on_connected();
  welcome(c, 7, 0, 1000, 100);
  auto setattr = [&](uint32_t mask, uint32_t mode) { return submit_setattr(c, 5, mask, mode); };
  // What the kernel sends for tar's fchown and fchmod under KILLPRIV_V2.
  uint64_t t1 = setattr(SA::MASK_UID | SA::MASK_KILL_SUIDGID, 0);
  uint64_t t2 = setattr(SA::MASK_MODE, 04755);
  uint64_t t3 = setattr(SA::MASK_KILL_SUIDGID, 0);  // a write's kill after the chmod: kept
  CHECK(t1 == t2);
  CHECK(t2 == t3);
  c.flush_batch();
  auto reqs = t.wait(1).msg->root<fsproto::Batch>().getRequests();
  REQUIRE(reqs.size() == 1);
  auto a = reqs[0].getSetattr().getAttr();
  // The MDS applies owner, mode, kill: the chmod's set-uid bit goes only
  // through the later kill, as it would have one request at a time.
  CHECK(a.getMask() == (SA::MASK_UID | SA::MASK_MODE | SA::MASK_KILL_SUIDGID));
  CHECK(a.getMode() == 04755);
}

TEST_CASE("async: setattrs of a new file fold into its create while the batch is unsent") {
  using SA = fsproto::SetAttr;
  FakeTransport t;
  MdsClient c(t, async_settings(/*batch_max=*/64, /*delay_us=*/100000), MdsHandlers{});
  c.on_connected();
  const bool create_then = GENERATE(false, true);
  welcome(c, 7, 0, 1000, 100, create_then);
  auto create = [&](uint64_t parent, uint64_t ino, bool exclusive) {
    return submit_create(c, {.ino = ino, .parent = parent, .exclusive = exclusive});
  };
  auto setattr = [&](uint64_t ino, uint32_t mask, uint32_t mode, int64_t sec) {
    return c.submit([&](fsproto::Request::Builder b) {
      b.initCaller().setUid(0);
      b.initTime().setSec(sec);
      auto a = b.initSetattr();
      a.setIno(ino);
      auto x = a.initAttr();
      x.setMask(mask);
      x.setMode(mode);
      x.setUid(7);
      x.initMtime().setSec(sec);
      x.initCtime().setSec(sec);
    });
  };
  uint64_t c1 = create(1, 1000, true);
  uint64_t c2 = create(1, 1001, true);  // another file in the same directory
  uint64_t s1 = setattr(1000, SA::MASK_UID | SA::MASK_CTIME, 0, 60);  // past c2: folds
  uint64_t s2 = setattr(1000, SA::MASK_MODE | SA::MASK_CTIME, 0600, 61);
  uint64_t c3 = create(1000, 1002, true);  // inside 1000 (a directory, then)
  uint64_t s3 = setattr(1000, SA::MASK_MODE | SA::MASK_CTIME, 0700, 62);  // not past c3
  uint64_t c4 = create(1, 1003, false);  // not exclusive: never folded into
  uint64_t s4 = setattr(1003, SA::MASK_MODE | SA::MASK_CTIME, 0600, 63);
  uint64_t c5 = create(1, 1004, true);
  uint64_t s5 =
      setattr(1004, SA::MASK_MTIME_NOW | SA::MASK_CTIME, 0, 64);  // "now": not in a create
  CHECK(c1 != c2);
  CHECK(s3 != c1);
  CHECK(c3 != c1);
  CHECK(s4 != c4);
  CHECK(s5 != c5);
  c.flush_batch();
  auto reqs = t.wait(1).msg->root<fsproto::Batch>().getRequests();
  if (!create_then) {
    // An MDS that does not take Create.then: s1 and s2 merge with each other only.
    CHECK(s1 == s2);
    CHECK(s1 != c1);
    REQUIRE(reqs.size() == 9);
    return;
  }
  CHECK(s1 == c1);
  CHECK(s2 == c1);
  REQUIRE(reqs.size() == 8);
  auto then = reqs[0].getCreate().getThen();
  CHECK(then.getMask() == (SA::MASK_UID | SA::MASK_MODE | SA::MASK_CTIME));
  CHECK(then.getUid() == 7);
  CHECK(then.getMode() == 0600);
  CHECK(then.getCtime().getSec() == 61);
  CHECK(reqs[0].getTime().getSec() == 50);  // the create's own time stays
  CHECK(reqs[1].getCreate().getThen().getMask() == 0);
  CHECK(reqs[3].getSetattr().getIno() == 1000);
  CHECK(reqs[3].getSetattr().getAttr().getMode() == 0700);
}

TEST_CASE(
    "async: the MDS's word that the cluster is full holds until a reply says otherwise, and "
    "its ENOSPC is kept for the next fsync") {
  FakeTransport t;
  MdsClient c(t, async_settings(/*batch_max=*/1, /*delay_us=*/1000), MdsHandlers{});
  c.on_connected();
  welcome(c, 7, 0, 1000, 100);
  CHECK_FALSE(c.cluster_full());
  uint64_t t1 = submit_getattr(c, 1);
  reply(c, t1, true, -ENOSPC, /*full=*/true);
  CHECK(c.cluster_full());
  std::string why;
  CHECK(c.take_async_error(&why) == -ENOSPC);
  uint64_t t2 = submit_getattr(c, 2);
  reply(c, t2, true, 0, /*full=*/false);
  CHECK_FALSE(c.cluster_full());
}

TEST_CASE("async: a small file's size report goes into its create while that is unsent") {
  using SA = fsproto::SetAttr;
  FakeTransport t;
  MdsClient c(t, async_settings(/*batch_max=*/64, /*delay_us=*/100000), MdsHandlers{});
  c.on_connected();
  welcome(c, 7, 0, 1000, 100, /*create_then=*/true);
  auto create = [&](uint64_t ino, uint32_t uid, bool inline_data) {
    return submit_create(c, {.ino = ino, .uid = uid, .sec = 0, .inline_data = inline_data});
  };
  auto report = [&](uint64_t ino) {
    return c.submit([&](fsproto::Request::Builder b) {
      b.initCaller();
      b.initTime().setSec(70);
      auto a = b.initSetattr();
      a.setIno(ino);
      auto x = a.initAttr();
      x.setMask(SA::MASK_SIZE | SA::MASK_INLINE | SA::MASK_CTIME);
      x.setSize(2);
      x.setDataInline(true);
      x.setInlineData(capnp::Data::Reader(reinterpret_cast<const capnp::byte *>("hi"), 2));
      x.initCtime().setSec(70);
    });
  };
  uint64_t root_inline = create(1000, 0, true);
  uint64_t root_objects = create(1001, 0, false);
  uint64_t user = create(1002, 1000, true);
  CHECK(c.create_unsent(root_inline));
  CHECK(c.create_unsent(root_objects));
  CHECK_FALSE(c.create_unsent(user));  // a user's size report checks permissions: not folded
  CHECK(report(1000) == root_inline);
  CHECK(report(1001) != root_objects);  // inline bytes into a create in objects: no
  c.flush_batch();
  CHECK_FALSE(c.create_unsent(root_inline));  // sent
  auto reqs = t.wait(1).msg->root<fsproto::Batch>().getRequests();
  REQUIRE(reqs.size() == 4);
  auto then = reqs[0].getCreate().getThen();
  CHECK(then.getMask() == (SA::MASK_SIZE | SA::MASK_INLINE | SA::MASK_CTIME));
  CHECK(then.getSize() == 2);
  CHECK(then.getInlineData().size() == 2);
  CHECK(reqs[3].which() == fsproto::Request::SETATTR);
}

TEST_CASE(
    "async: after a takeover by an MDS without Create.then, folded setattrs go on their own") {
  using SA = fsproto::SetAttr;
  WelcomedClient w(/*create_then=*/true);
  auto &t = w.t;
  auto &c = w.c;
  uint64_t created = submit_create(c, {.ino = 1000, .inline_data = true});
  uint64_t folded = c.submit([&](fsproto::Request::Builder b) {
    b.initCaller().setUid(0);
    b.initTime().setSec(70);
    auto a = b.initSetattr();
    a.setIno(1000);
    auto x = a.initAttr();
    x.setMask(SA::MASK_MODE | SA::MASK_SIZE | SA::MASK_INLINE | SA::MASK_CTIME);
    x.setMode(0600);
    x.setSize(2);
    x.setDataInline(true);
    x.setInlineData(capnp::Data::Reader(reinterpret_cast<const capnp::byte *>("hi"), 2));
    x.initCtime().setSec(70);
  });
  REQUIRE(folded == created);
  uint64_t later = submit_getattr(c, 1);
  c.flush_batch();  // sent, never answered
  CHECK(t.wait(1).msg->root<fsproto::Batch>().getRequests()[0].getCreate().getThen().getMask() !=
        0);
  c.on_disconnected();
  c.on_connected();
  CHECK(t.wait(2).type == fsproto::MSG_HELLO);
  welcome(c, 7, 0, 2000, 100, /*create_then=*/false);
  // The create without its `then`, its setattr right after it (a new tid),
  // then the rest in order; nothing twice.
  auto r1 = request(t.wait(3));
  auto r2 = request(t.wait(4));
  auto r3 = request(t.wait(5));
  CHECK(r1.getTid() == created);
  CHECK(r1.getCreate().getThen().getMask() == 0);
  REQUIRE(r2.which() == fsproto::Request::SETATTR);
  CHECK(r2.getTid() > later);
  CHECK(r2.getSetattr().getIno() == 1000);
  CHECK(r2.getSetattr().getAttr().getMode() == 0600);
  CHECK(r2.getSetattr().getAttr().getInlineData().size() == 2);
  CHECK(r2.getTime().getSec() == 70);
  CHECK(r3.getTid() == later);
  c.flush_batch();
  CHECK(t.count() == 6);
  // It counts as submitted last: what waits for everything waits for it.
  reply(c, created, true);
  reply(c, later, true);
  CHECK(c.wait_safe(c.last_submitted(), 50) != 0);
  CHECK(c.last_submitted() == r2.getTid());
  reply(c, r2.getTid(), true);
  CHECK(c.wait_safe(r2.getTid(), 1000) == 0);
}

static capnp::Data::Reader name_bytes(const char *n) {
  return capnp::Data::Reader(reinterpret_cast<const capnp::byte *>(n), std::strlen(n));
}

// An asynchronous rename by root at second 80, out of directory 1; `free`:
// the new name is known missing.
static uint64_t submit_rename(MdsClient &c, const char *from, uint64_t new_parent, const char *to,
                              bool free) {
  return c.submit(
      [&](fsproto::Request::Builder b) {
        b.initCaller().setUid(0);
        b.initTime().setSec(80);
        auto r = b.initRename();
        r.setParent(1);
        r.setName(name_bytes(from));
        r.setNewParent(new_parent);
        r.setNewName(name_bytes(to));
      },
      free);
}

TEST_CASE("async: a file renamed to a free name right after its unsent create is made there") {
  using SA = fsproto::SetAttr;
  const bool create_then = GENERATE(false, true);
  WelcomedClient w(create_then);
  auto &t = w.t;
  auto &c = w.c;
  auto name = name_bytes;
  auto create = [&](uint64_t ino, const char *n) {
    return submit_create(c, {.ino = ino, .name = n});
  };
  auto rename = [&](const char *from, uint64_t new_parent, const char *to, bool free) {
    return submit_rename(c, from, new_parent, to, free);
  };
  uint64_t c1 = create(1000, ".a.tmp");
  uint64_t r1 = rename(".a.tmp", 1, "a", /*free=*/true);
  uint64_t c2 = create(1001, ".b.tmp");
  uint64_t r2 = rename(".b.tmp", 1, "b", /*free=*/false);  // "b" may exist: a rename
  uint64_t c3 = create(1002, ".c.tmp");
  uint64_t r3 = rename(".c.tmp", 2, "c", /*free=*/true);  // another directory: a rename
  uint64_t c4 = create(1003, ".d.tmp");
  uint64_t c5 = create(1004, ".e.tmp");
  uint64_t r4 = rename(".d.tmp", 1, "d", /*free=*/true);  // not the last request: a rename
  CHECK(r2 != c2);
  CHECK(r3 != c3);
  CHECK(r4 != c4);
  CHECK(c5 != c4);
  c.flush_batch();
  auto reqs = t.wait(1).msg->root<fsproto::Batch>().getRequests();
  if (!create_then) {
    CHECK(r1 != c1);
    CHECK(reqs.size() == 9);
    return;
  }
  CHECK(r1 == c1);
  REQUIRE(reqs.size() == 8);
  auto made = reqs[0].getCreate();
  CHECK(made.getName() == name("a"));
  CHECK(reqs[0].getTime().getSec() == 80);  // the directory's times: the rename's
  auto then = made.getThen();
  CHECK(then.getMask() == (SA::MASK_ATIME | SA::MASK_MTIME | SA::MASK_CTIME));
  CHECK(then.getAtime().getSec() == 50);  // the file's own: the create's
  CHECK(then.getMtime().getSec() == 50);
  CHECK(then.getCtime().getSec() == 80);
  CHECK(reqs[2].which() == fsproto::Request::RENAME);
}

TEST_CASE(
    "async: a rename folds into its create past setattrs of other files, not of its directory") {
  using SA = fsproto::SetAttr;
  WelcomedClient w(/*create_then=*/true);
  auto &c = w.c;
  auto create = [&](uint64_t ino, const char *n) {
    return submit_create(c, {.ino = ino, .name = n});
  };
  // An earlier file's size report, sent when its write-out ended.
  uint64_t c1 = create(1000, ".a.tmp");
  uint64_t s1 = submit_setattr(c, 900, SA::MASK_MODE, 0600);
  uint64_t r1 = submit_rename(c, ".a.tmp", 1, "a", /*free=*/true);
  // The directory's: its times must end as the rename left them.
  uint64_t c2 = create(1001, ".b.tmp");
  submit_setattr(c, 1, SA::MASK_MODE, 0755);
  uint64_t r2 = submit_rename(c, ".b.tmp", 1, "b", /*free=*/true);
  // The new file's own, by another caller (it could not go into the
  // create): its ctime must end as the rename left it.
  uint64_t c3 = create(1002, ".c.tmp");
  c.submit([&](fsproto::Request::Builder b) {
    b.initCaller().setUid(7);
    auto a = b.initSetattr();
    a.setIno(1002);
    a.initAttr().setMask(SA::MASK_ATIME);
  });
  uint64_t r3 = submit_rename(c, ".c.tmp", 1, "c", /*free=*/true);
  CHECK(r1 == c1);
  CHECK(s1 != c1);
  CHECK(r2 != c2);
  CHECK(r3 != c3);
  c.flush_batch();
  auto reqs = w.t.wait(1).msg->root<fsproto::Batch>().getRequests();
  REQUIRE(reqs.size() == 8);
  CHECK(reqs[0].getCreate().getName() == name_bytes("a"));
  CHECK(reqs[0].getCreate().getThen().getCtime().getSec() == 80);
  CHECK(reqs[1].getSetattr().getIno() == 900);
  CHECK(reqs[2].getCreate().getName() == name_bytes(".b.tmp"));
  CHECK(reqs[4].which() == fsproto::Request::RENAME);
  CHECK(reqs[5].getCreate().getName() == name_bytes(".c.tmp"));
  CHECK(reqs[7].which() == fsproto::Request::RENAME);
}

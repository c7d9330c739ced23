// Messenger figures on 127.0.0.1, two Messengers in one process:
//   1. round trip of a 4 KiB message (4 KiB data segment + small payload)
//      echoed by the server: ping-pong driven from the client's handler
//      (the messenger alone) and from a caller thread that blocks for each
//      reply (what a synchronous client sees: adds a thread wake-up);
//   2. MB/s of 4 MiB data segments sent with a window of in-flight
//      messages, each acknowledged by a small reply.
// Usage: strata-msg-bench [--rtt N] [--bulk N] [--window W] [--io-threads T]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "msg/message_types.h"
#include "msg/messenger.h"
#include "msg/schema/wire.capnp.h"
#include "msg/wire_codec.h"

using namespace strata::msg;
using Clock = std::chrono::steady_clock;

namespace {

Message ping(uint64_t seq, std::string data) {
  capnp::MallocMessageBuilder b;
  auto hb = b.initRoot<strata::wire::Heartbeat>();
  hb.setStampNs(seq);
  std::vector<std::string> segs;
  if (!data.empty()) segs.push_back(std::move(data));
  return make_message(kMsgHeartbeat, b, std::move(segs));
}

struct Percentiles {
  double p50, p99, mean;
};
Percentiles summarize(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  double sum = 0;
  for (double v : us) sum += v;
  return {us[us.size() / 2], us[std::min(us.size() - 1, us.size() * 99 / 100)], sum / us.size()};
}

}  // namespace

int main(int argc, char **argv) {
  int rtt_n = 20000, bulk_n = 100, window = 4, io_threads = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    int v = std::atoi(argv[i + 1]);
    if (a == "--rtt") rtt_n = v;
    else if (a == "--bulk") bulk_n = v;
    else if (a == "--window") window = v;
    else if (a == "--io-threads") io_threads = v;
    else {
      std::fprintf(stderr, "usage: %s [--rtt N] [--bulk N] [--window W] [--io-threads T]\n", argv[0]);
      return 2;
    }
  }
  strata::Logger log(STRATA_LOG_WARN);
  const std::string key(32, 'k');
  MessengerOptions opts;
  opts.io_threads = io_threads;
  opts.max_data = 64u << 20;

  // Server: echoes small messages, acknowledges big ones with an empty reply.
  Messenger server("osd.0", std::string(32, 's'),
                   [&](const std::string &e) -> std::optional<std::string> {
                     if (e == "client.bench") return key;
                     return std::nullopt;
                   },
                   log, opts);
  Handlers sh;
  sh.on_message = [](const ConnectionRef &c, Message &&m) {
    if (!m.segments.empty() && m.segments[0].size() > (1u << 20)) m.segments.clear();
    c->send(std::move(m));
  };
  server.set_handlers(sh);
  auto addr = server.listen("127.0.0.1", 0);
  if (!addr.ok()) {
    std::fprintf(stderr, "listen: %s\n", addr.status().ToString().c_str());
    return 1;
  }
  server.start();

  // Client: what happens on a reply depends on the phase.
  std::mutex mu;
  std::condition_variable cv;
  std::atomic<int> phase{0};
  std::atomic<long> replies{0};
  Clock::time_point sent_at;
  std::vector<double> handler_rtts;
  handler_rtts.reserve(rtt_n);
  std::string payload4k(4096, 'x');
  Handlers ch;
  ch.on_message = [&](const ConnectionRef &c, Message &&) {
    long n = ++replies;
    if (phase == 1) {  // handler-driven ping-pong
      auto now = Clock::now();
      handler_rtts.push_back(std::chrono::duration<double, std::micro>(now - sent_at).count());
      if (n < rtt_n) {
        sent_at = Clock::now();
        c->send(ping(n, payload4k));
        return;
      }
    }
    std::lock_guard lk(mu);
    cv.notify_all();
  };
  Messenger client("client.bench", key, nullptr, log, opts);
  client.set_handlers(ch);
  client.start();
  auto conn_r = client.connect(addr.value());
  if (!conn_r.ok()) {
    std::fprintf(stderr, "connect: %s\n", conn_r.status().ToString().c_str());
    return 1;
  }
  ConnectionRef conn = conn_r.value();

  // Warm up.
  phase = 0;
  for (int i = 0; i < 1000; ++i) {
    long want = replies + 1;
    conn->send(ping(i, payload4k));
    std::unique_lock lk(mu);
    cv.wait(lk, [&] { return replies >= want; });
  }

  // 1a. Handler-driven ping-pong.
  replies = 0;
  phase = 1;
  sent_at = Clock::now();
  conn->send(ping(0, payload4k));
  {
    std::unique_lock lk(mu);
    cv.wait(lk, [&] { return replies >= rtt_n; });
  }
  auto h = summarize(handler_rtts);
  std::printf("4 KiB round trip, handler-driven:   p50 %.1f us  p99 %.1f us  mean %.1f us  (%d)\n",
              h.p50, h.p99, h.mean, rtt_n);

  // 1b. A caller thread blocking on each reply.
  phase = 2;
  replies = 0;
  std::vector<double> caller_rtts;
  caller_rtts.reserve(rtt_n);
  for (int i = 0; i < rtt_n; ++i) {
    auto t0 = Clock::now();
    conn->send(ping(i, payload4k));
    std::unique_lock lk(mu);
    cv.wait(lk, [&] { return replies >= i + 1; });
    caller_rtts.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  auto c = summarize(caller_rtts);
  std::printf("4 KiB round trip, blocking caller:  p50 %.1f us  p99 %.1f us  mean %.1f us  (%d)\n",
              c.p50, c.p99, c.mean, rtt_n);

  // 2. Bulk: 4 MiB segments, `window` in flight.
  if (bulk_n > 0) {
    phase = 3;
    replies = 0;
    std::string big(4u << 20, 'b');
    auto t0 = Clock::now();
    for (int i = 0; i < bulk_n; ++i) {
      std::unique_lock lk(mu);
      cv.wait(lk, [&] { return i - replies < window; });
      lk.unlock();
      conn->send(ping(i, big));
    }
    std::unique_lock lk(mu);
    cv.wait(lk, [&] { return replies >= bulk_n; });
    double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    std::printf("4 MiB segments, window %d:          %.0f MB/s  (%d messages, %.2f s)\n", window,
                bulk_n * 4.194304 / secs, bulk_n, secs);
  }
  client.stop();
  server.stop();
  return 0;
}

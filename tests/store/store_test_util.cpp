#include "store_test_util.h"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>

#include "child_process.h"
#include "test_env.h"

namespace strata::testing {

namespace {

constexpr uint64_t kReady = 0;
constexpr uint64_t kDone = UINT64_MAX;

// writer DIR FROM TO CHECKPOINT_MS LARGE_PCT CLONE_PCT TAIL_BYTES
int writer_main(const std::vector<std::string> &args) {
  if (args.size() != 7) {
    std::fprintf(stderr, "writer: DIR FROM TO CHECKPOINT_MS LARGE_PCT CLONE_PCT TAIL_BYTES\n");
    return 2;
  }
  const uint64_t from = std::stoull(args[1]), to = std::stoull(args[2]);
  const uint64_t ckpt = std::stoull(args[3]);
  const uint32_t large_pct = static_cast<uint32_t>(std::stoul(args[4]));
  const uint32_t clone_pct = static_cast<uint32_t>(std::stoul(args[5]));
  const uint64_t tail = std::stoull(args[6]);
  store::StoreSettings settings;
  settings.checkpoint_interval_ms = static_cast<int64_t>(ckpt);
  if (ckpt >= 1'000'000) {
    settings.checkpoint_fill_pct = 100;
    settings.throttle_fill_pct = 100;
  }
  auto opened = store::Store::open(registry(), args[0], settings, child_logger());
  if (!opened.ok()) {
    std::fprintf(stderr, "writer: %s\n", opened.status().ToString().c_str());
    return 3;
  }
  std::unique_ptr<store::Store> s = std::move(*opened);
  report(kReady);

  TxnGenerator gen(writer_gen_config(large_pct, clone_pct));
  std::mutex mu;
  std::condition_variable cv;
  int in_flight = 0;
  bool failed = false;
  auto submit = [&](uint64_t k, store::Transaction t) {
    std::unique_lock lk(mu);
    cv.wait(lk, [&] { return in_flight < 8; });
    ++in_flight;
    lk.unlock();
    Status st = s->queue(std::move(t), [&, k](const Status &r) {
      if (r.ok()) report(k);
      std::lock_guard g(mu);
      if (!r.ok()) {
        std::fprintf(stderr, "writer: txn %llu: %s\n", static_cast<unsigned long long>(k),
                     r.ToString().c_str());
        failed = true;
      }
      --in_flight;
      cv.notify_all();
    });
    if (!st.ok()) {
      std::fprintf(stderr, "writer: queue %llu: %s\n", static_cast<unsigned long long>(k),
                   st.ToString().c_str());
      std::lock_guard g(mu);
      failed = true;
      --in_flight;
    }
  };
  for (uint64_t k = from; k <= to; ++k) submit(k, gen.txn(k));
  if (tail > 0) {
    std::unique_lock lk(mu);
    cv.wait(lk, [&] { return in_flight == 0; });
    lk.unlock();
    submit(to + 1, tail_txn(tail));
  }
  std::unique_lock lk(mu);
  cv.wait(lk, [&] { return in_flight == 0; });
  if (failed) ::_exit(4);
  report(kDone);
  std::fflush(stderr);
  ::_exit(0);  // no close(): the store is left as a crash would leave it
}
STRATA_CHILD_MODE("writer", writer_main);

}  // namespace

store::Transaction tail_txn(uint64_t bytes) {
  store::Transaction t;
  t.omap_set(kCounterCollection, kCounterObject, kTailKey, pattern_bytes(4242, bytes));
  return t;
}

GenConfig writer_gen_config(uint32_t large_pct, uint32_t clone_pct) {
  GenConfig c;
  c.large_pct = large_pct;
  c.clone_pct = clone_pct;
  return c;
}

std::vector<uint64_t> run_writer(const WriterRun &w) {
  auto spawned = ChildProcess::spawn(
      "writer", {w.dir, std::to_string(w.from), std::to_string(w.to),
                 std::to_string(w.checkpoint_interval_ms), std::to_string(w.large_pct),
                 std::to_string(w.clone_pct), std::to_string(w.tail_bytes)});
  INFO(spawned.status().ToString());
  REQUIRE(spawned.ok());
  ChildProcess child = std::move(*spawned);
  std::vector<uint64_t> reports;
  child.read_remaining(reports);
  int status = child.wait();
  INFO("writer " << describe_wait_status(status));
  REQUIRE(status == 0);
  std::vector<uint64_t> acks;
  bool done = false;
  for (uint64_t k : reports) {
    if (k == kDone)
      done = true;
    else if (k != kReady)
      acks.push_back(k);
  }
  REQUIRE(done);
  REQUIRE(acks.size() == w.to - w.from + 1 + (w.tail_bytes ? 1 : 0));
  return acks;
}

std::vector<uint64_t> find_txn_records(const std::string &b) {
  std::vector<uint64_t> out;
  size_t pos = 0;
  while ((pos = b.find("STX1", pos)) != std::string::npos) {
    if (pos + 12 <= b.size()) {
      uint32_t n_ops, type;
      std::memcpy(&n_ops, b.data() + pos + 4, 4);
      std::memcpy(&type, b.data() + pos + 8, 4);
      bool known = (type >= STRATA_OP_MKCOLL && type <= STRATA_OP_RMCOLL) ||
                   (type >= STRATA_OP_TOUCH && type <= STRATA_OP_REMOVE) ||
                   type == STRATA_OP_SETXATTR || type == STRATA_OP_RMXATTR ||
                   (type >= STRATA_OP_OMAP_SET && type <= STRATA_OP_OMAP_RM_RANGE) ||
                   type == STRATA_OP_CLONE || type == STRATA_OP_WRITE_STAGED;
      if (n_ops >= 1 && n_ops <= 256 && known) out.push_back(pos);
    }
    pos += 4;
  }
  return out;
}

std::string read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  INFO("reading " << path);
  REQUIRE(in.good());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file_at(const std::string &path, uint64_t offset, const std::string &bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  INFO("opening " << path << ": " << std::strerror(errno));
  REQUIRE(fd >= 0);
  ssize_t n = ::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset));
  REQUIRE(n == static_cast<ssize_t>(bytes.size()));
  REQUIRE(::fsync(fd) == 0);
  ::close(fd);
}

}  // namespace strata::testing

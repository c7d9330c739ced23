// The acknowledgement counting of a replicated write (osd/rep_write.h): each
// copy counted once, unknown senders and failures not at all, exactly one
// ack completing the count and exactly one party claiming the reply, also
// when acks race on several threads.
#include "osd/rep_write.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>
#include <vector>

using namespace strata::osd;
using Ack = CopyAcks::Ack;

TEST_CASE("a write's copies are each counted once and the last one completes the count") {
  CopyAcks acks({3, 5});
  CHECK_FALSE(acks.complete());
  CHECK(acks.replica(3, 0) == Ack::kCounted);
  CHECK(acks.replica(3, 0) == Ack::kDuplicate);  // a resent reply
  CHECK(acks.replica(9, 0) == Ack::kUnknownReplica);
  CHECK(acks.replica(5, -EIO) == Ack::kFailed);  // not counted: osd.5 still owes its copy
  CHECK(acks.local() == Ack::kCounted);
  CHECK_FALSE(acks.complete());
  CHECK(acks.replica(5, 0) == Ack::kLast);
  CHECK(acks.complete());
  CHECK(acks.local() == Ack::kDuplicate);
  CHECK(acks.replica(5, 0) == Ack::kDuplicate);
}

TEST_CASE("a write with no replicas is complete with its local commit") {
  CopyAcks acks({});
  CHECK(acks.replica(1, 0) == Ack::kUnknownReplica);
  CHECK_FALSE(acks.complete());
  CHECK(acks.local() == Ack::kLast);
  CHECK(acks.complete());
}

TEST_CASE("more replicas than bits in a word are counted too") {
  std::vector<int32_t> replicas;
  for (int32_t i = 1; i <= 40; ++i) replicas.push_back(i);
  CopyAcks acks(replicas);
  CHECK(acks.local() == Ack::kCounted);
  for (int32_t i = 1; i < 40; ++i) CHECK(acks.replica(i, 0) == Ack::kCounted);
  CHECK(acks.replica(33, 0) == Ack::kDuplicate);
  CHECK(acks.replica(40, 0) == Ack::kLast);
}

TEST_CASE("acks racing on several threads complete the count exactly once") {
  const std::vector<int32_t> replicas{1, 2, 3, 4, 5, 6};
  for (int round = 0; round < 200; ++round) {
    CopyAcks acks(replicas);
    std::atomic<int> last{0}, counted{0}, duplicate{0};
    std::vector<std::thread> threads;
    // Every thread acks every copy (the local one as well): all but one ack
    // of each copy are duplicates.
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        for (size_t k = 0; k <= replicas.size(); ++k) {
          size_t i = (k + static_cast<size_t>(t)) % (replicas.size() + 1);
          Ack a = i == replicas.size() ? acks.local() : acks.replica(replicas[i], 0);
          if (a == Ack::kLast)
            last++;
          else if (a == Ack::kCounted)
            counted++;
          else if (a == Ack::kDuplicate)
            duplicate++;
        }
      });
    for (auto &t : threads) t.join();
    REQUIRE(last == 1);
    REQUIRE(counted == static_cast<int>(replicas.size()));
    REQUIRE(duplicate == 3 * static_cast<int>(replicas.size() + 1));
    REQUIRE(acks.complete());
  }
}

TEST_CASE("the reply is claimed once, by the last ack or by the PG abandoning the write") {
  for (int round = 0; round < 200; ++round) {
    RepWrite w({1, 2});
    std::atomic<int> claims{0};
    std::vector<std::thread> threads;
    // Two replica acks and the local commit race; whoever completes the
    // count claims; an interval change tries to abandon at the same time.
    threads.emplace_back([&] {
      if (w.acks.replica(1, 0) == Ack::kLast && w.claim()) claims++;
    });
    threads.emplace_back([&] {
      if (w.acks.replica(2, 0) == Ack::kLast && w.claim()) claims++;
    });
    threads.emplace_back([&] {
      if (w.acks.local() == Ack::kLast && w.claim()) claims++;
    });
    threads.emplace_back([&] {
      if (w.claim()) claims++;  // the abandoning PG
    });
    for (auto &t : threads) t.join();
    REQUIRE(claims == 1);
    REQUIRE_FALSE(w.claim());
  }
}

TEST_CASE("the write table finds a write by rep tid until it is untracked") {
  RepWriteTable table;
  auto w = std::make_shared<RepWrite>(std::vector<int32_t>{2});
  w->rep_tid = 17;
  CHECK(table.find(17) == nullptr);
  table.track(w);
  CHECK(table.find(17) == w);
  CHECK(table.find(18) == nullptr);
  table.untrack(17);
  CHECK(table.find(17) == nullptr);
}

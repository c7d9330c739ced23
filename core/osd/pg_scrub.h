// The state of a scrub on a primary (internal to the PG): chunks of
// objects in name order; while a chunk is compared, writes to it wait.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "osd/pg.h"

namespace strata::osd {

struct Pg::Scrub {
  bool deep = false, repair = false;
  msg::ConnectionRef conn;  // who asked (PgCommand)
  uint64_t tid = 0;
  std::string cursor;      // objects <= cursor are done
  std::string chunk_end;   // the current chunk is (cursor, chunk_end]
  bool chunk_to_end = false;  // ... or (cursor, end of PG)
  bool chunk_active = false;
  bool requests_sent = false;
  uint64_t scan_tid = 0;
  std::map<int32_t, std::vector<ScanItemT>> replies;
  std::set<int32_t> waiting;
  std::deque<std::function<void()>> waiters;  // writes into the chunk
  uint64_t objects = 0;
  struct Bad {
    std::string oid;
    std::vector<int32_t> bad;
    int32_t good = -1;
    std::string why;
  };
  std::vector<Bad> inconsistent;
  bool repairing = false;
  std::set<std::string> to_repair;
  uint64_t repaired = 0;
};

}  // namespace strata::osd

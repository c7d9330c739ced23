// Listing the objects of a pool: one PgListRequest page at a time, PG by PG
// (seed 0 .. pg_num-1), each PG's names in the order its primary returns
// them. The position is a cursor that can be turned into text and back, so
// a listing can resume in another process.
#pragma once

#include <cstdint>
#include <deque>
#include <string>

#include "client/cluster_client.h"
#include "common/status.h"

namespace strata::client {

// Where a listing stands: after object `after` of PG `seed` ("" = at the
// start of that PG).
struct ListCursor {
  uint32_t seed = 0;
  std::string after;
  bool operator==(const ListCursor &) const = default;
};

// "<seed hex>:<name as hex>"; parse_list_cursor("") is the start.
std::string format_list_cursor(const ListCursor &c);
Result<ListCursor> parse_list_cursor(const std::string &text);

class ObjectLister {
 public:
  ObjectLister(ClusterClient &client, uint32_t pool, ListCursor start, uint32_t page_size = 1000);

  // The next name: true and *name set, false at the end. An error leaves
  // the position unchanged (next() may be called again).
  Result<bool> next(std::string *name);
  // The position after the last name next() returned.
  const ListCursor &cursor() const { return cursor_; }

 private:
  ClusterClient &client_;
  uint32_t pool_;
  uint32_t page_size_;
  ListCursor cursor_;        // after the last name handed out
  std::deque<std::string> page_;
  bool page_more_ = true;    // the PG has names after the page
  bool end_ = false;
};

}  // namespace strata::client

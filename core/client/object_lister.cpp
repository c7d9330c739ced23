#include "client/object_lister.h"

#include <cstdlib>

namespace strata::client {

std::string format_list_cursor(const ListCursor &c) {
  static const char kHex[] = "0123456789abcdef";
  char seed[16];
  std::snprintf(seed, sizeof seed, "%x", c.seed);
  std::string out = seed;
  out += ':';
  for (unsigned char ch : c.after) {
    out += kHex[ch >> 4];
    out += kHex[ch & 15];
  }
  return out;
}

Result<ListCursor> parse_list_cursor(const std::string &text) {
  if (text.empty()) return ListCursor{};
  auto bad = [&] { return Status::Error(EINVAL, "bad listing cursor '" + text + "'"); };
  size_t colon = text.find(':');
  if (colon == std::string::npos || colon == 0 || colon > 8) return bad();
  ListCursor c;
  char *end = nullptr;
  std::string seed = text.substr(0, colon);
  unsigned long v = std::strtoul(seed.c_str(), &end, 16);
  if (*end != '\0') return bad();
  c.seed = static_cast<uint32_t>(v);
  std::string hex = text.substr(colon + 1);
  if (hex.size() % 2) return bad();
  auto nibble = [](char ch) -> int {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = nibble(hex[i]), lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) return bad();
    c.after += static_cast<char>(hi << 4 | lo);
  }
  return c;
}

ObjectLister::ObjectLister(ClusterClient &client, uint32_t pool, ListCursor start,
                           uint32_t page_size)
    : client_(client), pool_(pool), page_size_(page_size ? page_size : 1000),
      cursor_(std::move(start)) {}

Result<bool> ObjectLister::next(std::string *name) {
  while (page_.empty()) {
    if (end_) return false;
    auto pool = client_.pool_by_id(pool_);
    if (!pool.ok()) return pool.status();
    if (!page_more_) {
      // This PG is done: on to the next one.
      cursor_ = ListCursor{cursor_.seed + 1, ""};
      page_more_ = true;
    }
    if (cursor_.seed >= pool->pg_num) {
      end_ = true;
      return false;
    }
    auto r = client_.pg_list(pool_, cursor_.seed, cursor_.after, page_size_);
    if (!r.ok()) return r.status();
    if (r->rc < 0) {
      char pg[32];
      std::snprintf(pg, sizeof pg, "%u.%x", pool_, cursor_.seed);
      return Status::Error(r->rc, std::string("listing pg ") + pg + " failed");
    }
    page_.assign(std::make_move_iterator(r->names.begin()),
                 std::make_move_iterator(r->names.end()));
    page_more_ = r->more && !page_.empty();
  }
  *name = std::move(page_.front());
  page_.pop_front();
  cursor_.after = *name;
  return true;
}

}  // namespace strata::client

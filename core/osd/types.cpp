#include "osd/types.h"

#include <charconv>
#include <cstdio>

namespace strata::osd {

std::string coll_name(PgId pg) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "pg.%u.%x", pg.pool, pg.seed);
  return buf;
}

std::optional<PgId> parse_coll_name(std::string_view name) {
  if (name.substr(0, 3) != "pg.") return std::nullopt;
  name.remove_prefix(3);
  size_t dot = name.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == name.size()) return std::nullopt;
  PgId pg;
  auto r1 = std::from_chars(name.data(), name.data() + dot, pg.pool, 10);
  auto r2 = std::from_chars(name.data() + dot + 1, name.data() + name.size(), pg.seed, 16);
  if (r1.ec != std::errc() || r1.ptr != name.data() + dot || r2.ec != std::errc() ||
      r2.ptr != name.data() + name.size())
    return std::nullopt;
  return pg;
}

std::string pg_str(PgId pg) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%u.%x", pg.pool, pg.seed);
  return buf;
}

bool valid_object_name(std::string_view oid) {
  // No NUL: names with one are the OSD's own (object_snaps.h).
  return !oid.empty() && oid.size() <= 4096 && oid != kPgMetaObject &&
         oid.find('\0') == std::string_view::npos;
}

}  // namespace strata::osd

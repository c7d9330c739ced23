#include "filestore/names.h"

#include <cstdio>

namespace strata::filestore {

std::string printable(std::string_view name, size_t max_len) {
  std::string out;
  size_t n = name.size() < max_len ? name.size() : max_len;
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = static_cast<unsigned char>(name[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  if (n < name.size()) out += "...";
  return out;
}

std::string describe_object(std::string_view coll, std::string_view oid) {
  return "object '" + printable(oid) + "' in collection '" + printable(coll) + "'";
}

}  // namespace strata::filestore

#include "store_compare.h"

#include <cstdio>

namespace strata::testing {

std::string printable(const std::string &bytes, size_t max) {
  std::string out = "\"";
  for (size_t i = 0; i < bytes.size() && i < max; ++i) {
    unsigned char ch = static_cast<unsigned char>(bytes[i]);
    if (ch >= 0x20 && ch < 0x7f && ch != '"' && ch != '\\') {
      out += static_cast<char>(ch);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", ch);
      out += buf;
    }
  }
  out += "\"";
  if (bytes.size() > max) out += "... (" + std::to_string(bytes.size()) + " bytes)";
  return out;
}

Result<StoreState> read_store(store::Store &s) {
  StoreState out;
  auto colls = s.list_collections();
  if (!colls.ok()) return colls.status();
  for (const std::string &c : *colls) {
    CollectionState &cs = out.collections[c];
    auto objs = s.list_objects(c);
    if (!objs.ok()) return objs.status();
    for (const std::string &o : *objs) {
      ObjectState &obj = cs[o];
      std::string where = c + "/" + printable(o);
      auto st = s.stat(c, o);
      if (!st.ok()) return st.status().Context("stat of listed object " + where);
      auto data = s.read(c, o);
      if (!data.ok()) return data.status();
      obj.data = std::move(*data);
      if (obj.data.size() != st->size)
        return Status::Error(EIO, where + ": stat says " + std::to_string(st->size) +
                                      " bytes but a read of the whole object returned " +
                                      std::to_string(obj.data.size()));
      auto xattrs = s.getxattrs(c, o);
      if (!xattrs.ok()) return xattrs.status();
      for (auto &[k, v] : *xattrs) {
        if (obj.xattrs.count(k))
          return Status::Error(EIO, where + ": xattr " + printable(k) + " listed twice");
        obj.xattrs[k] = v;
      }
      auto omap = s.omap_list(c, o);
      if (!omap.ok()) return omap.status();
      std::string prev;
      bool first = true;
      for (auto &[k, v] : *omap) {
        if (!first && !(prev < k))
          return Status::Error(EIO, where + ": omap keys out of order: " + printable(prev) +
                                        " then " + printable(k));
        prev = k;
        first = false;
        obj.omap[k] = v;
      }
      auto header = s.omap_get_header(c, o);
      if (!header.ok()) return header.status();
      obj.header = std::move(*header);
    }
  }
  return out;
}

namespace {

template <class Map>
std::string diff_maps(const std::string &where, const std::string &what, const Map &exp,
                      const Map &act) {
  auto e = exp.begin();
  auto a = act.begin();
  while (e != exp.end() || a != act.end()) {
    if (a == act.end() || (e != exp.end() && e->first < a->first))
      return where + ": " + what + " " + printable(e->first) + " missing (expected value " +
             printable(e->second) + ")";
    if (e == exp.end() || a->first < e->first)
      return where + ": unexpected " + what + " " + printable(a->first) + " = " +
             printable(a->second);
    if (e->second != a->second)
      return where + ": " + what + " " + printable(e->first) + " is " + printable(a->second) +
             ", expected " + printable(e->second);
    ++e;
    ++a;
  }
  return "";
}

std::string diff_object(const std::string &where, const ObjectState &e, const ObjectState &a) {
  if (e.data != a.data) {
    size_t n = std::min(e.data.size(), a.data.size());
    size_t i = 0;
    while (i < n && e.data[i] == a.data[i]) ++i;
    char buf[200];
    if (i < n) {
      std::snprintf(buf, sizeof buf,
                    ": data differs at byte %zu (expected size %zu, found %zu; expected 0x%02x, "
                    "found 0x%02x)",
                    i, e.data.size(), a.data.size(), static_cast<unsigned char>(e.data[i]),
                    static_cast<unsigned char>(a.data[i]));
    } else {
      std::snprintf(buf, sizeof buf, ": data size is %zu, expected %zu (equal up to %zu)",
                    a.data.size(), e.data.size(), n);
    }
    return where + buf;
  }
  if (std::string d = diff_maps(where, "xattr", e.xattrs, a.xattrs); !d.empty()) return d;
  if (std::string d = diff_maps(where, "omap key", e.omap, a.omap); !d.empty()) return d;
  if (e.header != a.header)
    return where + ": omap header is " + printable(a.header) + ", expected " + printable(e.header);
  return "";
}

}  // namespace

std::string first_difference(const StoreState &expected, const StoreState &actual) {
  auto e = expected.collections.begin();
  auto a = actual.collections.begin();
  while (e != expected.collections.end() || a != actual.collections.end()) {
    if (a == actual.collections.end() || (e != expected.collections.end() && e->first < a->first))
      return "collection " + printable(e->first) + " missing";
    if (e == expected.collections.end() || a->first < e->first)
      return "unexpected collection " + printable(a->first);
    auto eo = e->second.begin();
    auto ao = a->second.begin();
    while (eo != e->second.end() || ao != a->second.end()) {
      if (ao == a->second.end() || (eo != e->second.end() && eo->first < ao->first))
        return e->first + "/" + printable(eo->first) + ": object missing (expected " +
               std::to_string(eo->second.data.size()) + " bytes)";
      if (eo == e->second.end() || ao->first < eo->first)
        return e->first + "/" + printable(ao->first) + ": unexpected object (" +
               std::to_string(ao->second.data.size()) + " bytes)";
      std::string d = diff_object(e->first + "/" + printable(eo->first), eo->second, ao->second);
      if (!d.empty()) return d;
      ++eo;
      ++ao;
    }
    ++e;
    ++a;
  }
  return "";
}

std::string diff_store(store::Store &s, const StoreState &expected) {
  auto actual = read_store(s);
  if (!actual.ok()) return "reading the store failed: " + actual.status().ToString();
  return first_difference(expected, *actual);
}

}  // namespace strata::testing

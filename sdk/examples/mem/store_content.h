// Everything a mem store holds, as plain values. std::map orders std::string
// keys bytewise (char_traits<char>::compare is memcmp), which is the order
// the ABI promises for object names, xattrs and omap keys.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "sparse_data.h"

namespace mem {

struct Object {
  SparseData data;
  std::map<std::string, std::string> xattrs;
  std::map<std::string, std::string> omap;
  std::string omap_header;
};

using Collection = std::map<std::string, Object>;  // by object name

struct StoreContent {
  std::map<std::string, Collection> collections;  // by collection name
};

}  // namespace mem

#include "data_objects.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace strata::fuse {

std::string data_object_name(uint64_t ino, uint64_t objno) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%016" PRIx64 ".%08" PRIx64, ino, objno);
  return buf;
}

std::vector<ObjectPiece> split_by_object(uint64_t off, uint64_t len, uint32_t object_size) {
  std::vector<ObjectPiece> out;
  const uint64_t end = off + len;
  while (off < end) {
    ObjectPiece p;
    p.objno = off / object_size;
    p.obj_off = off % object_size;
    p.file_off = off;
    p.len = std::min<uint64_t>(end - off, object_size - p.obj_off);
    out.push_back(p);
    off += p.len;
  }
  return out;
}

uint64_t objects_for(uint64_t size, uint32_t object_size) {
  return size / object_size + (size % object_size != 0 ? 1 : 0);
}

}  // namespace strata::fuse

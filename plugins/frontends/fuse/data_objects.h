// Where file bytes live: object names ("<ino 16 hex>.<objno 8 hex>") and
// the split of a file range into per-object pieces.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata::fuse {

std::string data_object_name(uint64_t ino, uint64_t objno);

// One object's part of a file range.
struct ObjectPiece {
  uint64_t objno = 0;
  uint64_t obj_off = 0;   // offset inside the object
  uint64_t file_off = 0;  // the same byte in the file
  uint64_t len = 0;
};

// [off, off+len) cut at object boundaries, in file order.
std::vector<ObjectPiece> split_by_object(uint64_t off, uint64_t len, uint32_t object_size);

// Objects needed to hold `size` bytes: ceil(size / object_size).
uint64_t objects_for(uint64_t size, uint32_t object_size);

}  // namespace strata::fuse
